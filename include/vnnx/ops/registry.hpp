#pragma once
// The list of supported operators, folded at compile time into a table indexed by the TFLite
// builtin code: lookup is one array access, and an unsupported operator is known before any
// work starts. The same table drives `vnnx ops`, `vnnx info`'s diagnostics and the lowering.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "vnnx/ops/all.hpp"
#include "vnnx/ops/sdk_list.hpp"
#include "vnnx/ops/trait.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::ops {

struct entry {
    bool supported = false;
    builtin_operator code{};
    std::string_view summary;
    std::int32_t node_type = identity_node;
    std::int32_t layer_type = no_layer;
    std::string_view member;            // the union member's name ("" for no_member)
    std::uint32_t dtype_mask = 0;       // bit per tflite::tensor_type of the data input
    std::uint32_t activation_mask = 0;  // bit per fused activation_function
    std::uint32_t padding_mask = 0;     // bit per padding_mode; 0: the operator has no padding option
    rank_range ranks{};                 // {0, 0}: not stated by the trait
    std::string_view axes;
    std::string_view notes;
    std::string (*check)(const graph&, const compiler::op&) = nullptr;
    void (*lower_node)(lowering&, const compiler::op&) = nullptr;
    void (*lower_layer)(lowering&, const compiler::op&) = nullptr;
    // Whether the pointers above are set, as plain constants: comparing a function's address
    // with null is not a constant expression under the sanitizers (the compile-time ties).
    bool lowers_node = false, lowers_layer = false;
    // Reads the operator's TFLite options into the graph's op_options (null: it has none).
    void (*read_options)(const tflite::operator_view&, compiler::op_options&) = nullptr;
    std::uint8_t data_input = 0;  // index of the data input
    bool replay = true;           // its node may be replayed
    bool own_node = false;        // always starts a node of its own
    // Sets the tiler's model of the operator (null or false: the default, a copy).
    bool (*tile)(const graph&, const compiler::op&, std::int32_t in, bool first, compiler::layer&) = nullptr;
};

namespace detail {

template <class Set>
constexpr std::uint32_t mask_of() {
    std::uint32_t m = 0;
    Set::for_each([&](auto v) { m |= 1u << static_cast<unsigned>(v); });
    return m;
}

template <class T>
constexpr entry make_entry() {
    static_assert(operator_trait<T>, "an operator trait misses a required member");
    entry e;
    e.supported = true;
    e.code = T::code;
    e.summary = T::summary;
    e.node_type = T::node_type;
    e.layer_type = T::layer_type;
    e.member = T::member::member_name;
    e.dtype_mask = mask_of<decltype(T::dtypes)>();
    e.activation_mask = mask_of<decltype(T::activations)>();
    if constexpr (requires { T::paddings; }) e.padding_mask = mask_of<decltype(T::paddings)>();
    if constexpr (requires { T::ranks; }) e.ranks = T::ranks;
    if constexpr (requires { T::axes; }) e.axes = T::axes;
    if constexpr (requires { T::notes; }) e.notes = T::notes;
    e.check = &T::check;
    if constexpr (requires { typename T::tflite_options; })
        e.read_options = [](const tflite::operator_view& v, compiler::op_options& o) {
            T::read_options(v.options<typename T::tflite_options>(), o);
        };
    if constexpr (requires { T::data_input; }) e.data_input = T::data_input;
    if constexpr (requires { T::replay; }) e.replay = T::replay;
    if constexpr (requires { T::own_node; }) e.own_node = T::own_node;
    if constexpr (requires { &T::tile; }) e.tile = &T::tile;
    if constexpr (requires(lowering& c, const compiler::op& o) { T::lower_node(c, o); }) {
        e.lower_node = &T::lower_node;
        e.lowers_node = true;
    }
    if constexpr (requires(lowering& c, const compiler::op& o) { T::lower_layer(c, o); }) {
        e.lower_layer = &T::lower_layer;
        e.lowers_layer = true;
    }
    return e;
}

template <std::size_t... I>
constexpr std::array<entry, sizeof...(I)> make_table(std::index_sequence<I...>) {
    return {{[] {
        constexpr auto code = static_cast<builtin_operator>(I);
        if constexpr (requires { op<code>::summary; }) return make_entry<op<code>>();
        else {
            entry e;
            e.code = code;
            return e;
        }
    }()...}};
}

}  // namespace detail

