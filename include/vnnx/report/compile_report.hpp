#pragma once
// What a compilation produced, per node and per node type, with totals: as JSON (`vnnx compile
// --report`) and as a readable table (`vnnx compile -v`, `vnnx demo`).
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "vnnx/compiler/compile.hpp"
#include "vnnx/support/json.hpp"

namespace vnnx::report {

/// Where a compilation came from and what it was for (the result does not know).
struct compile_info {
    std::string source;  // the .tflite file
    std::string output;  // the .vnnx file (may be empty)
    std::string preset;  // V250, V500, V1000
};

/// Sums over the nodes of one type.
struct type_totals {
    std::size_t nodes = 0, layers = 0;
    std::int64_t weight_bytes = 0, macs = 0;
    std::int32_t max_scratchpad_bytes = 0;
};

[[nodiscard]] inline std::map<std::string, type_totals> totals_by_type(const compile_result& r) {
    std::map<std::string, type_totals> out;
    for (const auto& n : r.nodes) {
        auto& t = out[n.type];
        ++t.nodes;
        t.layers += n.layers.size();
        t.weight_bytes += n.weight_bytes;
        t.macs += n.macs;
        t.max_scratchpad_bytes = std::max(t.max_scratchpad_bytes, n.scratchpad_bytes);
    }
    return out;
}

[[nodiscard]] inline std::int64_t total_weight_bytes(const compile_result& r) {
    std::int64_t w = 0;
    for (const auto& n : r.nodes) w += n.weight_bytes;
    return w;
}

namespace detail {

inline std::string shape_text(const std::vector<std::int32_t>& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? "x" : "", s[i]);
    return out.empty() ? "-" : out;
}

}  // namespace detail

/// One JSON object: {"source", "output", "preset", "nodes": [...], "node_types": {...}, "totals": {...}}.
[[nodiscard]] inline std::string compile_json(const compile_result& r, const compile_info& info) {
    std::string out = fmt::format("{{\"source\": {}, \"output\": {}, \"preset\": {},\n \"nodes\": [", json::quote(info.source),
                                  json::quote(info.output), json::quote(info.preset));
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& n = r.nodes[i];
        std::vector<std::string> layers;
        for (const auto& l : n.layers) layers.push_back(json::quote(l));
        out += fmt::format(
            "{}\n  {{\"index\": {}, \"type\": {}, \"ops\": {}, \"layers\": {}, \"input_shape\": {}, \"output_shape\": {}, "
            "\"output\": {}, \"weight_bytes\": {}, \"macs\": {}, \"scratchpad_bytes\": {}}}",
            i ? "," : "", n.index, json::quote(n.type), json::quote(n.ops), json::list(layers), json::list(n.input_shape),
            json::list(n.output_shape), json::quote(n.output_name), n.weight_bytes, n.macs, n.scratchpad_bytes);
    }
    out += "],\n \"node_types\": {";
    bool first = true;
    for (const auto& [type, t] : totals_by_type(r)) {
        out += fmt::format("{}\n  {}: {{\"nodes\": {}, \"layers\": {}, \"weight_bytes\": {}, \"macs\": {}, \"max_scratchpad_bytes\": {}}}",
                           first ? "" : ",", json::quote(type), t.nodes, t.layers, t.weight_bytes, t.macs, t.max_scratchpad_bytes);
        first = false;
    }
    std::size_t layers = 0;
    for (const auto& n : r.nodes) layers += n.layers.size();
    out += "},";
    if (r.partition.cut) {
        // The graph was cut: the TFLite tensors behind the VNNX outputs, the host's operators.
        std::vector<std::string> names;
        for (const auto& n : r.partition.output_names) names.push_back(json::quote(n));
        out += fmt::format("\n \"cut\": {{\"output_tensors\": {}, \"output_names\": {}, \"host_operators\": {}}},",
                           json::list(r.partition.outputs), json::list(names), json::list(r.partition.host_ops));
    }
    out += fmt::format(
        "\n \"totals\": {{\"nodes\": {}, \"layers\": {}, \"file_bytes\": {}, \"allocate_bytes\": {}, \"weight_bytes\": {}, "
        "\"macs\": {}}}}}\n",
        r.nodes.size(), layers, r.bytes.size(), r.allocate_bytes, total_weight_bytes(r), r.macs);
    return out;
}

