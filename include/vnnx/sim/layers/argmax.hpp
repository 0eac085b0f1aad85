#pragma once
// ARG_MAX (56) / ARG_MIN (79) layers: the reduce8 flag names the channels-first axis searched
// (exactly one of channels, rows, columns); each output element is the int32 index of the first
// maximum (minimum) code along it, outputs in the order of the kept elements.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/sim/layers/reduce.hpp"
#include "vnnx/support/bytes.hpp"

namespace vnnx::sim {

template <bool Minimum>
struct argmax_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.type != 0 && in.type != 1) c.reject("expects an 8-bit input");
        if (out.type != 3) c.reject("expects an int32 output, found calc type " + std::to_string(out.type));
        const auto r8 = c.rec.options.get<format::layer_options::reduce8>();
        if ((r8.channels != 0) + (r8.rows != 0) + (r8.columns != 0) != 1) c.reject("reduce8 must flag exactly one axis");
        const std::int64_t outer = in.outer(), C = in.channels(), H = in.rows(), W = in.cols();
        const bool rc = r8.channels != 0, rh = r8.rows != 0, rw = r8.columns != 0;
        const reduce_exec_detail::keep_index key{rc ? 1 : C, rh ? 1 : H, rw ? 1 : W, rc, rh, rw};
        const std::int64_t kept = outer * (rc ? 1 : C) * (rh ? 1 : H) * (rw ? 1 : W);
        if (static_cast<std::int64_t>(out.count) != kept)
            c.reject("output has " + std::to_string(out.count) + " elements, expected " + std::to_string(kept));
        if (rc && C <= 256) {
            channel_axis(in, out, outer, C, H * W, c.ex.isa, c.ex.pool);
            return;
        }
        // Walking the input in memory order visits each output's candidates in increasing axis
        // order, so a strict comparison keeps the first extreme.
        std::vector<std::int32_t> best(static_cast<std::size_t>(kept)), at(static_cast<std::size_t>(kept), -1);
        std::uint64_t i = 0;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t ch = 0; ch < C; ++ch)
                for (std::int64_t y = 0; y < H; ++y)
                    for (std::int64_t x = 0; x < W; ++x, ++i) {
                        const auto k = key(o, ch, y, x);
                        const std::int32_t v = in.get(i);
                        if (at[k] < 0 || (Minimum ? v < best[k] : v > best[k])) {
                            best[k] = v;
                            at[k] = static_cast<std::int32_t>(rc ? ch : rh ? y : x);
                        }
                    }
        for (std::size_t k = 0; k < at.size(); ++k) out.set(reduce_exec_detail::cf_position(out, k), at[k]);
    }

    // The channel axis (a segmentation map's class scores): whole channel planes compared with
    // the running extreme, loops the compiler vectorizes; the same first-extreme rule.
    static void channel_axis(const tensor_ref& in, const tensor_ref& out, std::int64_t outer, std::int64_t C,
                             std::int64_t hw, isa_kind isa, thread_pool* pool) {
        const auto n = static_cast<std::size_t>(hw);
        // Codes compared as unsigned bytes (int8 with the sign bit flipped: the same order), so
        // every array is bytes and the loops vectorize fully. at[k] is output element k.
        // 64 bytes past the last index: the transposing store's 4-byte gathers read beyond it.
        const std::size_t kept_n = static_cast<std::size_t>(outer) * n;
        std::vector<std::uint8_t> at(kept_n + 64);
        const std::span<const std::uint8_t> labels(at.data(), kept_n);
        const std::uint8_t flip = in.is_signed() ? 0x80 : 0;
#if VNNX_SIM_X86
        if (isa != isa_kind::scalar) {
            // Blocks of 4096 pixels over the pool; each holds its running extreme in registers.
            constexpr std::size_t block = 4096;
            const std::size_t blocks = (n + block - 1) / block;
            auto body = [&](std::size_t item) {
                const std::size_t o = item / blocks, b = item % blocks;
                const std::size_t i0 = b * block, i1 = std::min(n, i0 + block);
                const std::uint8_t* src = in.u8() + o * static_cast<std::size_t>(C) * n + i0;
                if (uses_avx512(isa)) channel_axis_avx512(src, n, static_cast<int>(C), i1 - i0, flip, at.data() + o * n + i0);
                else channel_axis_avx2(src, n, static_cast<int>(C), i1 - i0, flip, at.data() + o * n + i0);
            };
            const std::size_t items = static_cast<std::size_t>(outer) * blocks;
            if (pool) pool->parallel_for(items, body);
            else
                for (std::size_t i = 0; i < items; ++i) body(i);
            write_out(out, labels, isa, pool);
            return;
        }
#endif
        std::vector<std::uint8_t> best(n);
        for (std::int64_t o = 0; o < outer; ++o) {
            std::uint8_t* ao = at.data() + static_cast<std::size_t>(o) * n;
            for (std::int64_t ch = 0; ch < C; ++ch) {
                const std::uint8_t* p = in.u8() + static_cast<std::size_t>(o * C + ch) * n;
                const auto chb = static_cast<std::uint8_t>(ch);
                std::uint8_t* b = best.data();
                if (ch == 0) {
                    for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(p[i] ^ flip);
                    std::fill(ao, ao + n, std::uint8_t{0});
                    continue;
                }
                for (std::size_t i = 0; i < n; ++i) {
                    const auto v = static_cast<std::uint8_t>(p[i] ^ flip);
                    const bool take = Minimum ? v < b[i] : v > b[i];
                    b[i] = take ? v : b[i];
                    ao[i] = take ? chb : ao[i];
                }
            }
        }
        write_out(out, labels, isa_kind::scalar);
    }

