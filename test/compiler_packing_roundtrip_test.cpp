// Weight packing (compiler) against its inverse (simulator), plus hand-derived byte positions.
#include <catch2/catch.hpp>

#include <random>

#include "vnnx/ir/preset.hpp"
#include "vnnx/ir/weight_packing.hpp"
#include "vnnx/sim/weight_unpacking.hpp"

namespace vc = vnnx::compiler;
namespace vs = vnnx::sim;

namespace {
std::vector<std::int8_t> random_weights(std::mt19937& rng, std::size_t n) {
    std::uniform_int_distribution<int> d(-128, 127);
    std::vector<std::int8_t> w(n);
    for (auto& v : w) v = static_cast<std::int8_t>(d(rng));
    return w;
}
}  // namespace

TEST_CASE("conv packing: byte positions of a tiny example", "[compiler][packing]") {
    // K=3, C=3 (odd -> C'=4), 1x2 kernel, P=8 -> K'=8, maps=K -> one block of M=8.
    std::vector<std::int8_t> w(3 * 3 * 1 * 2);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>(i + 1);
    const auto p = vc::pack_conv_weights(w, 3, 3, 1, 2, 8, 3);
    REQUIRE(p.size() == 8u * 4u * 1u * 2u);
    // byte ((c*kh + y)*kw + x)*M + k; W[k][c][0][x] = 1 + (k*3 + c)*2 + x
    CHECK(p[0] == 1);                      // k0 c0 x0
    CHECK(p[1] == 7);                      // k1 c0 x0
    CHECK(p[2] == 13);                     // k2 c0 x0
    CHECK(p[3] == 0);                      // padded kernel
    CHECK(p[8] == 2);                      // k0 c0 x1
    CHECK(p[(1 * 2 + 1) * 8 + 2] == 16);   // k2 c1 x1
    CHECK(p[(3 * 2 + 0) * 8 + 0] == 0);    // padded channel c3
    CHECK(p[(2 * 2 + 1) * 8 + 1] == 12);   // k1 c2 x1
}

TEST_CASE("conv packing: blocks of maps", "[compiler][packing]") {
    // K=20, P=8, maps=16: block 0 has 16 kernels, block 1 has K'-16 = 8 (4 real + 4 padding).
    std::vector<std::int8_t> w(20 * 2 * 1 * 1);
    for (int k = 0; k < 20; ++k)
        for (int c = 0; c < 2; ++c) w[static_cast<std::size_t>(k * 2 + c)] = static_cast<std::int8_t>(k * 2 + c);
    const auto p = vc::pack_conv_weights(w, 20, 2, 1, 1, 8, 16);
    REQUIRE(p.size() == 24u * 2u);
    CHECK(p[0 * 16 + 5] == 10);             // block 0, c0, k5
    CHECK(p[1 * 16 + 15] == 31);            // block 0, c1, k15
    CHECK(p[32 + 0 * 8 + 0] == 32);         // block 1 at 16*2, c0, k16
    CHECK(p[32 + 1 * 8 + 3] == 39);         // block 1, c1, k19
    CHECK(p[32 + 1 * 8 + 4] == 0);          // padded kernel 20
    CHECK_THROWS_AS(vc::pack_conv_weights(w, 20, 2, 1, 1, 8, 12), vnnx::error);  // maps not a multiple of P
    CHECK_THROWS_AS(vc::pack_conv_weights(std::span(w).first(10), 20, 2, 1, 1, 8, 16), vnnx::error);
}

TEST_CASE("conv packing round trip over random shapes and all presets", "[compiler][packing][sim]") {
    std::mt19937 rng(1234);
    for (const auto& pi : vc::preset_table) {
        const int P = pi.parallel_output_maps;
        for (int iter = 0; iter < 60; ++iter) {
            const int K = std::uniform_int_distribution<int>(1, 70)(rng);
            const int C = std::uniform_int_distribution<int>(1, 13)(rng);
            const int kh = std::uniform_int_distribution<int>(1, 5)(rng);
            const int kw = std::uniform_int_distribution<int>(1, 5)(rng);
            std::vector<int> maps_choices{K};
            for (int m = P; m < K; m += P) maps_choices.push_back(m);
            const int maps = maps_choices[std::uniform_int_distribution<std::size_t>(0, maps_choices.size() - 1)(rng)];
            const auto w = random_weights(rng, static_cast<std::size_t>(K * C * kh * kw));
            const auto p = vc::pack_conv_weights(w, K, C, kh, kw, P, maps);
            REQUIRE(p.size() == vs::packed_conv_bytes(K, C, kh, kw, P));
            REQUIRE(p.size() == static_cast<std::size_t>((K + P - 1) / P * P * (C + C % 2) * kh * kw));
            const auto back = vs::unpack_conv_weights(p, K, C, kh, kw, vs::parallel_output_maps(pi.id), maps);
            REQUIRE(back == w);
        }
    }
}

