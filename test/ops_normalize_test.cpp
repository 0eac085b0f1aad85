// PRELU, LOG_SOFTMAX, L2_NORMALIZATION, POW float islands and DEQUANTIZE (lowering.md §3.4,
// §7.6.3–§7.6.5, §7.7.4): builder-made single-op models compile, the emitted fields are the
// spec's, and the simulator of the VNNX bytes agrees with the reference interpreter bit for bit.
#include "ops_eltwise_harness_test.hpp"

#include <cmath>

#include <vnnx/compiler/verify.hpp>
#include <vnnx/quant/multiplier.hpp>

using namespace eltwise_test;
using vnnx::format::layer_options::LogSoftmaxOptions;
using vnnx::format::layer_options::prelu;

namespace {

dtype dt(tensor_type t) { return t == tensor_type::INT8 ? dtype::int8 : dtype::uint8; }

template <class T>
std::vector<T> pattern(std::size_t n, int mul, int add) {
    std::vector<T> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(static_cast<T>(static_cast<int>((i * static_cast<std::size_t>(mul) + static_cast<std::size_t>(add)) % 256) - (std::is_signed_v<T> ? 128 : 0)));
    return v;
}

struct prelu_case {
    const char* name;
    tensor_type t;
    std::vector<std::int32_t> shape, alpha_shape;
    quant qi, qa, qo;
    std::int32_t layer;  // 303 LUT or 54 PRELU in the default flow
};

std::vector<std::byte> prelu_model(const prelu_case& c) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", c.t, c.shape, c.qi);
    std::size_t n = 1;
    for (auto d : c.alpha_shape) n *= static_cast<std::size_t>(d);
    const auto a = c.t == tensor_type::INT8 ? b.add_constant<std::int8_t>("alpha", c.t, c.alpha_shape, pattern<std::int8_t>(n, 53, 7), c.qa)
                                            : b.add_constant<std::uint8_t>("alpha", c.t, c.alpha_shape, pattern<std::uint8_t>(n, 53, 7), c.qa);
    const auto y = b.add_tensor("y", c.t, c.shape, c.qo);
    b.add_operator(builtin_operator::PRELU, {x, a}, {y});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

std::vector<std::byte> unary_model(builtin_operator op, tensor_type t, const std::vector<std::int32_t>& shape, quant qi, quant qo) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", t, shape, qi);
    const auto y = b.add_tensor("y", t, shape, qo);
    b.add_operator(op, {x}, {y});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

std::vector<std::int64_t> wide(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

}  // namespace

TEST_CASE("PRELU: small channel alphas become LUTs, other alphas the prelu layer, bit-exact") {
    using T = tensor_type;
    const std::vector<prelu_case> cases{
        {"scalar int8", T::INT8, {1, 5, 6, 7}, {1}, quant{0.08f, -5}, quant{0.004f, 3}, quant{0.05f, 4}, 303},
        {"3 channels uint8", T::UINT8, {1, 4, 5, 3}, {1, 1, 3}, quant{0.06f, 120}, quant{0.01f, 128}, quant{0.05f, 130}, 303},
        {"7 channels int8", T::INT8, {1, 3, 4, 7}, {1, 1, 7}, quant{0.08f, -5}, quant{0.004f, 3}, quant{0.05f, 4}, 54},
        {"[C] alpha, 9 channels uint8", T::UINT8, {1, 3, 5, 9}, {9}, quant{0.05f, 128}, quant{0.02f, 100}, quant{0.04f, 140}, 54},
        {"full [H,W,C] alpha, 5 channels int8", T::INT8, {1, 4, 3, 5}, {4, 3, 5}, quant{0.07f, 0}, quant{0.003f, -7}, quant{0.06f, -10}, 54},
        {"[W,C] alpha, rank 3 int8", T::INT8, {2, 6, 5}, {6, 5}, quant{0.07f, 9}, quant{0.03f, 1}, quant{0.2f, -3}, 54},
        {"rank 2 uint8", T::UINT8, {3, 11}, {11}, quant{0.05f, 128}, quant{0.02f, 100}, quant{0.04f, 140}, 54},
        {"large alphas (not optimized)", T::INT8, {1, 2, 3, 6}, {1, 1, 6}, quant{0.5f, 0}, quant{0.5f, 0}, quant{0.01f, 0}, 54},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const auto tfl = prelu_model(c);
        const auto r = run_both(tfl, {ramp_input(dt(c.t), wide(c.shape), 17)});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(c.layer);
        if (c.layer != 54) continue;
        const auto u = l.options.get<prelu>();
        CHECK(l.input_offset == c.qi.zero_point[0]);
        CHECK(l.output_offset == c.qo.zero_point[0]);
        CHECK(u.alpha_offset == c.qa.zero_point[0]);
        CHECK(u.vci_int8.absent());
        const auto m1 = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0] / c.qo.scale[0]));
        const auto m2 = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0] * c.qa.scale[0] / c.qo.scale[0]));
        CHECK(L.i32(l.output_multiplier) == m1.multiplier);
        CHECK(L.i32(l.output_shift) == m1.shift);
        CHECK(L.i32(u.alpha_multiplier) == m2.multiplier);
        CHECK(L.i32(u.alpha_shift) == m2.shift);
        const std::size_t rk = c.shape.size();
        const std::int32_t C = c.shape[rk - 1], H = rk >= 3 ? c.shape[rk - 3] : 1, W = c.shape[rk - 2];
        if (rk >= 3) CHECK(u.alpha_shape == decltype(u.alpha_shape){1, C, H, W});
        CHECK(u.optimized == (std::string(c.name).starts_with("large") ? 0 : 1));
        CHECK(u.maps_at_once == (u.optimized ? 8 : 1));
    }
    SECTION("without the LUT pass a scalar alpha is the prelu layer, still bit-exact") {
        const prelu_case c{"scalar", T::INT8, {1, 5, 6, 7}, {1}, quant{0.08f, -5}, quant{0.004f, 3}, quant{0.05f, 4}, 54};
        const auto r = run_both(prelu_model(c), {ramp_input(dtype::int8, wide(c.shape), 3)}, false);
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        CHECK(L.find(54).options.get<prelu>().alpha_shape == decltype(prelu{}.alpha_shape){1, 7, 5, 6});
    }
    SECTION("an alpha varying along the batch axis or an activation alpha is refused with the rule") {
        vnnx::tflite::builder b;
        const auto x = b.add_tensor("x", T::INT8, {1, 2, 2, 2, 3}, quant{0.1f, 0});
        const auto a = b.add_constant<std::int8_t>("alpha", T::INT8, {2, 1, 1, 1}, std::vector<std::int8_t>{1, 2}, quant{0.1f, 0});
        const auto y = b.add_tensor("y", T::INT8, {1, 2, 2, 2, 3}, quant{0.1f, 0});
        b.add_operator(builtin_operator::PRELU, {x, a}, {y});
        b.set_inputs({x});
        b.set_outputs({y});
        CHECK_THROWS_WITH(vnnx::compile(b.finish(), {}, "p.tflite"), Catch::Contains("PRELU") && Catch::Contains("leading axis"));
    }
}

