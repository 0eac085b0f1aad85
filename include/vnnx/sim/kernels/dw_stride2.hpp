#pragma once
// Depthwise convolution with column stride 2 (and column dilation 1) on AVX-512 VNNI, the
// column-strided depthwise of MobileNet-like models.
//
// Output column ox of a kernel row reads input columns 2ox..2ox+kw-1: four of them are the 32-bit
// word at byte 2ox, so one vpdpbusd applies four taps of a kernel row to 16 pixels, and a load
// at byte offset 2q (pixel q even) or 2q+2 (odd) gives 16 pixels two apart. Four loads (offsets
// 0, 2, 64, 66) cover 64 output pixels: four vpdpbusd per kernel row and chunk of four columns,
// as many as at column stride 1, half the work of the grid the FIA computes. For that, each
// channel is copied (biased by +128 when signed, corrected as conv.hpp does) into a per-thread
// buffer right before its tiles run: one plane per row phase (row stride), rows of 2*wp bytes
// with wp = ceil(W/2), so grid pixel q = i*wp + x reads byte 2q of its plane; pixels with x >= OW
// or q >= OH*wp are computed and dropped. The buffer stays in cache, unlike a packed copy of the
// whole input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/grid_store.hpp"
#include "vnnx/sim/kernels/requant.hpp"
#include "vnnx/sim/thread_pool.hpp"

namespace vnnx::sim::kernels {

struct dw_columns2_shape {
    int channels = 1, height = 1, width = 1;
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, dilation_h = 1;  // column stride 2, column dilation 1
    bool input_signed = true;
};

namespace detail {
#if VNNX_SIM_X86
// Tiles t0..t1 of 64 grid pixels of one channel (see the header comment). `offs`/`w4` have one
// entry per (kernel row, chunk of four columns); the requantization is that of dw_rows_vnni
// (with `range.ok` the accumulators are clamped instead of the results, see acc_clamp_range).
template <bool AccClamp, bool Narrow = false, bool Biased = false>
VNNX_TARGET_AVX512 inline void dw_columns2_vnni(const std::uint8_t* x, std::size_t t0, std::size_t t1,
                                                const std::int64_t* offs, int groups, const std::int32_t* w4,
                                                std::int32_t corr, std::uint16_t om, std::int64_t c, int o, int lo,
                                                int hi, acc_range range, const grid_out& out) {
    const requant_vec q = make_requant_vec(om, c, o, lo, hi, range);
    const __m512i byte = _mm512_set1_epi32(0xFF);
    // Output word j (pixels 2j, 2j+1) is word 2j of the merged bytes for j < 16, else 2(j-16)+1.
    const __m512i order = _mm512_set_epi16(31, 29, 27, 25, 23, 21, 19, 17, 15, 13, 11, 9, 7, 5, 3, 1,  //
                                           30, 28, 26, 24, 22, 20, 18, 16, 14, 12, 10, 8, 6, 4, 2, 0);
    static constexpr int at[4] = {0, 2, 64, 66};
    for (std::size_t t = t0; t < t1; ++t) {
        const std::size_t q0 = t * 64;
        __m512i acc[4];
#pragma GCC unroll 4
        for (auto& a : acc) a = _mm512_set1_epi32(corr);
        for (int g = 0; g < groups; ++g) {
            const std::uint8_t* p = x + 2 * q0 + offs[g];
            const __m512i wv = _mm512_set1_epi32(w4[g]);
#pragma GCC unroll 4
            for (int r = 0; r < 4; ++r) acc[r] = _mm512_dpbusd_epi32(acc[r], _mm512_loadu_si512(p + at[r]), wv);
        }
        // acc[0] lane l: pixel 2l, acc[1]: 2l+1, acc[2]: 32+2l, acc[3]: 33+2l.
        __m512i v[4];
#pragma GCC unroll 4
        for (int r = 0; r < 4; ++r) v[r] = _mm512_and_si512(requant16<AccClamp, Narrow, Biased>(acc[r], q), byte);
        // 16-bit word 2l = pixels (2l, 2l+1), word 2l+1 = pixels (32+2l, 33+2l): one word
        // permutation puts the 32 pixel pairs in order.
        const __m512i w = _mm512_or_si512(_mm512_or_si512(v[0], _mm512_slli_epi32(v[1], 8)),
                                          _mm512_or_si512(_mm512_slli_epi32(v[2], 16), _mm512_slli_epi32(v[3], 24)));
        const __m512i res = _mm512_permutexvar_epi16(order, w);
        store_grid_tile(res, q0, q0 / out.wp, q0 % out.wp, out);
    }
}

// d[0..n) = s[0..n) ^ flip, n < 2^16; short rows, so masked 64-byte steps.
VNNX_TARGET_AVX512 inline void copy_row_flip(std::uint8_t* d, const std::uint8_t* s, std::size_t n, std::uint8_t flip) {
    const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
    for (; n >= 64; n -= 64, d += 64, s += 64) _mm512_storeu_si512(d, _mm512_xor_si512(_mm512_loadu_si512(s), f));
    if (n == 0) return;
    const __mmask64 m = (__mmask64{1} << n) - 1;
    _mm512_mask_storeu_epi8(d, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, s), f));
}
#endif
}  // namespace detail

