#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/sim/kernels/fc.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

using namespace vnnx_test;
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
