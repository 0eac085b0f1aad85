#pragma once
// Inner products of rows of int16 values (int8/uint8 codes minus their zero points), summed in
// int32: the reference interpreter's convolutions and the simulator's BATCH_MATMUL. Integer
// sums do not depend on their order, so these loops give the element-by-element definition's
// int32 exactly while the compiler turns them into widening multiply-adds (pmaddwd and its AVX2
// / AVX-512 forms). One body, compiled for the baseline and, on x86-64 with GCC or Clang, for
// AVX2 and AVX-512BW; callers name the path (the simulator's --isa) or take the CPU's best.
#include <cstddef>
#include <cstdint>

namespace vnnx::quant {

namespace detail {

// Four dot products of the row `a` with the rows b0..b3 (the four output channels of one patch):
// one pass over `a` serves four channels.
[[gnu::always_inline]] inline void dot4_body(const std::int16_t* a, const std::int16_t* b0, const std::int16_t* b1,
                                             const std::int16_t* b2, const std::int16_t* b3, std::size_t n,
                                             std::int32_t* out) {
    std::int32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    for (std::size_t i = 0; i < n; ++i) {
        const std::int32_t x = a[i];
        s0 += x * b0[i];
        s1 += x * b1[i];
        s2 += x * b2[i];
        s3 += x * b3[i];
    }
    out[0] = s0;
    out[1] = s1;
    out[2] = s2;
    out[3] = s3;
}

[[gnu::always_inline]] inline std::int32_t dot_body(const std::int16_t* a, const std::int16_t* b, std::size_t n) {
    std::int32_t s = 0;
    for (std::size_t i = 0; i < n; ++i) s += std::int32_t{a[i]} * b[i];
    return s;
}

// `rows` dot products of `a` with the rows of `b` (row stride n), written to out.
[[gnu::always_inline]] inline void dots_body(const std::int16_t* a, const std::int16_t* b, std::size_t rows,
                                             std::size_t n, std::int32_t* out) {
    std::size_t r = 0;
    for (; r + 4 <= rows; r += 4) dot4_body(a, b + r * n, b + (r + 1) * n, b + (r + 2) * n, b + (r + 3) * n, n, out + r);
    for (; r < rows; ++r) out[r] = dot_body(a, b + r * n, n);
}

inline void dots_baseline(const std::int16_t* a, const std::int16_t* b, std::size_t rows, std::size_t n, std::int32_t* out) {
    dots_body(a, b, rows, n, out);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VNNX_DOTS_X86 1
__attribute__((target("avx2"))) inline void dots_avx2(const std::int16_t* a, const std::int16_t* b, std::size_t rows,
                                                      std::size_t n, std::int32_t* out) {
    dots_body(a, b, rows, n, out);
}
__attribute__((target("avx2,avx512f,avx512bw"))) inline void dots_avx512(const std::int16_t* a, const std::int16_t* b,
                                                                          std::size_t rows, std::size_t n,
                                                                          std::int32_t* out) {
    dots_body(a, b, rows, n, out);
}
#else
#define VNNX_DOTS_X86 0
#endif

/// The instruction sets the kernels are compiled for.
enum class dot_isa { baseline, avx2, avx512 };

[[nodiscard]] inline bool dot_isa_supported(dot_isa k) noexcept {
#if VNNX_DOTS_X86
    if (k == dot_isa::avx512) return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw");
    if (k == dot_isa::avx2) return __builtin_cpu_supports("avx2");
#endif
    return k == dot_isa::baseline;
}

[[nodiscard]] inline dot_isa best_dot_isa() noexcept {
    static const dot_isa best = dot_isa_supported(dot_isa::avx512) ? dot_isa::avx512
                                : dot_isa_supported(dot_isa::avx2) ? dot_isa::avx2
                                                                   : dot_isa::baseline;
    return best;
}

}  // namespace detail

using detail::best_dot_isa;
using detail::dot_isa;
using detail::dot_isa_supported;

/// out[r] = sum_i a[i] * b[r * n + i] for r < rows, in int32, on the path `k` (which the CPU
/// must support).
inline void dots(dot_isa k, const std::int16_t* a, const std::int16_t* b, std::size_t rows, std::size_t n, std::int32_t* out) {
#if VNNX_DOTS_X86
    if (k == dot_isa::avx512) return detail::dots_avx512(a, b, rows, n, out);
    if (k == dot_isa::avx2) return detail::dots_avx2(a, b, rows, n, out);
#else
    (void)k;
#endif
    detail::dots_baseline(a, b, rows, n, out);
}

/// The same on the CPU's best path.
inline void dots(const std::int16_t* a, const std::int16_t* b, std::size_t rows, std::size_t n, std::int32_t* out) {
    dots(best_dot_isa(), a, b, rows, n, out);
}

}  // namespace vnnx::quant
