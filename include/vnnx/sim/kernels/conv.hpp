#pragma once
// The FIA convolution as the accelerator computes it, on channels-first data.
//
//   input  x[C][H][W]   raw int8 or uint8 codes (the input zero point is folded into c_k)
//   weight w[K][C/g][kh][kw] int8, g = 1 or depthwise g = C = K
//   output y[K][OH][OW] = requantize(sum x*w) (requant.hpp), no padding (the graph pads first)
//
// Layout choices of the SIMD paths (the scalar path reads the tensors as they are and defines
// the answer):
// - Vector lanes run over output pixels, so results are stored straight into channels-first rows.
// - The input is repacked once per call into "phase planes": plane (py,px) holds the pixels
//   (i*sh+py, j*sw+px) at i*Wp+j with Wp = ceil(W/sw). Every tap of every output pixel q =
//   oy*Wp+ox then reads plane(tap)[q + off(tap)]: stride and dilation become one constant offset
//   per tap and all loads are contiguous. Outputs with ox >= OW are computed and dropped.
// - groups = 1: planes interleave 4 input channels per pixel (one 32-bit word), the operand
//   layout of vpdpbusd (u8 x s8, 4 products per lane); weights are packed once per layer as
//   [k-block][c/4][tap][k in block][4]. int8 inputs are biased by +128 to make them unsigned
//   and corrected by -128*sum(w_k), exact because there is no padding. AVX2 widens to int16
//   and uses vpmaddwd (exact; vpmaddubsw would saturate).
// - depthwise: one plane set per channel. AVX-512 with column stride 1 applies four adjacent
//   columns of a kernel row per vpdpbusd (a dilated row as a dense one with zero columns) from
//   shifted loads of a pre-biased input and requantizes in registers (dw_rows_vnni);
//   column stride 2 (dilation 1) runs the same scheme on 2-byte-apart words (dw_stride2.hpp);
//   otherwise it interleaves the bytes of four taps per pixel in registers (dw_tile_vnni, int8
//   inputs biased by +128 as above). AVX2 widens the inputs of two taps to int16 and applies
//   both with one vpmaddwd.
// - AVX2 requantizes in registers (requant8) wherever the channel has an accumulator clamp.
// - Exactness: every accumulator is a sum of at most 65536 products of magnitude <= 255*128,
//   so it fits in int32 (larger layers are rejected); partial sums may wrap, the result cannot.
//
// This file is the layer object (conv2d: weights packed once, the ISA's path per layer shape);
// the kernels are in files by concern: conv_shape.hpp (shape, checks, output pitch, scratch),
// conv_copies.hpp (input packing, short copies and fills), conv_vnni.hpp (groups = 1 on
// AVX-512 VNNI), conv_amx.hpp (on the AMX tile unit), conv_avx2.hpp (on AVX2),
// conv_depthwise.hpp and dw_stride2.hpp (depthwise).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/conv_amx.hpp"
#include "vnnx/sim/kernels/conv_avx2.hpp"
#include "vnnx/sim/kernels/conv_copies.hpp"
#include "vnnx/sim/kernels/conv_depthwise.hpp"
#include "vnnx/sim/kernels/conv_shape.hpp"
#include "vnnx/sim/kernels/conv_vnni.hpp"
#include "vnnx/sim/kernels/dw_stride2.hpp"
#include "vnnx/sim/kernels/grid_store.hpp"
#include "vnnx/sim/kernels/item_split.hpp"
#include "vnnx/sim/kernels/requant.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/huge_pages.hpp"

namespace vnnx::sim::kernels {

namespace detail {

// Register blocking per ISA: KB output channels x QT pixels per micro-tile.
template <class Isa> struct conv_tiling;
template <> struct conv_tiling<isa::scalar> { static constexpr int kb = 1, qt = 16, dw_qt = 16; };
template <> struct conv_tiling<isa::avx2> { static constexpr int kb = 4, qt = 8, dw_qt = 32; };
template <> struct conv_tiling<isa::avx512_vnni> { static constexpr int kb = 8, qt = 48, dw_qt = 64; };

}  // namespace detail


// A convolution layer prepared for one ISA: weights packed and corrections computed once.
class conv2d {
public:
    conv2d(const conv_shape& shape, std::span<const std::int8_t> weights, requant_params rq, isa_kind isa,
           std::string name = "conv")
        : s_(shape), rq_(std::move(rq)), isa_(isa), name_(std::move(name)) {
        validate_conv_shape(s_, name_);
        if (weights.size() != s_.weight_size())
            fail_input(name_ + ": expected " + std::to_string(s_.weight_size()) + " weights (K=" +
                       std::to_string(s_.kernels) + ", C/groups=" + std::to_string(s_.channels / s_.groups) +
                       ", " + std::to_string(s_.kernel_h) + "x" + std::to_string(s_.kernel_w) + "), got " +
                       std::to_string(weights.size()));
        validate_requant(rq_, static_cast<std::size_t>(s_.kernels), s_.output_signed, name_);
        if (!isa_supported(isa_))
            fail(error_kind::unsupported, name_ + ": instruction set " + std::string(isa_name(isa_)) +
                                              " is not supported by this CPU");
        w_.assign(weights.begin(), weights.end());
        oh_ = s_.out_h();
        ow_ = s_.out_w();
        dispatch(isa_, [&](auto tag) { prepare(tag); });
    }

    [[nodiscard]] const conv_shape& shape() const noexcept { return s_; }
    [[nodiscard]] isa_kind isa() const noexcept { return isa_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const requant_params& requant() const noexcept { return rq_; }
    // True when the ordinary convolution runs on the AMX tile unit (avx512_amx and at least
    // amx_min_groups channel groups and more than one output pixel).
    [[nodiscard]] bool uses_amx() const noexcept { return amx_; }
    [[nodiscard]] std::int64_t macs() const noexcept {
        return static_cast<std::int64_t>(s_.output_size()) * s_.reduction();
    }

    // input: C*H*W raw codes; output: K*OH*OW codes. pool may be null (single thread).
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, conv_workspace& ws,
             thread_pool* pool = nullptr) const {
        if (input.size() != s_.input_size())
            fail_input(name_ + ": input has " + std::to_string(input.size()) + " bytes, expected " +
                       std::to_string(s_.input_size()));
        if (output.size() != s_.output_size())
            fail_input(name_ + ": output has " + std::to_string(output.size()) + " bytes, expected " +
                       std::to_string(s_.output_size()));
        run(input, output, conv_output_pitch{}, ws, pool);
    }
    // The same with output (k, y, x) at output[k*pitch.plane + y*pitch.row + x] (see
    // conv_output_pitch); output must reach the last row of the last channel.
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, conv_output_pitch pitch,
             conv_workspace& ws, thread_pool* pool = nullptr) const {
        if (input.size() != s_.input_size())
            fail_input(name_ + ": input has " + std::to_string(input.size()) + " bytes, expected " +
                       std::to_string(s_.input_size()));
        const auto oh = static_cast<std::size_t>(oh_), ow = static_cast<std::size_t>(ow_);
        if (pitch.row == 0 && pitch.plane == 0) pitch = {ow, oh * ow};
        const std::size_t need = static_cast<std::size_t>(s_.kernels - 1) * pitch.plane + (oh - 1) * pitch.row + ow;
        if (pitch.row < ow || pitch.plane < (oh - 1) * pitch.row + ow || output.size() < need)
            fail_input(name_ + ": output pitches (row " + std::to_string(pitch.row) + ", plane " +
                       std::to_string(pitch.plane) + ") and size " + std::to_string(output.size()) +
                       " do not hold the " + std::to_string(s_.kernels) + "x" + std::to_string(oh) + "x" +
                       std::to_string(ow) + " output");
        if (pitch.gap_fill > 255 || pitch.gap_fill < -1)
            fail_input(name_ + ": gap fill " + std::to_string(pitch.gap_fill) + " is not a byte value or -1");
        const int tail_fill = pitch.tails ? pitch.gap_fill : -1;
        if (pitch.row == ow || oh == 1) pitch.gap_fill = -1;  // no gaps between rows
        if (dw2_) dw2_->run(input.data(), output.data(), pitch.row, pitch.plane, pool);
        else dispatch(isa_, [&](auto tag) { execute(tag, input.data(), output.data(), pitch, ws, pool); });
        const bool row_gaps = pitch.gap_fill >= 0 && !gaps_in_stores();
        if (row_gaps || tail_fill >= 0) fill_gaps(output.data(), output.size(), pitch, row_gaps, tail_fill, pool);
    }
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output,
             thread_pool* pool = nullptr) const {
        conv_workspace ws;
        run(input, output, ws, pool);
    }

