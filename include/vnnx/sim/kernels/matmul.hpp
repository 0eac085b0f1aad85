#pragma once
// The int8 matrix product of the BATCH_MATMUL node (attention's Q·Kᵀ and P·V):
//   acc[j][i] = sum_k (a[i][k] - za) * (b[j][k] - zb)
// over M rows of A and N rows of B (B's columns), K codes each, summed in int32 exactly (the
// element-by-element definition's int32; the caller bounds K so that it fits), and TFLite's
// single-rounding requantization of those sums.
//
// Paths, all giving the same integers:
// - scalar and AVX2: the codes minus their zero points as int16, dot products by pmaddwd
//   (quant/int16_dots.hpp);
// - AVX-512 VNNI: vpdpbusd on A's codes plus 128 (unsigned) and B's codes as they are, 16 rows
//   of A per vector (four codes of each row per 32-bit lane) against 8 columns of B broadcast,
//   then  sum (a - za)(b - zb) = sum (a + 128) b - (128 + za) sum b - zb sum a + K za zb.
//   The terms wrap in 32 bits; the true sum fits in int32, so the wrapped result is it.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "vnnx/quant/fixed_point.hpp"
#include "vnnx/quant/int16_dots.hpp"
#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels {

namespace matmul_detail {

inline constexpr std::size_t panel_rows = 16;  // rows of A per vector (int32 lanes of a zmm)
inline constexpr std::size_t tile_cols = 8;    // columns of B per tile (8 x 2 accumulators)

[[nodiscard]] inline std::uint32_t wrap(std::int64_t v) noexcept { return static_cast<std::uint32_t>(v); }

#if VNNX_SIM_X86
// Sums of the tile of `tile_cols` columns from b (column stride kp bytes) and P panels of A
// (panel stride `ps` bytes), corrected by the row and column terms and stored for the columns
// below `cols` and the rows below `rows` (relative to the tile): out[j * m + i].
template <int P>
VNNX_TARGET_AVX512 inline void vnni_tile(const std::uint8_t* a, std::size_t ps, const std::int8_t* b, std::size_t kp,
                                         const std::int32_t* row_term, const std::int32_t* col_term, std::size_t rows,
                                         std::size_t cols, std::int32_t* out, std::size_t m) {
    // The loops over the tile are unrolled so that the 8 x P accumulators stay in registers.
    __m512i acc[tile_cols][P];
#pragma GCC unroll 8
    for (std::size_t j = 0; j < tile_cols; ++j)
#pragma GCC unroll 2
        for (int p = 0; p < P; ++p) acc[j][p] = _mm512_setzero_si512();
    for (std::size_t q = 0; q < kp; q += 4) {
        __m512i av[P];
#pragma GCC unroll 2
        for (int p = 0; p < P; ++p) av[p] = _mm512_loadu_si512(a + static_cast<std::size_t>(p) * ps + q * panel_rows);
#pragma GCC unroll 8
        for (std::size_t j = 0; j < tile_cols; ++j) {
            std::int32_t word = 0;
            std::memcpy(&word, b + j * kp + q, 4);
            const __m512i bv = _mm512_set1_epi32(word);
#pragma GCC unroll 2
            for (int p = 0; p < P; ++p) acc[j][p] = _mm512_dpbusd_epi32(acc[j][p], av[p], bv);
        }
    }
    for (int p = 0; p < P; ++p) {
        const std::size_t r0 = static_cast<std::size_t>(p) * panel_rows;
        if (r0 >= rows) break;
        const std::size_t live = std::min(panel_rows, rows - r0);
        const __mmask16 mask = live >= 16 ? __mmask16{0xFFFF} : static_cast<__mmask16>((1u << live) - 1);
        const __m512i rt = _mm512_loadu_si512(row_term + r0);
        for (std::size_t j = 0; j < cols; ++j) {
            const __m512i v = _mm512_sub_epi32(_mm512_sub_epi32(acc[j][p], rt), _mm512_set1_epi32(col_term[j]));
            if (live == panel_rows) _mm512_storeu_si512(out + j * m + r0, v);  // masked stores cost more
            else _mm512_mask_storeu_epi32(out + j * m + r0, mask, v);
        }
    }
}

// TFLite's single-rounding requantization of 16 sums at a time, stored as int8 codes:
// (x * multiplier + 2^(t-1)) >> t in 64 bits (t = 31 - shift, 1..62), plus the output zero
// point, clamped to int8. The clamp to +-2^30 before the zero point is added changes no result.
// One half: the even 32-bit lanes of x as 64-bit products, rounded, shifted and clamped.
VNNX_TARGET_AVX512 inline __m512i requant_qm_half(__m512i x, __m512i mv, __m512i round, __m128i count) {
    const __m512i r = _mm512_sra_epi64(_mm512_add_epi64(_mm512_mul_epi32(x, mv), round), count);
    return _mm512_min_epi64(_mm512_max_epi64(r, _mm512_set1_epi64(-(std::int64_t{1} << 30))),
                            _mm512_set1_epi64(std::int64_t{1} << 30));
}

VNNX_TARGET_AVX512 inline std::size_t requant_qm_avx512(const std::int32_t* acc, std::size_t n, std::int32_t multiplier,
                                                        int t, std::int32_t zo, std::int8_t* out) {
    const __m512i mv = _mm512_set1_epi64(multiplier), round = _mm512_set1_epi64(std::int64_t{1} << (t - 1));
    const __m128i count = _mm_cvtsi32_si128(t);
    const __m512i z = _mm512_set1_epi32(zo);
    std::size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512i x = _mm512_loadu_si512(acc + i);
        const __m512i even = requant_qm_half(x, mv, round, count);
        const __m512i odd = requant_qm_half(_mm512_srli_epi64(x, 32), mv, round, count);
        const __m512i v = _mm512_mask_blend_epi32(__mmask16{0xAAAA}, even, _mm512_slli_epi64(odd, 32));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtsepi32_epi8(_mm512_add_epi32(v, z)));
    }
    return i;
}
#endif

}  // namespace matmul_detail

