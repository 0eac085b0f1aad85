#pragma once
// FIA weight packing for ncomp models (lowering.md §7.1.3, §7.1.4, §7.10.2; SDK vnnx_tflite.py
// pad_weights_and_pack_2_1 / conv_pack_weights). The inverse lives in sim/weight_unpacking.hpp.
// Weights are int8 (a uint8 model's bytes have the same bit patterns), output is raw bytes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "vnnx/support/byte_transpose.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::compiler {

namespace packing_detail {
inline void check_positive(const char* what, std::initializer_list<long long> values, const char* names) {
    for (long long v : values)
        if (v < 1) fail(error_kind::bad_input, std::string(what) + ": dimensions (" + names + ") must all be >= 1");
}
inline void check_size(const char* what, std::size_t got, std::size_t want) {
    if (got != want)
        fail(error_kind::bad_input, std::string(what) + ": weight array holds " + std::to_string(got) +
                                        " values, the shape needs " + std::to_string(want));
}
}  // namespace packing_detail

// ---- ordinary convolution (§7.1.3) ----

// K' = K rounded up to P, C' = C rounded up to even.
[[nodiscard]] inline std::size_t conv_packed_size(int K, int C, int kh, int kw, int P) {
    const std::size_t kp = static_cast<std::size_t>((K + P - 1) / P) * static_cast<std::size_t>(P);
    const std::size_t cp = static_cast<std::size_t>(C + C % 2);
    return kp * cp * static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw);
}

// Block size of the packing: the tile's maps, or K' when one map tile covers all kernels.
[[nodiscard]] inline int conv_block_maps(int K, int P, int maps) {
    if (maps == K) return (K + P - 1) / P * P;
    if (maps < 1 || maps > K || maps % P != 0)
        fail(error_kind::bad_input, "conv weight packing: maps " + std::to_string(maps) +
                                        " must equal the kernel count " + std::to_string(K) +
                                        " or be a positive multiple of P = " + std::to_string(P));
    return maps;
}

// W is [K][C][kh][kw]. Blocks of M kernels; inside a block: channel, row, column, kernel (innermost).
// `zeroed(n)` gives the n output bytes, all zero (a vector, or the data blob itself to pack in place);
// it is called once the arguments are known to be valid.
template <class Zeroed>
void pack_conv_weights_to(std::span<const std::int8_t> W, int K, int C, int kh, int kw, int P, int maps,
                          Zeroed&& zeroed) {
    packing_detail::check_positive("conv weight packing", {K, C, kh, kw, P}, "K, C, kh, kw, P");
    packing_detail::check_size("conv weight packing", W.size(),
                       static_cast<std::size_t>(K) * static_cast<std::size_t>(C) * static_cast<std::size_t>(kh) *
                           static_cast<std::size_t>(kw));
    const int M = conv_block_maps(K, P, maps);
    const int kp = (K + P - 1) / P * P;
    const int cp = C + C % 2;
    const std::size_t plane = static_cast<std::size_t>(cp) * static_cast<std::size_t>(kh * kw);
    std::span<std::uint8_t> out = zeroed(conv_packed_size(K, C, kh, kw, P));
    // Within a block the byte of kernel k and tap i = (c*kh + y)*kw + x sits at i*mb + (k - first):
    // a transpose of the block's [mb][S] rows, done in tiles so that both sides stay in L1.
    const std::size_t S = static_cast<std::size_t>(C) * static_cast<std::size_t>(kh * kw);
    constexpr std::size_t tile_taps = 64;
    constexpr int tile_kernels = 64;
    const auto* w8 = reinterpret_cast<const std::uint8_t*>(W.data());
    for (int first = 0; first < K; first += M) {
        const auto mb = static_cast<std::size_t>(std::min(M, kp - first));
        const int end = std::min(K, first + M);
        std::uint8_t* block = out.data() + static_cast<std::size_t>(first / M) * static_cast<std::size_t>(M) * plane;
        for (std::size_t i0 = 0; i0 < S; i0 += tile_taps) {
            const std::size_t i1 = std::min(S, i0 + tile_taps);
            for (int k0 = first; k0 < end; k0 += tile_kernels) {
                const int k1 = std::min(end, k0 + tile_kernels);
                transpose_bytes(w8 + static_cast<std::size_t>(k0) * S + i0, S,
                                block + i0 * mb + static_cast<std::size_t>(k0 - first), mb,
                                static_cast<std::size_t>(k1 - k0), i1 - i0);
            }
        }
    }
}