TEST_CASE("LOG_SOFTMAX: the LogSoftmaxOptions layer, TFLite's fixed-point fields, bit-exact") {
    using T = tensor_type;
    struct lc {
        tensor_type t;
        std::vector<std::int32_t> shape;
        quant qi;
    };
    for (const auto& c : std::vector<lc>{{T::INT8, {1, 2, 13}, quant{0.2f, 1}},
                                         {T::INT8, {1, 3, 4, 6}, quant{0.05f, -9}},
                                         {T::UINT8, {3, 10}, quant{0.3f, 128}},
                                         {T::INT8, {1, 5, 5, 17}, quant{0.11f, 3}},
                                         {T::UINT8, {1, 2, 3, 5}, quant{1.5f, 0}},
                                         {T::INT8, {40}, quant{0.01f, 0}}}) {
        INFO(vnnx::tflite::type_name(c.t) << " rank " << c.shape.size() << " last " << c.shape.back());
        const quant qo{16.0f / 256, c.t == T::INT8 ? 127 : 255};
        const auto r = run_both(unary_model(builtin_operator::LOG_SOFTMAX, c.t, c.shape, c.qi, qo),
                                {ramp_input(dt(c.t), wide(c.shape), 5)});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(50);
        const auto u = l.options.get<LogSoftmaxOptions>();
        const auto mb = vnnx::quant::quantize_multiplier(static_cast<double>(c.qi.scale[0]) * (1 << 26));
        CHECK(L.i32(l.input_multiplier) == mb.multiplier);
        CHECK(L.i32(l.input_shift) == mb.shift);
        CHECK(L.i32(l.output_multiplier) == (1 << 30));
        CHECK(L.i32(l.output_shift) == -3);
        CHECK(l.output_offset == qo.zero_point[0]);
        CHECK(u.depth == c.shape.back());
        CHECK(u.axis == (c.shape.size() >= 3 ? -3 : -1));
        CHECK(u.diff_min == -static_cast<std::int32_t>(std::floor(31.0 * (1 << 26) / std::ldexp(1.0, mb.shift))));
        const auto rev = vnnx::quant::quantize_multiplier(std::ldexp(1.0, 31 - mb.shift) / mb.multiplier);
        CHECK(u.reverse_scaling_divisor == rev.multiplier);
        CHECK(u.reverse_scaling_right_shift == -rev.shift);
    }
    SECTION("an output quantization TFLite would refuse is refused") {
        CHECK_THROWS_WITH(vnnx::compile(unary_model(builtin_operator::LOG_SOFTMAX, T::INT8, {1, 8}, quant{0.1f, 0}, quant{0.1f, 0}), {}, "ls.tflite"),
                          Catch::Contains("LOG_SOFTMAX") && Catch::Contains("16/256"));
    }
}

