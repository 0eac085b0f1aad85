#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/sim/kernels/conv.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

using namespace vnnx_test;

// Every SIMD ISA gives the scalar bytes on one depthwise shape; `ws` is reused across shapes so
// stale bytes in its slack must only meet zero weights.
void require_simd_equals_scalar(const k::conv_shape& s, const std::vector<std::uint8_t>& x,
                                const std::vector<std::int8_t>& w, const k::requant_params& rq, bool extreme,
                                k::conv_workspace& ws) {
    std::vector<std::uint8_t> want(s.output_size());
    k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
    for (isa_kind i : simd_isas()) {
        std::vector<std::uint8_t> got(s.output_size(), 0x5A);
        k::conv2d(s, w, rq, i).run(x, got, ws);
        INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " " << s.height << "x" << s.width
                    << " k=" << s.kernel_h << "x" << s.kernel_w << " s=" << s.stride_h << "," << s.stride_w
                    << " d=" << s.dilation_h << "," << s.dilation_w << " in_signed=" << s.input_signed
                    << " extreme=" << extreme);
        REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
    }
}
}  // namespace


#if VNNX_SIM_X86
// requant16's 32-bit forms on 16 accumulators, the low byte of each result.
VNNX_TARGET_AVX512 void requant16_narrow(const std::int32_t* acc, std::uint16_t om, std::int64_t c, int o,
                                         k::acc_range r, bool biased, std::uint8_t* out) {
    r.biased = biased;  // make_requant_vec builds the form the range names
    const k::detail::requant_vec q = k::detail::make_requant_vec(om, c, o, 0, 0, r);
    const __m512i a = _mm512_loadu_si512(acc);
    const __m512i v = biased ? k::detail::requant16<true, true, true>(a, q) : k::detail::requant16<true, true, false>(a, q);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm512_cvtepi32_epi8(v));
}
#endif

TEST_CASE("depthwise kernels: SIMD equals scalar on random depthwise convolutions") {
    std::mt19937 rng(424242);
    std::uniform_int_distribution<int> ch(1, 40), sp(1, 40), kk(1, 7), st(1, 3), dl(1, 3), coin(0, 1), ten(0, 9);
    for (int n = 0; n < 80; ++n) {
        k::conv_shape s;
        s.channels = s.kernels = s.groups = ch(rng);
        s.kernel_h = kk(rng);
        s.kernel_w = kk(rng);
        s.stride_h = st(rng);
        s.stride_w = st(rng);
        s.dilation_h = dl(rng);
        s.dilation_w = dl(rng);
        s.height = (s.kernel_h - 1) * s.dilation_h + sp(rng);
        s.width = (s.kernel_w - 1) * s.dilation_w + sp(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const bool extreme = ten(rng) == 0;
        const auto x = random_bytes(rng, s.input_size(), extreme);
        const auto w = random_weights(rng, s.weight_size(), extreme);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(s.output_size(), 0x5A);
            k::conv2d(s, w, rq, i).run(x, got);
            INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " H=" << s.height << " W=" << s.width
                        << " k=" << s.kernel_h << "x" << s.kernel_w << " s=" << s.stride_h << "," << s.stride_w
                        << " d=" << s.dilation_h << "," << s.dilation_w << " in_signed=" << s.input_signed);
            REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
        }
    }
}

TEST_CASE("depthwise kernels: MobileNet-like 3x3 layers and a 1-channel depthwise") {
    std::mt19937 rng(99);
    struct dw_case { int c, h, w, sh; };
    const dw_case cases[] = {{32, 114, 114, 1}, {96, 113, 113, 2}, {144, 58, 58, 1}, {960, 9, 9, 1}, {1, 5, 70, 1}};
    for (const auto& cs : cases) {
        k::conv_shape s;
        s.channels = s.kernels = s.groups = cs.c;
        s.height = cs.h, s.width = cs.w, s.kernel_h = s.kernel_w = 3, s.stride_h = s.stride_w = cs.sh;
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto w = random_weights(rng, s.weight_size(), false);
        const auto rq = random_requant(rng, s.kernels, true, 128 * 64);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(s.output_size());
            k::conv2d(s, w, rq, i).run(x, got);
            INFO("isa " << vnnx::sim::isa_name(i) << " C=" << cs.c << " H=" << cs.h);
            REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
        }
    }
}

