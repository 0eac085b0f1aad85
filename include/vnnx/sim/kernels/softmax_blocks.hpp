#pragma once
// The SOFTMAX layer over many short vectors lying side by side (YOLO's DFL: 16 bins for each of
// 33600 box sides, the bins `inner` elements apart). Blocks of up to 64 neighbouring vectors are
// done together, so every loop runs along contiguous memory and the compiler vectorises the max,
// the table lookups, the sums and the rounding across the block. One body, compiled once per
// ISA tag through the target attribute of its caller (AVX-512: written by hand, 16 vectors per
// step); the arithmetic is the scalar layer's: e = E[x - max + 127], y = round_half_up(e · k / Σe)
// + z, clamped.
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"

namespace vnnx::sim::kernels {

struct softmax_params {
    const std::uint32_t* table;  // 256 entries, indexed by the int8 code's byte
    double k;                    // 2^16 · the output multiplier; below 2^30 (int32 rounding)
    std::int32_t zo, lo, hi;     // output zero point and clamp range
    std::int64_t n, inner, outer;
};

namespace detail {

inline constexpr std::int64_t softmax_block = 64;

// Vectors [b0, b0 + w) of row a; eb holds n · 64 exponentials. False when a sum is zero.
template <class X, class Y>
[[gnu::always_inline]] inline bool softmax_one_block(const softmax_params& p, const X* x, Y* y, std::int64_t a,
                                                     std::int64_t b0, std::uint32_t* eb) {
    constexpr std::int64_t B = softmax_block;
    const std::int64_t w = std::min(B, p.inner - b0), base = a * p.n * p.inner + b0;
    std::int32_t mx[B];
    std::uint64_t sum[B];
    double scale[B];
    for (std::int64_t b = 0; b < w; ++b) {
        mx[b] = INT32_MIN;
        sum[b] = 0;
    }
    for (std::int64_t j = 0; j < p.n; ++j) {
        const X* xj = x + base + j * p.inner;
        for (std::int64_t b = 0; b < w; ++b) mx[b] = std::max<std::int32_t>(mx[b], xj[b]);
    }
    for (std::int64_t j = 0; j < p.n; ++j) {
        const X* xj = x + base + j * p.inner;
        std::uint32_t* ej = eb + j * B;
        for (std::int64_t b = 0; b < w; ++b) {
            ej[b] = p.table[static_cast<std::uint8_t>(xj[b] - mx[b] + 127)];
            sum[b] += ej[b];
        }
    }
    bool ok = true;
    for (std::int64_t b = 0; b < w; ++b) {
        ok = ok && sum[b] != 0;
        scale[b] = p.k / static_cast<double>(sum[b] + (sum[b] == 0));
    }
    for (std::int64_t j = 0; j < p.n; ++j) {
        Y* yj = y + base + j * p.inner;
        const std::uint32_t* ej = eb + j * B;
        for (std::int64_t b = 0; b < w; ++b) {
            // Half up for q >= 0; q < 2^31, so the int32 truncation is exact.
            const double q = static_cast<double>(ej[b]) * scale[b];
            const auto r = static_cast<std::int32_t>(q);
            const std::int32_t v = r + static_cast<std::int32_t>(q - static_cast<double>(r) >= 0.5) + p.zo;
            yj[b] = static_cast<Y>(std::clamp(v, p.lo, p.hi));
        }
    }
    return ok;
}

// Blocks [i0, i1) of the outer · ceil(inner / 64) blocks.
template <class X, class Y>
[[gnu::always_inline]] inline bool softmax_block_range(const softmax_params& p, const X* x, Y* y, std::size_t i0,
                                                       std::size_t i1) {
    std::vector<std::uint32_t> eb(static_cast<std::size_t>(p.n * softmax_block));
    const auto per_row = static_cast<std::size_t>((p.inner + softmax_block - 1) / softmax_block);
    bool ok = true;
    for (std::size_t i = i0; i < i1; ++i)
        ok = softmax_one_block(p, x, y, static_cast<std::int64_t>(i / per_row),
                               static_cast<std::int64_t>(i % per_row) * softmax_block, eb.data()) && ok;
    return ok;
}

template <class X, class Y>
inline bool softmax_range(isa::scalar, const softmax_params& p, const X* x, Y* y, std::size_t i0, std::size_t i1) {
    return softmax_block_range(p, x, y, i0, i1);
}
template <class X, class Y>
VNNX_TARGET_AVX2 inline bool softmax_range(isa::avx2, const softmax_params& p, const X* x, Y* y, std::size_t i0,
                                           std::size_t i1) {
    return softmax_block_range(p, x, y, i0, i1);
}

#if VNNX_SIM_X86
// 16 codes (lanes of `live`) as int32.
template <class X>
VNNX_TARGET_AVX512 inline __m512i softmax16_load(__mmask16 live, const X* at) {
    const __m128i v = live == 0xFFFF ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(at)) : _mm_maskz_loadu_epi8(live, at);
    if constexpr (std::is_signed_v<X>) return _mm512_cvtepi8_epi32(v);
    else return _mm512_cvtepu8_epi32(v);
}

// round_half_up(e · scale) for 8 lanes, as the scalar form: truncate, then up when the rest >= 0.5.
VNNX_TARGET_AVX512 inline __m256i softmax8_round(__m256i e, __m512d scale) {
    const __m512d q = _mm512_mul_pd(_mm512_cvtepu32_pd(e), scale);
    const __m256i r = _mm512_cvttpd_epi32(q);
    const __mmask8 up = _mm512_cmp_pd_mask(_mm512_sub_pd(q, _mm512_cvtepi32_pd(r)), _mm512_set1_pd(0.5), _CMP_GE_OQ);
    return _mm256_mask_sub_epi32(r, up, r, _mm256_set1_epi32(-1));
}

// 16 neighbouring vectors (lanes below `w`) of row a from column b0, by hand: the table lookup
// is a gather, the sums and the scaling are in double as the scalar form's (the sum of at most
// n 32-bit exponentials is exact in double below 2^53 for n < 2^21), the rounding the same
// truncation and half-up step. eb holds n · 16 exponentials. False when a live sum is zero.
template <class X, class Y>
VNNX_TARGET_AVX512 inline bool softmax16_avx512(const softmax_params& p, const X* x, Y* y, std::int64_t base,
                                                std::int64_t w, std::uint32_t* eb) {
    const __mmask16 live = w >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << w) - 1);
    __m512i mx = _mm512_set1_epi32(INT32_MIN);
    for (std::int64_t j = 0; j < p.n; ++j) mx = _mm512_max_epi32(mx, softmax16_load(live, x + base + j * p.inner));
    const __m512i bias = _mm512_sub_epi32(_mm512_set1_epi32(127), mx), byte = _mm512_set1_epi32(0xFF);
    __m512d sum_lo = _mm512_setzero_pd(), sum_hi = _mm512_setzero_pd();
    for (std::int64_t j = 0; j < p.n; ++j) {
        const __m512i idx = _mm512_and_si512(_mm512_add_epi32(softmax16_load(live, x + base + j * p.inner), bias), byte);
        const __m512i e = _mm512_i32gather_epi32(idx, p.table, 4);
        _mm512_storeu_si512(eb + j * 16, e);
        sum_lo = _mm512_add_pd(sum_lo, _mm512_cvtepu32_pd(_mm512_castsi512_si256(e)));
        sum_hi = _mm512_add_pd(sum_hi, _mm512_cvtepu32_pd(_mm512_extracti64x4_epi64(e, 1)));
    }
    const __m512d zero = _mm512_setzero_pd();
    const __mmask16 empty = static_cast<__mmask16>(_mm512_cmp_pd_mask(sum_lo, zero, _CMP_EQ_OQ) |
                                                   (_mm512_cmp_pd_mask(sum_hi, zero, _CMP_EQ_OQ) << 8));
    if ((empty & live) != 0) return false;
    const __m512d k = _mm512_set1_pd(p.k);
    const __m512d scale_lo = _mm512_div_pd(k, sum_lo), scale_hi = _mm512_div_pd(k, sum_hi);
    const __m512i zo = _mm512_set1_epi32(p.zo), lo = _mm512_set1_epi32(p.lo), hi = _mm512_set1_epi32(p.hi);
    for (std::int64_t j = 0; j < p.n; ++j) {
        const __m512i e = _mm512_loadu_si512(eb + j * 16);
        const __m256i r_lo = softmax8_round(_mm512_castsi512_si256(e), scale_lo);
        const __m256i r_hi = softmax8_round(_mm512_extracti64x4_epi64(e, 1), scale_hi);
        __m512i v = _mm512_inserti64x4(_mm512_castsi256_si512(r_lo), r_hi, 1);
        v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, zo), lo), hi);
        Y* at = y + base + j * p.inner;
        if (w >= 16) _mm_storeu_si128(reinterpret_cast<__m128i*>(at), _mm512_cvtepi32_epi8(v));  // masked stores cost more
        else _mm_mask_storeu_epi8(at, live, _mm512_cvtepi32_epi8(v));
    }
    return true;
}

