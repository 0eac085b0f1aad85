#pragma once
// ARG_MAX (56) / ARG_MIN (79) → layer with reduce8 (lowering.md §7.7.2): one flag for the
// reduced channels-first axis, the output holds the int32 index of the first extreme code.
// The SDK accepts only the TFLite last axis and packs a 0..C−1 signed-byte table that no field
// references, which breaks above 128 classes [quirk]; here any one of the last three axes
// works, the unreferenced table is omitted (lowering.md §13) and class counts are unlimited.
// Offsets are 0 and 0 as in the SDK: indices do not depend on the quantization.
// An INT64 output (TFLite's default output_type) is accepted: VNNX has no 64-bit calc type, so
// the NARROW_INDICES pass makes the tensor INT32, which holds every index a shape can have. The
// SDK maps INT64 to calc type UNKNOWN and cannot size its buffer; it only builds INT32 ARG_MAX.
#include <cstdint>
#include <string>

#include "vnnx/ops/reduce.hpp"

namespace vnnx::ops {

namespace argmax_detail {

template <builtin_operator Code>
struct argmax_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary = Code == builtin_operator::ARG_MAX
                                                    ? "index of the maximum along one of the last three axes, int32 (int64 narrowed)"
                                                    : "index of the minimum along one of the last three axes, int32 (int64 narrowed)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    using member = format::layer_options::reduce8;
    static constexpr std::string_view axes = "one of the last three axes";
    static constexpr std::string_view notes =
        "any class count and any of the last three axes (the SDK: last axis only, breaks above 128 classes)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, an axis and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
        const auto& a = g.t(o.inputs[1]);
        if (!a.is_constant() || a.element_count() != 1) return "the axis must be one constant value";
        const auto ax = reduce_detail::reduce_axes(g, o);
        if (!ax.error.empty()) return ax.error;
        if (y.type != tensor_type::INT32 && y.type != tensor_type::INT64) return "output_type must be INT32 or INT64";
        if (y.rank() + 1 != x.rank()) return "the output rank must be the input rank - 1";
        const auto expect = reduce_detail::reduced_shape(g, o, false);
        if (y.shape != expect) return "output shape does not match the input without the axis";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto ax = reduce_detail::reduce_axes(c.g, o);
        if (!ax.error.empty()) c.reject(o, ax.error);
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        l.rec.input_offset = 0;
        l.rec.output_offset = 0;
        // The output record describes plain indices.
        l.tensors.back().scale = 1.0f;
        l.tensors.back().zero = 0;
        l.set(ax.flags);
    }
};

}  // namespace argmax_detail

template <>
struct op<builtin_operator::ARG_MAX> : argmax_detail::argmax_trait<builtin_operator::ARG_MAX> {
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
};
template <>
struct op<builtin_operator::ARG_MIN> : argmax_detail::argmax_trait<builtin_operator::ARG_MIN> {};

}  // namespace vnnx::ops