private:
    // The paths whose own stores write conv_output_pitch::gap_fill: AVX-512 groups = 1 with
    // every block requantized in registers, or on AMX (the others fill the gaps afterwards).
    [[nodiscard]] bool gaps_in_stores() const noexcept {
        if (!uses_avx512(isa_) || s_.depthwise() || dw2_) return false;
        return amx_ || std::all_of(block_in_registers_.begin(), block_in_registers_.end(), [](char f) { return f != 0; });
    }

    // The gaps between rows (row_gaps) and the tails of the planes that end inside the output
    // (tail_fill >= 0), one plane per index.
    void fill_gaps(std::uint8_t* out, std::size_t size, const conv_output_pitch& op, bool row_gaps, int tail_fill,
                   thread_pool* pool) const {
        const auto oh = static_cast<std::size_t>(oh_), ow = static_cast<std::size_t>(ow_);
        const auto fill = static_cast<std::uint8_t>(op.gap_fill);
        const std::size_t last = (oh - 1) * op.row + ow;  // past a plane's last row
        auto plane = [&](std::size_t k) {
            dispatch(isa_, [&](auto tag) {
                std::uint8_t* g = out + k * op.plane + ow;
                if (row_gaps)
                    for (std::size_t y = 0; y + 1 < oh; ++y, g += op.row) detail::fill_short(tag, g, op.row - ow, fill);
            });
            if (tail_fill >= 0 && (k + 1) * op.plane <= size)
                std::memset(out + k * op.plane + last, tail_fill, op.plane - last);
        };
        for_each(static_cast<std::size_t>(s_.kernels) * op.plane >= 32768 ? pool : nullptr,
                 static_cast<std::size_t>(s_.kernels), plane);
    }

    template <class F>
    static void for_each(thread_pool* pool, std::size_t n, F&& f) {
        if (pool) pool->parallel_for(n, f);
        else
            for (std::size_t i = 0; i < n; ++i) f(i);
    }

    // ---- preparation -------------------------------------------------------------------
    void prepare(isa::scalar) {}

    template <class Isa>
    void prepare(Isa) {
        using T = detail::conv_tiling<Isa>;
        const int sh = s_.stride_h, sw = s_.stride_w;
        hp_ = (s_.height + sh - 1) / sh;
        wp_ = (s_.width + sw - 1) / sw;
        if (!s_.depthwise() && sh == 1 && sw == 1 && s_.gap_row > wp_) wp_ = s_.gap_row;
        planes_ = sh * sw;
        const int qt = s_.depthwise() ? T::dw_qt : T::qt;
        q_total_ = static_cast<std::size_t>(oh_) * wp_;
        q_pad_ = (q_total_ + qt - 1) / qt * qt;
        const std::size_t amax = static_cast<std::size_t>((s_.kernel_h - 1) * s_.dilation_h / sh);
        const std::size_t bmax = static_cast<std::size_t>((s_.kernel_w - 1) * s_.dilation_w / sw);
        plane_elems_ = std::max(static_cast<std::size_t>(hp_) * wp_, q_pad_ + amax * wp_ + bmax);
        // AVX-512 depthwise row groups at stride 1: channels back to back, packed with one copy.
        // A tile running past its plane only feeds dropped pixels (q >= q_total) or meets zero
        // weights, so the next channel may stand in for the slack; the buffer's tail covers
        // the last channel.
        if (std::is_same_v<Isa, isa::avx512_vnni> && s_.depthwise() && planes_ == 1)
            plane_elems_ = static_cast<std::size_t>(hp_) * wp_;
        // Ordinary convolutions on AVX-512: planes start on cache lines (the packed input is
        // 64-byte aligned), so the AMX tile rows at pixel tiles of 32 do not straddle lines,
        // which costs the tile loads three times the time.
        if (std::is_same_v<Isa, isa::avx512_vnni> && !s_.depthwise()) plane_elems_ = (plane_elems_ + 15) / 16 * 16;
        range_.clear();
        for (std::size_t k = 0; k < rq_.multiplier.size(); ++k)
            range_.push_back(acc_clamp_range(rq_.multiplier[k], rq_.constant[k], rq_.shift[k], rq_.act_min, rq_.act_max));
        taps_.clear();
        for (int ky = 0; ky < s_.kernel_h; ++ky)
            for (int kx = 0; kx < s_.kernel_w; ++kx) {
                const int dy = ky * s_.dilation_h, dx = kx * s_.dilation_w;
                const std::size_t plane = static_cast<std::size_t>(dy % sh) * sw + dx % sw;
                taps_.push_back(static_cast<std::int64_t>(plane * plane_elems_ +
                                                          static_cast<std::size_t>(dy / sh) * wp_ + dx / sw));
            }
        if (s_.depthwise()) {
            // AVX-512: taps in groups of four, the four weights of a group in one int32, and the
            // correction of the +128 input bias. Column stride 1 (dw_rows_vnni): a group is up
            // to four adjacent columns of one kernel row, at the offset of the first.
            // Otherwise (dw_tile_vnni): four taps in order, padding taps repeat tap 0 with weight 0.
            if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
                if (sw == 2 && s_.dilation_w == 1) {
                    // Column stride 2 has its own kernel (dw_stride2.hpp), which runs instead.
                    dw_columns2_shape d{s_.channels, s_.height, s_.width, s_.kernel_h, s_.kernel_w, sh, s_.dilation_h,
                                        s_.input_signed};
                    dw2_ = std::make_shared<const dw_columns2>(d, w_, rq_, isa_);
                    return;
                }
                const int nt = s_.kernel_h * s_.kernel_w, kw = s_.kernel_w;
                dw_rows_ = s_.stride_w == 1;
                // Row groups see a dilated kernel row as a dense one with zero columns between
                // its taps (DeepLab's atrous 3x3: five columns, two groups); groups that are
                // zero in every channel (the zero rows of a re-materialised dilated kernel)
                // are dropped below.
                const int dense_w = (kw - 1) * s_.dilation_w + 1, chunks = (dense_w + 3) / 4;
                auto group_of = [&](int t) {
                    return dw_rows_ ? t / kw * chunks + t % kw * s_.dilation_w / 4 : t / 4;
                };
                auto byte_of = [&](int t) { return dw_rows_ ? t % kw * s_.dilation_w % 4 : t % 4; };
                dw_groups_ = dw_rows_ ? s_.kernel_h * chunks : (nt + 3) / 4;
                dw_taps_.assign(static_cast<std::size_t>(dw_groups_) * (dw_rows_ ? 1 : 4), taps_[0]);
                if (!dw_rows_)
                    for (int t = 0; t < nt; ++t) dw_taps_[static_cast<std::size_t>(t)] = taps_[static_cast<std::size_t>(t)];
                else
                    for (int g = 0; g < dw_groups_; ++g) {
                        const int dy = g / chunks * s_.dilation_h;
                        dw_taps_[static_cast<std::size_t>(g)] = static_cast<std::int64_t>(
                            static_cast<std::size_t>(dy % sh) * plane_elems_ +
                            static_cast<std::size_t>(dy / sh) * wp_ + static_cast<std::size_t>(g % chunks * 4));
                    }
                dw_w4_.assign(static_cast<std::size_t>(s_.channels) * dw_groups_, 0);
                corr_.assign(static_cast<std::size_t>(s_.channels), 0);
                for (int c = 0; c < s_.channels; ++c) {
                    std::int64_t sum = 0;
                    for (int t = 0; t < nt; ++t) {
                        const std::int8_t v = w_[static_cast<std::size_t>(c) * nt + t];
                        sum += v;
                        auto& word = dw_w4_[static_cast<std::size_t>(c) * dw_groups_ + static_cast<std::size_t>(group_of(t))];
                        word = static_cast<std::int32_t>(static_cast<std::uint32_t>(word) |
                                                         (static_cast<std::uint32_t>(static_cast<std::uint8_t>(v)) << (8 * byte_of(t))));
                    }
                    if (s_.input_signed) corr_[static_cast<std::size_t>(c)] = static_cast<std::int32_t>(-128 * sum);
                }
                if (dw_rows_) {
                    drop_zero_groups();
                    dw_kept_ = kept_lanes(isa_, static_cast<std::size_t>(wp_), static_cast<std::size_t>(ow_));
                }
            }
            if constexpr (std::is_same_v<Isa, isa::avx2>) {
                // Taps in pairs (dw_sums_avx2), an odd last one paired with weight 0.
                const int nt = s_.kernel_h * s_.kernel_w;
                dw_groups_ = (nt + 1) / 2;
                dw_taps_.assign(static_cast<std::size_t>(2 * dw_groups_), taps_[0]);
                std::copy(taps_.begin(), taps_.end(), dw_taps_.begin());
                dw_w4_.assign(static_cast<std::size_t>(s_.channels) * dw_groups_, 0);
                for (std::size_t c = 0; c < static_cast<std::size_t>(s_.channels); ++c)
                    for (int t = 0; t < nt; ++t) {
                        const auto v = static_cast<std::uint16_t>(static_cast<std::int16_t>(w_[c * nt + t]));
                        auto& word = dw_w4_[c * dw_groups_ + static_cast<std::size_t>(t / 2)];
                        word = static_cast<std::int32_t>(static_cast<std::uint32_t>(word) | (std::uint32_t{v} << (16 * (t % 2))));
                    }
            }
            return;  // the scalar path uses w_ as is: [c][tap]
        }

        const int kb = T::kb;
        const int k = s_.kernels, c = s_.channels, nt = s_.kernel_h * s_.kernel_w;
        cq_ = (c + 3) / 4;
        kblocks_ = (k + kb - 1) / kb;
        const std::size_t packed = static_cast<std::size_t>(kblocks_) * cq_ * nt * kb * 4;
        auto weight = [&](int kk, int cc, int t) -> int {
            if (kk >= k || cc >= c) return 0;  // padding kernels and channels
            return w_[(static_cast<std::size_t>(kk) * c + cc) * nt + t];
        };
        auto pack = [&](auto* dst) {
            for (int b = 0; b < kblocks_; ++b)
                for (int q = 0; q < cq_; ++q)
                    for (int t = 0; t < nt; ++t)
                        for (int r = 0; r < kb; ++r)
                            for (int i = 0; i < 4; ++i)
                                *dst++ = static_cast<std::remove_reference_t<decltype(*dst)>>(
                                    weight(b * kb + r, q * 4 + i, t));
        };
        if constexpr (std::is_same_v<Isa, isa::avx2>) {
            packed16_.resize(packed);
            pack(packed16_.data());
        } else {
            packed8_.resize(packed);
            pack(packed8_.data());
        }
        corr_.assign(static_cast<std::size_t>(k), 0);
        if (std::is_same_v<Isa, isa::avx512_vnni> && s_.input_signed) {
            // vpdpbusd wants unsigned inputs: x+128 is fed, so subtract 128*sum(w_k).
            for (int kk = 0; kk < k; ++kk) {
                std::int64_t sum = 0;
                for (std::size_t i = 0; i < static_cast<std::size_t>(c) * nt; ++i)
                    sum += w_[static_cast<std::size_t>(kk) * c * nt + i];
                corr_[static_cast<std::size_t>(kk)] = static_cast<std::int32_t>(-128 * sum);
            }
        }
        if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
            // Grids wider than the output (rows at a padded pitch): per grid column, the lanes of
            // 16 pixels from there that fall past the output width.
            if (wp_ > ow_) {
                gap_lanes_.assign(static_cast<std::size_t>(wp_), 0);
                for (std::size_t ph = 0; ph < gap_lanes_.size(); ++ph)
                    for (std::size_t l = 0; l < 16; ++l)
                        if ((ph + l) % gap_lanes_.size() >= static_cast<std::size_t>(ow_))
                            gap_lanes_[ph] = static_cast<std::uint16_t>(gap_lanes_[ph] | (1u << l));
            }
        }
        {
            // Blocks whose every channel has an accumulator clamp are requantized in registers.
            block_rq_.assign(static_cast<std::size_t>(kblocks_) * kb, detail::channel_requant{});
            block_in_registers_.assign(static_cast<std::size_t>(kblocks_), 1);
            std::vector<char> all_biased(block_in_registers_.size(), 1), all_narrow(block_in_registers_.size(), 1);
            for (int kk = 0; kk < k; ++kk) {
                const auto ku = static_cast<std::size_t>(kk);
                const acc_range& r = range_[ku];
                if (!r.ok) block_in_registers_[ku / kb] = 0;
                all_biased[ku / kb] &= r.biased;
                all_narrow[ku / kb] &= r.narrow;
                const int form = !r.ok ? 0 : r.biased ? 3 : r.narrow ? 2 : 1;
                const auto c32 = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(rq_.constant[ku])));
                block_rq_[ku] = {rq_.constant[ku], rq_.multiplier[ku], rq_.shift[ku], corr_[ku], r.lo, r.hi, form, c32};
            }
            // The form a whole block takes: 3 biased 32-bit, 2 plain 32-bit, 1 64-bit, 0 memory.
            for (std::size_t b = 0; b < block_in_registers_.size(); ++b)
                if (block_in_registers_[b]) block_in_registers_[b] = all_biased[b] ? 3 : all_narrow[b] ? 2 : 1;
        }
        if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
            if (isa_ == isa_kind::avx512_amx && cq_ >= detail::amx_min_groups && oh_ * ow_ > 1) prepare_amx();
        }
        // The packed copy is all this path reads: release the original (simulator memory).
        std::vector<std::int8_t>().swap(w_);
    }

    // AMX blocks (detail::amx_block): the reduction in equal chunks of at most 16 channel
    // groups (the groups padded to a whole number of chunks meet zero weights), the weights as
    // [16-channel block][tap][chunk][16 channels][4*chunk bytes], zero past K and C.
    void prepare_amx() {
        const int nt = s_.kernel_h * s_.kernel_w, k = s_.kernels, c = s_.channels;
        amx_nchunks_ = (cq_ + 15) / 16;
        amx_chunk_ = (cq_ + amx_nchunks_ - 1) / amx_nchunks_;
        amx_cfg_ = detail::make_amx_config(amx_chunk_);
        const int blocks = (k + 15) / 16, row = 4 * amx_chunk_;
        amx_w_.assign(static_cast<std::size_t>(blocks) * nt * amx_nchunks_ * row / 4, detail::cache_line{});
        std::int8_t* const wa = amx_weights();
        std::size_t i = 0;
        for (int b = 0; b < blocks; ++b)
            for (int t = 0; t < nt; ++t)
                for (int ch = 0; ch < amx_nchunks_; ++ch)
                    for (int r = 0; r < 16; ++r)
                        for (int j = 0; j < row; ++j, ++i) {
                            const int kk = b * 16 + r, cc = ch * row + j;
                            if (kk < k && cc < c)
                                wa[i] = w_[(static_cast<std::size_t>(kk) * c + static_cast<std::size_t>(cc)) * nt +
                                               static_cast<std::size_t>(t)];
                        }
        amx_ = true;
        std::vector<std::int8_t>().swap(packed8_);  // the VNNI copy is never read (simulator memory)
    }

    // Lanes of the 16 grid pixels from q whose column is past the output width (gap_lanes_).
    [[nodiscard]] std::uint16_t gap_lanes(std::size_t q) const noexcept { return gap_lanes_[q % gap_lanes_.size()]; }

    [[nodiscard]] std::int8_t* amx_weights() noexcept { return reinterpret_cast<std::int8_t*>(amx_w_.data()); }
    [[nodiscard]] const std::int8_t* amx_weights() const noexcept {
        return reinterpret_cast<const std::int8_t*>(amx_w_.data());
    }
    static std::uint8_t* align64(std::uint8_t* p) noexcept {
        return p + (64 - reinterpret_cast<std::uintptr_t>(p) % 64) % 64;
    }

    // ---- scalar: the definition ----------------------------------------------------------
    void execute(isa::scalar, const std::uint8_t* in, std::uint8_t* out, const conv_output_pitch& op, conv_workspace&,
                 thread_pool* pool) const {
        const int cg = s_.channels / s_.groups;
        const std::size_t hw = static_cast<std::size_t>(s_.height) * s_.width;
        const bool sgn = s_.input_signed;
        for_each(pool, static_cast<std::size_t>(s_.kernels), [&](std::size_t k) {
            const int c0 = s_.depthwise() ? static_cast<int>(k) : 0;
            const std::int8_t* wk = w_.data() + k * cg * s_.kernel_h * s_.kernel_w;
            for (int oy = 0; oy < oh_; ++oy)
                for (int ox = 0; ox < ow_; ++ox) {
                    std::int32_t acc = 0;
                    for (int c = 0; c < cg; ++c) {
                        const std::uint8_t* xc = in + static_cast<std::size_t>(c0 + c) * hw;
                        for (int ky = 0; ky < s_.kernel_h; ++ky) {
                            const int iy = oy * s_.stride_h + ky * s_.dilation_h;
                            for (int kx = 0; kx < s_.kernel_w; ++kx) {
                                const int ix = ox * s_.stride_w + kx * s_.dilation_w;
                                const std::uint8_t b = xc[static_cast<std::size_t>(iy) * s_.width + ix];
                                const int xv = sgn ? static_cast<int>(static_cast<std::int8_t>(b)) : static_cast<int>(b);
                                acc += xv * wk[(c * s_.kernel_h + ky) * s_.kernel_w + kx];
                            }
                        }
                    }
                    out[k * op.plane + static_cast<std::size_t>(oy) * op.row + static_cast<std::size_t>(ox)] =
                        requantize(acc, rq_.multiplier[k], rq_.constant[k], rq_.shift[k], rq_.act_min, rq_.act_max);
                }
        });
    }

    // ---- SIMD ----------------------------------------------------------------------------
    // Scatters one requantized tile row (pixels q0..q0+n of the Wp-pitched grid) into y[k];
    // fill >= 0: with the pad gap after each output row whose grid row ends in the tile.
    template <class Isa>
    void scatter(Isa, const std::uint8_t* row, std::size_t q0, std::size_t n, std::uint8_t* yk, std::size_t pitch,
                 int fill = -1) const {
        std::size_t q = q0;
        const std::size_t end = std::min(q0 + n, q_total_);
        std::size_t oy = q / wp_, ox = q % wp_;
        while (q < end) {
            const std::size_t run = std::min(end - q, static_cast<std::size_t>(wp_) - ox);
            if (ox < static_cast<std::size_t>(ow_)) {
                const std::size_t valid = std::min(run, static_cast<std::size_t>(ow_) - ox);
                detail::copy_short(Isa{}, yk + oy * pitch + ox, row + (q - q0), valid);
            }
            if (fill >= 0 && ox + run == static_cast<std::size_t>(wp_) && oy + 1 < static_cast<std::size_t>(oh_))
                detail::fill_short(Isa{}, yk + oy * pitch + static_cast<std::size_t>(ow_), pitch - static_cast<std::size_t>(ow_),
                                   static_cast<std::uint8_t>(fill));
            q += run;
            ++oy;
            ox = 0;
        }
    }

    // Output channel k's row of n accumulators to bytes; AVX2 takes the channel's vector form.
    template <class Isa>
    void requant_row(Isa, std::size_t k, const std::int32_t* acc, std::size_t n, std::int32_t corr,
                     std::uint8_t* dst) const {
#if VNNX_SIM_X86
        if constexpr (std::is_same_v<Isa, isa::avx2>) {
            detail::requant_row_ranged(Isa{}, acc, n, corr, rq_.multiplier[k], rq_.constant[k], rq_.shift[k],
                                       rq_.act_min, rq_.act_max, range_[k], dst);
            return;
        }
#endif
        detail::requant_row(Isa{}, acc, n, corr, rq_.multiplier[k], rq_.constant[k], rq_.shift[k], rq_.act_min,
                            rq_.act_max, dst);
    }

    // Row groups whose four weights are zero in every channel add nothing: keep the others.
    void drop_zero_groups() {
        const auto groups = static_cast<std::size_t>(dw_groups_), channels = static_cast<std::size_t>(s_.channels);
        std::vector<std::size_t> kept;
        for (std::size_t g = 0; g < groups; ++g)
            for (std::size_t c = 0; c < channels; ++c)
                if (dw_w4_[c * groups + g] != 0) {
                    kept.push_back(g);
                    break;
                }
        if (kept.empty()) kept.push_back(0);  // an all-zero filter still needs one group
        if (kept.size() == groups) return;
        std::vector<std::int64_t> taps;
        std::vector<std::int32_t> w4;
        for (const std::size_t g : kept) taps.push_back(dw_taps_[g]);
        for (std::size_t c = 0; c < channels; ++c)
            for (const std::size_t g : kept) w4.push_back(dw_w4_[c * groups + g]);
        dw_taps_ = std::move(taps);
        dw_w4_ = std::move(w4);
        dw_groups_ = static_cast<int>(kept.size());
    }

    // Repacks the input into phase planes; `group4` interleaves 4 channels per pixel.
    void pack_input(const std::uint8_t* in, std::uint8_t* dst, bool group4, bool bias, thread_pool* pool) const {
        const std::size_t hw = static_cast<std::size_t>(s_.height) * s_.width;
        const std::size_t unit = group4 ? 4 : 1;
        const std::uint8_t flip = bias ? 0x80 : 0;
        const std::size_t groups = group4 ? static_cast<std::size_t>(cq_) : static_cast<std::size_t>(s_.channels);
        // Several groups per item when they are small (at least ~16 KiB), four items per thread.
        std::size_t per_item = 1;
        if (pool) {
            const std::size_t per_thread = groups / (4 * static_cast<std::size_t>(pool->size()));
            per_item = std::max<std::size_t>(1, std::min(16384 / std::max<std::size_t>(1, hw * unit), per_thread));
        }
        if (!group4 && planes_ == 1 && plane_elems_ == hw) {
            // Planes are the channels as they are (see prepare): one copy, in chunks over the pool.
            const std::size_t total = hw * groups;
            const std::size_t chunks = pool ? std::min<std::size_t>(4 * static_cast<std::size_t>(pool->size()), total / 16384 + 1) : 1;
            for_each(pool, chunks, [&](std::size_t i) {
                const std::size_t b = total * i / chunks, e = total * (i + 1) / chunks;
                detail::copy_flip(dst + b, in + b, e - b, flip);
            });
            return;
        }
        const auto height = static_cast<std::size_t>(s_.height);
        if (pool && group4 && (s_.stride_w == 1 || s_.stride_w == 2) && groups < 4 * static_cast<std::size_t>(pool->size())) {
            // Too few groups for four items per thread (the stem's three channels make one):
            // each group's rows in bands of at least ~16 KiB, the rows being independent.
            const std::size_t want = (4 * static_cast<std::size_t>(pool->size()) + groups - 1) / groups;
            const std::size_t bands = std::min({want, height, std::max<std::size_t>(1, hw * unit / 16384)});
            for_each(pool, groups * bands, [&](std::size_t item) {
                const std::size_t g = item / bands, b = item % bands;
                pack_group(in, dst, g, group4, flip, height * b / bands, height * (b + 1) / bands);
            });
            return;
        }
        for_each(pool, (groups + per_item - 1) / per_item, [&](std::size_t item) {
            for (std::size_t g = item * per_item; g < std::min(groups, (item + 1) * per_item); ++g)
                pack_group(in, dst, g, group4, flip, 0, height);
        });
    }

    // Packs group g; the 4-channel paths only input rows [y0, y1) (bands of one group over the
    // pool), the others the whole group (they are only called with every row).
    void pack_group(const std::uint8_t* in, std::uint8_t* dst, std::size_t g, bool group4, std::uint8_t flip,
                    std::size_t y0, std::size_t y1) const {
        const int sh = s_.stride_h, sw = s_.stride_w;
        const std::size_t hw = static_cast<std::size_t>(s_.height) * s_.width;
        const std::size_t unit = group4 ? 4 : 1;
        const std::size_t cstride = static_cast<std::size_t>(planes_) * plane_elems_ * unit;
        {
            // No clearing: bytes not written here (plane slack, padded channels) only reach
            // dropped output lanes or meet zero weights, and the vector is always initialised.
            std::uint8_t* d = dst + g * cstride;
            const std::size_t cn = group4 ? 4 : 1;
            if (group4 && sh == 1 && sw == 1 && wp_ == s_.width) {
                // One plane whose rows follow one another (Wp = W): the whole channel at once.
                const std::size_t last = static_cast<std::size_t>(s_.channels) - 1;
                const std::uint8_t* x[4];
                const std::size_t p0 = y0 * static_cast<std::size_t>(s_.width), n = (y1 - y0) * static_cast<std::size_t>(s_.width);
                for (std::size_t i = 0; i < 4; ++i) x[i] = in + std::min(g * 4 + i, last) * hw + p0;
                d += p0 * 4;
#if VNNX_SIM_X86
                if (uses_avx512(isa_)) {
                    detail::interleave4_avx512(d, x[0], x[1], x[2], x[3], n, flip);
                    return;
                }
#endif
                detail::interleave4<1>(d, x[0], x[1], x[2], x[3], static_cast<int>(n), flip);
                return;
            }
            if (group4 && (sw == 1 || sw == 2)) {
                // Interleave the group's channels a row at a time with constant strides (the
                // compiler vectorizes these loops). A group past the last channel repeats that
                // channel: its bytes meet zero weights.
                const std::size_t last = static_cast<std::size_t>(s_.channels) - 1;
                const std::uint8_t* x[4];
                for (std::size_t i = 0; i < 4; ++i) x[i] = in + std::min(g * 4 + i, last) * hw;
                for (int iy = static_cast<int>(y0); iy < static_cast<int>(y1); ++iy) {
                    const std::size_t prow = static_cast<std::size_t>(iy % sh) * sw;
                    const std::size_t i = static_cast<std::size_t>(iy / sh);
                    const std::size_t src = static_cast<std::size_t>(iy) * s_.width;
                    for (int px = 0; px < sw && px < s_.width; ++px) {
                        std::uint8_t* row = d + ((prow + px) * plane_elems_ + i * wp_) * 4;
                        const int n = (s_.width - px + sw - 1) / sw;
                        const std::size_t o = src + static_cast<std::size_t>(px);
#if VNNX_SIM_X86
                        if (sw == 1 && uses_avx512(isa_))
                            detail::interleave4_avx512(row, x[0] + o, x[1] + o, x[2] + o, x[3] + o,
                                                       static_cast<std::size_t>(n), flip);
                        else
#endif
                        if (sw == 1) detail::interleave4<1>(row, x[0] + o, x[1] + o, x[2] + o, x[3] + o, n, flip);
                        else detail::interleave4<2>(row, x[0] + o, x[1] + o, x[2] + o, x[3] + o, n, flip);
                    }
                }
                return;
            }
            if (!group4 && sh == 1 && sw == 1) {
                // One plane of pitch W: the channel as it is.
                detail::copy_flip(d, in + g * hw, hw, flip);
                return;
            }
            if (!group4 && sw == 1) {
                // Whole rows, one plane per row phase, with no division per row.
                const std::uint8_t* src = in + g * hw;
                const auto width = static_cast<std::size_t>(s_.width);
                for (int py = 0; py < sh && py < s_.height; ++py) {
                    std::uint8_t* row = d + static_cast<std::size_t>(py) * plane_elems_;
                    for (int iy = py; iy < s_.height; iy += sh, row += wp_)
                        detail::copy_flip(row, src + static_cast<std::size_t>(iy) * width, width, flip);
                }
                return;
            }
            for (std::size_t ci = 0; ci < cn; ++ci) {
                const std::size_t c = g * cn + ci;
                if (c >= static_cast<std::size_t>(s_.channels)) break;
                const std::uint8_t* xc = in + c * hw;
                for (int iy = 0; iy < s_.height; ++iy) {
                    const std::size_t prow = static_cast<std::size_t>(iy % sh) * sw;
                    const std::size_t i = static_cast<std::size_t>(iy / sh);
                    const std::uint8_t* src = xc + static_cast<std::size_t>(iy) * s_.width;
                    // one pass per column phase: no division per pixel
                    for (int px = 0; px < sw && px < s_.width; ++px) {
                        std::uint8_t* row = d + ((prow + px) * plane_elems_ + i * wp_) * unit + ci;
                        const int n = (s_.width - px + sw - 1) / sw;
                        const std::uint8_t* sp = src + px;
                        if (unit == 1 && sw == 1) {
                            detail::copy_flip(row, sp, static_cast<std::size_t>(n), flip);
                        } else {
                            for (int j = 0; j < n; ++j) row[static_cast<std::size_t>(j) * unit] = sp[j * sw] ^ flip;
                        }
                    }
                }
            }
        }
    }

