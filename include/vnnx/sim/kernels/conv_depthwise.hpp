#pragma once
// Depthwise convolutions: AVX-512 VNNI four taps per vpdpbusd (a tile of interleaved taps, or
// a kernel row's adjacent columns from shifted loads, requantized in registers), AVX2 two taps
// per vpmaddwd. Column stride 2 is kernels/dw_stride2.hpp.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/conv_copies.hpp"
#include "vnnx/sim/kernels/conv_vnni.hpp"
#include "vnnx/sim/kernels/grid_store.hpp"
#include "vnnx/sim/kernels/requant.hpp"

namespace vnnx::sim::kernels::detail {

#if VNNX_SIM_X86
// Depthwise, AVX-512 VNNI: 64 pixels of one channel, four taps per vpdpbusd. The bytes of taps
// 4g..4g+3 at each pixel are interleaved into one 32-bit lane with two rounds of unpacks; the
// unpacks work inside 128-bit blocks, so accumulator a holds pixels 16l+4a..16l+4a+3 in block l
// and a 4x4 transpose of blocks restores pixel order at the end. `taps` and `w4` come in groups of
// four (padding taps have weight 0); `flip` (0x80) makes int8 inputs unsigned, the caller
// subtracts 128*sum(w).
VNNX_TARGET_AVX512 inline void dw_tile_vnni(const std::uint8_t* x, const std::int64_t* taps, int groups,
                                            const std::int32_t* w4, std::uint8_t flip, std::int32_t* acc_out) {
    __m512i acc[4];
    for (auto& a : acc) a = _mm512_setzero_si512();
    const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
    for (int g = 0; g < groups; ++g) {
        const std::int64_t* t = taps + 4 * g;
        const __m512i a = _mm512_xor_si512(_mm512_loadu_si512(x + t[0]), vflip);
        const __m512i b = _mm512_xor_si512(_mm512_loadu_si512(x + t[1]), vflip);
        const __m512i c = _mm512_xor_si512(_mm512_loadu_si512(x + t[2]), vflip);
        const __m512i d = _mm512_xor_si512(_mm512_loadu_si512(x + t[3]), vflip);
        const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
        const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
        const __m512i wv = _mm512_set1_epi32(w4[g]);
        acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_unpacklo_epi16(ab_lo, cd_lo), wv);
        acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_unpackhi_epi16(ab_lo, cd_lo), wv);
        acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_unpacklo_epi16(ab_hi, cd_hi), wv);
        acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_unpackhi_epi16(ab_hi, cd_hi), wv);
    }
    const __m512i t0 = _mm512_shuffle_i32x4(acc[0], acc[1], 0x44), t1 = _mm512_shuffle_i32x4(acc[0], acc[1], 0xEE);
    const __m512i t2 = _mm512_shuffle_i32x4(acc[2], acc[3], 0x44), t3 = _mm512_shuffle_i32x4(acc[2], acc[3], 0xEE);
    _mm512_storeu_si512(acc_out, _mm512_shuffle_i32x4(t0, t2, 0x88));
    _mm512_storeu_si512(acc_out + 16, _mm512_shuffle_i32x4(t0, t2, 0xDD));
    _mm512_storeu_si512(acc_out + 32, _mm512_shuffle_i32x4(t1, t3, 0x88));
    _mm512_storeu_si512(acc_out + 48, _mm512_shuffle_i32x4(t1, t3, 0xDD));
}