TEST_CASE("L2_NORMALIZATION: its own layer with input_offset, bit-exact") {
    using T = tensor_type;
    struct lc {
        tensor_type t;
        std::vector<std::int32_t> shape;
        quant qi;
    };
    for (const auto& c : std::vector<lc>{{T::INT8, {1, 4, 4, 7}, quant{0.05f, -3}},
                                         {T::UINT8, {1, 2, 9}, quant{0.05f, 128}},
                                         {T::INT8, {2, 40}, quant{0.05f, 0}},
                                         {T::UINT8, {1, 3, 3, 5}, quant{0.02f, 100}},
                                         {T::INT8, {1, 2, 2, 1}, quant{0.1f, 0}},
                                         {T::INT8, {1, 1, 1, 300}, quant{0.1f, 127}}}) {
        INFO(vnnx::tflite::type_name(c.t) << " rank " << c.shape.size() << " last " << c.shape.back());
        const quant qo{1.0f / 128, c.t == T::INT8 ? 0 : 128};
        auto in = ramp_input(dt(c.t), wide(c.shape), 9);
        if (c.shape.back() == 1) in.set<std::int64_t>(0, 0);  // a zero vector: TFLite treats Σ = 0 as 1
        const auto r = run_both(unary_model(builtin_operator::L2_NORMALIZATION, c.t, c.shape, c.qi, qo), {in});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(11);
        CHECK(l.input_offset == c.qi.zero_point[0]);
        CHECK(l.output_offset == qo.zero_point[0]);
    }
}

namespace {
std::vector<std::byte> pow_island(tensor_type t, std::vector<std::int32_t> shape, std::vector<std::int32_t> eshape,
                                  std::vector<float> e, quant qi, quant qo) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", t, shape, qi);
    const auto xf = b.add_tensor("xf", tensor_type::FLOAT32, shape);
    const auto ex = b.add_constant<float>("exponent", tensor_type::FLOAT32, eshape, e);
    const auto pf = b.add_tensor("pf", tensor_type::FLOAT32, shape);
    const auto y = b.add_tensor("y", t, shape, qo);
    b.add_operator(builtin_operator::DEQUANTIZE, {x}, {xf});
    b.add_operator(builtin_operator::POW, {xf, ex}, {pf});
    b.add_operator(builtin_operator::QUANTIZE, {pf}, {y});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}
}  // namespace

