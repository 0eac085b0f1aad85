#pragma once
// AVX2 kernels of the exact integer bilinear resize (layers/resize.hpp, bilinear_dyadic): its
// column pass, its row pass, and the row pass folded into a running channel ARG_MAX (the
// segmentation head). The arithmetic is that of the plain loops there, in 16-bit lanes.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels {

/// The column pass's taps as 16-byte windows: output columns 16g .. 16g+15 read their low taps
/// at row[lo_base[g] + lo_idx[16g + j]] (likewise high), so one byte shuffle per window gathers
/// them. Exists when every group's taps span fewer than 16 input columns (upsampling, or mild
/// downsampling); columns past the last (x >= w) read the window's first byte, weighted zero.
struct column_windows {
    std::vector<std::int32_t> lo_base, hi_base;
    std::vector<std::uint8_t> lo_idx, hi_idx;

    /// lx/hx: the taps of the w output columns; `padded` (a multiple of 16, >= w) columns are made.
    static std::optional<column_windows> make(const std::uint8_t* lx, const std::uint8_t* hx, std::size_t w,
                                              std::size_t padded) {
        column_windows c;
        const std::size_t groups = padded / 16;
        c.lo_base.resize(groups);
        c.hi_base.resize(groups);
        c.lo_idx.assign(padded, 0);
        c.hi_idx.assign(padded, 0);
        for (std::size_t g = 0; g < groups && 16 * g < w; ++g) {
            if (!fill(lx, 16 * g, std::min(w, 16 * g + 16), c.lo_base[g], c.lo_idx.data()) ||
                !fill(hx, 16 * g, std::min(w, 16 * g + 16), c.hi_base[g], c.hi_idx.data()))
                return std::nullopt;
        }
        return c;
    }

private:
    static bool fill(const std::uint8_t* taps, std::size_t x0, std::size_t x1, std::int32_t& base, std::uint8_t* idx) {
        std::uint8_t lo = taps[x0], hi = taps[x0];
        for (std::size_t x = x0; x < x1; ++x) {
            lo = std::min(lo, taps[x]);
            hi = std::max(hi, taps[x]);
        }
        if (hi - lo >= 16) return false;
        base = lo;
        for (std::size_t x = x0; x < x1; ++x) idx[x] = static_cast<std::uint8_t>(taps[x] - lo);
        return true;
    }
};

#if VNNX_SIM_X86
/// One input row's column pass: dst[x] = row[lo] * wl[x] + row[hi] * wh[x] for the padded
/// columns of `cw` (16 per step). `row` must be readable 16 bytes past its last column.
VNNX_TARGET_AVX2 inline void dyadic_columns_avx2(const std::uint8_t* row, const column_windows& cw,
                                                 const std::uint16_t* wl, const std::uint16_t* wh, std::uint16_t* dst) {
    for (std::size_t g = 0; g < cw.lo_base.size(); ++g) {
        const __m128i l = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + cw.lo_base[g])),
                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(cw.lo_idx.data() + 16 * g)));
        const __m128i h = _mm_shuffle_epi8(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + cw.hi_base[g])),
                                           _mm_loadu_si128(reinterpret_cast<const __m128i*>(cw.hi_idx.data() + 16 * g)));
        const __m256i r = _mm256_add_epi16(
            _mm256_mullo_epi16(_mm256_cvtepu8_epi16(l), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wl + 16 * g))),
            _mm256_mullo_epi16(_mm256_cvtepu8_epi16(h), _mm256_loadu_si256(reinterpret_cast<const __m256i*>(wh + 16 * g))));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 16 * g), r);
    }
}