// Depthwise, AVX-512 VNNI, column stride and dilation 1: tiles t0..t1 of 64 grid pixels of one
// channel, with no byte shuffles. Lane l of phase r (0..3) is pixel 4l+r: a load at offset r
// puts that pixel's input bytes at columns kx..kx+3 of one kernel row in one 32-bit word, so one
// vpdpbusd applies four horizontal taps (`w4` holds 0 past the kernel width). `offs`/`w4` have
// one entry per (kernel row, column chunk of four). The input is pre-biased (+128) when signed,
// and the accumulators start at the bias correction. The four phases are requantized (as
// requant_row_avx512; with `range.ok` the accumulators are clamped instead of the results, see
// acc_clamp_range) and their bytes merged into pixel order with shifts. With `Flip` the input
// is signed as it is, and each load is biased in a register (no pass to copy it biased).
template <bool AccClamp, bool Narrow = false, bool Biased = false, bool Flip = false>
VNNX_TARGET_AVX512 inline void dw_rows_vnni(const std::uint8_t* x, std::size_t t0, std::size_t t1,
                                            const std::int64_t* offs, int groups, const std::int32_t* w4,
                                            std::int32_t corr, std::uint16_t om, std::int64_t c, int o, int lo,
                                            int hi, acc_range range, const grid_out& out) {
    const requant_vec q = make_requant_vec(om, c, o, lo, hi, range);
    const __m512i byte = _mm512_set1_epi32(0xFF);
    std::size_t q0 = t0 * 64, oy = q0 / out.wp, ox = q0 % out.wp;
    const std::size_t step_y = 64 / out.wp, step_x = 64 % out.wp;
    for (std::size_t t = t0; t < t1; ++t) {
        __m512i acc[4];
#pragma GCC unroll 4
        for (auto& a : acc) a = _mm512_set1_epi32(corr);
        for (int g = 0; g < groups; ++g) {
            const std::uint8_t* p = x + q0 + offs[g];
            const __m512i wv = _mm512_set1_epi32(w4[g]);
#pragma GCC unroll 4
            for (int r = 0; r < 4; ++r) {
                __m512i v = _mm512_loadu_si512(p + r);
                if constexpr (Flip) v = _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80)));
                acc[r] = _mm512_dpbusd_epi32(acc[r], v, wv);
            }
        }
        __m512i v[4];
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) v[r] = _mm512_and_si512(requant16<AccClamp, Narrow, Biased>(acc[r], q), byte);
        const __m512i lo2 = _mm512_or_si512(v[0], _mm512_slli_epi32(v[1], 8));
        const __m512i hi2 = _mm512_or_si512(_mm512_slli_epi32(v[2], 16), _mm512_slli_epi32(v[3], 24));
        const __m512i res = _mm512_or_si512(lo2, hi2);
        store_grid_tile(res, q0, oy, ox, out);
        q0 += 64;
        ox += step_x;
        oy += step_y;
        if (ox >= out.wp) ox -= out.wp, ++oy;
    }
}

// Channels c0..c1 of a depthwise item through dw_rows_vnni, all of one requantization form: a
// small plane is one to four tiles per channel, and a call per channel from the item's loop
// (its arguments, the form's choice) cost about as much as a tile.
struct dw_rows_channels {
    const std::uint8_t* in;      // channels c < c_inplace are read in place, at in + c * cstride
    const std::uint8_t* packed;  // the others at packed + (c - c_inplace) * cstride
    std::size_t c_inplace, cstride;
    const std::int64_t* offs;
    int groups;
    const std::int32_t* w4;  // [c][group]
    const std::int32_t* corr;
    const std::uint16_t* om;
    const std::int64_t* c;
    const std::uint8_t* shift;
    int lo, hi;
    const acc_range* range;
    grid_out out;  // channel 0's; channel c's output starts plane * c later
    std::size_t plane;
};

template <bool AccClamp, bool Narrow, bool Biased, bool Flip>
VNNX_TARGET_AVX512 inline void dw_rows_vnni_channels(const dw_rows_channels& a, std::size_t c0, std::size_t c1,
                                                     std::size_t t0, std::size_t t1) {
    for (std::size_t ch = c0; ch < c1; ++ch) {
        grid_out g = a.out;
        g.yk += ch * a.plane;
        const std::uint8_t* x = ch < a.c_inplace ? a.in + ch * a.cstride : a.packed + (ch - a.c_inplace) * a.cstride;
        dw_rows_vnni<AccClamp, Narrow, Biased, Flip>(x, t0, t1, a.offs, a.groups,
                                                     a.w4 + ch * static_cast<std::size_t>(a.groups), a.corr[ch], a.om[ch],
                                                     a.c[ch], a.shift[ch], a.lo, a.hi, a.range[ch], g);
    }
}

