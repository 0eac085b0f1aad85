#pragma once
// The convolution's shape, its checks, where its output goes, and its scratch memory: what a
// caller of conv2d (kernels/conv.hpp) fills in.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vnnx/support/error.hpp"
#include "vnnx/support/huge_pages.hpp"

namespace vnnx::sim::kernels {

struct conv_shape {
    int channels = 1, height = 1, width = 1;  // input C, H, W
    int kernels = 1;                          // K
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int dilation_h = 1, dilation_w = 1;
    int groups = 1;  // 1, or C (= K) for depthwise
    bool input_signed = true;
    bool output_signed = true;
    // Ordinary convolutions at stride 1: when > out_w, the SIMD paths compute rows of this many
    // columns so that output rows written at this row pitch are whole tiles; the columns past
    // out_w land in the gaps between rows, which the caller overwrites (a padded output). No
    // effect on the result or on other pitches.
    int gap_row = 0;

    [[nodiscard]] bool depthwise() const noexcept { return groups != 1; }
    [[nodiscard]] int out_h() const noexcept { return (height - (kernel_h - 1) * dilation_h - 1) / stride_h + 1; }
    [[nodiscard]] int out_w() const noexcept { return (width - (kernel_w - 1) * dilation_w - 1) / stride_w + 1; }
    [[nodiscard]] std::size_t input_size() const noexcept {
        return static_cast<std::size_t>(channels) * height * width;
    }
    [[nodiscard]] std::size_t output_size() const noexcept {
        return static_cast<std::size_t>(kernels) * out_h() * out_w();
    }
    [[nodiscard]] std::size_t weight_size() const noexcept {
        return static_cast<std::size_t>(kernels) * (channels / groups) * kernel_h * kernel_w;
    }
    // Products summed per output.
    [[nodiscard]] std::int64_t reduction() const noexcept {
        return static_cast<std::int64_t>(channels / groups) * kernel_h * kernel_w;
    }
};

// The largest reduction whose int32 accumulator provably cannot overflow: 65536 * 255 * 128 < 2^31.
inline constexpr std::int64_t max_reduction = 65536;

inline void validate_conv_shape(const conv_shape& s, std::string_view what) {
    const std::string w(what);
    auto positive = [&](int v, const char* name, int limit) {
        if (v < 1 || v > limit)
            fail_input(w + ": " + name + " " + std::to_string(v) + " must be in [1, " + std::to_string(limit) + "]");
    };
    positive(s.channels, "channel count", 1 << 20);
    positive(s.height, "input height", 1 << 16);
    positive(s.width, "input width", 1 << 16);
    positive(s.kernels, "kernel count", 1 << 20);
    positive(s.kernel_h, "kernel height", 1 << 12);
    positive(s.kernel_w, "kernel width", 1 << 12);
    positive(s.stride_h, "stride height", 1 << 8);
    positive(s.stride_w, "stride width", 1 << 8);
    positive(s.dilation_h, "dilation height", 1 << 8);
    positive(s.dilation_w, "dilation width", 1 << 8);
    if (s.groups != 1 && !(s.groups == s.channels && s.kernels == s.channels))
        fail(error_kind::unsupported, w + ": groups " + std::to_string(s.groups) +
                                          " is unsupported (only 1, or depthwise with groups = channels = kernels = " +
                                          std::to_string(s.channels) + ")");
    if (static_cast<std::int64_t>(s.kernel_h - 1) * s.dilation_h + 1 > s.height ||
        static_cast<std::int64_t>(s.kernel_w - 1) * s.dilation_w + 1 > s.width)
        fail_input(w + ": the dilated " + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) +
                   " kernel does not fit the unpadded " + std::to_string(s.height) + "x" +
                   std::to_string(s.width) + " input");
    if (s.reduction() > max_reduction)
        fail(error_kind::limit, w + ": " + std::to_string(s.reduction()) +
                                    " products per output exceed the exact int32 accumulator limit of " +
                                    std::to_string(max_reduction));
    if (static_cast<double>(s.channels) * s.height * s.width > 1e9 ||
        static_cast<double>(s.kernels) * s.out_h() * s.out_w() > 1e9 ||
        static_cast<double>(s.weight_size()) > 1e9)
        fail(error_kind::limit, w + ": tensor sizes above 10^9 elements are not supported");
}

// Scratch memory reused across calls (and layers) so the kernels allocate nothing per call once
// the buffers have grown.
// Where output (k, y, x) goes: k*plane + y*row + x. The default (0, 0) is the dense K x OH x OW
// tensor; larger pitches write the rows into a bigger array (e.g. a hardware output grid) and
// leave the bytes between them untouched, unless gap_fill asks for them.
struct conv_output_pitch {
    std::size_t row = 0, plane = 0;
    // 0..255: the gaps between a plane's rows (bytes y*row + ow .. (y+1)*row - 1 for y < oh - 1)
    // are written with this byte too, by the kernels' own stores where they can: a padded
    // output then needs only its first and last runs filled, and its pad bytes are written
    // while their cache lines are at hand. -1: the gaps are left untouched.
    int gap_fill = -1;
    // With gap_fill: also each plane's tail, from its last row to the next plane's start, for
    // the planes that end inside the output (a padded output's bottom and top pad rows), in the
    // same pass over the planes as the gaps.
    bool tails = false;
};

struct conv_workspace {
    // On huge pages when large: a first run faults it in 2 MiB at a time, not 4 KiB.
    std::vector<std::uint8_t, huge_page_allocator<std::uint8_t>> input;
    std::vector<std::uint8_t> extra;  // FC transposes
};

}  // namespace vnnx::sim::kernels
