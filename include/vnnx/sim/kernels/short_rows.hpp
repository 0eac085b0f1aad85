#pragma once
// rows x w bytes from s (row stride ss) to d (row stride ds), w small: the copies of slices and
// concatenations on an inner axis (YOLO's box rows: 2 bytes per anchor out of 4). A call per
// row costs more than its bytes, so the row size is fixed at compile time for the usual sizes,
// and on AVX-512 the common strided forms run as whole vectors: taking every k-th element
// (a slice into a dense output) is a narrowing move (vpmov*), putting dense elements every
// k-th place (a concatenation's input) is a widening move and a byte-masked store that leaves
// the other inputs' bytes alone. Neither form reads or writes outside the rows.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels {

namespace short_rows_detail {

template <std::size_t B>
inline void fixed(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss, std::size_t rows) {
    for (std::size_t r = 0; r < rows; ++r, d += ds, s += ss) std::memcpy(d, s, B);
}

inline void scalar(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss, std::size_t w, std::size_t rows) {
    switch (w) {
        case 1: fixed<1>(d, ds, s, ss, rows); return;
        case 2: fixed<2>(d, ds, s, ss, rows); return;
        case 3: fixed<3>(d, ds, s, ss, rows); return;
        case 4: fixed<4>(d, ds, s, ss, rows); return;
        case 8: fixed<8>(d, ds, s, ss, rows); return;
        case 16: fixed<16>(d, ds, s, ss, rows); return;
        case 32: fixed<32>(d, ds, s, ss, rows); return;
        case 64: fixed<64>(d, ds, s, ss, rows); return;
        default:
            for (std::size_t r = 0; r < rows; ++r, d += ds, s += ss) std::memcpy(d, s, w);
    }
}

#if VNNX_SIM_X86
// The low (1 << n) - 1 bits, n <= 64.
inline std::uint64_t low_bits(std::size_t n) noexcept { return n >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << n) - 1; }

// Bytes j of a 64-byte vector with j % (k w) < w: the element slots a widened vector fills.
inline std::uint64_t slot_mask(std::size_t w, std::size_t k) noexcept {
    std::uint64_t m = 0;
    for (std::size_t j = 0; j < 64; ++j)
        if (j % (k * w) < w) m |= std::uint64_t{1} << j;
    return m;
}

// Every k-th element of w bytes of a 64-byte vector, packed into the low 64 / k bytes.
template <std::size_t W, std::size_t K>
VNNX_TARGET_AVX512 inline __m256i narrow(__m512i v) {
    if constexpr (W == 1 && K == 2) return _mm512_cvtepi16_epi8(v);
    else if constexpr (W == 1 && K == 4) return _mm256_castsi128_si256(_mm512_cvtepi32_epi8(v));
    else if constexpr (W == 1 && K == 8) return _mm256_castsi128_si256(_mm512_cvtepi64_epi8(v));
    else if constexpr (W == 2 && K == 2) return _mm512_cvtepi32_epi16(v);
    else if constexpr (W == 2 && K == 4) return _mm256_castsi128_si256(_mm512_cvtepi64_epi16(v));
    else return _mm512_cvtepi64_epi32(v);  // W == 4, K == 2
}

// The inverse: 64 / k dense bytes spread so that element i lands in slot i of k elements.
template <std::size_t W, std::size_t K>
VNNX_TARGET_AVX512 inline __m512i widen(__m256i v) {
    if constexpr (W == 1 && K == 2) return _mm512_cvtepu8_epi16(v);
    else if constexpr (W == 1 && K == 4) return _mm512_cvtepu8_epi32(_mm256_castsi256_si128(v));
    else if constexpr (W == 1 && K == 8) return _mm512_cvtepu8_epi64(_mm256_castsi256_si128(v));
    else if constexpr (W == 2 && K == 2) return _mm512_cvtepu16_epi32(v);
    else if constexpr (W == 2 && K == 4) return _mm512_cvtepu16_epi64(_mm256_castsi256_si128(v));
    else return _mm512_cvtepu32_epi64(v);  // W == 4, K == 2
}

// Dense rows of W bytes from rows every K W bytes apart.
template <std::size_t W, std::size_t K>
VNNX_TARGET_AVX512 void gather_rows(std::uint8_t* d, const std::uint8_t* s, std::size_t rows) {
    constexpr std::size_t per = 64 / (K * W);  // rows per vector
    constexpr std::size_t out = per * W;       // bytes out per vector
    for (; rows >= per + 1; rows -= per, s += 64, d += out) {
        // rows > per: the whole 64 bytes lie inside the rows' span (the next row starts there).
        const __m256i v = narrow<W, K>(_mm512_loadu_si512(s));
        if constexpr (out == 32) _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), v);
        else if constexpr (out == 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(v));
        else _mm_storel_epi64(reinterpret_cast<__m128i*>(d), _mm256_castsi256_si128(v));
    }
    if (rows == 0) return;
    const __m512i v = _mm512_maskz_loadu_epi8(low_bits((rows - 1) * K * W + W), s);
    _mm256_mask_storeu_epi8(d, static_cast<__mmask32>(low_bits(rows * W)), narrow<W, K>(v));
}