TEST_CASE("depthwise kernels: every tap count 1..16 and large kernels, extreme codes, two threads") {
    // The AVX-512 path groups taps by four (padding taps have weight 0) and biases int8 inputs by
    // +128: tap counts that are not multiples of four, saturated codes and the largest kernels
    // exercise the padding, the correction and the int32 accumulator bound.
    std::mt19937 rng(777);
    std::uniform_int_distribution<int> ch(1, 20), sp(1, 70), coin(0, 1);
    vnnx::sim::thread_pool pool(2);
    std::vector<std::pair<int, int>> kernels;
    for (int kh = 1; kh <= 4; ++kh)
        for (int kw = 1; kw <= 4; ++kw) kernels.push_back({kh, kw});
    kernels.push_back({11, 13});
    kernels.push_back({1, 31});
    for (const auto& [kh, kw] : kernels) {
        for (int rep = 0; rep < 2; ++rep) {
            k::conv_shape s;
            s.channels = s.kernels = s.groups = ch(rng);
            s.kernel_h = kh;
            s.kernel_w = kw;
            s.stride_h = 1 + rep;
            s.height = kh + sp(rng);
            s.width = kw + sp(rng);
            s.input_signed = rep == 0 ? true : coin(rng);
            s.output_signed = coin(rng);
            const bool extreme = rep == 0;
            const auto x = random_bytes(rng, s.input_size(), extreme);
            const auto w = random_weights(rng, s.weight_size(), extreme);
            const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 128 * kh * kw);
            std::vector<std::uint8_t> want(s.output_size());
            k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
            for (isa_kind i : simd_isas()) {
                std::vector<std::uint8_t> got(s.output_size(), 0x5A);
                k::conv_workspace ws;
                const k::conv2d conv(s, w, rq, i);
                conv.run(x, got, ws, &pool);
                INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " " << s.height << "x" << s.width
                            << " k=" << kh << "x" << kw << " in_signed=" << s.input_signed << " extreme=" << extreme);
                REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
                std::fill(got.begin(), got.end(), 0x5A);
                conv.run(x, got, ws, nullptr);  // the workspace reused, one thread
                REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
            }
        }
    }
}

TEST_CASE("depthwise kernels: unit column stride and dilation (row groups), any row stride and dilation") {
    // AVX-512 applies four adjacent columns per vpdpbusd here and merges four pixel phases after
    // requantization: every kernel width 1..9 (partial groups), row strides and dilations, odd
    // widths, channel counts that are no multiple of anything, and one workspace reused across
    // shapes (stale bytes in the slack must only meet zero weights).
    std::mt19937 rng(31337);
    std::uniform_int_distribution<int> ch(1, 70), sp(1, 90), kh(1, 5), kw(1, 9), st(1, 3), dl(1, 3), coin(0, 1), ten(0, 9);
    k::conv_workspace ws;
    for (int n = 0; n < 60; ++n) {
        k::conv_shape s;
        s.channels = s.kernels = s.groups = ch(rng);
        s.kernel_h = kh(rng);
        s.kernel_w = kw(rng);
        s.stride_h = st(rng);
        s.dilation_h = dl(rng);
        s.height = (s.kernel_h - 1) * s.dilation_h + sp(rng);
        s.width = s.kernel_w - 1 + (sp(rng) | 1);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const bool extreme = ten(rng) < 2;
        const auto x = random_bytes(rng, s.input_size(), extreme);
        const auto w = random_weights(rng, s.weight_size(), extreme);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 16 * s.kernel_h * s.kernel_w);
        require_simd_equals_scalar(s, x, w, rq, extreme, ws);
    }
}

