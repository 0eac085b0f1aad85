#pragma once
// A byte matrix transpose between strided buffers: conv weight packing ([K][taps] to
// [taps][K] within each block) and the simulator's TRANSPOSE layers and reshapes between
// channels-first and TFLite order (YOLO heads move megabytes this way). SSE2 (every x86-64)
// moves 16x16 tiles in 32 unpacks. Edges narrower than a tile are done as one more whole tile
// placed to end at the edge: it overlaps the last tile and writes those bytes again with the
// same values (source and destination never overlap), where byte-by-byte edges were a third
// of a 20x20 plane's time.
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vnnx {

namespace transpose_detail {

inline void scalar(const std::uint8_t* src, std::ptrdiff_t ss, std::uint8_t* dst, std::ptrdiff_t ds, std::size_t rows,
                   std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c)
            dst[static_cast<std::ptrdiff_t>(c) * ds + static_cast<std::ptrdiff_t>(r)] =
                src[static_cast<std::ptrdiff_t>(r) * ss + static_cast<std::ptrdiff_t>(c)];
}

#if defined(__SSE2__)
// Four rounds of pairing row j with row j+8 (unpacklo/hi of bytes) rotate the 8-bit
// (row, column) address left by one each, so after four the row and column nibbles swap.
inline void tile16(const std::uint8_t* src, std::ptrdiff_t ss, std::uint8_t* dst, std::ptrdiff_t ds) {
    __m128i v[16], w[16];
    for (int r = 0; r < 16; ++r) v[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + r * ss));
    for (int round = 0; round < 4; ++round) {
        for (int j = 0; j < 8; ++j) {
            w[2 * j] = _mm_unpacklo_epi8(v[j], v[j + 8]);
            w[2 * j + 1] = _mm_unpackhi_epi8(v[j], v[j + 8]);
        }
        for (int r = 0; r < 16; ++r) v[r] = w[r];
    }
    for (int r = 0; r < 16; ++r) _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + r * ds), v[r]);
}

/// Tile origins along an axis of n >= 16: 0, 16, ... and, when n is not a multiple of 16,
/// n - 16 last (overlapping the one before).
template <class F>
inline void tile_starts(std::size_t n, F&& f) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) f(i);
    if (i < n) f(n - 16);
}
#endif

}  // namespace transpose_detail

/// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols. The two must not
/// overlap; bytes of dst outside the rows x cols box are not touched.
inline void transpose_bytes(const std::uint8_t* src, std::ptrdiff_t src_stride, std::uint8_t* dst,
                            std::ptrdiff_t dst_stride, std::size_t rows, std::size_t cols) {
#if defined(__SSE2__)
    if (rows >= 16 && cols >= 16) {
        transpose_detail::tile_starts(rows, [&](std::size_t r) {
            const auto ri = static_cast<std::ptrdiff_t>(r);
            transpose_detail::tile_starts(cols, [&](std::size_t c) {
                const auto ci = static_cast<std::ptrdiff_t>(c);
                transpose_detail::tile16(src + ri * src_stride + ci, src_stride, dst + ci * dst_stride + ri, dst_stride);
            });
        });
        return;
    }
#endif
    // A side under 16 (or no SSE2): blocks of 16 keep both sides' cache lines in use.
    for (std::size_t r = 0; r < rows; r += 16)
        for (std::size_t c = 0; c < cols; c += 16)
            transpose_detail::scalar(src + static_cast<std::ptrdiff_t>(r) * src_stride + static_cast<std::ptrdiff_t>(c),
                                     src_stride,
                                     dst + static_cast<std::ptrdiff_t>(c) * dst_stride + static_cast<std::ptrdiff_t>(r),
                                     dst_stride, rows - r < 16 ? rows - r : 16, cols - c < 16 ? cols - c : 16);
}

}  // namespace vnnx
