#pragma once
// groups = 1 on AVX-512 VNNI: the pixel-tile sums of one k-block (vpdpbusd over 4-channel
// words), requantized in memory or in registers, and the one-pixel kernel for classifiers and a
// layer's last few pixels.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/conv_copies.hpp"
#include "vnnx/sim/kernels/requant.hpp"

namespace vnnx::sim::kernels::detail {

// The most pixels a last tile may hold and still take the one-pixel kernel (vnni_pixel), as
// measured: with one or two, 7x7 layers ran 16-24% faster; with four (14x14 maps), narrow
// layers ran slower (each channel's few sums are requantized through memory).
inline constexpr std::size_t tail_pixels_max = 2;

#if VNNX_SIM_X86
// groups = 1, AVX-512 VNNI: acc[KB][NV*16] of one k-block over the pixel tile (NV = 3 except
// for the last tile of a layer, which computes only the vectors that hold pixels). The sums of
// all (channel group, tap) steps start from `init`.
template <int NV>
VNNX_TARGET_AVX512 inline void vnni_accumulate(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                               const std::int64_t* taps, int ntaps, const std::int8_t* w,
                                               const __m512i (&init)[8], __m512i (&acc)[8][NV]) {
    constexpr int KB = 8;
#pragma GCC unroll 8
    for (int r = 0; r < KB; ++r)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[r][v] = init[r];
    for (int cq = 0; cq < cq_n; ++cq) {
        const std::uint8_t* xc = x + cq * cq_stride;
        for (int t = 0; t < ntaps; ++t) {
            const std::uint8_t* p = xc + taps[t] * 4;
            __m512i xv[NV];
#pragma GCC unroll 3
            for (int v = 0; v < NV; ++v) xv[v] = _mm512_loadu_si512(p + 64 * v);
#pragma GCC unroll 8
            for (int r = 0; r < KB; ++r) {
                const __m512i wv = _mm512_set1_epi32(load_i32(w + r * 4));
#pragma GCC unroll 3
                for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xv[v], wv);
            }
            w += KB * 4;
        }
    }
}

// The raw sums (from zero), acc_out[r * 48 + 16 v], for requantization in memory.
template <int NV>
VNNX_TARGET_AVX512 inline void vnni_tile(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                         const std::int64_t* taps, int ntaps, const std::int8_t* w,
                                         std::int32_t* acc_out) {
    __m512i init[8], acc[8][NV];
#pragma GCC unroll 8
    for (auto& i : init) i = _mm512_setzero_si512();
    vnni_accumulate<NV>(x, cq_stride, cq_n, taps, ntaps, w, init, acc);
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) _mm512_storeu_si512(acc_out + r * 48 + v * 16, acc[r][v]);
}

// One output channel's requantization in the form the register path wants: the correction
// (the accumulators start there) and an accumulator clamp that makes the output clamp
// unnecessary (acc_clamp_range).
struct channel_requant {
    std::int64_t c = 0;
    std::int32_t om = 0, o = 8, corr = 0, lo = 0, hi = 0;
    // The channel's own form (AMX): 3 biased 32-bit, 2 plain 32-bit, 1 64-bit with the
    // accumulator clamp, 0 none; for the 32-bit forms requant_vec's c32.
    std::int32_t form = 0, c32 = 0;
};

// groups = 1, AVX-512 VNNI, requantized in registers: rows r < `rows` of the k-block go to
// out + r * pitch, NV*16 bytes each. Every channel of the block must have an accumulator
// clamp (channel_requant); the 64-bit products are then never clamped. Narrow: every channel's
// range is narrow, Biased: and biased (requant16). Fill: the lanes gaps[v] of vector v are
// stored as `fill` instead (the pad gaps a tile at the padded row pitch covers).
template <int NV, bool Narrow, bool Biased, bool Fill = false>
VNNX_TARGET_AVX512 inline void vnni_tile_requant(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                                 const std::int64_t* taps, int ntaps, const std::int8_t* w,
                                                 const channel_requant* rq, int rows, std::uint8_t* out,
                                                 std::size_t pitch, const __mmask16* gaps = nullptr,
                                                 std::uint8_t fill = 0) {
    // The masks in registers (a load per row would be needed if `out` could alias them).
    const __m512i pad = _mm512_set1_epi32(fill);
    __mmask16 keep[NV];
    for (int v = 0; v < NV; ++v) keep[v] = Fill ? static_cast<__mmask16>(~gaps[v]) : __mmask16{0xFFFF};
    __m512i init[8], acc[8][NV];
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) init[r] = _mm512_set1_epi32(rq[r].corr);
    vnni_accumulate<NV>(x, cq_stride, cq_n, taps, ntaps, w, init, acc);
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) {
        if (r >= rows) break;
        // The output clamp is never needed (only the accumulator range is used).
        const requant_vec q = make_requant_vec(static_cast<std::uint16_t>(rq[r].om), rq[r].c, rq[r].o, 0, 0,
                                               acc_range{rq[r].lo, rq[r].hi, true, Narrow, Biased});
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) {
            const __m512i y = Fill ? requant16_pad<Narrow, Biased>(acc[r][v], q, keep[v], pad)
                                   : requant16<true, Narrow, Biased>(acc[r][v], q);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(out + r * pitch + 16 * v), _mm512_cvtepi32_epi8(y));
        }
    }
}

