#pragma once
// Element-wise kernels over raw 8-bit codes: 256-entry table lookup and TFLite's int8/uint8 ADD
// (its arithmetic, and a table of every input pair's result).
// Scalar versions define the answer; the SIMD versions are bit-identical to them.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/binary_rows.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim::kernels {

// ---- LUT -------------------------------------------------------------------------------------
// out[i] = table[in[i]]: the table is indexed by the input byte (int8 code v at v & 0xFF).
using table8 = std::array<std::uint8_t, 256>;

namespace detail {

inline void lut8_scalar(const table8& t, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = t[in[i]];
}

#if VNNX_SIM_X86
// vpermi2b looks up 128 entries at once; bit 7 of the index picks the upper half.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void lut8_vbmi(const table8& t, const std::uint8_t* in,
                                                                             std::uint8_t* out, std::size_t n) {
    const __m512i t0 = _mm512_loadu_si512(t.data());
    const __m512i t1 = _mm512_loadu_si512(t.data() + 64);
    const __m512i t2 = _mm512_loadu_si512(t.data() + 128);
    const __m512i t3 = _mm512_loadu_si512(t.data() + 192);
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i idx = _mm512_loadu_si512(in + i);
        const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
        const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
        _mm512_storeu_si512(out + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
    }
    for (; i < n; ++i) out[i] = t[in[i]];
}
#endif

/// out[i] = t[in[i]]: a byte permute per 64 elements where the run's ISA has VBMI. Without it
/// a table walk is as fast as AVX2's 16-way vpshufb cascade would be.
inline void lut8(isa_kind isa, const table8& t, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
#if VNNX_SIM_X86
    if (uses_vbmi(isa)) {
        lut8_vbmi(t, in, out, n);
        return;
    }
#else
    (void)isa;
#endif
    lut8_scalar(t, in, out, n);
}

}  // namespace detail

// Applies one table per channel group: `tables` holds 1 table (all elements) or one per
// channel of x[C][plane]. Channels are split over the pool.
inline void apply_lut(isa_kind isa, std::span<const table8> tables, std::span<const std::uint8_t> in,
                      std::span<std::uint8_t> out, std::size_t channels, thread_pool* pool = nullptr,
                      std::string_view what = "lut") {
    const std::string w(what);
    if (in.size() != out.size())
        fail_input(w + ": input has " + std::to_string(in.size()) + " elements but output has " +
                   std::to_string(out.size()));
    if (channels == 0 || in.size() % channels != 0)
        fail_input(w + ": " + std::to_string(in.size()) + " elements do not split into " + std::to_string(channels) +
                   " channels");
    if (tables.size() != 1 && tables.size() != channels)
        fail_input(w + ": " + std::to_string(tables.size()) + " tables for " + std::to_string(channels) +
                   " channels (need 1 or one per channel)");
    const std::size_t plane = in.size() / channels;
    auto body = [&](std::size_t c) {
        const table8& t = tables[tables.size() == 1 ? 0 : c];
        detail::lut8(isa, t, in.data() + c * plane, out.data() + c * plane, plane);
    };
    if (pool) pool->parallel_for(channels, body);
    else
        for (std::size_t c = 0; c < channels; ++c) body(c);
}

// ---- ADD ---------------------------------------------------------------------------------------
// TFLite's integer ADD (reference_ops / integer_ops add):
//   s_i = MBQMSmallerThanOneExp((x_i + input_i_offset) << left_shift, m_i, shift_i)
//   y   = clamp(MBQMSmallerThanOneExp(s_1 + s_2, m_out, shift_out) + output_offset, act_min, act_max)
// with MBQMSmallerThanOneExp = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), -shift).
struct add_params {
    std::int32_t input1_offset = 0;  // -z1
    std::int32_t input2_offset = 0;  // -z2
    int left_shift = 20;
    std::int32_t input1_multiplier = 0;
    int input1_shift = 0;  // <= 0
    std::int32_t input2_multiplier = 0;
    int input2_shift = 0;
    std::int32_t output_multiplier = 0;
    int output_shift = 0;
    std::int32_t output_offset = 0;  // z_out
    int act_min = -128;
    int act_max = 127;
    bool input_signed = true;  // both inputs share the type
    bool output_signed = true;
};

