#pragma once
// RESHAPE (22), SQUEEZE (43), EXPAND_DIMS (70) → RESHAPE layer with ReshapeOptions
// (lowering.md §7.4.1). All three are a reshape to the TFLite output shape: the SDK routes
// SQUEEZE and EXPAND_DIMS through the same code but reads their input 1 as a shape and fails
// [quirk]; here they become RESHAPE layers like RESHAPE itself. `mode` is the SDK's
// classification of the move; the simulator can perform any reshape (it re-reads the data in
// TFLite order), so the modes the SDK rejects (-1) are compiled too, with mode -1 recorded.
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/ops/movement.hpp"

namespace vnnx::ops {

namespace movement {

/// The SDK's ReshapeOptions.mode for TFLite shapes `is` → `os` (lowering.md §7.4.1, checks in
/// the SDK's order). Cases where the SDK stops (assertion, index error, "not supported") give -1.
inline std::int32_t reshape_mode(const std::vector<std::int32_t>& is, const std::vector<std::int32_t>& os) {
    if (is == os) return 0;
    const auto idims = static_cast<std::int32_t>(is.size());
    const auto odims = static_cast<std::int32_t>(os.size());
    auto ones = [](const std::vector<std::int32_t>& s) {
        std::int32_t n = 0;
        for (auto d : s) n += d == 1;
        return n;
    };
    auto at = [](const std::vector<std::int32_t>& s, std::int32_t neg) {  // s[neg], neg < 0
        return s[static_cast<std::size_t>(static_cast<std::int32_t>(s.size()) + neg)];
    };
    auto without = [](const std::vector<std::int32_t>& s, std::int32_t neg) {
        std::vector<std::int32_t> out;
        const auto skip = static_cast<std::int32_t>(s.size()) + neg;
        for (std::int32_t i = 0; i < static_cast<std::int32_t>(s.size()); ++i)
            if (i != skip) out.push_back(s[static_cast<std::size_t>(i)]);
        return out;
    };
    // Squeeze: one dim of 1 removed.
    if (ones(is) - 1 == ones(os) && idims - 1 == odims && idims > 3) {
        std::int32_t axis = 0;
        for (std::int32_t i = -1; i >= -idims; --i)
            if (without(is, i) == os) {
                axis = i;
                break;
            }
        switch (axis) {
            case -1: return 5;
            case -2: return 6;
            case -3: return 7;
            case -4: return 4;
            default: return -1;
        }
    }
    // Expand: one dim of 1 inserted.
    if (ones(is) + 1 == ones(os) && idims > 2) {
        std::int32_t axis = 0;
        for (std::int32_t i = -1; i >= -odims; --i)
            if (without(os, i) == is) {
                axis = i;
                break;
            }
        if (axis == -1) return idims == 3 ? 8 : 9;
        if (axis == -2) return 10;
        if (axis == -3) return 11;
        return -1;
    }
    // Join: two adjacent dims multiplied.
    if (idims - 1 == odims && idims > 3) {
        std::int32_t axis = 0;
        for (std::int32_t i = 1; i < idims; ++i)
            if (static_cast<std::int64_t>(at(is, -i)) * at(is, -i - 1) == at(os, -i)) {
                axis = -i;
                break;
            }
        if (axis == -1) return 13;
        if (axis == -2) return 14;
        if (axis == -3) return 15;
        return -1;
    }
    // Separate: one dim split in two.
    if (idims + 1 == odims) {
        std::int32_t axis = 0;
        for (std::int32_t i = 1; i < odims; ++i)
            if (static_cast<std::int64_t>(at(os, -i)) * at(os, -i - 1) == at(is, -i)) {
                axis = -i;
                break;
            }
        if (axis == -1) return 17;
        if (axis == -2) return 18;
        if (axis == -3) return 19;
        return -1;
    }
    if (idims == odims) {
        // Same rank: only the "channels first to last" swap is known; rank < 3 stops the SDK.
        if (idims >= 3 && at(os, -3) == at(is, -1) && at(os, -2) == at(is, -3) && at(os, -1) == at(is, -2)) return 2;
        return -1;
    }
    // Flatten to channels, or its inverse.
    auto flatten_n = [](const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
        const auto da = static_cast<std::int32_t>(a.size()), db = static_cast<std::int32_t>(b.size());
        if (da - db <= 0 || db == 0) return false;
        const std::int32_t n = 1 + da - db;
        std::int64_t p = 1;
        for (std::int32_t i = da - n; i < da; ++i) p *= a[static_cast<std::size_t>(i)];
        return b.back() == p;
    };
    if (flatten_n(is, os) || flatten_n(os, is)) return 0;
    return -1;
}

/// Shared trait of the three reshape operators.
template <builtin_operator Code>
struct reshape_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::RESHAPE     ? "reshape (any shape change; data re-laid out channels-first)"
        : Code == builtin_operator::SQUEEZE ? "squeeze, lowered as a reshape to the output shape"
                                            : "expand_dims, lowered as a reshape to the output shape";
    static constexpr auto dtypes = any_int_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::RESHAPE);
    using member = format::layer_options::ReshapeOptions;
    static constexpr std::string_view notes =
        Code == builtin_operator::RESHAPE ? "reshapes changing several axes at once compile (the SDK stops on them)"
                                          : "lowered as RESHAPE (the SDK does not serialize its mode and fails)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one data input and one output";
        // A second operand (shape / axis) must be a constant so the node has one activation input.
        if (const auto s = input_at(o, 1); s >= 0 && !g.t(s).is_constant())
            return "input 1 (" + std::string(Code == builtin_operator::EXPAND_DIMS ? "axis" : "shape") + ") must be a constant";
        const auto& in = g.t(o.inputs[0]);
        const auto& out = g.t(o.outputs[0]);
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        if (in.type != out.type) return "output type must equal the input type";
        if (in.element_count() != out.element_count())
            return "output " + shape_text(out.shape) + " does not hold the elements of input " + shape_text(in.shape);
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& is = c.g.t(o.inputs[0]).shape;
        const auto& os = c.g.t(o.outputs[0]).shape;
        format::layer_options::ReshapeOptions r{};
        r.mode = reshape_mode(is, os);
        // The SDK's flag (lowering.md §7.4.1); the simulator always moves the data itself.
        l.rec.nop = ((r.mode == 0 || r.mode == 4 || r.mode == 8) && is.size() <= os.size()) ? 1 : 0;
        l.set(r);
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::RESHAPE> : movement::reshape_trait<builtin_operator::RESHAPE> {
    using tflite_options = tflite::opt::ReshapeOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.new_shape = x.new_shape;
    }
};
template <>
struct op<builtin_operator::SQUEEZE> : movement::reshape_trait<builtin_operator::SQUEEZE> {
    using tflite_options = tflite::opt::SqueezeOptions;
    static void read_options(const tflite_options::value& x, compiler::op_options& o) {
        o.squeeze_dims = x.squeeze_dims;
    }
};
template <>
struct op<builtin_operator::EXPAND_DIMS> : movement::reshape_trait<builtin_operator::EXPAND_DIMS> {};

}  // namespace vnnx::ops
