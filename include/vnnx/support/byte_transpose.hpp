#pragma once
// A byte matrix transpose between strided buffers: conv weight packing ([K][taps] to
// [taps][K] within each block) and the simulator's TRANSPOSE layers and reshapes between
// channels-first and TFLite order (YOLO heads move megabytes this way). SSE2 (every x86-64)
// moves 16x16 tiles in registers. Edges narrower than a tile are done as one more whole tile
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
// One 16x16 tile in three unpack stages (bytes of row pairs, then 16-bit, then 32-bit lanes),
// the last combined with the 64-bit unpacks of the stores. At most 16 vectors are live at a
// time, so the tile stays in the 16 SSE registers; a four-round formulation (pairs of rows
// j and j + 8, 32 live vectors) spilled and ran 2.3x slower.
inline void tile16(const std::uint8_t* src, std::ptrdiff_t ss, std::uint8_t* dst, std::ptrdiff_t ds) {
    __m128i a[16], t[16], u[16];
    for (int r = 0; r < 16; ++r) a[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + r * ss));
    // t[k]: columns 0..7 of rows 2k, 2k + 1 interleaved; t[k + 8]: columns 8..15.
    for (int k = 0; k < 8; ++k) {
        t[k] = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]);
        t[k + 8] = _mm_unpackhi_epi8(a[2 * k], a[2 * k + 1]);
    }
    // u[8h + j] and u[8h + j + 4]: four columns each (one 32-bit lane per column), rows 4j .. 4j + 3.
    for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 4; ++j) {
            u[8 * h + j] = _mm_unpacklo_epi16(t[8 * h + 2 * j], t[8 * h + 2 * j + 1]);
            u[8 * h + j + 4] = _mm_unpackhi_epi16(t[8 * h + 2 * j], t[8 * h + 2 * j + 1]);
        }
    for (int q = 0; q < 4; ++q) {
        // columns 4q, 4q + 1 (lo) and 4q + 2, 4q + 3 (hi): rows 0..7 in one half, 8..15 in the other
        const __m128i lo_a = _mm_unpacklo_epi32(u[4 * q], u[4 * q + 1]);
        const __m128i hi_a = _mm_unpackhi_epi32(u[4 * q], u[4 * q + 1]);
        const __m128i lo_b = _mm_unpacklo_epi32(u[4 * q + 2], u[4 * q + 3]);
        const __m128i hi_b = _mm_unpackhi_epi32(u[4 * q + 2], u[4 * q + 3]);
        std::uint8_t* o = dst + 4 * q * ds;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_unpacklo_epi64(lo_a, lo_b));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + ds), _mm_unpackhi_epi64(lo_a, lo_b));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 2 * ds), _mm_unpacklo_epi64(hi_a, hi_b));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 3 * ds), _mm_unpackhi_epi64(hi_a, hi_b));
    }
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
