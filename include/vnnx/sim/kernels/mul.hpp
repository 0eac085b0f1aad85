#pragma once
// TFLite's int8/uint8 MUL over raw 8-bit codes of equal shape (SiLU = x * sigmoid(x) runs it on
// every activation of YOLO-style models):
//   y = clamp(MultiplyByQuantizedMultiplier((a + off1) * (b + off2), m, shift) + z_out, lo, hi)
// The scalar form defines the answer; the AVX-512 form is bit-identical (AVX2 uses the scalar).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/binary_rows.hpp"
#include "vnnx/sim/kernels/eltwise.hpp"  // srdhm_avx512, rdbpot_avx512
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim::kernels {

struct mul_params {
    std::int32_t input1_offset = 0;  // -z1
    std::int32_t input2_offset = 0;  // -z2
    std::int32_t output_multiplier = 0;
    int output_shift = 0;  // TFLite convention: > 0 shifts left first
    std::int32_t output_offset = 0;
    int act_min = -128;  // already within the output type's range
    int act_max = 127;
    bool input_signed = true;  // both inputs share the type
};

// Whether the parameters keep every intermediate inside int32 (what the kernels assume).
// |(a - za)(b - zb)| <= 510^2 < 2^18: a left shift of at most 12 keeps the scaled product and the
// output offset inside int32; larger shifts take the layer's saturating 64-bit element loop.
[[nodiscard]] inline bool mul_params_in_range(const mul_params& p, bool output_signed) noexcept {
    const int lo = output_signed ? -128 : 0, hi = output_signed ? 127 : 255;
    return p.input1_offset >= -255 && p.input1_offset <= 255 && p.input2_offset >= -255 && p.input2_offset <= 255 &&
           p.output_multiplier >= 0 && p.output_shift >= -31 && p.output_shift <= 12 && p.output_offset >= lo &&
           p.output_offset <= hi && p.act_min <= p.act_max && p.act_min >= lo && p.act_max <= hi;
}

[[nodiscard]] inline std::uint8_t mul_one(const mul_params& p, std::uint8_t a, std::uint8_t b) noexcept {
    const std::int32_t xa = (p.input_signed ? static_cast<std::int8_t>(a) : a) + p.input1_offset;
    const std::int32_t xb = (p.input_signed ? static_cast<std::int8_t>(b) : b) + p.input2_offset;
    const std::int32_t raw =
        quant::multiply_by_quantized_multiplier(xa * xb, p.output_multiplier, p.output_shift) + p.output_offset;
    return static_cast<std::uint8_t>(std::clamp(raw, p.act_min, p.act_max) & 0xFF);
}

namespace detail {

inline void mul_row(isa::scalar, const mul_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = mul_one(p, a[i], b[i]);
}

inline void mul_row(isa::avx2, const mul_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    mul_row(isa::scalar{}, p, a, b, out, n);
}

#if VNNX_SIM_X86
template <bool Signed>
VNNX_TARGET_AVX512 inline void mul_avx512(const mul_params& p, const std::uint8_t* a, const std::uint8_t* b,
                                          std::uint8_t* out, std::size_t n) {
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset), off2 = _mm512_set1_epi32(p.input2_offset);
    const __m128i left = _mm_cvtsi32_si128(p.output_shift > 0 ? p.output_shift : 0);
    const int right = p.output_shift > 0 ? 0 : -p.output_shift;
    const __m512i m = _mm512_set1_epi64(p.output_multiplier);
    const __m512i zo = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
    for (std::size_t i = 0; i < n; i += 16) {
        const __m128i ra = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
        const __m128i rb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
        const __m512i xa = _mm512_add_epi32(Signed ? _mm512_cvtepi8_epi32(ra) : _mm512_cvtepu8_epi32(ra), off1);
        const __m512i xb = _mm512_add_epi32(Signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb), off2);
        // The left shift wraps in 32 bits, as the scalar form does.
        const __m512i prod = _mm512_sll_epi32(_mm512_mullo_epi32(xa, xb), left);
        __m512i y = _mm512_add_epi32(rdbpot_avx512(srdhm_avx512(prod, m), right), zo);
        y = _mm512_min_epi32(_mm512_max_epi32(y, lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(y));
    }
}
#endif

inline void mul_row(isa::avx512_vnni, const mul_params& p, const std::uint8_t* a, const std::uint8_t* b,
                    std::uint8_t* out, std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    body = n / 16 * 16;
    if (p.input_signed) mul_avx512<true>(p, a, b, out, body);
    else mul_avx512<false>(p, a, b, out, body);
#endif
    mul_row(isa::scalar{}, p, a + body, b + body, out + body, n - body);
}

}  // namespace detail

// out = a * b element-wise (same element count). The parameters must pass mul_params_in_range.
inline void mul(isa_kind isa, const mul_params& p, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "mul") {
    binary_rows(isa, a, b, out, pool, what, [&](auto tag, const std::uint8_t* x, const std::uint8_t* y, std::uint8_t* o,
                                                 std::size_t n) { detail::mul_row(tag, p, x, y, o, n); });
}

}  // namespace vnnx::sim::kernels
