#pragma once
// RESIZE_NEAREST_NEIGHBOR (97) and RESIZE_BILINEAR (23) layers. The geometry comes from the
// input and output records ([.., C, H, W]); ResizeOptions.scale must agree with it, `mode`
// is read by quant/resize_rule.hpp, which also has the source-index rules. The arithmetic is
// TFLite's: nearest with its 16-bit fixed-point ratio (its float rule when a flag is set);
// int8 bilinear with 10-bit integer positions and weights, rounded half away from zero;
// uint8 bilinear in float with +0.5 and truncation, as TFLite's optimized uint8 kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/quant/resize_rule.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/double_bytes.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/dyadic_avx2.hpp"
#include "vnnx/sim/thread_pool.hpp"

namespace vnnx::sim {

namespace resize_exec_detail {

using quant::resize::nearest_source;

/// The two source indices of an output index and the weight of the upper one, in the form
/// the kernels below take; the rule itself is quant/resize_rule.hpp's.
struct tap {
    std::int32_t lo = 0, hi = 0;
    std::int64_t frac = 0;  // weight of `hi` in 1/1024 (integer) ...
    float ffrac = 0;        // ... or as a float
};

inline tap integer_tap(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    const auto q = quant::resize::integer_tap_of(v, in, out, align, half);
    return tap{q.lo, q.hi, q.frac, 0.0f};
}

inline tap float_tap(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    const auto q = quant::resize::float_tap_of(v, in, out, align, half);
    return tap{q.lo, q.hi, 0, q.frac};
}

#if VNNX_SIM_X86
// One output row of bilinear_float, 16 columns per step. The *_round_ps intrinsics keep each
// multiply and add rounded on its own (plain vector arithmetic may be fused into FMAs, which
// round once and would differ from the scalar rule); the rounding mode is the default.
VNNX_TARGET_AVX512 inline std::size_t bilinear_row_avx512(const float* a, const float* b, const float* c,
                                                          const float* d, const float* fx, const float* nfx, float dy,
                                                          float ndy, std::size_t w, std::uint8_t* dst) {
    constexpr int rn = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
    const __m512 vdy = _mm512_set1_ps(dy), vndy = _mm512_set1_ps(ndy), half = _mm512_set1_ps(0.5f);
    std::size_t x = 0;
    for (; x + 16 <= w; x += 16) {
        const __m512 dx = _mm512_loadu_ps(fx + x), ndx = _mm512_loadu_ps(nfx + x);
        __m512 r = _mm512_mul_round_ps(_mm512_loadu_ps(a + x), _mm512_mul_round_ps(vndy, ndx, rn), rn);
        r = _mm512_add_round_ps(r, _mm512_mul_round_ps(_mm512_loadu_ps(b + x), _mm512_mul_round_ps(vndy, dx, rn), rn), rn);
        r = _mm512_add_round_ps(r, _mm512_mul_round_ps(_mm512_loadu_ps(c + x), _mm512_mul_round_ps(vdy, ndx, rn), rn), rn);
        r = _mm512_add_round_ps(r, _mm512_mul_round_ps(_mm512_loadu_ps(d + x), _mm512_mul_round_ps(vdy, dx, rn), rn), rn);
        r = _mm512_add_round_ps(r, half, rn);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + x), _mm512_cvtepi32_epi8(_mm512_cvttps_epi32(r)));
    }
    return x;
}
#endif

#if VNNX_SIM_X86
// One input row's values at the output columns' taps as floats (rows of at most 64 bytes):
// `lx`/`hx` hold the taps' columns as byte indices, 64 output columns per vector (VBMI).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) inline void tap_row_vbmi(const std::uint8_t* row, std::int32_t iw, const std::uint8_t* lx,
                                              const std::uint8_t* hx, std::size_t w, float* lo, float* hi) {
    const __mmask64 rm = iw >= 64 ? ~__mmask64{0} : (__mmask64{1} << iw) - 1;
    const __m512i src = _mm512_maskz_loadu_epi8(rm, row);
    for (std::size_t x = 0; x < w; x += 64) {
        alignas(64) std::uint8_t l[64], h[64];
        _mm512_store_si512(l, _mm512_permutexvar_epi8(_mm512_loadu_si512(lx + x), src));
        _mm512_store_si512(h, _mm512_permutexvar_epi8(_mm512_loadu_si512(hx + x), src));
        for (std::size_t q = 0; q < 4 && x + 16 * q < w; ++q) {
            const std::size_t n = std::min<std::size_t>(16, w - x - 16 * q);
            const __mmask16 m = n >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
            const __m128i lb = _mm_load_si128(reinterpret_cast<const __m128i*>(l + 16 * q));
            const __m128i hb = _mm_load_si128(reinterpret_cast<const __m128i*>(h + 16 * q));
            _mm512_mask_storeu_ps(lo + x + 16 * q, m, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(lb)));
            _mm512_mask_storeu_ps(hi + x + 16 * q, m, _mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(hb)));
        }
    }
}
#endif