TEST_CASE("conv unpacking rejects inconsistent geometry", "[sim][packing]") {
    std::vector<std::uint8_t> bytes(16 * 4 * 9, 0);
    CHECK_NOTHROW((void)vs::unpack_conv_weights(bytes, 16, 4, 3, 3, 16, 16));
    CHECK_THROWS_AS((void)vs::unpack_conv_weights(bytes, 16, 4, 3, 3, 8, 12), vnnx::error);
    CHECK_THROWS_AS((void)vs::unpack_conv_weights(std::span(bytes).first(100), 16, 4, 3, 3, 16, 16), vnnx::error);
    CHECK_THROWS_AS((void)vs::unpack_conv_weights(bytes, 0, 4, 3, 3, 16, 16), vnnx::error);
    CHECK_THROWS_AS((void)vs::parallel_output_maps(7), vnnx::error);
    for (const auto& pi : vc::preset_table) CHECK(vs::parallel_output_maps(pi.id) == pi.parallel_output_maps);
}

TEST_CASE("depthwise packing: chunk sizes and Toeplitz layout", "[compiler][packing]") {
    // C=4, kh=3, kw=2, P=8: chunk = (3+8-1) x 8 = 80 bytes; imaps = maps = 4 = C -> C + I = 8 groups.
    CHECK(vc::depthwise_chunk_bytes(3, 8) == 80u);
    CHECK(vc::depthwise_chunk_bytes(3, 16) == 288u);  // the SDK's 3x3 example with P=16
    CHECK(vc::depthwise_packed_size(4, 3, 2, 8, 4) == 8u * 2u * 80u);
    CHECK(vc::depthwise_packed_size(10, 3, 3, 16, 2) == 14u * 3u * 288u);
    std::vector<std::int8_t> f(4 * 3 * 2);
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<std::int8_t>(i + 1);  // F[c][y][x] = 1+(c*3+y)*2+x
    const auto p = vc::pack_depthwise_weights(f, 4, 3, 2, 8, 4, 4);
    REQUIRE(p.size() == 1280u);
    // channel 0, column 1 chunk at 80: T[i][j] = F[0][i-j][1]
    CHECK(p[80 + 0 * 8 + 0] == 2);
    CHECK(p[80 + 1 * 8 + 0] == 4);
    CHECK(p[80 + 2 * 8 + 0] == 6);
    CHECK(p[80 + 3 * 8 + 1] == 6);
    CHECK(p[80 + 9 * 8 + 7] == 6);  // last row, last column: d = 2
    CHECK(p[80 + 0 * 8 + 1] == 0);  // above the diagonal
    CHECK(p[80 + 9 * 8 + 0] == 0);  // d = 9 >= kh
    // channel 3 is group 3 (the filler comes after channel 4 = I): chunk (3*2+0)*80
    CHECK(p[480] == 19);
    for (std::size_t i = 640; i < 1280; ++i) REQUIRE(p[i] == 0);  // the filler group(s)
}

TEST_CASE("depthwise filler positions", "[compiler][packing]") {
    // C=10, I=2, maps=6: fillers after channel 2 (I) and after channel 4 (I), then none.
    const auto g = vc::depthwise_group_of_channel(10, 2, 6);
    CHECK(g == std::vector<std::size_t>{0, 1, 4, 5, 8, 9, 10, 11, 12, 13});
    // C=9, I=4, maps=3: after channel 3 (maps) and after channel 4 (I).
    const auto h = vc::depthwise_group_of_channel(9, 4, 3);
    CHECK(h == std::vector<std::size_t>{0, 1, 2, 7, 12, 13, 14, 15, 16});
}

TEST_CASE("depthwise height dilation", "[compiler][packing]") {
    std::vector<std::int8_t> f{1, 2, 3, 4, 5, 6};  // C=1, kh=3, kw=2
    const auto d = vc::dilate_depthwise_height(f, 1, 3, 2, 2);
    REQUIRE(d.kh == 5);
    CHECK(d.data == std::vector<std::int8_t>{1, 2, 0, 0, 3, 4, 0, 0, 5, 6});
    CHECK(vc::dilate_depthwise_height(f, 1, 3, 2, 1).data == f);
    CHECK(vc::dilated_kernel_height(1, 4) == 1);
    CHECK(vc::dilated_kernel_height(3, 3) == 7);
}

