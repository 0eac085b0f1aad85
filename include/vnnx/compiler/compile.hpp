#pragma once
// vnnx::compile: TFLite bytes in, VNNX bytes and a per-node report out, in one call.
// Pipeline (lowering.md §1.2): verify → transforms (§3) → split (§4) → tile (§10) →
// lower (§5–§9) → memory plan and emit (§11, vnnx-format.md §7).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vnnx/compiler/build.hpp"
#include "vnnx/compiler/emit.hpp"
#include "vnnx/compiler/import.hpp"
#include "vnnx/ir/lut_tables.hpp"
#include "vnnx/compiler/partition.hpp"
#include "vnnx/compiler/passes/batch_matmul.hpp"
#include "vnnx/compiler/passes/depthwise_multiplier.hpp"
#include "vnnx/compiler/passes/explicit_pad.hpp"
#include "vnnx/compiler/passes/fuse_activation.hpp"
#include "vnnx/compiler/passes/fully_connected.hpp"
#include "vnnx/compiler/passes/outlier_weights.hpp"
#include "vnnx/ir/lut_chain.hpp"
#include "vnnx/compiler/passes/sdk_scales.hpp"
#include "vnnx/compiler/passes/simplify.hpp"
#include "vnnx/compiler/passes/sort_dfs.hpp"
#include "vnnx/ir/transpose_conv_form.hpp"
#include "vnnx/ir/split.hpp"
#include "vnnx/compiler/tile_split.hpp"
#include "vnnx/ops/apply_tile.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/format/union_select.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/support/linkage.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx {

struct compile_options {
    format::preset preset = format::preset::V1000;
    format::compression compression = format::compression::ncomp;
    /// Computes LUT tables for chains of element-wise operators; empty: ir/lut_tables.hpp.
    compiler::passes::lut_evaluator lut;
    /// Test vectors to embed (channels-first bytes per graph input / output); empty: zeros.
    std::vector<std::vector<std::byte>> test_inputs, test_outputs;
    /// Progress and pass timings, one line each (the CLI's -v); may be empty.
    std::function<void(const std::string&)> log;
    /// The part of the graph to compile (compiler/partition.hpp): by default all of it.
    compiler::cut_request cut;
    /// Round scales to the six decimals the SDK's flow reads (passes/sdk_scales.hpp).
    bool sdk_scales = false;
    /// Requantize uint8 weight channels that leave int8 (the SDK's form: up to tens of LSB off
    /// alone) instead of the exact second copy of the input channels they read (two small nodes
    /// and a few more MACs per such convolution): passes/outlier_weights.hpp.
    bool requantize_outliers = false;
    /// Accumulators observed on calibration inputs (compiler/calibrate.hpp): each convolution's
    /// records are fitted to them (quant/fia_fit.hpp). Null: §8.2's records, as the SDK's.
    std::shared_ptr<const compiler::calibration> calibration;
};

struct node_report {
    std::size_t index = 0;
    std::string type;    // node type name
    std::string ops;     // the TFLite operators it came from
    std::vector<std::string> layers;
    std::vector<std::int32_t> input_shape, output_shape;  // channels-first
    std::int64_t weight_bytes = 0;
    std::int64_t macs = 0;
    std::int32_t scratchpad_bytes = 0;
    std::int32_t tiles = 1;
    std::string output_name;                // buffer name of the node's final tensor
    std::vector<std::string> tensor_names;  // every tensor record's buffer name, in file order (node's, then layers')
};

struct compile_result {
    std::vector<std::byte> bytes;
    std::vector<node_report> nodes;
    std::uint32_t allocate_bytes = 0;
    std::int64_t macs = 0;
    /// What was compiled: partition.outputs are the TFLite tensors behind the VNNX outputs.
    compiler::partition partition;
    std::string cut_report;  // the cut in words (describe_partition); empty without a cut
    compiler::record_fit_stats fit;  // records fitted to calibration data (all zero without)
};