TEST_CASE("depthwise kernels: column dilation at unit column stride, zero rows of re-materialised kernels") {
    // AVX-512 reads a dilated kernel row as a dense one with zero columns, and drops the tap
    // groups that are zero in every channel. The compiler emits row-dilated depthwise kernels
    // re-materialised with zero rows (DeepLab's atrous 3x3: 5x3, dilation 1x2); some cases here
    // also zero one random row or column in every channel, or a whole filter.
    std::mt19937 rng(2718);
    std::uniform_int_distribution<int> ch(1, 50), sp(1, 60), kk(1, 5), dl(2, 4), rs(1, 2), coin(0, 1), ten(0, 9);
    k::conv_workspace ws;
    auto check = [&](const k::conv_shape& s, const std::vector<std::int8_t>& w, bool extreme) {
        const auto x = random_bytes(rng, s.input_size(), extreme);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 16 * s.kernel_h * s.kernel_w);
        require_simd_equals_scalar(s, x, w, rq, extreme, ws);
    };
    for (int n = 0; n < 50; ++n) {
        k::conv_shape s;
        s.channels = s.kernels = s.groups = ch(rng);
        const int taps_h = kk(rng), row_dilation = rs(rng);
        // Row dilation as the compiler emits it: zero rows between the taps, dilation_h 1.
        s.kernel_h = (taps_h - 1) * row_dilation + 1;
        s.kernel_w = kk(rng);
        s.stride_h = rs(rng);
        s.dilation_w = dl(rng);
        s.height = s.kernel_h - 1 + sp(rng);
        s.width = (s.kernel_w - 1) * s.dilation_w + sp(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const bool extreme = ten(rng) < 2;
        auto w = random_weights(rng, s.weight_size(), extreme);
        const int zero_row = ten(rng) < 3 ? static_cast<int>(rng() % static_cast<unsigned>(s.kernel_h)) : -1;
        const int zero_col = ten(rng) < 3 ? static_cast<int>(rng() % static_cast<unsigned>(s.kernel_w)) : -1;
        const bool zero_all = ten(rng) == 0;
        for (int c = 0; c < s.channels; ++c)
            for (int y = 0; y < s.kernel_h; ++y)
                for (int xx = 0; xx < s.kernel_w; ++xx)
                    if (zero_all || y % row_dilation != 0 || y == zero_row || xx == zero_col)
                        w[(static_cast<std::size_t>(c) * s.kernel_h + y) * s.kernel_w + xx] = 0;
        check(s, w, extreme);
    }
    k::conv_shape s;  // DeepLabV3's atrous layers at 33x33
    s.channels = s.kernels = s.groups = 480;
    s.kernel_h = 5;
    s.kernel_w = 3;
    s.dilation_w = 2;
    s.height = s.width = 37;
    s.input_signed = false;
    s.output_signed = false;
    auto w = random_weights(rng, s.weight_size(), false);
    for (std::size_t i = 0; i < w.size(); ++i)
        if (i / 3 % 5 % 2 == 1) w[i] = 0;
    check(s, w, false);
}

