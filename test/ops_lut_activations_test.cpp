// Activations as LUT layers (lowering.md §3.4, §7.6.1, §8.6): tables from the reference
// kernels (ir/lut_tables.hpp), simulated bit-exactly; and the fallback layers of
// §7.6.4–§7.6.7 when the LUT pass does not run.
#include "ops_eltwise_harness_test.hpp"

#include <cmath>

#include <vnnx/ir/lut_tables.hpp>
#include <vnnx/quant/multiplier.hpp>

using namespace eltwise_test;

namespace {

struct unary_case {
    builtin_operator op;
    tensor_type in_type, out_type;
    std::vector<std::int32_t> shape;
    quant qi, qo;
    float alpha = 0.0f;
};

std::vector<std::byte> unary_model(const unary_case& c) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", c.in_type, c.shape, c.qi);
    const auto out = b.add_tensor("out", c.out_type, c.shape, c.qo);
    if (c.op == builtin_operator::LEAKY_RELU)
        b.add_operator(c.op, {in}, {out}, vnnx::tflite::leaky_relu_options{c.alpha});
    else
        b.add_operator(c.op, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

dtype dt(tensor_type t) { return t == tensor_type::INT8 ? dtype::int8 : dtype::uint8; }

/// An input holding every code at least once: shape [1, 16, 16, C] covers 256·C values.
ndarray all_codes(tensor_type t, std::int64_t channels) {
    ndarray a(dt(t), {1, 16, 16, channels});
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const auto r = static_cast<std::int64_t>((i * 37 + i / 256) % 256);
        a.set<std::int64_t>(i, t == tensor_type::INT8 ? r - 128 : r);
    }
    return a;
}

std::vector<unary_case> lut_cases() {
    using B = builtin_operator;
    const auto I = tensor_type::INT8, U = tensor_type::UINT8;
    const std::vector<std::int32_t> s{1, 16, 16, 3};
    return {
        {B::LOGISTIC, I, I, s, quant{0.08f, 3}, quant{1.0f / 256, -128}},
        {B::LOGISTIC, U, U, s, quant{0.05f, 120}, quant{1.0f / 256, 0}},
        {B::TANH, I, I, s, quant{0.03f, -5}, quant{1.0f / 128, 0}},
        {B::TANH, U, U, s, quant{0.03f, 128}, quant{1.0f / 128, 128}},
        {B::HARD_SWISH, I, I, s, quant{0.05f, 10}, quant{0.03f, -90}},
        {B::HARD_SWISH, U, U, s, quant{0.04f, 100}, quant{0.025f, 20}},
        {B::RELU, I, I, s, quant{0.05f, 10}, quant{0.03f, -128}},
        {B::RELU, U, U, s, quant{0.05f, 140}, quant{0.03f, 0}},
        {B::RELU6, I, I, s, quant{0.05f, -3}, quant{0.025f, -128}},
        {B::RELU6, U, U, s, quant{0.05f, 128}, quant{0.025f, 0}},
        {B::RELU_N1_TO_1, I, I, s, quant{0.02f, 0}, quant{1.0f / 127, 0}},
        {B::RELU_0_TO_1, I, I, s, quant{0.02f, 7}, quant{1.0f / 255, -128}},
        {B::LEAKY_RELU, I, I, s, quant{0.05f, 4}, quant{0.04f, -2}, 0.1f},
        {B::LEAKY_RELU, U, U, s, quant{0.05f, 130}, quant{0.04f, 128}, 0.2f},
        // Negative slopes (TFLite keeps the multiplier's sign): a table like any other.
        {B::LEAKY_RELU, I, I, s, quant{0.05f, 4}, quant{0.04f, -2}, -0.3f},
        {B::LEAKY_RELU, U, U, s, quant{0.05f, 130}, quant{0.06f, 100}, -1.5f},
        {B::LEAKY_RELU, I, I, s, quant{0.02f, -20}, quant{0.05f, 3}, -4.0f},
        {B::QUANTIZE, I, I, s, quant{0.05f, 4}, quant{0.07f, -9}},
        {B::QUANTIZE, I, U, s, quant{0.05f, 4}, quant{0.05f, 132}},
        {B::QUANTIZE, U, I, s, quant{0.05f, 128}, quant{0.03f, 0}},
    };
}

}  // namespace

