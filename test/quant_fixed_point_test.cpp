#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "vnnx/quant/fia.hpp"
#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/multiplier.hpp"

using namespace vnnx::quant;

TEST_CASE("quant: QM(r) follows TFLite QuantizeMultiplier") {
    CHECK(quantize_multiplier(1.0) == quantized_multiplier{1 << 30, 1});
    CHECK(quantize_multiplier(0.5) == quantized_multiplier{1 << 30, 0});
    CHECK(quantize_multiplier(16.0 / 256.0) == quantized_multiplier{1 << 30, -3});
    CHECK(quantize_multiplier(0.75) == quantized_multiplier{1610612736, 0});
    CHECK(quantize_multiplier(0.0) == quantized_multiplier{0, 0});
    CHECK(quantize_multiplier(std::ldexp(1.0, -40)) == quantized_multiplier{0, 0});  // e < −31
    // q·2^31 rounds up to 2^31: halve and bump the exponent.
    CHECK(quantize_multiplier(std::nextafter(1.0, 0.0)) == quantized_multiplier{1 << 30, 1});
    CHECK_THROWS_AS(quantize_multiplier(-0.1), vnnx::error);
    CHECK(quantize_multiplier_greater_than_one(3.0) == quantized_multiplier{1610612736, 2});
    CHECK_THROWS_AS(quantize_multiplier_smaller_than_one(1.5), vnnx::error);
}

TEST_CASE("quant: round_away and round_even differ on ties") {
    CHECK(round_away(2.5) == 3.0);
    CHECK(round_away(-2.5) == -3.0);
    CHECK(round_even(2.5) == 2.0);
    CHECK(round_even(3.5) == 4.0);
    CHECK(round_even(-2.5) == -2.0);
    CHECK(round_even(-3.5) == -4.0);
    CHECK(round_even(2.4999) == 2.0);
    CHECK(round_even(-0.5) == 0.0);
}

TEST_CASE("quant: gemmlowp fixed-point primitives") {
    CHECK(saturating_rounding_doubling_high_mul(1 << 30, 1 << 30) == (1 << 29));
    constexpr auto mn = std::numeric_limits<std::int32_t>::min();
    CHECK(saturating_rounding_doubling_high_mul(mn, mn) == std::numeric_limits<std::int32_t>::max());
    CHECK(saturating_rounding_doubling_high_mul(1, 1 << 30) == 1);   // +0.5 rounds up
    CHECK(saturating_rounding_doubling_high_mul(-1, 1 << 30) == 0);  // −0.5 rounds up too
    CHECK(saturating_rounding_doubling_high_mul(-3, 1 << 30) == -1);  // −1.5 → −1
    CHECK(rounding_divide_by_pot(5, 1) == 3);
    CHECK(rounding_divide_by_pot(-5, 1) == -3);
    CHECK(rounding_divide_by_pot(4, 1) == 2);
    CHECK(rounding_divide_by_pot(-3, 1) == -2);
    CHECK(rounding_divide_by_pot(-6, 2) == -2);  // −1.5 → −2 (away)
    CHECK(rounding_divide_by_pot(7, 0) == 7);
    CHECK(saturating_rounding_doubling_high_mul(std::int16_t{16384}, std::int16_t{16384}) == 8192);
    CHECK(saturating_doubling_high_mul(std::int16_t{3}, std::int16_t{16384}) == 1);  // 1.5 truncates
    CHECK(saturating_doubling_high_mul(std::int16_t{-3}, std::int16_t{16384}) == -1);
    CHECK(saturating_left_shift(std::int16_t{20000}, 1) == 32767);
    CHECK(saturating_left_shift(std::int16_t{-20000}, 1) == -32768);
    CHECK(down_scale_int32_to_int16_multiplier(1 << 30) == 16384);
    CHECK(down_scale_int32_to_int16_multiplier(std::numeric_limits<std::int32_t>::max()) == 32767);
}

