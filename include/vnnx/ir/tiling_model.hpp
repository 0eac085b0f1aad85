#pragma once
// The tiler's model of a node (lowering.md §10.2, §10.4.1, §10.5; SDK vnnx_allocation.py
// min_output_tile, max_output_tile, max_sp_tile, adjust_tile, get_output_shapes, valid_fia).
// Plain structs: the compiler maps its nodes onto them. Std-only.
#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "vnnx/ir/preset.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::compiler {

// A tile in the node's input coordinates (§10.2). For convs maps = output maps per tile and
// imaps = input channels per tile; for native FC icols = accumulation columns, cols = outputs.
struct tile {
    long long batch = 1, imaps = 1, irows = 1, icols = 1, maps = 1, rows = 1, cols = 1;
    friend bool operator==(const tile&, const tile&) = default;
};

enum class op_kind {
    conv,             // CONV_2D with the FIA (ordinary or depthwise); node only
    fully_connected,  // native FULLY_CONNECTED with the FIA; node only
    identity,         // IDENTITY / CONCATENATION node: al(size * input bytes)
    copy,             // RESHAPE, SLICE, STRIDED_SLICE (stride 1), MAX_POOL-free movers: al(size), no temp
    cast,             // CAST: al(size)
    lut,              // LUT (303) and table activations: al(size * output bytes), table preloaded
    eltwise,          // ELTWISE (301) with two activation inputs
    relu,             // RELU, RELU_N1_TO_1, RELU_0_TO_1, LEAKY_RELU, ABS
    relu6,            // RELU6
    max_pool,         // MAX_POOL_2D, VALID
    average_pool,     // AVERAGE_POOL_2D, VALID; needs full columns
    pad,              // PAD / PADV2 without dilation
    softmax,          // SOFTMAX on one axis, which must be whole
    mean_sum,         // MEAN, SUM
    reduce_max_min,   // REDUCE_MAX, REDUCE_MIN
    resize_nearest,   // RESIZE_NEAREST_NEIGHBOR by integer factors
    split,            // SPLIT / SPLIT_V node, TRANSPOSE with the identity permutation: al(size) + al(size)
};

// Temporary of an ELTWISE subnode (§10.5): optimized 1 (int16 path), optimized 2-4, MIN/MAX, general.
enum class eltwise_mode { optimized1, optimized, min_max, general };

struct conv_params {
    int kernels = 1;   // K (depthwise: C)
    int channels = 1;  // C
    int kh = 1, kw = 1;  // depthwise with dh > 1: tile_node_for tiles the re-materialised kh' (§7.1.1)
    int sh = 1, sw = 1, dh = 1, dw = 1;
    bool depthwise = false;
    // use_strided = 1 iff stride_w != 1 and not depthwise (§7.1.1)
    [[nodiscard]] bool strided() const { return sw != 1 && !depthwise; }
    [[nodiscard]] int dkh() const { return (kh - 1) * dh + 1; }
    [[nodiscard]] int dkw() const { return (kw - 1) * dw + 1; }
};

struct layer {
    op_kind kind = op_kind::identity;
    // This op's input extents (channels-first: channels, rows, cols); full-extent rules compare to them.
    int channels = 1, m = 1, n = 1;
    int in_bytes = 1, out_bytes = 1;  // element sizes of input / output type
    conv_params conv{};
    int fc_outputs = 1, fc_accum = 1;  // native FC: O, A
    int pool_kh = 1, pool_kw = 1, pool_sh = 1, pool_sw = 1;
    std::array<int, 6> pads{};  // PAD: channels before, top, left, channels after, bottom, right
    int softmax_axis = -3;      // -3 maps, -2 rows, -1 cols
    bool reduce_maps = false, reduce_rows = false, reduce_cols = false;
    int resize_h = 1, resize_w = 1;
    eltwise_mode eltwise = eltwise_mode::general;
};