// Rows every K W bytes apart from dense rows of W bytes; the bytes between them stay.
template <std::size_t W, std::size_t K>
VNNX_TARGET_AVX512 void scatter_rows(std::uint8_t* d, const std::uint8_t* s, std::size_t rows) {
    constexpr std::size_t per = 64 / (K * W);
    constexpr std::size_t in = per * W;
    static const std::uint64_t slots = slot_mask(W, K);
    for (; rows >= per; rows -= per, s += in, d += 64) {
        __m256i v;
        if constexpr (in == 32) v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(s));
        else if constexpr (in == 16) v = _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(s)));
        else v = _mm256_castsi128_si256(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(s)));
        _mm512_mask_storeu_epi8(d, slots, widen<W, K>(v));
    }
    if (rows == 0) return;
    const __m256i v = _mm256_maskz_loadu_epi8(static_cast<__mmask32>(low_bits(rows * W)), s);
    _mm512_mask_storeu_epi8(d, slots & low_bits((rows - 1) * K * W + W), widen<W, K>(v));
}

// One masked move per row of up to 64 bytes.
VNNX_TARGET_AVX512 inline void masked_rows(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss,
                                           std::size_t w, std::size_t rows) {
    const __mmask64 m = low_bits(w);
    for (std::size_t r = 0; r < rows; ++r, d += ds, s += ss) _mm512_mask_storeu_epi8(d, m, _mm512_maskz_loadu_epi8(m, s));
}

template <bool Gather, std::size_t W, std::size_t K>
VNNX_TARGET_AVX512 bool strided_one(std::uint8_t* d, const std::uint8_t* s, std::size_t rows) {
    if constexpr (Gather) gather_rows<W, K>(d, s, rows);
    else scatter_rows<W, K>(d, s, rows);
    return true;
}

// The vector forms above for element sizes 1, 2, 4 and spacings 2, 4, 8 (those with a vpmov);
// false when (w, stride) is none of them.
template <bool Gather>
VNNX_TARGET_AVX512 bool strided_rows(std::uint8_t* d, const std::uint8_t* s, std::size_t w, std::ptrdiff_t stride, std::size_t rows) {
    const auto k = static_cast<std::size_t>(stride) / w;
    if (stride <= 0 || w > 4 || k > 8 || k * w != static_cast<std::size_t>(stride)) return false;
    switch (w * 16 + k) {
        case 1 * 16 + 2: return strided_one<Gather, 1, 2>(d, s, rows);
        case 1 * 16 + 4: return strided_one<Gather, 1, 4>(d, s, rows);
        case 1 * 16 + 8: return strided_one<Gather, 1, 8>(d, s, rows);
        case 2 * 16 + 2: return strided_one<Gather, 2, 2>(d, s, rows);
        case 2 * 16 + 4: return strided_one<Gather, 2, 4>(d, s, rows);
        case 4 * 16 + 2: return strided_one<Gather, 4, 2>(d, s, rows);
        default: return false;
    }
}

VNNX_TARGET_AVX512 inline void avx512(std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss, std::size_t w,
                                      std::size_t rows) {
    if (rows > 1 && ds == static_cast<std::ptrdiff_t>(w) && strided_rows<true>(d, s, w, ss, rows)) return;
    if (rows > 1 && ss == static_cast<std::ptrdiff_t>(w) && strided_rows<false>(d, s, w, ds, rows)) return;
    if (w <= 64 && w != 1 && w != 2 && w != 4 && w != 8 && w != 16 && w != 32 && w != 64) {
        masked_rows(d, ds, s, ss, w, rows);
        return;
    }
    scalar(d, ds, s, ss, w, rows);
}
#endif

}  // namespace short_rows_detail

/// d[r ds + j] = s[r ss + j] for r < rows, j < w. Source and destination rows must not overlap.
inline void short_rows(isa_kind isa, std::uint8_t* d, std::ptrdiff_t ds, const std::uint8_t* s, std::ptrdiff_t ss, std::size_t w,
                       std::size_t rows) {
#if VNNX_SIM_X86
    if (uses_avx512(isa)) {
        short_rows_detail::avx512(d, ds, s, ss, w, rows);
        return;
    }
#endif
    (void)isa;
    short_rows_detail::scalar(d, ds, s, ss, w, rows);
}

}  // namespace vnnx::sim::kernels