inline void validate_add(const add_params& p, std::string_view what) {
    const std::string w(what);
    auto range = [&](std::int64_t v, std::int64_t lo, std::int64_t hi, const char* name) {
        if (v < lo || v > hi)
            fail_input(w + ": " + name + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    };
    range(p.input1_offset, -255, 255, "input1 offset");
    range(p.input2_offset, -255, 255, "input2 offset");
    // (x + offset) << left_shift must fit in int32: |x + offset| <= 510 < 2^9
    range(p.left_shift, 0, 21, "left shift");
    range(p.input1_multiplier, 0, INT32_MAX, "input1 multiplier");
    range(p.input2_multiplier, 0, INT32_MAX, "input2 multiplier");
    range(p.output_multiplier, 0, INT32_MAX, "output multiplier");
    range(p.input1_shift, -31, 0, "input1 shift");
    range(p.input2_shift, -31, 0, "input2 shift");
    range(p.output_shift, -31, 0, "output shift");
    const int lo = p.output_signed ? -128 : 0, hi = p.output_signed ? 127 : 255;
    range(p.output_offset, lo, hi, "output offset");
    if (p.act_min > p.act_max || p.act_min < lo || p.act_max > hi)
        fail_input(w + ": activation bounds [" + std::to_string(p.act_min) + ", " + std::to_string(p.act_max) +
                   "] must be ordered and within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// The defining scalar arithmetic for one element pair.
[[nodiscard]] inline std::uint8_t add_one(const add_params& p, std::uint8_t a, std::uint8_t b) noexcept {
    const std::int32_t xa = p.input_signed ? static_cast<std::int8_t>(a) : a;
    const std::int32_t xb = p.input_signed ? static_cast<std::int8_t>(b) : b;
    const std::int32_t s1 = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
        (xa + p.input1_offset) * (1 << p.left_shift), p.input1_multiplier, p.input1_shift);
    const std::int32_t s2 = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
        (xb + p.input2_offset) * (1 << p.left_shift), p.input2_multiplier, p.input2_shift);
    const std::int32_t raw =
        quant::multiply_by_quantized_multiplier_smaller_than_one_exp(s1 + s2, p.output_multiplier, p.output_shift) +
        p.output_offset;
    return static_cast<std::uint8_t>(std::clamp(raw, p.act_min, p.act_max) & 0xFF);
}

namespace detail {

inline void add_row(isa::scalar, const add_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = add_one(p, a[i], b[i]);
}

#if VNNX_SIM_X86
// SaturatingRoundingDoublingHighMul with m >= 0 (so the saturating case cannot occur):
// ab = x*m in 64 bits, add the nudge (2^30, or 1 - 2^30 when ab < 0), divide by 2^31
// truncating toward zero.
VNNX_TARGET_AVX512 inline __m512i srdhm_avx512(__m512i x, __m512i m64) {
    const __m512i pos_nudge = _mm512_set1_epi64(std::int64_t{1} << 30);
    const __m512i neg_nudge = _mm512_set1_epi64(1 - (std::int64_t{1} << 30));
    const __m512i trunc_fix = _mm512_set1_epi64((std::int64_t{1} << 31) - 1);
    __m512i r[2];
    for (int h = 0; h < 2; ++h) {
        const __m512i xs = h == 0 ? x : _mm512_srli_epi64(x, 32);
        const __m512i ab = _mm512_mul_epi32(xs, m64);
        const __mmask8 neg = _mm512_cmplt_epi64_mask(ab, _mm512_setzero_si512());
        __m512i q = _mm512_add_epi64(ab, _mm512_mask_blend_epi64(neg, pos_nudge, neg_nudge));
        q = _mm512_mask_add_epi64(q, _mm512_cmplt_epi64_mask(q, _mm512_setzero_si512()), q, trunc_fix);
        r[h] = _mm512_srai_epi64(q, 31);
    }
    return _mm512_mask_blend_epi32(0xAAAA, r[0], _mm512_slli_epi64(r[1], 32));
}

// RoundingDivideByPOT with a uniform exponent e in [0, 31].
VNNX_TARGET_AVX512 inline __m512i rdbpot_avx512(__m512i x, int e) {
    const __m512i mask = _mm512_set1_epi32(static_cast<std::int32_t>((std::int64_t{1} << e) - 1));
    const __m512i rem = _mm512_and_si512(x, mask);
    __m512i thr = _mm512_srai_epi32(mask, 1);
    thr = _mm512_mask_add_epi32(thr, _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512()), thr, _mm512_set1_epi32(1));
    const __m512i q = _mm512_sra_epi32(x, _mm_cvtsi32_si128(e));
    return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, _mm512_set1_epi32(1));
}