/// A depthwise convolution with column stride 2, prepared once: weights [c][kh][kw] int8,
/// per-channel requantization. Only for CPUs with AVX-512 VNNI (the caller checks).
class dw_columns2 {
public:
    dw_columns2(const dw_columns2_shape& s, std::span<const std::int8_t> w, const requant_params& rq, isa_kind isa)
        : s_(s), rq_(rq) {
        const int sh = s_.stride_h, kh = s_.kernel_h, kw = s_.kernel_w;
        oh_ = (s_.height - (kh - 1) * s_.dilation_h - 1) / sh + 1;
        ow_ = (s_.width - kw) / 2 + 1;
        wp_ = static_cast<std::size_t>((s_.width + 1) / 2);
        pitch_ = 2 * wp_;
        q_total_ = static_cast<std::size_t>(oh_) * wp_;
        kept_ = kept_lanes(isa, wp_, static_cast<std::size_t>(ow_));
        q_pad_ = (q_total_ + 63) / 64 * 64;
        const int chunks = (kw + 3) / 4;
        groups_ = kh * chunks;
        const auto hp = static_cast<std::size_t>((s_.height + sh - 1) / sh);
        const auto amax = static_cast<std::size_t>((kh - 1) * s_.dilation_h / sh);
        // A plane holds its rows and every load of the last tile (dropped pixels included).
        plane_ = std::max(hp * pitch_, 2 * q_pad_ + amax * pitch_ + 4 * static_cast<std::size_t>(chunks));
        buffer_ = static_cast<std::size_t>(sh) * plane_ + 256;
        for (int ky = 0; ky < kh; ++ky)
            for (int ch = 0; ch < chunks; ++ch) {
                const int dy = ky * s_.dilation_h;
                offs_.push_back(static_cast<std::int64_t>(static_cast<std::size_t>(dy % sh) * plane_ +
                                                          static_cast<std::size_t>(dy / sh) * pitch_ +
                                                          4 * static_cast<std::size_t>(ch)));
            }
        const auto C = static_cast<std::size_t>(s_.channels);
        w4_.assign(C * static_cast<std::size_t>(groups_), 0);
        corr_.assign(C, 0);
        for (std::size_t c = 0; c < C; ++c) {
            std::int64_t sum = 0;
            for (int ky = 0; ky < kh; ++ky)
                for (int kx = 0; kx < kw; ++kx) {
                    const std::int8_t v = w[(c * static_cast<std::size_t>(kh) + static_cast<std::size_t>(ky)) *
                                                static_cast<std::size_t>(kw) + static_cast<std::size_t>(kx)];
                    sum += v;
                    auto& word = w4_[c * static_cast<std::size_t>(groups_) + static_cast<std::size_t>(ky * chunks + kx / 4)];
                    word = static_cast<std::int32_t>(static_cast<std::uint32_t>(word) |
                                                     (static_cast<std::uint32_t>(static_cast<std::uint8_t>(v)) << (8 * (kx % 4))));
                }
            // vpdpbusd wants unsigned inputs: x+128 is fed, so subtract 128*sum(w).
            if (s_.input_signed) corr_[c] = static_cast<std::int32_t>(-128 * sum);
            range_.push_back(acc_clamp_range(rq_.multiplier[c], rq_.constant[c], rq_.shift[c], rq_.act_min, rq_.act_max));
        }
    }

