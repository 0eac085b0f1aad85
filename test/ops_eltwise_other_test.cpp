// ELTWISE (301) SQUARED_DIFFERENCE, DIV and the comparisons (lowering.md §7.3.1, §8.4). The
// reference interpreter has no kernels for these yet, so the expected values are TFLite's
// integer recipes written out here (and checked against the real-valued result).
#include "ops_eltwise_harness_test.hpp"

#include <cmath>

#include <vnnx/quant/eltwise.hpp>
#include <vnnx/quant/fixed_point.hpp>
#include <vnnx/quant/multiplier.hpp>

using namespace eltwise_test;
using B = vnnx::builtin_operator;

namespace {

struct pair_case {
    B op;
    tensor_type type;
    std::vector<std::int32_t> a_shape, b_shape, out_shape;
    quant qa, qb, qo;
};

std::vector<std::byte> pair_model(const pair_case& c) {
    vnnx::tflite::builder b;
    const auto a = b.add_tensor("a", c.type, c.a_shape, c.qa);
    const auto x = b.add_tensor("b", c.type, c.b_shape, c.qb);
    const bool cmp = c.op != B::SQUARED_DIFFERENCE && c.op != B::DIV;
    const auto o = b.add_tensor("out", cmp ? tensor_type::BOOL : c.type, c.out_shape, cmp ? quant{} : c.qo);
    if (c.op == B::DIV) b.add_operator(c.op, {a, x}, {o}, vnnx::tflite::div_options{});
    else b.add_operator(c.op, {a, x}, {o});
    b.set_inputs({a, x});
    b.set_outputs({o});
    return b.finish();
}

std::vector<std::int64_t> wide(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

/// Index into a right-aligned broadcast operand of TFLite shape `s` for output index i of `out`.
std::size_t source_index(std::size_t i, const std::vector<std::int32_t>& out, const std::vector<std::int32_t>& s) {
    std::size_t idx = 0, stride = 1, rem = i;
    std::vector<std::size_t> coord(out.size());
    for (std::size_t d = out.size(); d-- > 0;) {
        coord[d] = rem % static_cast<std::size_t>(out[d]);
        rem /= static_cast<std::size_t>(out[d]);
    }
    for (std::size_t d = s.size(); d-- > 0;) {
        const std::size_t od = out.size() - s.size() + d;
        if (s[d] != 1) idx += coord[od] * stride;
        stride *= static_cast<std::size_t>(s[d]);
    }
    return idx;
}

}  // namespace

TEST_CASE("ELTWISE SQUARED_DIFFERENCE: left_shift 7, QM(T²/(2^14·S_out)), TFLite arithmetic") {
    const pair_case c{B::SQUARED_DIFFERENCE, tensor_type::INT8, {1, 3, 5, 4}, {1, 3, 5, 1}, {1, 3, 5, 4},
                      quant{0.05f, 3}, quant{0.04f, -2}, quant{0.01f, -128}};
    const auto a = ramp_input(dtype::int8, wide(c.a_shape), 1), b = ramp_input(dtype::int8, wide(c.b_shape), 2);
    const auto bytes = vnnx::compile(pair_model(c), {}, "sqd.tflite").bytes;
    const auto got = simulate(bytes, {a, b}, {ndarray(dtype::int8, wide(c.out_shape))});
    layers_of L(bytes);
    const auto& l = L.find(301);
    const auto u = l.options.get<vnnx::format::layer_options::eltwise8>();
    CHECK(u.type == 12);
    CHECK(u.left_shift == 7);
    const auto p = vnnx::quant::eltwise_parameters(vnnx::quant::eltwise_kind::squared_difference, 0.05f, 0.04f, 0.01f);
    CHECK(L.i32(l.output_multiplier) == p.output.multiplier);
    CHECK(L.i32(l.input_multiplier) == p.input1[0].multiplier);
    CHECK(L.i32(u.input2_multiplier) == p.input2[0].multiplier);
    using vnnx::quant::multiply_by_quantized_multiplier_smaller_than_one_exp;
    for (std::size_t i = 0; i < got[0].element_count(); ++i) {
        const auto x = static_cast<std::int32_t>(a.get<std::int64_t>(i)) - 3;
        const auto y = static_cast<std::int32_t>(b.get<std::int64_t>(source_index(i, c.out_shape, c.b_shape))) + 2;
        const std::int32_t sx = multiply_by_quantized_multiplier_smaller_than_one_exp(x * 128, p.input1[0].multiplier, p.input1[0].shift);
        const std::int32_t sy = multiply_by_quantized_multiplier_smaller_than_one_exp(y * 128, p.input2[0].multiplier, p.input2[0].shift);
        const std::int32_t want = std::clamp(
            multiply_by_quantized_multiplier_smaller_than_one_exp((sx - sy) * (sx - sy), p.output.multiplier, p.output.shift) -
                128,
            -128, 127);
        REQUIRE(got[0].get<std::int64_t>(i) == want);
    }
}

TEST_CASE("ELTWISE DIV: TFLite's multiplier S_in/(S_in2·S_out) (the SDK's MUL multiplier quirk fixed)") {
    for (auto t : {tensor_type::INT8, tensor_type::UINT8}) {
        const bool u8 = t == tensor_type::UINT8;
        const pair_case c{B::DIV, t, {1, 4, 4, 6}, {1, 4, 4, 6}, {1, 4, 4, 6}, quant{0.05f, u8 ? 128 : 0},
                          quant{0.03f, u8 ? 128 : 0}, quant{0.1f, u8 ? 128 : 0}};
        // Divisors away from zero: codes of b with |b − z| >= 1.
        auto a = ramp_input(u8 ? dtype::uint8 : dtype::int8, wide(c.a_shape), 8);
        auto b = ramp_input(u8 ? dtype::uint8 : dtype::int8, wide(c.b_shape), 9);
        const std::int64_t z = u8 ? 128 : 0;
        for (std::size_t i = 0; i < b.element_count(); ++i)
            if (b.get<std::int64_t>(i) == z) b.set<std::int64_t>(i, z + 1);
        const auto bytes = vnnx::compile(pair_model(c), {}, "div.tflite").bytes;
        const auto got = simulate(bytes, {a, b}, {ndarray(u8 ? dtype::uint8 : dtype::int8, wide(c.out_shape))});
        layers_of L(bytes);
        const auto& l = L.find(301);
        const auto u = l.options.get<vnnx::format::layer_options::eltwise8>();
        CHECK(u.type == 3);
        CHECK(u.left_shift == -1);
        const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(0.05f / (0.03f * 0.1f)));
        CHECK(L.i32(l.output_multiplier) == m.multiplier);
        CHECK(L.i32(l.output_shift) == m.shift);
        // TFLite's fixed-point reciprocal is accurate to about one output step.
        for (std::size_t i = 0; i < got[0].element_count(); ++i) {
            const double q = (0.05 * static_cast<double>(a.get<std::int64_t>(i) - z)) / (0.03 * static_cast<double>(b.get<std::int64_t>(i) - z));
            const double want = std::clamp(std::round(q / 0.1) + static_cast<double>(z), u8 ? 0.0 : -128.0, u8 ? 255.0 : 127.0);
            INFO("element " << i << " a " << a.get<std::int64_t>(i) << " b " << b.get<std::int64_t>(i));
            REQUIRE(std::abs(static_cast<double>(got[0].get<std::int64_t>(i)) - want) <= 1.0);
        }
    }
}

