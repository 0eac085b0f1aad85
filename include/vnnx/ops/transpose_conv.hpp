#pragma once
// TRANSPOSE_CONV → DILATE + PADV2 + CONV_2D before lowering (ir/transpose_conv_form.hpp,
// lowering.md §7.8.1): the conv node of §7.1 runs it with the 180°-turned kernel and the right
// asymmetric pads (both wrong in the SDK [quirk]). Any stride works, since the dilation is a layer
// of its own (the SDK's native path for strides > 2 or unequal strides is broken).
#include <string>

#include "vnnx/ir/transpose_conv_form.hpp"
#include "vnnx/ops/conv.hpp"
#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

template <>
struct op<builtin_operator::TRANSPOSE_CONV> {
    static constexpr builtin_operator code = builtin_operator::TRANSPOSE_CONV;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "transposed convolution, run as DILATE + PAD + CONV_2D with the kernel turned 180 degrees";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = conv_detail::conv_activations{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONV_2D);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::node_options::Conv2DOptions;
    using tflite_options = tflite::opt::TransposeConvOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.pad = x.padding;
        o.stride_w = x.stride_w;
        o.stride_h = x.stride_h;
        o.fused = x.fused_activation_function;
    }
    static constexpr std::uint8_t data_input = 2;  // inputs 0 and 1: output shape, filter
    static constexpr auto paddings = any_padding{};
    static constexpr rank_range ranks{4, 4};
    static constexpr std::string_view axes = "H and W of [N,H,W,C]; filter [O,kh,kw,C]; any strides";
    static constexpr std::string_view notes =
        "kernel turned 180 degrees and the odd SAME pad unit at the bottom/right (the SDK does neither); any strides (the SDK: equal, <= 2)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 3 || o.inputs.size() > 4 || o.inputs[1] < 0 || o.inputs[2] < 0 || o.outputs.size() != 1)
            return "needs output_shape, filter, input, an optional bias and one output";
        const auto& y = g.t(o.outputs[0]);
        if (const auto s = movement::const_ints(g, o.inputs[0])) {
            std::vector<std::int32_t> want(s->begin(), s->end());
            if (want != y.shape) return "output_shape " + movement::shape_text(want) + " differs from the output " + movement::shape_text(y.shape);
        }
        // The filter, bias and quantization rules are the conv's: check the conv it becomes.
        compiler::op conv;
        conv.code = builtin_operator::CONV_2D;
        conv.inputs = {o.inputs[2], o.inputs[1]};
        if (o.inputs.size() > 3 && o.inputs[3] >= 0) conv.inputs.push_back(o.inputs[3]);
        conv.outputs = o.outputs;
        conv.options.pad = compiler::padding::SAME;  // the unpadded input may be smaller than the filter
        conv.options.fused = o.options.fused;
        if (auto r = conv_detail::check_conv(g, conv); !r.empty()) return r;
        if (g.t(o.inputs[2]).type != g.t(o.inputs[1]).type) return "input and filter types differ";
        const auto f = compiler::passes::transpose_conv_form_of(g, o);
        if (!f.error.empty()) return f.error;
        if (f.N != y.shape[0]) return "input and output batches differ";
        return {};
    }
    static void lower_node(lowering& c, const compiler::op& o) {
        c.reject(o, "must be rewritten to DILATE + PAD + CONV_2D before lowering (TRANSPOSE_CONV pass)");
    }
};

}  // namespace vnnx::ops
