#pragma once
// Exact sums of byte runs: the global pooling of classifier heads (MEAN over H and W) sums
// 1280 planes of 49 codes, where a vectorized int32 loop spends most of its time in its
// prologue and tail. SSE2's psadbw (every x86-64) adds 16 unsigned bytes per step; signed codes
// are summed biased by +128 and the bias taken off.
#include <cstddef>
#include <cstdint>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vnnx {

[[nodiscard]] inline std::int64_t byte_sum(const std::uint8_t* p, std::size_t n, bool as_signed) noexcept {
    const std::uint8_t flip = as_signed ? 0x80 : 0;
    std::int64_t sum = 0;
    std::size_t i = 0;
#if defined(__SSE2__)
    const __m128i f = _mm_set1_epi8(static_cast<char>(flip)), zero = _mm_setzero_si128();
    __m128i acc = zero;
    for (; i + 16 <= n; i += 16) {
        const __m128i v = _mm_xor_si128(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i)), f);
        acc = _mm_add_epi64(acc, _mm_sad_epu8(v, zero));
    }
    sum = _mm_cvtsi128_si64(acc) + _mm_cvtsi128_si64(_mm_unpackhi_epi64(acc, acc));
#endif
    for (; i < n; ++i) sum += static_cast<std::uint8_t>(p[i] ^ flip);
    return as_signed ? sum - 128 * static_cast<std::int64_t>(n) : sum;
}

}  // namespace vnnx
