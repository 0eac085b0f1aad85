// End to end on the smallest model: TFLite bytes → compile → VNNX bytes → simulator, with a
// requantizing QUANTIZE that becomes a LUT layer of an IDENTITY node.
#include <cmath>
#include <cstring>

#include <catch2/catch.hpp>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/tflite/builder.hpp>

namespace {

using vnnx::builtin_operator;
using vnnx::tflite::tensor_type;

std::vector<std::byte> requantize_model() {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 4, 3}, vnnx::tflite::quant{0.5f, 0});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 4, 4, 3}, vnnx::tflite::quant{0.25f, 3});
    b.add_operator(builtin_operator::QUANTIZE, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

// A table evaluator for the one chain of this test: requantize 0.5/0 → 0.25/3 (ratio 2).
std::vector<std::vector<std::int32_t>> requant_tables(const vnnx::compiler::graph&, const std::vector<std::int32_t>&, int) {
    std::vector<std::int32_t> t(256);
    for (int r = 0; r < 256; ++r) {
        const int v = static_cast<std::int8_t>(r);
        t[static_cast<std::size_t>(r)] = std::clamp(2 * v + 3, -128, 127);
    }
    return {t};
}

}  // namespace

TEST_CASE("pipeline: a requantization compiles to one LUT layer and simulates exactly") {
    const auto model = requantize_model();
    vnnx::compile_options opt;
    opt.lut = requant_tables;
    const auto result = vnnx::compile(model, opt, "requantize.tflite");
    REQUIRE(result.nodes.size() == 1);
    CHECK(result.nodes[0].type == "IDENTITY");
    REQUIRE(result.nodes[0].layers.size() == 1);
    CHECK(result.nodes[0].layers[0] == "LUT");

    vnnx::sim::machine m(result.bytes, "requantize.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    REQUIRE(m.view().num_inputs() == 1);
    CHECK(m.view().input(0).shape == std::vector<std::int32_t>{1, 3, 4, 4});
    std::vector<std::byte> input(48);
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<std::byte>(static_cast<std::int8_t>(i * 7 - 100));
    m.set_input(0, input);
    m.run();
    const auto out = m.output(0);
    REQUIRE(out.size() == 48);
    for (std::size_t i = 0; i < out.size(); ++i) {
        const int v = static_cast<std::int8_t>(input[i]);
        CHECK(static_cast<int>(static_cast<std::int8_t>(out[i])) == std::clamp(2 * v + 3, -128, 127));
    }
}