TEST_CASE("POW: a DEQUANTIZE -> POW -> QUANTIZE island becomes one LUT, bit-exact") {
    using T = tensor_type;
    struct pc {
        tensor_type t;
        std::vector<std::int32_t> eshape;
        std::vector<float> e;
        quant qi, qo;
        std::int32_t tables;
    };
    for (const auto& c : std::vector<pc>{{T::INT8, {1}, {2.0f}, quant{0.03f, -4}, quant{0.06f, -128}, 1},
                                         {T::UINT8, {1}, {0.5f}, quant{0.05f, 0}, quant{0.015f, 3}, 1},
                                         {T::INT8, {}, {3.0f}, quant{0.02f, 0}, quant{0.1f, 0}, 1},
                                         {T::INT8, {3}, {1.0f, 2.0f, -1.0f}, quant{0.05f, -128}, quant{0.2f, -100}, 3}}) {
        INFO(vnnx::tflite::type_name(c.t) << " exponent " << c.e[0] << " tables " << c.tables);
        const std::vector<std::int32_t> shape{1, 16, 16, 3};
        const auto r = run_both(pow_island(c.t, shape, c.eshape, c.e, c.qi, c.qo), {ramp_input(dt(c.t), wide(shape), 4)});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        REQUIRE(L.view.num_nodes() == 1);
        REQUIRE(L.view.node_layers(0).size() == 1);
        CHECK(L.view.node_layers(0)[0].type == 303);
        CHECK(L.view.node_layers(0)[0].options.get<vnnx::format::layer_options::ActivationOptions>().lut_count == c.tables);
    }
    SECTION("a POW outside an island is refused with the rule") {
        vnnx::tflite::builder b;
        const auto x = b.add_tensor("x", T::FLOAT32, {1, 4});
        const auto ex = b.add_constant<float>("e", T::FLOAT32, {1}, std::vector<float>{2.0f});
        const auto y = b.add_tensor("y", T::FLOAT32, {1, 4});
        b.add_operator(builtin_operator::POW, {x, ex}, {y});
        b.set_inputs({x});
        b.set_outputs({y});
        CHECK_THROWS_WITH(vnnx::compile(b.finish(), {}, "pow.tflite"), Catch::Contains("operator 0 (POW)") && Catch::Contains("floating point"));
    }
}

TEST_CASE("DEQUANTIZE: removed at a float graph output, a requantization with an 8-bit output") {
    using T = tensor_type;
    SECTION("float graph output: the VNNX output is the quantized tensor") {
        for (auto t : {T::INT8, T::UINT8}) {
            vnnx::tflite::builder b;
            const quant q{0.07f, t == T::INT8 ? -3 : 131};
            const auto x = b.add_tensor("x", t, {1, 3, 3, 5}, q);
            const auto h = b.add_tensor("h", t, {1, 3, 3, 5}, quant{0.05f, t == T::INT8 ? -128 : 0});
            const auto y = b.add_tensor("y", T::FLOAT32, {1, 3, 3, 5});
            b.add_operator(builtin_operator::RELU, {x}, {h});
            b.add_operator(builtin_operator::DEQUANTIZE, {h}, {y});
            b.set_inputs({x});
            b.set_outputs({y});
            const auto tfl = b.finish();
            const auto model = vnnx::tflite::model_view::parse(tfl, "dq.tflite");
            const auto in = ramp_input(dt(t), {1, 3, 3, 5}, 2);
            const auto tr = vnnx::ref::run_traced(model, {in});
            const auto& relu = *tr.tensors[static_cast<std::size_t>(h)];
            const auto bytes = vnnx::compile(tfl, {}, "dq.tflite").bytes;
            const auto sim = simulate(bytes, {in}, {relu});
            require_equal(sim[0], relu);
            // and the reference's float output is that tensor dequantized
            for (std::size_t i = 0; i < relu.element_count(); ++i)
                CHECK(tr.outputs[0].get<double>(i) == static_cast<float>(static_cast<double>(0.05f) * (relu.get<std::int64_t>(i) - (t == T::INT8 ? -128 : 0))));
        }
    }
    SECTION("8-bit output: a LUT, or the DEQUANTIZE (6) layer without the LUT pass") {
        for (bool luts : {true, false}) {
            const auto tfl = unary_model(builtin_operator::DEQUANTIZE, T::INT8, {1, 4, 5, 7}, quant{0.05f, 4}, quant{0.07f, -9});
            const auto r = run_both(tfl, {ramp_input(dtype::int8, {1, 4, 5, 7}, 8)}, luts);
            require_equal(r.sim[0], r.ref[0]);
            layers_of L(r.vnnx);
            CHECK(L.view.node_layers(0)[0].type == (luts ? 303 : 6));
        }
    }
}