TEST_CASE("LUT: every activation becomes one LUT layer, simulated bit-exactly") {
    for (const auto& c : lut_cases()) {
        INFO(vnnx::builtin_name(c.op) << " " << vnnx::tflite::type_name(c.in_type) << "->"
                                      << vnnx::tflite::type_name(c.out_type));
        const auto r = run_both(unary_model(c), {all_codes(c.in_type, 3)});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        REQUIRE(L.view.num_nodes() == 1);
        const auto layers = L.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        const auto& l = layers[0];
        CHECK(l.type == 303);
        const auto a = l.options.get<vnnx::format::layer_options::ActivationOptions>();
        CHECK(a.lut_count == 1);
        CHECK(a.count == -1);
        CHECK(a.input_range_radius == -1);
        CHECK(a.lut_int8.absent());
        CHECK(a.idx_int8.absent());
        CHECK(l.output_offset == c.qo.zero_point[0]);
        // The stored table in byte order: entry r is the output for the input byte r.
        const auto table = L.bytes(a.vci_int8, 256);
        const auto& in = all_codes(c.in_type, 3);
        for (std::size_t i = 0; i < 256 * 3; ++i) {
            const auto byte = static_cast<std::uint8_t>(in.get<std::int64_t>(i) & 0xFF);
            CHECK(static_cast<std::uint8_t>(table[byte]) == static_cast<std::uint8_t>(r.ref[0].get<std::int64_t>(i) & 0xFF));
        }
    }
}

TEST_CASE("LUT evaluator: tables are the reference kernels over all 256 codes") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 2, 2, 1}, quant{0.1f, -7});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 2, 2, 1}, quant{1.0f / 256, -128});
    b.add_operator(builtin_operator::LOGISTIC, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto bytes = b.finish();
    const auto model = vnnx::tflite::model_view::parse(bytes, "logistic.tflite");
    const auto g = vnnx::compiler::import_graph(model);
    const auto tables = vnnx::compiler::evaluate_lut_chain(g, {0}, 1);
    REQUIRE(tables.size() == 1);
    REQUIRE(tables[0].size() == 256);
    // Entry r is the output for the int8 code (int8)r: byte 0x80 is -128, byte 0x7F is 127.
    for (int r = 0; r < 256; ++r) {
        const float x = 0.1f * static_cast<float>(static_cast<std::int8_t>(r) + 7);
        const double want = std::round(256.0 / (1.0 + std::exp(-static_cast<double>(x)))) - 128;
        CHECK(std::abs(tables[0][static_cast<std::size_t>(r)] - std::clamp(want, -128.0, 127.0)) <= 1);
    }
    CHECK(tables[0][0x80] < tables[0][0x7F]);
    CHECK(tables[0][0x7F] == 127);
}

TEST_CASE("LUT fallbacks (§7.6.7): RELU family layers with TFLite bounds") {
    using B = builtin_operator;
    for (const auto& c : lut_cases()) {
        if (c.op != B::RELU && c.op != B::RELU6 && c.op != B::RELU_N1_TO_1 && c.op != B::RELU_0_TO_1) continue;
        INFO(vnnx::builtin_name(c.op) << " " << vnnx::tflite::type_name(c.in_type));
        const auto r = run_both(unary_model(c), {all_codes(c.in_type, 3)}, false);
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(static_cast<std::int32_t>(c.op));
        const float so = c.qo.scale[0];
        const auto zo = static_cast<std::int32_t>(c.qo.zero_point[0]);
        const bool u8 = c.out_type == tensor_type::UINT8;
        const std::int32_t tmin = u8 ? 0 : -128, tmax = u8 ? 255 : 127;
        auto q = [&](float v) { return zo + static_cast<std::int32_t>(std::round(v / so)); };
        if (c.op == B::RELU) {
            CHECK(l.activation_min == std::max(tmin, zo));
            CHECK(l.activation_max == tmax);
        } else if (c.op == B::RELU6) {
            CHECK(l.activation_min == std::max(tmin, zo));
            CHECK(l.activation_max == std::min(tmax, q(6.0f)));
        } else if (c.op == B::RELU_N1_TO_1) {
            CHECK(l.activation_min == std::max(tmin, q(-1.0f)));
            CHECK(l.activation_max == std::min(tmax, q(1.0f)));
        } else {
            CHECK(l.activation_max == std::min(tmax, q(1.0f)));
        }
        const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0] / so));
        CHECK(L.i32(l.output_multiplier) == m.multiplier);
        CHECK(L.i32(l.output_shift) == m.shift);
        CHECK(l.input_offset == c.qi.zero_point[0]);
        CHECK(l.output_offset == zo);
    }
}

