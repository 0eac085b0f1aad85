// A constant operand of more than 4 elements → broadcast8 layers ADD (0), SUB (41),
// SQUARED_DIFFERENCE (99), MUL (18) and MinMaxOptions layers MAXIMUM (55) / MINIMUM (57)
// (lowering.md §7.3.2–7.3.4, §8.5): golden fields and bit-exact simulation.
#include "ops_eltwise_harness_test.hpp"

#include <cmath>

#include <vnnx/quant/eltwise.hpp>
#include <vnnx/quant/fixed_point.hpp>
#include <vnnx/quant/multiplier.hpp>

using namespace eltwise_test;
using B = vnnx::builtin_operator;
using vnnx::tflite::activation_function;

namespace {

struct const_case {
    B op;
    tensor_type type;
    std::vector<std::int32_t> x_shape, k_shape;
    quant qx, qk, qo;
    bool const_first = false;
    activation_function act = activation_function::NONE;
};

std::vector<std::int8_t> konst_values(const const_case& c) {
    std::size_t n = 1;
    for (auto d : c.k_shape) n *= static_cast<std::size_t>(d);
    std::vector<std::int8_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::int8_t>(static_cast<int>((i * 71 + 13) % 256) - 128);
    return v;
}

std::vector<std::byte> const_model(const const_case& c) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", c.type, c.x_shape, c.qx);
    const auto kv = konst_values(c);
    std::vector<std::byte> bytes(kv.size());
    std::memcpy(bytes.data(), kv.data(), kv.size());
    const auto k = b.add_constant("k", c.type, c.k_shape, bytes, c.qk);
    const auto o = b.add_tensor("out", c.type, c.x_shape, c.qo);
    const std::vector<std::int32_t> ins = c.const_first ? std::vector<std::int32_t>{k, x} : std::vector<std::int32_t>{x, k};
    switch (c.op) {
        case B::ADD: b.add_operator(c.op, ins, {o}, vnnx::tflite::add_options{c.act, true}); break;
        case B::SUB: b.add_operator(c.op, ins, {o}, vnnx::tflite::sub_options{c.act, true}); break;
        case B::MUL: b.add_operator(c.op, ins, {o}, vnnx::tflite::mul_options{c.act}); break;
        default: b.add_operator(c.op, ins, {o}); break;
    }
    b.set_inputs({x});
    b.set_outputs({o});
    return b.finish();
}

std::vector<std::int64_t> wide(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }
dtype dt(tensor_type t) { return t == tensor_type::INT8 ? dtype::int8 : dtype::uint8; }

/// The constant's bytes channels-first, as the layer must store them.
std::vector<std::uint8_t> cf_bytes(const const_case& c) {
    const auto kv = konst_values(c);
    ndarray a(dtype::int8, {});
    std::vector<std::int64_t> s(c.x_shape.size() - c.k_shape.size(), 1);
    s.insert(s.end(), c.k_shape.begin(), c.k_shape.end());
    a = ndarray(dtype::int8, s);
    std::memcpy(a.data.data(), kv.data(), kv.size());
    const auto b = to_cf(a);
    std::vector<std::uint8_t> out(b.size());
    std::memcpy(out.data(), b.data(), b.size());
    return out;
}

}  // namespace

