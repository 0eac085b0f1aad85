#pragma once
// Which union member a node or layer record holds, chosen by its `type` (the SDK's
// enum_to_union_name in vnnx_types.py; vnnx-format.md §4). The SDK's table is kept as it is,
// including names that exist in neither union (LSTMOptions, greater_broadcast, ...): records
// of those types have no member, their union is all zero.
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/records.hpp"

namespace vnnx::format {

namespace detail {
using B = builtin_operator;
using V = vnnx_operator;
constexpr std::int32_t code(B b) noexcept { return static_cast<std::int32_t>(b); }
constexpr std::int32_t code(V v) noexcept { return static_cast<std::int32_t>(v); }

inline constexpr std::pair<std::int32_t, std::string_view> union_names[] = {
    {code(B::CONV_2D), "Conv2DOptions"}, {code(B::FULLY_CONNECTED), "FullyConnectedOptions"},
    {code(B::BATCH_MATMUL), "BatchMatMulOptions"}, {code(B::CONCATENATION), "ConcatOptions"},
    {code(V::ELTWISE), "eltwise8"}, {code(V::PIXEL_SHUFFLE), "PixelShuffleOptions"},
    {code(B::TRANSPOSE_CONV), "Conv2DOptions"}, {code(B::UNIDIRECTIONAL_SEQUENCE_LSTM), "LSTMOptions"},
    {code(B::TRANSPOSE), "TransposeOptions"}, {code(B::RESIZE_NEAREST_NEIGHBOR), "ResizeOptions"},
    {code(B::RESIZE_BILINEAR), "ResizeOptions"}, {code(B::SPACE_TO_DEPTH), ""},
    {code(B::ARG_MAX), "reduce8"}, {code(B::ARG_MIN), "reduce8"}, {code(B::TOPK_V2), "reduce8"},
    {code(B::REDUCE_MAX), "reduce8"}, {code(B::REDUCE_MIN), "reduce8"}, {code(B::REDUCE_PROD), "reduce8"},
    {code(B::SUM), "reduce8"}, {code(B::MEAN), "reduce8"}, {code(B::DEPTHWISE_CONV_2D), "Conv2DOptions"},
    {code(B::AVERAGE_POOL_2D), ""}, {code(B::MAX_POOL_2D), ""}, {code(B::LEAKY_RELU), "leakyrelu"},
    {code(B::PRELU), "prelu"}, {code(B::PAD), "PadOptions"}, {code(B::DILATE), "PadOptions"},
    {code(B::MUL), "broadcast8"}, {code(B::ADD), "broadcast8"}, {code(B::SUB), "broadcast8"},
    {code(B::SQUARED_DIFFERENCE), "broadcast8"}, {code(V::PREFETCH), "prefetch"},
    {code(B::SOFTMAX), "SoftmaxOptions"}, {code(B::TANH), "ActivationOptions"},
    {code(B::ELU), "ActivationOptions"}, {code(B::EXP), "ActivationOptions"}, {code(B::LOG), "ActivationOptions"},
    {code(B::GELU), "ActivationOptions"}, {code(V::LUT), "ActivationOptions"},
    {code(V::OUTPUT_SHAPER), "ShaperOptions"}, {code(B::LOGISTIC), "ActivationOptions"},
    {code(B::HARD_SWISH), "ActivationOptions"}, {code(B::RSQRT), "ActivationOptions"},
    {code(B::LOG_SOFTMAX), "LogSoftmaxOptions"}, {code(B::GREATER), "greater_broadcast"},
    {code(B::GREATER_EQUAL), "greater_equal_broadcast"}, {code(B::LESS), "less_broadcast"},
    {code(B::LESS_EQUAL), "less_equal_broadcast"}, {code(B::EQUAL), "equal_broadcast"},
    {code(B::NOT_EQUAL), "not_equal_broadcast"}, {code(B::SLICE), "SliceOptions"},
    {code(B::STRIDED_SLICE), "SliceOptions"}, {code(B::GATHER), "GatherOptions"},
    {code(B::MIRROR_PAD), "MirrorPadOptions"}, {code(B::RESHAPE), "ReshapeOptions"},
    {code(B::SPACE_TO_BATCH_ND), "SpaceToBatchNDOptions"}, {code(B::BATCH_TO_SPACE_ND), "BatchToSpaceNDOptions"},
    {code(B::PACK), "PackOptions"}, {code(B::UNPACK), "PackOptions"}, {code(B::TILE), "TileOptions"},
    {code(B::SPLIT), "SplitOptions"}, {code(B::SPLIT_V), "SplitOptions"},
    {code(B::EMBEDDING_LOOKUP), "embedding"}, {code(B::MAXIMUM), "MinMaxOptions"},
    {code(B::MINIMUM), "MinMaxOptions"},
};
}  // namespace detail

/// The member name the SDK's table gives to `type` ("" when none).
[[nodiscard]] constexpr std::string_view union_name_for_type(std::int32_t type) noexcept {
    for (const auto& [t, name] : detail::union_names)
        if (t == type) return name;
    return {};
}

/// Index of the member of union U that a record of `type` holds, or nullopt when it holds none.
template <class U>
[[nodiscard]] constexpr std::optional<std::size_t> member_index_for_type(std::int32_t type) noexcept {
    const std::string_view name = union_name_for_type(type);
    if (name.empty()) return std::nullopt;
    const std::size_t i = U::index_of_name(name);
    if (i == U::member_count) return std::nullopt;
    return i;
}

/// The display name of a node/layer `type`: a TFLite builtin or a VNNX operator.
[[nodiscard]] constexpr std::string_view operator_name(std::int32_t type) noexcept {
    if (type >= 300 && type <= 306) return name_of(static_cast<vnnx_operator>(type));
    return builtin_name(type);
}

static_assert(member_index_for_type<node_union>(3) == 0 && member_index_for_type<layer_union>(4) == 0);
static_assert(!member_index_for_type<layer_union>(69).has_value());  // TILE: node only
static_assert(!member_index_for_type<layer_union>(61).has_value());  // SDK names greater_broadcast

}  // namespace vnnx::format
