#pragma once
// The FIA requantization (lowering.md 8.2): per output channel k,
//   y = clamp((acc * om_k + c_k) >> o_k, act_min, act_max)
// with om_k a uint16, o_k in {8,16,24,32}, c_k a 48-bit signed constant, product and sum in
// int64 and >> an arithmetic (floor) shift. |acc| < 2^31 and om < 2^16 give |acc*om| < 2^47,
// plus |c| <= 2^47: the sum always fits in int64.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vnnx/sim/isa.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim::kernels {

struct requant_params {
    std::vector<std::uint16_t> multiplier;  // om_k
    std::vector<std::uint8_t> shift;        // o_k: 8, 16, 24 or 32 (not the record's index)
    std::vector<std::int64_t> constant;     // c_k, within [-2^47, 2^47 - 1]
    int act_min = -128;                     // clamp bounds in the output's code domain
    int act_max = 127;
};

// The record stores the shift as an index 0..3 (lowering.md 8.2 step 4).
[[nodiscard]] constexpr int shift_from_index(int index) noexcept { return 8 * (index + 1); }

inline constexpr std::int64_t c_min = -(std::int64_t{1} << 47);
inline constexpr std::int64_t c_max = (std::int64_t{1} << 47) - 1;

// Checks rq against k output channels; `what` names the layer in messages.
inline void validate_requant(const requant_params& rq, std::size_t k, bool output_signed,
                             std::string_view what) {
    const std::string w(what);
    if (rq.multiplier.size() != k || rq.shift.size() != k || rq.constant.size() != k)
        fail_input(w + ": requantization needs one multiplier, shift and constant per output channel (" +
                   std::to_string(k) + "), got " + std::to_string(rq.multiplier.size()) + ", " +
                   std::to_string(rq.shift.size()) + ", " + std::to_string(rq.constant.size()));
    for (std::size_t i = 0; i < k; ++i) {
        const int o = rq.shift[i];
        if (o != 8 && o != 16 && o != 24 && o != 32)
            fail_input(w + ": output channel " + std::to_string(i) + ": shift " + std::to_string(o) +
                       " is not one of 8, 16, 24, 32");
        if (rq.constant[i] < c_min || rq.constant[i] > c_max)
            fail_input(w + ": output channel " + std::to_string(i) + ": constant " +
                       std::to_string(rq.constant[i]) + " is outside the 48-bit signed range");
    }
    const int lo = output_signed ? -128 : 0;
    const int hi = output_signed ? 127 : 255;
    if (rq.act_min > rq.act_max || rq.act_min < lo || rq.act_max > hi)
        fail_input(w + ": activation bounds [" + std::to_string(rq.act_min) + ", " +
                   std::to_string(rq.act_max) + "] must be ordered and within [" + std::to_string(lo) +
                   ", " + std::to_string(hi) + "] for a " + (output_signed ? "int8" : "uint8") +
                   " output");
}

// Adds in int32 with wrap-around: the SIMD paths accumulate modulo 2^32 and correct afterwards;
// the true sums fit in int32, so the wrapped result is exact.
[[nodiscard]] inline std::int32_t wrap_add(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// The defining scalar arithmetic; the result is the output byte (int8 codes as two's complement).
[[nodiscard]] inline std::uint8_t requantize(std::int32_t acc, std::uint16_t om, std::int64_t c, int o,
                                             int act_min, int act_max) noexcept {
    std::int64_t v = (static_cast<std::int64_t>(acc) * om + c) >> o;  // C++20: arithmetic shift
    v = std::clamp<std::int64_t>(v, act_min, act_max);
    return static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) & 0xFF);
}