TEST_CASE("quant: double rounding and ruy single rounding differ where hand math says") {
    CHECK(multiply_by_quantized_multiplier(100, 1 << 30, 0) == 50);
    CHECK(multiply_by_quantized_multiplier(3, 1 << 30, 2) == 6);  // 3·0.5·4
    // 5·0.25 = 1.25: SRDHM gives round(2.5) = 3, then 3/2 = 1.5 → 2. One rounding gives 1.
    CHECK(multiply_by_quantized_multiplier(5, 1 << 30, -1) == 2);
    CHECK(multiply_by_quantized_multiplier_single_round(5, 1 << 30, -1) == 1);
    // −2·0.25 = −0.5: double rounding −1 (away from zero at the shift), single rounding 0 (ties up).
    CHECK(multiply_by_quantized_multiplier(-2, 1 << 30, -1) == -1);
    CHECK(multiply_by_quantized_multiplier_single_round(-2, 1 << 30, -1) == 0);
    CHECK(multiply_by_quantized_multiplier_single_round(1000, 1 << 30, 1) == 1000);
    CHECK(multiply_by_quantized_multiplier_smaller_than_one_exp(5, 1 << 30, -1) == 2);
    CHECK(multiply_by_quantized_multiplier_greater_than_one(3, 1610612736, 2) == 9);
    // One rounding stays within half an LSB of the exact product; double rounding within one.
    const auto qm = quantize_multiplier(0.0123);
    for (int x = -2000; x <= 2000; x += 7) {
        const double exact = x * 0.0123;
        CHECK(std::abs(multiply_by_quantized_multiplier(x, qm.multiplier, qm.shift) - exact) <= 1.0);
        CHECK(std::abs(multiply_by_quantized_multiplier_single_round(x, qm.multiplier, qm.shift) - exact) <= 0.5 + 1e-6);
    }
}

TEST_CASE("quant: the FIA constant with TFLite's second rounding equals MultiplyByQuantizedMultiplier") {
    // s = om / 2^24 with a 16-bit om: the FIA's multiplier and TFLite's 31-bit one are both exact,
    // so only the rounding can differ. TFLite's shift is R = 8; the output is clamped at its zero
    // point (RELU), where the record follows TFLite on the whole accumulator range.
    for (const std::int32_t om : {32769, 40000, 51234, 65535}) {
        const double s = std::ldexp(static_cast<double>(om), -24);
        const auto q = quantize_multiplier(s);
        REQUIRE(-q.shift == 8);
        const std::int32_t z = 3, lo = 3, hi = 127;
        const auto single = fia_quantize(s, 0, z, lo, hi);
        REQUIRE(fia_output_shifts[static_cast<std::size_t>(single.shift_index)] == 24);
        REQUIRE(single.multiplier == om);
        const auto twice = fia_second_rounding(single, -q.shift, z, lo);
        CHECK(twice.constant - single.constant == (std::int64_t{1} << 15));
        const auto decoded = fia_decode(fia_record(twice));  // the offset survives the record's 64-step
        int differ_before = 0, differ_after = 0;
        for (std::int32_t acc = -5000; acc < 3'000'000; acc += 7) {
            const std::int64_t tfl =
                std::clamp<std::int64_t>(multiply_by_quantized_multiplier(acc, q.multiplier, q.shift) + z, lo, hi);
            const auto fia = [&](const fia_params& p) { return std::clamp<std::int64_t>(fia_apply(acc, p), lo, hi); };
            differ_after += fia(decoded) != tfl;
            differ_before += fia(single) != tfl;
        }
        CHECK(differ_after == 0);
        CHECK(differ_before > 0);  // the single rounding was 1 LSB low on some outputs
    }
    // Not where negative accumulators survive the clamp, nor for a single rounding (R = 0).
    const auto p = fia_quantize(0.01, 100, 3, -128, 127);
    CHECK(fia_second_rounding(p, 7, 3, -128) == p);
    const auto r = fia_quantize(0.7, 100, 3, 3, 127);
    CHECK(fia_second_rounding(r, 0, 3, 3) == r);
}
