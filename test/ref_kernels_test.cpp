#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <type_traits>
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

namespace {
// TFLite's loops written out: per output element, the window's products summed in int32.
template <class T>
void conv_by_definition(const std::vector<T>& x, vnnx::ref::nhwc in, const std::vector<T>& w, vnnx::ref::nhwc f,
                        const std::vector<std::int32_t>& bias, std::vector<T>& y, vnnx::ref::nhwc out,
                        const vnnx::ref::conv_geometry& g, const vnnx::ref::requant_params& q) {
    const std::int32_t groups = in.c / f.c, per_group = out.c / groups;
    const std::int32_t pad_h = vnnx::ref::compute_padding(g.stride_h, g.dilation_h, in.h, f.h, out.h);
    const std::int32_t pad_w = vnnx::ref::compute_padding(g.stride_w, g.dilation_w, in.w, f.w, out.w);
    for (std::int32_t b = 0; b < out.n; ++b)
        for (std::int32_t oy = 0; oy < out.h; ++oy)
            for (std::int32_t ox = 0; ox < out.w; ++ox)
                for (std::int32_t oc = 0; oc < out.c; ++oc) {
                    std::int32_t acc = 0;
                    for (std::int32_t ky = 0; ky < f.h; ++ky)
                        for (std::int32_t kx = 0; kx < f.w; ++kx) {
                            const std::int32_t iy = oy * g.stride_h - pad_h + ky * g.dilation_h;
                            const std::int32_t ix = ox * g.stride_w - pad_w + kx * g.dilation_w;
                            if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w) continue;
                            for (std::int32_t ic = 0; ic < f.c; ++ic)
                                acc += (std::int32_t{x[static_cast<std::size_t>(in.at(b, iy, ix, oc / per_group * f.c + ic))]} -
                                        q.input_zero_point) *
                                       (std::int32_t{w[static_cast<std::size_t>(f.at(oc, ky, kx, ic))]} - q.filter_zero_point);
                        }
                    if (!bias.empty()) acc += bias[static_cast<std::size_t>(oc)];
                    y[static_cast<std::size_t>(out.at(b, oy, ox, oc))] = static_cast<T>(q.apply(acc, static_cast<std::size_t>(oc)));
                }
}

