#pragma once
// Which part of a model the VNNX file holds. By default the whole graph, every operator checked.
// A model that ends in float or int32 post-processing (MoveNet's keypoint decoding: ARG_MAX,
// FLOOR_DIV, GATHER_ND, DIV, SQRT, DEQUANTIZE) can be cut: the accelerator runs the integer
// part, the host the rest, and the tensors the host reads from the integer part become the
// VNNX outputs. The cut is automatic (only when the host is left post-processing: no
// convolution, fully connected or matrix product) or explicit (the tensors to compile up to).
#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::compiler {

enum class cut_mode {
    none,       // every operator must compile (the default)
    automatic,  // leave a post-processing tail the compiler cannot take to the host
};

struct cut_request {
    cut_mode mode = cut_mode::none;
    /// Tensors to compile up to (TFLite tensor names or indices); they become the VNNX outputs
    /// and only the operators they need are compiled. Overrides `mode`.
    std::vector<std::string> outputs;
};

struct partition {
    bool cut = false;                    // false: the whole graph, the model's own outputs
    std::vector<std::int32_t> outputs;   // tensor indices of the VNNX outputs, in order
    std::vector<std::int32_t> host_ops;  // TFLite indices of the operators left to the host
    std::vector<problem> reasons;        // the operators among them the compiler cannot take
    std::vector<std::string> output_names;  // the names of `outputs`
};

namespace detail {

/// Operators (positions in g.ops) that the tensors `wanted` depend on.
inline std::vector<bool> cone_of(const graph& g, const std::vector<std::int32_t>& wanted) {
    std::set<std::int32_t> need(wanted.begin(), wanted.end());
    std::vector<bool> in(g.ops.size(), false);
    for (std::size_t k = g.ops.size(); k-- > 0;) {
        const auto& o = g.ops[k];
        bool used = false;
        for (auto t : o.outputs) used = used || need.count(t) != 0;
        if (!used) continue;
        in[k] = true;
        for (auto t : o.inputs)
            if (t >= 0) need.insert(t);
    }
    return in;
}

inline bool heavy(const op& o) {
    using B = builtin_operator;
    return o.code == B::CONV_2D || o.code == B::DEPTHWISE_CONV_2D || o.code == B::FULLY_CONNECTED ||
           o.code == B::TRANSPOSE_CONV || o.code == B::BATCH_MATMUL || o.code == B::UNIDIRECTIONAL_SEQUENCE_LSTM;
}

inline std::string tensor_text(const graph& g, std::int32_t i) {
    const auto& t = g.t(i);
    std::string dims;
    for (std::size_t d = 0; d < t.shape.size(); ++d) dims += (d ? "x" : "") + std::to_string(t.shape[d]);
    return "tensor " + std::to_string(i) + " '" + t.name + "' (" + std::string(tflite::type_name(t.type)) + " " +
           (dims.empty() ? "scalar" : dims) + ")";
}

inline std::int32_t resolve_tensor(const graph& g, const std::string& what, const std::string& source) {
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (g.tensors[i].name == what) return static_cast<std::int32_t>(i);
    if (!what.empty() && what.find_first_not_of("0123456789") == std::string::npos && what.size() < 10) {
        const auto i = std::stol(what);
        if (i >= 0 && static_cast<std::size_t>(i) < g.tensors.size()) return static_cast<std::int32_t>(i);
    }
    fail(error_kind::bad_input, source + ": no tensor named '" + what + "' (give a tensor name or index)");
}

inline std::string problems_text(const graph& g, const std::vector<problem>& ps, const std::string& why) {
    std::string s = format_problems(g.source, ps);
    return why.empty() ? s : s + "\n" + why;
}

}  // namespace detail