template <bool Signed>
VNNX_TARGET_AVX512 inline void add_avx512(const add_params& p, const std::uint8_t* a, const std::uint8_t* b,
                                          std::uint8_t* out, std::size_t n) {
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset), off2 = _mm512_set1_epi32(p.input2_offset);
    const __m128i ls = _mm_cvtsi32_si128(p.left_shift);
    const __m512i m1 = _mm512_set1_epi64(p.input1_multiplier), m2 = _mm512_set1_epi64(p.input2_multiplier);
    const __m512i mo = _mm512_set1_epi64(p.output_multiplier);
    const __m512i zo = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
    for (std::size_t i = 0; i < n; i += 16) {
        const __m128i ra = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
        const __m128i rb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
        const __m512i xa = Signed ? _mm512_cvtepi8_epi32(ra) : _mm512_cvtepu8_epi32(ra);
        const __m512i xb = Signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
        const __m512i s1 = rdbpot_avx512(srdhm_avx512(_mm512_sll_epi32(_mm512_add_epi32(xa, off1), ls), m1), -p.input1_shift);
        const __m512i s2 = rdbpot_avx512(srdhm_avx512(_mm512_sll_epi32(_mm512_add_epi32(xb, off2), ls), m2), -p.input2_shift);
        __m512i y = _mm512_add_epi32(rdbpot_avx512(srdhm_avx512(_mm512_add_epi32(s1, s2), mo), -p.output_shift), zo);
        y = _mm512_min_epi32(_mm512_max_epi32(y, lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(y));
    }
}

// AVX2 forms: no 64-bit arithmetic shift, but the low 32 bits of q >> 31 are the same for a
// logical shift, and those are all the result keeps.
VNNX_TARGET_AVX2 inline __m256i srdhm_avx2(__m256i x, __m256i m64) {
    const __m256i pos_nudge = _mm256_set1_epi64x(std::int64_t{1} << 30);
    const __m256i neg_nudge = _mm256_set1_epi64x(1 - (std::int64_t{1} << 30));
    const __m256i trunc_fix = _mm256_set1_epi64x((std::int64_t{1} << 31) - 1);
    const __m256i zero = _mm256_setzero_si256();
    __m256i r[2];
    for (int h = 0; h < 2; ++h) {
        const __m256i xs = h == 0 ? x : _mm256_srli_epi64(x, 32);
        const __m256i ab = _mm256_mul_epi32(xs, m64);
        const __m256i neg = _mm256_cmpgt_epi64(zero, ab);
        __m256i q = _mm256_add_epi64(ab, _mm256_blendv_epi8(pos_nudge, neg_nudge, neg));
        q = _mm256_add_epi64(q, _mm256_and_si256(_mm256_cmpgt_epi64(zero, q), trunc_fix));
        r[h] = _mm256_srli_epi64(q, 31);
    }
    return _mm256_blend_epi32(r[0], _mm256_slli_epi64(r[1], 32), 0xAA);
}

