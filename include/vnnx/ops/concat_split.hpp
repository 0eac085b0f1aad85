#pragma once
// CONCATENATION (2), SPLIT (49), SPLIT_V (102), PACK (83), TILE (69) nodes and the UNPACK (88)
// layer (lowering.md §7.2). The nodes list every activation input first, then every output
// (lowering.md §5.3), so multi-output SPLITs describe all their outputs.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

/// Every operand in `o.inputs` must be an activation (a VNNX node reads its inputs from buffers
/// other nodes wrote; constants have no producer).
inline std::string check_activation_inputs(const graph& g, const compiler::op& o) {
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
        if (o.inputs[i] < 0) return "input " + std::to_string(i) + " is missing";
        if (g.t(o.inputs[i]).is_constant()) return "input " + std::to_string(i) + " is a constant; only activations are supported";
    }
    return {};
}

/// The axis operand of SPLIT / SPLIT_V as a TFLite axis of `rank`, or -1.
inline std::int32_t split_axis(const graph& g, std::int32_t axis_tensor, std::int32_t rank) {
    const auto v = const_ints(g, axis_tensor);
    if (!v || v->size() != 1) return -1;
    return normalize_axis((*v)[0], rank);
}

}  // namespace movement

template <>
struct op<builtin_operator::CONCATENATION> {
    static constexpr builtin_operator code = builtin_operator::CONCATENATION;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "concatenation along any axis (inputs share the output's quantization)";
    static constexpr auto dtypes = int8_types{};
    // TFLite itself accepts only NONE for a concatenation.
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONCATENATION);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::layer_options::ConcatOptions;
    using tflite_options = tflite::opt::ConcatenationOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.axis = x.axis;
        o.fused = x.fused_activation_function;
    }
    static constexpr std::string_view axes = "any axis";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.empty() || o.outputs.size() != 1) return "needs inputs and one output";
        if (auto r = check_activation_inputs(g, o); !r.empty()) return r;
        const auto& out = g.t(o.outputs[0]);
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        const auto rank = static_cast<std::int32_t>(out.rank());
        const auto axis = normalize_axis(o.options.axis, rank);
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the output rank " + std::to_string(rank);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < o.inputs.size(); ++i) {
            const auto& x = g.t(o.inputs[i]);
            if (x.type != out.type) return "input " + std::to_string(i) + " type differs from the output type";
            if (x.rank() != out.rank()) return "input " + std::to_string(i) + " rank differs from the output rank";
            for (std::int32_t d = 0; d < rank; ++d)
                if (d != axis && x.shape[static_cast<std::size_t>(d)] != out.shape[static_cast<std::size_t>(d)])
                    return "input " + std::to_string(i) + " " + shape_text(x.shape) + " does not match the output " +
                           shape_text(out.shape) + " off the axis";
            // VNNX concatenation copies bytes; it cannot requantize like TFLite's uint8 kernel.
            if (x.quant.scale0() != out.quant.scale0() || x.quant.zero0() != out.quant.zero0())
                return "input " + std::to_string(i) + " quantization differs from the output's (no requantization)";
            sum += x.shape[static_cast<std::size_t>(axis)];
        }
        if (sum != out.shape[static_cast<std::size_t>(axis)]) return "input sizes along the axis do not add up to the output's";
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        for (auto t : o.inputs) n.tensors.push_back(c.desc(t));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = static_cast<std::int32_t>(o.inputs.size());
        n.rec.num_outputs = 1;
        const auto& os = c.g.t(o.outputs[0]).shape;
        const auto geo = geometry_of(os);  // from the output (lowering.md §7.2)
        n.rec.channels = geo.channels;
        n.rec.m = geo.m;
        n.rec.n = geo.n;
        const auto rank = static_cast<std::int32_t>(os.size());
        format::node_options::ConcatOptions co{};
        co.axis = channels_first_axis(movement::normalize_axis(o.options.axis, rank), rank);  // non-negative form
        n.set(co);
    }
};

namespace movement {

template <builtin_operator Code>
struct split_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr bool is_v = Code == builtin_operator::SPLIT_V;
    static constexpr std::string_view summary =
        is_v ? "split into given sizes along a constant axis" : "split into equal parts along a constant axis";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(Code);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::layer_options::SplitOptions;
    static constexpr std::string_view axes = "one constant axis";

    static std::int32_t data(const compiler::op& o) { return input_at(o, is_v ? 0 : 1); }
    static std::int32_t axis_tensor(const compiler::op& o) { return input_at(o, is_v ? 2 : 0); }