// An accumulator range [lo, hi] such that requantize(clamp(acc, lo, hi)) needs no output clamp
// and equals requantize(acc) for every int32 acc (ok = false when there is none). The
// requantization is non-decreasing in acc; when each step is at most 1 (om <= 2^o), the first
// accumulator reaching act_min maps to exactly act_min, and likewise at act_max. Clamping
// 16 int32 lanes is cheaper than clamping two vectors of int64 results.
// `narrow`: the values v = a*om + c for a in [lo, hi] lie in int32; `biased`: they lie in
// [0, 2^32) and the shift is at most 31. Either way v can be formed modulo 2^32 in 32-bit lanes
// and stay exact (requant16's Narrow form): every shift-16 channel, shift-24 channels of int8
// outputs (narrow) and of uint8 outputs (biased).
struct acc_range {
    std::int32_t lo = 0, hi = 0;
    bool ok = false;
    bool narrow = false;
    bool biased = false;
};

[[nodiscard]] inline acc_range acc_clamp_range(std::uint16_t om, std::int64_t c, int o, int act_min, int act_max) {
    acc_range r;
    if (om == 0 || om > (std::int64_t{1} << o)) return r;
    auto f = [&](std::int64_t a) { return (a * om + c) >> o; };
    constexpr std::int64_t amin = INT32_MIN, amax = INT32_MAX;
    if (f(amax) < act_min || f(amin) > act_max) return r;
    // Smallest a with f(a) >= act_min, largest a with f(a) <= act_max (binary searches).
    std::int64_t a = amin, b = amax;
    while (a < b) {
        const std::int64_t m = a + (b - a) / 2;
        if (f(m) >= act_min) b = m;
        else a = m + 1;
    }
    const std::int64_t lo = a;
    a = amin, b = amax;
    while (a < b) {
        const std::int64_t m = a + (b - a + 1) / 2;
        if (f(m) <= act_max) a = m;
        else b = m - 1;
    }
    if (lo > a) return r;
    r.lo = static_cast<std::int32_t>(lo);
    r.hi = static_cast<std::int32_t>(a);
    r.ok = true;
    const std::int64_t vlo = lo * om + c, vhi = a * om + c;
    r.narrow = vlo >= amin && vhi <= amax;
    r.biased = vlo >= 0 && vhi < (std::int64_t{1} << 32) && o <= 31;
    return r;
}

namespace detail {

// One output channel's row of n accumulators (each corrected by `corr`) to bytes.
inline void requant_row(isa::scalar, const std::int32_t* acc, std::size_t n, std::int32_t corr,
                        std::uint16_t om, std::int64_t c, int o, int lo, int hi, std::uint8_t* out) {
    for (std::size_t i = 0; i < n; ++i) out[i] = requantize(wrap_add(acc[i], corr), om, c, o, lo, hi);
}

// Without an accumulator clamp AVX2 would need a 64-bit arithmetic shift and min/max, which it
// lacks: such channels (rare; om > 2^o) take the scalar form.
inline void requant_row(isa::avx2, const std::int32_t* acc, std::size_t n, std::int32_t corr, std::uint16_t om,
                        std::int64_t c, int o, int lo, int hi, std::uint8_t* out) {
    requant_row(isa::scalar{}, acc, n, corr, om, c, o, lo, hi, out);
}

#if VNNX_SIM_X86
// One output channel's requantization as AVX2 vectors of 8 accumulators; needs range.ok.
struct requant_vec8 {
    __m256i acc_lo, acc_hi;  // the accumulator clamp (acc_clamp_range)
    __m256i om, c;           // multiplier and constant per 64-bit lane
    __m256i om32, c32;       // narrow forms: the same modulo 2^32
    __m128i shift;
};

VNNX_TARGET_AVX2 inline requant_vec8 make_requant_vec8(std::uint16_t om, std::int64_t c, int o, acc_range range) {
    return {_mm256_set1_epi32(range.lo),
            _mm256_set1_epi32(range.hi),
            _mm256_set1_epi64x(om),
            _mm256_set1_epi64x(c),
            _mm256_set1_epi32(om),
            _mm256_set1_epi32(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(c)))),
            _mm_cvtsi32_si128(o)};
}