TEST_CASE("ELTWISE comparisons: left_shift 8, output 0/1 with zero 0 and scale 1") {
    const std::vector<std::pair<B, std::int32_t>> ops{{B::GREATER, 4}, {B::GREATER_EQUAL, 5}, {B::LESS, 6},
                                                      {B::LESS_EQUAL, 7}, {B::EQUAL, 8}, {B::NOT_EQUAL, 9}};
    for (const auto& [op, sub] : ops) {
        // Equal scales make EQUAL meaningful; a per-row second input exercises broadcasting.
        const pair_case c{op, tensor_type::INT8, {1, 2, 8, 3}, {1, 2, 8, 1}, {1, 2, 8, 3}, quant{0.05f, 0},
                          quant{0.05f, 2}, quant{}};
        INFO(vnnx::builtin_name(op));
        vnnx::tflite::prng rng(77);
        ndarray a(dtype::int8, wide(c.a_shape)), b(dtype::int8, wide(c.b_shape));
        for (std::size_t i = 0; i < a.element_count(); ++i) a.set<std::int64_t>(i, rng.uniform(-6, 6));
        for (std::size_t i = 0; i < b.element_count(); ++i) b.set<std::int64_t>(i, rng.uniform(-4, 8));
        const auto bytes = vnnx::compile(pair_model(c), {}, "cmp.tflite").bytes;
        const auto got = simulate(bytes, {a, b}, {ndarray(dtype::uint8, wide(c.out_shape))});
        layers_of L(bytes);
        const auto& l = L.find(301);
        const auto u = l.options.get<vnnx::format::layer_options::eltwise8>();
        CHECK(u.type == sub);
        CHECK(u.left_shift == 8);
        CHECK(l.output_offset == 0);
        CHECK(l.activation_min == 0);
        CHECK(l.activation_max == 1);
        CHECK(L.i32(l.output_multiplier) == (1 << 30));
        CHECK(L.i32(l.output_shift) == 1);
        const auto& out_rec = L.view.node_tensors(0).back();
        CHECK(out_rec.zero == 0);
        CHECK(out_rec.scale == 1.0f);
        std::size_t ones = 0;
        for (std::size_t i = 0; i < got[0].element_count(); ++i) {
            const std::int64_t x = a.get<std::int64_t>(i), y = b.get<std::int64_t>(source_index(i, c.out_shape, c.b_shape)) - 2;
            bool want = false;
            switch (op) {
                case B::GREATER: want = x > y; break;
                case B::GREATER_EQUAL: want = x >= y; break;
                case B::LESS: want = x < y; break;
                case B::LESS_EQUAL: want = x <= y; break;
                case B::EQUAL: want = x == y; break;
                default: want = x != y; break;
            }
            REQUIRE(got[0].get<std::int64_t>(i) == (want ? 1 : 0));
            ones += want ? 1 : 0;
        }
        CHECK(ones > 0);
        CHECK(ones < got[0].element_count());
    }
}