/// The part of the checked graph (checked_graph()) to compile, or an error naming every
/// operator that stops it.
inline partition plan_partition(const graph& g, const cut_request& r) {
    partition p;
    const auto problems_in = [&](const std::vector<bool>& part) {
        std::vector<problem> out;
        for (std::size_t k = 0; k < g.ops.size(); ++k) {
            if (!part[k]) continue;
            const auto& o = g.ops[k];
            if (auto why = problem_of(g, k); !why.empty())
                out.push_back({o.source_index, o.code == builtin_operator::CUSTOM ? "CUSTOM:" + o.custom_code
                                                                                   : std::string(builtin_name(o.code)),
                               std::move(why)});
        }
        return out;
    };
    const auto host_of = [&](const std::vector<bool>& part) {
        for (std::size_t k = 0; k < g.ops.size(); ++k)
            if (!part[k]) p.host_ops.push_back(g.ops[k].source_index);
    };

    if (!r.outputs.empty()) {
        for (const auto& name : r.outputs) {
            const auto t = detail::resolve_tensor(g, name, g.source);
            if (g.t(t).is_constant()) fail(error_kind::bad_input, g.source + ": " + detail::tensor_text(g, t) + " is a constant");
            if (std::find(g.inputs.begin(), g.inputs.end(), t) != g.inputs.end())
                fail(error_kind::bad_input, g.source + ": " + detail::tensor_text(g, t) + " is a graph input");
            if (std::find(p.outputs.begin(), p.outputs.end(), t) == p.outputs.end()) p.outputs.push_back(t);
        }
        const auto part = detail::cone_of(g, p.outputs);
        if (std::find(part.begin(), part.end(), true) == part.end())
            fail(error_kind::bad_input, g.source + ": the requested outputs need no operator");
        if (auto ps = problems_in(part); !ps.empty())
            fail(error_kind::unsupported, detail::problems_text(g, ps, "(these operators are needed for the requested outputs)"));
        host_of(part);
        p.cut = p.outputs != g.outputs;
        for (auto t : p.outputs) p.output_names.push_back(g.t(t).name);
        return p;
    }

    auto problems = find_problems(g);
    if (problems.empty()) {
        p.outputs = g.outputs;
        for (auto t : p.outputs) p.output_names.push_back(g.t(t).name);
        return p;
    }
    if (r.mode == cut_mode::none) fail(error_kind::unsupported, format_problems(g.source, problems));

    // Forward: an operator runs on the accelerator when the compiler takes it and every
    // activation it reads comes from the graph inputs or from such operators.
    std::set<std::int32_t> ready(g.inputs.begin(), g.inputs.end());
    std::vector<bool> device(g.ops.size(), false);
    for (std::size_t k = 0; k < g.ops.size(); ++k) {
        const auto& o = g.ops[k];
        bool ok = problem_of(g, k).empty();
        for (auto t : o.inputs) ok = ok && (t < 0 || g.t(t).is_constant() || ready.count(t) != 0);
        if (!ok) continue;
        device[k] = true;
        for (auto t : o.outputs)
            if (t >= 0) ready.insert(t);
    }
    std::string refused;
    for (std::size_t k = 0; k < g.ops.size() && refused.empty(); ++k)
        if (!device[k] && detail::heavy(g.ops[k]))
            refused = "(no automatic cut: " + describe(g.ops[k]) + " would be left to the host, which takes only post-processing)";
    for (auto in : g.inputs) {
        bool read = false;
        for (std::size_t k = 0; k < g.ops.size(); ++k)
            for (auto t : g.ops[k].inputs) read = read || (device[k] && t == in);
        if (!read && refused.empty()) refused = "(no automatic cut: graph input " + detail::tensor_text(g, in) + " would be read only by the host)";
    }
    if (std::find(device.begin(), device.end(), true) == device.end() && refused.empty())
        refused = "(no automatic cut: no operator could run on the accelerator)";
    if (!refused.empty()) fail(error_kind::unsupported, detail::problems_text(g, problems, refused));

    // The VNNX outputs: what the host reads from the accelerator, and graph outputs computed there.
    std::set<std::int32_t> host_reads;
    for (std::size_t k = 0; k < g.ops.size(); ++k)
        if (!device[k])
            for (auto t : g.ops[k].inputs)
                if (t >= 0) host_reads.insert(t);
    for (std::size_t k = 0; k < g.ops.size(); ++k) {
        if (!device[k]) continue;
        for (auto t : g.ops[k].outputs)
            if (t >= 0 && (host_reads.count(t) != 0 || std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end()))
                p.outputs.push_back(t);
    }
    const auto part = detail::cone_of(g, p.outputs);
    host_of(part);
    p.reasons = std::move(problems);
    p.cut = true;
    for (auto t : p.outputs) p.output_names.push_back(g.t(t).name);
    return p;
}

/// Keeps the operators the partition's outputs need and makes those tensors the graph outputs.
inline void apply_partition(graph& g, const partition& p) {
    if (!p.cut) return;
    const auto part = detail::cone_of(g, p.outputs);
    std::vector<op> kept;
    for (std::size_t k = 0; k < g.ops.size(); ++k)
        if (part[k]) kept.push_back(std::move(g.ops[k]));
    g.ops = std::move(kept);
    g.outputs = p.outputs;
}

/// The cut in words: why, which operators the host runs, which tensors the VNNX file outputs.
inline std::string describe_partition(const graph& g, const partition& p) {
    if (!p.cut) return "";
    std::string s = g.source + ": the graph is cut: " + std::to_string(p.host_ops.size()) + " of " +
                    std::to_string(g.ops.size()) + " operators are left to the host";
    if (!p.reasons.empty()) {
        s += "; the compiler cannot take " + std::to_string(p.reasons.size()) + " of them:";
        for (const auto& r : p.reasons) s += "\n  operator " + std::to_string(r.index) + " (" + r.op + "): " + r.reason;
    }
    s += "\nhost operators:";
    std::string line;
    for (std::size_t i = 0; i < p.host_ops.size(); ++i) {
        // Runs of consecutive indices as a-b.
        std::size_t j = i;
        while (j + 1 < p.host_ops.size() && p.host_ops[j + 1] == p.host_ops[j] + 1) ++j;
        line += " " + std::to_string(p.host_ops[i]) + (j > i ? "-" + std::to_string(p.host_ops[j]) : "");
        i = j;
    }
    s += line + "\nVNNX outputs (the tensors the host reads):";
    for (std::size_t o = 0; o < p.outputs.size(); ++o)
        s += "\n  output " + std::to_string(o) + ": " + detail::tensor_text(g, p.outputs[o]);
    return s;
}

}  // namespace vnnx::compiler
