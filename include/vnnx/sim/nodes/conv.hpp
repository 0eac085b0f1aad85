#pragma once
// CONV_2D (3) on the FIA, read from the record as a firmware would (lowering.md §7.1, §8.2):
// geometry from channels/m/n and Conv2DOptions, weights unpacked from filter_data with the node's
// maps/imaps and the header's preset, per-channel (om, shift, c) from quantization_records,
// bounds from activation_min/max, then nlf_data (a 256-byte table indexed by the raw output byte)
// when present. The output tensor is either the true output or the FIA's grid (§10.4.1) that an
// OUTPUT_SHAPER layer crops:
//   use_strided = 1: grid ceil(m/sh) x ceil(n/sw), output (y, x) at (y, x);
//   otherwise      : one grid row per input row offset and one column per input column, output
//                    (y, x) at (y*sh, x) (depthwise: grid width = true width).
// Grid positions the shaper discards (right-edge columns, rows between strides) hold the output
// zero point: the FIA writes values there that nothing reads.
// A depthwise node whose layers are just a STRIDED_SLICE keeping every second column, after an
// OUTPUT_SHAPER when the output is a grid (the compiler's column-strided depthwise), is run on
// AVX-512 as the equivalent column-stride-2 convolution written straight into the slice's
// output, when the records show that nothing else reads the node's output or the shaper's
// (dead_bytes.hpp): the final bytes are the same, half the columns are computed, and the layers
// are not run.
// Likewise a node whose one layer is a PAD of rows and columns (the padded input of the next
// depthwise) writes its output rows straight into the padded tensor and fills only the border;
// one whose layers are an OUTPUT_SHAPER cropping its grid and such a PAD (a stride-2 stem)
// copies the crop straight from the grid into the padded tensor.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/quant/fia.hpp"
#include "vnnx/sim/dead_bytes.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/kernels/conv.hpp"
#include "vnnx/sim/kernels/eltwise.hpp"
#include "vnnx/sim/kernels/even_bytes.hpp"
#include "vnnx/sim/layers/output_shaper.hpp"
#include "vnnx/sim/weight_unpacking.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/support/huge_pages.hpp"