TEST_CASE("comparisons and DIV with a larger constant are rejected with the rule") {
    for (auto op : {B::GREATER, B::DIV}) {
        vnnx::tflite::builder b;
        const auto x = b.add_tensor("x", tensor_type::INT8, {1, 2, 2, 6}, quant{0.05f, 0});
        const auto k = b.add_constant("k", tensor_type::INT8, {6}, std::vector<std::int8_t>{1, 2, 3, 4, 5, 6}, quant{0.05f, 0});
        const bool cmp = op == B::GREATER;
        const auto o = b.add_tensor("o", cmp ? tensor_type::BOOL : tensor_type::INT8, {1, 2, 2, 6}, cmp ? quant{} : quant{0.05f, 0});
        b.add_operator(op, {x, k}, {o});
        b.set_inputs({x});
        b.set_outputs({o});
        INFO(vnnx::builtin_name(op));
        try {
            (void)vnnx::compile(b.finish(), {}, "k.tflite");
            FAIL("compiled");
        } catch (const vnnx::error& e) {
            const std::string what = e.what();
            CHECK(what.find("k.tflite") != std::string::npos);
            CHECK(what.find("operator 0") != std::string::npos);
            CHECK(what.find("constant") != std::string::npos);
            CHECK(e.kind() == vnnx::error_kind::unsupported);
        }
    }
}