// The number of bits m for which every tap weight is k / 2^m with 0 <= k <= 2^m, or -1 (for
// m up to 8). A power-of-two scale with align_corners, DeepLabV3's 33 -> 513, gives m = 4.
inline int dyadic_bits(const std::vector<tap>& taps) {
    for (int m = 0; m <= 8; ++m) {
        const float unit = std::ldexp(1.0f, m);
        const bool all = std::all_of(taps.begin(), taps.end(), [&](const tap& t) {
            const float k = t.ffrac * unit;  // exact: a power-of-two multiple
            return t.ffrac >= 0 && t.ffrac <= 1 && k == std::floor(k);
        });
        if (all) return m;
    }
    return -1;
}

#if VNNX_SIM_X86
// One input row of bilinear_dyadic's column pass for rows of at most 64 bytes: the taps' bytes
// by byte permutes (VBMI), widened and weighted in 16-bit lanes; writes whole 32-lane vectors
// (the rows are padded to 64 lanes).
__attribute__((target("avx512f,avx512bw,avx512vl,avx512vbmi"))) inline void dyadic_columns_vbmi(
    const std::uint8_t* row, std::int32_t iw, const std::uint8_t* lx, const std::uint8_t* hx, const std::uint16_t* wl,
    const std::uint16_t* wh, std::size_t w, std::uint16_t* dst) {
    const __mmask64 rm = iw >= 64 ? ~__mmask64{0} : (__mmask64{1} << iw) - 1;
    const __m512i src = _mm512_maskz_loadu_epi8(rm, row);
    for (std::size_t x = 0; x < w; x += 32) {
        const __m256i l = _mm512_castsi512_si256(_mm512_permutexvar_epi8(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(lx + x))), src));
        const __m256i h = _mm512_castsi512_si256(_mm512_permutexvar_epi8(_mm512_castsi256_si512(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(hx + x))), src));
        const __m512i r = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_cvtepu8_epi16(l), _mm512_loadu_si512(wl + x)),
                                           _mm512_mullo_epi16(_mm512_cvtepu8_epi16(h), _mm512_loadu_si512(wh + x)));
        _mm512_storeu_si512(dst + x, r);
    }
}

// The row pass's arithmetic for 32 outputs at x: (wa*a + wb*b + round) >> shift in 16-bit lanes.
struct dyadic_rows16 {
    __m512i va, vb, vr;
    __m128i sh;
    VNNX_TARGET_AVX512 dyadic_rows16(std::uint16_t wa, std::uint16_t wb, std::uint16_t round, int shift)
        : va(_mm512_set1_epi16(static_cast<short>(wa))), vb(_mm512_set1_epi16(static_cast<short>(wb))),
          vr(_mm512_set1_epi16(static_cast<short>(round))), sh(_mm_cvtsi32_si128(shift)) {}
    VNNX_TARGET_AVX512 __m512i at(const std::uint16_t* a, const std::uint16_t* b, std::size_t x) const {
        const __m512i r = _mm512_add_epi16(_mm512_mullo_epi16(_mm512_loadu_si512(a + x), va),
                                           _mm512_mullo_epi16(_mm512_loadu_si512(b + x), vb));
        return _mm512_srl_epi16(_mm512_add_epi16(r, vr), sh);
    }
};

// One output row of bilinear_dyadic's row pass, narrowed to bytes, 32 outputs per step.
VNNX_TARGET_AVX512 inline void dyadic_row_avx512(const std::uint16_t* a, const std::uint16_t* b, std::uint16_t wa,
                                                 std::uint16_t wb, std::uint16_t round, int shift, std::size_t w,
                                                 std::uint8_t* dst) {
    const dyadic_rows16 k(wa, wb, round, shift);
    for (std::size_t x = 0; x < w; x += 32) {
        const std::size_t left = w - x;
        const __mmask32 m = left >= 32 ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
        _mm512_mask_cvtepi16_storeu_epi8(dst + x, m, k.at(a, b, x));
    }
}