template <class T>
void check_conv_and_fc(std::mt19937& rng) {
    using namespace vnnx::ref;
    std::uniform_int_distribution<int> d(1, 9), k(1, 3), s(1, 2), pick(0, 3);
    constexpr bool is_signed = std::is_signed_v<T>;
    int compared = 0;
    for (int n = 0; n < 200; ++n) {
        nhwc in{1 + n % 2, d(rng), d(rng), 1}, f{1, k(rng), k(rng), d(rng) * 3}, out{};
        const int groups = pick(rng) == 0 ? 2 : 1;
        in.c = f.c * groups;
        f.n = groups * d(rng) * 2;
        const conv_geometry g{s(rng), s(rng), s(rng), 1, pick(rng) != 0 ? padding::same : padding::valid};
        const int eh = (f.h - 1) * g.dilation_h + 1, ew = (f.w - 1) * g.dilation_w + 1;
        if (g.pad == padding::same) {
            out.h = (in.h + g.stride_h - 1) / g.stride_h;
            out.w = (in.w + g.stride_w - 1) / g.stride_w;
        } else {
            if (in.h < eh || in.w < ew) continue;
            out.h = (in.h - eh) / g.stride_h + 1;
            out.w = (in.w - ew) / g.stride_w + 1;
        }
        out.n = in.n;
        out.c = f.n;
        std::vector<T> x(static_cast<std::size_t>(in.size())), w(static_cast<std::size_t>(f.size()));
        for (auto& v : x) v = static_cast<T>(rng());
        for (auto& v : w) v = static_cast<T>(rng());
        std::vector<std::int32_t> bias(static_cast<std::size_t>(out.c));
        for (auto& v : bias) v = static_cast<std::int32_t>(rng() % 20000) - 10000;
        requant_params q;
        q.input_zero_point = is_signed ? static_cast<int>(rng() % 256) - 128 : static_cast<int>(rng() % 256);
        q.filter_zero_point = is_signed ? 0 : static_cast<int>(rng() % 256);
        q.output_zero_point = 3;
        q.act = {is_signed ? -128 : 0, is_signed ? 127 : 255};
        for (int c = 0; c < out.c; ++c)
            q.multipliers.push_back({(1 << 30) + static_cast<int>(rng() % 100000), -static_cast<int>(rng() % 12) - 4});
        std::vector<T> got(static_cast<std::size_t>(out.size())), want(got.size());
        conv2d<T, T>(x, in, w, f, bias, got, out, g, q);
        conv_by_definition(x, in, w, f, bias, want, out, g, q);
        INFO("conv case " << n);
        REQUIRE(got == want);
        // FULLY_CONNECTED is the 1x1 convolution of a [batches, 1, 1, depth] input.
        const int units = d(rng) * 5, depth = d(rng) * 7, batches = d(rng);
        std::vector<T> fx(static_cast<std::size_t>(batches * depth)), fw(static_cast<std::size_t>(units * depth));
        for (auto& v : fx) v = static_cast<T>(rng());
        for (auto& v : fw) v = static_cast<T>(rng());
        requant_params fq = q;
        fq.multipliers.resize(1);
        std::vector<T> fgot(static_cast<std::size_t>(batches * units)), fwant(fgot.size());
        fully_connected<T, T>(fx, fw, {}, fgot, batches, depth, units, fq);
        conv_by_definition(fx, nhwc{batches, 1, 1, depth}, fw, nhwc{units, 1, 1, depth}, {}, fwant, nhwc{batches, 1, 1, units},
                           conv_geometry{1, 1, 1, 1, padding::valid}, fq);
        REQUIRE(fgot == fwant);
        ++compared;
    }
    CHECK(compared > 100);
    // Large enough to run on several threads and through the widest vector path.
    nhwc in{1, 40, 40, 64}, f{96, 3, 3, 64}, out{1, 40, 40, 96};
    std::vector<T> x(static_cast<std::size_t>(in.size())), w(static_cast<std::size_t>(f.size()));
    for (auto& v : x) v = static_cast<T>(rng());
    for (auto& v : w) v = static_cast<T>(rng());
    requant_params q;
    q.input_zero_point = is_signed ? -5 : 120;
    q.filter_zero_point = is_signed ? 0 : 131;
    q.act = {is_signed ? -128 : 0, is_signed ? 127 : 255};
    q.multipliers.push_back({1 << 30, -14});
    std::vector<T> got(static_cast<std::size_t>(out.size())), want(got.size());
    conv2d<T, T>(x, in, w, f, {}, got, out, conv_geometry{}, q);
    conv_by_definition(x, in, w, f, {}, want, out, conv_geometry{}, q);
    CHECK(got == want);
    // Zero points the int16 rows cannot hold are refused, not wrapped.
    q.input_zero_point = 300;
    auto refused = [&] { conv2d<T, T>(x, in, w, f, {}, got, out, conv_geometry{}, q); };
    CHECK_THROWS_WITH(refused(), Catch::Contains("zero point 300"));
}
}  // namespace

TEST_CASE("ref: CONV_2D and FULLY_CONNECTED (patches, vector kernels, threads) equal TFLite's loops on random shapes") {
    std::mt19937 rng(5);
    check_conv_and_fc<std::int8_t>(rng);
    check_conv_and_fc<std::uint8_t>(rng);
}

TEST_CASE("quant::dots: every vector path this CPU runs equals the baseline loop, rows and lengths ragged") {
    std::mt19937 rng(17);
    std::uniform_int_distribution<int> len(1, 300), rows(1, 9), val(-255, 255);
    for (int n = 0; n < 200; ++n) {
        const auto k = static_cast<std::size_t>(len(rng)), r = static_cast<std::size_t>(rows(rng));
        std::vector<std::int16_t> a(k), b(r * k);
        for (auto& v : a) v = static_cast<std::int16_t>(val(rng));
        for (auto& v : b) v = static_cast<std::int16_t>(val(rng));
        std::vector<std::int32_t> want(r);
        for (std::size_t i = 0; i < r; ++i)
            for (std::size_t j = 0; j < k; ++j) want[i] += std::int32_t{a[j]} * b[i * k + j];
        for (const auto path : {vnnx::quant::dot_isa::baseline, vnnx::quant::dot_isa::avx2, vnnx::quant::dot_isa::avx512}) {
            if (!vnnx::quant::dot_isa_supported(path)) continue;
            std::vector<std::int32_t> got(r, -1);
            vnnx::quant::dots(path, a.data(), b.data(), r, k, got.data());
            INFO("case " << n << " path " << static_cast<int>(path));
            REQUIRE(got == want);
        }
    }
}