namespace vnnx::sim {

namespace conv_node_detail {

struct prepared {
    std::unique_ptr<kernels::conv2d> kernel;
    kernels::table8 nlf{};  // the output table when has_nlf
    bool has_nlf = false;
    int oh = 0, ow = 0;             // true output
    int row_step = 1;               // grid row of output row y is y * row_step
    bool grid = false;
    std::unique_ptr<kernels::conv2d> fused;  // column stride 2 into the final output (see above)
    std::size_t fused_layers = 0;             // ... in place of this many layers
    bool slice_from_grid = false;             // without AVX-512: both layers as one gather from the grid
    bool pad_in_place = false;                // the PAD layer done by writing into its output
    std::array<std::int32_t, 6> pads{};       // ... its pads [c, h, w before, c, h, w after]
    std::uint8_t pad_fill = 0;                // ... and its value
};

// Whether node c (prepared as `st`) may write its output straight into the output of its
// PAD layer of rows and columns, and fill only the border. The PAD reads the node's output, or,
// when the output is a grid, the OUTPUT_SHAPER's crop of it, which is the true output (the
// stride-2 stem of MobileNet-like models); the tensors the convolution reads and writes are
// disjoint, and nothing after the node reads its output or the crop (dead_bytes.hpp). Options
// the layers' executors would reject leave the layers to run and reject.
inline bool pad_in_place(const node_context& c, prepared& st) {
    if (!c.ex.fuse_layers || c.layers_done == nullptr || st.has_nlf) return false;
    const auto layers = c.view.node_layers(c.node_index);
    const auto recs = c.view.node_tensors(c.node_index);
    const std::size_t pl = st.grid ? 1 : 0, nl = pl + 1;
    if (layers.size() != nl || layers[pl].type != static_cast<std::int32_t>(builtin_operator::PAD) ||
        c.layer_tensors.size() != 2 * nl || recs.size() != 2 + 2 * nl)
        return false;
    for (const auto& l : layers)
        if (l.num_tensors != 2) return false;
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    const tensor_ref& pin = c.layer_tensors[2 * pl];
    const tensor_ref& fin = c.layer_tensors[2 * pl + 1];
    if (pin.type != out.type || fin.type != out.type || out.elem != 1 || pin.elem != 1) return false;
    if (st.grid) {
        // The shaper's crop (rows y * step of the grid, its first columns) must be the true output.
        const tensor_ref& sin = c.layer_tensors[0];
        const auto o = layers[0].options.get<format::layer_options::ShaperOptions>();
        if (layers[0].type != static_cast<std::int32_t>(format::vnnx_operator::OUTPUT_SHAPER) || sin.data != out.data ||
            sin.shape != out.shape || sin.type != out.type || sin.elem != 1)
            return false;
        if (o.stride_height < 1 || (o.use_strided == 1 ? 1 : o.stride_height) != st.row_step || !shaper_sizes_positive(o))
            return false;
        if (pin.outer() != out.outer() || pin.channels() != out.channels() || pin.rows() != st.oh || pin.cols() != st.ow)
            return false;
    } else if (pin.data != out.data || pin.shape != out.shape) {
        return false;
    }
    const auto po = layers[pl].options.get<format::layer_options::PadOptions>();
    const auto& p = layers[pl].pads;
    if (po.transpose_dilate_w != 1 || po.transpose_dilate_h != 1 || p[0] != 0 || p[3] != 0) return false;
    for (auto v : p)
        if (v < 0 || v > (1 << 20)) return false;
    if (out.is_signed() ? (po.value < -128 || po.value > 127) : (po.value < 0 || po.value > 255)) return false;
    if (fin.outer() != pin.outer() || fin.channels() != pin.channels() || fin.rows() != pin.rows() + p[1] + p[4] ||
        fin.cols() != pin.cols() + p[2] + p[5])
        return false;
    if (in.data < fin.data + fin.count && fin.data < in.data + in.count) return false;
    // After a grid the kernel writes the grid, then the grid is copied into the PAD's output:
    // neither the input nor that output may share bytes with it.
    if (st.grid && (bytes_overlap(in, out) || bytes_overlap(fin, out))) return false;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> live{
        {recs[1].direct.value, recs[1].direct.value + out.count}};
    if (st.grid) live.emplace_back(recs[3].direct.value, recs[3].direct.value + pin.count);
    dead_bytes_detail::remove(live, {recs[2 + 2 * pl + 1].direct.value, recs[2 + 2 * pl + 1].direct.value + fin.count});
    if (!dead_after(c.view, c.node_index, std::move(live))) return false;
    for (std::size_t i = 0; i < 6; ++i) st.pads[i] = p[i];
    st.pad_fill = static_cast<std::uint8_t>(po.value);
    return true;
}

// The fused kernel when node c (prepared as `st`, shape s) qualifies, else null; `layers_out` is
// set to the number of layers it replaces: OUTPUT_SHAPER and STRIDED_SLICE after a grid, the
// STRIDED_SLICE alone after a true (row stride 1) output. Without AVX-512 (no column-stride-2
// kernel) a node with a grid qualifies too, with `from_grid` set and no kernel: the ordinary
// kernel writes the grid and one gather per plane writes the slice's output from it (the
// in-place crop ran on one thread, and both layers walked short rows one call at a time).
inline std::unique_ptr<kernels::conv2d> column_stride2(const node_context& c, const prepared& st,
                                                       const kernels::conv_shape& s, std::span<const std::int8_t> w,
                                                       const kernels::requant_params& rq, bool use_strided,
                                                       std::size_t& layers_out, bool& from_grid) {
    if (!c.ex.fuse_layers || !s.depthwise() || st.has_nlf || use_strided ||
        s.stride_w != 1 || s.dilation_w != 1 || c.layers_done == nullptr)
        return nullptr;
    const std::size_t nl = st.grid ? 2 : 1;
    const auto layers = c.view.node_layers(c.node_index);
    const auto recs = c.view.node_tensors(c.node_index);
    if (layers.size() != nl || c.layer_tensors.size() != 2 * nl || recs.size() != 2 + 2 * nl ||
        (st.grid && layers[0].type != static_cast<std::int32_t>(format::vnnx_operator::OUTPUT_SHAPER)) ||
        layers[nl - 1].type != static_cast<std::int32_t>(builtin_operator::STRIDED_SLICE))
        return nullptr;
    for (const auto& l : layers)
        if (l.num_tensors != 2) return nullptr;
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    const auto& t = c.layer_tensors;  // [shaper in, shaper out,] slice in, slice out
    auto same = [](const tensor_ref& a, const tensor_ref& b) {
        return a.data == b.data && a.shape == b.shape && a.type == b.type;
    };
    if (!same(t[0], out) || out.elem != 1 || t[2 * nl - 1].type != out.type) return nullptr;
    const tensor_ref& crop = t[2 * nl - 2];  // the slice's input: the true stride-1 output
    if (st.grid) {
        // The shaper: rows y*stride_height of the grid, its first columns; as its executor checks.
        const auto o = layers[0].options.get<format::layer_options::ShaperOptions>();
        if (!same(t[1], t[2]) || o.use_strided == 1 || o.stride_height != st.row_step || !shaper_sizes_positive(o))
            return nullptr;
    }
    if (crop.rank() != out.rank() || crop.rank() < 3 || crop.rank() > 4 || crop.outer() != out.outer() ||
        crop.channels() != out.channels() || crop.rows() != st.oh || crop.cols() > st.ow)
        return nullptr;
    // The slice: everything but the columns, which start at 0 with stride 2.
    const auto so = layers[nl - 1].options.get<format::layer_options::SliceOptions>();
    const std::size_t r = crop.rank();
    std::int64_t n = 0;
    for (std::size_t j = 0; j < 4; ++j) {
        const std::int64_t b = so.begin[j], e = so.end[j], sj = so.stride[j];
        const auto k = static_cast<std::int64_t>(r) - 4 + static_cast<std::int64_t>(j);
        const std::int64_t dim = k >= 0 ? crop.shape[static_cast<std::size_t>(k)] : 1;
        if (b != 0 || sj != (j == 3 ? 2 : 1) || e <= 0) return nullptr;
        const std::int64_t cnt = (e + sj - 1) / sj;
        if ((cnt - 1) * sj >= dim || (j < 3 && cnt != dim)) return nullptr;
        if (j == 3) n = cnt;
    }
    kernels::conv_shape s2 = s;
    s2.stride_w = 2;
    const tensor_ref& fin = t[2 * nl - 1];
    std::vector<std::int32_t> want = crop.shape;
    want.back() = static_cast<std::int32_t>(n);
    if (s2.out_w() != n || fin.shape != want) return nullptr;
    // The convolution reads its whole input before writing: only disjoint tensors keep that order.
    if (in.data < fin.data + fin.count && fin.data < in.data + in.count) return nullptr;
    // Nothing but the node's layers may read the node's output or the shaper's.
    const auto bytes = [](const format::vnnx_tensor_t& x, std::uint64_t count) {
        return std::pair<std::uint64_t, std::uint64_t>{x.direct.value, x.direct.value + count};
    };
    std::vector<std::pair<std::uint64_t, std::uint64_t>> live{bytes(recs[1], out.count)};
    if (st.grid) live.push_back(bytes(recs[3], crop.count));
    dead_bytes_detail::remove(live, bytes(recs[recs.size() - 1], fin.count));
    if (!dead_after(c.view, c.node_index, std::move(live))) return nullptr;
    if (!uses_avx512(c.ex.isa)) {
        // The gather reads the grid while it writes the slice's output, after the kernel.
        const auto grid_bytes = out.count * out.elem;
        if (!st.grid || (out.data < fin.data + fin.count && fin.data < out.data + grid_bytes) ||
            (in.data < out.data + grid_bytes && out.data < in.data + in.count * in.elem))
            return nullptr;
        layers_out = nl;
        from_grid = true;
        return nullptr;
    }
    layers_out = nl;
    return std::make_unique<kernels::conv2d>(s2, w, rq, c.ex.isa, c.view.source() + ": " + c.where);
}

// The kernels' scratch (packed inputs), per calling thread and shared by every conv node: nodes
// run one after another, and per-node buffers would keep a copy of every conv input alive.
// On a pool, successive nodes whose input fits in half of an L2 take four buffers in turn: both
// threads write a packed input and both then read all of it, so in a buffer that the next node
// reused every line sat in both cores' caches, and each store of the next packing first had to
// take its line from the other core (MobileNetV2's 144 x 56 x 56 packing: 21 -> 13 us on two
// threads). Larger inputs, and one thread, keep one buffer, so the three others stay small
// (each about the size of the largest input it packed: up to 2 MiB more in all).
inline kernels::conv_workspace& shared_workspace(const thread_pool* pool, std::size_t input_bytes) {
    thread_local std::array<kernels::conv_workspace, 4> ws;
    thread_local std::size_t next = 0;
    if (pool == nullptr || input_bytes > (std::size_t{512} << 10)) return ws[0];
    next = (next + 1) % ws.size();
    return ws[next];
}

// The true output of a node whose output is a grid (or overlaps its input), before it is
// written into place: one buffer per calling thread, shared by every such node as the workspace
// above is. Per-node buffers kept a copy of every grid node's output alive (YOLO-640: most of
// its convolutions) and made a model's first run fault all of them in, at about 11 us per 4 KiB
// page on a paravirtualized host.
inline std::uint8_t* output_scratch(std::size_t bytes) {
    thread_local std::vector<std::uint8_t, huge_page_allocator<std::uint8_t>> y;  // as the workspace
    if (y.size() < bytes) y.resize(bytes);
    return y.data();
}

inline const prepared& prepare(node_context& c) {
    if (*c.cache) return *static_cast<const prepared*>(c.cache->get());
    const auto& r = c.rec;
    const auto u = r.options.get<format::node_options::Conv2DOptions>();
    if (c.tensors.size() != 2) c.reject("expects one input and one output tensor, found " + std::to_string(c.tensors.size()));
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    c.require_8bit();
    if (u.use_fia != 1) c.reject("only FIA convolutions (use_fia = 1) are simulated, found use_fia " + std::to_string(u.use_fia));
    const bool dw = u.use_depthwise == 1;
    const int C = in.channels(), H = in.rows(), W = in.cols();
    if (r.channels != C || r.m != H || r.n != W)
        c.reject("node geometry " + std::to_string(r.channels) + "x" + std::to_string(r.m) + "x" + std::to_string(r.n) +
                 " differs from its input tensor " + std::to_string(C) + "x" + std::to_string(H) + "x" + std::to_string(W));
    const auto& f = u.filter_shape_dims;
    const int K = u.kernels;
    // The SDK lowers a convolution of one input channel as a depthwise one whose kernels
    // outnumber its channels (kernels = group = K, filter_shape_dims [1, K, kh, kw]): output
    // channel k reads input channel k / (K / C). It runs as a dense convolution whose weights
    // are zero off that channel.
    const bool dw_multiplier = dw && C >= 1 && K > C && K % C == 0 && f[0] == 1 && f[1] == K && u.group == K;
    if (dw) {
        if (!dw_multiplier && (f[0] != 1 || f[1] != C || K != C || u.group != C))
            c.reject("depthwise needs filter_shape_dims [1, C, kh, kw], kernels = group = C = " + std::to_string(C) +
                     " (or [1, K, kh, kw], kernels = group = K, a multiple of C); found [" + std::to_string(f[0]) + ", " +
                     std::to_string(f[1]) + ", ...], kernels " + std::to_string(K) + ", group " + std::to_string(u.group));
    } else if (f[0] != K || f[1] != C || u.group != 1) {
        c.reject("filter_shape_dims [" + std::to_string(f[0]) + ", " + std::to_string(f[1]) + ", ...] must be [kernels " +
                 std::to_string(K) + ", input channels " + std::to_string(C) + ", kh, kw] with group 1");
    }
    const int kh = f[2], kw = f[3];
    if (K < 1 || kh < 1 || kw < 1) c.reject("filter dimensions must be positive");
    if (out.channels() != K || out.outer() != in.outer())
        c.reject("output tensor has " + std::to_string(out.channels()) + " channels and batch " +
                 std::to_string(out.outer()) + "; needs " + std::to_string(K) + " and " + std::to_string(in.outer()));

    kernels::conv_shape s;
    s.channels = C;
    s.height = H;
    s.width = W;
    s.kernels = K;
    s.kernel_h = kh;
    s.kernel_w = kw;
    s.stride_h = u.stride_height;
    s.stride_w = u.stride_width;
    s.dilation_h = u.dilation_height_factor;
    s.dilation_w = u.dilation_width_factor;
    s.groups = dw && !dw_multiplier ? C : 1;
    s.input_signed = in.type == 1;
    if (r.output_data_type != 0 && r.output_data_type != 1)
        c.reject("output_data_type " + std::to_string(r.output_data_type) + " is not an 8-bit type");
    s.output_signed = r.output_data_type == 1;
    kernels::validate_conv_shape(s, c.view.source() + ": " + c.where);

    // Weights.
    const int P = parallel_output_maps(c.view.header().vbx_nn_preset);
    const std::string what = c.view.source() + ": " + c.where;
    std::vector<std::int8_t> w;
    if (dw) {
        if (u.imaps < 1 || r.maps < 1) c.reject("depthwise needs positive imaps and maps");
        const int filters = dw_multiplier ? K : C;
        const auto bytes = c.bytes(u.filter_data, packed_depthwise_bytes(filters, kh, kw, P, u.imaps), "filter_data");
        w = unpack_depthwise_weights({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, filters, kh, kw,
                                     P, u.imaps, r.maps, what);
        if (dw_multiplier) {
            const std::size_t taps = static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw);
            const int per_channel = K / C;
            std::vector<std::int8_t> dense(static_cast<std::size_t>(K) * static_cast<std::size_t>(C) * taps, 0);
            for (int k = 0; k < K; ++k)
                std::copy_n(w.begin() + static_cast<std::ptrdiff_t>(static_cast<std::size_t>(k) * taps), taps,
                            dense.begin() + static_cast<std::ptrdiff_t>(
                                                (static_cast<std::size_t>(k) * static_cast<std::size_t>(C) +
                                                 static_cast<std::size_t>(k / per_channel)) * taps));
            w = std::move(dense);
        }
    } else {
        const auto bytes = c.bytes(u.filter_data, packed_conv_bytes(K, C, kh, kw, P), "filter_data");
        w = unpack_conv_weights({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, K, C, kh, kw, P,
                                r.maps, what);
    }

    // Requantization: the records are what the FIA loads; the multiplier/shift arrays must agree.
    const auto ku = static_cast<std::uint64_t>(K);
    const auto rec_bytes = c.bytes(u.quantization_records, 8 * ku, "quantization_records");
    const auto om = c.int32s(r.output_multiplier, ku, "output_multiplier");
    const auto sh = c.int32s(r.output_shift, ku, "output_shift");
    kernels::requant_params rq;
    rq.act_min = r.activation_min;
    rq.act_max = r.activation_max;
    for (std::size_t k = 0; k < ku; ++k) {
        const auto p = quant::fia_decode(load_le<std::uint64_t>(rec_bytes.data() + 8 * k));
        if (om[k] != p.multiplier || sh[k] != p.shift_index)
            c.reject("output channel " + std::to_string(k) + ": output_multiplier/output_shift (" + std::to_string(om[k]) +
                     ", " + std::to_string(sh[k]) + ") differ from its quantization record (" +
                     std::to_string(p.multiplier) + ", " + std::to_string(p.shift_index) + ")");
        rq.multiplier.push_back(static_cast<std::uint16_t>(p.multiplier));
        rq.shift.push_back(static_cast<std::uint8_t>(kernels::shift_from_index(p.shift_index)));
        rq.constant.push_back(p.constant);
    }

    auto st = std::make_shared<prepared>();
    st->oh = s.out_h();
    st->ow = s.out_w();
    if (!u.nlf_data.absent()) {
        const auto t = c.bytes(u.nlf_data, 256, "nlf_data");
        std::memcpy(st->nlf.data(), t.data(), 256);
        st->has_nlf = true;
    } else if (out.type != r.output_data_type) {
        c.reject("output tensor type " + std::to_string(out.type) + " differs from output_data_type " +
                 std::to_string(r.output_data_type) + " and there is no nlf_data table");
    }

    // True output or FIA grid.
    if (out.rows() != st->oh || out.cols() != st->ow) {
        st->grid = true;
        if (u.use_strided == 1) {
            st->row_step = 1;
        } else {
            if (s.stride_w != 1)
                c.reject("stride_width " + std::to_string(s.stride_w) + " without use_strided has no FIA grid");
            st->row_step = s.stride_h;
        }
        if (static_cast<long long>(st->oh - 1) * st->row_step >= out.rows() || st->ow > out.cols())
            c.reject("output grid " + std::to_string(out.rows()) + "x" + std::to_string(out.cols()) +
                     " cannot hold the " + std::to_string(st->oh) + "x" + std::to_string(st->ow) + " output");
    }
    st->fused = column_stride2(c, *st, s, w, rq, u.use_strided == 1, st->fused_layers, st->slice_from_grid);
    if (!st->fused) {
        st->pad_in_place = !st->slice_from_grid && pad_in_place(c, *st);
        kernels::conv_shape sk = s;
        if (st->pad_in_place && !st->grid) sk.gap_row = c.layer_tensors[1].cols();  // rows at the padded pitch
        st->kernel = std::make_unique<kernels::conv2d>(sk, w, std::move(rq), c.ex.isa, what);
    }
    *c.cache = st;
    return *st;
}

}  // namespace conv_node_detail

namespace conv_node_detail {

// The output rows straight into the PAD's output (pad_in_place), the gaps between them written
// by the kernel (conv_output_pitch::gap_fill), then each plane's first and last runs.
inline void run_into_pad(node_context& c, const prepared& st) {
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& fin = c.layer_tensors[1];
    const auto& s = st.kernel->shape();
    const auto& p = st.pads;
    const auto rows = static_cast<std::size_t>(fin.rows()), cols = static_cast<std::size_t>(fin.cols());
    const std::size_t plane = rows * cols, k_count = static_cast<std::size_t>(s.kernels);
    const std::size_t first = static_cast<std::size_t>(p[1]) * cols + static_cast<std::size_t>(p[2]);
    const auto oh = static_cast<std::size_t>(st.oh), ow = static_cast<std::size_t>(st.ow);
    const std::size_t end = first + (oh - 1) * cols + ow;  // past the last row
    for (std::int64_t b = 0; b < in.outer(); ++b) {
        const auto bu = static_cast<std::size_t>(b);
        std::uint8_t* dst = fin.u8() + bu * k_count * plane;
        // Plane k's last run and plane k+1's first one are adjacent: the kernel fills them as
        // plane tails in its pass over the gaps; left are plane 0's first run and the last tail.
        st.kernel->run({in.u8() + bu * s.input_size(), s.input_size()}, {dst + first, k_count * plane - first},
                       {cols, plane, st.pad_fill, true}, shared_workspace(c.ex.pool, s.input_size()), c.ex.pool);
        std::memset(dst, st.pad_fill, first);
        std::memset(dst + (k_count - 1) * plane + end, st.pad_fill, plane - end);
    }
    *c.layers_done = 1;
}

// pad_in_place after a grid: the kernel writes the grid as it does without the layers (whole
// tiles at the grid's pitch), then one pass over the planes fills the PAD's output and copies
// the crop's rows into it. The crop itself is skipped: done in place, it had to run on one
// thread (its planes overlap). Writing at the padded pitch instead would lose the whole-tile
// stores, as the strided kernel's rows are the grid's.
inline void crop_into_pad(node_context& c, const prepared& st) {
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];  // the grid
    const tensor_ref& fin = c.layer_tensors[3];
    const auto& s = st.kernel->shape();
    const auto& p = st.pads;
    const auto k_count = static_cast<std::size_t>(s.kernels);
    const auto gcols = static_cast<std::size_t>(out.cols()), gplane = static_cast<std::size_t>(out.rows()) * gcols;
    const auto cols = static_cast<std::size_t>(fin.cols()), plane = static_cast<std::size_t>(fin.rows()) * cols;
    const std::size_t row = gcols * static_cast<std::size_t>(st.row_step);
    const auto oh = static_cast<std::size_t>(st.oh), ow = static_cast<std::size_t>(st.ow);
    const std::size_t first = static_cast<std::size_t>(p[1]) * cols + static_cast<std::size_t>(p[2]);
    for (std::int64_t b = 0; b < in.outer(); ++b) {
        const auto bu = static_cast<std::size_t>(b);
        std::uint8_t* grid = out.u8() + bu * k_count * gplane;
        std::uint8_t* dst = fin.u8() + bu * k_count * plane;
        st.kernel->run({in.u8() + bu * s.input_size(), s.input_size()}, {grid, k_count * gplane},
                       {row, gplane, static_cast<std::uint8_t>(out.zero)}, shared_workspace(c.ex.pool, s.input_size()), c.ex.pool);
        auto body = [&](std::size_t k) {
            std::uint8_t* d = dst + k * plane;
            std::memset(d, st.pad_fill, plane);
            for (std::size_t y = 0; y < oh; ++y) std::memcpy(d + first + y * cols, grid + k * gplane + y * row, ow);
        };
        if (c.ex.pool && k_count * plane >= 32768) c.ex.pool->parallel_for(k_count, body);
        else
            for (std::size_t k = 0; k < k_count; ++k) body(k);
    }
    *c.layers_done = 2;
}

// slice_from_grid: the kernel writes the grid (no gap fill: nothing reads the grid after the
// node), then each plane's slice rows are gathered from its grid rows, even columns only.
inline void gather_slice(node_context& c, const prepared& st) {
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];  // the grid
    const tensor_ref& fin = c.layer_tensors[3];
    const auto& s = st.kernel->shape();
    const auto k_count = static_cast<std::size_t>(s.kernels);
    const auto gcols = static_cast<std::size_t>(out.cols()), gplane = static_cast<std::size_t>(out.rows()) * gcols;
    const std::size_t row = gcols * static_cast<std::size_t>(st.row_step);
    const auto fh = static_cast<std::size_t>(fin.rows()), fw = static_cast<std::size_t>(fin.cols()), fplane = fh * fw;
    for (std::int64_t b = 0; b < in.outer(); ++b) {
        const auto bu = static_cast<std::size_t>(b);
        std::uint8_t* grid = out.u8() + bu * k_count * gplane;
        std::uint8_t* dst = fin.u8() + bu * k_count * fplane;
        st.kernel->run({in.u8() + bu * s.input_size(), s.input_size()}, {grid, k_count * gplane}, {row, gplane, -1},
                       shared_workspace(c.ex.pool, s.input_size()), c.ex.pool);
        auto body = [&](std::size_t k) {
            for (std::size_t y = 0; y < fh; ++y) kernels::even_bytes(c.ex.isa, dst + k * fplane + y * fw, grid + k * gplane + y * row, fw);
        };
        if (c.ex.pool && k_count * gplane >= 32768) c.ex.pool->parallel_for(k_count, body);
        else
            for (std::size_t k = 0; k < k_count; ++k) body(k);
    }
    *c.layers_done = 2;
}

}  // namespace conv_node_detail

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::CONV_2D)> {
    static constexpr bool defined = true;
    static void prepare(node_context& c) { (void)conv_node_detail::prepare(c); }
    static void run(node_context& c) {
        const auto& st = conv_node_detail::prepare(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (st.fused) {
            // Straight into the slice's output; the layers are done.
            const tensor_ref& fin = c.layer_tensors[2 * st.fused_layers - 1];
            const std::size_t in_plane = st.fused->shape().input_size(), fin_plane = st.fused->shape().output_size();
            for (std::int64_t b = 0; b < in.outer(); ++b) {
                const auto bu = static_cast<std::size_t>(b);
                st.fused->run({in.u8() + bu * in_plane, in_plane}, {fin.u8() + bu * fin_plane, fin_plane},
                              conv_node_detail::shared_workspace(c.ex.pool, in_plane), c.ex.pool);
            }
            *c.layers_done = st.fused_layers;
            return;
        }
        if (st.slice_from_grid) {
            conv_node_detail::gather_slice(c, st);
            return;
        }
        if (st.pad_in_place) {
            if (st.grid) conv_node_detail::crop_into_pad(c, st);
            else conv_node_detail::run_into_pad(c, st);
            return;
        }
        const auto& s = st.kernel->shape();
        const std::size_t in_plane = s.input_size();
        const std::size_t k_count = static_cast<std::size_t>(s.kernels);
        const std::size_t true_plane = static_cast<std::size_t>(st.oh) * static_cast<std::size_t>(st.ow);
        const std::size_t out_rows = static_cast<std::size_t>(out.rows()), out_cols = static_cast<std::size_t>(out.cols());
        const std::size_t out_plane = k_count * out_rows * out_cols;
        const auto fill = static_cast<std::uint8_t>(out.zero);
        for (std::int64_t b = 0; b < in.outer(); ++b) {
            const auto bu = static_cast<std::size_t>(b);
            std::uint8_t* dst = out.u8() + bu * out_plane;
            const std::uint8_t* src = in.u8() + bu * in_plane;
            if (st.grid && !st.has_nlf && (dst + out_plane <= src || src + in_plane <= dst)) {
                // The kernel writes its rows straight into the grid, and the fill between them
                // and after each plane's last row (conv_output_pitch::gap_fill, tails).
                const std::size_t row = out_cols * static_cast<std::size_t>(st.row_step), plane = out_rows * out_cols;
                st.kernel->run({src, in_plane}, {dst, out_plane}, {row, plane, fill, true},
                               conv_node_detail::shared_workspace(c.ex.pool, in_plane), c.ex.pool);
                continue;
            }
            // Without a grid the kernel writes the output tensor itself (no copy, no allocation),
            // unless the output overlaps the input the kernel still reads.
            const bool overlap = dst < src + in_plane && src < dst + s.output_size();
            std::uint8_t* y = dst;
            if (st.grid || overlap) {
                y = conv_node_detail::output_scratch(s.output_size());
            }
            st.kernel->run({src, in_plane}, {y, s.output_size()}, conv_node_detail::shared_workspace(c.ex.pool, in_plane), c.ex.pool);
            if (st.has_nlf) {
                const std::size_t n = s.output_size();
                // The activation table, in 64 KiB chunks over the pool for large outputs.
                constexpr std::size_t chunk = 65536;
                auto body = [&](std::size_t i) {
                    const std::size_t m = std::min(chunk, n - i * chunk);
                    kernels::detail::lut8(c.ex.isa, st.nlf, y + i * chunk, y + i * chunk, m);
                };
                const std::size_t chunks = (n + chunk - 1) / chunk;
                if (c.ex.pool) c.ex.pool->parallel_for(chunks, body);
                else
                    for (std::size_t i = 0; i < chunks; ++i) body(i);
            }
            if (!st.grid) {
                if (y != dst) std::memcpy(dst, y, s.output_size());
                continue;
            }
            // The FIA grid: one output channel per index (fill, then the rows), over the pool.
            auto grid = [&](std::size_t k) {
                std::memset(dst + k * out_rows * out_cols, fill, out_rows * out_cols);
                for (int oy = 0; oy < st.oh; ++oy)
                    std::memcpy(dst + (k * out_rows + static_cast<std::size_t>(oy * st.row_step)) * out_cols,
                                y + k * true_plane + static_cast<std::size_t>(oy) * static_cast<std::size_t>(st.ow),
                                static_cast<std::size_t>(st.ow));
            };
            if (c.ex.pool && out_plane >= 32768) c.ex.pool->parallel_for(k_count, grid);
            else
                for (std::size_t k = 0; k < k_count; ++k) grid(k);
        }
    }
};

}  // namespace vnnx::sim
