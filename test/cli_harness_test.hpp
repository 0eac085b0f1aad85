#pragma once
// Shared by the cli_*_test.cpp files: runs the built vnnx tool, gives each test a temporary
// folder, and makes small builder models whose operators the simulator runs exactly.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/builder.hpp"

namespace cli_test {

struct run_result {
    int status = -1;
    std::string out;  // stdout and stderr together
};

inline bool tool_built() {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return false;
    }
    return true;
}

inline run_result run_tool(const std::string& args) {
    run_result r;
    FILE* p = ::popen((std::string(VNNX_TOOL_PATH) + " " + args + " 2>&1").c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

/// A fresh folder under the system temp folder, removed with everything in it.
struct temp_dir {
    std::filesystem::path path;
    explicit temp_dir(const std::string& tag) {
        static int counter = 0;
        path = std::filesystem::temp_directory_path() /
               ("vnnx_cli_" + tag + "_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
        std::filesystem::remove_all(path);
        std::filesystem::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    [[nodiscard]] std::string operator/(const std::string& name) const { return (path / name).string(); }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

using vnnx::builtin_operator;
using vnnx::tflite::quant;
using vnnx::tflite::tensor_type;

/// int8 [1,H,W,C] -> QUANTIZE (requantize 0.5/0 -> 0.25/3): one LUT layer, exact in VNNX.
/// H, W and C differ so that a layout mistake shows.
inline std::vector<std::byte> requantize_model(std::int32_t h = 4, std::int32_t w = 5, std::int32_t c = 3) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, h, w, c}, quant{0.5f, 0});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, h, w, c}, quant{0.25f, 3});
    b.add_operator(builtin_operator::QUANTIZE, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

/// The reference answer of requantize_model for one value.
inline int requantized(int v) { return std::clamp(2 * v + 3, -128, 127); }

/// Two int8 inputs [1,3,4,2] -> ADD -> one output (ELTWISE, TFLite's integer ADD).
inline std::vector<std::byte> add_model() {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 3, 4, 2}, quant{0.05f, -3});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 3, 4, 2}, quant{0.04f, 5});
    const auto z = b.add_tensor("sum", tensor_type::INT8, {1, 3, 4, 2}, quant{0.08f, 1});
    b.add_operator(builtin_operator::ADD, {x, y}, {z}, vnnx::tflite::add_options{vnnx::tflite::activation_function::NONE, true});
    b.set_inputs({x, y});
    b.set_outputs({z});
    return b.finish();
}

/// int8 values 0, 7, 14, ... wrapped: a deterministic array of `shape`.
inline vnnx::ndarray ramp(std::vector<std::int64_t> shape, int step = 7, int start = -100) {
    vnnx::ndarray a(vnnx::dtype::int8, std::move(shape));
    for (std::size_t i = 0; i < a.element_count(); ++i) a.set(i, static_cast<std::int8_t>(start + static_cast<int>(i) * step));
    return a;
}

inline void write_bytes(const std::string& path, const std::vector<std::byte>& bytes) { vnnx::write_file_atomic(path, bytes); }

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace cli_test
