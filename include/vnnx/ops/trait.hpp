#pragma once
// An operator trait: everything the project knows about one TFLite operator, as compile-time
// facts plus its lowering. `op<Code>` is specialised once per supported operator (ops/*.hpp)
// and listed once in ops/registry.hpp; the registry folds the traits into constexpr tables.
//
// A trait provides:
//   code, summary                         the operator and one line for the OPS table
//   dtypes       meta::value_set<tensor_type...>  allowed types of the data input
//   activations  meta::value_set<activation...>   allowed fused activations (NONE when it has none)
//   node_type    VNNX node type when it starts a node, or identity_node (an IDENTITY node runs it as a layer)
//   layer_type   VNNX layer type when it is a layer, or no_layer
//   member       the union member type the record fills (format::node_options::X or
//                layer_options::X), or no_member; tied at compile time to the member the
//                format's type table gives the node and layer types (ops_sim_ties_test)
//   check(g, o)  further rules; returns "" or the rule the operator breaks
//   lower_node(ctx, o) / lower_layer(ctx, o)
// Optional facts the compiler's passes read from the registry (absent: the default):
//   tflite_options   the TFLite options table it reads (tflite::opt::X), with
//   read_options(x, o)  copying the fields it uses from its decoded value (tflite_options::value)
//                    into the graph's op_options (import)
//   data_input       index of the data input (0): 1 for SPLIT, 2 for TRANSPOSE_CONV
//   replay           false when its node must not be replayed (use_replay = 0); true
//   own_node         true when it always starts a node of its own (split rule 5); false
//   tile(g, o, in, first, L)  sets the tiler's model of the operator (kind and parameters,
//                    lowering.md §10) and returns true; absent or false: an element-wise
//                    copy (identity when it starts its node)
// Optional, shown by `vnnx ops` and enforced by ops::check() where they are sets:
//   ranks        rank_range{min, max} of the data input (absent: whatever check() allows)
//   paddings     meta::value_set<padding_mode...>  allowed paddings (operators with a padding option)
//   axes         the axes the operator works on, in words
//   notes        where the result deliberately differs from the SDK's (a [quirk] of lowering.md fixed)
#include <concepts>
#include <cstdint>
#include <string>
#include <string_view>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/ir/tiling_model.hpp"
#include "vnnx/meta/set.hpp"
#include "vnnx/ops/lowering.hpp"

namespace vnnx::ops {

using tflite::activation_function;
using tflite::tensor_type;

inline constexpr std::int32_t identity_node = -1;
inline constexpr std::int32_t no_layer = -1;

/// Specialised per supported operator; the primary template marks "unsupported".
template <builtin_operator Code>
struct op {
    static constexpr bool supported = false;
};

using int8_types = meta::value_set<tensor_type::INT8, tensor_type::UINT8>;
using no_activation = meta::value_set<activation_function::NONE>;
using tflite::padding_mode;
using any_padding = meta::value_set<padding_mode::SAME, padding_mode::VALID>;

/// The `member` of a trait whose records fill no union member.
struct no_member {
    static constexpr std::string_view member_name{};
};

/// Allowed ranks of the data input, both ends included.
struct rank_range {
    std::int32_t min = 0, max = 0;
};

/// The tiler's model of an operator that needs its whole axis in a tile (SOFTMAX and, like it,
/// LOG_SOFTMAX and L2_NORMALIZATION): the maps axis of a rank >= 3 input, else the columns.
inline bool tile_whole_axis(const graph& g, std::int32_t in, compiler::layer& L) {
    L.kind = compiler::op_kind::softmax;
    L.softmax_axis = g.t(in).shape.size() >= 3 ? -3 : -1;
    return true;
}

template <class T>
concept operator_trait = requires(const graph& g, const compiler::op& o) {
    { T::code } -> std::convertible_to<builtin_operator>;
    { T::summary } -> std::convertible_to<std::string_view>;
    { T::node_type } -> std::convertible_to<std::int32_t>;
    { T::layer_type } -> std::convertible_to<std::int32_t>;
    { T::member::member_name } -> std::convertible_to<std::string_view>;
    T::dtypes;
    T::activations;
    { T::check(g, o) } -> std::convertible_to<std::string>;
};

}  // namespace vnnx::ops
