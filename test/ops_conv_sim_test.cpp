// Simulator vs reference interpreter on single ordinary-convolution models: every variant within
// 1 LSB (the FIA's 16-bit multiplier and 48-bit constant differ from TFLite's 31-bit
// requantization), the exact-match rate reported.
#include <cmath>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "vnnx/compiler/passes/outlier_weights.hpp"

using namespace conv_test;

namespace {
void check_case(const spec& s, const std::string& name) {
    const auto c = compare_with_reference(s);
    WARN(name << ": exact-match rate " << 100.0 * c.exact_rate() << "% of " << c.total << ", max diff " << c.max_diff);
    CHECK(c.total > 0);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.95);
}
}  // namespace

TEST_CASE("conv sim: stride, dilation and kernel shapes") {
    spec s;
    check_case(s, "3x3 s1");
    s.H = s.W = 9;
    s.sh = s.sw = 2;
    s.seed = 2;
    check_case(s, "3x3 s2 (strided grid)");
    s.sw = 1;
    s.seed = 3;
    check_case(s, "3x3 s(2,1) (row-stepped grid)");
    s.sh = 1;
    s.dh = s.dw = 2;
    s.seed = 4;
    check_case(s, "3x3 dilation 2");
    s = spec{};
    s.kh = 5;
    s.kw = 2;
    s.H = 11;
    s.W = 6;
    s.seed = 5;
    check_case(s, "5x2 kernel");
    s = spec{};
    s.kh = s.kw = 1;
    s.seed = 6;
    check_case(s, "1x1 (no shaper)");
    s.sh = s.sw = 2;
    s.seed = 7;
    check_case(s, "1x1 s2");
}

TEST_CASE("conv sim: channels, quantization and activations") {
    spec s;
    s.C = 3;
    s.K = 5;
    s.seed = 11;
    check_case(s, "odd C=3, K=5");
    s.C = 7;
    s.K = 37;  // K not a multiple of P, several map blocks on V250
    s.seed = 12;
    check_case(s, "C=7, K=37");
    s = spec{};
    s.per_channel = false;
    s.seed = 13;
    check_case(s, "per-tensor");
    s.bias = false;
    s.seed = 14;
    check_case(s, "no bias");
    s = spec{};
    s.act = activation_function::RELU;
    s.seed = 15;
    check_case(s, "RELU");
    s.act = activation_function::RELU6;
    s.out_scale = 0.03f;
    s.seed = 16;
    check_case(s, "RELU6");
    s.act = activation_function::RELU_N1_TO_1;
    s.out_scale = 0.01f;
    s.seed = 17;
    check_case(s, "RELU_N1_TO_1");
    s = spec{};
    s.N = 2;
    s.seed = 18;
    check_case(s, "batch 2");
}

TEST_CASE("conv sim: uint8 models") {
    spec s;
    s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
    s.w_zero = 128;
    s.per_channel = false;
    s.seed = 21;
    check_case(s, "uint8, weights z=128 (exact w - z_w)");
    s.act = activation_function::RELU6;
    s.seed = 22;
    check_case(s, "uint8 RELU6");
    s.act = activation_function::NONE;
    s.in_zero = 40;  // TFLite's uint8 convolution is per-tensor only
    s.out_zero = -30;
    s.seed = 23;
    check_case(s, "uint8, other zero points");
}

TEST_CASE("conv sim: uint8 weights whose w - z_w leave int8 run exactly on a doubled input") {
    spec s;
    s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
    s.w_zero = 90;  // w - z_w spans [-90, 165]: channels leave int8
    s.per_channel = false;
    s.seed = 24;
    const auto model = build(s);
    const auto compiled = compile(model);
    // CONCATENATION(x, x), then the convolution over 2C channels with the split filter.
    REQUIRE(compiled.nodes.size() == 2);
    CHECK(compiled.nodes[0].type == "CONCATENATION");
    CHECK(compiled.nodes[1].type == "CONV_2D");
    CHECK(compiled.nodes[1].macs == 2LL * s.K * s.out_h() * s.out_w() * s.C * s.kh * s.kw);
    const auto c = compare_with_reference(s);
    WARN("uint8 weights z=90 (split): exact-match rate " << 100.0 * c.exact_rate() << "% of " << c.total << ", max diff "
                                                        << c.max_diff);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.95);
}