/// A readable table: one row per node, then per node type, then the totals.
[[nodiscard]] inline std::string compile_table(const compile_result& r, const compile_info& info) {
    std::string out = fmt::format("{} -> {} ({})\n", info.source, info.output.empty() ? "(memory)" : info.output, info.preset);
    out += fmt::format("{:>4}  {:<18} {:<28} {:>12} {:>12} {:>10} {:>12} {:>10}  {}\n", "node", "type", "operators", "input",
                       "output", "weights", "MACs", "scratchpad", "layers");
    for (const auto& n : r.nodes) {
        std::string layers;
        for (const auto& l : n.layers) layers += (layers.empty() ? "" : " ") + l;
        std::string ops = n.ops.size() > 28 ? n.ops.substr(0, 25) + "..." : n.ops;
        out += fmt::format("{:>4}  {:<18} {:<28} {:>12} {:>12} {:>10} {:>12} {:>10}  {}\n", n.index, n.type, ops,
                           detail::shape_text(n.input_shape), detail::shape_text(n.output_shape), n.weight_bytes, n.macs,
                           n.scratchpad_bytes, layers.empty() ? "-" : layers);
    }
    out += fmt::format("\n{:<18} {:>6} {:>7} {:>12} {:>14} {:>12}\n", "node type", "nodes", "layers", "weights", "MACs",
                       "scratchpad");
    for (const auto& [type, t] : totals_by_type(r))
        out += fmt::format("{:<18} {:>6} {:>7} {:>12} {:>14} {:>12}\n", type, t.nodes, t.layers, t.weight_bytes, t.macs,
                           t.max_scratchpad_bytes);
    out += fmt::format("\ntotal: {} nodes, file {} bytes, allocate {} bytes, weights {} bytes, {} MACs ({:.3f} M)\n",
                       r.nodes.size(), r.bytes.size(), r.allocate_bytes, total_weight_bytes(r), r.macs,
                       static_cast<double>(r.macs) / 1e6);
    return out;
}

/// Several compilations of one model side by side (the CLI's -s V250,V500,V1000): one column
/// per preset, one row per size.
[[nodiscard]] inline std::string sizes_table(const std::vector<std::pair<std::string, const compile_result*>>& cols) {
    std::string out = fmt::format("\n{:<16}", "size");
    for (const auto& [name, r] : cols) out += fmt::format(" {:>14}", name);
    out += "\n";
    auto row = [&](std::string_view what, auto value) {
        out += fmt::format("{:<16}", what);
        for (const auto& [name, r] : cols) out += fmt::format(" {:>14}", value(*r));
        out += "\n";
    };
    row("file bytes", [](const compile_result& r) { return r.bytes.size(); });
    row("allocate bytes", [](const compile_result& r) { return r.allocate_bytes; });
    row("weight bytes", [](const compile_result& r) { return total_weight_bytes(r); });
    row("nodes", [](const compile_result& r) { return r.nodes.size(); });
    row("layers", [](const compile_result& r) {
        std::size_t n = 0;
        for (const auto& nd : r.nodes) n += nd.layers.size();
        return n;
    });
    row("max scratchpad", [](const compile_result& r) {
        std::int32_t m = 0;
        for (const auto& nd : r.nodes) m = std::max(m, nd.scratchpad_bytes);
        return m;
    });
    row("MACs", [](const compile_result& r) { return r.macs; });
    return out;
}

}  // namespace vnnx::report
