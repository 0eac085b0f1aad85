#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "vnnx/ref/activations.hpp"
#include "vnnx/ref/conv.hpp"
#include "vnnx/ref/eltwise.hpp"
#include "vnnx/ref/layout.hpp"
#include "vnnx/ref/pool.hpp"
#include "vnnx/ref/reduce.hpp"
#include "vnnx/ref/resize.hpp"
#include "vnnx/ref/softmax.hpp"

using namespace vnnx::ref;
using i8 = std::int8_t;
using u8 = std::uint8_t;

namespace {
vnnx::quant::quantized_multiplier quant_one() { return {1 << 30, 1}; }
}  // namespace

TEST_CASE("ref: conv requantization picks single or double rounding") {
    const std::vector<i8> x = {5}, w = {1};
    std::vector<i8> y(1);
    requant_params q;
    q.multipliers = {{1 << 30, -1}};  // 0.25: 5 · 0.25 = 1.25
    q.round = rounding::single;
    conv2d<i8, i8>(x, {1, 1, 1, 1}, w, {1, 1, 1, 1}, {}, y, {1, 1, 1, 1}, {}, q);
    CHECK(y[0] == 1);
    q.round = rounding::double_;  // SRDHM gives 3 (2.5 rounded), 3/2 → 2
    conv2d<i8, i8>(x, {1, 1, 1, 1}, w, {1, 1, 1, 1}, {}, y, {1, 1, 1, 1}, {}, q);
    CHECK(y[0] == 2);
}

TEST_CASE("ref: 3x3 SAME conv with zero points, bias and clamping") {
    // All-ones 3x3 input (code 3, zero point 1 → value 2), all-ones filter, multiplier 1.
    const std::vector<i8> x(9, 3), w(9, 1);
    std::vector<i8> y(9);
    requant_params q;
    q.input_zero_point = 1;
    q.output_zero_point = -4;
    q.multipliers = {quant_one()};
    q.act = {-128, 13};
    const std::vector<std::int32_t> bias = {1};
    conv2d<i8, i8>(x, {1, 3, 3, 1}, w, {1, 3, 3, 1}, bias, y, {1, 3, 3, 1}, {}, q);
    // centre: 9 taps · 2 + 1 − 4 = 15 → clamped to 13; corner: 4 taps · 2 + 1 − 4 = 5; edge: 6·2+1−4 = 9
    CHECK(y[4] == 13);
    CHECK(y[0] == 5);
    CHECK(y[1] == 9);
}

TEST_CASE("ref: depthwise multiplier and fully connected") {
    const std::vector<i8> x = {2, 3};  // 1x1x1x2
    const std::vector<i8> w = {1, 2, 3, 4};  // depth multiplier 2 → 4 outputs
    std::vector<i8> y(4);
    requant_params q;
    q.multipliers = {quant_one()};
    q.round = rounding::double_;
    depthwise_conv2d<i8, i8>(x, {1, 1, 1, 2}, w, {1, 1, 1, 4}, {}, y, {1, 1, 1, 4}, {}, 2, q);
    CHECK(y == std::vector<i8>{2, 4, 9, 12});
    std::vector<i8> fc(2);
    const std::vector<i8> wf = {1, 1, -1, 2};
    fully_connected<i8, i8>(x, wf, std::vector<std::int32_t>{10, 0}, fc, 1, 2, 2, q);
    CHECK(fc == std::vector<i8>{15, 4});
}

TEST_CASE("ref: pooling divides by in-bounds taps, rounding half away from zero") {
    const std::vector<i8> x = {1, 2, 3, 5};  // 2x2
    std::vector<i8> y(1);
    pool_params p{2, 2, 2, 2, padding::valid, {-128, 127}};
    average_pool<i8>(x, {1, 2, 2, 1}, y, {1, 1, 1, 1}, p);
    CHECK(y[0] == 3);  // 11/4 = 2.75
    const std::vector<i8> n = {-1, -2, -3, -4};
    average_pool<i8>(n, {1, 2, 2, 1}, y, {1, 1, 1, 1}, p);
    CHECK(y[0] == -3);  // −10/4 = −2.5 → −3
    max_pool<i8>(n, {1, 2, 2, 1}, y, {1, 1, 1, 1}, p);
    CHECK(y[0] == -1);
    // SAME 3x3 window at stride 1 on 2x2: every output sees all 4 taps.
    std::vector<i8> s(4);
    average_pool<i8>(x, {1, 2, 2, 1}, s, {1, 2, 2, 1}, {3, 3, 1, 1, padding::same, {-128, 127}});
    CHECK(s == std::vector<i8>{3, 3, 3, 3});
}

