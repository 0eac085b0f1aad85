#pragma once
// Byte moves of the convolution paths: the packing of four channels into one 32-bit word per
// pixel (the vpdpbusd operand), copies with the int8 sign flip, and the short copies and pad
// fills of output runs.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels::detail {

inline std::int32_t load_i32(const void* p) noexcept {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline std::int64_t load_i64(const void* p) noexcept {
    std::int64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// d[4j + i] = s_i[j * SW] ^ flip for the four channels i of a group.
template <int SW>
inline void interleave4(std::uint8_t* d, const std::uint8_t* s0, const std::uint8_t* s1, const std::uint8_t* s2,
                        const std::uint8_t* s3, int n, std::uint8_t flip) {
    for (int j = 0; j < n; ++j) {
        d[4 * j] = s0[j * SW] ^ flip;
        d[4 * j + 1] = s1[j * SW] ^ flip;
        d[4 * j + 2] = s2[j * SW] ^ flip;
        d[4 * j + 3] = s3[j * SW] ^ flip;
    }
}

#if VNNX_SIM_X86
// interleave4<1> with AVX-512, 64 pixels per step: byte then word unpacks form each pixel's
// 4-byte word inside 128-bit blocks, and a 4x4 transpose of blocks puts the pixels in order.
// The last partial step uses masked loads and stores (no byte outside d[0, 4n) is written).
VNNX_TARGET_AVX512 inline void interleave4_avx512(std::uint8_t* d, const std::uint8_t* s0, const std::uint8_t* s1,
                                                  const std::uint8_t* s2, const std::uint8_t* s3, std::size_t n,
                                                  std::uint8_t flip) {
    const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
    for (std::size_t j = 0; j < n; j += 64) {
        const std::size_t left = n - j;
        const __mmask64 m = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
        const __m512i a = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s0 + j), f);
        const __m512i b = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s1 + j), f);
        const __m512i c = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s2 + j), f);
        const __m512i e = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s3 + j), f);
        const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
        const __m512i ce_lo = _mm512_unpacklo_epi8(c, e), ce_hi = _mm512_unpackhi_epi8(c, e);
        // q_i holds, in block L, pixels 16L + 4i .. 16L + 4i + 3.
        const __m512i q0 = _mm512_unpacklo_epi16(ab_lo, ce_lo), q1 = _mm512_unpackhi_epi16(ab_lo, ce_lo);
        const __m512i q2 = _mm512_unpacklo_epi16(ab_hi, ce_hi), q3 = _mm512_unpackhi_epi16(ab_hi, ce_hi);
        const __m512i t0 = _mm512_shuffle_i64x2(q0, q1, 0x44), t1 = _mm512_shuffle_i64x2(q2, q3, 0x44);
        const __m512i t2 = _mm512_shuffle_i64x2(q0, q1, 0xEE), t3 = _mm512_shuffle_i64x2(q2, q3, 0xEE);
        const __m512i out[4] = {_mm512_shuffle_i64x2(t0, t1, 0x88), _mm512_shuffle_i64x2(t0, t1, 0xDD),
                                _mm512_shuffle_i64x2(t2, t3, 0x88), _mm512_shuffle_i64x2(t2, t3, 0xDD)};
        std::uint8_t* dj = d + 4 * j;
        if (left >= 64) {
            for (int v = 0; v < 4; ++v) _mm512_storeu_si512(dj + 64 * v, out[v]);
            continue;
        }
        for (std::size_t v = 0; v < 4 && 16 * v < left; ++v) {
            const std::size_t bytes = std::min<std::size_t>(64, 4 * (left - 16 * v));
            const __mmask64 mv = bytes >= 64 ? ~__mmask64{0} : (__mmask64{1} << bytes) - 1;
            _mm512_mask_storeu_epi8(dj + 64 * v, mv, out[v]);
        }
    }
}

VNNX_TARGET_AVX512 inline void copy_flip_avx512(std::uint8_t* d, const std::uint8_t* s, std::size_t n,
                                                std::uint8_t flip) {
    const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
    for (; n >= 64; n -= 64, d += 64, s += 64) _mm512_storeu_si512(d, _mm512_xor_si512(_mm512_loadu_si512(s), f));
    const __mmask64 m = (__mmask64{1} << n) - 1;
    _mm512_mask_storeu_epi8(d, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s), f));
}
#endif

// d[i] = s[i] ^ flip (a plain copy without flip). Only the AVX-512 paths bias inputs (flip != 0).
inline void copy_flip(std::uint8_t* d, const std::uint8_t* s, std::size_t n, std::uint8_t flip) {
    if (flip == 0) {
        std::memcpy(d, s, n);
        return;
    }

#if VNNX_SIM_X86
    copy_flip_avx512(d, s, n, flip);
#else
    for (std::size_t i = 0; i < n; ++i) d[i] = s[i] ^ flip;
#endif
}

#if VNNX_SIM_X86
// Copies n <= 64 bytes (a tile row's run) with one masked load and store: the runs are short
// (an output row of a small layer), and a library call per run cost more than the arithmetic.
VNNX_TARGET_AVX512 inline void copy_short_avx512(std::uint8_t* d, const std::uint8_t* s, std::size_t n) {
    const __mmask64 m = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    _mm512_mask_storeu_epi8(d, m, _mm512_maskz_loadu_epi8(m, s));
}
#endif

#if VNNX_SIM_X86
// A run of the pad byte: masked stores, since the runs are short (a gap between rows is the pad
// width) and a library call per run cost more than the stores.
VNNX_TARGET_AVX512 inline void fill_run_avx512(std::uint8_t* d, std::size_t n, __m512i v) {
    for (; n >= 64; n -= 64, d += 64) _mm512_storeu_si512(d, v);
    _mm512_mask_storeu_epi8(d, (__mmask64{1} << n) - 1, v);
}

VNNX_TARGET_AVX512 inline void fill_short_avx512(std::uint8_t* d, std::size_t n, std::uint8_t fill) {
    fill_run_avx512(d, n, _mm512_set1_epi8(static_cast<char>(fill)));
}
#endif

// n bytes of `fill` (a pad gap between output rows).
template <class Isa> inline void fill_short(Isa, std::uint8_t* d, std::size_t n, std::uint8_t fill) {
#if VNNX_SIM_X86
    if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
        fill_short_avx512(d, n, fill);
        return;
    }
#endif
    std::memset(d, fill, n);
}

template <class Isa> inline void copy_short(Isa, std::uint8_t* d, const std::uint8_t* s, std::size_t n) {
#if VNNX_SIM_X86
    if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
        for (; n > 64; n -= 64, d += 64, s += 64) copy_short_avx512(d, s, 64);
        copy_short_avx512(d, s, n);
        return;
    }
#endif
    std::memcpy(d, s, n);
}

}  // namespace vnnx::sim::kernels::detail