TEST_CASE("depthwise packing round trip", "[compiler][packing][sim]") {
    std::mt19937 rng(99);
    for (const auto& pi : vc::preset_table) {
        const int P = pi.parallel_output_maps;
        for (int iter = 0; iter < 40; ++iter) {
            const int C = std::uniform_int_distribution<int>(1, 40)(rng);
            const int kh = std::uniform_int_distribution<int>(1, 7)(rng);
            const int kw = std::uniform_int_distribution<int>(1, 5)(rng);
            const int maps = std::uniform_int_distribution<int>(1, C)(rng);
            const int imaps = std::uniform_int_distribution<int>(1, maps)(rng);
            const auto f = random_weights(rng, static_cast<std::size_t>(C * kh * kw));
            const auto p = vc::pack_depthwise_weights(f, C, kh, kw, P, imaps, maps);
            REQUIRE(p.size() == vs::packed_depthwise_bytes(C, kh, kw, P, imaps));
            REQUIRE(vs::unpack_depthwise_weights(p, C, kh, kw, P, imaps, maps) == f);
        }
    }
}

TEST_CASE("depthwise unpacking detects a wrong P or corrupt bytes", "[sim][packing]") {
    std::vector<std::int8_t> f{1, 2, 3, 4, 5, 6, 7, 8, 9};
    auto p = vc::pack_depthwise_weights(f, 1, 3, 3, 8, 1, 1);
    CHECK(vs::unpack_depthwise_weights(p, 1, 3, 3, 8, 1, 1) == f);
    CHECK_THROWS_AS((void)vs::unpack_depthwise_weights(p, 1, 3, 3, 16, 1, 1), vnnx::error);
    p[5] = 42;  // off-diagonal byte of the first chunk
    CHECK_THROWS_AS((void)vs::unpack_depthwise_weights(p, 1, 3, 3, 8, 1, 1), vnnx::error);
}

TEST_CASE("fully connected packing", "[compiler][packing][sim]") {
    // O=5, A=3, cols=2: blocks at 0, 12, 24; block 2 has one output; total 2*3*2*3 = 36.
    std::vector<std::int8_t> w(15);
    for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<std::int8_t>(i + 1);  // W[o][a] = 1+3o+a
    const auto p = vc::pack_fc_weights(w, 5, 3, 2);
    REQUIRE(p.size() == 36u);
    CHECK(std::vector<std::uint8_t>(p.begin(), p.begin() + 6) == std::vector<std::uint8_t>{1, 4, 2, 5, 3, 6});
    CHECK(std::vector<std::uint8_t>(p.begin() + 6, p.begin() + 12) == std::vector<std::uint8_t>(6, 0));
    CHECK(std::vector<std::uint8_t>(p.begin() + 12, p.begin() + 18) == std::vector<std::uint8_t>{7, 10, 8, 11, 9, 12});
    CHECK(std::vector<std::uint8_t>(p.begin() + 24, p.begin() + 27) == std::vector<std::uint8_t>{13, 14, 15});
    CHECK(vs::unpack_fc_weights(p, 5, 3, 2) == w);
    CHECK_THROWS_AS((void)vs::unpack_fc_weights(p, 5, 3, 4), vnnx::error);
    std::mt19937 rng(7);
    for (int iter = 0; iter < 50; ++iter) {
        const int O = std::uniform_int_distribution<int>(1, 100)(rng);
        const int A = std::uniform_int_distribution<int>(1, 64)(rng);
        const int cols = std::uniform_int_distribution<int>(1, O)(rng);
        const auto ww = random_weights(rng, static_cast<std::size_t>(O * A));
        const auto pp = vc::pack_fc_weights(ww, O, A, cols);
        REQUIRE(pp.size() == vs::packed_fc_bytes(O, A, cols));
        REQUIRE(vs::unpack_fc_weights(pp, O, A, cols) == ww);
    }
}

TEST_CASE("depthwise packing when only one filler fits", "[compiler][packing][sim]") {
    // C=15, I=maps=9: a filler after channel 9, the next multiple (18) lies past C, so the second
    // filler of the C + 2*I groups is never written (the SDK's loop stops with an IndexError here;
    // we leave the trailing groups zero, which is what the buffer size reserves).
    const auto g = vc::depthwise_group_of_channel(15, 9, 9);
    CHECK(g.front() == 0u);
    CHECK(g[8] == 8u);
    CHECK(g[9] == 18u);
    CHECK(g.back() == 23u);
    std::mt19937 rng(5);
    const auto f = random_weights(rng, 15 * 3 * 1);
    const auto p = vc::pack_depthwise_weights(f, 15, 3, 1, 16, 9, 9);
    REQUIRE(p.size() == (15u + 18u) * 1u * 18u * 16u);
    for (std::size_t i = 24u * 18u * 16u; i < p.size(); ++i) REQUIRE(p[i] == 0);
    CHECK(vs::unpack_depthwise_weights(p, 15, 3, 1, 16, 9, 9) == f);
}