#if VNNX_SIM_X86
    // One output pixel on AVX-512: the pixel's packed input words in (group, tap) order, then
    // one lane per output channel (see vnni_pixel).
    template <class Isa>
    void one_pixel(Isa, const std::uint8_t* xp, std::size_t cstride, std::uint8_t* out, std::size_t plane,
                   thread_pool* pool) const {
        constexpr bool vnni = std::is_same_v<Isa, isa::avx512_vnni>;
        constexpr int kb = detail::conv_tiling<Isa>::kb;
        const int ntaps = static_cast<int>(taps_.size());
        const int steps = cq_ * ntaps;
        // Per step: the pixel's four input bytes (VNNI), or them widened to int16 (AVX2).
        std::vector<std::uint32_t> x4(vnni ? static_cast<std::size_t>(steps) : 0);
        std::vector<std::int64_t> x16(vnni ? 0 : static_cast<std::size_t>(steps));
        if constexpr (vnni) {
            detail::vnni_pixel_words(xp, cstride, 0, cq_, taps_.data(), ntaps, x4.data());
        } else {
            for (int q = 0; q < cq_; ++q)
                for (int t = 0; t < ntaps; ++t) {
                    const std::uint8_t* p = xp + q * cstride + taps_[t] * 4;
                    std::uint64_t v = 0;
                    for (int j = 0; j < 4; ++j) {
                        const int xj = s_.input_signed ? static_cast<std::int8_t>(p[j]) : p[j];
                        v |= std::uint64_t{static_cast<std::uint16_t>(xj)} << (16 * j);
                    }
                    x16[static_cast<std::size_t>(q) * ntaps + t] = static_cast<std::int64_t>(v);
                }
        }
        const std::size_t wblock = static_cast<std::size_t>(steps) * kb * 4;
        for_each(pool, static_cast<std::size_t>(kblocks_), [&](std::size_t b) {
            alignas(32) std::int32_t acc[8];
            if constexpr (vnni) detail::vnni_pixel(x4.data(), steps, packed8_.data() + b * wblock, acc);
            else detail::avx2_pixel(x16.data(), steps, packed16_.data() + b * wblock, acc);
            for (std::size_t r = 0; r < static_cast<std::size_t>(kb); ++r) {
                const std::size_t k = b * kb + r;
                if (k >= static_cast<std::size_t>(s_.kernels)) break;
                out[k * plane] = requantize(wrap_add(acc[r], corr_[k]), rq_.multiplier[k], rq_.constant[k], rq_.shift[k],
                                    rq_.act_min, rq_.act_max);
            }
        });
    }