#if VNNX_SIM_X86
    // n pixels of channel planes `stride` apart: the index of the first extreme per pixel,
    // 64 pixels per step (the same strict comparison in channel order as the loops above).
    VNNX_TARGET_AVX512 static void channel_axis_avx512(const std::uint8_t* p, std::size_t stride, int channels,
                                                       std::size_t n, std::uint8_t flip, std::uint8_t* at) {
        const __m512i f = _mm512_set1_epi8(static_cast<char>(flip));
        for (std::size_t i = 0; i < n; i += 64) {
            const std::size_t left = n - i;
            const __mmask64 m = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
            __m512i best = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p + i), f);
            __m512i idx = _mm512_setzero_si512();
            for (int ch = 1; ch < channels; ++ch) {
                const __m512i v = _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, p + static_cast<std::size_t>(ch) * stride + i), f);
                const __mmask64 take = Minimum ? _mm512_cmplt_epu8_mask(v, best) : _mm512_cmpgt_epu8_mask(v, best);
                best = _mm512_mask_mov_epi8(best, take, v);
                idx = _mm512_mask_mov_epi8(idx, take, _mm512_set1_epi8(static_cast<char>(ch)));
            }
            _mm512_mask_storeu_epi8(at + i, m, idx);
        }
    }
#endif

#if VNNX_SIM_X86
    // channel_axis_avx512 in 32-byte vectors: AVX2 has no unsigned byte compare, so v > best is
    // max(v, best) != best (min for the minimum); the last n % 32 pixels one at a time.
    VNNX_TARGET_AVX2 static void channel_axis_avx2(const std::uint8_t* p, std::size_t stride, int channels,
                                                   std::size_t n, std::uint8_t flip, std::uint8_t* at) {
        const __m256i f = _mm256_set1_epi8(static_cast<char>(flip));
        std::size_t i = 0;
        for (; i + 32 <= n; i += 32) {
            __m256i best = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)), f);
            __m256i idx = _mm256_setzero_si256();
            for (int ch = 1; ch < channels; ++ch) {
                const __m256i v = _mm256_xor_si256(
                    _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + static_cast<std::size_t>(ch) * stride + i)), f);
                const __m256i next = Minimum ? _mm256_min_epu8(v, best) : _mm256_max_epu8(v, best);
                // take = next != best: all ones where not equal.
                const __m256i keep = _mm256_cmpeq_epi8(next, best);
                idx = _mm256_blendv_epi8(_mm256_set1_epi8(static_cast<char>(ch)), idx, keep);
                best = next;
            }
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(at + i), idx);
        }
        for (; i < n; ++i) {
            std::uint8_t best = static_cast<std::uint8_t>(p[i] ^ flip), k = 0;
            for (int ch = 1; ch < channels; ++ch) {
                const auto v = static_cast<std::uint8_t>(p[static_cast<std::size_t>(ch) * stride + i] ^ flip);
                if (Minimum ? v < best : v > best) {
                    best = v;
                    k = static_cast<std::uint8_t>(ch);
                }
            }
            at[i] = k;
        }
    }

    // dst[i] = src[i] as little-endian int32 for i < n (x86 is little-endian), 8 per step.
    VNNX_TARGET_AVX2 static void widen_avx2(const std::uint8_t* src, std::size_t n, std::byte* dst) {
        std::size_t i = 0;
        for (; i + 8 <= n; i += 8) {
            std::uint64_t eight;
            std::memcpy(&eight, src + i, 8);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 4 * i),
                                _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(eight))));
        }
        for (; i < n; ++i) store_le<std::int32_t>(dst + 4 * i, src[i]);
    }

    // dst[w] = src[w * stride] as int32 for w < n: 16 indices per gather of 4-byte words (their
    // low byte kept), little-endian stores.
    VNNX_TARGET_AVX512 static void gather_row_avx512(const std::uint8_t* src, std::size_t stride, std::size_t n,
                                                     std::byte* dst) {
        const __m512i step = _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                                                _mm512_set1_epi32(static_cast<int>(stride)));
        const __m512i low = _mm512_set1_epi32(0xFF);
        for (std::size_t w = 0; w < n; w += 16) {
            const std::size_t left = n - w;
            const __mmask16 m = left >= 16 ? __mmask16(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
            const __m512i v = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, step, src + w * stride, 1);
            _mm512_mask_storeu_epi32(dst + 4 * w, m, _mm512_and_si512(v, low));
        }
    }
