#pragma once
// A byte matrix transpose between strided buffers. Conv weight packing is one ([K][taps] to
// [taps][K] within each block) and was a quarter of a MobileNetV2 compile done byte by byte;
// SSE2 (every x86-64) moves 16x16 tiles in 32 unpacks.
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vnnx {

namespace transpose_detail {
#if defined(__SSE2__)
// Four rounds of pairing row j with row j+8 (unpacklo/hi of bytes) rotate the 8-bit
// (row, column) address left by one each, so after four the row and column nibbles swap.
inline void tile16(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst, std::size_t dst_stride) {
    __m128i v[16], w[16];
    for (int r = 0; r < 16; ++r)
        v[r] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + static_cast<std::size_t>(r) * src_stride));
    for (int round = 0; round < 4; ++round) {
        for (int j = 0; j < 8; ++j) {
            w[2 * j] = _mm_unpacklo_epi8(v[j], v[j + 8]);
            w[2 * j + 1] = _mm_unpackhi_epi8(v[j], v[j + 8]);
        }
        for (int r = 0; r < 16; ++r) v[r] = w[r];
    }
    for (int r = 0; r < 16; ++r)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + static_cast<std::size_t>(r) * dst_stride), v[r]);
}
#endif
}  // namespace transpose_detail

/// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols. The two must not overlap.
inline void transpose_bytes(const std::uint8_t* src, std::size_t src_stride, std::uint8_t* dst,
                            std::size_t dst_stride, std::size_t rows, std::size_t cols) {
    std::size_t r0 = 0;
#if defined(__SSE2__)
    for (; r0 + 16 <= rows; r0 += 16) {
        std::size_t c0 = 0;
        for (; c0 + 16 <= cols; c0 += 16)
            transpose_detail::tile16(src + r0 * src_stride + c0, src_stride, dst + c0 * dst_stride + r0, dst_stride);
        for (std::size_t c = c0; c < cols; ++c)
            for (std::size_t r = r0; r < r0 + 16; ++r) dst[c * dst_stride + r] = src[r * src_stride + c];
    }
#endif
    for (std::size_t c = 0; c < cols; ++c)
        for (std::size_t r = r0; r < rows; ++r) dst[c * dst_stride + r] = src[r * src_stride + c];
}

}  // namespace vnnx
