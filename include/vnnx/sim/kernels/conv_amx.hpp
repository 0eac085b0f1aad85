#pragma once
// groups = 1 on the AMX-INT8 tile unit: the tile configuration, the block of 16 output channels
// by 32 pixels, and its requantization.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/kernels/conv_vnni.hpp"
#include "vnnx/sim/kernels/requant.hpp"

namespace vnnx::sim::kernels::detail {

// AMX (amx_block below): the LDTILECFG operand, palette 1.
struct alignas(64) amx_config {
    std::uint8_t palette = 1, start_row = 0;
    std::uint8_t reserved[14] = {};
    std::uint16_t colsb[16] = {};
    std::uint8_t rows[16] = {};
};

[[nodiscard]] inline amx_config make_amx_config(int chunk) {
    amx_config c;
    // 0-1: sums (16 x 16 int32); 2 and 5: weights (16 x 4*chunk); 3-4, 6-7: inputs (chunk x 64).
    for (int t = 0; t < 8; ++t) {
        const bool weights = t == 2 || t == 5, inputs = t >= 2 && !weights;
        c.rows[t] = static_cast<std::uint8_t>(inputs ? chunk : 16);
        c.colsb[t] = static_cast<std::uint16_t>(weights ? 4 * chunk : 64);
    }
    return c;
}

// 64 bytes on a 64-byte boundary: the AMX weights are kept in these (std::vector aligns them).
struct alignas(64) cache_line {
    std::int8_t b[64];
};

// Fewer channel groups than this stay on VNNI: a tile product costs the same for any depth,
// and shallow ones are cheaper as vpdpbusd.
inline constexpr int amx_min_groups = 8;

#if VNNX_SIM_X86
// ---- groups = 1 on AMX-INT8 ----------------------------------------------------------------
// The tile unit multiplies A (16 rows x up to 64 bytes) by B (up to 16 rows of 64 bytes, four
// bytes per column) into C (16 x 16 int32): C[m][n] += sum_j A[m][4i+j] * B[i][4n+j]. With A =
// weights (row m an output channel, 4i+j channel j of group i) and B = the packed input (row i
// the channel group i, four channels of pixel n), the existing phase planes are B as they lie,
// every tap a shift of B's base, and C comes out channels-first. TDPBSUD takes A signed and B
// unsigned: the input is biased as on the VNNI path and the same corrections apply.
// A block is 16 output channels x 32 pixels (two C tiles), the reduction in steps of one tap
// and `chunk` channel groups.

// One block's sums (from zero) into acc[16][32]. `w` holds the block's weights as
// [tap][chunk][16 channels][4*chunk bytes]; step (t, c) reads input groups c*chunk ..
// c*chunk+chunk-1 at pixel offset taps[t]. Tile registers are not renamed: a load into a
// register waits for the products reading it, so the steps alternate between two register
// sets and each step's loads run while the previous step multiplies. The caller has loaded
// the configuration. `prefetch`: also fetch the next pixel tile's rows (128 bytes on).
VNNX_TARGET_AMX inline void amx_block(const std::uint8_t* x, std::size_t cstride, const std::int64_t* taps, int ntaps,
                                      int nchunks, int chunk, const std::int8_t* w, std::int32_t* acc,
                                      bool prefetch) {
    const auto wrow = static_cast<std::size_t>(4 * chunk);
    const std::size_t chunk_bytes = static_cast<std::size_t>(chunk) * cstride, a_bytes = 16 * wrow;
    const int steps = ntaps * nchunks;
    int t = 0, c = 0;
    const std::uint8_t* xb = x + taps[0] * 4;
    auto next = [&]() {  // the input of the step after (t, c)
        if (++c < nchunks) {
            xb += chunk_bytes;
        } else if (++t < ntaps) {
            c = 0;
            xb = x + taps[t] * 4;
        }
    };
    auto fetch_next_tile = [&]() {
        if (prefetch)
            for (int r = 0; r < chunk; ++r) {
                _mm_prefetch(reinterpret_cast<const char*>(xb + 128 + r * cstride), _MM_HINT_T0);
                _mm_prefetch(reinterpret_cast<const char*>(xb + 192 + r * cstride), _MM_HINT_T0);
            }
    };
    _tile_zero(0);
    _tile_zero(1);
    _tile_loadd(2, w, wrow);
    _tile_loadd(3, xb, cstride);
    _tile_loadd(4, xb + 64, cstride);
    for (int s = 0; s < steps; s += 2) {
        fetch_next_tile();
        if (s + 1 < steps) {
            next();
            _tile_loadd(5, w + (s + 1) * a_bytes, wrow);
            _tile_loadd(6, xb, cstride);
            _tile_loadd(7, xb + 64, cstride);
        }
        _tile_dpbsud(0, 2, 3);
        _tile_dpbsud(1, 2, 4);
        if (s + 1 < steps) {
            fetch_next_tile();
            if (s + 2 < steps) {
                next();
                _tile_loadd(2, w + (s + 2) * a_bytes, wrow);
                _tile_loadd(3, xb, cstride);
                _tile_loadd(4, xb + 64, cstride);
            }
            _tile_dpbsud(0, 5, 6);
            _tile_dpbsud(1, 5, 7);
        }
    }
    constexpr std::size_t row_bytes = 32 * sizeof(std::int32_t);
    _tile_stored(0, acc, row_bytes);
    _tile_stored(1, acc + 16, row_bytes);
}

// 16 pixels' bytes; Tail: only the lanes in `put`.
template <bool Tail>
VNNX_TARGET_AVX512 inline void amx_store16(std::uint8_t* o, __mmask16 put, __m512i x) {
    if constexpr (Tail) _mm_mask_storeu_epi8(o, put, _mm512_cvtepi32_epi8(x));
    else _mm_storeu_si128(reinterpret_cast<__m128i*>(o), _mm512_cvtepi32_epi8(x));
}

// Rows r < `rows` of a block's sums acc[16][32] (first `nv` vectors of 16 pixels) requantized to
// out + r * pitch, channel r by rq[r] in its own form. The 32-bit forms (nearly every channel)
// read their constants as broadcasts from memory: building a requant_vec per row of two
// vectors cost as much as the two requantizations. Fill: as in vnni_tile_requant. Tail: only
// the first `lanes` pixels are stored (a grid's last tile, written in place through masks).
template <bool Fill = false, bool Tail = false>
VNNX_TARGET_AVX512 inline void amx_requant(const std::int32_t* acc, const channel_requant* rq, int rows, int nv,
                                           int act_min, int act_max, std::uint8_t* out, std::size_t pitch,
                                           const __mmask16* gaps = nullptr, std::uint8_t fill = 0, int lanes = 32) {
    const __m512i pad = _mm512_set1_epi32(fill);
    __mmask16 keep[2] = {0xFFFF, 0xFFFF};
    if constexpr (Fill) keep[0] = static_cast<__mmask16>(~gaps[0]), keep[1] = static_cast<__mmask16>(~gaps[1]);
    __mmask16 put[2] = {0xFFFF, 0xFFFF};
    if constexpr (Tail)
        for (int v = 0; v < 2; ++v) {
            const int n = std::clamp(lanes - 16 * v, 0, 16);
            put[v] = static_cast<__mmask16>((1u << n) - 1);
        }

    for (int r = 0; r < rows; ++r) {
        const channel_requant& k = rq[r];
        const std::int32_t* a = acc + r * 32;
        std::uint8_t* o = out + r * pitch;
        if (k.form >= 2) {
            const __m512i corr = _mm512_set1_epi32(k.corr), lo = _mm512_set1_epi32(k.lo),
                          hi = _mm512_set1_epi32(k.hi), om = _mm512_set1_epi32(k.om),
                          c = _mm512_set1_epi32(k.c32);
            const __m128i shift = _mm_cvtsi32_si128(k.o);
            for (int v = 0; v < nv; ++v) {
                __m512i x = _mm512_add_epi32(_mm512_loadu_si512(a + 16 * v), corr);
                x = _mm512_min_epi32(_mm512_max_epi32(x, lo), hi);
                x = _mm512_add_epi32(_mm512_mullo_epi32(x, om), c);
                // Fill: the gap lanes take the pad through the last operation's merge mask.
                if (k.form == 3) x = _mm512_mask_srl_epi32(pad, keep[v], x, shift);
                else x = _mm512_mask_sra_epi32(pad, keep[v], x, shift);
                amx_store16<Tail>(o + 16 * v, put[v], x);
            }
            continue;
        }
        const requant_vec q = make_requant_vec(static_cast<std::uint16_t>(k.om), k.c, k.o, act_min, act_max,
                                               acc_range{k.lo, k.hi, k.form == 1, false, false});
        const __m512i corr = _mm512_set1_epi32(k.corr);
        for (int v = 0; v < nv; ++v) {
            const __m512i x = _mm512_add_epi32(_mm512_loadu_si512(a + 16 * v), corr);
            __m512i y = k.form == 1 ? requant16<true>(x, q) : requant16<false>(x, q);
            if constexpr (Fill) y = _mm512_mask_mov_epi32(pad, keep[v], y);
            amx_store16<Tail>(o + 16 * v, put[v], y);
        }
    }
}
#endif

}  // namespace vnnx::sim::kernels::detail
