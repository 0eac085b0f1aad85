#pragma once
// The operators of lowering.md §6: every key of the SDK's supported-operator list. `vnnx ops`
// lists those without a trait as not supported, so the OPS table shows what is still missing.
#include <algorithm>
#include <array>
#include <string_view>

#include "vnnx/format/builtin_operator.hpp"

namespace vnnx::ops {

/// The TFLite builtins among the 75 rows of §6 (SILU there has no builtin: it is the
/// LOGISTIC→MUL pattern, see `patterns`). UNIDIRECTIONAL_SEQUENCE_LSTM is listed but has no lowering.
inline constexpr std::array sdk_operators{
    builtin_operator::ABS, builtin_operator::ADD, builtin_operator::ARG_MAX, builtin_operator::ARG_MIN,
    builtin_operator::AVERAGE_POOL_2D, builtin_operator::BATCH_MATMUL, builtin_operator::BATCH_TO_SPACE_ND,
    builtin_operator::CAST, builtin_operator::CONCATENATION, builtin_operator::CONV_2D,
    builtin_operator::DEPTHWISE_CONV_2D, builtin_operator::DEPTH_TO_SPACE, builtin_operator::DEQUANTIZE,
    builtin_operator::DILATE, builtin_operator::DIV, builtin_operator::ELU, builtin_operator::EQUAL,
    builtin_operator::EXP, builtin_operator::EXPAND_DIMS, builtin_operator::FULLY_CONNECTED, builtin_operator::GATHER,
    builtin_operator::GELU, builtin_operator::GREATER, builtin_operator::GREATER_EQUAL, builtin_operator::HARD_SWISH,
    builtin_operator::L2_NORMALIZATION, builtin_operator::LEAKY_RELU, builtin_operator::LESS,
    builtin_operator::LESS_EQUAL, builtin_operator::LOG, builtin_operator::LOGISTIC, builtin_operator::LOG_SOFTMAX,
    builtin_operator::MAXIMUM, builtin_operator::MAX_POOL_2D, builtin_operator::MEAN, builtin_operator::MINIMUM,
    builtin_operator::MIRROR_PAD, builtin_operator::MUL, builtin_operator::NEG, builtin_operator::NOT_EQUAL,
    builtin_operator::PACK, builtin_operator::PAD, builtin_operator::PADV2, builtin_operator::POW,
    builtin_operator::PRELU, builtin_operator::QUANTIZE, builtin_operator::REDUCE_MAX, builtin_operator::REDUCE_MIN,
    builtin_operator::REDUCE_PROD, builtin_operator::RELU, builtin_operator::RELU6, builtin_operator::RELU_0_TO_1,
    builtin_operator::RELU_N1_TO_1, builtin_operator::RESHAPE, builtin_operator::RESIZE_BILINEAR,
    builtin_operator::RESIZE_NEAREST_NEIGHBOR, builtin_operator::RSQRT, builtin_operator::SLICE,
    builtin_operator::SOFTMAX, builtin_operator::SPACE_TO_BATCH_ND, builtin_operator::SPACE_TO_DEPTH,
    builtin_operator::SPLIT, builtin_operator::SPLIT_V, builtin_operator::SQUARED_DIFFERENCE, builtin_operator::SQUEEZE,
    builtin_operator::STRIDED_SLICE, builtin_operator::SUB, builtin_operator::SUM, builtin_operator::TANH,
    builtin_operator::TILE, builtin_operator::TRANSPOSE, builtin_operator::TRANSPOSE_CONV,
    builtin_operator::UNIDIRECTIONAL_SEQUENCE_LSTM, builtin_operator::UNPACK};
static_assert(sdk_operators.size() == 74, "75 rows of lowering.md §6 minus SILU");

[[nodiscard]] constexpr bool in_sdk_list(builtin_operator op) noexcept {
    return std::find(sdk_operators.begin(), sdk_operators.end(), op) != sdk_operators.end();
}

/// Why an operator of the SDK's list has no lowering (the compiler's message and `vnnx ops`).
[[nodiscard]] constexpr std::string_view why_unsupported(builtin_operator op) noexcept {
    if (op == builtin_operator::UNIDIRECTIONAL_SEQUENCE_LSTM)
        return "its output and cell states (inputs 18 and 19) are variable tensors that persist from one "
               "invocation to the next, and a VNNX model keeps no tensor between runs; and TFLite's 8-bit LSTM "
               "computes its gates and cell in 16 bits (int16 gate sums, 16-bit sigmoid and tanh, int16 cell), "
               "where VNNX's tables and element-wise layers take 8-bit operands, so an unrolled lowering "
               "(FULLY_CONNECTED, LOGISTIC/TANH tables, MUL, ADD) would compute other numbers";
    return {};
}

/// Rows of §6 that are patterns of several TFLite operators rather than one builtin.
struct pattern {
    std::string_view name, becomes;
};
inline constexpr std::array patterns{
    pattern{"SILU", "LOGISTIC followed by MUL with its input: one LUT (303) layer"},
};

}  // namespace vnnx::ops