// The output rows of one plane between the same two weighted input rows a and b, into a
// running channel ARG_MAX instead of output rows: where a row's value exceeds `best` (strictly,
// so the first maximum stays) it becomes `best` and idx gets `plane`; plane 0 sets both. A row's
// value is (uy*a + round + wb*(b - a)) >> shift, wb its weight of b: the same 16-bit sum as
// wa*a + wb*b + round modulo 2^16, and that sum is below 2^16. uy*a + round and b - a are
// formed once per 64 columns and kept in registers over the rows, so a row costs one multiply,
// one add and one shift per 32 outputs. best holds 16-bit values, `rows` rows best_pitch apart;
// idx rows are w apart; a and b are readable to a whole multiple of 64 columns.
VNNX_TARGET_AVX512 inline void dyadic_argmax_rows_avx512(const std::uint16_t* a, const std::uint16_t* b,
                                                         std::uint16_t uy, std::uint16_t round, int shift,
                                                         std::size_t w, const std::uint16_t* wb, int rows,
                                                         std::uint8_t plane, std::uint16_t* best,
                                                         std::size_t best_pitch, std::uint8_t* idx) {
    const __m128i sh = _mm_cvtsi32_si128(shift);
    const __m512i vu = _mm512_set1_epi16(static_cast<short>(uy)), vr = _mm512_set1_epi16(static_cast<short>(round));
    const __m256i vp = _mm256_set1_epi8(static_cast<char>(plane));
    for (std::size_t x0 = 0; x0 < w; x0 += 64) {
        __m512i base[2], diff[2];
        __mmask32 valid[2];
#pragma GCC unroll 2
        for (int j = 0; j < 2; ++j) {
            const __m512i va = _mm512_loadu_si512(a + x0 + 32 * j), vb = _mm512_loadu_si512(b + x0 + 32 * j);
            base[j] = _mm512_add_epi16(_mm512_mullo_epi16(va, vu), vr);
            diff[j] = _mm512_sub_epi16(vb, va);
            const std::size_t left = w > x0 + 32 * j ? w - x0 - 32 * j : 0;
            valid[j] = left >= 32 ? ~__mmask32{0} : static_cast<__mmask32>((std::uint64_t{1} << left) - 1);
        }
        for (int r = 0; r < rows; ++r) {
            const __m512i vw = _mm512_set1_epi16(static_cast<short>(wb[r]));
            std::uint16_t* bt = best + static_cast<std::size_t>(r) * best_pitch + x0;
            std::uint8_t* ix = idx + static_cast<std::size_t>(r) * w + x0;
#pragma GCC unroll 2
            for (int j = 0; j < 2; ++j) {
                const __m512i v = _mm512_srl_epi16(_mm512_add_epi16(base[j], _mm512_mullo_epi16(diff[j], vw)), sh);
                const __mmask32 take =
                    plane == 0 ? valid[j] : _mm512_mask_cmpgt_epu16_mask(valid[j], v, _mm512_loadu_si512(bt + 32 * j));
                _mm512_mask_storeu_epi16(bt + 32 * j, take, v);
                _mm256_mask_storeu_epi8(ix + 32 * j, take, vp);
            }
        }
    }
}
#endif

