// Limits applied where untrusted sizes enter (issue 8): the TFLite reader's tensor element count
// and operator count, and through the tool the file size and the simulator's memory image, each
// raised or lowered with its VNNX_MAX_* variable.
#include <cstdio>
#include <filesystem>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace {

namespace fs = std::filesystem;
using vnnx::tflite::tensor_type;

std::vector<std::byte> model_with(std::vector<std::int32_t> shape, int ops = 1) {
    vnnx::tflite::builder b;
    auto x = b.add_tensor("in", tensor_type::INT8, shape, vnnx::tflite::quant{0.5f, 0});
    const auto first = x;
    for (int i = 0; i < ops; ++i) {
        const auto y = b.add_tensor("t" + std::to_string(i), tensor_type::INT8, shape, vnnx::tflite::quant{0.25f, 3});
        b.add_operator(vnnx::builtin_operator::QUANTIZE, {x}, {y});
        x = y;
    }
    b.set_inputs({first});
    b.set_outputs({x});
    return b.finish();
}

struct limits_guard {
    vnnx::limits saved = vnnx::active_limits();
    ~limits_guard() { vnnx::set_limits(saved); }
};

struct tool_result {
    int status = -1;
    std::string err;
};

tool_result run(const std::string& env_and_args) {
    tool_result r;
    const std::string cmd = "env " + env_and_args + " 2>&1 >/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.err.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

}  // namespace

TEST_CASE("hostile limits: the TFLite reader bounds tensor elements and operators") {
    limits_guard guard;
    // 2^29 elements: within the format's 2^31 but above the default limit of 2^28.
    const auto big = model_with({1, 1 << 13, 1 << 13, 8});
    try {
        (void)vnnx::tflite::model_view::parse(big, "big.tflite");
        FAIL("accepted");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
        CHECK_THAT(e.what(), Catch::StartsWith("big.tflite: subgraphs[0].tensors[0] (Tensor 'in'): element count 536870912 "
                                               "exceeds the limit of 268435456") &&
                                 Catch::Contains("VNNX_MAX_TENSOR_ELEMENTS"));
    }
    vnnx::limits raised = guard.saved;
    raised.max_tensor_elements = std::uint64_t{1} << 30;
    vnnx::set_limits(raised);
    CHECK_NOTHROW(vnnx::tflite::model_view::parse(big, "big.tflite"));

    const auto chain = model_with({1, 2, 2, 1}, 12);
    vnnx::limits few = guard.saved;
    few.max_operators = 10;
    vnnx::set_limits(few);
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(chain, "chain.tflite"),
                      Catch::Contains("chain.tflite: subgraphs[0] (SubGraph): has 12 operators, more than the limit of 10"));
    vnnx::set_limits(guard.saved);
    CHECK(vnnx::tflite::model_view::parse(chain, "chain.tflite").subgraph(0).operator_count() == 12);
}

TEST_CASE("hostile limits: the tool takes VNNX_MAX_FILE_BYTES and VNNX_MAX_ACTIVATION_BYTES") {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("vnnx_hostile_limits_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string tool = "'" + std::string(VNNX_TOOL_PATH) + "'";
    const fs::path model = dir / "m.tflite", compiled = dir / "m.vnnx";
    vnnx::write_file_atomic(model, model_with({1, 4, 5, 3}));

    auto r = run("VNNX_MAX_FILE_BYTES=100 " + tool + " info " + model.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + model.string() + ": file is larger than the limit of 100 bytes"));
    r = run("VNNX_MAX_FILE_BYTES=oops " + tool + " info " + model.string());
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: VNNX_MAX_FILE_BYTES=oops: expected a positive decimal count"));
    r = run("VNNX_MAX_FILE_BYTES=1000000 " + tool + " info " + model.string());
    CHECK(r.status == 0);

    r = run(tool + " compile -t " + model.string() + " -s V1000 -o " + compiled.string());
    REQUIRE(r.status == 0);
    r = run("VNNX_MAX_ACTIVATION_BYTES=64 " + tool + " infer " + compiled.string() + " -o " + (dir / "out").string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + compiled.string() + ": header allocate_bytes: ") &&
                          Catch::Contains("exceeds the limit of 64 (raise it with VNNX_MAX_ACTIVATION_BYTES)"));
    CHECK_FALSE(fs::exists(dir / "out"));
    fs::remove_all(dir);
}