TEST_CASE("conv sim: only the input channels outlier weights read get a second copy") {
    spec s;
    s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
    s.w_zero = 200;  // w - z_w spans [-200, 55]
    s.per_channel = false;
    s.C = 6;
    s.w_outlier_c = 2;
    s.seed = 25;
    const auto compiled = compile(build(s));
    // GATHER of channel 2 (an IDENTITY node), CONCATENATION(x, that copy), the convolution over 7.
    REQUIRE(compiled.nodes.size() == 3);
    CHECK(compiled.nodes[1].type == "CONCATENATION");
    CHECK(compiled.nodes[2].type == "CONV_2D");
    CHECK(compiled.nodes[2].macs == 1LL * s.K * s.out_h() * s.out_w() * (s.C + 1) * s.kh * s.kw);
    const auto c = compare_with_reference(s);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.95);
}

TEST_CASE("conv sim: with the SDK's records or on request uint8 outlier channels stay requantized") {
    spec s;
    s.in_type = s.out_type = s.w_type = tensor_type::UINT8;
    s.w_zero = 90;
    s.per_channel = false;
    s.seed = 24;
    const auto model = build(s);
    for (const bool sdk : {true, false}) {
        INFO((sdk ? "--sdk-scales" : "--requantize-outliers"));
        vnnx::compile_options opt;
        opt.sdk_scales = sdk;
        opt.requantize_outliers = !sdk;
        const auto compiled = vnnx::compile(model, opt, "conv_case.tflite");
        REQUIRE(compiled.nodes.size() == 1);  // no doubled input
        CHECK(compiled.nodes[0].macs == 1LL * s.K * s.out_h() * s.out_w() * s.C * s.kh * s.kw);
        // Requantized: each weight moves by up to one step of the new grid (1.3 old steps
        // here), so an output can move by a few LSB.
        const auto view = vnnx::tflite::model_view::parse(model, "conv_case.tflite");
        int worst = 0;
        for (int i = 0; i < 2; ++i) {
            const auto x = input_for(s, s.seed * 100 + static_cast<std::uint64_t>(i));
            const auto want = to_channels_first(vnnx::ref::run(view, {x}).at(0));
            const auto got = simulate(compiled.bytes, to_channels_first(x));
            REQUIRE(got.size() == want.size());
            for (std::size_t j = 0; j < got.size(); ++j)
                worst = std::max(worst, std::abs(int(static_cast<std::uint8_t>(got[j])) - int(static_cast<std::uint8_t>(want[j]))));
        }
        CHECK(worst <= 4);
        if (!sdk) CHECK(worst >= 2);  // what the doubled input removes
    }
}

TEST_CASE("conv: a weight splits into two halves for every zero point but 0's code 255") {
    // Every uint8 zero point and weight: a + b = w - z_w, both uint8 codes around z_w and int8
    // after it; the first half takes all it can (a weight within int8 stays whole).
    int unsplittable = 0, wrong = 0;
    for (int z = 0; z < 256; ++z) {
        const auto h = vnnx::compiler::passes::detail::halves_for(z);
        for (int w = 0; w < 256; ++w) {
            const int d = w - z;
            std::int32_t a = 0, b = 0;
            if (!h.split(d, a, b)) {
                ++unsplittable;
                wrong += !(z == 0 && w == 255);
                continue;
            }
            bool ok = a + b == d;
            for (int half : {a, b}) ok = ok && half >= -128 && half <= 127 && z + half >= 0 && z + half <= 255;
            if (d >= -128 && d <= 127) ok = ok && b == 0;
            wrong += !ok;
        }
    }
    CHECK(wrong == 0);
    CHECK(unsplittable == 1);
}

TEST_CASE("conv: requantize_channel keeps int8 codes, the largest factor and a near-zero error sum") {
    // uint8 weights 0..255 with zero point 204: w - z_w spans [-204, 51].
    std::vector<std::int32_t> d;
    for (int i = 0; i < 75; ++i) d.push_back((i * 37 + 11) % 256 - 204);
    d.push_back(-204);
    const auto before = d;
    const double f = vnnx::ops::conv_detail::requantize_channel(d);
    CHECK(f == Approx(128.0 / 204.0));  // the negative side decides: -204 -> -128
    double total = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
        INFO("weight " << i);
        CHECK(d[i] >= -128);
        CHECK(d[i] <= 127);
        const double e = d[i] - before[i] * f;
        CHECK(std::abs(e) <= 1.0);
        total += e;
    }
    CHECK(d.back() == -128);
    CHECK(std::abs(total) <= 0.5);
    // A positive outlier: 127 / max.
    std::vector<std::int32_t> p = {200, -3, 5, 100};
    CHECK(vnnx::ops::conv_detail::requantize_channel(p) == Approx(127.0 / 200.0));
    CHECK(p[0] == 127);
}