    /// The tiler's model: a split.
    static bool tile(const graph&, const compiler::op&, std::int32_t, bool, compiler::layer& L) {
        L.kind = compiler::op_kind::split;
        return true;
    }
    static std::string check(const graph& g, const compiler::op& o) {
        const auto in = data(o);
        if (in < 0 || o.outputs.empty()) return "needs a data input and outputs";
        if (g.t(in).is_constant()) return "the data input is a constant; only activations are supported";
        if (auto r = check_static(g, in, "input"); !r.empty()) return r;
        const auto& x = g.t(in);
        const auto rank = static_cast<std::int32_t>(x.rank());
        const auto axis = split_axis(g, axis_tensor(o), rank);
        if (axis < 0) return "the axis must be a constant scalar inside the input rank";
        std::int64_t sum = 0;
        for (std::size_t k = 0; k < o.outputs.size(); ++k) {
            const auto& y = g.t(o.outputs[k]);
            if (y.type != x.type || y.rank() != x.rank()) return "output " + std::to_string(k) + " type or rank differs from the input";
            for (std::int32_t d = 0; d < rank; ++d)
                if (d != axis && y.shape[static_cast<std::size_t>(d)] != x.shape[static_cast<std::size_t>(d)])
                    return "output " + std::to_string(k) + " " + shape_text(y.shape) + " does not match the input " +
                           shape_text(x.shape) + " off the axis";
            if (y.shape[static_cast<std::size_t>(axis)] <= 0) return "output " + std::to_string(k) + " is empty";
            sum += y.shape[static_cast<std::size_t>(axis)];
        }
        if (sum != x.shape[static_cast<std::size_t>(axis)]) return "output sizes along the axis do not add up to the input's";
        if constexpr (is_v) {
            const auto sizes = const_ints(g, input_at(o, 1));
            if (!sizes) return "size_splits must be a constant";
            if (sizes->size() != o.outputs.size()) return "size_splits has " + std::to_string(sizes->size()) + " entries for " + std::to_string(o.outputs.size()) + " outputs";
            for (std::size_t k = 0; k < sizes->size(); ++k)
                if ((*sizes)[k] != -1 && (*sizes)[k] != g.t(o.outputs[k]).shape[static_cast<std::size_t>(axis)])
                    return "size_splits entry " + std::to_string(k) + " does not match output " + std::to_string(k);
        } else {
            if (x.shape[static_cast<std::size_t>(axis)] % static_cast<std::int32_t>(o.outputs.size()) != 0)
                return "the axis size is not divisible by num_splits";
        }
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        const auto in = data(o);
        const auto& x = c.g.t(in);
        const auto rank = static_cast<std::int32_t>(x.rank());
        const auto axis = split_axis(c.g, axis_tensor(o), rank);
        n.tensors.push_back(c.desc(in));
        std::vector<std::int32_t> sizes;
        for (auto t : o.outputs) {
            n.tensors.push_back(c.desc(t));
            sizes.push_back(c.g.t(t).shape[static_cast<std::size_t>(axis)]);  // resolves SPLIT_V's -1
        }
        n.rec.num_inputs = 1;
        n.rec.num_outputs = static_cast<std::int32_t>(o.outputs.size());
        format::node_options::SplitOptions so{};
        so.axis = cf_axis_negative(axis, rank);
        so.max_split = *std::max_element(sizes.begin(), sizes.end());
        so.splits = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(sizes))};
        n.set(so);
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::SPLIT> : movement::split_trait<builtin_operator::SPLIT> {
    using tflite_options = tflite::opt::SplitOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.num = x.num_splits;
    }
    static constexpr std::uint8_t data_input = 1;  // input 0 is the axis
};
template <>
struct op<builtin_operator::SPLIT_V> : movement::split_trait<builtin_operator::SPLIT_V> {
    using tflite_options = tflite::opt::SplitVOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.num = x.num_splits;
    }
};

template <>
struct op<builtin_operator::PACK> {
    static constexpr builtin_operator code = builtin_operator::PACK;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "pack (stack) along any axis";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::PACK);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::layer_options::PackOptions;
    using tflite_options = tflite::opt::PackOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.num = x.values_count;
        o.axis = x.axis;
    }
    static constexpr std::string_view axes = "any axis";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.empty() || o.outputs.size() != 1) return "needs inputs and one output";
        if (auto r = check_activation_inputs(g, o); !r.empty()) return r;
        if (o.options.num != static_cast<std::int32_t>(o.inputs.size()))
            return "values_count " + std::to_string(o.options.num) + " differs from the " + std::to_string(o.inputs.size()) + " inputs";
        const auto& x0 = g.t(o.inputs[0]);
        const auto& out = g.t(o.outputs[0]);
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        if (out.rank() != x0.rank() + 1) return "output rank must be the input rank + 1";
        const auto axis = normalize_axis(o.options.axis, static_cast<std::int64_t>(out.rank()));
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the output rank";
        for (std::size_t i = 0; i < o.inputs.size(); ++i) {
            const auto& x = g.t(o.inputs[i]);
            if (x.shape != x0.shape || x.type != out.type) return "input " + std::to_string(i) + " shape or type differs";
        }
        auto expect = x0.shape;
        expect.insert(expect.begin() + axis, static_cast<std::int32_t>(o.inputs.size()));
        if (expect != out.shape) return "output " + shape_text(out.shape) + " is not the inputs stacked on axis " + std::to_string(axis);
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        for (auto t : o.inputs) n.tensors.push_back(c.desc(t));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = static_cast<std::int32_t>(o.inputs.size());
        n.rec.num_outputs = 1;
        const auto idims = static_cast<std::int32_t>(c.g.t(o.inputs[0]).rank());
        const auto odims = idims + 1;
        // Every axis is accepted: the simulator stacks in TFLite order, so the SDK's
        // representability check (lowering.md §7.2) is not needed.
        format::node_options::PackOptions p{};
        p.axis = movement::cf_axis_negative(movement::normalize_axis(o.options.axis, odims), odims);
        p.count = o.options.num;
        p.dims = idims;
        n.set(p);
    }
};