namespace compiler {

/// The graph after the transforms of lowering.md §3, ready to split.
inline graph transform(graph g, const passes::lut_evaluator& lut) {
    passes::sort_dfs(g);
    passes::remove_float_io(g);
    passes::narrow_indices(g);
    passes::transpose_conv(g);
    passes::depthwise_multiplier_to_conv(g);
    passes::explicit_pad(g);
    passes::strided_depthwise(g);
    passes::batch_matmul_constant_to_fc(g);
    passes::fully_connected_to_conv(g);
    if (!g.sdk_records && !g.requantize_outliers) passes::split_outlier_weights(g);  // the SDK requantizes them
    passes::pool_as_mean(g);
    if (lut) passes::lut_pass(g, lut);
    passes::fuse_activation(g);
    passes::remove_nops(g);
    passes::sort_dfs(g);
    passes::drop_unused_tensors(g);
    return g;
}

/// The largest convolution filter in bytes ([K, kh, kw, C] or [1, kh, kw, K], one byte a weight),
/// for the conv lowering's working copy: reserved once, it does not grow through the model on
/// fresh pages. Capped like blob_capacity_hint, for the same reason.
inline std::size_t largest_filter_bytes(const graph& g, std::size_t model_bytes) {
    std::size_t most = 0;
    for (const auto& o : g.ops) {
        const bool conv = o.code == builtin_operator::CONV_2D || o.code == builtin_operator::DEPTHWISE_CONV_2D;
        if (!conv || o.inputs.size() < 2 || o.inputs[1] < 0) continue;
        if (const auto& w = g.t(o.inputs[1]); w.data) most = std::max(most, w.data->size());
    }
    return std::min(most, 2 * model_bytes);
}

/// An upper bound of the data blob's size, so that it is allocated once and never regrows: the
/// packed filters (lowering.md §7.1.3: K and C rounded up; §7.1.4: at most 3C chunk groups of
/// the dilated height), twice every other constant, the graph I/O buffers and a margin per
/// operator. Over-estimating costs only address space (pages are touched when written), but the
/// shapes are the model's claims: the hint is capped by what a file of `model_bytes` can back, so
/// a small hostile file never asks for a gigabyte up front (beyond the hint the blob just grows).
inline std::size_t blob_capacity_hint(const graph& g, const preset_info& preset, std::size_t model_bytes) {
    const double P = preset.parallel_output_maps;
    double n = 1 << 20;
    auto dim = [](std::int32_t d) { return static_cast<double>(std::max(d, 1)); };
    for (const auto& t : g.tensors)
        if (t.data) n += 2.0 * static_cast<double>(t.data->size()) + 64;
    for (auto list : {&g.inputs, &g.outputs})
        for (auto i : *list) {
            double e = 4;  // the widest element; channels-first rounding adds at most 3 per dim
            for (auto d : g.t(i).shape) e *= dim(d) + 3;
            n += e + 64;
        }
    for (const auto& o : g.ops) {
        n += 4096;
        const bool conv = o.code == builtin_operator::CONV_2D || o.code == builtin_operator::DEPTHWISE_CONV_2D;
        if (!conv || o.inputs.size() < 2 || o.inputs[1] < 0) continue;
        const auto& w = g.t(o.inputs[1]).shape;  // [K, kh, kw, C] or [1, kh, kw, K]
        if (w.size() != 4) continue;
        const double K = std::max(dim(w[0]), dim(w[3])), kh = dim(w[1]), kw = dim(w[2]);
        const double kh_dilated = (kh - 1) * dim(o.options.dilation_h) + 1;
        n += std::max((K + P) * (K + 1) * kh * kw, 3 * K * kw * (kh_dilated + P) * P) + 32 * K;
    }
    // Filters grow at most by their K/C rounding and chunk copies (a few times the file), I/O
    // buffers of real models stay within tens of MiB.
    const double most = std::min(4.0 * static_cast<double>(model_bytes) + double(64u << 20), double(1u << 30));
    return static_cast<std::size_t>(std::min(n, most));
}

}  // namespace compiler

/// Compiles a .tflite model (its bytes) to VNNX; `source` names it in errors.
VNNX_ENTRY compile_result compile(std::span<const std::byte> tflite_bytes, const compile_options& options,
                                  const std::string& source = "model.tflite");

