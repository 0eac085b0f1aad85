// The fast weight packing and FIA parameter search against their plain definitions
// (lowering.md §7.1.3, §7.1.4, §8.2), written out here element by element: same bytes, same records.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "vnnx/ir/weight_packing.hpp"
#include "vnnx/quant/fia.hpp"

namespace vc = vnnx::compiler;
namespace vq = vnnx::quant;

namespace {

std::vector<std::int8_t> random_weights(std::mt19937& rng, std::size_t n) {
    std::uniform_int_distribution<int> d(-128, 127);
    std::vector<std::int8_t> w(n);
    for (auto& v : w) v = static_cast<std::int8_t>(d(rng));
    return w;
}

// §7.1.3: byte ((c*kh + y)*kw + x)*mb + (k - b*M) of block b.
std::vector<std::uint8_t> conv_by_definition(const std::vector<std::int8_t>& W, int K, int C, int kh, int kw, int P,
                                             int maps) {
    const int M = vc::conv_block_maps(K, P, maps);
    const int kp = (K + P - 1) / P * P;
    const std::size_t plane = static_cast<std::size_t>(C + C % 2) * static_cast<std::size_t>(kh * kw);
    std::vector<std::uint8_t> out(vc::conv_packed_size(K, C, kh, kw, P), 0);
    for (int k = 0; k < K; ++k) {
        const int b = k / M;
        const int mb = std::min(M, kp - b * M);
        const std::size_t base = static_cast<std::size_t>(b) * static_cast<std::size_t>(M) * plane;
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < kh; ++y)
                for (int x = 0; x < kw; ++x) {
                    const std::size_t src = ((static_cast<std::size_t>(k) * C + c) * kh + y) * kw + x;
                    const std::size_t pos = (static_cast<std::size_t>(c * kh + y) * kw + x) * mb + (k - b * M);
                    out.at(base + pos) = static_cast<std::uint8_t>(W[src]);
                }
    }
    return out;
}

// §7.1.4: chunk T[i][j] = F[c][i-j][x] for 0 <= i-j < kh, zero elsewhere.
std::vector<std::uint8_t> depthwise_by_definition(const std::vector<std::int8_t>& F, int C, int kh, int kw, int P,
                                                  int imaps, int maps) {
    const std::size_t chunk = vc::depthwise_chunk_bytes(kh, P);
    std::vector<std::uint8_t> out(vc::depthwise_packed_size(C, kh, kw, P, imaps), 0);
    const auto groups = vc::depthwise_group_of_channel(C, imaps, maps);
    for (int c = 0; c < C; ++c)
        for (int x = 0; x < kw; ++x) {
            const std::size_t base = (groups[static_cast<std::size_t>(c)] * kw + static_cast<std::size_t>(x)) * chunk;
            for (int i = 0; i < kh + P - 1; ++i)
                for (int j = 0; j < P; ++j) {
                    const int d = i - j;
                    if (d >= 0 && d < kh)
                        out.at(base + static_cast<std::size_t>(i) * P + j) =
                            static_cast<std::uint8_t>(F[(static_cast<std::size_t>(c) * kh + d) * kw + x]);
                }
        }
    return out;
}

// §8.2 steps 1-4 as written: double or halve s until its rounded value is the largest that fits
// 16 bits, then try the output shifts upward until the constant fits 48 bits.
vq::fia_params fia_by_definition(double s, std::int64_t bias, std::int32_t z_out, std::int32_t act_min,
                                 std::int32_t act_max) {
    constexpr double A = static_cast<double>(vq::fia_accumulator_bound);
    const double b = static_cast<double>(bias);
    const double hi = (A - 1 + b) * s + z_out;
    const double lo = (-A + b) * s + z_out;
    if ((hi < act_min && lo < act_min) || (hi > act_max && lo > act_max)) s = 1.0;
    int e_min = 0;
    if (s == 0.0) {
        e_min = -8;
    } else {
        double t = s;
        while (vq::round_even(2 * t) <= static_cast<double>(vq::fia_max_multiplier)) {
            t *= 2;
            --e_min;
        }
        while (vq::round_even(t) > static_cast<double>(vq::fia_max_multiplier)) {
            t /= 2;
            ++e_min;
        }
    }
    for (;;) {
        int j = 0;
        for (int k = 0; k < 4; ++k)
            if (vq::fia_output_shifts[static_cast<std::size_t>(k)] <= -e_min) j = k;
        const int o = vq::fia_output_shifts[static_cast<std::size_t>(j)];
        const double om_real = vq::round_even(std::ldexp(s, o));
        const auto om = static_cast<std::int64_t>(std::clamp(om_real, 0.0, static_cast<double>(vq::fia_max_multiplier)));
        const __int128 c = static_cast<__int128>(bias) * om + static_cast<__int128>(z_out) * (__int128{1} << o) +
                           (__int128{1} << (o - 1));
        auto in48 = [](__int128 v) { return v >= vq::fia_c_min && v <= vq::fia_c_max; };
        if (in48(c + static_cast<__int128>(vq::fia_accumulator_bound - 1) * om) &&
            in48(c - static_cast<__int128>(vq::fia_accumulator_bound) * om) && in48(c))
            return {static_cast<std::int32_t>(om), j, static_cast<std::int64_t>(c)};
        if (e_min > 64) throw std::runtime_error("no shift");
        ++e_min;
    }
}

}  // namespace