TEST_CASE("broadcast ADD/SUB: fields of §7.3.2, filter bytes channels-first, bit-exact") {
    struct variant {
        const_case c;
        std::array<std::int32_t, 4> dims;
        std::int32_t broadcast;
    };
    const std::vector<std::int32_t> xs{1, 4, 5, 7};
    const std::vector<variant> vs{
        {{B::ADD, tensor_type::INT8, xs, {7}, quant{0.05f, -3}, quant{0.02f, 5}, quant{0.06f, -9}}, {1, 7, 1, 1}, 1},
        {{B::ADD, tensor_type::INT8, xs, {7}, quant{0.05f, -3}, quant{0.02f, 5}, quant{0.06f, -9}, false,
          activation_function::RELU6},
         {1, 7, 1, 1},
         1},
        {{B::SUB, tensor_type::INT8, xs, {1, 4, 5, 7}, quant{0.05f, 2}, quant{0.03f, 0}, quant{0.07f, 1}, true},
         {1, 7, 4, 5},
         3},
        {{B::SUB, tensor_type::INT8, xs, {5, 7}, quant{0.05f, 2}, quant{0.03f, -7}, quant{0.07f, 1}, false,
          activation_function::RELU},
         {1, 7, 1, 5},
         2},
        {{B::ADD, tensor_type::INT8, xs, {4, 1, 7}, quant{0.05f, 2}, quant{0.03f, -7}, quant{0.07f, 1}}, {1, 7, 4, 1}, 0},
        {{B::ADD, tensor_type::UINT8, xs, {7}, quant{0.05f, 128}, quant{0.02f, 120}, quant{0.06f, 130}, false,
          activation_function::RELU},
         {1, 7, 1, 1},
         1},
    };
    for (const auto& v : vs) {
        const auto& c = v.c;
        INFO(vnnx::builtin_name(c.op) << " constant rank " << c.k_shape.size() << " swap " << c.const_first);
        const auto r = run_both(const_model(c), {ramp_input(dt(c.type), wide(c.x_shape), 91)});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const std::int32_t type = c.op == B::SUB ? 41 : 0;
        const auto& l = L.find(type);
        const auto u = l.options.get<vnnx::format::layer_options::broadcast8>();
        CHECK(u.filter_shape_dims == v.dims);
        CHECK(u.broadcast == v.broadcast);
        CHECK(u.swap_inputs == (c.const_first ? 1 : 0));
        CHECK(u.sub == (c.op == B::SUB ? 1 : 0));
        CHECK(u.left_shift == 20);
        CHECK(u.iscale == c.qx.scale[0]);
        CHECK(u.fscale == c.qk.scale[0]);
        CHECK(u.oscale == c.qo.scale[0]);
        CHECK(u.filter_offset == c.qk.zero_point[0]);
        CHECK(l.input_offset == c.qx.zero_point[0]);
        CHECK(l.output_offset == c.qo.zero_point[0]);
        CHECK(u.bias_data.absent());
        CHECK(l.num_inputs == 1);
        const auto p = vnnx::quant::eltwise_parameters(vnnx::quant::eltwise_kind::add, c.qx.scale[0], c.qk.scale[0],
                                                        c.qo.scale[0]);
        CHECK(L.i32(l.input_multiplier) == p.input1[0].multiplier);
        CHECK(L.i32(l.input_shift) == p.input1[0].shift);
        CHECK(L.i32(l.output_multiplier) == p.output.multiplier);
        CHECK(L.i32(l.output_shift) == p.output.shift);
        CHECK(L.i32(u.filter_multiplier) == p.input2[0].multiplier);
        CHECK(L.i32(u.filter_shift) == p.input2[0].shift);
        // Data order: input, output, filter pairs, then the bytes.
        CHECK(l.output_multiplier.value == l.input_shift.value + 4);
        CHECK(u.filter_multiplier.value == l.output_shift.value + 4);
        CHECK(u.filter_data.value == u.filter_shift.value + 4);
        const auto want = cf_bytes(c);
        const auto got = L.bytes(u.filter_data, want.size());
        for (std::size_t i = 0; i < want.size(); ++i) CHECK(static_cast<std::uint8_t>(got[i]) == want[i]);
        // RELU / RELU6 bounds in the output's own range.
        const bool u8 = c.type == tensor_type::UINT8;
        const auto zo = static_cast<std::int32_t>(c.qo.zero_point[0]);
        if (c.act == activation_function::NONE) CHECK(l.activation_min == (u8 ? 0 : -128));
        else CHECK(l.activation_min == zo);
        if (c.act == activation_function::RELU6)
            CHECK(l.activation_max == zo + static_cast<std::int32_t>(std::round(6.0f / c.qo.scale[0])));
        else CHECK(l.activation_max == (u8 ? 255 : 127));
    }
}