#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY compile_result compile(std::span<const std::byte> tflite_bytes, const compile_options& options,
                                  const std::string& source) {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    auto lap = [&](const char* what) {
        if (!options.log) return;
        const auto t1 = clock::now();
        options.log(fmt::format("{}: {:.1f} ms", what, std::chrono::duration<double, std::milli>(t1 - t0).count()));
        t0 = t1;
    };
    if (options.compression != format::compression::ncomp)
        fail(error_kind::unsupported, source + ": only ncomp (uncompressed weights) is supported");
    const auto model = tflite::model_view::parse(tflite_bytes, source);
    // The graph lives only in this call, while tflite_bytes do: it may borrow their constants.
    compiler::graph g = compiler::checked_graph(model, compiler::constant_storage::borrow);
    if (options.sdk_scales) compiler::passes::round_scales_as_sdk(g);
    g.requantize_outliers = options.requantize_outliers;
    lap("read");
    if (options.log)
        options.log(std::to_string(g.ops.size()) + " operators, " + std::to_string(g.tensors.size()) + " tensors");
    compile_result result;
    result.partition = compiler::plan_partition(g, options.cut);
    result.cut_report = compiler::describe_partition(g, result.partition);
    compiler::apply_partition(g, result.partition);
    if (options.log && result.partition.cut) options.log(result.cut_report);
    // Without an evaluator of its own the LUT pass runs the reference kernels (lut_tables.hpp).
    g = compiler::transform(std::move(g), options.lut ? options.lut : compiler::passes::lut_evaluator(compiler::default_lut_evaluator()));
    lap("transforms");

    compiler::program prog;
    prog.preset = options.preset;
    prog.compression = options.compression;
    prog.calib = options.calibration.get();
    const auto& preset = compiler::info(options.preset);
    prog.data.expect(compiler::blob_capacity_hint(g, preset, tflite_bytes.size()));
    reserve_huge(prog.filter_scratch, compiler::largest_filter_bytes(g, tflite_bytes.size()));
    auto splits = compiler::split_graph(g, &ops::starts_own_node);
    for (std::size_t k = 0; k < splits.size(); ++k) {
        auto tile = compiler::tile_split(g, splits[k], preset);
        if (!tile.fits) {
            if (compiler::cut_split(g, splits, k)) {
                --k;  // retry the shortened split
                continue;
            }
            fail(error_kind::unsupported, source + ": " + compiler::describe(g.ops[static_cast<std::size_t>(splits[k][0])]) +
                                              ": layer cannot fit in the scratchpad: " + tile.reason);
        }
        auto node = compiler::build_node(g, prog, preset, splits[k], {static_cast<std::int32_t>(tile.maps), static_cast<std::int32_t>(tile.imaps)});
        compiler::apply_tile(node, tile);
        ops::finish_conv_node(g, prog, node, tile);
        prog.nodes.push_back(std::move(node));
    }
    ops::finish_conv_graph(g, prog, preset);
    if (options.log) options.log(std::to_string(g.ops.size()) + " operators after the transforms, " +
                                 std::to_string(prog.nodes.size()) + " nodes");
    lap("lowering");

    // Every model input and output must have a VNNX element type (the file's reader insists).
    for (const auto* list : {&g.inputs, &g.outputs})
        for (std::size_t i = 0; i < list->size(); ++i) {
            const auto& t = g.t((*list)[i]);
            if (ops::calc_type_of(t.type) == static_cast<std::int32_t>(format::calc_type::CALC_TYPE_UNKNOWN))
                fail(error_kind::unsupported, source + ": " + (list == &g.inputs ? "input " : "output ") + std::to_string(i) +
                                                  " '" + t.name + "': type " + std::string(tflite::type_name(t.type)) +
                                                  " has no VNNX element type");
        }
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
        compiler::io_desc io;
        io.name = g.t(g.inputs[i]).name;
        if (i < options.test_inputs.size()) io.test_data = options.test_inputs[i];
        prog.inputs.push_back(std::move(io));
    }
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
        compiler::io_desc io;
        io.name = g.t(g.outputs[i]).name;
        if (i < options.test_outputs.size()) io.test_data = options.test_outputs[i];
        prog.outputs.push_back(std::move(io));
    }
    for (std::size_t k = 0; k < prog.nodes.size(); ++k) {
        const auto& nd = prog.nodes[k];
        node_report r;
        r.index = k;
        r.type = std::string(format::operator_name(nd.rec.type));
        r.ops = nd.label;
        for (const auto& l : nd.layers) r.layers.emplace_back(format::operator_name(l.rec.type));
        if (!nd.tensors.empty()) r.input_shape = nd.tensors.front().shape;
        for (const auto& t : nd.tensors) r.tensor_names.push_back(t.name);
        for (const auto& l : nd.layers)
            for (const auto& t : l.tensors) r.tensor_names.push_back(t.name);
        r.output_shape = nd.layers.empty() ? nd.tensors.back().shape : nd.layers.back().tensors.back().shape;
        if (!r.tensor_names.empty()) r.output_name = r.tensor_names.back();
        r.weight_bytes = nd.weight_bytes;
        r.macs = nd.macs;
        r.scratchpad_bytes = nd.rec.scratchpad_bytes;
        result.macs += nd.macs;
        result.nodes.push_back(std::move(r));
    }
    // Checked here, where the file name is known (emit's own check cannot name it).
    if (prog.nodes.empty()) fail(error_kind::unsupported, source + ": the model has no operator left to compile");
    auto emitted = compiler::emit(prog, [&] { lap("layout"); });
    // The simulator refuses a memory image above this limit; do not write a file it would refuse.
    check_limit(emitted.allocate_bytes, active_limits().max_activation_bytes, source + ": memory image (allocate_bytes)",
                "VNNX_MAX_ACTIVATION_BYTES");
    lap("emit");
    result.bytes = std::move(emitted.bytes);
    result.allocate_bytes = emitted.allocate_bytes;
    result.fit = prog.fit;
    if (options.log && prog.calib != nullptr)
        options.log(fmt::format("records fitted to {} calibration input(s): {} of {} channels changed, samples reproduced {} -> {} of {}",
                                prog.calib->inputs, prog.fit.changed, prog.fit.channels, prog.fit.matched_before,
                                prog.fit.matched_after, prog.fit.samples));
    return result;
}

#endif

}  // namespace vnnx
