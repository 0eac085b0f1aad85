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
//   member       union member the record fills ("" when none)
//   check(g, o)  further rules; returns "" or the rule the operator breaks
//   lower_node(ctx, o) / lower_layer(ctx, o)
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

/// Allowed ranks of the data input, both ends included.
struct rank_range {
    std::int32_t min = 0, max = 0;
};

template <class T>
concept operator_trait = requires(const graph& g, const compiler::op& o) {
    { T::code } -> std::convertible_to<builtin_operator>;
    { T::summary } -> std::convertible_to<std::string_view>;
    { T::node_type } -> std::convertible_to<std::int32_t>;
    { T::layer_type } -> std::convertible_to<std::int32_t>;
    { T::member } -> std::convertible_to<std::string_view>;
    T::dtypes;
    T::activations;
    { T::check(g, o) } -> std::convertible_to<std::string>;
};

}  // namespace vnnx::ops
