#pragma once
// What the compiler can take, judged from the TFLite model alone: the operator list of
// lowering.md §6, custom operators, float compute. Until the compiler's operator registry
// exists, `vnnx info` reports unsupported operators from here (all of them at once).
// Also multiply-accumulate counts and a per-model summary.
#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::tflite {

/// The TFLite builtins among the 75 operators of lowering.md §6 (SILU there has no builtin: it
/// is a LOGISTIC->MUL pattern). UNIDIRECTIONAL_SEQUENCE_LSTM is listed but has no lowering.
inline constexpr std::array listed_operators{
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
static_assert(listed_operators.size() == 74, "75 rows of lowering.md §6 minus SILU");

[[nodiscard]] constexpr bool is_listed(builtin_operator op) noexcept {
    return std::find(listed_operators.begin(), listed_operators.end(), op) != listed_operators.end();
}

struct unsupported_op {
    std::size_t index = 0;
    std::string op;      // "CONV_2D" or "CUSTOM:<code>"
    std::string reason;  // the rule broken
};

[[nodiscard]] constexpr bool is_float(tensor_type t) noexcept {
    return t == tensor_type::FLOAT32 || t == tensor_type::FLOAT16 || t == tensor_type::FLOAT64;
}

namespace detail {
inline bool contains(std::span<const std::int32_t> list, std::int32_t v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

/// The first float tensor an operator computes with, ignoring float graph inputs of QUANTIZE and
/// float graph outputs of DEQUANTIZE (the compiler drops those at the boundary). -1 if none.
inline std::int32_t float_tensor(const subgraph_view& g, const operator_view& o) {
    const bool q_in = o.op() == builtin_operator::QUANTIZE;
    const bool dq_out = o.op() == builtin_operator::DEQUANTIZE;
    for (std::int32_t t : o.inputs())
        if (t >= 0 && is_float(g.tensor(static_cast<std::size_t>(t)).type()) && !(q_in && contains(g.inputs(), t)))
            return t;
    for (std::int32_t t : o.outputs())
        if (is_float(g.tensor(static_cast<std::size_t>(t)).type()) && !(dq_out && contains(g.outputs(), t))) return t;
    return -1;
}
}  // namespace detail

/// Every operator of the main graph the compiler cannot take, with each rule it breaks.
[[nodiscard]] inline std::vector<unsupported_op> check_support(const model_view& m) {
    std::vector<unsupported_op> out;
    const auto g = m.subgraph(0);
    for (std::size_t i = 0; i < g.operator_count(); ++i) {
        const auto o = g.op(i);
        std::vector<std::string> reasons;
        if (o.op() == builtin_operator::CUSTOM)
            reasons.push_back("custom operator '" + std::string(o.custom_code()) + "': the compiler takes builtin operators only");
        else if (o.op() == builtin_operator::UNIDIRECTIONAL_SEQUENCE_LSTM)
            reasons.push_back("UNIDIRECTIONAL_SEQUENCE_LSTM has no VNNX lowering (lowering.md §6 row 74)");
        else if (!is_listed(o.op()))
            reasons.push_back(std::string(builtin_name(o.op())) + " is not among the operators of lowering.md §6");
        if (const auto t = detail::float_tensor(g, o); t >= 0) {
            const auto tv = g.tensor(static_cast<std::size_t>(t));
            reasons.push_back("computes in float: tensor " + std::to_string(t) + " '" + std::string(tv.name()) + "' is " +
                              std::string(type_name(tv.type())) + " (only int8/uint8 compute is supported)");
        }
        if (reasons.empty()) continue;
        std::string joined;
        for (const auto& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
        out.push_back({i, o.name(), std::move(joined)});
    }
    return out;
}

/// True when no operator of the main graph computes in float.
[[nodiscard]] inline bool is_integer(const model_view& m) {
    const auto g = m.subgraph(0);
    for (std::size_t i = 0; i < g.operator_count(); ++i)
        if (detail::float_tensor(g, g.op(i)) >= 0) return false;
    return true;
}

/// Multiply-accumulates of one operator (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
/// TRANSPOSE_CONV, BATCH_MATMUL; 0 for the rest), from tensor shapes.
[[nodiscard]] inline std::uint64_t operator_macs(const subgraph_view& g, const operator_view& o) {
    auto tensor_at = [&](std::size_t k, std::span<const std::int32_t> list) -> std::optional<tensor_view> {
        if (k >= list.size() || list[k] < 0) return std::nullopt;
        return g.tensor(static_cast<std::size_t>(list[k]));
    };
    auto elems = [](const tensor_view& t) { return static_cast<std::uint64_t>(t.element_count()); };
    const auto in = o.inputs();
    const auto outs = o.outputs();
    switch (o.op()) {
        case builtin_operator::CONV_2D: {  // out elements x (kh * kw * in channels)
            auto w = tensor_at(1, in);
            auto y = tensor_at(0, outs);
            if (!w || !y || w->rank() != 4 || w->shape()[0] == 0) return 0;
            return elems(*y) * (elems(*w) / static_cast<std::uint64_t>(w->shape()[0]));
        }
        case builtin_operator::DEPTHWISE_CONV_2D: {  // out elements x kh x kw
            auto w = tensor_at(1, in);
            auto y = tensor_at(0, outs);
            if (!w || !y || w->rank() != 4) return 0;
            return elems(*y) * static_cast<std::uint64_t>(w->shape()[1]) * static_cast<std::uint64_t>(w->shape()[2]);
        }
        case builtin_operator::FULLY_CONNECTED: {  // out elements x input depth
            auto w = tensor_at(1, in);
            auto y = tensor_at(0, outs);
            if (!w || !y || w->rank() != 2) return 0;
            return elems(*y) * static_cast<std::uint64_t>(w->shape()[1]);
        }
        case builtin_operator::TRANSPOSE_CONV: {  // inputs: output_shape, weights [oc,kh,kw,ic], input
            auto w = tensor_at(1, in);
            auto x = tensor_at(2, in);
            if (!w || !x || w->rank() != 4 || w->shape()[3] == 0) return 0;
            return elems(*x) * (elems(*w) / static_cast<std::uint64_t>(w->shape()[3]));
        }
        case builtin_operator::BATCH_MATMUL: {  // out elements x contracted depth
            auto a = tensor_at(0, in);
            auto y = tensor_at(0, outs);
            if (!a || !y || a->rank() < 2) return 0;
            const bool adj_x = o.options<opt::BatchMatMulOptions>().adj_x;
            const auto s = a->shape();
            return elems(*y) * static_cast<std::uint64_t>(adj_x ? s[s.size() - 2] : s[s.size() - 1]);
        }
        default: return 0;
    }
}

[[nodiscard]] inline std::uint64_t count_macs(const model_view& m) {
    const auto g = m.subgraph(0);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < g.operator_count(); ++i) total += operator_macs(g, g.op(i));
    return total;
}

/// The facts `vnnx info` prints about a TFLite model.
struct model_summary {
    std::map<std::string, std::size_t> operators;  // name -> count
    std::vector<tensor_view> inputs, outputs;
    std::size_t tensors = 0;
    std::uint64_t macs = 0;
    bool integer = true;
    std::vector<unsupported_op> unsupported;
};

[[nodiscard]] inline model_summary summarize(const model_view& m) {
    model_summary s;
    const auto g = m.subgraph(0);
    for (std::size_t i = 0; i < g.operator_count(); ++i) ++s.operators[g.op(i).name()];
    for (auto t : g.inputs()) s.inputs.push_back(g.tensor(static_cast<std::size_t>(t)));
    for (auto t : g.outputs()) s.outputs.push_back(g.tensor(static_cast<std::size_t>(t)));
    s.tensors = g.tensor_count();
    s.macs = count_macs(m);
    s.integer = is_integer(m);
    s.unsupported = check_support(m);
    return s;
}

}  // namespace vnnx::tflite
