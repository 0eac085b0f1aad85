#pragma once
// d[j] = s[2j] for j < n: the column gather of a stride-2 slice (the strided depthwise
// convolutions' outputs, lowering.md STRIDED_DEPTHWISE). Rows are short and many, so the AVX-512
// path (when the run's ISA is an AVX-512 one; the bytes are the same either way) handles a whole
// row with masked loads and stores and never reads past s[2(n-1)].
#include <cstddef>
#include <cstdint>

#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels {

namespace detail {
#if VNNX_SIM_X86
VNNX_TARGET_AVX512 inline void even_bytes_avx512(std::uint8_t* d, const std::uint8_t* s, std::size_t n) {
    // 32 outputs per step from 64 input bytes: the low byte of every 16-bit word.
    for (; n > 32; n -= 32, d += 32, s += 64)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d), _mm512_cvtepi16_epi8(_mm512_loadu_si512(s)));
    if (n == 0) return;
    const __mmask64 in = (__mmask64{1} << (2 * n - 1)) - 1;  // s[0 .. 2n-2]
    const __mmask32 out = n == 32 ? ~__mmask32{0} : (__mmask32{1} << n) - 1;
    _mm256_mask_storeu_epi8(d, out, _mm512_cvtepi16_epi8(_mm512_maskz_loadu_epi8(in, s)));
}
#endif
}  // namespace detail

inline void even_bytes(isa_kind isa, std::uint8_t* d, const std::uint8_t* s, std::size_t n) {
#if VNNX_SIM_X86
    if (uses_avx512(isa)) {
        detail::even_bytes_avx512(d, s, n);
        return;
    }
#else
    (void)isa;
#endif
    for (std::size_t j = 0; j < n; ++j) d[j] = s[2 * j];
}

}  // namespace vnnx::sim::kernels