TEST_CASE("conv packing equals its definition over random shapes and tiles", "[compiler][packing]") {
    std::mt19937 rng(77);
    for (int iter = 0; iter < 300; ++iter) {
        const int P = std::array{4, 8, 16, 32}[static_cast<std::size_t>(iter % 4)];
        const int K = std::uniform_int_distribution<int>(1, iter % 10 == 0 ? 300 : 90)(rng);
        const int C = std::uniform_int_distribution<int>(1, iter % 7 == 0 ? 200 : 40)(rng);
        const int kh = std::uniform_int_distribution<int>(1, 5)(rng);
        const int kw = std::uniform_int_distribution<int>(1, 5)(rng);
        int maps = K;
        if (K > P && iter % 2 == 1) maps = P * std::uniform_int_distribution<int>(1, K / P)(rng);
        const auto W = random_weights(rng, static_cast<std::size_t>(K) * C * kh * kw);
        INFO("K=" << K << " C=" << C << " kh=" << kh << " kw=" << kw << " P=" << P << " maps=" << maps);
        REQUIRE(vc::pack_conv_weights(W, K, C, kh, kw, P, maps) == conv_by_definition(W, K, C, kh, kw, P, maps));
    }
}

TEST_CASE("depthwise packing equals its definition over random shapes and tiles", "[compiler][packing]") {
    std::mt19937 rng(78);
    for (int iter = 0; iter < 300; ++iter) {
        const int P = std::array{4, 8, 16, 32}[static_cast<std::size_t>(iter % 4)];
        const int C = std::uniform_int_distribution<int>(1, 150)(rng);
        const int kh = std::uniform_int_distribution<int>(1, 9)(rng);
        const int kw = std::uniform_int_distribution<int>(1, 5)(rng);
        // The tiler's tiles: imaps <= maps <= C.
        const int maps = iter % 3 == 0 ? C : std::uniform_int_distribution<int>(1, C)(rng);
        const int imaps = std::uniform_int_distribution<int>(1, maps)(rng);
        const auto F = random_weights(rng, static_cast<std::size_t>(C) * kh * kw);
        INFO("C=" << C << " kh=" << kh << " kw=" << kw << " P=" << P << " imaps=" << imaps << " maps=" << maps);
        REQUIRE(vc::pack_depthwise_weights(F, C, kh, kw, P, imaps, maps) ==
                depthwise_by_definition(F, C, kh, kw, P, imaps, maps));
    }
}

TEST_CASE("FIA parameters equal the doubling search of §8.2", "[compiler][quant]") {
    std::mt19937_64 rng(79);
    std::vector<double> scales = {0.0, 1.0, 0.5, 2.0, 1.0 / 256, 65535.0, 65535.5, 65536.0, 32767.75, 32768.0,
                                  std::numeric_limits<double>::denorm_min(), std::numeric_limits<double>::min(),
                                  1e-300, 1e300, 3.0e-5, 0.0123};
    // The boundaries of the search: s·2^n at and around 65535.5 and 65535, for many n.
    for (int n = -60; n <= 40; ++n)
        for (double edge : {65535.5, 65535.0, 65534.5, 32768.0}) {
            const double x = std::ldexp(edge, n);
            scales.push_back(x);
            scales.push_back(std::nextafter(x, 0.0));
            scales.push_back(std::nextafter(x, 1e308));
        }
    std::uniform_real_distribution<double> exponent(-50.0, 20.0);
    for (int i = 0; i < 20000; ++i) scales.push_back(std::exp2(exponent(rng)));
    std::uniform_int_distribution<std::int64_t> bias(-(std::int64_t{1} << 31), std::int64_t{1} << 31);
    std::uniform_int_distribution<int> zero(-128, 127);
    std::size_t compared = 0;
    for (std::size_t i = 0; i < scales.size(); ++i) {
        const double s = scales[i];
        const std::int64_t b = i % 3 == 0 ? 0 : bias(rng);
        const std::int32_t z = zero(rng);
        const std::int32_t lo = i % 5 == 0 ? z : -128, hi = 127;
        vq::fia_params want{};
        bool want_fail = false;
        try {
            want = fia_by_definition(s, b, z, lo, hi);
        } catch (const std::runtime_error&) {
            want_fail = true;
        }
        INFO("s=" << s << " bias=" << b << " z=" << z);
        if (want_fail) {
            CHECK_THROWS_AS(vq::fia_quantize(s, b, z, lo, hi), vnnx::error);
        } else {
            REQUIRE(vq::fia_quantize(s, b, z, lo, hi) == want);
            ++compared;
        }
    }
    CHECK(compared > 20000);
}