TEST_CASE("ref: ADD, SUB, MUL with broadcasting and MAXIMUM") {
    const operand_quant qa{0.5f, 0}, qb{0.25f, 0}, qo{1.0f, 0};
    const std::vector<i8> a = {10, 20}, b = {8};  // 5.0, 10.0 and 2.0
    const std::vector<std::int32_t> sa = {2}, sb = {1};
    std::vector<i8> y(2);
    add<i8>(a, sa, b, sb, y, make_add_params(qa, qb, qo, {-128, 127}));
    CHECK(y == std::vector<i8>{7, 12});
    add<i8>(a, sa, b, sb, y, make_add_params(qa, qb, qo, {-128, 127}), true);
    CHECK(y == std::vector<i8>{3, 8});
    mul<i8>(a, sa, b, sb, y, make_mul_params(qa, qb, qo, {-128, 127}));
    CHECK(y == std::vector<i8>{10, 20});
    mul<i8>(a, sa, b, sb, y, make_mul_params(qa, qb, qo, {-128, 15}));
    CHECK(y == std::vector<i8>{10, 15});
    min_max<i8>(a, sa, b, sb, y, true);
    CHECK(y == std::vector<i8>{10, 20});
    CHECK_THROWS_AS(add<i8>(a, sa, a, std::vector<std::int32_t>{3}, y, make_add_params(qa, qa, qo, {-128, 127})),
                    vnnx::error);
}

TEST_CASE("ref: activations") {
    std::vector<i8> y(3);
    relu_x<i8>(std::vector<i8>{-10, 5, 100}, y, {0.1f, 0}, {0.1f, 0}, 0.0f, 6.0f);
    CHECK(y == std::vector<i8>{0, 5, 60});
    leaky_relu<i8>(std::vector<i8>{-50, 0, 50}, y, {1.0f, 0}, {1.0f, 0}, 0.1f);
    CHECK(y == std::vector<i8>{-5, 0, 50});
    std::vector<u8> u(2);
    requantize<i8, u8>(std::vector<i8>{10, -128}, u, {0.5f, 0}, {1.0f, 128});
    CHECK(u == std::vector<u8>{133, 64});
    std::vector<float> f(2);
    dequantize<i8>(std::vector<i8>{10, -3}, f, {0.5f, 1});
    CHECK(f == std::vector<float>{4.5f, -2.0f});
    std::vector<i8> q(3);
    quantize<i8>(std::vector<float>{1.25f, -1.25f, 1000.0f}, q, {0.5f, 0});
    CHECK(q == std::vector<i8>{3, -3, 127});  // ±2.5 rounds away from zero
    // HARD_SWISH against x·relu6(x+3)/6 within one output step, and exact at both ends.
    const operand_quant qi{0.05f, 0}, qo{0.05f, 0};
    const auto p = make_hard_swish_params(qi, qo);
    for (int v = -128; v <= 127; ++v) {
        const double x = 0.05 * v;
        const double r = x * std::clamp(x + 3, 0.0, 6.0) / 6 / 0.05;
        CHECK(std::abs(hard_swish_one<i8>(static_cast<i8>(v), p) - std::clamp(r, -128.0, 127.0)) <= 1.0);
    }
    CHECK(hard_swish_one<i8>(-100, p) == 0);   // x = −5: zero
    CHECK(hard_swish_one<i8>(100, p) == 100);  // x = 5: identity
}