/// One batch's operands packed for the chosen path; columns() may run on several threads at once.
class int8_matmul {
public:
    /// a: m rows of k codes, b: n rows of k codes (both contiguous); za, zb their zero points.
    void set(isa_kind isa, const std::int8_t* a, const std::int8_t* b, std::size_t m, std::size_t n, std::size_t k,
             std::int32_t za, std::int32_t zb) {
        m_ = m, k_ = k;
        vnni_ = false;
#if VNNX_SIM_X86
        vnni_ = uses_avx512(isa);
#endif
        if (!vnni_) {
            path_ = isa == isa_kind::avx2 ? quant::dot_isa::avx2 : quant::dot_isa::baseline;
            a16_.resize(m * k);
            b16_.resize(n * k);
            for (std::size_t i = 0; i < m * k; ++i) a16_[i] = static_cast<std::int16_t>(a[i] - za);
            for (std::size_t i = 0; i < n * k; ++i) b16_[i] = static_cast<std::int16_t>(b[i] - zb);
            return;
        }
        using namespace matmul_detail;
        // A: panels of 16 rows, each 4 codes of a row per 32-bit lane, plus 128 (0x80 pads: code 0).
        kp_ = (k + 3) / 4 * 4;
        panels_ = (m + panel_rows - 1) / panel_rows;
        ap_.assign(panels_ * panel_rows * kp_, 0x80);
        row_term_.assign(panels_ * panel_rows, 0);
        for (std::size_t i = 0; i < m; ++i) {
            std::uint8_t* dst = ap_.data() + (i / panel_rows) * panel_rows * kp_ + (i % panel_rows) * 4;
            const std::int8_t* row = a + i * k;
            for (std::size_t q = 0; q + 4 <= k; q += 4) {  // four codes at a time, each plus 128
                std::uint32_t word = 0;
                std::memcpy(&word, row + q, 4);
                word ^= 0x80808080u;
                std::memcpy(dst + q * panel_rows, &word, 4);
            }
            for (std::size_t q = k / 4 * 4; q < k; ++q)
                dst[(q / 4) * panel_rows * 4 + q % 4] = static_cast<std::uint8_t>(row[q] ^ 0x80);
            row_term_[i] = static_cast<std::int32_t>(wrap(static_cast<std::int64_t>(zb) * code_sum(row, k)));
        }
        // B: each column's codes padded with zeros to kp (zero contributes nothing), and a
        // tile's worth of zero columns past the last so every tile reads whole columns.
        bp_.assign((n + tile_cols) * kp_, 0);
        col_term_.assign(n + tile_cols, 0);
        const std::int64_t kzz = static_cast<std::int64_t>(k) * za * zb;
        for (std::size_t j = 0; j < n; ++j) {
            std::memcpy(bp_.data() + j * kp_, b + j * k, k);
            col_term_[j] = static_cast<std::int32_t>(wrap((128 + static_cast<std::int64_t>(za)) * code_sum(b + j * k, k) - kzz));
        }
    }