// uint8 bilinear whose column weights are all k / 2^mx and row weights k / 2^my, with
// mx + my <= 8. Then every product and partial sum of the float rule has a numerator below
// 2^16 over 2^(mx+my), so none is rounded, the +0.5 neither, and truncating the positive result
// is flooring it: the rule equals (sum of the taps times the integer weights + 2^(m-1)) >> m,
// m = mx + my, in 16-bit lanes (at most 255 * 2^m + 2^(m-1) < 2^16). Columns are weighted once
// per input row, then each output row is two weighted rows. Work items are bands of output rows
// with every plane in them, so the next layer's pixel blocks over the pool read what the same
// thread wrote.
//
// `isa` selects the AVX-512 or AVX2 kernels (kernels/dyadic_avx2.hpp), else plain loops.
// With `labels` (AVX2 or AVX-512) the output is not written: labels[pixel] gets the index of the
// first plane with the largest value there, the channel ARG_MAX of the resized planes (at most
// 256), without the planes ever leaving a band's rows.
inline void bilinear_dyadic(const std::uint8_t* in, std::uint8_t* out, std::size_t planes, std::int32_t ih,
                            std::int32_t iw, std::int32_t oh, const std::vector<tap>& tx, const std::vector<tap>& ty,
                            int mx, int my, isa_kind isa, thread_pool* pool, std::uint8_t* labels = nullptr) {
    const std::size_t w = tx.size(), wp = (w + 63) / 64 * 64;  // rows padded to whole vectors
    const std::uint16_t ux = static_cast<std::uint16_t>(1u << mx), uy = static_cast<std::uint16_t>(1u << my);
    std::vector<std::uint16_t> wl(wp, 0), wh(wp, 0);
    std::vector<std::uint8_t> lx(wp, 0), hx(wp, 0);
    for (std::size_t x = 0; x < w; ++x) {
        wh[x] = static_cast<std::uint16_t>(tx[x].ffrac * static_cast<float>(ux));
        wl[x] = static_cast<std::uint16_t>(ux - wh[x]);
        lx[x] = static_cast<std::uint8_t>(tx[x].lo);
        hx[x] = static_cast<std::uint8_t>(tx[x].hi);
    }
    // The caller's ISA choice, which the CPU supports; AVX-512 CPUs run the AVX2 kernels too.
    bool avx512 = false, avx2 = false, vbmi = false;
#if VNNX_SIM_X86
    avx512 = uses_avx512(isa);
    avx2 = isa != isa_kind::scalar;
    vbmi = uses_vbmi(isa) && iw <= 64;
#endif
    std::optional<kernels::column_windows> windows;
    if (avx2 && !vbmi) windows = kernels::column_windows::make(lx.data(), hx.data(), w, wp);
    if (labels && (!avx2 || planes > 256))
        fail(error_kind::unsupported, "resize: the fused channel ARG_MAX needs AVX2 and at most 256 planes");
    const int shift = mx + my;
    const auto round = static_cast<std::uint16_t>((1u << shift) / 2);
    const std::size_t ip = static_cast<std::size_t>(ih) * static_cast<std::size_t>(iw), op = static_cast<std::size_t>(oh) * w;
    // An output row's weight of its lower input row (hi), in units of 1 / 2^my.
    auto row_weight = [uy](const tap& t) { return static_cast<std::uint16_t>(t.ffrac * static_cast<float>(uy)); };
    constexpr std::int32_t band = 16;
    const auto bands = static_cast<std::size_t>((oh + band - 1) / band);
    auto body = [&](std::size_t item) {
        const std::int32_t y0 = static_cast<std::int32_t>(item) * band, y1 = std::min(oh, y0 + band);
        // The input rows this band reads: from the first row's low tap to the last row's high one.
        std::int32_t r0 = ih, r1 = 0;
        for (std::int32_t y = y0; y < y1; ++y) {
            r0 = std::min(r0, ty[static_cast<std::size_t>(y)].lo);
            r1 = std::max(r1, ty[static_cast<std::size_t>(y)].hi + 1);
        }
        std::vector<std::uint16_t> cols(static_cast<std::size_t>(r1 - r0) * wp);
        std::vector<std::uint16_t> best16(labels ? static_cast<std::size_t>(y1 - y0) * wp : 0), wbs;
        for (std::int32_t y = y0; labels && y < y1; ++y) wbs.push_back(row_weight(ty[static_cast<std::size_t>(y)]));
        // AVX2's labels: the band's rows padded to wp, copied out once every plane is seen.
        std::vector<std::uint8_t> idx8(labels && !avx512 ? static_cast<std::size_t>(y1 - y0) * wp : 0);
        // An input row with 16 readable bytes past its end, for the windows' loads.
        std::vector<std::uint8_t> padded_row(windows ? static_cast<std::size_t>(iw) + 16 : 0);
        for (std::size_t p = 0; p < planes; ++p) {
            for (std::int32_t r = r0; r < r1; ++r) {
                const std::uint8_t* row = in + p * ip + static_cast<std::size_t>(r) * static_cast<std::size_t>(iw);
                std::uint16_t* dst = cols.data() + static_cast<std::size_t>(r - r0) * wp;
#if VNNX_SIM_X86
                if (vbmi) {
                    dyadic_columns_vbmi(row, iw, lx.data(), hx.data(), wl.data(), wh.data(), w, dst);
                    continue;
                }
                if (windows) {
                    std::memcpy(padded_row.data(), row, static_cast<std::size_t>(iw));
                    kernels::dyadic_columns_avx2(padded_row.data(), *windows, wl.data(), wh.data(), dst);
                    continue;
                }
#endif
                for (std::size_t x = 0; x < w; ++x)
                    dst[x] = static_cast<std::uint16_t>(row[lx[x]] * wl[x] + row[hx[x]] * wh[x]);
            }
#if VNNX_SIM_X86
            if (labels) {
                // Runs of rows between the same two input rows at a time.
                for (std::int32_t y = y0; y < y1;) {
                    const tap& t = ty[static_cast<std::size_t>(y)];
                    std::int32_t e = y + 1;
                    while (e < y1 && ty[static_cast<std::size_t>(e)].lo == t.lo && ty[static_cast<std::size_t>(e)].hi == t.hi) ++e;
                    const std::uint16_t* a = cols.data() + static_cast<std::size_t>(t.lo - r0) * wp;
                    const std::uint16_t* b = cols.data() + static_cast<std::size_t>(t.hi - r0) * wp;
                    std::uint16_t* bt = best16.data() + static_cast<std::size_t>(y - y0) * wp;
                    if (avx512)
                        dyadic_argmax_rows_avx512(a, b, uy, round, shift, w, wbs.data() + (y - y0), e - y,
                                                  static_cast<std::uint8_t>(p), bt, wp, labels + static_cast<std::size_t>(y) * w);
                    else
                        kernels::dyadic_argmax_rows_avx2(a, b, uy, round, shift, wp, wbs.data() + (y - y0), e - y,
                                                         static_cast<std::uint8_t>(p), bt, wp,
                                                         idx8.data() + static_cast<std::size_t>(y - y0) * wp);
                    y = e;
                }
                continue;
            }
#endif
            for (std::int32_t y = y0; y < y1; ++y) {
                const tap& t = ty[static_cast<std::size_t>(y)];
                const std::uint16_t wb = row_weight(t);
                const auto wa = static_cast<std::uint16_t>(uy - wb);
                const std::uint16_t* a = cols.data() + static_cast<std::size_t>(t.lo - r0) * wp;
                const std::uint16_t* b = cols.data() + static_cast<std::size_t>(t.hi - r0) * wp;
                std::uint8_t* dst = out + p * op + static_cast<std::size_t>(y) * w;
#if VNNX_SIM_X86
                if (avx512) {
                    dyadic_row_avx512(a, b, wa, wb, round, shift, w, dst);
                    continue;
                }
                if (avx2) {
                    kernels::dyadic_row_avx2(a, b, wa, wb, round, shift, w, dst);
                    continue;
                }
#endif
                for (std::size_t x = 0; x < w; ++x)
                    dst[x] = static_cast<std::uint8_t>((a[x] * wa + b[x] * wb + round) >> shift);
            }
        }
        for (std::int32_t y = y0; !idx8.empty() && y < y1; ++y)
            std::memcpy(labels + static_cast<std::size_t>(y) * w, idx8.data() + static_cast<std::size_t>(y - y0) * wp, w);
    };
    if (pool && bands > 1) pool->parallel_for(bands, body);
    else
        for (std::size_t i = 0; i < bands; ++i) body(i);
}