#endif

#if VNNX_SIM_X86
    // groups = 1 on AMX: work items of up to 64 output channels x 768 pixels (as on VNNI), each
    // a sweep of 16-channel x 32-pixel blocks (detail::amx_block) requantized as they come out.
    void run_amx(const std::uint8_t* xp, std::size_t cstride, std::uint8_t* out, const conv_output_pitch& op,
                 bool direct_ok, std::size_t direct_end, thread_pool* pool) const {
        auto count = [](std::size_t total, std::size_t per) { return (total + per - 1) / per; };
        const std::size_t blocks = count(static_cast<std::size_t>(s_.kernels), 16), qtiles = count(q_total_, 32);
        std::size_t kb_per_item = 4, tiles_per_item = 24;
        if (pool && pool->size() > 1) {
            const std::size_t want = 4 * static_cast<std::size_t>(pool->size());
            while (count(blocks, kb_per_item) * count(qtiles, tiles_per_item) < want &&
                   (kb_per_item > 1 || tiles_per_item > 1)) {
                if (tiles_per_item > 1) tiles_per_item = (tiles_per_item + 1) / 2;
                else kb_per_item = (kb_per_item + 1) / 2;
            }
        }
        const std::size_t kitems = count(blocks, kb_per_item), qitems = count(qtiles, tiles_per_item);
        for_each(pool, kitems * qitems, [&](std::size_t item) {
            const std::size_t ki = item % kitems, qi = item / kitems;
            amx_item(xp, cstride, out, op, direct_ok, direct_end, ki * kb_per_item,
                     std::min(blocks, (ki + 1) * kb_per_item), qi * tiles_per_item,
                     std::min(qtiles, (qi + 1) * tiles_per_item));
        });
    }

    VNNX_TARGET_AMX void amx_item(const std::uint8_t* xp, std::size_t cstride, std::uint8_t* out,
                                  const conv_output_pitch& op, bool direct_ok, std::size_t direct_end, std::size_t b0,
                                  std::size_t b1, std::size_t t0, std::size_t t1) const {
        // The tile configuration is per thread: set on entry, released on exit so that a
        // context switch need not save 8 KiB of tile data.
        _tile_loadconfig(&amx_cfg_);
        // Two sum buffers: block i is requantized after block i+1's tile products are issued,
        // so the vector unit works while the tile unit does.
        alignas(64) std::int32_t acc[2][16 * 32];
        alignas(64) std::uint8_t rows_buf[16 * 32];
        const int ntaps = static_cast<int>(taps_.size());
        const std::size_t wblock = static_cast<std::size_t>(ntaps) * amx_nchunks_ * 16 * 4 * amx_chunk_;
        struct pending {
            std::size_t b, q0, n;
            bool direct;
            int lanes;  // of a direct tile: pixels to store (< 32 only in the grid's last tile)
            __mmask16 gaps[2];
        };
        // Direct blocks at the padded pitch write the pad into their gap lanes (conv_output_pitch).
        const bool fill = op.gap_fill >= 0 && direct_ok && wp_ > ow_;
        auto finish = [&](const pending& p, const std::int32_t* sums) {
            const int rows = std::min(16, s_.kernels - static_cast<int>(p.b) * 16);
            const detail::channel_requant* rq = block_rq_.data() + p.b * 16;
            if (p.direct) {
                std::uint8_t* o = out + p.b * 16 * op.plane + p.q0;
                auto requant = [&](auto with_fill, auto tail) {
                    detail::amx_requant<decltype(with_fill)::value, decltype(tail)::value>(
                        sums, rq, rows, p.lanes > 16 ? 2 : 1, rq_.act_min, rq_.act_max, o, op.plane, p.gaps,
                        static_cast<std::uint8_t>(op.gap_fill), p.lanes);
                };
                using yes = std::true_type;
                using no = std::false_type;
                if (p.lanes == 32) fill ? requant(yes{}, no{}) : requant(no{}, no{});
                else fill ? requant(yes{}, yes{}) : requant(no{}, yes{});
                return;
            }
            detail::amx_requant(sums, rq, rows, p.n > 16 ? 2 : 1, rq_.act_min, rq_.act_max, rows_buf, 32);
            for (int r = 0; r < rows; ++r)
                scatter(isa::avx512_vnni{}, rows_buf + r * 32, p.q0, p.n,
                        out + (p.b * 16 + static_cast<std::size_t>(r)) * op.plane, op.row, op.gap_fill);
        };
        std::size_t done = 0;
        pending last{};
        for (std::size_t tile = t0; tile < t1; ++tile) {
            const std::size_t q0 = tile * 32, n = std::min<std::size_t>(32, q_total_ - q0);
            // Every tile that starts before direct_end goes straight to the output; the last
            // one through store masks (a scatter per channel row cost more than its products).
            const bool direct = direct_ok && q0 < direct_end;
            const int lanes = static_cast<int>(std::min<std::size_t>(32, direct_end - std::min(q0, direct_end)));
            __mmask16 gaps[2] = {};
            if (fill && direct) gaps[0] = gap_lanes(q0), gaps[1] = gap_lanes(q0 + 16);  // once per tile
            for (std::size_t b = b0; b < b1; ++b, ++done) {
                detail::amx_block(xp + q0 * 4, cstride, taps_.data(), ntaps, amx_nchunks_, amx_chunk_,
                                  amx_weights() + b * wblock, acc[done % 2], b == b0 && tile + 1 < t1);
                if (done > 0) finish(last, acc[(done - 1) % 2]);
                last = {b, q0, n, direct, lanes, {gaps[0], gaps[1]}};
            }
        }
        if (done > 0) finish(last, acc[(done - 1) % 2]);
        _tile_release();
    }