template <class X, class Y>
VNNX_TARGET_AVX512 inline bool softmax_range(isa::avx512_vnni, const softmax_params& p, const X* x, Y* y, std::size_t i0,
                                             std::size_t i1) {
    std::vector<std::uint32_t> eb(static_cast<std::size_t>(p.n * 16));
    const auto per_row = static_cast<std::size_t>((p.inner + softmax_block - 1) / softmax_block);
    bool ok = true;
    for (std::size_t i = i0; i < i1; ++i) {
        const auto a = static_cast<std::int64_t>(i / per_row), b0 = static_cast<std::int64_t>(i % per_row) * softmax_block;
        const std::int64_t end = std::min(p.inner, b0 + softmax_block);
        for (std::int64_t b = b0; b < end; b += 16)
            ok = softmax16_avx512(p, x, y, a * p.n * p.inner + b, std::min<std::int64_t>(16, end - b), eb.data()) && ok;
    }
    return ok;
}
#else
template <class X, class Y>
inline bool softmax_range(isa::avx512_vnni, const softmax_params& p, const X* x, Y* y, std::size_t i0, std::size_t i1) {
    return softmax_block_range(p, x, y, i0, i1);
}
#endif

}  // namespace detail

/// Every vector of the layer; false when some vector's exponentials sum to zero.
template <class Tag, class X, class Y>
inline bool softmax_blocks(Tag tag, const softmax_params& p, const X* x, Y* y, thread_pool* pool) {
    const auto items = static_cast<std::size_t>(p.outer * ((p.inner + detail::softmax_block - 1) / detail::softmax_block));
    const auto elements = static_cast<std::size_t>(p.outer * p.n * p.inner);
    if (pool == nullptr || pool->size() < 2 || elements < (std::size_t{1} << 16) || items < 2)
        return detail::softmax_range(tag, p, x, y, 0, items);
    const std::size_t parts = std::min<std::size_t>(items, 4 * std::size_t{pool->size()});
    std::vector<char> ok(parts, 1);
    pool->parallel_for(parts, [&](std::size_t t) {
        ok[t] = detail::softmax_range(tag, p, x, y, items * t / parts, items * (t + 1) / parts) ? 1 : 0;
    });
    return std::all_of(ok.begin(), ok.end(), [](char v) { return v != 0; });
}

/// The same, the ISA chosen at run time.
template <class X, class Y>
inline bool softmax_blocks(isa_kind k, const softmax_params& p, const X* x, Y* y, thread_pool* pool) {
#if VNNX_SIM_X86
    if (uses_avx512(k)) return softmax_blocks(isa::avx512_vnni{}, p, x, y, pool);
    if (k == isa_kind::avx2) return softmax_blocks(isa::avx2{}, p, x, y, pool);
#else
    (void)k;
#endif
    return softmax_blocks(isa::scalar{}, p, x, y, pool);
}

}  // namespace vnnx::sim::kernels