// A node for tiling: its first op, its subnode chain, its geometry (§2.1 / §7.10.2).
struct tile_node {
    layer op;
    std::vector<layer> subnodes;
    bool strided_output = false;  // output_strides != [1, 1]
};

namespace tiling_detail {
// Python's floor division (the SDK's formulas rely on it for negative numerators).
[[nodiscard]] constexpr long long fdiv(long long a, long long b) {
    const long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
[[nodiscard]] constexpr long long cdiv(long long a, long long b) { return (a + b - 1) / b; }
[[nodiscard]] inline long long size_of(const tile& t) { return t.batch * t.maps * t.rows * t.cols; }
}  // namespace tiling_detail

// FIA output and shaper grids for an input tile of rows x cols (§10.4.1; padding is 0).
struct conv_grid {
    long long oh, ow, osh, osw;
};
[[nodiscard]] inline conv_grid conv_output_shapes(const conv_params& c, long long rows, long long cols) {
    using tiling_detail::fdiv;
    conv_grid g{};
    g.oh = fdiv(rows - c.dkh(), c.sh) + 1;
    g.ow = fdiv(cols - c.dkw(), c.sw) + 1;
    if (c.depthwise) {
        g.osh = rows - c.dkh() + 1;
        g.oh = fdiv(g.osh - 1, c.sh) + 1;
        g.osw = g.ow = cols - c.dkw() + 1;
    } else if (!c.strided()) {
        g.osh = rows - c.dkh() + 1;
        g.osw = std::max<long long>(cols, c.dkw());
    } else {
        g.osh = tiling_detail::cdiv(rows, c.sh);
        g.osw = tiling_detail::cdiv(cols, c.sw);
    }
    return g;
}

// min-output (§10.2): the output extent an input tile produces; an entry < 1 marks the tile invalid.
[[nodiscard]] inline tile min_output(const layer& L, tile t) {
    using tiling_detail::fdiv;
    switch (L.kind) {
        case op_kind::conv:
            t.rows = fdiv(t.rows - L.conv.dkh(), L.conv.sh) + 1;
            t.cols = fdiv(t.cols - L.conv.dkw(), L.conv.sw) + 1;
            return t;
        case op_kind::fully_connected:
            t.cols = t.irows;  // the SDK's rule: only irows matters
            return t;
        case op_kind::max_pool:
            t.rows = fdiv(t.rows - L.pool_kh, L.pool_sh) + 1;
            t.cols = fdiv(t.cols - L.pool_kw, L.pool_sw) + 1;
            return t;
        case op_kind::average_pool: {
            const long long r = fdiv(t.rows - L.pool_kh, L.pool_sh) + 1;
            if (t.cols != L.n) {
                t.rows = r;
                t.cols = 0;
                return t;
            }
            t.rows = r;
            t.cols = fdiv(t.cols - L.pool_kw, L.pool_sw) + 1;
            return t;
        }
        case op_kind::pad:
            t.maps += L.pads[0] + L.pads[3];
            t.rows += L.pads[1] + L.pads[4];
            t.cols += L.pads[2] + L.pads[5];
            return t;
        case op_kind::softmax:
            if (L.softmax_axis == -3 && t.maps != L.channels) t.maps = 0;
            if (L.softmax_axis == -2 && t.rows != L.m) t.rows = 0;
            if (L.softmax_axis == -1 && t.cols != L.n) t.cols = 0;
            return t;
        case op_kind::mean_sum:
        case op_kind::reduce_max_min: {
            tile o = t;
            if (L.reduce_cols) o.cols = t.cols == L.n ? 1 : 0;
            if (L.reduce_rows) o.rows = t.rows == L.m ? 1 : 0;
            if (L.reduce_maps) o.maps = t.maps == L.channels ? 1 : 0;
            return o;
        }
        case op_kind::resize_nearest:
            t.rows *= L.resize_h;
            t.cols *= L.resize_w;
            return t;
        default:
            return t;
    }
}

// max-output (§10.2): the tile handed to the next subnode (FIA convs: the shaper grid).
[[nodiscard]] inline tile max_output(const layer& L, tile t) {
    if (L.kind == op_kind::conv) {
        const auto g = conv_output_shapes(L.conv, t.rows, t.cols);
        t.rows = g.osh;
        t.cols = g.osw;
        return t;
    }
    return min_output(L, t);
}

// Scratchpad (v_out, v_tmp) in bytes for the tile an op receives (§10.5).
[[nodiscard]] inline std::pair<long long, long long> scratchpad(const layer& L, const tile& t, const preset_info& p) {
    const auto al = [&](long long b) { return p.align(b); };
    const long long size = tiling_detail::size_of(t);
    switch (L.kind) {
        case op_kind::conv: {
            const auto g = conv_output_shapes(L.conv, t.rows, t.cols);
            const long long out = t.batch * t.maps * g.osh * g.osw;
            // depthwise writes past the shaper grid by P rows of osw
            return {L.conv.depthwise ? al(out + p.parallel_output_maps * g.osw) : al(out), 0};
        }
        case op_kind::fully_connected: return {al(t.batch * t.maps * t.icols * t.cols * t.rows), 0};
        case op_kind::identity: return {al(size * L.in_bytes), 0};
        case op_kind::lut: return {al(size * L.out_bytes), 0};
        case op_kind::copy:
        case op_kind::cast:
        case op_kind::max_pool: return {al(size), 0};
        case op_kind::eltwise: {
            long long tmp = 0;
            switch (L.eltwise) {
                case eltwise_mode::optimized1: tmp = 2 * al(2 * size); break;
                case eltwise_mode::optimized: tmp = al(2 * size); break;
                case eltwise_mode::min_max: tmp = al(size); break;
                case eltwise_mode::general: tmp = 2 * al(4 * size); break;
            }
            return {al(size), tmp + al(size)};  // plus the second input
        }
        case op_kind::relu: return {al(size), 2 * al(4 * size)};
        case op_kind::relu6: return {al(size), al(2 * size)};
        case op_kind::average_pool: {
            const long long oh = tiling_detail::fdiv(t.rows - L.pool_kh, L.pool_sh) + 1;
            const long long ow = tiling_detail::fdiv(t.cols - L.pool_kw, L.pool_sw) + 1;
            const long long ow1 = t.cols - L.pool_kw + 1;
            return {al(t.batch * t.maps * oh * ow), al(2 * t.batch * t.maps * oh * ow) + al(2 * t.batch * t.maps * oh * ow1)};
        }
        case op_kind::pad:
            return {al(t.batch * (t.maps + L.pads[0] + L.pads[3]) * (t.rows + L.pads[1] + L.pads[4]) *
                       (t.cols + L.pads[2] + L.pads[5])),
                    0};
        case op_kind::softmax: {
            const long long inner = L.softmax_axis == -3 ? t.rows * t.cols : L.softmax_axis == -2 ? t.cols : 1;
            const long long depth = L.softmax_axis == -3 ? L.channels : L.softmax_axis == -2 ? L.m : L.n;
            return {al(size), al(4 * inner * depth) + 3 * al(4 * inner)};
        }
        case op_kind::mean_sum: {
            const long long omaps = L.reduce_maps ? 1 : t.maps;
            return {al(omaps), al(4 * omaps)};
        }
        case op_kind::reduce_max_min: return {al(t.maps), 0};
        case op_kind::resize_nearest:
            if (L.resize_h == 2 && L.resize_w == 2) return {al(4 * size), 0};
            if (L.resize_h == 4 && L.resize_w == 4) return {al(16 * size), 0};
            return {al(size * L.resize_h * L.resize_w), al(t.rows * L.resize_w * t.cols)};
        case op_kind::split: return {al(size), al(size)};
    }
    return {al(size), 0};
}

// One axis window [start, start+len) of an axis of length S mapped through an op (§10.6).
struct window {
    long long start, len, extent;
};
enum class axis { rows, cols };
[[nodiscard]] inline window map_window(const layer& L, axis a, window w) {
    using tiling_detail::fdiv;
    const bool r = a == axis::rows;
    switch (L.kind) {
        case op_kind::conv: {
            const long long k = r ? L.conv.dkh() : L.conv.dkw();
            const long long s = r ? L.conv.sh : L.conv.sw;
            return {fdiv(w.start, s), fdiv(w.len - k, s) + 1, fdiv(w.extent - k, s) + 1};
        }
        case op_kind::max_pool:
        case op_kind::average_pool: {
            const long long k = r ? L.pool_kh : L.pool_kw;
            const long long s = r ? L.pool_sh : L.pool_sw;
            return {fdiv(w.start, s), fdiv(w.len - k, s) + 1, fdiv(w.extent - k, s) + 1};
        }
        case op_kind::pad: {
            const long long before = r ? L.pads[1] : L.pads[2];
            const long long after = r ? L.pads[4] : L.pads[5];
            const long long len = w.len + (w.start == 0 ? before : 0) + (w.start + w.len >= w.extent ? after : 0);
            return {w.start == 0 ? 0 : w.start + before, len, w.extent + before + after};
        }
        case op_kind::mean_sum:
        case op_kind::reduce_max_min:
            if (r ? L.reduce_rows : L.reduce_cols) return {0, 1, 1};
            return w;
        case op_kind::resize_nearest: {
            const long long f = r ? L.resize_h : L.resize_w;
            return {w.start * f, w.len * f, w.extent * f};
        }
        default: return w;  // element-wise and FC (columns are outputs on both sides)
    }
}

// Validation of a described node: clear errors instead of nonsense tiles.
inline void check_layer(const layer& L, bool is_first, const std::string& where) {
    const auto bad = [&](const std::string& rule) { fail(error_kind::bad_input, "tiling: " + where + ": " + rule); };
    if (L.channels < 1 || L.m < 1 || L.n < 1) bad("input extents (channels, m, n) must be >= 1");
    if (L.in_bytes < 1 || L.out_bytes < 1) bad("element sizes must be >= 1");
    if ((L.kind == op_kind::conv || L.kind == op_kind::fully_connected) && !is_first)
        bad("a FIA convolution or fully connected op can only be the node's first op");
    if (L.kind == op_kind::conv) {
        const auto& c = L.conv;
        if (c.kernels < 1 || c.channels < 1 || c.kh < 1 || c.kw < 1 || c.sh < 1 || c.sw < 1 || c.dh < 1 || c.dw < 1)
            bad("conv kernels, channels, kernel, stride and dilation must be >= 1");
        if (c.channels != L.channels) bad("conv channels must equal the node's input channels");
        if (c.depthwise && c.kernels != c.channels) bad("depthwise conv must have kernels == channels");
        if (c.depthwise && c.sw != 1) bad("depthwise conv with stride_w > 1 is rewritten before lowering");
    }
    if (L.kind == op_kind::fully_connected && (L.fc_outputs < 1 || L.fc_accum < 1))
        bad("fully connected outputs and accumulation depth must be >= 1");
    if ((L.kind == op_kind::max_pool || L.kind == op_kind::average_pool) &&
        (L.pool_kh < 1 || L.pool_kw < 1 || L.pool_sh < 1 || L.pool_sw < 1))
        bad("pool kernel and strides must be >= 1");
    if (L.kind == op_kind::pad && std::any_of(L.pads.begin(), L.pads.end(), [](int v) { return v < 0; }))
        bad("pads must be >= 0");
    if (L.kind == op_kind::softmax && (L.softmax_axis < -3 || L.softmax_axis > -1)) bad("softmax axis must be -3, -2 or -1");
    if (L.kind == op_kind::resize_nearest && (L.resize_h < 1 || L.resize_w < 1))
        bad("nearest resize factors must be integers >= 1");
}

}  // namespace vnnx::compiler