/// The float taps of every output column and row, and whether they are dyadic (bilinear_dyadic).
struct dyadic_taps {
    std::vector<tap> tx, ty;
    int mx = -1, my = -1;
    [[nodiscard]] bool exact() const noexcept { return mx >= 0 && my >= 0 && mx + my <= 8; }
};

inline dyadic_taps make_dyadic_taps(std::int32_t ih, std::int32_t iw, std::int32_t oh, std::int32_t ow, bool align,
                                    bool half) {
    dyadic_taps d;
    d.tx.resize(static_cast<std::size_t>(ow));
    d.ty.resize(static_cast<std::size_t>(oh));
    for (std::int32_t x = 0; x < ow; ++x) d.tx[static_cast<std::size_t>(x)] = float_tap(x, iw, ow, align, half);
    for (std::int32_t y = 0; y < oh; ++y) d.ty[static_cast<std::size_t>(y)] = float_tap(y, ih, oh, align, half);
    d.mx = dyadic_bits(d.tx);
    d.my = dyadic_bits(d.ty);
    return d;
}

// uint8 bilinear, the float rule of the loop in run() with its operations in the same order.
// The source values of every input row at each output column's two taps are converted to float
// once per plane (an input row serves about oh/ih output rows), so each output row is a
// vectorizable weighted sum of four contiguous rows. Planes are spread over the pool.
inline void bilinear_float(const std::uint8_t* in, std::uint8_t* out, std::int64_t planes, std::int32_t ih,
                           std::int32_t iw, std::int32_t oh, std::int32_t ow, bool align, bool half, isa_kind isa,
                           thread_pool* pool) {
    const auto w = static_cast<std::size_t>(ow);
    std::vector<tap> tx(w);
    for (std::int32_t x = 0; x < ow; ++x) tx[static_cast<std::size_t>(x)] = float_tap(x, iw, ow, align, half);
    std::vector<tap> ty(static_cast<std::size_t>(oh));
    for (std::int32_t y = 0; y < oh; ++y) ty[static_cast<std::size_t>(y)] = float_tap(y, ih, oh, align, half);
    std::vector<float> fx(w), nfx(w);
    for (std::size_t x = 0; x < w; ++x) {
        fx[x] = tx[x].ffrac;
        nfx[x] = 1 - tx[x].ffrac;
    }
    // Narrow inputs: the taps' column indices as bytes (padded to whole vectors) for a byte
    // permute per input row.
    bool permute = false;
#if VNNX_SIM_X86
    permute = uses_vbmi(isa) && iw <= 64;
#endif
    std::vector<std::uint8_t> lx((w + 63) / 64 * 64, 0), hx(lx.size(), 0);
    for (std::size_t x = 0; x < w; ++x) {
        lx[x] = static_cast<std::uint8_t>(tx[x].lo);
        hx[x] = static_cast<std::uint8_t>(tx[x].hi);
    }
    const std::size_t ip = static_cast<std::size_t>(ih) * iw, op = static_cast<std::size_t>(oh) * w;
    auto plane = [&](std::size_t p) {
        std::vector<float> lo(static_cast<std::size_t>(ih) * w), hi(static_cast<std::size_t>(ih) * w);
        const std::uint8_t* src = in + p * ip;
        for (std::int32_t y = 0; y < ih; ++y) {
            const std::uint8_t* row = src + static_cast<std::size_t>(y) * iw;
            float* l = lo.data() + static_cast<std::size_t>(y) * w;
            float* h = hi.data() + static_cast<std::size_t>(y) * w;
#if VNNX_SIM_X86
            if (permute) {
                tap_row_vbmi(row, iw, lx.data(), hx.data(), w, l, h);
                continue;
            }
#endif
            for (std::size_t x = 0; x < w; ++x) {
                l[x] = static_cast<float>(row[tx[x].lo]);
                h[x] = static_cast<float>(row[tx[x].hi]);
            }
        }
        for (std::int32_t y = 0; y < oh; ++y) {
            const tap& t = ty[static_cast<std::size_t>(y)];
            const float dy = t.ffrac, ndy = 1 - dy;
            const float* a = lo.data() + static_cast<std::size_t>(t.lo) * w;
            const float* b = hi.data() + static_cast<std::size_t>(t.lo) * w;
            const float* cc = lo.data() + static_cast<std::size_t>(t.hi) * w;
            const float* d = hi.data() + static_cast<std::size_t>(t.hi) * w;
            std::uint8_t* dst = out + p * op + static_cast<std::size_t>(y) * w;
            std::size_t x0 = 0;
#if VNNX_SIM_X86
            if (uses_avx512(isa))
                x0 = bilinear_row_avx512(a, b, cc, d, fx.data(), nfx.data(), dy, ndy, w, dst);
#endif
            for (std::size_t x = x0; x < w; ++x) {
                const float dx = fx[x], ndx = nfx[x];
                const float r = a[x] * (ndy * ndx) + b[x] * (ndy * dx) + cc[x] * (dy * ndx) + d[x] * (dy * dx) + 0.5f;
                dst[x] = static_cast<std::uint8_t>(static_cast<std::int32_t>(r));
            }
        }
    };
    const auto n = static_cast<std::size_t>(planes);
    if (pool && n > 1) pool->parallel_for(n, plane);
    else
        for (std::size_t p = 0; p < n; ++p) plane(p);
}