/// One output row of the row pass: dst[x] = (a[x] * wa + b[x] * wb + round) >> shift, 32 per
/// step, the last w % 32 columns by the same rule one at a time.
VNNX_TARGET_AVX2 inline void dyadic_row_avx2(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t wa,
                                             std::uint16_t wb, std::uint16_t round, int shift, std::size_t w,
                                             std::uint8_t* dst) {
    const __m256i va = _mm256_set1_epi16(static_cast<short>(wa)), vb = _mm256_set1_epi16(static_cast<short>(wb)),
                  vr = _mm256_set1_epi16(static_cast<short>(round));
    const __m128i sh = _mm_cvtsi32_si128(shift);
    std::size_t x = 0;
    for (; x + 32 <= w; x += 32) {
        __m256i half[2];
        for (int j = 0; j < 2; ++j) {
            const auto* pa = reinterpret_cast<const __m256i*>(a + x + 16 * j);
            const auto* pb = reinterpret_cast<const __m256i*>(b + x + 16 * j);
            const __m256i r = _mm256_add_epi16(_mm256_mullo_epi16(_mm256_loadu_si256(pa), va),
                                               _mm256_mullo_epi16(_mm256_loadu_si256(pb), vb));
            half[j] = _mm256_srl_epi16(_mm256_add_epi16(r, vr), sh);
        }
        // packus interleaves the two halves by 128-bit lane; the permute restores column order.
        const __m256i p = _mm256_permute4x64_epi64(_mm256_packus_epi16(half[0], half[1]), 0xD8);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + x), p);
    }
    for (; x < w; ++x) dst[x] = static_cast<std::uint8_t>((a[x] * wa + b[x] * wb + round) >> shift);
}

/// The rows of one plane between the same two column-weighted input rows a and b folded into a
/// running channel ARG_MAX: where a row's value exceeds best (strictly: the first maximum stays),
/// it becomes best and idx gets `plane`; plane 0 sets both. A row's value is
/// (uy*a + round + wb*(b - a)) >> shift, equal modulo 2^16 to wa*a + wb*b + round, a sum below
/// 2^16, and at most 255, so signed 16-bit compares order it. uy*a + round and b - a are formed
/// once per 32 columns and kept over the rows. `wp` (a multiple of 32) columns are processed:
/// a, b, best (rows best_pitch apart) and idx (rows wp apart) must hold them.
VNNX_TARGET_AVX2 inline void dyadic_argmax_rows_avx2(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t uy,
                                                     std::uint16_t round, int shift, std::size_t wp,
                                                     const std::uint16_t* wb, int rows, std::uint8_t plane,
                                                     std::uint16_t* best, std::size_t best_pitch, std::uint8_t* idx) {
    const __m128i sh = _mm_cvtsi32_si128(shift);
    const __m256i vu = _mm256_set1_epi16(static_cast<short>(uy)), vr = _mm256_set1_epi16(static_cast<short>(round));
    const __m256i vp = _mm256_set1_epi8(static_cast<char>(plane));
    for (std::size_t x0 = 0; x0 < wp; x0 += 32) {
        __m256i base[2], diff[2];
        for (int j = 0; j < 2; ++j) {
            const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + x0 + 16 * j));
            const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + x0 + 16 * j));
            base[j] = _mm256_add_epi16(_mm256_mullo_epi16(va, vu), vr);
            diff[j] = _mm256_sub_epi16(vb, va);
        }
        for (int r = 0; r < rows; ++r) {
            const __m256i vw = _mm256_set1_epi16(static_cast<short>(wb[r]));
            auto* bt = reinterpret_cast<__m256i*>(best + static_cast<std::size_t>(r) * best_pitch + x0);
            auto* ix = reinterpret_cast<__m256i*>(idx + static_cast<std::size_t>(r) * wp + x0);
            const __m256i v0 = _mm256_srl_epi16(_mm256_add_epi16(base[0], _mm256_mullo_epi16(diff[0], vw)), sh);
            const __m256i v1 = _mm256_srl_epi16(_mm256_add_epi16(base[1], _mm256_mullo_epi16(diff[1], vw)), sh);
            if (plane == 0) {
                _mm256_storeu_si256(bt, v0);
                _mm256_storeu_si256(bt + 1, v1);
                _mm256_storeu_si256(ix, _mm256_setzero_si256());
                continue;
            }
            const __m256i b0 = _mm256_loadu_si256(bt), b1 = _mm256_loadu_si256(bt + 1);
            const __m256i take = _mm256_permute4x64_epi64(
                _mm256_packs_epi16(_mm256_cmpgt_epi16(v0, b0), _mm256_cmpgt_epi16(v1, b1)), 0xD8);
            _mm256_storeu_si256(bt, _mm256_max_epi16(v0, b0));
            _mm256_storeu_si256(bt + 1, _mm256_max_epi16(v1, b1));
            _mm256_storeu_si256(ix, _mm256_blendv_epi8(_mm256_loadu_si256(ix), vp, take));
        }
    }
}
#endif

}  // namespace vnnx::sim::kernels