TEST_CASE("ref: softmax, mean, arg_max") {
    std::vector<u8> u(4);
    softmax<u8, u8>(std::vector<u8>{7, 7, 7, 7}, u, 4, 0.1f, 1.0f, 1.0f / 256, 0);
    CHECK(u == std::vector<u8>{64, 64, 64, 64});
    std::vector<i8> s(2);
    softmax<i8, i8>(std::vector<i8>{-5, -5}, s, 2, 0.1f, 1.0f, 1.0f / 256, -128);
    CHECK(s == std::vector<i8>{0, 0});  // 0.5 · 256 − 128
    softmax<i8, i8>(std::vector<i8>{127, -128}, s, 2, 1.0f, 1.0f, 1.0f / 256, -128);
    CHECK(s == std::vector<i8>{127, -128});
    std::vector<i8> m(1);
    mean_hw<i8>(std::vector<i8>{10, 10, 10, 13}, {1, 2, 2, 1}, m, {1.0f, 0}, {1.0f, 0});
    CHECK(m[0] == 11);  // 43/4 = 10.75
    std::vector<std::int32_t> idx(2);
    arg_max<i8, std::int32_t>(std::vector<i8>{1, 9, 9, -3, 4, 0}, {2, 3}, 1, idx);
    CHECK(idx == std::vector<std::int32_t>{1, 1});  // ties keep the first
    arg_max<i8, std::int32_t>(std::vector<i8>{1, 9, 9, -3, 4, 0}, {2, 3}, 1, idx, true);
    CHECK(idx == std::vector<std::int32_t>{0, 0});
}

TEST_CASE("ref: resize") {
    std::vector<i8> y(4);
    resize_bilinear_integer<i8>(std::vector<i8>{0, 100}, {1, 1, 2, 1}, y, {1, 1, 4, 1}, false, false);
    CHECK(y == std::vector<i8>{0, 50, 100, 100});
    resize_nearest<i8>(std::vector<i8>{1, 2}, {1, 1, 2, 1}, y, {1, 1, 4, 1}, false, false);
    CHECK(y == std::vector<i8>{1, 1, 2, 2});
    std::vector<u8> u(4);
    resize_bilinear_float<u8>(std::vector<u8>{0, 101}, {1, 1, 2, 1}, u, {1, 1, 4, 1}, false, false);
    CHECK(u == std::vector<u8>{0, 51, 101, 101});  // 50.5 + 0.5 truncates to 51
}

TEST_CASE("ref: layout kernels") {
    const std::vector<std::int32_t> v = {0, 1, 2, 3, 4, 5};
    auto a = vnnx::ndarray::from<std::int32_t>({2, 3}, v);
    vnnx::ndarray t(vnnx::dtype::int32, {3, 2});
    transpose(a, {1, 0}, t);
    CHECK(t.get<int>(1) == 3);
    CHECK(t.get<int>(2) == 1);
    vnnx::ndarray c(vnnx::dtype::int32, {2, 6});
    concatenate({&a, &a}, 1, c);
    CHECK(c.get<int>(3) == 0);
    CHECK(c.get<int>(8) == 5);
    vnnx::ndarray p(vnnx::dtype::int32, {2, 4});
    const std::int32_t nine = 9;
    pad(vnnx::ndarray::from<std::int32_t>({2, 2}, std::vector<std::int32_t>{1, 2, 3, 4}), {{0, 0}, {1, 1}},
        std::as_bytes(std::span<const std::int32_t>(&nine, 1)), p);
    CHECK(p.get<int>(0) == 9);
    CHECK(p.get<int>(1) == 1);
    CHECK(p.get<int>(6) == 4);
    vnnx::ndarray s(vnnx::dtype::int32, {2});
    strided_copy(a, {0, 2}, {1, -1}, {1, 2}, s);  // row 0, columns 2 then 1
    CHECK(s.get<int>(0) == 2);
    CHECK(s.get<int>(1) == 1);
    vnnx::ndarray g(vnnx::dtype::int32, {2, 2});
    gather(a, 1, {2, 0}, g, "GATHER");
    CHECK(g.get<int>(0) == 2);
    CHECK(g.get<int>(3) == 3);
    CHECK_THROWS_WITH(gather(a, 1, {3}, g, "GATHER"), Catch::Contains("index 3 out of range"));
}
