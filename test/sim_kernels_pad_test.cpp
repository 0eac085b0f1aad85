// One plane of a PAD layer (sim/kernels/pad_plane.hpp) against the definition, on rows of every
// width class its copies take (1-3, 4-7, 8-15, 16-31, 32-64, wider), the input at every side,
// and padded channels (no input). Bytes around the plane stay untouched.
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/sim/kernels/pad_plane.hpp>

namespace {
namespace k = vnnx::sim::kernels;

// The plane written into a buffer with 70 guard bytes each side.
std::vector<std::uint8_t> padded(const std::vector<std::uint8_t>& in, const k::pad_geometry& g, bool channel, std::uint8_t fill) {
    std::vector<std::uint8_t> out(g.oh * g.ow + 140, 0xA5);
    k::pad_plane(out.data() + 70, channel ? in.data() : nullptr, g, fill);
    return out;
}
}  // namespace

TEST_CASE("pad plane: every row width equals the definition") {
    std::mt19937 rng(31337);
    std::uniform_int_distribution<int> small(1, 30), wide(31, 150), pad(0, 5), byte(0, 255), coin(0, 1);
    for (int t = 0; t < 300; ++t) {
        k::pad_geometry g;
        g.h = static_cast<std::size_t>(small(rng));
        g.w = static_cast<std::size_t>(coin(rng) ? small(rng) : wide(rng));
        g.top = static_cast<std::size_t>(pad(rng));
        g.left = static_cast<std::size_t>(coin(rng) ? pad(rng) : 60 + pad(rng));
        g.oh = g.top + g.h + static_cast<std::size_t>(pad(rng));
        g.ow = g.left + g.w + static_cast<std::size_t>(pad(rng));
        const bool channel = t % 7 != 0;
        const auto fill = static_cast<std::uint8_t>(byte(rng));
        std::vector<std::uint8_t> in(g.h * g.w);
        for (auto& v : in) v = static_cast<std::uint8_t>(byte(rng));
        const auto want = padded(in, g, channel, fill);
        for (std::size_t i = 0; i < 70; ++i) REQUIRE((want[i] == 0xA5 && want[want.size() - 1 - i] == 0xA5));
        for (std::size_t y = 0; y < g.oh; ++y)
            for (std::size_t x = 0; x < g.ow; ++x) {
                const bool inside = channel && y >= g.top && y < g.top + g.h && x >= g.left && x < g.left + g.w;
                REQUIRE(want[70 + y * g.ow + x] == (inside ? in[(y - g.top) * g.w + (x - g.left)] : fill));
            }
    }
}
