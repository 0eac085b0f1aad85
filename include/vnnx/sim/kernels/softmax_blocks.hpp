#pragma once
// The SOFTMAX layer over many short vectors lying side by side (YOLO's DFL: 16 bins for each of
// 33600 box sides, the bins `inner` elements apart). Blocks of up to 64 neighbouring vectors are
// done together, so every loop runs along contiguous memory and the compiler vectorises the max,
// the table lookups, the sums and the rounding across the block. One body, compiled once per
// ISA tag through the target attribute of its caller; the arithmetic is the scalar layer's:
// e = E[x - max + 127], y = round_half_up(e · k / Σe) + z, clamped.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"

namespace vnnx::sim::kernels {

struct softmax_params {
    const std::uint32_t* table;  // 256 entries, indexed by the int8 code's byte
    double k;                    // 2^16 · the output multiplier; below 2^30 (int32 rounding)
    std::int32_t zo, lo, hi;     // output zero point and clamp range
    std::int64_t n, inner, outer;
};

namespace detail {

inline constexpr std::int64_t softmax_block = 64;

// Vectors [b0, b0 + w) of row a; eb holds n · 64 exponentials. False when a sum is zero.
template <class X, class Y>
[[gnu::always_inline]] inline bool softmax_one_block(const softmax_params& p, const X* x, Y* y, std::int64_t a,
                                                     std::int64_t b0, std::uint32_t* eb) {
    constexpr std::int64_t B = softmax_block;
    const std::int64_t w = std::min(B, p.inner - b0), base = a * p.n * p.inner + b0;
    std::int32_t mx[B];
    std::uint64_t sum[B];
    double scale[B];
    for (std::int64_t b = 0; b < w; ++b) {
        mx[b] = INT32_MIN;
        sum[b] = 0;
    }
    for (std::int64_t j = 0; j < p.n; ++j) {
        const X* xj = x + base + j * p.inner;
        for (std::int64_t b = 0; b < w; ++b) mx[b] = std::max<std::int32_t>(mx[b], xj[b]);
    }
    for (std::int64_t j = 0; j < p.n; ++j) {
        const X* xj = x + base + j * p.inner;
        std::uint32_t* ej = eb + j * B;
        for (std::int64_t b = 0; b < w; ++b) {
            ej[b] = p.table[static_cast<std::uint8_t>(xj[b] - mx[b] + 127)];
            sum[b] += ej[b];
        }
    }
    bool ok = true;
    for (std::int64_t b = 0; b < w; ++b) {
        ok = ok && sum[b] != 0;
        scale[b] = p.k / static_cast<double>(sum[b] + (sum[b] == 0));
    }
    for (std::int64_t j = 0; j < p.n; ++j) {
        Y* yj = y + base + j * p.inner;
        const std::uint32_t* ej = eb + j * B;
        for (std::int64_t b = 0; b < w; ++b) {
            // Half up for q >= 0; q < 2^31, so the int32 truncation is exact.
            const double q = static_cast<double>(ej[b]) * scale[b];
            const auto r = static_cast<std::int32_t>(q);
            const std::int32_t v = r + static_cast<std::int32_t>(q - static_cast<double>(r) >= 0.5) + p.zo;
            yj[b] = static_cast<Y>(std::clamp(v, p.lo, p.hi));
        }
    }
    return ok;
}

// Blocks [i0, i1) of the outer · ceil(inner / 64) blocks.
template <class X, class Y>
[[gnu::always_inline]] inline bool softmax_block_range(const softmax_params& p, const X* x, Y* y, std::size_t i0,
                                                       std::size_t i1) {
    std::vector<std::uint32_t> eb(static_cast<std::size_t>(p.n * softmax_block));
    const auto per_row = static_cast<std::size_t>((p.inner + softmax_block - 1) / softmax_block);
    bool ok = true;
    for (std::size_t i = i0; i < i1; ++i)
        ok = softmax_one_block(p, x, y, static_cast<std::int64_t>(i / per_row),
                               static_cast<std::int64_t>(i % per_row) * softmax_block, eb.data()) && ok;
    return ok;
}

template <class X, class Y>
inline bool softmax_range(isa::scalar, const softmax_params& p, const X* x, Y* y, std::size_t i0, std::size_t i1) {
    return softmax_block_range(p, x, y, i0, i1);
}
template <class X, class Y>
VNNX_TARGET_AVX2 inline bool softmax_range(isa::avx2, const softmax_params& p, const X* x, Y* y, std::size_t i0,
                                           std::size_t i1) {
    return softmax_block_range(p, x, y, i0, i1);
}
template <class X, class Y>
VNNX_TARGET_AVX512 inline bool softmax_range(isa::avx512_vnni, const softmax_params& p, const X* x, Y* y, std::size_t i0,
                                             std::size_t i1) {
    return softmax_block_range(p, x, y, i0, i1);
}

}  // namespace detail

/// Every vector of the layer; false when some vector's exponentials sum to zero.
template <class Tag, class X, class Y>
inline bool softmax_blocks(Tag tag, const softmax_params& p, const X* x, Y* y, thread_pool* pool) {
    const auto items = static_cast<std::size_t>(p.outer * ((p.inner + detail::softmax_block - 1) / detail::softmax_block));
    const auto elements = static_cast<std::size_t>(p.outer * p.n * p.inner);
    if (pool == nullptr || pool->size() < 2 || elements < (std::size_t{1} << 16) || items < 2)
        return detail::softmax_range(tag, p, x, y, 0, items);
    const std::size_t parts = std::min<std::size_t>(items, 4 * std::size_t{pool->size()});
    std::vector<char> ok(parts, 1);
    pool->parallel_for(parts, [&](std::size_t t) {
        ok[t] = detail::softmax_range(tag, p, x, y, items * t / parts, items * (t + 1) / parts) ? 1 : 0;
    });
    return std::all_of(ok.begin(), ok.end(), [](char v) { return v != 0; });
}

/// The same, the ISA chosen at run time.
template <class X, class Y>
inline bool softmax_blocks(isa_kind k, const softmax_params& p, const X* x, Y* y, thread_pool* pool) {
#if VNNX_SIM_X86
    if (uses_avx512(k)) return softmax_blocks(isa::avx512_vnni{}, p, x, y, pool);
    if (k == isa_kind::avx2) return softmax_blocks(isa::avx2{}, p, x, y, pool);
#else
    (void)k;
#endif
    return softmax_blocks(isa::scalar{}, p, x, y, pool);
}

}  // namespace vnnx::sim::kernels