TEST_CASE("LUT fallbacks (§7.6.6): LEAKY_RELU layer, union leakyrelu") {
    for (const auto& c : lut_cases()) {
        if (c.op != builtin_operator::LEAKY_RELU) continue;
        INFO("alpha " << c.alpha);
        if (c.alpha < 0) {
            // The layer's alpha multiplier is unsigned: without the LUT pass a negative slope is refused.
            CHECK_THROWS_WITH(compile_without_luts(unary_model(c), "leaky.tflite"), Catch::Contains("negative alpha"));
            continue;
        }
        const auto r = run_both(unary_model(c), {all_codes(c.in_type, 3)}, false);
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(98);
        const auto u = l.options.get<vnnx::format::layer_options::leakyrelu>();
        const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0] / c.qo.scale[0]));
        const auto ma = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0] * c.alpha / c.qo.scale[0]));
        CHECK(L.i32(l.output_multiplier) == m.multiplier);
        CHECK(L.i32(l.output_shift) == m.shift);
        CHECK(L.i32(u.alpha_multiplier) == ma.multiplier);
        CHECK(L.i32(u.alpha_shift) == ma.shift);
    }
}

TEST_CASE("LUT fallbacks (§7.6.4): QUANTIZE as a DEQUANTIZE (6) requantization layer") {
    for (const auto& c : lut_cases()) {
        if (c.op != builtin_operator::QUANTIZE) continue;
        INFO(vnnx::tflite::type_name(c.in_type) << "->" << vnnx::tflite::type_name(c.out_type));
        const auto r = run_both(unary_model(c), {all_codes(c.in_type, 3)}, false);
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(6);
        const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0]) / c.qo.scale[0]);
        CHECK(L.i32(l.output_multiplier) == m.multiplier);
        CHECK(L.i32(l.output_shift) == m.shift);
        // int8 → uint8 with equal scales and zero points 4 → 132: the sign-flip marker.
        const bool flip = c.in_type == tensor_type::INT8 && c.out_type == tensor_type::UINT8;
        CHECK((l.activation_min == 0 && l.activation_max == 0) == flip);
    }
}

TEST_CASE("ABS: its own layer (§7.6.7), |x − z_in| requantized") {
    const unary_case c{builtin_operator::ABS, tensor_type::INT8, tensor_type::INT8, {1, 16, 16, 3}, quant{0.05f, 6},
                       quant{0.03f, -100}};
    const auto in = all_codes(c.in_type, 3);
    const auto bytes = vnnx::compile(unary_model(c), {}, "abs.tflite").bytes;
    const auto got = simulate(bytes, {in}, {ndarray(dtype::int8, {1, 16, 16, 3})});
    const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(0.05f / 0.03f));
    for (std::size_t i = 0; i < in.element_count(); ++i) {
        const auto v = static_cast<std::int32_t>(std::abs(in.get<std::int64_t>(i) - 6));
        const std::int32_t want =
            std::clamp(-100 + vnnx::quant::multiply_by_quantized_multiplier(v, m.multiplier, m.shift), -128, 127);
        REQUIRE(got[0].get<std::int64_t>(i) == want);
        // And close to the real value.
        CHECK(std::abs((want + 100) * 0.03 - std::abs(in.get<std::int64_t>(i) - 6) * 0.05) <= 0.03);
    }
    layers_of L(bytes);
    const auto& l = L.find(101);
    CHECK(L.i32(l.output_multiplier) == m.multiplier);
    CHECK(l.input_offset == 6);
    CHECK(l.output_offset == -100);
}
