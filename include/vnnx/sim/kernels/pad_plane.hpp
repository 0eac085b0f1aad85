#pragma once
// One output plane of a PAD layer: the input plane (h x w bytes, or none for a padded channel)
// placed at (top, left) in an oh x ow plane filled with one byte. The plane is filled in one
// call and the rows copied in; a library call per row cost more than the bytes of YOLO's 20- to
// 40-wide rows, so rows up to 64 bytes are copied inline as two overlapping moves of a fixed
// size (both inside the row). Measured on AVX-512 too: byte-masked loads and stores of a whole
// row at a time were slower on the Zen 4 host than this (BENCHMARKS.md).
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace vnnx::sim::kernels {

struct pad_geometry {
    std::size_t h = 0, w = 0;       // input plane
    std::size_t oh = 0, ow = 0;     // output plane
    std::size_t top = 0, left = 0;  // where the input starts (top + h <= oh, left + w <= ow)
};

namespace pad_detail {

template <std::size_t B>
inline void two_moves(std::uint8_t* d, const std::uint8_t* s, std::size_t w) {
    std::memcpy(d, s, B);
    std::memcpy(d + w - B, s + w - B, B);
}

// The rows of the input plane into the output plane (rows of ow bytes, w bytes each).
template <std::size_t B>
inline void rows(std::uint8_t* d, std::size_t ow, const std::uint8_t* s, std::size_t w, std::size_t h) {
    for (std::size_t y = 0; y < h; ++y) two_moves<B>(d + y * ow, s + y * w, w);
}

}  // namespace pad_detail

/// Writes the whole oh x ow plane at d; s is the h x w input plane or null (all fill).
inline void pad_plane(std::uint8_t* d, const std::uint8_t* s, const pad_geometry& g, std::uint8_t fill) {
    std::memset(d, fill, g.oh * g.ow);
    if (s == nullptr) return;
    std::uint8_t* at = d + g.top * g.ow + g.left;
    if (g.w > 64) {
        for (std::size_t y = 0; y < g.h; ++y) std::memcpy(at + y * g.ow, s + y * g.w, g.w);
    } else if (g.w >= 32) {
        pad_detail::rows<32>(at, g.ow, s, g.w, g.h);
    } else if (g.w >= 16) {
        pad_detail::rows<16>(at, g.ow, s, g.w, g.h);
    } else if (g.w >= 8) {
        pad_detail::rows<8>(at, g.ow, s, g.w, g.h);
    } else if (g.w >= 4) {
        pad_detail::rows<4>(at, g.ow, s, g.w, g.h);
    } else {
        for (std::size_t y = 0; y < g.h; ++y)
            for (std::size_t x = 0; x < g.w; ++x) at[y * g.ow + x] = s[y * g.w + x];
    }
}

}  // namespace vnnx::sim::kernels