[[nodiscard]] inline std::vector<std::uint8_t> pack_conv_weights(std::span<const std::int8_t> W, int K, int C, int kh,
                                                                 int kw, int P, int maps) {
    std::vector<std::uint8_t> out;
    pack_conv_weights_to(W, K, C, kh, kw, P, maps, [&](std::size_t n) {
        out.assign(n, 0);
        return std::span<std::uint8_t>(out);
    });
    return out;
}

// ---- depthwise (§7.1.4) ----

// Height-dilated depthwise filters are re-materialised with zero rows between taps (§7.1.1):
// kh' = (kh-1)*dh + 1 when dh > 1 and kh > 1. F is [C][kh][kw]; returns [C][kh'][kw].
struct dilated_filter {
    int kh = 0;  // kh'
    std::vector<std::int8_t> data;
};
[[nodiscard]] inline int dilated_kernel_height(int kh, int dh) { return (dh > 1 && kh > 1) ? (kh - 1) * dh + 1 : kh; }
[[nodiscard]] inline dilated_filter dilate_depthwise_height(std::span<const std::int8_t> F, int C, int kh, int kw,
                                                            int dh) {
    packing_detail::check_positive("depthwise height dilation", {C, kh, kw, dh}, "C, kh, kw, dilation_h");
    packing_detail::check_size("depthwise height dilation", F.size(),
                       static_cast<std::size_t>(C) * static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw));
    dilated_filter r;
    r.kh = dilated_kernel_height(kh, dh);
    const int step = r.kh == kh ? 1 : dh;
    r.data.assign(static_cast<std::size_t>(C) * static_cast<std::size_t>(r.kh) * static_cast<std::size_t>(kw), 0);
    for (int c = 0; c < C; ++c)
        for (int y = 0; y < kh; ++y)
            for (int x = 0; x < kw; ++x)
                r.data[(static_cast<std::size_t>(c) * r.kh + static_cast<std::size_t>(y * step)) * kw + x] =
                    F[(static_cast<std::size_t>(c) * kh + y) * kw + x];
    return r;
}

// One chunk is a (kh + P - 1) x P Toeplitz matrix for one kernel column.
[[nodiscard]] inline std::size_t depthwise_chunk_bytes(int kh, int P) {
    return static_cast<std::size_t>(kh + P - 1) * static_cast<std::size_t>(P);
}
// Chunk groups (kw chunks each): C + 2*I, or C + I when I = C (two / one zero fillers of I groups).
[[nodiscard]] inline std::size_t depthwise_group_count(int C, int imaps) {
    return static_cast<std::size_t>(C) + static_cast<std::size_t>(imaps == C ? imaps : 2 * imaps);
}
[[nodiscard]] inline std::size_t depthwise_packed_size(int C, int kh, int kw, int P, int imaps) {
    return depthwise_group_count(C, imaps) * static_cast<std::size_t>(kw) * depthwise_chunk_bytes(kh, P);
}
// Group index of channel c: fillers of I groups follow a channel whose 1-based count is a multiple of
// I or of maps, at most twice. Shared with the unpacker's logic (sim/weight_unpacking.hpp).
[[nodiscard]] inline std::vector<std::size_t> depthwise_group_of_channel(int C, int imaps, int maps) {
    std::vector<std::size_t> g(static_cast<std::size_t>(C));
    std::size_t slot = 0;
    int fillers = 0;
    for (int c = 0; c < C; ++c) {
        g[static_cast<std::size_t>(c)] = slot++;
        if (fillers < 2 && ((c + 1) % imaps == 0 || (c + 1) % maps == 0)) {
            slot += static_cast<std::size_t>(imaps);
            ++fillers;
        }
    }
    return g;
}

