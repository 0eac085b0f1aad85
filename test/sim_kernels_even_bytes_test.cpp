#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/even_bytes.hpp>

TEST_CASE("even bytes: every length 0..200 at every source alignment, nothing written past n, every ISA") {
    using vnnx::sim::isa_kind;
    std::mt19937 rng(5);
    for (isa_kind isa : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi})
    for (std::size_t n = 0; n <= 200; ++n)
        for (std::size_t off = 0; off < 4; ++off) {
            // The source ends at s[off + 2(n-1)]: a longer read would leave the vector (ASan).
            std::vector<std::uint8_t> s(off + (n == 0 ? 0 : 2 * n - 1));
            for (auto& b : s) b = static_cast<std::uint8_t>(rng());
            std::vector<std::uint8_t> d(n + 8, 0xEE);
            if (!vnnx::sim::isa_supported(isa)) continue;
            vnnx::sim::kernels::even_bytes(isa, d.data(), s.data() + off, n);
            INFO(vnnx::sim::isa_name(isa) << " n=" << n << " off=" << off);
            for (std::size_t j = 0; j < n; ++j) REQUIRE(d[j] == s[off + 2 * j]);
            for (std::size_t j = n; j < n + 8; ++j) REQUIRE(d[j] == 0xEE);
        }
}