VNNX_TARGET_AVX2 inline __m256i rdbpot_avx2(__m256i x, int e) {
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i mask = _mm256_set1_epi32(static_cast<std::int32_t>((std::int64_t{1} << e) - 1));
    const __m256i rem = _mm256_and_si256(x, mask);
    const __m256i thr = _mm256_add_epi32(_mm256_srai_epi32(mask, 1),
                                         _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), x), one));
    const __m256i q = _mm256_sra_epi32(x, _mm_cvtsi32_si128(e));
    return _mm256_add_epi32(q, _mm256_and_si256(_mm256_cmpgt_epi32(rem, thr), one));
}

template <bool Signed>
VNNX_TARGET_AVX2 inline void add_avx2(const add_params& p, const std::uint8_t* a, const std::uint8_t* b,
                                      std::uint8_t* out, std::size_t n) {
    const __m256i off1 = _mm256_set1_epi32(p.input1_offset), off2 = _mm256_set1_epi32(p.input2_offset);
    const __m128i ls = _mm_cvtsi32_si128(p.left_shift);
    const __m256i m1 = _mm256_set1_epi64x(p.input1_multiplier), m2 = _mm256_set1_epi64x(p.input2_multiplier);
    const __m256i mo = _mm256_set1_epi64x(p.output_multiplier);
    const __m256i zo = _mm256_set1_epi32(p.output_offset);
    const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
    // low byte of each 32-bit lane to the front of each 128-bit half, then both halves together
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    for (std::size_t i = 0; i < n; i += 8) {
        const __m128i ra = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + i));
        const __m128i rb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + i));
        const __m256i xa = Signed ? _mm256_cvtepi8_epi32(ra) : _mm256_cvtepu8_epi32(ra);
        const __m256i xb = Signed ? _mm256_cvtepi8_epi32(rb) : _mm256_cvtepu8_epi32(rb);
        const __m256i s1 = rdbpot_avx2(srdhm_avx2(_mm256_sll_epi32(_mm256_add_epi32(xa, off1), ls), m1), -p.input1_shift);
        const __m256i s2 = rdbpot_avx2(srdhm_avx2(_mm256_sll_epi32(_mm256_add_epi32(xb, off2), ls), m2), -p.input2_shift);
        __m256i y = _mm256_add_epi32(rdbpot_avx2(srdhm_avx2(_mm256_add_epi32(s1, s2), mo), -p.output_shift), zo);
        y = _mm256_min_epi32(_mm256_max_epi32(y, lo), hi);
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(y, pick), join);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(bytes));
    }
}
#endif

inline void add_row(isa::avx2, const add_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    body = n / 8 * 8;
    if (p.input_signed) add_avx2<true>(p, a, b, out, body);
    else add_avx2<false>(p, a, b, out, body);
#endif
    add_row(isa::scalar{}, p, a + body, b + body, out + body, n - body);
}

inline void add_row(isa::avx512_vnni, const add_params& p, const std::uint8_t* a, const std::uint8_t* b,
                    std::uint8_t* out, std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    body = n / 16 * 16;
    if (p.input_signed) add_avx512<true>(p, a, b, out, body);
    else add_avx512<false>(p, a, b, out, body);
#endif
    add_row(isa::scalar{}, p, a + body, b + body, out + body, n - body);
}

}  // namespace detail

// out = a + b element-wise (same element count; broadcasting is the caller's business).
inline void add(isa_kind isa, const add_params& p, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "add") {
    validate_add(p, what);
    binary_rows(isa, a, b, out, pool, what, [&](auto tag, const std::uint8_t* x, const std::uint8_t* y, std::uint8_t* o,
                                                 std::size_t n) { detail::add_row(tag, p, x, y, o, n); });
}