template <>
struct op<builtin_operator::UNPACK> {
    static constexpr builtin_operator code = builtin_operator::UNPACK;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "unpack (unstack) along any axis, every output described";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::UNPACK);
    using member = format::layer_options::PackOptions;
    using tflite_options = tflite::opt::UnpackOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.num = x.num;
        o.axis = x.axis;
    }
    static constexpr std::string_view axes = "any axis";
    static constexpr std::string_view notes = "every output is described (the SDK describes only the first)";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 1 || o.inputs[0] < 0 || o.outputs.empty()) return "needs one input and outputs";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto axis = normalize_axis(o.options.axis, static_cast<std::int64_t>(x.rank()));
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the input rank";
        if (x.shape[static_cast<std::size_t>(axis)] != static_cast<std::int32_t>(o.outputs.size()) ||
            o.options.num != static_cast<std::int32_t>(o.outputs.size()))
            return "num and the output count must equal the axis size " + std::to_string(x.shape[static_cast<std::size_t>(axis)]);
        auto expect = x.shape;
        expect.erase(expect.begin() + axis);
        for (std::size_t k = 0; k < o.outputs.size(); ++k)
            if (g.t(o.outputs[k]).shape != expect || g.t(o.outputs[k]).type != x.type)
                return "output " + std::to_string(k) + " is not the input without axis " + std::to_string(axis);
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        // The SDK describes only the first output [quirk]; every output is listed here so
        // the layer writes all of them.
        for (std::size_t k = 1; k < o.outputs.size(); ++k) l.tensors.push_back(c.desc(o.outputs[k]));
        l.rec.num_outputs = static_cast<std::int32_t>(o.outputs.size());
        l.rec.num_tensors = 1 + l.rec.num_outputs;
        const auto idims = static_cast<std::int32_t>(c.g.t(o.inputs[0]).rank());
        format::layer_options::PackOptions p{};
        p.axis = movement::cf_axis_negative(movement::normalize_axis(o.options.axis, idims), idims);
        p.count = o.options.num;
        p.dims = idims;
        l.set(p);
    }
};

template <>
struct op<builtin_operator::TILE> {
    static constexpr builtin_operator code = builtin_operator::TILE;
    static constexpr bool own_node = true;  // always starts a node of its own (lowering.md §5, rule 5)
    static constexpr std::string_view summary = "tile with constant multiples, rank <= 4";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::TILE);
    static constexpr std::int32_t layer_type = no_layer;
    using member = format::node_options::TileOptions;
    static constexpr rank_range ranks{1, 4};
    static constexpr std::string_view notes = "the multiples constant is not listed as a node input (an SDK artefact)";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, multiples and one output";
        if (g.t(o.inputs[0]).is_constant()) return "the data input is a constant; only activations are supported";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        if (x.rank() < 1 || x.rank() > 4) return "input rank " + std::to_string(x.rank()) + " is outside 1..4 (TileOptions holds 4 multiples)";
        const auto m = const_ints(g, o.inputs[1]);
        if (!m) return "multiples must be a constant int32/int64 tensor";
        if (m->size() != x.rank()) return "multiples needs one entry per input axis";
        auto expect = x.shape;
        for (std::size_t i = 0; i < m->size(); ++i) {
            if ((*m)[i] < 1) return "multiple " + std::to_string(i) + " must be at least 1";
            expect[i] = static_cast<std::int32_t>(expect[i] * (*m)[i]);
        }
        if (expect != g.t(o.outputs[0]).shape || g.t(o.outputs[0]).type != x.type) return "output shape or type does not match the tiling";
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        // The SDK also lists the multiples constant as a node input [quirk]; it has no
        // producer and nothing reads it, so only the data input is listed here.
        n.tensors.push_back(c.desc(o.inputs[0]));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = 1;
        n.rec.num_outputs = 1;
        const auto m = *movement::const_ints(c.g, o.inputs[1]);
        auto v = [&](std::size_t i) { return static_cast<std::int32_t>(m[i]); };
        format::node_options::TileOptions t{};
        switch (m.size()) {  // channels-first [n, c, h, w] (lowering.md §7.2)
            case 1: t.tile = {1, 1, 1, v(0)}; break;
            case 2: t.tile = {1, 1, v(0), v(1)}; break;
            case 3: t.tile = {1, v(2), v(0), v(1)}; break;
            default: t.tile = {v(0), v(3), v(1), v(2)}; break;
        }
        n.set(t);
    }
};

}  // namespace vnnx::ops