/// The column counts of ResizeOptions.c_inc (empty when there are none), which must add up to
/// the output width.
inline std::vector<std::uint8_t> column_counts(const layer_context& c, const format::layer_options::ResizeOptions& o,
                                               std::int32_t ow) {
    if (o.num_c_inc < 0 || o.num_c_inc > 65536) c.reject("num_c_inc " + std::to_string(o.num_c_inc) + " is out of range");
    if (o.num_c_inc == 0) return {};
    const auto raw = c.bytes(o.c_inc, static_cast<std::uint64_t>(o.num_c_inc), "c_inc");
    std::vector<std::uint8_t> counts(raw.size());
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < raw.size(); ++i) sum += counts[i] = std::to_integer<std::uint8_t>(raw[i]);
    if (sum != ow) c.reject("c_inc counts " + std::to_string(sum) + " output columns, the output has " + std::to_string(ow));
    return counts;
}

inline void run(layer_context& c, bool linear_type) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    if (in.type != out.type) c.reject("input and output calc types differ");
    const auto o = c.rec.options.get<format::layer_options::ResizeOptions>();
    const auto m = quant::resize::decode(o.mode);
    if (!m) c.reject("mode " + std::to_string(o.mode) + " has unknown bits");
    const bool linear = m->linear, align = m->align_corners, half = m->half_pixel;
    if (linear != linear_type) c.reject("mode " + std::to_string(o.mode) + " does not match the layer type");
    if (align && half) c.reject("align_corners and half_pixel_centers are exclusive");
    const std::int64_t planes = in.outer() * in.channels();
    const std::int32_t ih = in.rows(), iw = in.cols(), oh = out.rows(), ow = out.cols();
    if (out.outer() * out.channels() != planes || ih < 1 || iw < 1 || oh < 1 || ow < 1)
        c.reject("input and output must have the same planes and positive sizes");
    if (o.scale[0] != static_cast<float>(oh) / static_cast<float>(ih) || o.scale[1] != static_cast<float>(ow) / static_cast<float>(iw))
        c.reject("scale does not match the input and output tensors");
    const std::size_t ip = static_cast<std::size_t>(ih) * iw, op = static_cast<std::size_t>(oh) * ow;
    const std::vector<std::uint8_t> counts = resize_exec_detail::column_counts(c, o, ow);
    if (!linear) {
        std::vector<std::int32_t> cx(static_cast<std::size_t>(ow));
        if (counts.empty()) {
            for (std::int32_t x = 0; x < ow; ++x) cx[static_cast<std::size_t>(x)] = nearest_source(x, iw, ow, align, half);
        } else {
            // The columns are the ones c_inc gives, as the accelerator takes them: input column
            // i feeds the next counts[i] output columns.
            if (counts.size() != static_cast<std::size_t>(iw))
                c.reject("c_inc has " + std::to_string(counts.size()) + " entries; a nearest resize needs one per input column (" +
                         std::to_string(iw) + ")");
            std::size_t x = 0;
            for (std::size_t i = 0; i < counts.size(); ++i)
                for (std::uint8_t k = 0; k < counts[i]; ++k) cx[x++] = static_cast<std::int32_t>(i);
        }
        std::vector<std::int32_t> cy(static_cast<std::size_t>(oh));
        for (std::int32_t y = 0; y < oh; ++y) cy[static_cast<std::size_t>(y)] = nearest_source(y, ih, oh, align, half);
        const bool disjoint = in.data + in.count <= out.data || out.data + out.count <= in.data;
        // Columns doubled (a 2x upsampling): each source byte twice, as whole vectors.
        bool doubled = ow == 2 * iw;
        for (std::int32_t x = 0; x < ow && doubled; ++x) doubled = cx[static_cast<std::size_t>(x)] == x / 2;
        auto plane = [&](std::size_t p) {
            for (std::int32_t y = 0; y < oh; ++y) {
                const std::int32_t sy = cy[static_cast<std::size_t>(y)];
                const std::uint8_t* src = in.u8() + p * ip + static_cast<std::size_t>(sy) * iw;
                std::uint8_t* dst = out.u8() + p * op + static_cast<std::size_t>(y) * ow;
                // A row from the same source row as the one above is a copy of it; a one-column
                // input fills the row (DeepLabV3's 1x1 pooled features broadcast to 33x33).
                if (disjoint && y > 0 && cy[static_cast<std::size_t>(y - 1)] == sy)
                    std::memcpy(dst, dst - ow, static_cast<std::size_t>(ow));
                else if (disjoint && iw == 1) std::memset(dst, src[0], static_cast<std::size_t>(ow));
                else if (disjoint && doubled) {
                    // This row and, when it repeats the same source row, the next one in one pass.
                    const bool twice = y + 1 < oh && cy[static_cast<std::size_t>(y + 1)] == sy;
                    kernels::double_bytes(dst, twice ? dst + ow : nullptr, src, static_cast<std::size_t>(iw));
                    y += twice ? 1 : 0;
                } else
                    for (std::int32_t x = 0; x < ow; ++x) dst[x] = src[cx[static_cast<std::size_t>(x)]];
            }
        };
        // Planes over the pool when the output cannot overwrite an input plane still to be read.
        if (c.ex.pool && disjoint && planes > 1) c.ex.pool->parallel_for(static_cast<std::size_t>(planes), plane);
        else
            for (std::size_t p = 0; p < static_cast<std::size_t>(planes); ++p) plane(p);
        return;
    }
    const bool is_float = !in.is_signed();  // TFLite's uint8 kernel works in float
    if (is_float) {
        // The exact integer form on the SIMD paths, when it applies; the scalar path keeps the
        // float rule itself. Its bands read every plane, so the output must not overlap the input.
        if (c.ex.isa != isa_kind::scalar && (in.data + in.count <= out.data || out.data + out.count <= in.data)) {
            const dyadic_taps d = make_dyadic_taps(ih, iw, oh, ow, align, half);
            if (d.exact()) {
                bilinear_dyadic(in.u8(), out.u8(), static_cast<std::size_t>(planes), ih, iw, oh, d.tx, d.ty, d.mx, d.my,
                                c.ex.isa, c.ex.pool);
                return;
            }
        }
        bilinear_float(in.u8(), out.u8(), planes, ih, iw, oh, ow, align, half, c.ex.isa, c.ex.pool);
        return;
    }
    std::vector<tap> tx(static_cast<std::size_t>(ow));
    for (std::int32_t x = 0; x < ow; ++x)
        tx[static_cast<std::size_t>(x)] = is_float ? float_tap(x, iw, ow, align, half) : integer_tap(x, iw, ow, align, half);
    for (std::int64_t p = 0; p < planes; ++p) {
        const std::size_t ibase = static_cast<std::size_t>(p) * ip;
        for (std::int32_t y = 0; y < oh; ++y) {
            const tap ty = is_float ? float_tap(y, ih, oh, align, half) : integer_tap(y, ih, oh, align, half);
            for (std::int32_t x = 0; x < ow; ++x) {
                const tap& t = tx[static_cast<std::size_t>(x)];
                auto v = [&](std::int32_t yy, std::int32_t xx) {
                    return in.get(ibase + static_cast<std::size_t>(yy) * iw + static_cast<std::size_t>(xx));
                };
                const std::uint64_t at = static_cast<std::size_t>(p) * op + static_cast<std::size_t>(y) * ow + x;
                if (is_float) {
                    const float dy = ty.ffrac, dx = t.ffrac;
                    const float r = static_cast<float>(v(ty.lo, t.lo)) * ((1 - dy) * (1 - dx)) +
                                    static_cast<float>(v(ty.lo, t.hi)) * ((1 - dy) * dx) +
                                    static_cast<float>(v(ty.hi, t.lo)) * (dy * (1 - dx)) +
                                    static_cast<float>(v(ty.hi, t.hi)) * (dy * dx) + 0.5f;
                    out.set(at, static_cast<std::int32_t>(r));
                } else {
                    const std::int64_t fy = ty.frac, fx = t.frac, one = 1 << 10;
                    const std::int64_t acc = v(ty.lo, t.lo) * (one - fy) * (one - fx) + v(ty.hi, t.lo) * fy * (one - fx) +
                                             v(ty.lo, t.hi) * (one - fy) * fx + v(ty.hi, t.hi) * fy * fx;
                    const std::int64_t round = acc > 0 ? (1 << 19) : -(1 << 19);
                    out.set(at, static_cast<std::int32_t>((acc + round) / (1 << 20)));
                }
            }
        }
    }
}

}  // namespace resize_exec_detail

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::RESIZE_NEAREST_NEIGHBOR)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { resize_exec_detail::run(c, false); }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::RESIZE_BILINEAR)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { resize_exec_detail::run(c, true); }
};

}  // namespace vnnx::sim
