#pragma once
// Max and average pooling on channels-first 8-bit codes, with TFLite's semantics: padded
// positions are skipped (max ignores them, the average divides by the count of real elements),
// the average rounds half away from zero, (sum +- count/2) / count in C integer division, and
// the result is clamped to the activation range. Vector lanes run over output columns; the
// SIMD paths handle the interior columns of stride-1 rows and leave borders to the scalar code.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim::kernels {

enum class pool_kind { max, average };

struct pool_shape {
    int channels = 1, height = 1, width = 1;
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool is_signed = true;  // input and output share the type (and quantization)
    int act_min = -128;
    int act_max = 127;

    [[nodiscard]] int out_h() const noexcept { return (height + pad_top + pad_bottom - kernel_h) / stride_h + 1; }
    [[nodiscard]] int out_w() const noexcept { return (width + pad_left + pad_right - kernel_w) / stride_w + 1; }
    [[nodiscard]] std::size_t input_size() const noexcept {
        return static_cast<std::size_t>(channels) * height * width;
    }
    [[nodiscard]] std::size_t output_size() const noexcept {
        return static_cast<std::size_t>(channels) * out_h() * out_w();
    }
};

inline void validate_pool(const pool_shape& s, std::string_view what) {
    const std::string w(what);
    auto range = [&](int v, int lo, int hi, const char* name) {
        if (v < lo || v > hi)
            fail_input(w + ": " + name + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    };
    range(s.channels, 1, 1 << 20, "channel count");
    range(s.height, 1, 1 << 16, "input height");
    range(s.width, 1, 1 << 16, "input width");
    range(s.kernel_h, 1, 1 << 12, "kernel height");
    range(s.kernel_w, 1, 1 << 12, "kernel width");
    range(s.stride_h, 1, 1 << 12, "stride height");
    range(s.stride_w, 1, 1 << 12, "stride width");
    // pads smaller than the window keep at least one real element in every window
    range(s.pad_top, 0, s.kernel_h - 1, "top padding");
    range(s.pad_bottom, 0, s.kernel_h - 1, "bottom padding");
    range(s.pad_left, 0, s.kernel_w - 1, "left padding");
    range(s.pad_right, 0, s.kernel_w - 1, "right padding");
    if (s.kernel_h > s.height + s.pad_top + s.pad_bottom || s.kernel_w > s.width + s.pad_left + s.pad_right)
        fail_input(w + ": the " + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) +
                   " window is larger than the padded input");
    const int lo = s.is_signed ? -128 : 0, hi = s.is_signed ? 127 : 255;
    if (s.act_min > s.act_max || s.act_min < lo || s.act_max > hi)
        fail_input(w + ": activation bounds [" + std::to_string(s.act_min) + ", " + std::to_string(s.act_max) +
                   "] must be ordered and within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// TFLite's average rounding: half away from zero with truncating division.
[[nodiscard]] constexpr std::int32_t rounded_average(std::int32_t sum, std::int32_t count) noexcept {
    return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

namespace detail {

struct pool_row_args {
    const pool_shape* s;
    pool_kind kind;
    const std::uint8_t* plane;  // one channel, H x W
    int y0, y1;                 // clipped input rows of this output row
    std::uint8_t* out;          // one output row
};

inline int code(const pool_shape& s, std::uint8_t b) noexcept {
    return s.is_signed ? static_cast<int>(static_cast<std::int8_t>(b)) : static_cast<int>(b);
}

// Output columns [x_begin, x_end) of one row, the defining arithmetic.
inline void pool_cols_scalar(const pool_row_args& a, int x_begin, int x_end) {
    const pool_shape& s = *a.s;
    for (int ox = x_begin; ox < x_end; ++ox) {
        const int xs = ox * s.stride_w - s.pad_left;
        const int x0 = std::max(0, xs), x1 = std::min(s.width, xs + s.kernel_w);
        std::int32_t acc = a.kind == pool_kind::max ? -1000 : 0;
        for (int y = a.y0; y < a.y1; ++y)
            for (int x = x0; x < x1; ++x) {
                const int v = code(s, a.plane[static_cast<std::size_t>(y) * s.width + x]);
                acc = a.kind == pool_kind::max ? std::max(acc, v) : acc + v;
            }
        if (a.kind == pool_kind::average) acc = rounded_average(acc, (a.y1 - a.y0) * (x1 - x0));
        a.out[ox] = static_cast<std::uint8_t>(std::clamp(acc, s.act_min, s.act_max) & 0xFF);
    }
}

// Columns whose window lies inside the row: [lo, hi).
inline void interior_cols(const pool_shape& s, int& lo, int& hi) {
    lo = (s.pad_left + s.stride_w - 1) / s.stride_w;
    hi = s.width + s.pad_left - s.kernel_w < 0 ? 0 : (s.width + s.pad_left - s.kernel_w) / s.stride_w + 1;
    hi = std::min(hi, s.out_w());
    if (hi < lo) hi = lo;
}

inline void pool_row(isa::scalar, const pool_row_args& a) { pool_cols_scalar(a, 0, a.s->out_w()); }

// Float division is exact enough here: for |n| + count < 2^24 the float quotient cannot cross an
// integer, so truncating it equals C integer division. Windows are limited to 4096 elements.
inline constexpr int simd_avg_max_window = 4096;

#if VNNX_SIM_X86
template <bool Signed>
VNNX_TARGET_AVX512 inline int pool_interior_avx512(const pool_row_args& a, int lo, int hi) {
    const pool_shape& s = *a.s;
    const std::size_t w = static_cast<std::size_t>(s.width);
    int ox = lo;
    if (a.kind == pool_kind::max) {
        const __m512i vlo = _mm512_set1_epi8(static_cast<char>(s.act_min)), vhi = _mm512_set1_epi8(static_cast<char>(s.act_max));
        for (; ox + 64 <= hi; ox += 64) {
            const std::uint8_t* base = a.plane + (ox - s.pad_left);
            __m512i m = _mm512_loadu_si512(base + a.y0 * w);
            for (int y = a.y0; y < a.y1; ++y)
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                    const __m512i v = _mm512_loadu_si512(base + y * w + kx);
                    m = Signed ? _mm512_max_epi8(m, v) : _mm512_max_epu8(m, v);
                }
            m = Signed ? _mm512_min_epi8(_mm512_max_epi8(m, vlo), vhi) : _mm512_min_epu8(_mm512_max_epu8(m, vlo), vhi);
            _mm512_storeu_si512(a.out + ox, m);
        }
        return ox;
    }
    const int count = (a.y1 - a.y0) * s.kernel_w;
    if (count > simd_avg_max_window) return ox;
    const __m512i half = _mm512_set1_epi32(count / 2);
    const __m512 fcount = _mm512_set1_ps(static_cast<float>(count));
    const __m512i vlo = _mm512_set1_epi32(s.act_min), vhi = _mm512_set1_epi32(s.act_max);
    for (; ox + 16 <= hi; ox += 16) {
        const std::uint8_t* base = a.plane + (ox - s.pad_left);
        __m512i sum = _mm512_setzero_si512();
        for (int y = a.y0; y < a.y1; ++y)
            for (int kx = 0; kx < s.kernel_w; ++kx) {
                const __m128i r = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + y * w + kx));
                sum = _mm512_add_epi32(sum, Signed ? _mm512_cvtepi8_epi32(r) : _mm512_cvtepu8_epi32(r));
            }
        const __mmask16 pos = _mm512_cmpgt_epi32_mask(sum, _mm512_setzero_si512());
        const __m512i n = _mm512_mask_blend_epi32(pos, _mm512_sub_epi32(sum, half), _mm512_add_epi32(sum, half));
        __m512i q = _mm512_cvttps_epi32(_mm512_div_ps(_mm512_cvtepi32_ps(n), fcount));
        q = _mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a.out + ox), _mm512_cvtepi32_epi8(q));
    }
    return ox;
}