TEST_CASE("conv: weight_gain scales weights with headroom onto a finer output shift") {
    using vnnx::ops::conv_detail::weight_gain;
    const vnnx::quant::activation_range full{-128, 127};
    // s = 0.005 needs shift 16 (om = 328, relative error 1e-3); weights within +-20 allow m <= 6,
    // and s/m < 65535 / 2^24 from m = 2 on: shift 24, a 16-bit multiplier.
    const std::vector<std::int8_t> small = {20, -3, 7, -20, 0, 11};
    const auto g = weight_gain(small, -1234, 0.005, 3, full);
    CHECK(g.factor >= 2);
    CHECK(g.factor <= 6);
    CHECK(g.params.shift_index == 2);
    const double exact = 0.005 / g.factor * 16777216.0;
    CHECK(std::abs(g.params.multiplier - exact) / exact < 2e-5);
    CHECK(g.params.constant == -1234 * g.factor * std::int64_t{g.params.multiplier} + 3 * (std::int64_t{1} << 24) +
                                   (std::int64_t{1} << 23));
    // Full-range weights have no headroom; an exactly representable scale gains nothing.
    const std::vector<std::int8_t> full_range = {127, -3, 7};
    CHECK(weight_gain(full_range, 0, 0.005, 0, full).factor == 1);
    const std::vector<std::int8_t> tiny = {3, -1};
    CHECK(weight_gain(tiny, 6, 0.125, 1, full).factor == 1);
    CHECK(weight_gain(std::vector<std::int8_t>{0, 0}, 6, 0.005, 1, full).factor == 1);
}

TEST_CASE("conv sim: per-tensor weights with headroom run on the finer shift, within 1 LSB") {
    spec s;
    s.per_channel = false;
    s.w_abs_max = 30;
    s.seed = 31;
    const auto r = compile(build(s));
    const vnnx::format::model_view v(r.bytes, "gain.vnnx");
    REQUIRE(v.num_nodes() >= 1);
    const auto& n = v.node(0);
    // Every channel's shift index is 2 (shift 24) once its weights are scaled.
    for (std::size_t k = 0; k < static_cast<std::size_t>(s.K); ++k) {
        INFO("channel " << k);
        CHECK(v.int32s(n.output_shift.value + 4 * k, 1, "test")[0] == 2);
    }
    const auto c = compare_with_reference(s);
    WARN("per-tensor, weights within +-30: exact-match rate " << 100.0 * c.exact_rate() << "% of " << c.total
                                                                 << ", max diff " << c.max_diff);
    CHECK(c.max_diff <= 1);
    CHECK(c.exact_rate() >= 0.995);
}

TEST_CASE("conv sim: filter gain at its extremes keeps every accumulator exact") {
    // Weights of +-1 leave the largest headroom: the gain may scale them up to 127. Scaled
    // weights stay int8, so every product and every sum is bounded exactly as for a full-range
    // int8 filter; the scaled bias must fit int32 and the FIA constant 48 bits (weight_gain stops
    // before either overflows). Here 4608 terms (3x3x512) at the extreme inputs -128 and 127
    // reach |sum| = 4608 * 127 * 132 after the gain: the outputs must still agree within 1 LSB
    // and must not saturate (which would hide an overflow).
    for (const bool per_channel : {false, true})
        for (const int w : {1, -1})
            for (const int x : {-128, 127}) {
                spec s;
                s.per_channel = per_channel;
                s.C = 512;
                s.K = 8;
                s.H = s.W = 3;
                s.w_fill = w;
                s.in_fill = x;
                s.out_scale = 5.0f;
                s.seed = 41;
                INFO((per_channel ? "per-channel" : "per-tensor") << ", weights " << w << ", inputs " << x);
                const auto r = compile(build(s));
                const vnnx::format::model_view v(r.bytes, "gain_extremes.vnnx");
                REQUIRE(v.num_nodes() >= 1);
                const auto u = v.node(0).options.get<vnnx::format::node_options::Conv2DOptions>();
                const auto packed = v.range(u.filter_data.value, static_cast<std::uint64_t>(s.K) * 9 * 512, "filter");
                int largest = 0;
                for (const auto b : packed) largest = std::max(largest, std::abs(int(static_cast<std::int8_t>(b))));
                CHECK(largest > 1);  // the gain was applied
                // One scale for all channels: one factor, so each packed byte is 0 (padding) or +-largest.
                if (!per_channel)
                    for (const auto b : packed) {
                        const int v = std::abs(int(static_cast<std::int8_t>(b)));
                        CHECK((v == 0 || v == largest));
                    }
                const auto out = simulate(r.bytes, to_channels_first(input_for(s, 1)));
                for (const auto b : out) {
                    const int y = static_cast<std::int8_t>(b);
                    CHECK(y > -128);
                    CHECK(y < 127);
                }
                const auto c = compare_with_reference(s, 1);
                CHECK(c.total == static_cast<std::size_t>(s.K));
                CHECK(c.max_diff <= 1);
            }
}