// F is [C][kh][kw] (kh already dilated). imaps/maps are the tile's Conv2DOptions.imaps and maps.
// `zeroed(n)` as for pack_conv_weights_to.
template <class Zeroed>
void pack_depthwise_weights_to(std::span<const std::int8_t> F, int C, int kh, int kw, int P, int imaps, int maps,
                               Zeroed&& zeroed) {
    packing_detail::check_positive("depthwise weight packing", {C, kh, kw, P, imaps, maps}, "C, kh, kw, P, imaps, maps");
    packing_detail::check_size("depthwise weight packing", F.size(),
                       static_cast<std::size_t>(C) * static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw));
    if (imaps > C || maps > C)
        fail(error_kind::bad_input, "depthwise weight packing: imaps " + std::to_string(imaps) + " and maps " +
                                        std::to_string(maps) + " must not exceed the channel count " +
                                        std::to_string(C));
    const std::size_t chunk = depthwise_chunk_bytes(kh, P);
    const auto groups = depthwise_group_of_channel(C, imaps, maps);
    // imaps = C with maps < C would place a second filler past the C + I groups reserved.
    if (groups.back() >= depthwise_group_count(C, imaps))
        fail(error_kind::bad_input, "depthwise weight packing: imaps " + std::to_string(imaps) + " and maps " +
                                        std::to_string(maps) + " leave no room for channel " + std::to_string(C - 1));
    std::span<std::uint8_t> out = zeroed(depthwise_packed_size(C, kh, kw, P, imaps));
    for (int c = 0; c < C; ++c)
        for (int x = 0; x < kw; ++x) {
            const std::size_t base = (groups[static_cast<std::size_t>(c)] * kw + static_cast<std::size_t>(x)) * chunk;
            // T[i][j] = F[c][i-j][x] for 0 <= i-j < kh: diagonal d holds one tap; the rest stays zero.
            for (int d = 0; d < kh; ++d) {
                const auto v = static_cast<std::uint8_t>(F[(static_cast<std::size_t>(c) * kh + d) * kw + x]);
                std::uint8_t* diag = out.data() + base + static_cast<std::size_t>(d) * P;
                for (int j = 0; j < P; ++j) diag[static_cast<std::size_t>(j) * (P + 1)] = v;
            }
        }
}

[[nodiscard]] inline std::vector<std::uint8_t> pack_depthwise_weights(std::span<const std::int8_t> F, int C, int kh,
                                                                      int kw, int P, int imaps, int maps) {
    std::vector<std::uint8_t> out;
    pack_depthwise_weights_to(F, C, kh, kw, P, imaps, maps, [&](std::size_t n) {
        out.assign(n, 0);
        return std::span<std::uint8_t>(out);
    });
    return out;
}

// ---- native FULLY_CONNECTED (§7.10.2) ----

[[nodiscard]] inline std::size_t fc_packed_size(int O, int A, int cols) {
    return 2 * static_cast<std::size_t>((O + cols - 1) / cols) * static_cast<std::size_t>(cols) *
           static_cast<std::size_t>(A);
}

// W is [O][A]; cols = the node's `cols` field. Block i (b <= cols outputs) at 2*i*cols*A: the block
// transposed (A outer, output inner), then A*b zero bytes (the second weight bank).
// The SDK passes node.cols as written by the walk: the *second* column step's length when there are
// two or more steps (with exactly two steps that is the shorter final one), not the tile's cols.
// The simulator reads the same field back, so packing and unpacking agree either way.
[[nodiscard]] inline std::vector<std::uint8_t> pack_fc_weights(std::span<const std::int8_t> W, int O, int A, int cols) {
    packing_detail::check_positive("fully connected weight packing", {O, A, cols}, "outputs, accumulation depth, cols");
    packing_detail::check_size("fully connected weight packing", W.size(),
                       static_cast<std::size_t>(O) * static_cast<std::size_t>(A));
    std::vector<std::uint8_t> out(fc_packed_size(O, A, cols), 0);
    for (int o = 0; o < O; ++o) {
        const int i = o / cols;
        const int b = std::min(cols, O - i * cols);
        const std::size_t base = 2 * static_cast<std::size_t>(i) * cols * A;
        for (int a = 0; a < A; ++a)
            out[base + static_cast<std::size_t>(a) * b + (o - i * cols)] =
                static_cast<std::uint8_t>(W[static_cast<std::size_t>(o) * A + a]);
    }
    return out;
}

}  // namespace vnnx::compiler
