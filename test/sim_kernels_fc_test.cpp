#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/kernels/fc.hpp>

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


TEST_CASE("fully connected kernels: scalar matches a direct sum, SIMD matches scalar") {
    std::mt19937 rng(5150);
    std::uniform_int_distribution<int> feat(1, 300), rows(1, 40), coin(0, 1), ten(0, 9);
    for (int n = 0; n < 40; ++n) {
        k::fc_shape s;
        s.in_features = feat(rng);
        s.out_features = feat(rng);
        s.rows = coin(rng) ? 1 : rows(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const bool extreme = ten(rng) == 0;
        const std::size_t t = s.rows, c = s.in_features, kk = s.out_features;
        const auto x = random_bytes(rng, t * c, extreme);
        const auto w = random_weights(rng, kk * c, extreme);
        const auto rq = random_requant(rng, s.out_features, s.output_signed, 128 * 64 * 8);
        std::vector<std::uint8_t> want(t * kk);
        k::fully_connected(s, w, rq, isa_kind::scalar).run(x, want);
        // the definition, written out
        for (std::size_t r = 0; r < t; ++r)
            for (std::size_t o = 0; o < kk; ++o) {
                std::int64_t acc = 0;
                for (std::size_t i = 0; i < c; ++i) {
                    const int xv = s.input_signed ? static_cast<std::int8_t>(x[r * c + i]) : x[r * c + i];
                    acc += xv * w[o * c + i];
                }
                std::int64_t v = (acc * rq.multiplier[o] + rq.constant[o]) >> rq.shift[o];
                v = std::clamp<std::int64_t>(v, rq.act_min, rq.act_max);
                REQUIRE(want[r * kk + o] == static_cast<std::uint8_t>(v & 0xFF));
            }
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(t * kk, 0x33);
            k::fully_connected(s, w, rq, i).run(x, got);
            INFO("isa " << vnnx::sim::isa_name(i) << " T=" << t << " C=" << c << " K=" << kk);
            REQUIRE(got == want);
        }
    }
}
