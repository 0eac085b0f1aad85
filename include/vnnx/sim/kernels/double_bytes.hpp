#pragma once
// d[2i] = d[2i + 1] = s[i] for i < n, written to one row or to two (a row of a nearest-neighbour
// 2x upsampling and its repeat below: YOLO's and the FPNs' necks, which a gather per output byte
// ran at 0.6 GB/s). Interleaving a vector with itself (punpcklbw/punpckhbw, SSE2: every x86-64
// CPU) gives 32 output bytes per 16 input bytes; a ragged end redoes the last 16 input bytes
// (the same bytes again), so short rows take no byte loop. The bytes are the same on every ISA.
#include <cstddef>
#include <cstdint>

#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels {

/// `d2` may be null (one row) or a second row that receives the same bytes.
inline void double_bytes(std::uint8_t* d, std::uint8_t* d2, const std::uint8_t* s, std::size_t n) {
    std::size_t i = 0;
#if VNNX_SIM_X86
    if (n >= 16) {
        auto step = [&](std::size_t at) {
            const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + at));
            const __m128i lo = _mm_unpacklo_epi8(v, v), hi = _mm_unpackhi_epi8(v, v);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * at), lo);
            _mm_storeu_si128(reinterpret_cast<__m128i*>(d + 2 * at + 16), hi);
            if (d2 != nullptr) {
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d2 + 2 * at), lo);
                _mm_storeu_si128(reinterpret_cast<__m128i*>(d2 + 2 * at + 16), hi);
            }
        };
        for (; i + 16 <= n; i += 16) step(i);
        if (i < n) step(n - 16);
        return;
    }
#endif
    for (; i < n; ++i) {
        d[2 * i] = d[2 * i + 1] = s[i];
        if (d2 != nullptr) d2[2 * i] = d2[2 * i + 1] = s[i];
    }
}

}  // namespace vnnx::sim::kernels