TEST_CASE("broadcast MUL: fields of §7.3.3 and §8.5, fused activation honoured, bit-exact") {
    const std::vector<std::int32_t> xs{1, 3, 4, 9};
    for (auto t : {tensor_type::INT8, tensor_type::UINT8}) {
        for (auto act : {activation_function::NONE, activation_function::RELU}) {
            const bool u8 = t == tensor_type::UINT8;
            const const_case c{B::MUL, t, xs, {9}, quant{0.05f, u8 ? 128 : -3}, quant{0.01f, u8 ? 120 : 4},
                               quant{0.004f, u8 ? 100 : -20}, u8, act};
            INFO(vnnx::tflite::type_name(t) << " act " << static_cast<int>(act));
            const auto r = run_both(const_model(c), {ramp_input(dt(t), wide(xs), 17)});
            require_equal(r.sim[0], r.ref[0]);
            layers_of L(r.vnnx);
            const auto& l = L.find(18);
            const auto u = l.options.get<vnnx::format::layer_options::broadcast8>();
            CHECK(u.filter_shape_dims == std::array<std::int32_t, 4>{1, 9, 1, 1});
            CHECK(u.broadcast == 1);
            CHECK(u.left_shift == -1);
            CHECK(u.sub == 0);
            CHECK(u.swap_inputs == (u8 ? 1 : 0));
            const float root = static_cast<float>(std::sqrt(static_cast<double>(0.05f) * 0.01f));
            CHECK(u.iscale == root);
            CHECK(u.fscale == root);
            CHECK(l.input_multiplier.absent());
            CHECK(u.filter_multiplier.absent());
            const double M = static_cast<double>(0.05f * 0.01f / 0.004f);
            const auto m = vnnx::quant::quantize_multiplier(M);
            CHECK(L.i32(l.output_multiplier) == m.multiplier);
            CHECK(L.i32(l.output_shift) == m.shift);
            // Bias per channel: −z_in·(f − z_f) + round(z_out / M).
            const auto kv = konst_values(c);
            const auto zi = static_cast<std::int32_t>(c.qx.zero_point[0]), zf = static_cast<std::int32_t>(c.qk.zero_point[0]),
                       zo = static_cast<std::int32_t>(c.qo.zero_point[0]);
            const auto bias = L.view.int32s(u.bias_data.value, 9, "bias");
            bool small = true;
            for (std::size_t i = 0; i < 9; ++i) {
                const std::int32_t f = u8 ? static_cast<std::uint8_t>(kv[i]) : kv[i];
                CHECK(bias[i] == -zi * (f - zf) + static_cast<std::int32_t>(std::round(zo / M)));
                if (M * (f - zf) >= 256.0) small = false;
            }
            CHECK(u.optimized == (small ? 1 : 0));
            CHECK(l.activation_min == (act == activation_function::RELU ? zo : (u8 ? 0 : -128)));
        }
    }
}

TEST_CASE("broadcast MAXIMUM / MINIMUM: MinMaxOptions, raw scales, bit-exact") {
    for (auto op : {B::MAXIMUM, B::MINIMUM}) {
        const const_case c{op, tensor_type::INT8, {1, 2, 6, 5}, {1, 6, 5}, quant{0.05f, 1}, quant{0.05f, 1},
                           quant{0.05f, 1}};
        const auto r = run_both(const_model(c), {ramp_input(dtype::int8, {1, 2, 6, 5}, 5)});
        require_equal(r.sim[0], r.ref[0]);
        layers_of L(r.vnnx);
        const auto& l = L.find(op == B::MAXIMUM ? 55 : 57);
        const auto u = l.options.get<vnnx::format::layer_options::MinMaxOptions>();
        CHECK(u.max == (op == B::MAXIMUM ? 1 : 0));
        CHECK(u.filter_shape_dims == std::array<std::int32_t, 4>{1, 5, 1, 6});
        CHECK(u.filter_offset == 1);
        const auto q = vnnx::quant::quantize_multiplier(static_cast<double>(0.05f));
        CHECK(L.i32(l.input_multiplier) == q.multiplier);
        CHECK(L.i32(l.output_multiplier) == q.multiplier);
        CHECK(L.i32(u.filter_multiplier) == q.multiplier);
        CHECK(L.i32(u.filter_shift) == q.shift);
        CHECK(l.output_multiplier.value == l.input_shift.value + 4);
        CHECK(u.filter_multiplier.value == l.output_shift.value + 4);
        CHECK(u.filter_data.value == u.filter_shift.value + 4);
    }
}

