#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/sim/kernels/pool.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

using namespace vnnx_test;
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