// requantize() of 8 clamped accumulators; the output byte is the low byte of each dword.
// Form 2 forms a*om + c modulo 2^32 (requant16's Narrow form) and shifts arithmetically; it also
// serves biased channels (range.biased, requant16's Biased form): their results lie in
// [0, 255], so v < 2^(o+8), and v >= 2^31 needs o >= 24, where an arithmetic and a logical
// shift differ only above the low byte. Form 1 forms a*om + c in 64-bit lanes and shifts them
// logically: for o <= 32 the low 32 bits of a logical and an arithmetic shift agree, and the
// clamp guarantees that the result is those 32 bits.
template <int Form>
VNNX_TARGET_AVX2 inline __m256i requant8(__m256i a, const requant_vec8& q) {
    static_assert(Form == 1 || Form == 2);
    a = _mm256_min_epi32(_mm256_max_epi32(a, q.acc_lo), q.acc_hi);
    if constexpr (Form == 2) {
        return _mm256_sra_epi32(_mm256_add_epi32(_mm256_mullo_epi32(a, q.om32), q.c32), q.shift);
    } else {
        const __m256i pe = _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(a, q.om), q.c), q.shift);
        const __m256i po =
            _mm256_srl_epi64(_mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(a, 32), q.om), q.c), q.shift);
        return _mm256_blend_epi32(pe, _mm256_slli_epi64(po, 32), 0xAA);
    }
}

// The low bytes of 8 dwords, in order.
VNNX_TARGET_AVX2 inline __m128i low_bytes8(__m256i v) {
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                          0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i b = _mm256_shuffle_epi8(v, pick);
    return _mm_unpacklo_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
}

template <int Form>
VNNX_TARGET_AVX2 inline void requant_row_avx2(const std::int32_t* acc, std::size_t n, std::int32_t corr,
                                              const requant_vec8& q, std::uint8_t* out) {
    const __m256i vcorr = _mm256_set1_epi32(corr);
    for (std::size_t i = 0; i < n; i += 8) {
        const __m256i a = _mm256_add_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(acc + i)), vcorr);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), low_bytes8(requant8<Form>(a, q)));
    }
}

// One channel's row with its accumulator range (acc_clamp_range of the same parameters);
// n a multiple of 8.
VNNX_TARGET_AVX2 inline void requant_row_ranged(isa::avx2, const std::int32_t* acc, std::size_t n, std::int32_t corr,
                               std::uint16_t om, std::int64_t c, int o, int lo, int hi, const acc_range& r,
                               std::uint8_t* out) {
    if (!r.ok) return requant_row(isa::scalar{}, acc, n, corr, om, c, o, lo, hi, out);
    const requant_vec8 q = make_requant_vec8(om, c, o, r);
    if (r.narrow || r.biased) requant_row_avx2<2>(acc, n, corr, q, out);
    else requant_row_avx2<1>(acc, n, corr, q, out);
}
#endif

#if VNNX_SIM_X86
// One output channel's requantization as vectors, for kernels that requantize 16 accumulators
// at a time in registers (requant16).
struct requant_vec {
    __m512i acc_lo, acc_hi;  // accumulator clamp (acc_clamp_range), when used
    __m512i om, c, lo, hi;   // multiplier, constant and output bounds, one per 64-bit lane
    __m512i om32, c32;        // Narrow: multiplier, constant (mod 2^32)
    __m128i shift;
};

VNNX_TARGET_AVX512 inline requant_vec make_requant_vec(std::uint16_t om, std::int64_t c, int o, int lo, int hi,
                                                       acc_range range) {
    return {_mm512_set1_epi32(range.lo),
            _mm512_set1_epi32(range.hi),
            _mm512_set1_epi64(om),
            _mm512_set1_epi64(c),
            _mm512_set1_epi64(lo),
            _mm512_set1_epi64(hi),
            _mm512_set1_epi32(om),
            _mm512_set1_epi32(static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(c)))),
            _mm_cvtsi32_si128(o)};
}