// Depthwise, AVX2: the sums of 32 pixels of one channel, sums[i] = pixels 8i..8i+7. Taps go
// in pairs, their inputs interleaved as int16 so that one vpmaddwd applies both (w2 holds the
// pair's weights as two int16; an odd last tap is paired with weight 0). The unpacks work
// inside 128-bit lanes; the permutes at the end restore pixel order.
template <bool Signed>
VNNX_TARGET_AVX2 inline void dw_sums_avx2(const std::uint8_t* x, const std::int64_t* taps, int pairs,
                                          const std::int32_t* w2, __m256i (&sums)[4]) {
    __m256i acc[4];
    for (auto& a : acc) a = _mm256_setzero_si256();
    for (int t = 0; t < pairs; ++t) {
        const std::uint8_t* p0 = x + taps[2 * t];
        const std::uint8_t* p1 = x + taps[2 * t + 1];
        const __m256i wv = _mm256_set1_epi32(w2[t]);
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) {
            const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p0 + 16 * v));
            const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p1 + 16 * v));
            const __m256i a = Signed ? _mm256_cvtepi8_epi16(r0) : _mm256_cvtepu8_epi16(r0);
            const __m256i b = Signed ? _mm256_cvtepi8_epi16(r1) : _mm256_cvtepu8_epi16(r1);
            acc[2 * v] = _mm256_add_epi32(acc[2 * v], _mm256_madd_epi16(_mm256_unpacklo_epi16(a, b), wv));
            acc[2 * v + 1] = _mm256_add_epi32(acc[2 * v + 1], _mm256_madd_epi16(_mm256_unpackhi_epi16(a, b), wv));
        }
    }
    // acc[2v] holds pixels 16v + {0-3 | 8-11}, acc[2v+1] pixels 16v + {4-7 | 12-15}.
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) {
        sums[2 * v] = _mm256_permute2x128_si256(acc[2 * v], acc[2 * v + 1], 0x20);
        sums[2 * v + 1] = _mm256_permute2x128_si256(acc[2 * v], acc[2 * v + 1], 0x31);
    }
}

// Depthwise, AVX2: 32 pixels of one channel to memory.
template <bool Signed>
VNNX_TARGET_AVX2 inline void dw_tile_avx2(const std::uint8_t* x, const std::int64_t* taps, int pairs,
                                          const std::int32_t* w2, std::int32_t* acc_out) {
    __m256i sums[4];
    dw_sums_avx2<Signed>(x, taps, pairs, w2, sums);
    for (int i = 0; i < 4; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + 8 * i), sums[i]);
}

// Depthwise, AVX2: tiles t0..t1 of 32 pixels of one channel requantized in registers (the
// channel has an accumulator clamp: Form as requant8). Whole tiles go to `dense` + q0 when
// q0 + 32 <= dense_end, the others through `row` and the caller's `spill(row, q0)`.
template <bool Signed, int Form, class Spill>
VNNX_TARGET_AVX2 inline void dw_rows_avx2(const std::uint8_t* x, std::size_t t0, std::size_t t1,
                                          const std::int64_t* taps, int pairs, const std::int32_t* w2,
                                          const requant_vec8& q, std::uint8_t* dense, std::size_t dense_end,
                                          Spill&& spill) {
    alignas(32) std::uint8_t row[32];
    for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t q0 = t * 32;
        __m256i sums[4];
        dw_sums_avx2<Signed>(x + q0, taps, pairs, w2, sums);
        const bool direct = dense != nullptr && q0 + 32 <= dense_end;
        std::uint8_t* dst = direct ? dense + q0 : row;
#pragma GCC unroll 4
        for (int i = 0; i < 4; ++i)
            _mm_storel_epi64(reinterpret_cast<__m128i*>(dst + 8 * i), low_bytes8(requant8<Form>(sums[i], q)));
        if (!direct) spill(row, q0);
    }
}
#endif

}  // namespace vnnx::sim::kernels::detail