TEST_CASE("broadcast SQUARED_DIFFERENCE with a constant: left_shift 7, TFLite arithmetic") {
    const const_case c{B::SQUARED_DIFFERENCE, tensor_type::INT8, {1, 3, 3, 6}, {6}, quant{0.05f, 3}, quant{0.04f, -5},
                       quant{0.02f, -128}};
    const ndarray x = ramp_input(dtype::int8, {1, 3, 3, 6}, 23);
    const auto bytes = vnnx::compile(const_model(c), {}, "sqd.tflite").bytes;
    const auto got = simulate(bytes, {x}, {ndarray(dtype::int8, {1, 3, 3, 6})});
    layers_of L(bytes);
    const auto& l = L.find(99);
    const auto u = l.options.get<vnnx::format::layer_options::broadcast8>();
    CHECK(u.left_shift == 7);
    CHECK(u.sub == 0);
    const auto p = vnnx::quant::eltwise_parameters(vnnx::quant::eltwise_kind::squared_difference, 0.05f, 0.04f, 0.02f);
    CHECK(L.i32(l.output_multiplier) == p.output.multiplier);
    CHECK(L.i32(l.output_shift) == p.output.shift);
    const auto kv = konst_values(c);
    using vnnx::quant::multiply_by_quantized_multiplier_smaller_than_one_exp;
    for (std::size_t i = 0; i < x.element_count(); ++i) {
        // TFLite's reference SquaredDifference for int8, written out.
        const auto xv = static_cast<std::int32_t>(x.get<std::int64_t>(i)) - 3;
        const std::int32_t fv = kv[i % 6] + 5;
        const std::int32_t a = multiply_by_quantized_multiplier_smaller_than_one_exp(xv * 128, p.input1[0].multiplier, p.input1[0].shift);
        const std::int32_t b = multiply_by_quantized_multiplier_smaller_than_one_exp(fv * 128, p.input2[0].multiplier, p.input2[0].shift);
        const std::int32_t want = std::clamp(
            multiply_by_quantized_multiplier_smaller_than_one_exp((a - b) * (a - b), p.output.multiplier, p.output.shift) - 128,
            -128, 127);
        REQUIRE(got[0].get<std::int64_t>(i) == want);
        const double real = std::pow(0.05 * xv - 0.04 * fv, 2);
        CHECK(std::abs((want + 128) * 0.02 - std::min(real, 255 * 0.02)) <= 0.021);
    }
}

TEST_CASE("broadcast: constants that would widen the activation are rejected with the rule") {
    const const_case c{B::ADD, tensor_type::INT8, {1, 4, 1, 7}, {1, 4, 5, 7}, quant{0.05f, 0}, quant{0.05f, 0},
                       quant{0.05f, 0}};
    // The builder's output shape is the activation's; TFLite would need [1,4,5,7].
    try {
        (void)vnnx::compile(const_model(c), {}, "wide.tflite");
        FAIL("compiled");
    } catch (const vnnx::error& e) {
        const std::string what = e.what();
        CHECK(what.find("wide.tflite") != std::string::npos);
        CHECK(what.find("(ADD)") != std::string::npos);
        CHECK(what.find("constant") != std::string::npos);
    }
}

TEST_CASE("broadcast ADD, SUB, MUL, SQUARED_DIFFERENCE with a constant on large maps (the pair table) are bit-exact") {
    // 4 x 40 x 64 = 10240 elements: the SIMD ISAs look each result up in a table of every
    // (input byte, constant byte) pair (simulate() checks them against the scalar loop, on two
    // runs of one machine), with the constant repeated (YOLO's strides) or dense (its anchors).
    const std::vector<std::int32_t> xs{1, 4, 40, 64};
    for (auto op : {B::ADD, B::SUB, B::MUL, B::SQUARED_DIFFERENCE})
        for (const auto& k : {std::vector<std::int32_t>{64}, std::vector<std::int32_t>{1, 4, 40, 64}, std::vector<std::int32_t>{40, 1}})
            for (bool first : {false, true}) {
                if (first && op == B::SQUARED_DIFFERENCE) continue;
                const const_case c{op, tensor_type::INT8, xs, k, quant{0.05f, 3}, quant{0.021f, -6}, quant{0.08f, -2}, first};
                INFO(vnnx::builtin_name(op) << " constant rank " << k.size() << " swap " << first);
                const auto r = run_both(const_model(c), {ramp_input(dt(c.type), wide(c.x_shape), 17)});
                require_equal(r.sim[0], r.ref[0]);
            }
}
