#pragma once
// FIA convolution requantization records (lowering.md §8.2): a 16-bit multiplier, an index
// into the output shifts {8,16,24,32} and a 48-bit constant per output channel, packed in
// one 64-bit little-endian word.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "vnnx/quant/multiplier.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::quant {

inline constexpr std::array<int, 4> fia_output_shifts = {8, 16, 24, 32};
inline constexpr std::int64_t fia_max_multiplier = 65535;
inline constexpr std::int64_t fia_accumulator_bound = std::int64_t{1} << 29;
inline constexpr std::int64_t fia_c_min = -(std::int64_t{1} << 47);
inline constexpr std::int64_t fia_c_max = (std::int64_t{1} << 47) - 1;

struct fia_params {
    std::int32_t multiplier = 0;  // om, 0..65535
    int shift_index = 0;          // index into fia_output_shifts
    std::int64_t constant = 0;    // c, 48-bit signed (exact, before dropping low bits)
    friend constexpr bool operator==(const fia_params&, const fia_params&) = default;
};

/// Per-channel FIA parameters from the effective scale s, bias b (already holding −z_in·Σw),
/// output zero point and activation bounds, as §8.2 steps 1–4.
[[nodiscard]] inline fia_params fia_quantize(double s, std::int64_t bias, std::int32_t z_out, std::int32_t act_min,
                                             std::int32_t act_max) {
    if (!(s >= 0.0) || !std::isfinite(s))
        fail_input("fia_quantize: effective scale " + std::to_string(s) + " must be finite and >= 0");
    constexpr double A = static_cast<double>(fia_accumulator_bound);
    const double b = static_cast<double>(bias);
    const double hi = (A - 1 + b) * s + z_out;
    const double lo = (-A + b) * s + z_out;
    if ((hi < act_min && lo < act_min) || (hi > act_max && lo > act_max)) s = 1.0;  // dead channel
    // e_min = -n for the largest integer n with round_even(s·2^n) <= 65535, i.e. s·2^n < 65535.5
    // (§8.2 step 2 doubles or halves s until then). With s = m·2^e, m in [0.5, 1), s·2^(16-e) =
    // m·2^16 is exact and lies in [32768, 65536), so n is 16 - e or one less: no loop needed.
    int e_min = -8;
    if (s != 0.0) {
        int e = 0;
        const double m = std::frexp(s, &e);
        e_min = m * 65536.0 < static_cast<double>(fia_max_multiplier) + 0.5 ? e - 16 : e - 15;
    }
    for (;;) {
        int j = 0;
        for (int k = 0; k < 4; ++k)
            if (fia_output_shifts[static_cast<std::size_t>(k)] <= -e_min) j = k;
        const int o = fia_output_shifts[static_cast<std::size_t>(j)];
        const double om_real = round_even(std::ldexp(s, o));
        const auto om = static_cast<std::int64_t>(std::clamp(om_real, 0.0, static_cast<double>(fia_max_multiplier)));
        // Exact integer arithmetic in 128 bits: b·om may exceed 2^63 for absurd biases.
        const __int128 c = static_cast<__int128>(bias) * om + static_cast<__int128>(z_out) * (__int128{1} << o) +
                           (__int128{1} << (o - 1));
        auto in48 = [](__int128 v) { return v >= fia_c_min && v <= fia_c_max; };
        if (in48(c + static_cast<__int128>(fia_accumulator_bound - 1) * om) &&
            in48(c - static_cast<__int128>(fia_accumulator_bound) * om) && in48(c))
            return {static_cast<std::int32_t>(om), j, static_cast<std::int64_t>(c)};
        // A larger e_min changes nothing until it picks a smaller shift: step straight there.
        // Shift 0's failure repeats for every e_min, up to §8.2's limit of 64.
        if (e_min > 64 || j == 0) fail(error_kind::limit, "fia_quantize: no output shift keeps the constant within 48 bits");
        e_min = std::max(e_min + 1, 1 - o);
    }
}

/// The record's constant for TFLite's second rounding (numerics.md). A uint8 convolution
/// (gemmlowp) and every depthwise one requantize as MultiplyByQuantizedMultiplier:
/// a rounding doubling high multiply, then a rounding shift right by R, the negated exponent of
/// the 31-bit multiplier. For an accumulator A >= 0 that is floor(A·s + 1/2 + 2^−(R+1)), where
/// §8.2's constant rounds once, at 1/2. Where the output is clamped at or above its zero point
/// (RELU, RELU6: `act_min >= z_out`), every A < 0 ends at the clamp either way, so adding
/// 2^(o−1−R) follows TFLite on the whole range; elsewhere (and for R = 0, a single rounding) the
/// constant is left as it is. Returns `p` with the constant moved, when it stays within 48 bits.
[[nodiscard]] inline fia_params fia_second_rounding(fia_params p, int tflite_right_shift, std::int32_t z_out,
                                                   std::int32_t act_min) {
    const int o = fia_output_shifts[static_cast<std::size_t>(p.shift_index & 3)];
    const int R = tflite_right_shift;
    if (R < 1 || act_min < z_out || o - 1 - R < 0) return p;
    const std::int64_t c = p.constant + (std::int64_t{1} << (o - 1 - R));
    const __int128 om = p.multiplier;
    auto in48 = [](__int128 v) { return v >= fia_c_min && v <= fia_c_max; };
    if (!in48(c) || !in48(c + static_cast<__int128>(fia_accumulator_bound - 1) * om) ||
        !in48(c - static_cast<__int128>(fia_accumulator_bound) * om))
        return p;
    p.constant = c;
    return p;
}

/// The 64-bit record of §8.2 step 5.
[[nodiscard]] constexpr std::uint64_t fia_record(const fia_params& p) noexcept {
    const std::int64_t c = p.constant;
    const std::int64_t L = ((c % 65536) + 65536) % 65536;
    const std::int64_t H = (c - L) / 65536;
    const std::uint64_t low = static_cast<std::uint64_t>(L >> 6) & 0x3FF;
    const std::uint64_t high = static_cast<std::uint64_t>(H) & 0xFFFFFFFFu;
    return low | (high << 10) | ((static_cast<std::uint64_t>(p.multiplier) & 0xFFFF) << 42) |
           ((static_cast<std::uint64_t>(p.shift_index) & 3) << 58);
}

/// Decodes a record: the constant comes back with its low 6 bits cleared.
[[nodiscard]] constexpr fia_params fia_decode(std::uint64_t r) noexcept {
    fia_params p;
    const std::int64_t low = static_cast<std::int64_t>(r & 0x3FF) << 6;
    const auto high = static_cast<std::int32_t>(static_cast<std::uint32_t>((r >> 10) & 0xFFFFFFFFu));
    p.constant = static_cast<std::int64_t>(high) * 65536 + low;
    p.multiplier = static_cast<std::int32_t>((r >> 42) & 0xFFFF);
    p.shift_index = static_cast<int>((r >> 58) & 3);
    return p;
}

/// What the accelerator computes from a record (derived, §8.2): (acc·om + c) >> o.
[[nodiscard]] constexpr std::int64_t fia_apply(std::int64_t acc, const fia_params& p) noexcept {
    const int o = fia_output_shifts[static_cast<std::size_t>(p.shift_index & 3)];
    return (acc * p.multiplier + p.constant) >> o;
}

}  // namespace vnnx::quant