// ---- ADD through a table of every input pair ---------------------------------------------------
// An ADD's result depends on its two input bytes only. The SIMD row kernel run once over all
// 65536 pairs (so the table equals that kernel by construction) turns each later element into
// one 32-bit gather at byte offset a*256+b instead of three 64-bit multiply-round steps: about
// twice as fast, for 64 KiB per ADD layer made once per model. The scalar ISA keeps add_one.
struct add_table {
    isa_kind isa = isa_kind::scalar;
    std::vector<std::uint8_t> bytes;  // 65536 results and 3 bytes of slack for the 32-bit loads
};

inline add_table make_add_table(isa_kind isa, const add_params& p, std::string_view what = "add") {
    validate_add(p, what);
    std::vector<std::uint8_t> a(65536), b(65536);
    for (std::size_t i = 0; i < 65536; ++i) {
        a[i] = static_cast<std::uint8_t>(i >> 8);
        b[i] = static_cast<std::uint8_t>(i & 0xFF);
    }
    add_table t{isa, std::vector<std::uint8_t>(65536 + 3, 0)};
    dispatch(isa, [&](auto tag) { detail::add_row(tag, p, a.data(), b.data(), t.bytes.data(), 65536); });
    return t;
}

namespace detail {

inline void add_lookup_row(isa::scalar, const std::uint8_t* t, const std::uint8_t* a, const std::uint8_t* b,
                           std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = t[static_cast<std::size_t>(a[i]) << 8 | b[i]];
}

#if VNNX_SIM_X86
VNNX_TARGET_AVX512 inline std::size_t add_lookup_avx512(const std::uint8_t* t, const std::uint8_t* a,
                                                        const std::uint8_t* b, std::uint8_t* out, std::size_t n) {
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i xa = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i)));
        const __m512i xb = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
        const __m512i v = _mm512_i32gather_epi32(_mm512_or_si512(_mm512_slli_epi32(xa, 8), xb), t, 1);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(v));
    }
    return i;
}

VNNX_TARGET_AVX2 inline std::size_t add_lookup_avx2(const std::uint8_t* t, const std::uint8_t* a,
                                                    const std::uint8_t* b, std::uint8_t* out, std::size_t n) {
    const __m256i low = _mm256_set1_epi32(0xFF);
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i xa = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + i)));
        const __m256i xb = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + i)));
        const __m256i v = _mm256_and_si256(
            _mm256_i32gather_epi32(reinterpret_cast<const int*>(t), _mm256_or_si256(_mm256_slli_epi32(xa, 8), xb), 1), low);
        const __m256i w = _mm256_packus_epi32(v, v);  // per 128-bit half: 4 words, twice
        const __m256i bytes = _mm256_packus_epi16(w, w);
        const std::uint32_t lo4 = static_cast<std::uint32_t>(_mm256_extract_epi32(bytes, 0));
        const std::uint32_t hi4 = static_cast<std::uint32_t>(_mm256_extract_epi32(bytes, 4));
        const std::uint64_t eight = static_cast<std::uint64_t>(hi4) << 32 | lo4;
        std::memcpy(out + i, &eight, 8);
    }
    return i;
}
#endif

template <class Isa>
inline void add_lookup_row(Isa, const std::uint8_t* t, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                           std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) body = add_lookup_avx512(t, a, b, out, n);
    else body = add_lookup_avx2(t, a, b, out, n);
#endif
    add_lookup_row(isa::scalar{}, t, a + body, b + body, out + body, n - body);
}

}  // namespace detail

// out = a + b through a table made by make_add_table for the same ISA.
inline void add(const add_table& t, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "add") {
    if (t.bytes.size() != 65536 + 3) fail_input(std::string(what) + ": the ADD table is not made");
    binary_rows(t.isa, a, b, out, pool, what,
                [&](auto tag, const std::uint8_t* x, const std::uint8_t* y, std::uint8_t* o, std::size_t n) {
                    detail::add_lookup_row(tag, t.bytes.data(), x, y, o, n);
                });
}

}  // namespace vnnx::sim::kernels