inline constexpr auto table = detail::make_table(std::make_index_sequence<builtin_operator_count>{});
inline constexpr entry lut_entry = detail::make_entry<lut_op>();

[[nodiscard]] constexpr const entry& entry_for(builtin_operator code) noexcept {
    return table[static_cast<std::size_t>(code)];
}
[[nodiscard]] inline const entry& entry_for(const compiler::op& o) noexcept {
    return o.kind == compiler::op_type::lut ? lut_entry : entry_for(o.code);
}

/// The data input of an operator (lowering.md §1.3), as its trait says: input 1 for SPLIT, 2
/// for TRANSPOSE_CONV, else input 0.
[[nodiscard]] inline std::int32_t data_input(const compiler::op& o) {
    const std::size_t i = o.kind == compiler::op_type::builtin ? entry_for(o.code).data_input : 0;
    return i < o.inputs.size() ? o.inputs[i] : -1;
}

/// Whether the operator always starts a node of its own (lowering.md §5, rule 5), as its
/// trait says: the split pass's rule.
[[nodiscard]] inline bool starts_own_node(const compiler::op& o) noexcept { return entry_for(o).own_node; }

/// Copies the TFLite options of the operator `v` into `o`, through its trait's read_options
/// (an operator without a trait, or without options, leaves `o` at its defaults).
inline void read_options(const tflite::operator_view& v, compiler::op_options& o) {
    const auto code = v.op();
    if (static_cast<std::size_t>(code) >= table.size()) return;
    if (const auto f = table[static_cast<std::size_t>(code)].read_options) f(v, o);
}

/// Why the operator cannot be compiled, or "" when it can: the registry's constraints
/// (supported code, data type, fused activation) and then the trait's own rules.
[[nodiscard]] inline std::string check(const graph& g, const compiler::op& o) {
    const entry& e = entry_for(o);
    if (o.kind == compiler::op_type::builtin && o.code == builtin_operator::CUSTOM)
        return "custom operator '" + o.custom_code + "' is not supported";
    if (!e.supported) {
        const auto why = o.kind == compiler::op_type::builtin ? why_unsupported(o.code) : std::string_view{};
        return why.empty() ? std::string("operator is not supported") : "operator is not supported: " + std::string(why);
    }
    const std::int32_t in = data_input(o);
    if (in < 0) return "has no data input";
    const auto type = g.t(in).type;
    if ((e.dtype_mask & (1u << static_cast<unsigned>(type))) == 0)
        return "data input type " + std::string(tflite::type_name(type)) + " is not supported";
    if ((e.activation_mask & (1u << static_cast<unsigned>(o.options.fused))) == 0)
        return "fused activation " + std::string(tflite::activation_name(o.options.fused)) + " is not supported";
    if (e.padding_mask != 0 && (e.padding_mask & (1u << static_cast<unsigned>(o.options.pad))) == 0)
        return "padding " + std::string(o.options.pad == padding_mode::SAME ? "SAME" : "VALID") + " is not supported";
    if (e.ranks.max > 0) {
        const auto r = static_cast<std::int32_t>(g.t(in).rank());
        if (r < e.ranks.min || r > e.ranks.max)
            return "data input rank " + std::to_string(r) + " is outside " + std::to_string(e.ranks.min) + ".." +
                   std::to_string(e.ranks.max);
    }
    return e.check(g, o);
}

}  // namespace vnnx::ops
