#pragma once
// groups = 1 on AVX2: inputs widened to int16 and multiplied by vpmaddwd (exact, where
// vpmaddubsw would saturate), 8 pixels by 4 output channels, requantized in registers where the
// channel has an accumulator clamp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/conv_copies.hpp"
#include "vnnx/sim/kernels/conv_vnni.hpp"  // channel_requant
#include "vnnx/sim/kernels/requant.hpp"

namespace vnnx::sim::kernels::detail {

#if VNNX_SIM_X86
// groups = 1, AVX2: the sums of 8 pixels for 4 output channels, sums[r] = channel r in pixel
// order; weights are int16 quads, inputs widened to int16.
template <bool Signed>
VNNX_TARGET_AVX2 inline void avx2_sums(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                       const std::int64_t* taps, int ntaps, const std::int16_t* w, __m256i (&sums)[4]) {
    constexpr int KB = 4;
    __m256i acc[KB][2];
#pragma GCC unroll 4
    for (int r = 0; r < KB; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int cq = 0; cq < cq_n; ++cq) {
        const std::uint8_t* xc = x + cq * cq_stride;
        for (int t = 0; t < ntaps; ++t) {
            const std::uint8_t* p = xc + taps[t] * 4;
            const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
            const __m256i x0 = Signed ? _mm256_cvtepi8_epi16(r0) : _mm256_cvtepu8_epi16(r0);
            const __m256i x1 = Signed ? _mm256_cvtepi8_epi16(r1) : _mm256_cvtepu8_epi16(r1);
#pragma GCC unroll 4
            for (int r = 0; r < KB; ++r) {
                const __m256i wv = _mm256_set1_epi64x(load_i64(w + r * 4));
                acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x0, wv));
                acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x1, wv));
            }
            w += KB * 4;
        }
    }
    // Each lane holds a pair sum (channels 0+1 or 2+3) of one pixel; hadd joins the pairs, the
    // permute restores pixel order 0..7.
#pragma GCC unroll 4
    for (int r = 0; r < KB; ++r) sums[r] = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
}

// groups = 1, AVX2, one output pixel (a classifier): lanes over the 4 output channels of a
// block. x16[j] holds the pixel's four inputs of (group, tap) pair j widened to int16; the
// packed weights of a pair are [4 k][4 c] int16, one vector. acc_out[r] = channel r.
VNNX_TARGET_AVX2 inline void avx2_pixel(const std::int64_t* x16, int n, const std::int16_t* w, std::int32_t* acc_out) {
    __m256i acc[4] = {_mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256(), _mm256_setzero_si256()};
    int j = 0;
    for (; j + 4 <= n; j += 4)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u)
            acc[u] = _mm256_add_epi32(acc[u], _mm256_madd_epi16(_mm256_set1_epi64x(x16[j + u]),
                                                                 _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * (j + u)))));
    for (; j < n; ++j)
        acc[0] = _mm256_add_epi32(acc[0], _mm256_madd_epi16(_mm256_set1_epi64x(x16[j]),
                                                             _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 16 * j))));
    const __m256i s = _mm256_add_epi32(_mm256_add_epi32(acc[0], acc[1]), _mm256_add_epi32(acc[2], acc[3]));
    // Lanes 2r, 2r+1 are channel r's pair sums; hadd joins them: channels 0, 1 in the low
    // 128-bit half, 2, 3 in the high one.
    const __m256i h = _mm256_hadd_epi32(s, s);
    acc_out[0] = _mm256_extract_epi32(h, 0);
    acc_out[1] = _mm256_extract_epi32(h, 1);
    acc_out[2] = _mm256_extract_epi32(h, 4);
    acc_out[3] = _mm256_extract_epi32(h, 5);
}

// groups = 1, AVX2: acc[4][8] to memory.
template <bool Signed>
VNNX_TARGET_AVX2 inline void avx2_tile(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                       const std::int64_t* taps, int ntaps, const std::int16_t* w,
                                       std::int32_t* acc_out) {
    __m256i sums[4];
    avx2_sums<Signed>(x, cq_stride, cq_n, taps, ntaps, w, sums);
#pragma GCC unroll 4
    for (int r = 0; r < 4; ++r) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + r * 8), sums[r]);
}

// groups = 1, AVX2, requantized in registers: rows r < `rows` of the 4-channel block go to
// out + r * pitch, 8 bytes each. Every channel of the block needs an accumulator clamp
// (channel_requant::form 1-3, as on AVX-512; requant8 takes form 3 as form 2).
template <bool Signed>
VNNX_TARGET_AVX2 inline void avx2_tile_requant(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                               const std::int64_t* taps, int ntaps, const std::int16_t* w,
                                               const channel_requant* rq, int rows, std::uint8_t* out,
                                               std::size_t pitch) {
    __m256i sums[4];
    avx2_sums<Signed>(x, cq_stride, cq_n, taps, ntaps, w, sums);
    for (int r = 0; r < rows; ++r) {
        const channel_requant& c = rq[r];
        const requant_vec8 q{_mm256_set1_epi32(c.lo),  _mm256_set1_epi32(c.hi),    _mm256_set1_epi64x(c.om),
                             _mm256_set1_epi64x(c.c),  _mm256_set1_epi32(c.om),    _mm256_set1_epi32(c.c32),
                             _mm_cvtsi32_si128(c.o)};
        const __m256i a = _mm256_add_epi32(sums[r], _mm256_set1_epi32(c.corr));
        const __m256i v = c.form >= 2 ? requant8<2>(a, q) : requant8<1>(a, q);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + static_cast<std::size_t>(r) * pitch), low_bytes8(v));
    }
}
#endif

}  // namespace vnnx::sim::kernels::detail
