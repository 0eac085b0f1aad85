// The BATCH_MATMUL node's int8 product and requantization (sim/kernels/matmul.hpp): the scalar
// path equals the definition written out in int64, and every SIMD path equals scalar, on shapes
// that leave partial panels, partial tiles and k not a multiple of 4, and on extreme codes.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/quant/fixed_point.hpp>
#include <vnnx/sim/kernels/matmul.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;
using namespace vnnx_test;

struct product {
    std::size_t m, n, k;
    std::int32_t za, zb;
    std::vector<std::int8_t> a, b;
};

// Every column's sums, column after column, as columns() gives them over [j0, j1) pieces.
std::vector<std::int32_t> run(isa_kind isa, const product& p, std::size_t pieces) {
    k::int8_matmul mm;
    mm.set(isa, p.a.data(), p.b.data(), p.m, p.n, p.k, p.za, p.zb);
    std::vector<std::int32_t> out(p.m * p.n, 0x5a5a5a5a);
    std::vector<int> seen(p.n, 0);
    for (std::size_t q = 0; q < pieces; ++q)
        mm.columns(p.n * q / pieces, p.n * (q + 1) / pieces, [&](std::size_t j, const std::int32_t* acc) {
            REQUIRE(j < p.n);
            ++seen[j];
            std::copy(acc, acc + p.m, out.begin() + static_cast<std::ptrdiff_t>(j * p.m));
        });
    for (int s : seen) REQUIRE(s == 1);
    return out;
}

}  // namespace

TEST_CASE("int8 matmul: scalar equals the definition, every SIMD path equals scalar") {
    std::mt19937 rng(4242);
    std::uniform_int_distribution<int> dim(1, 70), code(-128, 127), ten(0, 9);
    const std::vector<std::size_t> ks = {1, 3, 4, 5, 16, 63, 64, 65, 129, 400};
    for (int t = 0; t < 60; ++t) {
        product p;
        p.m = static_cast<std::size_t>(dim(rng));
        p.n = static_cast<std::size_t>(dim(rng));
        p.k = ks[static_cast<std::size_t>(t) % ks.size()];
        const bool extreme = ten(rng) < 2;
        p.za = extreme ? (t % 2 ? 127 : -128) : code(rng);
        p.zb = extreme ? (t % 2 ? -128 : 127) : code(rng);
        auto fill = [&](std::vector<std::int8_t>& v, std::size_t count, int edge) {
            v.resize(count);
            for (auto& x : v) x = static_cast<std::int8_t>(extreme ? edge : code(rng));
        };
        // extreme: every product at its largest magnitude, (-128 - 127)(127 - (-128))
        fill(p.a, p.m * p.k, t % 2 ? -128 : 127);
        fill(p.b, p.n * p.k, t % 2 ? 127 : -128);
        const auto want = run(isa_kind::scalar, p, 1);
        for (std::size_t j = 0; j < p.n; ++j)
            for (std::size_t i = 0; i < p.m; ++i) {
                std::int64_t s = 0;
                for (std::size_t q = 0; q < p.k; ++q)
                    s += (std::int64_t{p.a[i * p.k + q]} - p.za) * (std::int64_t{p.b[j * p.k + q]} - p.zb);
                REQUIRE(want[j * p.m + i] == s);
            }
        for (isa_kind i : simd_isas()) {
            INFO("isa " << vnnx::sim::isa_name(i) << " m=" << p.m << " n=" << p.n << " k=" << p.k);
            REQUIRE(run(i, p, 1) == want);
            REQUIRE(run(i, p, 3) == want);  // pieces that start inside a tile
        }
    }
}

TEST_CASE("int8 matmul: the largest contracted length keeps exact sums on every path") {
    // 33000 products of magnitude 255 * 255 come within 0.1% of int32's limit.
    product p{3, 9, 33000, -128, 127, {}, {}};
    p.a.assign(p.m * p.k, 127);
    p.b.assign(p.n * p.k, -128);
    const auto want = run(isa_kind::scalar, p, 1);
    REQUIRE(want[0] == std::int64_t{33000} * 255 * -255);
    for (isa_kind i : simd_isas()) REQUIRE(run(i, p, 2) == want);
}

// Sums near int32's limits with multipliers above 1 scale past int32: every path saturates.
TEST_CASE("int8 matmul requantization: every path equals TFLite's single-rounding multiplier") {
    std::mt19937 rng(77);
    std::uniform_int_distribution<std::int32_t> acc_d(-3000000, 3000000), wide(std::numeric_limits<std::int32_t>::min(),
                                                                             std::numeric_limits<std::int32_t>::max());
    std::uniform_int_distribution<std::int32_t> mult(1 << 30, std::numeric_limits<std::int32_t>::max()), zo_d(-128, 127);
    std::uniform_int_distribution<int> shift_d(-20, 3), len(1, 100);
    for (int t = 0; t < 200; ++t) {
        const std::size_t n = static_cast<std::size_t>(len(rng));
        std::vector<std::int32_t> acc(n);
        for (auto& v : acc) v = t % 5 == 0 ? wide(rng) : acc_d(rng);
        const std::int32_t m = mult(rng), zo = zo_d(rng);
        const int shift = shift_d(rng);
        std::vector<std::int8_t> want(n);
        for (std::size_t i = 0; i < n; ++i)
            want[i] = static_cast<std::int8_t>(std::clamp<std::int64_t>(
                std::int64_t{vnnx::quant::multiply_by_quantized_multiplier_single_round(acc[i], m, shift)} + zo, -128, 127));
        std::vector<std::int8_t> got(n, 0);
        k::requant_qm(isa_kind::scalar, acc.data(), n, m, shift, zo, got.data(), 1);
        REQUIRE(got == want);
        for (isa_kind i : simd_isas()) {
            std::fill(got.begin(), got.end(), std::int8_t{0});
            k::requant_qm(i, acc.data(), n, m, shift, zo, got.data(), 1);
            INFO("isa " << vnnx::sim::isa_name(i) << " multiplier " << m << " shift " << shift);
            REQUIRE(got == want);
        }
        // strided stores (a rank-2 output's column) take every other byte
        std::vector<std::int8_t> strided(2 * n, 7);
        k::requant_qm(vnnx::sim::best_isa(), acc.data(), n, m, shift, zo, strided.data(), 2);
        for (std::size_t i = 0; i < n; ++i) {
            REQUIRE(strided[2 * i] == want[i]);
            REQUIRE(strided[2 * i + 1] == 7);
        }
    }
}