TEST_CASE("requantization: clamping the accumulator to acc_clamp_range equals clamping the result") {
    // Checked around both bounds, at the int32 extremes and at random accumulators, for random
    // FIA parameters (all shifts, multipliers 0..65535, extreme constants, narrowed bounds).
    std::mt19937 rng(8080);
    std::uniform_int_distribution<std::int32_t> any(INT32_MIN, INT32_MAX);
    int usable = 0;
    for (int n = 0; n < 400; ++n) {
        const auto rq = random_requant(rng, 1, n % 2 == 0, std::int64_t{1} << (n % 24));
        const std::uint16_t om = rq.multiplier[0];
        const std::int64_t c = rq.constant[0];
        const int o = rq.shift[0];
        const auto r = k::acc_clamp_range(om, c, o, rq.act_min, rq.act_max);
        if (!r.ok) continue;
        ++usable;
        REQUIRE(r.lo <= r.hi);
        std::vector<std::int64_t> accs = {INT32_MIN, INT32_MAX, 0};
        for (std::int64_t b : {std::int64_t{r.lo}, std::int64_t{r.hi}})
            for (std::int64_t d = -3; d <= 3; ++d) accs.push_back(std::clamp<std::int64_t>(b + d, INT32_MIN, INT32_MAX));
        for (int i = 0; i < 50; ++i) accs.push_back(any(rng));
        for (std::int64_t a64 : accs) {
            const auto a = static_cast<std::int32_t>(a64);
            const std::int32_t ac = std::clamp(a, r.lo, r.hi);
            const std::int64_t unclamped = (static_cast<std::int64_t>(ac) * om + c) >> o;
            INFO("om=" << om << " c=" << c << " o=" << o << " bounds " << rq.act_min << ".." << rq.act_max << " acc=" << a);
            REQUIRE(unclamped >= rq.act_min);
            REQUIRE(unclamped <= rq.act_max);
            REQUIRE(k::requantize(a, om, c, o, rq.act_min, rq.act_max) ==
                    static_cast<std::uint8_t>(static_cast<std::uint64_t>(unclamped) & 0xFF));
        }
    }
    REQUIRE(usable > 100);
}

#if VNNX_SIM_X86
namespace {
// Accumulators for a channel with range r: the int32 extremes, 0, both ends of the range and
// their neighbours, then random ones up to a multiple of `lanes` (at least 64).
std::vector<std::int32_t> edge_accumulators(const k::acc_range& r, std::size_t lanes, std::mt19937& rng) {
    std::uniform_int_distribution<std::int32_t> any(INT32_MIN, INT32_MAX);
    std::vector<std::int32_t> accs = {INT32_MIN, INT32_MAX, 0, r.lo, r.hi};
    for (std::int64_t b : {std::int64_t{r.lo}, std::int64_t{r.hi}})
        for (std::int64_t d = -5; d <= 5; ++d)
            accs.push_back(static_cast<std::int32_t>(std::clamp<std::int64_t>(b + d, INT32_MIN, INT32_MAX)));
    while (accs.size() % lanes != 0 || accs.size() < 64) accs.push_back(any(rng));
    return accs;
}
}  // namespace
#endif

#if VNNX_SIM_X86
TEST_CASE("requantization: the 32-bit forms (narrow, biased) equal the defining arithmetic") {
    // acc*om + c formed modulo 2^32 is exact when every value of the clamped range fits int32
    // (narrow) or [0, 2^32) (biased, through -2^31 and +2^(31-o)): int8 and uint8 outputs, all
    // shifts, accumulators at both ends of the range, at the int32 extremes and at random.
    if (!vnnx::sim::isa_supported(isa_kind::avx512_vnni)) {
        WARN("skipping: no AVX-512 VNNI");
        return;
    }
    std::mt19937 rng(5150);
    int narrow = 0, biased = 0;
    for (int n = 0; n < 600; ++n) {
        const auto rq = random_requant(rng, 1, n % 2 == 0, std::int64_t{1} << (n % 24));
        const std::uint16_t om = rq.multiplier[0];
        const std::int64_t c = rq.constant[0];
        const int o = rq.shift[0];
        const auto r = k::acc_clamp_range(om, c, o, rq.act_min, rq.act_max);
        if (!r.ok || (!r.narrow && !r.biased)) continue;
        const auto accs = edge_accumulators(r, 16, rng);
        for (const bool use_bias : {false, true}) {
            if (use_bias ? !r.biased : !r.narrow) continue;
            (use_bias ? biased : narrow) += 1;
            for (std::size_t i = 0; i < accs.size(); i += 16) {
                std::uint8_t got[16];
                requant16_narrow(accs.data() + i, om, c, o, r, use_bias, got);
                for (std::size_t j = 0; j < 16; ++j) {
                    INFO("om=" << om << " c=" << c << " o=" << o << " bounds " << rq.act_min << ".." << rq.act_max
                               << " acc=" << accs[i + j] << " biased=" << use_bias);
                    REQUIRE(got[j] == k::requantize(accs[i + j], om, c, o, rq.act_min, rq.act_max));
                }
            }
        }
    }
    REQUIRE(narrow > 100);
    REQUIRE(biased > 100);
}
#endif