#endif

    template <class Isa>
    void execute(Isa, const std::uint8_t* in, std::uint8_t* out, const conv_output_pitch& op, conv_workspace& ws,
                 thread_pool* pool) const {
#if VNNX_SIM_X86
        using T = detail::conv_tiling<Isa>;
        constexpr bool vnni = std::is_same_v<Isa, isa::avx512_vnni>;
        const bool dw = s_.depthwise();
        const std::size_t unit = dw ? 1 : 4;
        const std::size_t groups = dw ? static_cast<std::size_t>(s_.channels) : static_cast<std::size_t>(cq_);
        const std::size_t cstride = static_cast<std::size_t>(planes_) * plane_elems_ * unit;
        // Slack so the widest vector load past the last tap stays inside the buffer.
        std::size_t need =
            groups * cstride + 256 + static_cast<std::size_t>((s_.kernel_w - 1) * s_.dilation_w + 1);
        if (amx_) {
            // AMX reads whole chunks of groups and 32 pixels per tile (amx_block).
            const auto tap_max = static_cast<std::size_t>(*std::max_element(taps_.begin(), taps_.end()));
            need = std::max(need, (static_cast<std::size_t>(amx_nchunks_) * amx_chunk_ - 1) * cstride +
                                      ((q_total_ + 31) / 32 * 32 + tap_max) * 4 + 64);
        }
        if (ws.input.size() < need + 64) ws.input.resize(need + 64);
        std::uint8_t* const packed = align64(ws.input.data());
        // Depthwise row groups read the channels where they are: the packed planes would be a
        // plain copy, or on signed input a copy biased by +128, which the kernel now adds to
        // each load instead (a whole pass over the input saved). Only the last channels, whose
        // tiles read past the end of the input, are copied as they are (with the buffer's slack
        // after them): channel c is at xp + c * cstride below for c < c_inplace, at
        // packed + (c - c_inplace) * cstride after.
        std::size_t c_inplace = 0;
        bool flip_loads = false;
        if (vnni && dw && dw_rows_ && planes_ == 1 &&
            plane_elems_ == static_cast<std::size_t>(s_.height) * s_.width) {
            const std::size_t total = s_.input_size(), offs_max = static_cast<std::size_t>(
                                                            *std::max_element(dw_taps_.begin(), dw_taps_.end()));
            const std::size_t reach = q_pad_ + offs_max + 4;  // bytes a channel's tiles read from its start
            c_inplace = reach <= total ? std::min(groups, (total - reach) / plane_elems_ + 1) : 0;
            std::memcpy(packed, in + c_inplace * plane_elems_, total - c_inplace * plane_elems_);
            flip_loads = s_.input_signed;
        } else {
            pack_input(in, packed, !dw, vnni && (!dw || dw_rows_) && s_.input_signed, pool);
        }
        const std::uint8_t* xp = packed;
        const int ntaps = static_cast<int>(taps_.size());
        const std::size_t ohw = static_cast<std::size_t>(oh_) * ow_;
        // Grid pitch = output width (no dropped columns): whole tiles are requantized straight
        // into the output, only the last partial tile goes through `row` and the scatter.
        const bool dense = wp_ == ow_ && op.row == static_cast<std::size_t>(ow_);

        if (dw) {
            constexpr int qt = T::dw_qt;
            const std::size_t qtiles = q_pad_ / qt;
            const std::size_t tiles_per_item = std::max<std::size_t>(1, 1024 / qt);
            const std::size_t qitems = (qtiles + tiles_per_item - 1) / tiles_per_item;
            const auto channels = static_cast<std::size_t>(s_.channels);
            // Small planes: several channels per item (at least ~2048 pixels), as long as every
            // thread still gets four items; items of a few hundred pixels cost more in hand-off
            // (the shared counter's cache line) than they compute.
            // One thread takes them in the same groups (dw_rows_vnni_channels runs a group).
            std::size_t ch_per_item = 1;
            if (qitems == 1) {
                const std::size_t per_thread = pool ? channels / (4 * static_cast<std::size_t>(pool->size())) : channels;
                ch_per_item = std::max<std::size_t>(1, std::min(2048 / q_pad_, per_thread));
            }
            const std::size_t citems = (channels + ch_per_item - 1) / ch_per_item;
            for_each(pool, qitems * citems, [&](std::size_t item) {
              const std::size_t ci = item / qitems, qi = item % qitems;
              const std::size_t c_begin = ci * ch_per_item, c_end = std::min(channels, (ci + 1) * ch_per_item);
              const std::size_t t_end = std::min(qtiles, (qi + 1) * tiles_per_item);
              if constexpr (vnni) {
                  if (dw_rows_) {
                      const detail::dw_rows_channels a{
                          in, xp, c_inplace, cstride, dw_taps_.data(), dw_groups_, dw_w4_.data(), corr_.data(),
                          rq_.multiplier.data(), rq_.constant.data(), rq_.shift.data(), rq_.act_min, rq_.act_max,
                          range_.data(),
                          grid_out{out, static_cast<std::size_t>(wp_), static_cast<std::size_t>(ow_), q_total_, op.row,
                                   op.row == static_cast<std::size_t>(ow_) && !dw_kept_.empty() ? dw_kept_.data() : nullptr},
                          op.plane};
                      const auto form = [](const acc_range& r) { return r.biased ? 3 : r.narrow ? 2 : r.ok ? 1 : 0; };
                      for (std::size_t c = c_begin; c < c_end;) {  // runs of channels of one form
                          const int f = form(range_[c]);
                          std::size_t e = c + 1;
                          while (e < c_end && form(range_[e]) == f) ++e;
                          const auto run = [&](auto flip) {
                              constexpr bool F = decltype(flip)::value;
                              (f == 3   ? detail::dw_rows_vnni_channels<true, true, true, F>
                               : f == 2 ? detail::dw_rows_vnni_channels<true, true, false, F>
                               : f == 1 ? detail::dw_rows_vnni_channels<true, false, false, F>
                                        : detail::dw_rows_vnni_channels<false, false, false, F>)(a, c, e, qi * tiles_per_item,
                                                                                                 t_end);
                          };
                          if (flip_loads) run(std::true_type{});
                          else run(std::false_type{});
                          c = e;
                      }
                      return;
                  }
              }
              for (std::size_t c = c_begin; c < c_end; ++c) {
                alignas(64) std::int32_t acc[qt];
                alignas(64) std::uint8_t row[qt];
                if constexpr (std::is_same_v<Isa, isa::avx2>) {
                    const acc_range& r = range_[c];
                    if (r.ok) {
                        const detail::requant_vec8 q = detail::make_requant_vec8(rq_.multiplier[c], rq_.constant[c], rq_.shift[c], r);
                        std::uint8_t* const yc = out + c * op.plane;
                        const auto spill = [&](const std::uint8_t* part, std::size_t q0) {
                            scatter(Isa{}, part, q0, qt, yc, op.row);
                        };
                        const auto rows = [&](auto sign, auto form) {
                            detail::dw_rows_avx2<decltype(sign)::value, decltype(form)::value>(
                                xp + c * cstride, qi * tiles_per_item, t_end, dw_taps_.data(), dw_groups_,
                                dw_w4_.data() + c * dw_groups_, q, dense ? yc : nullptr, q_total_, spill);
                        };
                        const auto forms = [&](auto sign) {
                            if (r.narrow || r.biased) rows(sign, std::integral_constant<int, 2>{});
                            else rows(sign, std::integral_constant<int, 1>{});
                        };
                        if (s_.input_signed) forms(std::true_type{});
                        else forms(std::false_type{});
                        continue;
                    }
                }
                for (std::size_t tile = qi * tiles_per_item; tile < t_end; ++tile) {
                    const std::size_t q0 = tile * qt;
                    const std::uint8_t* xc = xp + c * cstride + q0;
                    const bool direct = dense && q0 + qt <= q_total_;
                    std::uint8_t* dst = direct ? out + c * op.plane + q0 : row;
                    if constexpr (vnni) {
                        detail::dw_tile_vnni(xc, dw_taps_.data(), dw_groups_, dw_w4_.data() + c * dw_groups_,
                                             s_.input_signed ? 0x80 : 0, acc);
                    } else {
                        const std::int32_t* w2 = dw_w4_.data() + c * dw_groups_;
                        if (s_.input_signed) detail::dw_tile_avx2<true>(xc, dw_taps_.data(), dw_groups_, w2, acc);
                        else detail::dw_tile_avx2<false>(xc, dw_taps_.data(), dw_groups_, w2, acc);
                    }
                    requant_row(Isa{}, c, acc, qt, vnni ? corr_[c] : 0, dst);
                    if (!direct) scatter(Isa{}, row, q0, qt, out + c * op.plane, op.row);
                }
              }
            });
            return;
        }

        constexpr int kb = T::kb, qt = T::qt;
        // Rows at the pitch the grid was made for (conv_shape::gap_row), or that happens to be
        // the grid's when the gaps are to be filled anyway: whole tiles go straight to the
        // output, their columns past ow into the gaps; never past the last row's end.
        const bool gap_rows = wp_ > ow_ && (wp_ == s_.gap_row || op.gap_fill >= 0) && op.row == static_cast<std::size_t>(wp_);
        const std::size_t direct_end = gap_rows ? q_total_ - static_cast<std::size_t>(wp_ - ow_) : q_total_;
        [[maybe_unused]] const bool fill = gap_rows && op.gap_fill >= 0;
        if (ohw == 1) {
            one_pixel(Isa{}, xp, cstride, out, op.plane, pool);
            return;
        }
        if constexpr (vnni) {
            if (amx_) {
                run_amx(xp, cstride, out, op, dense || gap_rows, direct_end, pool);
                return;
            }
        }
        const std::size_t qtiles = q_pad_ / qt;
        const std::size_t wblock = static_cast<std::size_t>(cq_) * ntaps * kb * 4;
        // A last tile of a few pixels would compute a 16-lane vector for them (a 7x7 map is 48
        // pixels and one): they take the one-pixel kernel instead, lanes over output channels.
        [[maybe_unused]] const auto steps = static_cast<std::size_t>(cq_) * taps_.size();
        [[maybe_unused]] std::size_t tail = 0;
        [[maybe_unused]] std::vector<std::uint32_t> tail_x4;
        if constexpr (vnni) {
            const std::size_t last = q_total_ - (qtiles - 1) * qt;
            if (last <= detail::tail_pixels_max) {
                tail = last;
                tail_x4.resize(tail * steps);
                for (std::size_t p = 0; p < tail; ++p)
                    detail::vnni_pixel_words(xp, cstride, (qtiles - 1) * qt + p, cq_, taps_.data(), ntaps,
                                             tail_x4.data() + p * steps);
            }
        }
        // Work item: up to 64 output channels x up to ~768 pixels; inside, pixels outer so the
        // input tile stays in L1 while the k-blocks sweep over it.
        std::size_t kb_per_item = std::max(1, 64 / kb);
        std::size_t tiles_per_item = std::max<std::size_t>(1, 768 / qt);
        auto count = [](std::size_t total, std::size_t per) { return (total + per - 1) / per; };
        const auto kblocks = static_cast<std::size_t>(kblocks_);
        // A tail of a pixel or two costs next to nothing: it rides with the last item of pixels
        // instead of being one (a 7x7 map split in 48 + 1 pixels made half the items empty).
        const std::size_t qsplit = tail != 0 && qtiles > 1 ? qtiles - 1 : qtiles;
        if (pool && pool->size() > 1) {
            // Small layers: smaller items until there are four per thread, so the last item
            // leaves little imbalance (3 items on 2 threads take as long as 4).
            const auto threads = static_cast<std::size_t>(pool->size());
            const std::size_t want = 4 * threads;
            while (count(kblocks, kb_per_item) * count(qsplit, tiles_per_item) < want &&
                   (kb_per_item > 1 || tiles_per_item > 1)) {
                if (tiles_per_item > 1 && count(qsplit, tiles_per_item) < qsplit) tiles_per_item = (tiles_per_item + 1) / 2;
                else if (kb_per_item > 1) kb_per_item = (kb_per_item + 1) / 2;
                else tiles_per_item = (tiles_per_item + 1) / 2;
            }
            // A few items per thread: 9 items of a 14x14 layer on 2 threads left the caller
            // waiting 5-8 us for the worker's fifth. Among nearby splits, the one whose items
            // schedule shortest (decided once per thread count, see detail::balanced_split).
            if (count(kblocks, kb_per_item) * count(qsplit, tiles_per_item) < 8 * threads) {
                std::uint64_t v = split_cache_.v.load(std::memory_order_relaxed);
                if ((v & 0xFFFF) != threads) {
                    // The last tile computes only its 16-pixel vectors that hold pixels.
                    const std::size_t last_px = q_total_ - (qsplit - 1) * qt;
                    const double last = qsplit < qtiles ? 1.0
                                                        : static_cast<double>(std::min<std::size_t>(qt, (last_px + 15) / 16 * 16)) / qt;
                    const auto [kbp, tpi] = detail::balanced_split(kblocks, qsplit, last, count(kblocks, kb_per_item),
                                                                    count(qsplit, tiles_per_item), threads);
                    v = threads | static_cast<std::uint64_t>(kbp) << 16 | static_cast<std::uint64_t>(tpi) << 40;
                    split_cache_.v.store(v, std::memory_order_relaxed);
                }
                kb_per_item = static_cast<std::size_t>(v >> 16 & 0xFFFFFF);
                tiles_per_item = static_cast<std::size_t>(v >> 40);
            }
        }
        const std::size_t kitems = count(kblocks, kb_per_item);
        const std::size_t qitems = count(qsplit, tiles_per_item);
        for_each(pool, kitems * qitems, [&](std::size_t item) {
            const std::size_t ki = item % kitems, qi = item / kitems;
            alignas(64) std::int32_t acc[kb * qt];
            alignas(64) std::uint8_t row[qt];
            [[maybe_unused]] alignas(64) std::uint8_t rows_buf[kb * qt];
            const std::size_t b_end = std::min(kblocks, (ki + 1) * kb_per_item);
            const std::size_t t_end = qi + 1 == qitems ? qtiles : std::min(qsplit, (qi + 1) * tiles_per_item);
            for (std::size_t tile = qi * tiles_per_item; tile < t_end; ++tile) {
                const std::size_t q0 = tile * qt;
                if constexpr (vnni)
                    if (tail != 0 && tile + 1 == qtiles) {
                        for (std::size_t b = ki * kb_per_item; b < b_end; ++b) {
                            alignas(64) std::int32_t sums[kb][detail::tail_pixels_max];
                            for (std::size_t p = 0; p < tail; ++p) {
                                alignas(32) std::int32_t a8[kb];
                                detail::vnni_pixel(tail_x4.data() + p * steps, static_cast<int>(steps), packed8_.data() + b * wblock, a8);
                                for (int r = 0; r < kb; ++r) sums[r][p] = a8[r];
                            }
                            for (int r = 0; r < kb; ++r) {
                                const std::size_t k = b * kb + static_cast<std::size_t>(r);
                                if (k >= static_cast<std::size_t>(s_.kernels)) break;
                                requant_row(Isa{}, k, sums[r], tail, corr_[k], row);
                                scatter(Isa{}, row, q0, tail, out + k * op.plane, op.row, op.gap_fill);
                            }
                        }
                        continue;
                    }
                const std::uint8_t* xq = xp + q0 * 4;
                const bool direct = (dense || gap_rows) && q0 + qt <= direct_end;
                // The last tile computes only the 16-pixel vectors that hold pixels.
                const std::size_t n = std::min<std::size_t>(qt, (q_total_ - q0 + 15) / 16 * 16);
                [[maybe_unused]] __mmask16 gaps[3] = {};
                if constexpr (vnni)  // once per tile: a division per vector cost more than the fill
                    if (fill && direct)
                        for (std::size_t v = 0; v < 3; ++v) gaps[v] = gap_lanes(q0 + 16 * v);
                for (std::size_t b = ki * kb_per_item; b < b_end; ++b) {
                    const std::int8_t* wb = nullptr;
                    if constexpr (vnni) {
                        wb = packed8_.data() + b * wblock;
                        if (block_in_registers_[b]) {
                            const int rows = std::min(kb, s_.kernels - static_cast<int>(b) * kb);
                            std::uint8_t* dst = direct ? out + b * kb * op.plane + q0 : rows_buf;
                            const std::size_t pitch = direct ? op.plane : static_cast<std::size_t>(qt);
                            const detail::channel_requant* rq = block_rq_.data() + b * kb;
                            const auto tile = [&](auto nv, auto narrow, auto biased) {
                                detail::vnni_tile_requant<decltype(nv)::value, decltype(narrow)::value,
                                                          decltype(biased)::value>(xq, cstride, cq_, taps_.data(), ntaps,
                                                                                   wb, rq, rows, dst, pitch);
                            };
                            const auto tiles = [&](auto narrow, auto biased) {
                                if (direct && fill) {
                                    // A whole tile at the padded pitch: the pad into its gap lanes.
                                    detail::vnni_tile_requant<3, decltype(narrow)::value, decltype(biased)::value, true>(
                                        xq, cstride, cq_, taps_.data(), ntaps, wb, rq, rows, dst, pitch, gaps,
                                        static_cast<std::uint8_t>(op.gap_fill));
                                } else if (n == 16) tile(std::integral_constant<int, 1>{}, narrow, biased);
                                else if (n == 32) tile(std::integral_constant<int, 2>{}, narrow, biased);
                                else tile(std::integral_constant<int, 3>{}, narrow, biased);
                            };
                            const char form = block_in_registers_[b];
                            if (form == 3) tiles(std::true_type{}, std::true_type{});
                            else if (form == 2) tiles(std::true_type{}, std::false_type{});
                            else tiles(std::false_type{}, std::false_type{});
                            if (!direct)
                                for (int r = 0; r < rows; ++r)
                                    scatter(Isa{}, rows_buf + r * qt, q0, n, out + (b * kb + static_cast<std::size_t>(r)) * op.plane,
                                            op.row, op.gap_fill);
                            continue;
                        }
                        if (n == 16) detail::vnni_tile<1>(xq, cstride, cq_, taps_.data(), ntaps, wb, acc);
                        else if (n == 32) detail::vnni_tile<2>(xq, cstride, cq_, taps_.data(), ntaps, wb, acc);
                        else detail::vnni_tile<3>(xq, cstride, cq_, taps_.data(), ntaps, wb, acc);
                    } else {
                        const std::int16_t* w16 = packed16_.data() + b * wblock;
                        if (block_in_registers_[b]) {
                            const int rows = std::min(kb, s_.kernels - static_cast<int>(b) * kb);
                            std::uint8_t* dst = direct ? out + b * kb * op.plane + q0 : rows_buf;
                            const std::size_t pitch = direct ? op.plane : static_cast<std::size_t>(qt);
                            (s_.input_signed ? detail::avx2_tile_requant<true> : detail::avx2_tile_requant<false>)(
                                xq, cstride, cq_, taps_.data(), ntaps, w16, block_rq_.data() + b * kb, rows, dst, pitch);
                            if (!direct)
                                for (int r = 0; r < rows; ++r)
                                    scatter(Isa{}, rows_buf + r * qt, q0, qt, out + (b * kb + static_cast<std::size_t>(r)) * op.plane,
                                            op.row);  // the gaps are filled afterwards (fill_gaps)
                            continue;
                        }
                        if (s_.input_signed) detail::avx2_tile<true>(xq, cstride, cq_, taps_.data(), ntaps, w16, acc);
                        else detail::avx2_tile<false>(xq, cstride, cq_, taps_.data(), ntaps, w16, acc);
                    }
                    (void)wb;
                    // AVX2 tiles are 8 pixels: n = qt there.
                    const std::size_t m = vnni ? n : static_cast<std::size_t>(qt);
                    for (int r = 0; r < kb; ++r) {
                        const std::size_t k = b * kb + r;
                        if (k >= static_cast<std::size_t>(s_.kernels)) break;
                        std::uint8_t* dst = direct ? out + k * op.plane + q0 : row;
                        requant_row(Isa{}, k, acc + r * qt, m, corr_[k], dst);
                        if (!direct) scatter(Isa{}, row, q0, m, out + k * op.plane, op.row);
                    }
                }
            }
        });
#else
        (void)in, (void)out, (void)op, (void)ws, (void)pool;
        fail(error_kind::unsupported, name_ + ": SIMD kernels need an x86-64 build");
#endif
    }

    conv_shape s_;
    requant_params rq_;
    isa_kind isa_;
    std::string name_;
    std::vector<std::int8_t> w_;  // as given: [K][C/g][kh][kw]
    int oh_ = 0, ow_ = 0;
    // SIMD geometry (see the header comment)
    int hp_ = 0, wp_ = 0, planes_ = 1, cq_ = 0, kblocks_ = 0;
    std::size_t q_total_ = 0, q_pad_ = 0, plane_elems_ = 0;
    std::vector<std::int64_t> taps_;       // per tap: offset in plane elements
    std::vector<std::int8_t> packed8_;     // AVX-512 VNNI weights
    std::vector<std::int16_t> packed16_;   // AVX2 weights
    std::vector<std::int32_t> corr_;       // per k: added to the accumulator before requantizing
    int dw_groups_ = 0;                    // depthwise: AVX-512 tap groups of four, AVX2 tap pairs
    bool dw_rows_ = false;                 // ... of adjacent columns (dw_rows_vnni, biased input)
    std::vector<std::int64_t> dw_taps_;    // taps_ padded to dw_groups_ * 4 (* 2 on AVX2), or one per row group
    std::vector<std::int32_t> dw_w4_;      // [c][group]: four int8 weights per int32 (AVX2: two int16)
    std::vector<acc_range> range_;         // per output channel: acc_clamp_range (the SIMD paths' forms)
    std::vector<std::uint64_t> dw_kept_;   // row groups with dropped columns: grid_out::kept
    std::vector<detail::channel_requant> block_rq_;  // AVX-512 groups = 1: per k (padded to blocks)
    std::vector<std::uint16_t> gap_lanes_;           // ... per grid column when wp > ow: see gap_lanes
    std::vector<char> block_in_registers_;           // ... per k-block: every channel has a clamp (1),
                                                     // a narrow one (2), narrow and biased (3), or not (0)
    std::shared_ptr<const dw_columns2> dw2_;  // AVX-512 depthwise at column stride 2 (replaces execute)
    mutable detail::split_cache split_cache_;  // the item split of a small layer on a pool (execute)
    bool amx_ = false;                        // groups = 1 on the AMX tile unit (prepare_amx)
    int amx_chunk_ = 0, amx_nchunks_ = 0;     // ... channel groups per chunk, chunks
    std::vector<detail::cache_line> amx_w_;   // ... weights per 16-channel block, tiles on whole lines
    detail::amx_config amx_cfg_;
};

}  // namespace vnnx::sim::kernels