// requantize() of 16 accumulators, one result per dword (the output byte is its low byte).
// mul_epi32 multiplies the sign-extended low 32 bits of each 64-bit lane (exact): the even
// accumulators in place, the odd ones shifted down; the results fit a dword, so the odd ones go
// back up. AccClamp clamps the accumulators to q's range instead of the 64-bit results (the
// range must come from acc_clamp_range with ok set). Narrow forms a*om + c in 32-bit lanes: five
// operations instead of eleven (range.narrow must be set); with Biased (range.biased set)
// v lies in [0, 2^32), so v mod 2^32 shifted right logically is v >> o, exactly.
template <bool AccClamp, bool Narrow = false, bool Biased = false>
VNNX_TARGET_AVX512 inline __m512i requant16(__m512i a, const requant_vec& q) {
    static_assert(AccClamp || !Narrow, "the 32-bit form needs the accumulator clamp");
    static_assert(Narrow || !Biased, "the bias belongs to the 32-bit form");
    if constexpr (AccClamp) a = _mm512_min_epi32(_mm512_max_epi32(a, q.acc_lo), q.acc_hi);
    if constexpr (Narrow) {
        const __m512i v = _mm512_add_epi32(_mm512_mullo_epi32(a, q.om32), q.c32);
        return Biased ? _mm512_srl_epi32(v, q.shift) : _mm512_sra_epi32(v, q.shift);
    }
    __m512i pe = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(a, q.om), q.c), q.shift);
    __m512i po = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(_mm512_srli_epi64(a, 32), q.om), q.c), q.shift);
    if constexpr (!AccClamp) {
        pe = _mm512_min_epi64(_mm512_max_epi64(pe, q.lo), q.hi);
        po = _mm512_min_epi64(_mm512_max_epi64(po, q.lo), q.hi);
    }
    return _mm512_mask_blend_epi32(0xAAAA, pe, _mm512_slli_epi64(po, 32));
}

// requant16<true, Narrow, Biased> with the lanes outside `keep` set to `pad` (an output's pad
// gaps). The 32-bit forms merge-mask their last operation, so the pad costs no instruction.
template <bool Narrow, bool Biased>
VNNX_TARGET_AVX512 inline __m512i requant16_pad(__m512i a, const requant_vec& q, __mmask16 keep, __m512i pad) {
    if constexpr (!Narrow) {
        return _mm512_mask_mov_epi32(pad, keep, requant16<true>(a, q));
    } else {
        a = _mm512_min_epi32(_mm512_max_epi32(a, q.acc_lo), q.acc_hi);
        const __m512i r = _mm512_add_epi32(_mm512_mullo_epi32(a, q.om32), q.c32);
        if constexpr (Biased) return _mm512_mask_srl_epi32(pad, keep, r, q.shift);
        else return _mm512_mask_sra_epi32(pad, keep, r, q.shift);
    }
}

// n must be a multiple of 16.
VNNX_TARGET_AVX512 inline void requant_row_avx512(const std::int32_t* acc, std::size_t n, std::int32_t corr,
                                                  std::uint16_t om, std::int64_t c, int o, int lo, int hi,
                                                  std::uint8_t* out) {
    const __m512i vcorr = _mm512_set1_epi32(corr);
    const requant_vec q = make_requant_vec(om, c, o, lo, hi, acc_range{});
    for (std::size_t i = 0; i < n; i += 16) {
        const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + i), vcorr);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(requant16<false>(a, q)));
    }
}
#endif

inline void requant_row(isa::avx512_vnni, const std::int32_t* acc, std::size_t n, std::int32_t corr,
                        std::uint16_t om, std::int64_t c, int o, int lo, int hi, std::uint8_t* out) {
#if VNNX_SIM_X86
    const std::size_t body = n / 16 * 16;
    requant_row_avx512(acc, body, corr, om, c, o, lo, hi, out);
    requant_row(isa::scalar{}, acc + body, n - body, corr, om, c, o, lo, hi, out + body);
#else
    requant_row(isa::scalar{}, acc, n, corr, om, c, o, lo, hi, out);
#endif
}

}  // namespace detail
}  // namespace vnnx::sim::kernels
