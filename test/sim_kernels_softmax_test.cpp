// The blocked SOFTMAX kernel (many short vectors side by side, YOLO's DFL) against the layer's
// definition written out element by element, on every ISA this CPU runs, one and two threads,
// ragged blocks and int8/uint8 on either side.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/kernels/softmax_blocks.hpp>
#include <vnnx/sim/thread_pool.hpp>

namespace {
namespace k = vnnx::sim::kernels;

template <class X, class Y>
std::vector<Y> definition(const k::softmax_params& p, const std::vector<X>& x) {
    std::vector<Y> y(x.size());
    for (std::int64_t a = 0; a < p.outer; ++a)
        for (std::int64_t b = 0; b < p.inner; ++b) {
            const std::int64_t base = a * p.n * p.inner + b;
            std::int32_t mx = INT32_MIN;
            for (std::int64_t j = 0; j < p.n; ++j) mx = std::max<std::int32_t>(mx, x[static_cast<std::size_t>(base + j * p.inner)]);
            std::uint64_t sum = 0;
            std::vector<std::uint32_t> e(static_cast<std::size_t>(p.n));
            for (std::int64_t j = 0; j < p.n; ++j) {
                const std::int32_t v = x[static_cast<std::size_t>(base + j * p.inner)] - mx + 127;
                e[static_cast<std::size_t>(j)] = p.table[static_cast<std::uint8_t>(static_cast<std::int8_t>(v))];
                sum += e[static_cast<std::size_t>(j)];
            }
            for (std::int64_t j = 0; j < p.n; ++j) {
                const double q = static_cast<double>(e[static_cast<std::size_t>(j)]) * (p.k / static_cast<double>(sum));
                const auto r = static_cast<std::int64_t>(std::floor(q)) + (q - std::floor(q) >= 0.5 ? 1 : 0);
                y[static_cast<std::size_t>(base + j * p.inner)] =
                    static_cast<Y>(std::clamp<std::int64_t>(r + p.zo, p.lo, p.hi));
            }
        }
    return y;
}

template <class X, class Y>
void check_all(std::mt19937& rng, vnnx::sim::thread_pool& pool) {
    // A decreasing exponential table as the compiler writes it (E[127] the largest), in 32 bits.
    std::vector<std::uint32_t> table(256);
    const double beta_scale = std::uniform_real_distribution<double>(0.02, 0.3)(rng);
    for (int r = 0; r < 256; ++r) {
        const int v = static_cast<std::int8_t>(static_cast<std::uint8_t>(r));
        table[static_cast<std::size_t>(r)] = static_cast<std::uint32_t>(std::lround(std::exp((v - 127) * beta_scale) * 4.0e9));
    }
    const bool so = std::is_signed_v<Y>;
    struct shape {
        std::int64_t outer, n, inner;
    };
    for (const shape s : {shape{1, 16, 33600 / 10}, shape{3, 7, 65}, shape{2, 100, 130}, shape{1, 2, 16}, shape{5, 16, 200}}) {
        const k::softmax_params p{table.data(), 256.0 * std::uniform_real_distribution<double>(0.5, 1.0)(rng),
                                  so ? -128 : 0, so ? -128 : 0, so ? 127 : 255, s.n, s.inner, s.outer};
        std::vector<X> x(static_cast<std::size_t>(s.outer * s.n * s.inner));
        for (auto& v : x) v = static_cast<X>(rng());
        const auto want = definition<X, Y>(p, x);
        for (const auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::isa_kind::avx2, vnnx::sim::isa_kind::avx512_vnni, vnnx::sim::isa_kind::avx512_vbmi}) {
            if (!vnnx::sim::isa_supported(isa)) continue;
            for (vnnx::sim::thread_pool* tp : {static_cast<vnnx::sim::thread_pool*>(nullptr), &pool}) {
                std::vector<Y> y(x.size(), 0);
                REQUIRE(k::softmax_blocks(isa, p, x.data(), y.data(), tp));
                INFO("isa " << vnnx::sim::isa_name(isa) << " shape " << s.outer << "x" << s.n << "x" << s.inner << " threads "
                            << (tp ? 2 : 1));
                REQUIRE(y == want);
            }
        }
    }
    // A table of zeros sums to zero: reported, not divided by.
    std::vector<std::uint32_t> zeros(256, 0);
    const k::softmax_params z{zeros.data(), 256.0, 0, -128, 127, 4, 32, 1};
    std::vector<X> x(128, X{1});
    std::vector<Y> y(128);
    for (const auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::isa_kind::avx2, vnnx::sim::isa_kind::avx512_vnni})
        if (vnnx::sim::isa_supported(isa)) CHECK_FALSE(k::softmax_blocks(isa, z, x.data(), y.data(), nullptr));
}
}  // namespace

TEST_CASE("softmax_blocks equals the element-by-element definition on every ISA and thread count") {
    std::mt19937 rng(2024);
    vnnx::sim::thread_pool pool(2);
    check_all<std::int8_t, std::int8_t>(rng, pool);
    check_all<std::uint8_t, std::int8_t>(rng, pool);
    check_all<std::int8_t, std::uint8_t>(rng, pool);
    check_all<std::uint8_t, std::uint8_t>(rng, pool);
}
