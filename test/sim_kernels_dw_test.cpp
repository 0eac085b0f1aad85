#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/kernels/conv.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

// Random FIA requantization: mostly realistic constants (outputs spread over the code range),
// some extreme ones (clamped), all four shifts, multipliers up to 65535.
[[maybe_unused]] k::requant_params random_requant(std::mt19937& rng, int channels, bool out_signed, std::int64_t acc_scale) {
    k::requant_params rq;
    std::uniform_int_distribution<int> sidx(0, 3), pick(0, 9);
    for (int i = 0; i < channels; ++i) {
        const int o = k::shift_from_index(sidx(rng));
        const int mode = pick(rng);
        std::uint16_t om = static_cast<std::uint16_t>(
            mode == 0 ? 65535 : std::uniform_int_distribution<int>(0, 65535)(rng));
        if (mode >= 5) {
            // aim om*acc_scale at about 2^o * 64 so outputs land in range
            const double target = std::ldexp(64.0, o) / static_cast<double>(std::max<std::int64_t>(1, acc_scale));
            om = static_cast<std::uint16_t>(std::clamp(target * std::uniform_real_distribution<double>(0.3, 2.0)(rng), 1.0, 65535.0));
        }
        std::int64_t c;
        if (mode == 1) c = k::c_max;
        else if (mode == 2) c = k::c_min;
        else if (mode == 3) c = std::uniform_int_distribution<std::int64_t>(k::c_min, k::c_max)(rng);
        else {
            const std::int64_t span = std::int64_t{1} << std::min(46, o + 8);
            c = std::uniform_int_distribution<std::int64_t>(-span, span)(rng) + (std::int64_t{1} << (o - 1));
        }
        rq.multiplier.push_back(om);
        rq.shift.push_back(static_cast<std::uint8_t>(o));
        rq.constant.push_back(c);
    }
    const int lo = out_signed ? -128 : 0, hi = out_signed ? 127 : 255;
    rq.act_min = lo;
    rq.act_max = hi;
    if (pick(rng) < 4) {
        rq.act_min = std::uniform_int_distribution<int>(lo, lo + 100)(rng);
        rq.act_max = std::uniform_int_distribution<int>(rq.act_min, hi)(rng);
    }
    return rq;
}

// Random codes; some tensors are saturated at the extremes of the code range.
[[maybe_unused]] std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n, bool extreme) {
    std::vector<std::uint8_t> v(n);
    static constexpr std::uint8_t ends[4] = {0x00, 0xFF, 0x7F, 0x80};  // uint8 and int8 extremes
    std::uniform_int_distribution<int> d(0, 255), e(0, 3);
    for (auto& b : v) b = extreme ? ends[e(rng)] : static_cast<std::uint8_t>(d(rng));
    return v;
}
[[maybe_unused]] std::vector<std::int8_t> random_weights(std::mt19937& rng, std::size_t n, bool extreme) {
    std::vector<std::int8_t> v(n);
    std::uniform_int_distribution<int> d(-128, 127), e(0, 1);
    for (auto& w : v) w = static_cast<std::int8_t>(extreme ? (e(rng) ? 127 : -128) : d(rng));
    return v;
}

[[maybe_unused]] std::vector<isa_kind> simd_isas() {
    std::vector<isa_kind> out;
    for (isa_kind i : {isa_kind::avx2, isa_kind::avx512_vnni}) {
        if (vnnx::sim::isa_supported(i)) out.push_back(i);
        else WARN("skipping " << vnnx::sim::isa_name(i) << ": not supported by this CPU");
    }
    return out;
}
}  // namespace


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