#endif

    // The per-pixel indices to the int32 output. On AVX-512 (`at` then has 64 readable bytes
    // past its end) the transposes gather each output row's indices, 16 per step, runs of rows
    // over the pool. One output channel (a label map) is no transpose at all: a widening copy.
    static void write_out(const tensor_ref& out, std::span<const std::uint8_t> at, isa_kind isa,
                          thread_pool* pool = nullptr) {
        if (out.rank() < 3) {
            for (std::size_t k = 0; k < at.size(); ++k) out.set(k, at[k]);
            return;
        }
        // cf_position: element k = ((lead * H + h) * W + w) * C + c goes to ((lead * C + c) * H + h)
        // * W + w, a transpose of each (lead, h) slice; done in 16 x 16 blocks so the int32 stores
        // of a block share cache lines.
        const std::size_t oc = static_cast<std::size_t>(out.channels()), oh = static_cast<std::size_t>(out.rows()),
                          ow = static_cast<std::size_t>(out.cols());
        const std::size_t leads = at.size() / (oc * oh * ow);
#if VNNX_SIM_X86
        if (isa == isa_kind::avx2 && oc == 1) {
            constexpr std::size_t chunk = 16384;
            const std::size_t chunks = (at.size() + chunk - 1) / chunk;
            auto body = [&](std::size_t i) {
                const std::size_t k0 = i * chunk;
                widen_avx2(at.data() + k0, std::min(chunk, at.size() - k0), out.data + 4 * k0);
            };
            if (pool) pool->parallel_for(chunks, body);
            else
                for (std::size_t i = 0; i < chunks; ++i) body(i);
            return;
        }
        if (uses_avx512(isa) && ow * oc < (std::size_t{1} << 31)) {
            // Items are runs of 16 output rows (c) of one (lead, h) slice.
            const std::size_t runs = (oc + 15) / 16, slices = leads * oh;
            auto body = [&](std::size_t item) {
                const std::size_t slice = item / runs, c0 = item % runs * 16, lead = slice / oh, h = slice % oh;
                const std::uint8_t* src = at.data() + slice * ow * oc;
                for (std::size_t c = c0; c < std::min(oc, c0 + 16); ++c)
                    gather_row_avx512(src + c, oc, ow, out.data + 4 * (((lead * oc + c) * oh + h) * ow));
            };
            if (pool) pool->parallel_for(slices * runs, body);
            else
                for (std::size_t i = 0; i < slices * runs; ++i) body(i);
            return;
        }
#endif
        for (std::size_t lead = 0; lead < leads; ++lead)
            for (std::size_t h = 0; h < oh; ++h) {
                const std::uint8_t* src = at.data() + (lead * oh + h) * ow * oc;
                for (std::size_t w0 = 0; w0 < ow; w0 += 16)
                    for (std::size_t c0 = 0; c0 < oc; c0 += 16)
                        for (std::size_t c = c0; c < std::min(oc, c0 + 16); ++c) {
                            std::byte* dst = out.data + 4 * (((lead * oc + c) * oh + h) * ow);
                            for (std::size_t w = w0; w < std::min(ow, w0 + 16); ++w)
                                store_le<std::int32_t>(dst + 4 * w, src[w * oc + c]);
                        }
            }
    }
};

template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::ARG_MAX)> : argmax_exec<false> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::ARG_MIN)> : argmax_exec<true> {};

}  // namespace vnnx::sim