    /// Calls emit(j, sums) for j0 <= j < j1, sums[i] (i < m) being column j's; in order of j.
    template <class Emit>
    void columns(std::size_t j0, std::size_t j1, Emit&& emit) const {
        std::vector<std::int32_t> acc(matmul_detail::tile_cols * m_);
#if VNNX_SIM_X86
        if (vnni_) {
            using namespace matmul_detail;
            const std::size_t ps = panel_rows * kp_;
            for (std::size_t j = j0; j < j1; j += tile_cols) {
                const std::size_t cols = std::min(tile_cols, j1 - j);
                for (std::size_t p = 0; p < panels_; p += 2) {
                    const std::size_t r0 = p * panel_rows, rows = m_ - r0;
                    const std::uint8_t* a = ap_.data() + p * ps;
                    const std::int8_t* b = bp_.data() + j * kp_;
                    std::int32_t* out = acc.data() + r0;
                    if (p + 1 < panels_)
                        vnni_tile<2>(a, ps, b, kp_, row_term_.data() + r0, col_term_.data() + j, rows, cols, out, m_);
                    else
                        vnni_tile<1>(a, ps, b, kp_, row_term_.data() + r0, col_term_.data() + j, rows, cols, out, m_);
                }
                for (std::size_t c = 0; c < cols; ++c) emit(j + c, acc.data() + c * m_);
            }
            return;
        }
#endif
        for (std::size_t j = j0; j < j1; ++j) {
            quant::dots(path_, b16_.data() + j * k_, a16_.data(), m_, k_, acc.data());
            emit(j, acc.data());
        }
    }

private:
    // The sum of k codes; int32 holds it (k <= 33000, |code| <= 128), so the loop vectorizes.
    static std::int32_t code_sum(const std::int8_t* v, std::size_t k) {
        std::int32_t sum = 0;
        for (std::size_t q = 0; q < k; ++q) sum += v[q];
        return sum;
    }

    std::size_t m_ = 0, k_ = 0, kp_ = 0, panels_ = 0;
    bool vnni_ = false;
    quant::dot_isa path_ = quant::dot_isa::baseline;
    std::vector<std::int16_t> a16_, b16_;
    std::vector<std::uint8_t> ap_;
    std::vector<std::int8_t> bp_;
    std::vector<std::int32_t> row_term_, col_term_;
};

/// out[i * step] = clamp(MultiplyByQuantizedMultiplier (single rounding)(acc[i]) + zo) for i < n.
inline void requant_qm(isa_kind isa, const std::int32_t* acc, std::size_t n, std::int32_t multiplier, int shift,
                       std::int32_t zo, std::int8_t* out, std::ptrdiff_t step) {
    std::size_t i = 0;
#if VNNX_SIM_X86
    const int t = 31 - shift;
    if (uses_avx512(isa) && step == 1 && t >= 1 && t <= 62 && multiplier >= 0)
        i = matmul_detail::requant_qm_avx512(acc, n, multiplier, t, zo, out);
#else
    (void)isa;
#endif
    // The zero point is added in 64 bits: a scaled sum at int32's limit saturates, not wraps.
    for (; i < n; ++i) {
        const std::int64_t v =
            std::int64_t{quant::multiply_by_quantized_multiplier_single_round(acc[i], multiplier, shift)} + zo;
        out[static_cast<std::ptrdiff_t>(i) * step] = static_cast<std::int8_t>(std::clamp<std::int64_t>(v, -128, 127));
    }
}

}  // namespace vnnx::sim::kernels
