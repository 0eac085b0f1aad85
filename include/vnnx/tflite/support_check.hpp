#pragma once
// Facts of a TFLite model judged from the file alone: float compute, multiply-accumulate
// counts and the per-model summary of `vnnx info`. Which operators the compiler cannot take is
// not judged here: compiler::find_problems() (compiler/verify.hpp) is the one place for that.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::tflite {

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
    return s;
}

}  // namespace vnnx::tflite