// groups = 1, AVX-512 VNNI, one output pixel (a classifier, or the few pixels a last tile
// would hold in a mostly empty vector): lanes over output channels instead of pixels. One
// k-block's packed weights for (group, tap) steps s and s+1 are 64 contiguous bytes [s][8 k][4 c]
// [s+1][8 k][4 c]; x4[s] holds the pixel's four (biased) input bytes of step s
// (vnni_pixel_words). Lanes 0-7 sum the even steps, 8-15 the odd ones; acc_out[r] = k-block row r.
VNNX_TARGET_AVX512 inline __m512i vnni_pixel_pair(const std::uint32_t* x4) {
    return _mm512_inserti64x4(_mm512_set1_epi32(static_cast<int>(x4[0])), _mm256_set1_epi32(static_cast<int>(x4[1])), 1);
}

// Four accumulators: one chain of dependent products ran at the instruction's latency, not its
// rate (the sums wrap, so their order does not change them). The pixel's words are broadcast
// from four bytes each: reading them as whole vectors, a classifier's weights streaming from
// memory took 40% longer.
VNNX_TARGET_AVX512 inline void vnni_pixel(const std::uint32_t* x4, int steps, const std::int8_t* w,
                                          std::int32_t* acc_out) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0;
    const int pairs = steps / 2;
    int j = 0;
    for (; j + 4 <= pairs; j += 4) {
        const std::uint32_t* x = x4 + 2 * j;
        const std::int8_t* wj = w + 64 * j;
        a0 = _mm512_dpbusd_epi32(a0, vnni_pixel_pair(x), _mm512_loadu_si512(wj));
        a1 = _mm512_dpbusd_epi32(a1, vnni_pixel_pair(x + 2), _mm512_loadu_si512(wj + 64));
        a2 = _mm512_dpbusd_epi32(a2, vnni_pixel_pair(x + 4), _mm512_loadu_si512(wj + 128));
        a3 = _mm512_dpbusd_epi32(a3, vnni_pixel_pair(x + 6), _mm512_loadu_si512(wj + 192));
    }
    for (; j < pairs; ++j) a0 = _mm512_dpbusd_epi32(a0, vnni_pixel_pair(x4 + 2 * j), _mm512_loadu_si512(w + 64 * j));
    if (steps & 1) {  // the last step alone: its 32 weight bytes end the block
        const __m512i xv = _mm512_maskz_set1_epi32(0x00FF, static_cast<int>(x4[2 * pairs]));
        a1 = _mm512_dpbusd_epi32(a1, xv, _mm512_zextsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w + 64 * pairs))));
    }
    const __m512i acc = _mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3));
    const __m256i sum = _mm256_add_epi32(_mm512_castsi512_si256(acc), _mm512_extracti64x4_epi64(acc, 1));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out), sum);
}

// Grid pixel q's input words for vnni_pixel: step s = group * ntaps + tap reads the word at
// pixel q + taps[tap] of the group's packed plane.
inline void vnni_pixel_words(const std::uint8_t* xp, std::size_t cstride, std::size_t q, int cq_n,
                             const std::int64_t* taps, int ntaps, std::uint32_t* x4) {
    for (int g = 0; g < cq_n; ++g)
        for (int t = 0; t < ntaps; ++t)
            *x4++ = static_cast<std::uint32_t>(load_i32(xp + static_cast<std::size_t>(g) * cstride +
                                                        (static_cast<std::ptrdiff_t>(q) + taps[t]) * 4));
}
#endif

}  // namespace vnnx::sim::kernels::detail
