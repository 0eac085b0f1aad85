#pragma once
// The bodies of the fuzz targets, shared with test/hostile_regressions_test.cpp (which replays
// the corpora and every kept crash reproducer). Each function reads untrusted bytes; refusing
// them with a vnnx::error is the right answer, anything else (another exception, a crash, a
// sanitizer report, an allocation above libFuzzer's limit) is a finding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "../examples/vnnx/cmd_info.hpp"
#include "vnnx/compiler/compile.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::fuzz {

/// Tighter limits than the tool's defaults so that one input stays fast and within libFuzzer's
/// memory limit; the checks themselves are the same code.
inline void use_fuzz_limits() {
    limits l;
    l.max_activation_bytes = std::uint64_t{64} << 20;
    l.max_tensor_elements = std::uint64_t{1} << 24;
    set_limits(l);
}

/// TFLite reader + `vnnx info`: parse, then print the text, JSON and dot views (the printers
/// walk every table the reader promised is safe).
inline void tflite_info(std::span<const std::byte> bytes) {
    const auto m = tflite::model_view::parse(bytes, "fuzz.tflite");
    (void)cli::info_detail::tflite_text(m);
    (void)cli::info_detail::tflite_json(m);
    (void)cli::info_detail::tflite_dot(m);
}

/// The whole compiler; a model it accepts must give a file its own reader accepts, so that
/// second read is not allowed to throw (a refusal there is turned into a trap).
inline void compile(std::span<const std::byte> bytes) {
    compile_options opt;
    opt.preset = format::preset::V250;  // the smallest scratchpad: the most tiling
    const auto out = vnnx::compile(bytes, opt, "fuzz.tflite").bytes;
    try {
        const format::model_view v(out, "fuzz.vnnx");
        (void)v;
    } catch (const vnnx::error&) {
        __builtin_trap();
    }
}

/// VNNX reader + simulator: read the file, print `vnnx info`'s views, feed each input its
/// embedded test vector (or zeros) and run the whole program once.
inline void vnnx_sim(std::span<const std::byte> bytes) {
    sim::run_options ro;
    ro.threads = 1;
    sim::machine m(bytes, "fuzz.vnnx", ro);
    const auto& v = m.view();
    (void)cli::info_detail::vnnx_text(v);
    (void)cli::info_detail::vnnx_json(v);
    try {
        (void)cli::info_detail::vnnx_dot(v);  // may reject a node the run below still reaches
    } catch (const vnnx::error&) {
    }
    for (std::size_t i = 0; i < v.num_inputs(); ++i) {
        const auto& io = v.input(i);
        if (!io.test_vector.empty()) {
            m.set_input(i, io.test_vector);
        } else {
            const std::uint64_t n = checked_mul(io.length, format::element_size(io.type), "fuzz.vnnx: input");
            check_limit(n, active_limits().max_activation_bytes, "fuzz.vnnx: input", "VNNX_MAX_ACTIVATION_BYTES");
            m.set_input(i, std::vector<std::byte>(static_cast<std::size_t>(n)));
        }
    }
    m.run();
    for (std::size_t o = 0; o < v.num_outputs(); ++o) (void)m.output(o);
}

/// The .npy reader, then a round trip through the writer.
inline void npy(std::span<const std::byte> bytes) {
    const auto a = parse_npy(bytes, "fuzz.npy");
    const auto again = parse_npy(to_npy_bytes(a), "roundtrip.npy");
    if (again.shape != a.shape || again.type != a.type || again.data != a.data) __builtin_trap();
}

/// libFuzzer's entry: a vnnx::error is a clear refusal and must say something.
template <void (*Target)(std::span<const std::byte>)>
int one_input(const std::uint8_t* data, std::size_t size) {
    try {
        Target({reinterpret_cast<const std::byte*>(data), size});
    } catch (const vnnx::error& e) {
        if (e.what()[0] == '\0') __builtin_trap();
    }
    return 0;
}

}  // namespace vnnx::fuzz
