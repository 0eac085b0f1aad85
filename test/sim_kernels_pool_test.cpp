#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/kernels/pool.hpp>

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


TEST_CASE("pool: hand-computed max and average with TFLite rounding and padding") {
    // one channel 2x3: [[1, 2, 4], [-3, 5, -8]]
    const std::vector<std::uint8_t> x{1, 2, 4, static_cast<std::uint8_t>(-3), 5, static_cast<std::uint8_t>(-8)};
    k::pool_shape s;
    s.height = 2, s.width = 3, s.kernel_h = 2, s.kernel_w = 2;
    std::vector<std::uint8_t> y(2);
    k::pool2d(isa_kind::scalar, k::pool_kind::max, s, x, y);
    CHECK(y == std::vector<std::uint8_t>{5, 5});
    k::pool2d(isa_kind::scalar, k::pool_kind::average, s, x, y);
    // (1+2-3+5)/4 = 1.25 -> 1; (2+4+5-8)/4 = 0.75 -> 1
    CHECK(y == std::vector<std::uint8_t>{1, 1});
    CHECK(k::rounded_average(-6, 4) == -2);  // -1.5 rounds away from zero
    CHECK(k::rounded_average(6, 4) == 2);
    CHECK(k::rounded_average(-5, 4) == -1);
    // SAME-style padding: 3x3 window, pads 1, stride 2 -> 1x2 outputs; padded cells are not counted
    s.kernel_h = s.kernel_w = 3, s.pad_top = s.pad_left = s.pad_right = 1, s.pad_bottom = 0, s.stride_w = 2;
    REQUIRE(s.out_h() == 1);
    REQUIRE(s.out_w() == 2);
    k::pool2d(isa_kind::scalar, k::pool_kind::average, s, x, y);
    // window 0: cols 0..1 rows 0..1: (1+2-3+5)/4 -> 1; window 1: cols 1..2: (2+4+5-8)/4 -> 1
    CHECK(y == std::vector<std::uint8_t>{1, 1});
    k::pool2d(isa_kind::scalar, k::pool_kind::max, s, x, y);
    CHECK(y == std::vector<std::uint8_t>{5, 5});
    s.act_max = 3;
    k::pool2d(isa_kind::scalar, k::pool_kind::max, s, x, y);
    CHECK(y == std::vector<std::uint8_t>{3, 3});
    s.pad_left = 3;
    CHECK_THROWS_WITH(k::pool2d(isa_kind::scalar, k::pool_kind::max, s, x, y, nullptr, "node 4"),
                      Catch::Contains("node 4: left padding 3 is outside [0, 2]"));
}

TEST_CASE("pool kernels: SIMD equals scalar on random shapes, strides and paddings") {
    std::mt19937 rng(2718);
    std::uniform_int_distribution<int> ch(1, 5), sp(1, 90), kk(1, 6), st(1, 3), coin(0, 1), ten(0, 9);
    for (int round = 0; round < 120; ++round) {
        k::pool_shape s;
        s.channels = ch(rng);
        s.kernel_h = kk(rng);
        s.kernel_w = kk(rng);
        s.height = s.kernel_h + sp(rng) / 3;
        s.width = s.kernel_w + sp(rng);
        s.stride_h = st(rng);
        s.stride_w = round % 3 == 0 ? st(rng) : 1;
        if (coin(rng)) {
            s.pad_top = std::uniform_int_distribution<int>(0, s.kernel_h - 1)(rng);
            s.pad_bottom = std::uniform_int_distribution<int>(0, s.kernel_h - 1)(rng);
            s.pad_left = std::uniform_int_distribution<int>(0, s.kernel_w - 1)(rng);
            s.pad_right = std::uniform_int_distribution<int>(0, s.kernel_w - 1)(rng);
        }
        s.is_signed = coin(rng);
        s.act_min = s.is_signed ? -128 : 0;
        s.act_max = s.is_signed ? 127 : 255;
        if (ten(rng) < 3) s.act_min += 30, s.act_max -= 40;
        const auto x = random_bytes(rng, s.input_size(), ten(rng) == 0);
        for (auto kind : {k::pool_kind::max, k::pool_kind::average}) {
            std::vector<std::uint8_t> want(s.output_size());
            k::pool2d(isa_kind::scalar, kind, s, x, want);
            for (isa_kind i : simd_isas()) {
                std::vector<std::uint8_t> got(s.output_size(), 0x42);
                vnnx::sim::thread_pool pool(2);
                k::pool2d(i, kind, s, x, got, round % 2 ? &pool : nullptr);
                INFO("isa " << vnnx::sim::isa_name(i) << " round " << round << " kind " << static_cast<int>(kind));
                REQUIRE(got == want);
            }
        }
    }
}
