#pragma once
// Where a depthwise kernel's 64-pixel tiles go. The kernels compute a channel's output as a grid
// of rows wp wide: grid pixel q = oy*wp + ox (q < q_total) is output (oy, ox), stored at
// yk[oy*row + ox] when ox < ow and dropped otherwise (the columns a wider grid adds).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vnnx/sim/isa.hpp"

namespace vnnx::sim::kernels {

struct grid_out {
    std::uint8_t* yk;
    std::size_t wp, ow, q_total;
    std::size_t row;  // output row pitch (>= ow)
    // Dense rows (row = ow) with dropped columns, when the run's ISA has VBMI2: per grid column ox,
    // the lanes of a tile starting there whose column is < ow (see kept_lanes).
    const std::uint64_t* kept = nullptr;
};

// grid_out::kept for a grid of rows wp wide keeping ow columns: empty when nothing is dropped or
// the run's ISA does not compress bytes (VBMI2; then tiles are stored a grid row at a time).
inline std::vector<std::uint64_t> kept_lanes(isa_kind isa, std::size_t wp, std::size_t ow) {
    std::vector<std::uint64_t> kept;
#if VNNX_SIM_X86
    if (wp <= ow || !uses_vbmi(isa)) return kept;
    kept.assign(wp, 0);
    for (std::size_t ph = 0; ph < wp; ++ph)
        for (std::size_t l = 0; l < 64; ++l)
            if ((ph + l) % wp < ow) kept[ph] |= std::uint64_t{1} << l;
#else
    (void)isa, (void)wp, (void)ow;
#endif
    return kept;
}

namespace detail {
#if VNNX_SIM_X86
// The kept lanes of a tile (mask m) packed together at `at`: with dense output rows the kept
// grid pixels of a tile are consecutive output pixels. The register form of the compress (a
// store-form compress is slow on some CPUs) and one masked store.
__attribute__((target("avx512f,avx512bw,avx512vbmi2"))) inline void store_compressed(std::uint8_t* at, __m512i v,
                                                                                     std::uint64_t m) {
    const auto n = static_cast<unsigned>(__builtin_popcountll(m));
    const __mmask64 sm = n >= 64 ? ~__mmask64{0} : (__mmask64{1} << n) - 1;
    _mm512_mask_storeu_epi8(at, sm, _mm512_maskz_compress_epi8(m, v));
}

// One masked store per grid row the tile touches (the address is moved back by the lane index;
// masked-off lanes touch no memory).
VNNX_TARGET_AVX512 inline void store_grid_rows(__m512i v, std::size_t q0, std::size_t oy, std::size_t ox,
                                               const grid_out& g) {
    const std::size_t end = std::min(q0 + 64, g.q_total);
    for (std::size_t q = q0; q < end; ++oy, ox = 0) {
        const std::size_t run = std::min(end - q, g.wp - ox);
        if (ox < g.ow) {
            const std::size_t valid = std::min(run, g.ow - ox), lane = q - q0;
            const __mmask64 m = (valid >= 64 ? ~__mmask64{0} : (__mmask64{1} << valid) - 1) << lane;
            const auto at = reinterpret_cast<std::uintptr_t>(g.yk + oy * g.row + ox) - lane;
            _mm512_mask_storeu_epi8(reinterpret_cast<void*>(at), m, v);
        }
        q += run;
    }
}

// The 64 bytes of grid pixels q0.. (grid row oy, column ox): one store when the grid is the
// output, the kept lanes compressed when rows are dense, else a grid row at a time.
VNNX_TARGET_AVX512 inline void store_grid_tile(__m512i v, std::size_t q0, std::size_t oy, std::size_t ox,
                                               const grid_out& g) {
    if (g.wp == g.ow && g.row == g.ow && q0 + 64 <= g.q_total) {
        _mm512_storeu_si512(g.yk + q0, v);
    } else if (g.kept) {
        std::uint64_t m = g.kept[ox];
        if (g.q_total - q0 < 64) m &= (std::uint64_t{1} << (g.q_total - q0)) - 1;
        store_compressed(g.yk + oy * g.ow + std::min(ox, g.ow), v, m);
    } else {
        store_grid_rows(v, q0, oy, ox, g);
    }
}
#endif
}  // namespace detail

}  // namespace vnnx::sim::kernels
