#pragma once
// Which operators of a model cannot be compiled, all of them at once, each with the rule it
// breaks: the one place that judges this. `vnnx compile` fails with every problem in one error,
// `vnnx info` lists the same problems.
#include <string>
#include <vector>

#include "vnnx/ir/float_island.hpp"
#include "vnnx/ir/graph.hpp"
#include "vnnx/compiler/import.hpp"
#include "vnnx/compiler/passes/fold_shapes.hpp"
#include "vnnx/compiler/passes/simplify.hpp"
#include "vnnx/ops/registry.hpp"
#include "vnnx/support/linkage.hpp"

namespace vnnx::compiler {

struct problem {
    std::int32_t index = -1;  // operator index in the TFLite file
    std::string op;           // "CONV_2D", "CUSTOM:name"
    std::string reason;
};

namespace detail {
inline bool reads_or_writes_float(const graph& g, const op& o) {
    auto is_float = [&](std::int32_t t) {
        if (t < 0) return false;
        const auto ty = g.t(t).type;
        return !g.t(t).is_constant() && (ty == tensor_type::FLOAT32 || ty == tensor_type::FLOAT16);
    };
    for (auto t : o.inputs)
        if (is_float(t)) return true;
    for (auto t : o.outputs)
        if (is_float(t)) return true;
    return false;
}
inline bool is_one_of(const std::vector<std::int32_t>& v, std::int32_t t) {
    for (auto x : v)
        if (x == t) return true;
    return false;
}
}  // namespace detail

/// The rule operator `k` of `g` breaks, or "" when the compiler takes it.
inline std::string problem_of(const graph& g, std::size_t k) {
    using B = builtin_operator;
    const op& o = g.ops[k];
    if (o.code == B::CUSTOM) return "custom operator '" + o.custom_code + "' is not supported";
    // Float at the graph boundary is removed (REMOVE_FP32_IO); float anywhere else is not integer compute.
    const bool boundary_quantize = o.code == B::QUANTIZE && !o.inputs.empty() && detail::is_one_of(g.inputs, o.inputs[0]);
    const bool boundary_dequantize = o.code == B::DEQUANTIZE && !o.outputs.empty() && detail::is_one_of(g.outputs, o.outputs[0]);
    if (boundary_quantize || boundary_dequantize) return "";
    // A DEQUANTIZE → float ops → QUANTIZE island becomes one table (the LUT pass); its closing
    // QUANTIZE has nothing left to check.
    if (detail::reads_or_writes_float(g, o)) {
        if (!in_float_island(g, k)) return "computes in floating point; only integer (int8/uint8) models are supported";
        return o.code == B::QUANTIZE ? std::string() : ops::check(g, o);
    }
    return ops::check(g, o);
}

/// Problems of the imported graph (before transforms), in operator order.
VNNX_ENTRY std::vector<problem> find_problems(const graph& g);
#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY std::vector<problem> find_problems(const graph& g) {
    std::vector<problem> out;
    for (std::size_t k = 0; k < g.ops.size(); ++k) {
        const op& o = g.ops[k];
        problem p;
        p.index = o.source_index;
        p.op = o.code == builtin_operator::CUSTOM ? "CUSTOM:" + o.custom_code : std::string(builtin_name(o.code));
        p.reason = problem_of(g, k);
        if (!p.reason.empty()) out.push_back(std::move(p));
    }
    return out;
}
#endif

/// The graph the checks judge: imported, shape arithmetic on constants folded, an input CAST
/// folded into its QUANTIZE.
VNNX_ENTRY graph checked_graph(const tflite::model_view& m, constant_storage storage = constant_storage::copy);
#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY graph checked_graph(const tflite::model_view& m, constant_storage storage) {
    graph g = import_graph(m, storage);
    passes::fold_shapes(g);
    passes::fold_input_cast(g);
    return g;
}
#endif

/// Problems of a TFLite model exactly as `vnnx compile` meets them: checked_graph(), then the
/// checks above. A model the import refuses is one problem with index -1 and the import's message.
VNNX_ENTRY std::vector<problem> find_problems(const tflite::model_view& m);
#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY std::vector<problem> find_problems(const tflite::model_view& m) {
    graph g;
    try {
        g = checked_graph(m);
    } catch (const vnnx::error& e) {
        return {problem{-1, "", e.what()}};
    }
    return find_problems(g);
}
#endif

inline std::string format_problems(const std::string& source, const std::vector<problem>& ps) {
    std::string s = source + ": " + std::to_string(ps.size()) + " operator" + (ps.size() == 1 ? "" : "s") +
                    " cannot be compiled:";
    for (const auto& p : ps)
        s += p.index < 0 ? "\n  " + p.reason : "\n  operator " + std::to_string(p.index) + " (" + p.op + "): " + p.reason;
    return s;
}

}  // namespace vnnx::compiler
