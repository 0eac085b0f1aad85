#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/sim/kernels/eltwise.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

using namespace vnnx_test;
}  // namespace


TEST_CASE("lut kernels: table by input byte, per channel, SIMD equals scalar") {
    std::mt19937 rng(808);
    for (int round = 0; round < 20; ++round) {
        const std::size_t channels = std::uniform_int_distribution<std::size_t>(1, 5)(rng);
        const std::size_t plane = std::uniform_int_distribution<std::size_t>(1, 300)(rng);
        const bool per_channel = round % 2;
        std::vector<k::table8> tables(per_channel ? channels : 1);
        for (auto& t : tables)
            for (auto& e : t) e = static_cast<std::uint8_t>(rng());
        const auto x = random_bytes(rng, channels * plane, round % 5 == 0);
        std::vector<std::uint8_t> want(x.size());
        k::apply_lut(isa_kind::scalar, tables, x, want, channels);
        for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(want[i] == tables[per_channel ? i / plane : 0][x[i]]);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(x.size());
            vnnx::sim::thread_pool pool(2);
            k::apply_lut(i, tables, x, got, channels, &pool);
            REQUIRE(got == want);
        }
    }
    std::vector<k::table8> two(2);
    std::vector<std::uint8_t> x(9), y(9);
    CHECK_THROWS_WITH(k::apply_lut(isa_kind::scalar, two, x, y, 3, nullptr, "node 7"),
                      Catch::Contains("node 7: 2 tables for 3 channels"));
}

TEST_CASE("add: TFLite integer arithmetic by hand") {
    k::add_params p;
    p.input1_multiplier = p.input2_multiplier = p.output_multiplier = 1 << 30;  // QM(0.5), QM(2^-19)
    p.input1_shift = p.input2_shift = 0;
    p.output_shift = -18;
    CHECK(k::add_one(p, 10, 20) == 30);
    CHECK(k::add_one(p, 100, 100) == 127);                      // clamped
    CHECK(k::add_one(p, static_cast<std::uint8_t>(-100), static_cast<std::uint8_t>(-100)) == 0x80);
    // output scale twice the inputs': 1 + 0 -> 0.5 rounds away from zero to 1, -1 -> -1
    p.output_shift = -19;
    CHECK(k::add_one(p, 1, 0) == 1);
    CHECK(k::add_one(p, static_cast<std::uint8_t>(-1), 0) == 0xFF);
    CHECK(k::add_one(p, 3, 0) == 2);  // 1.5 -> 2
    // zero points: x - z
    p.output_shift = -18;
    p.input1_offset = -5, p.input2_offset = 3, p.output_offset = 7;
    CHECK(k::add_one(p, 10, 20) == 10 - 5 + 20 + 3 + 7);
    p.act_min = 0, p.act_max = 40;
    CHECK(k::add_one(p, 10, 20) == 35);
    CHECK(k::add_one(p, static_cast<std::uint8_t>(-50), 0) == 0);
}

TEST_CASE("add kernels: SIMD equals scalar over random parameters") {
    std::mt19937 rng(31337);
    std::uniform_int_distribution<std::int32_t> mult(1 << 30, INT32_MAX);
    for (int round = 0; round < 70; ++round) {
        k::add_params p;
        p.input_signed = round % 2;
        p.output_signed = (round / 2) % 2;
        const int lo = p.input_signed ? -128 : 0;
        std::uniform_int_distribution<int> zin(lo, lo + 255), zout(p.output_signed ? -128 : 0, p.output_signed ? 127 : 255);
        p.input1_offset = -zin(rng);
        p.input2_offset = -zin(rng);
        p.output_offset = zout(rng);
        p.left_shift = round % 7 == 0 ? std::uniform_int_distribution<int>(0, 21)(rng) : 20;
        p.input1_multiplier = round % 11 == 0 ? 0 : mult(rng);
        p.input2_multiplier = mult(rng);
        p.output_multiplier = mult(rng);
        const bool wild = round % 5 == 0;
        p.input1_shift = -std::uniform_int_distribution<int>(0, wild ? 31 : 6)(rng);
        p.input2_shift = -std::uniform_int_distribution<int>(0, wild ? 31 : 6)(rng);
        p.output_shift = -std::uniform_int_distribution<int>(wild ? 0 : 15, wild ? 31 : 24)(rng);
        p.act_min = p.output_signed ? -128 : 0;
        p.act_max = p.output_signed ? 127 : 255;
        if (round % 3 == 0) p.act_min = p.output_offset, p.act_max = std::max(p.act_min, p.act_max - 20);
        if (round >= 45) {
            // no shifts at all: every rounding of the doubling high multiply reaches the output
            p.left_shift = round % 2;
            p.input1_shift = p.input2_shift = p.output_shift = 0;
        }
        const std::size_t n = std::uniform_int_distribution<std::size_t>(1, 700)(rng);
        const auto a = random_bytes(rng, n, round % 9 == 0);
        const auto b = random_bytes(rng, n, round % 9 == 0);
        std::vector<std::uint8_t> want(n);
        k::add(isa_kind::scalar, p, a, b, want);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(n, 0x11);
            k::add(i, p, a, b, got);
            INFO("isa " << vnnx::sim::isa_name(i) << " round " << round);
            REQUIRE(got == want);
            // The pair table: every entry is the defining arithmetic, and lookups (odd lengths,
            // two threads) give the scalar bytes.
            const k::add_table t = k::make_add_table(i, p);
            REQUIRE(t.isa == i);
            for (int x = 0; x < 256; ++x)
                for (int y = 0; y < 256; ++y)
                    if (t.bytes[static_cast<std::size_t>(x) << 8 | static_cast<std::size_t>(y)] !=
                        k::add_one(p, static_cast<std::uint8_t>(x), static_cast<std::uint8_t>(y)))
                        FAIL("table entry " << x << ", " << y);
            std::vector<std::uint8_t> looked(n, 0x22);
            vnnx::sim::thread_pool pool(2);
            k::add(t, a, b, looked, round % 2 ? &pool : nullptr);
            REQUIRE(looked == want);
        }
    }
    {
        // Long operands through the table on two threads: every chunk boundary and tail.
        k::add_params p;
        p.input1_multiplier = 1518500250;
        p.input1_shift = -1;
        p.input2_multiplier = 1073741824;
        p.input2_shift = -2;
        p.output_multiplier = 1431655765;
        p.output_shift = -18;
        p.input1_offset = 5;
        p.input2_offset = -3;
        p.output_offset = 2;
        const std::size_t n = 75'277;
        const auto a = random_bytes(rng, n, false);
        const auto b = random_bytes(rng, n, false);
        std::vector<std::uint8_t> want(n);
        k::add(isa_kind::scalar, p, a, b, want);
        vnnx::sim::thread_pool pool(2);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(n, 0x33);
            k::add(k::make_add_table(i, p), a, b, got, &pool);
            REQUIRE(got == want);
        }
    }
    k::add_params bad;
    bad.output_shift = 2;
    std::vector<std::uint8_t> v(4);
    CHECK_THROWS_WITH(k::add(isa_kind::scalar, bad, v, v, v, nullptr, "node 2 (ADD)"),
                      Catch::Contains("node 2 (ADD): output shift 2 is outside [-31, 0]"));
}
