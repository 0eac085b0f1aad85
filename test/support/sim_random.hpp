#pragma once
// Random inputs shared by the SIMD-equals-scalar kernel tests: requantization records, activation
// codes and weights (some saturated at the code range's ends), and the SIMD ISAs this CPU runs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/requant.hpp>

namespace vnnx_test {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

// Random FIA requantization: mostly realistic constants (outputs spread over the code range),
// some extreme ones (clamped), all four shifts, multipliers up to 65535.
inline k::requant_params random_requant(std::mt19937& rng, int channels, bool out_signed, std::int64_t acc_scale) {
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
inline std::vector<std::uint8_t> random_bytes(std::mt19937& rng, std::size_t n, bool extreme) {
    std::vector<std::uint8_t> v(n);
    static constexpr std::uint8_t ends[4] = {0x00, 0xFF, 0x7F, 0x80};  // uint8 and int8 extremes
    std::uniform_int_distribution<int> d(0, 255), e(0, 3);
    for (auto& b : v) b = extreme ? ends[e(rng)] : static_cast<std::uint8_t>(d(rng));
    return v;
}
inline std::vector<std::int8_t> random_weights(std::mt19937& rng, std::size_t n, bool extreme) {
    std::vector<std::int8_t> v(n);
    std::uniform_int_distribution<int> d(-128, 127), e(0, 1);
    for (auto& w : v) w = static_cast<std::int8_t>(extreme ? (e(rng) ? 127 : -128) : d(rng));
    return v;
}

inline std::vector<isa_kind> simd_isas() {
    std::vector<isa_kind> out;
    for (isa_kind i : vnnx::sim::simd_isa_kinds) {
        if (vnnx::sim::isa_supported(i)) out.push_back(i);
        else WARN("skipping " << vnnx::sim::isa_name(i) << ": not supported by this CPU");
    }
    return out;
}
}  // namespace vnnx_test