// Bits [a, b) of a 64-bit mask, a and b clipped to [0, 64].
inline std::uint64_t bit_range(int a, int b) noexcept {
    a = std::clamp(a, 0, 64);
    b = std::clamp(b, 0, 64);
    if (a >= b) return 0;
    const std::uint64_t hi = b == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << b) - 1;
    return hi & ~((std::uint64_t{1} << a) - 1);
}

// Max pool, stride 1: a whole output row, borders included, 64 columns per step. Each tap's
// load is masked to the columns whose tap lies inside the row; masked lanes read as the type's
// minimum (padding is skipped), and masked loads do not touch the skipped addresses.
template <bool Signed>
VNNX_TARGET_AVX512 inline void pool_row_max_avx512(const pool_row_args& a) {
    const pool_shape& s = *a.s;
    const int ow = s.out_w();
    const auto w = static_cast<std::intptr_t>(s.width);
    const __m512i ident = _mm512_set1_epi8(Signed ? static_cast<char>(-128) : 0);
    const __m512i vlo = _mm512_set1_epi8(static_cast<char>(s.act_min)), vhi = _mm512_set1_epi8(static_cast<char>(s.act_max));
    const auto plane = reinterpret_cast<std::uintptr_t>(a.plane);
    for (int ox = 0; ox < ow; ox += 64) {
        const int n = std::min(64, ow - ox);
        __m512i m = ident;
        for (int kx = 0; kx < s.kernel_w; ++kx) {
            // lane l reads column ox + l - pad_left + kx
            const int x0 = ox - s.pad_left + kx;
            const __mmask64 k = bit_range(-x0, s.width - x0) & bit_range(0, n);
            if (k == 0) continue;
            for (int y = a.y0; y < a.y1; ++y) {
                const auto at = plane + static_cast<std::uintptr_t>(y * w + x0);
                const __m512i v = _mm512_mask_loadu_epi8(ident, k, reinterpret_cast<const void*>(at));
                m = Signed ? _mm512_max_epi8(m, v) : _mm512_max_epu8(m, v);
            }
        }
        m = Signed ? _mm512_min_epi8(_mm512_max_epi8(m, vlo), vhi) : _mm512_min_epu8(_mm512_max_epu8(m, vlo), vhi);
        _mm512_mask_storeu_epi8(a.out + ox, bit_range(0, n), m);
    }
}

