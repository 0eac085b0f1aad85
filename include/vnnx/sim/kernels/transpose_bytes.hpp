#pragma once
// d[c·dst_stride + r] = s[r·src_stride + c] for r < rows, c < cols: the byte transpose behind
// TRANSPOSE layers and the reshapes between channels-first and TFLite order (YOLO heads move
// megabytes this way). 16 x 16 tiles are transposed in registers with SSE2 (part of every x86-64
// CPU, so there is no other path to choose), the edges byte by byte; the result is the same
// bytes either way. Walking tiles keeps both sides' cache lines in use, where the
// element-by-element gather read one byte per cache line.
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vnnx::sim::kernels {

namespace detail {

inline void transpose_bytes_scalar(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss,
                                   std::size_t rows, std::size_t cols) {
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t c = 0; c < cols; ++c) d[static_cast<std::ptrdiff_t>(c) * ds + static_cast<std::ptrdiff_t>(r)] =
            s[static_cast<std::ptrdiff_t>(r) * ss + static_cast<std::ptrdiff_t>(c)];
}

#if defined(__SSE2__)
/// One 16 x 16 tile: rows of s (16 bytes each) become columns of d.
inline void transpose_tile16(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss) {
    __m128i a[16], t[16], u[16];
    for (int r = 0; r < 16; ++r) a[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + r * ss));
    // Bytes of row pairs: t[k] holds columns 0..7, t[k + 8] columns 8..15, of rows 2k, 2k + 1.
    for (int k = 0; k < 8; ++k) {
        t[k] = _mm_unpacklo_epi8(a[2 * k], a[2 * k + 1]);
        t[k + 8] = _mm_unpackhi_epi8(a[2 * k], a[2 * k + 1]);
    }
    // u[4q + j]: columns 4q .. 4q + 3, rows 4j .. 4j + 3 (one 32-bit lane per column).
    for (int h = 0; h < 2; ++h)
        for (int j = 0; j < 4; ++j) {
            u[8 * h + j] = _mm_unpacklo_epi16(t[8 * h + 2 * j], t[8 * h + 2 * j + 1]);
            u[8 * h + j + 4] = _mm_unpackhi_epi16(t[8 * h + 2 * j], t[8 * h + 2 * j + 1]);
        }
    for (int q = 0; q < 4; ++q) {
        // columns 4q, 4q + 1 (lo) and 4q + 2, 4q + 3 (hi) of rows 0..7, then of rows 8..15
        const __m128i lo_a = _mm_unpacklo_epi32(u[4 * q], u[4 * q + 1]);
        const __m128i hi_a = _mm_unpackhi_epi32(u[4 * q], u[4 * q + 1]);
        const __m128i lo_b = _mm_unpacklo_epi32(u[4 * q + 2], u[4 * q + 3]);
        const __m128i hi_b = _mm_unpackhi_epi32(u[4 * q + 2], u[4 * q + 3]);
        std::uint8_t* o = d + 4 * q * ds;
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm_unpacklo_epi64(lo_a, lo_b));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + ds), _mm_unpackhi_epi64(lo_a, lo_b));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 2 * ds), _mm_unpacklo_epi64(hi_a, hi_b));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(o + 3 * ds), _mm_unpackhi_epi64(hi_a, hi_b));
    }
}
#endif

}  // namespace detail

/// Transposes the rows x cols byte matrix s (row stride ss) into d (row stride ds, cols rows).
inline void transpose_bytes(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss, std::size_t rows,
                            std::size_t cols) {
#if defined(__SSE2__)
    const std::size_t r16 = rows & ~std::size_t{15}, c16 = cols & ~std::size_t{15};
    for (std::size_t r = 0; r < r16; r += 16) {
        const auto ri = static_cast<std::ptrdiff_t>(r);
        for (std::size_t c = 0; c < c16; c += 16) {
            const auto ci = static_cast<std::ptrdiff_t>(c);
            detail::transpose_tile16(d + ci * ds + ri, ds, s + ri * ss + ci, ss);
        }
        if (c16 < cols)
            detail::transpose_bytes_scalar(d + static_cast<std::ptrdiff_t>(c16) * ds + ri, ds, s + ri * ss + static_cast<std::ptrdiff_t>(c16),
                                           ss, 16, cols - c16);
    }
    if (r16 < rows)
        detail::transpose_bytes_scalar(d + static_cast<std::ptrdiff_t>(r16), ds, s + static_cast<std::ptrdiff_t>(r16) * ss, ss,
                                       rows - r16, cols);
#else
    // Blocks of 16 x 16 keep both sides' cache lines in use.
    for (std::size_t r = 0; r < rows; r += 16)
        for (std::size_t c = 0; c < cols; c += 16)
            detail::transpose_bytes_scalar(d + static_cast<std::ptrdiff_t>(c) * ds + static_cast<std::ptrdiff_t>(r), ds,
                                           s + static_cast<std::ptrdiff_t>(r) * ss + static_cast<std::ptrdiff_t>(c), ss,
                                           rows - r < 16 ? rows - r : 16, cols - c < 16 ? cols - c : 16);
#endif
}

}  // namespace vnnx::sim::kernels
