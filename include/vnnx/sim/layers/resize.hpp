#pragma once
// RESIZE_NEAREST_NEIGHBOR (97) and RESIZE_BILINEAR (23) layers. The geometry comes from the
// input and output records ([.., C, H, W]); ResizeOptions.scale must agree with it, `mode`
// bit 0 selects linear, bit 8 align_corners, bit 9 half_pixel_centers. The arithmetic is
// TFLite's: nearest with its 10-bit fixed-point ratio (its float rule when a flag is set);
// int8 bilinear with 10-bit integer positions and weights, rounded half away from zero;
// uint8 bilinear in float with +0.5 and truncation, as TFLite's optimized uint8 kernel.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"

namespace vnnx::sim {

namespace resize_exec_detail {

inline std::int32_t nearest(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    if (!align && !half) {
        const std::int32_t s10 = ((1 << 10) * in + out / 2) / out;
        return std::min((v * s10) >> 10, in - 1);
    }
    const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                           : static_cast<float>(in) / static_cast<float>(out);
    const float off = half ? 0.5f : 0.0f;
    std::int32_t r = align ? static_cast<std::int32_t>(std::round((static_cast<float>(v) + off) * scale))
                           : static_cast<std::int32_t>(std::floor((static_cast<float>(v) + off) * scale));
    r = std::min(r, in - 1);
    return half ? std::max(r, 0) : r;
}

/// Integer source position of output index v in 1/1024 units, and the two taps.
struct tap {
    std::int32_t lo = 0, hi = 0;
    std::int64_t frac = 0;  // weight of `hi` in 1/1024 (integer) ...
    float ffrac = 0;        // ... or as a float
};

inline tap integer_tap(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    std::int32_t s = ((1 << 10) * in + out / 2) / out;
    if (align && out > 1) s = ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    const std::int32_t pos = half ? v * s + s / 2 - (1 << 9) : v * s;
    tap t;
    t.lo = std::max(pos / (1 << 10), 0);
    t.hi = std::min((pos + (1 << 10) - 1) / (1 << 10), in - 1);
    t.frac = pos - (1 << 10) * t.lo;
    return t;
}

inline tap float_tap(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    const float s = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                       : static_cast<float>(in) / static_cast<float>(out);
    const float pos = half ? (static_cast<float>(v) + 0.5f) * s - 0.5f : static_cast<float>(v) * s;
    tap t;
    t.lo = std::max(static_cast<std::int32_t>(std::floor(pos)), 0);
    t.hi = std::min(static_cast<std::int32_t>(std::ceil(pos)), in - 1);
    t.ffrac = pos - static_cast<float>(t.lo);
    return t;
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
    permute = uses_avx512(isa) && iw <= 64 && __builtin_cpu_supports("avx512vbmi");
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

inline void run(layer_context& c, bool linear_type) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    if (in.type != out.type) c.reject("input and output calc types differ");
    const auto o = c.rec.options.get<format::layer_options::ResizeOptions>();
    if ((o.mode & ~0x301) != 0) c.reject("mode " + std::to_string(o.mode) + " has unknown bits");
    const bool linear = (o.mode & 1) != 0, align = (o.mode & 0x100) != 0, half = (o.mode & 0x200) != 0;
    if (linear != linear_type) c.reject("mode " + std::to_string(o.mode) + " does not match the layer type");
    if (align && half) c.reject("align_corners and half_pixel_centers are exclusive");
    const std::int64_t planes = in.outer() * in.channels();
    const std::int32_t ih = in.rows(), iw = in.cols(), oh = out.rows(), ow = out.cols();
    if (out.outer() * out.channels() != planes || ih < 1 || iw < 1 || oh < 1 || ow < 1)
        c.reject("input and output must have the same planes and positive sizes");
    if (o.scale[0] != static_cast<float>(oh) / static_cast<float>(ih) || o.scale[1] != static_cast<float>(ow) / static_cast<float>(iw))
        c.reject("scale does not match the input and output tensors");
    const std::size_t ip = static_cast<std::size_t>(ih) * iw, op = static_cast<std::size_t>(oh) * ow;
    if (!linear) {
        std::vector<std::int32_t> cx(static_cast<std::size_t>(ow));
        for (std::int32_t x = 0; x < ow; ++x) cx[static_cast<std::size_t>(x)] = nearest(x, iw, ow, align, half);
        std::vector<std::int32_t> cy(static_cast<std::size_t>(oh));
        for (std::int32_t y = 0; y < oh; ++y) cy[static_cast<std::size_t>(y)] = nearest(y, ih, oh, align, half);
        const bool disjoint = in.data + in.count <= out.data || out.data + out.count <= in.data;
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
                else
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