#if VNNX_SIM_X86
// requant8 in one form on 8 accumulators, the low byte of each result.
template <int Form>
VNNX_TARGET_AVX2 void requant8_bytes(const std::int32_t* acc, std::uint16_t om, std::int64_t c, int o, k::acc_range r,
                                     std::uint8_t* out) {
    const k::detail::requant_vec8 q = k::detail::make_requant_vec8(om, c, o, r);
    const __m256i v = k::detail::requant8<Form>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc)), q);
    _mm_storel_epi64(reinterpret_cast<__m128i*>(out), k::detail::low_bytes8(v));
}

TEST_CASE("requantization: AVX2's two forms equal the defining arithmetic") {
    // Form 1 (64-bit lanes) on every channel with an accumulator clamp, form 2 (32-bit lanes) on
    // the narrow and the biased ones; biased channels that are not narrow (shift 24, uint8
    // outputs) form values of 2^31 and more, which form 2 shifts arithmetically.
    if (!vnnx::sim::isa_supported(isa_kind::avx2)) {
        WARN("skipping: no AVX2");
        return;
    }
    std::mt19937 rng(5151);
    int wide = 0, narrow = 0, biased_only = 0;
    // Shift-32 channels with a tiny multiplier: narrow, with results -1 and 0 (a logical shift
    // would lose the -1); then random ones.
    const std::int64_t fixed[][2] = {{1, 0}, {1, -5}, {3, 1 << 20}, {1, -(std::int64_t{1} << 31)}};
    for (int n = 0; n < 804; ++n) {
        auto rq = random_requant(rng, 1, n % 2 == 0, std::int64_t{1} << (n % 24));
        if (n >= 800) {
            rq.multiplier[0] = static_cast<std::uint16_t>(fixed[n - 800][0]);
            rq.constant[0] = fixed[n - 800][1];
            rq.shift[0] = 32;
            rq.act_min = -128;
            rq.act_max = 127;
        }
        const std::uint16_t om = rq.multiplier[0];
        const std::int64_t c = rq.constant[0];
        const int o = rq.shift[0];
        const auto r = k::acc_clamp_range(om, c, o, rq.act_min, rq.act_max);
        if (!r.ok) continue;
        const auto accs = edge_accumulators(r, 8, rng);
        for (const int form : {1, 2}) {
            if (form == 2 && !r.narrow && !r.biased) continue;
            (form == 1 ? wide : r.narrow ? narrow : biased_only) += 1;
            for (std::size_t i = 0; i < accs.size(); i += 8) {
                std::uint8_t got[8];
                (form == 1 ? requant8_bytes<1> : requant8_bytes<2>)(accs.data() + i, om, c, o, r, got);
                for (std::size_t j = 0; j < 8; ++j) {
                    INFO("om=" << om << " c=" << c << " o=" << o << " bounds " << rq.act_min << ".." << rq.act_max
                               << " acc=" << accs[i + j] << " form=" << form);
                    REQUIRE(got[j] == k::requantize(accs[i + j], om, c, o, rq.act_min, rq.act_max));
                }
            }
        }
    }
    REQUIRE(wide > 200);
    REQUIRE(narrow > 50);
    REQUIRE(biased_only > 20);
}
#endif