    [[nodiscard]] int out_h() const noexcept { return oh_; }
    [[nodiscard]] int out_w() const noexcept { return ow_; }

    /// in: C x H x W codes; output (c, y, x) at out[c*plane + y*row + x].
    void run(const std::uint8_t* in, std::uint8_t* out, std::size_t row, std::size_t plane, thread_pool* pool) const {
#if VNNX_SIM_X86
        const std::size_t hw = static_cast<std::size_t>(s_.height) * static_cast<std::size_t>(s_.width);
        const auto channels = static_cast<std::size_t>(s_.channels);
        const std::uint8_t flip = s_.input_signed ? 0x80 : 0;
        // Several small channels per item (at least ~2048 pixels) while every thread gets four.
        std::size_t per_item = 1;
        if (pool)
            per_item = std::max<std::size_t>(1, std::min(2048 / q_pad_, channels / (4 * static_cast<std::size_t>(pool->size()))));
        auto item = [&](std::size_t i) {
            thread_local std::vector<std::uint8_t> buf;
            if (buf.size() < buffer_) buf.resize(buffer_);
            for (std::size_t c = i * per_item; c < std::min(channels, (i + 1) * per_item); ++c) {
                // No clearing: bytes not written here only meet zero weights or dropped pixels.
                const std::uint8_t* src = in + c * hw;
                const auto sh = static_cast<std::size_t>(s_.stride_h), width = static_cast<std::size_t>(s_.width);
                for (std::size_t iy = 0; iy < static_cast<std::size_t>(s_.height); ++iy)
                    detail::copy_row_flip(buf.data() + (iy % sh) * plane_ + (iy / sh) * pitch_, src + iy * width, width, flip);
                const grid_out o{out + c * plane, wp_, static_cast<std::size_t>(ow_), q_total_, row,
                                 row == static_cast<std::size_t>(ow_) && !kept_.empty() ? kept_.data() : nullptr};
                const acc_range r = range_[c];
                (r.biased   ? detail::dw_columns2_vnni<true, true, true>
                 : r.narrow ? detail::dw_columns2_vnni<true, true, false>
                 : r.ok     ? detail::dw_columns2_vnni<true, false, false>
                            : detail::dw_columns2_vnni<false, false, false>)(
                    buf.data(), 0, q_pad_ / 64, offs_.data(), groups_, w4_.data() + c * static_cast<std::size_t>(groups_),
                    corr_[c], rq_.multiplier[c], rq_.constant[c], rq_.shift[c], rq_.act_min, rq_.act_max, r, o);
            }
        };
        const std::size_t items = (channels + per_item - 1) / per_item;
        if (pool) pool->parallel_for(items, item);
        else
            for (std::size_t i = 0; i < items; ++i) item(i);
#else
        (void)in, (void)out, (void)row, (void)plane, (void)pool;
#endif
    }

private:
    dw_columns2_shape s_;
    requant_params rq_;
    int oh_ = 0, ow_ = 0, groups_ = 0;
    std::size_t wp_ = 0, pitch_ = 0, q_total_ = 0, q_pad_ = 0, plane_ = 0, buffer_ = 0;
    std::vector<std::int64_t> offs_;  // per (kernel row, chunk): byte offset in the channel buffer
    std::vector<std::int32_t> w4_;    // [c][group]: four weights per int32 (0 past the kernel width)
    std::vector<std::int32_t> corr_;  // per channel: the accumulators' start (bias correction)
    std::vector<acc_range> range_;    // per channel, see acc_clamp_range
    std::vector<std::uint64_t> kept_; // grid_out::kept (dense output rows)
};

}  // namespace vnnx::sim::kernels