template <bool Signed>
VNNX_TARGET_AVX2 inline int pool_interior_avx2(const pool_row_args& a, int lo, int hi) {
    const pool_shape& s = *a.s;
    const std::size_t w = static_cast<std::size_t>(s.width);
    int ox = lo;
    if (a.kind == pool_kind::max) {
        const __m256i vlo = _mm256_set1_epi8(static_cast<char>(s.act_min)), vhi = _mm256_set1_epi8(static_cast<char>(s.act_max));
        for (; ox + 32 <= hi; ox += 32) {
            const std::uint8_t* base = a.plane + (ox - s.pad_left);
            __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + a.y0 * w));
            for (int y = a.y0; y < a.y1; ++y)
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + y * w + kx));
                    m = Signed ? _mm256_max_epi8(m, v) : _mm256_max_epu8(m, v);
                }
            m = Signed ? _mm256_min_epi8(_mm256_max_epi8(m, vlo), vhi) : _mm256_min_epu8(_mm256_max_epu8(m, vlo), vhi);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.out + ox), m);
        }
        return ox;
    }
    const int count = (a.y1 - a.y0) * s.kernel_w;
    if (count > simd_avg_max_window) return ox;
    const __m256i half = _mm256_set1_epi32(count / 2);
    const __m256 fcount = _mm256_set1_ps(static_cast<float>(count));
    const __m256i vlo = _mm256_set1_epi32(s.act_min), vhi = _mm256_set1_epi32(s.act_max);
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    for (; ox + 8 <= hi; ox += 8) {
        const std::uint8_t* base = a.plane + (ox - s.pad_left);
        __m256i sum = _mm256_setzero_si256();
        for (int y = a.y0; y < a.y1; ++y)
            for (int kx = 0; kx < s.kernel_w; ++kx) {
                const __m128i r = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(base + y * w + kx));
                sum = _mm256_add_epi32(sum, Signed ? _mm256_cvtepi8_epi32(r) : _mm256_cvtepu8_epi32(r));
            }
        const __m256i pos = _mm256_cmpgt_epi32(sum, _mm256_setzero_si256());
        const __m256i n = _mm256_blendv_epi8(_mm256_sub_epi32(sum, half), _mm256_add_epi32(sum, half), pos);
        __m256i q = _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(n), fcount));
        q = _mm256_min_epi32(_mm256_max_epi32(q, vlo), vhi);
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, pick), join);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(a.out + ox), _mm256_castsi256_si128(bytes));
    }
    return ox;
}
#endif

template <class Isa>
inline void pool_row(Isa, const pool_row_args& a) {
    const pool_shape& s = *a.s;
    int lo = 0, hi = 0;
    interior_cols(s, lo, hi);
    int done = lo;
#if VNNX_SIM_X86
    if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
        if (s.stride_w == 1 && a.kind == pool_kind::max) {
            if (s.is_signed) pool_row_max_avx512<true>(a);
            else pool_row_max_avx512<false>(a);
            return;
        }
    }
    if (s.stride_w == 1 && hi > lo) {
        if constexpr (std::is_same_v<Isa, isa::avx512_vnni>)
            done = s.is_signed ? pool_interior_avx512<true>(a, lo, hi) : pool_interior_avx512<false>(a, lo, hi);
        else
            done = s.is_signed ? pool_interior_avx2<true>(a, lo, hi) : pool_interior_avx2<false>(a, lo, hi);
    }
#endif
    pool_cols_scalar(a, 0, lo);
    pool_cols_scalar(a, done, s.out_w());
}

}  // namespace detail

// in: C*H*W codes; out: C*OH*OW codes. Work is split over (channel, output row).
inline void pool2d(isa_kind isa, pool_kind kind, const pool_shape& s, std::span<const std::uint8_t> in,
                   std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "pool") {
    validate_pool(s, what);
    if (in.size() != s.input_size() || out.size() != s.output_size())
        fail_input(std::string(what) + ": input/output have " + std::to_string(in.size()) + "/" +
                   std::to_string(out.size()) + " bytes, expected " + std::to_string(s.input_size()) + "/" +
                   std::to_string(s.output_size()));
    const int oh = s.out_h(), ow = s.out_w();
    const std::size_t rows = static_cast<std::size_t>(s.channels) * oh;
    const std::size_t hw = static_cast<std::size_t>(s.height) * s.width;
    auto body = [&](std::size_t r) {
        const std::size_t c = r / oh;
        const int oy = static_cast<int>(r % oh);
        const int ys = oy * s.stride_h - s.pad_top;
        const detail::pool_row_args a{&s, kind, in.data() + c * hw, std::max(0, ys), std::min(s.height, ys + s.kernel_h),
                                      out.data() + r * ow};
        dispatch(isa, [&](auto tag) { detail::pool_row(tag, a); });
    };
    if (pool) pool->parallel_for(rows, body);
    else
        for (std::size_t r = 0; r < rows; ++r) body(r);
}

}  // namespace vnnx::sim::kernels
