#pragma once
// `vnnx info MODEL [--json]`: what a .tflite model holds (operators, io, MACs, what the compiler
// cannot take) or, for a .vnnx file, its nodes, layers, tensors, io and sizes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "vnnx/compiler/partition.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/format/union_select.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/support/json.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/support_check.hpp"

namespace vnnx::cli {

namespace info_detail {

inline std::string shape_text(std::span<const std::int32_t> s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? "x" : "", s[i]);
    return out.empty() ? "scalar" : out;
}

inline std::string tensor_json(const tflite::tensor_view& t) {
    std::string out = fmt::format("{{\"index\": {}, \"name\": {}, \"shape\": {}, \"dtype\": {}", t.index(),
                                  json::quote(t.name()), json::list(t.shape()), json::quote(tflite::type_name(t.type())));
    const auto q = t.quant();
    if (!q.empty()) {
        if (q.per_channel())
            out += fmt::format(", \"scale\": {}, \"zero_point\": {}, \"quantized_dimension\": {}", json::list(q.scale),
                               json::list(q.zero_point), q.quantized_dimension);
        else
            out += fmt::format(", \"scale\": {}, \"zero_point\": {}", q.scale[0], q.zero_point[0]);
    }
    return out + "}";
}

inline std::string tensor_text(const tflite::tensor_view& t) {
    std::string out = fmt::format("  [{}] '{}' {} {}", t.index(), t.name(), tflite::type_name(t.type()), shape_text(t.shape()));
    const auto q = t.quant();
    if (q.per_channel())
        out += fmt::format(" per-channel ({} scales, dimension {})", q.scale.size(), q.quantized_dimension);
    else if (!q.empty())
        out += fmt::format(" scale {} zero point {}", q.scale[0], q.zero_point[0]);
    return out + "\n";
}

inline std::string tflite_json(const tflite::model_view& m) {
    const auto s = tflite::summarize(m);
    const auto unsupported = compiler::find_problems(m);
    std::string out = "{\"format\": \"tflite\",\n \"file\": " + json::quote(m.source()) + ",\n \"operators\": {";
    bool first = true;
    for (const auto& [name, n] : s.operators) {
        out += fmt::format("{}{}: {}", first ? "" : ", ", json::quote(name), n);
        first = false;
    }
    out += "},\n \"inputs\": [";
    for (std::size_t i = 0; i < s.inputs.size(); ++i) out += (i ? ", " : "") + tensor_json(s.inputs[i]);
    out += "],\n \"outputs\": [";
    for (std::size_t i = 0; i < s.outputs.size(); ++i) out += (i ? ", " : "") + tensor_json(s.outputs[i]);
    out += fmt::format("],\n \"tensors\": {}, \"operator_count\": {}, \"subgraphs\": {}, \"macs\": {}, \"integer\": {},\n",
                       s.tensors, m.subgraph(0).operator_count(), m.subgraph_count(), s.macs, s.integer);
    out += " \"unsupported\": [";
    for (std::size_t i = 0; i < unsupported.size(); ++i) {
        const auto& u = unsupported[i];
        out += fmt::format("{}\n  {{\"index\": {}, \"op\": {}, \"reason\": {}}}", i ? "," : "", u.index, json::quote(u.op),
                           json::quote(u.reason));
    }
    return out + "]}\n";
}

inline std::string tflite_text(const tflite::model_view& m) {
    const auto s = tflite::summarize(m);
    const auto unsupported = compiler::find_problems(m);
    const auto g = m.subgraph(0);
    std::string out = fmt::format("{}: TFLite model (schema {}), {} subgraph(s), {} tensors, {} operators\n", m.source(),
                                  m.version(), m.subgraph_count(), s.tensors, g.operator_count());
    if (!m.description().empty()) out += fmt::format("description: {}\n", m.description());
    out += "inputs:\n";
    for (const auto& t : s.inputs) out += tensor_text(t);
    out += "outputs:\n";
    for (const auto& t : s.outputs) out += tensor_text(t);
    out += "operators:\n";
    for (const auto& [name, n] : s.operators) out += fmt::format("  {:<32} {}\n", name, n);
    out += fmt::format("MACs: {} ({:.3f} M)\ninteger: {}\n", s.macs, static_cast<double>(s.macs) / 1e6,
                       s.integer ? "yes" : "no (some operators compute in float)");
    if (unsupported.empty()) {
        out += "unsupported: none\n";
    } else {
        out += fmt::format("unsupported: {} operator(s)\n", unsupported.size());
        for (const auto& u : unsupported)
            out += u.index < 0 ? fmt::format("  {}\n", u.reason) : fmt::format("  operator {} ({}): {}\n", u.index, u.op, u.reason);
        // What `vnnx compile` (--cut auto) does with it: the cut, or nothing.
        try {
            const auto cg = compiler::checked_graph(m);
            const auto part = compiler::plan_partition(cg, {compiler::cut_mode::automatic, {}});
            const auto text = compiler::describe_partition(cg, part);
            const auto hosts = text.find("\nhost operators:");
            out += "compile: cut automatically (--cut auto); " + (hosts == std::string::npos ? text : text.substr(hosts + 1)) + "\n";
        } catch (const vnnx::error&) {
            out += "compile: fails (no automatic cut applies; see the operators above)\n";
        }
    }
    return out;
}

/// A Graphviz quoted string; a newline in `s` becomes a line break of the label.
inline std::string dot_quoted(std::string_view s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '\n') out += "\\n";
        else if (c == '"' || c == '\\') out += std::string("\\") + c;
        else out += c;
    }
    return out + "\"";
}

/// Graphviz: one box per operator (red, with the rule it breaks, when the compiler cannot take
/// it), graph inputs/outputs as ellipses, an edge per tensor labelled with its type and shape.
inline std::string tflite_dot(const tflite::model_view& m) {
    const auto g = m.subgraph(0);
    std::vector<std::int64_t> producer(g.tensor_count(), -1);
    std::map<std::size_t, std::string> unsupported;
    for (const auto& u : compiler::find_problems(m)) unsupported[u.index] = u.reason;
    std::string out = "digraph tflite {\n  rankdir=TB;\n  node [shape=box];\n";
    for (std::size_t i = 0; i < g.operator_count(); ++i) {
        const auto o = g.op(i);
        const auto bad = unsupported.find(i);
        if (bad == unsupported.end())
            out += fmt::format("  op{} [label={}];\n", i, dot_quoted(fmt::format("{}: {}", i, o.name())));
        else
            out += fmt::format("  op{} [label={}, color=red, fontcolor=red, tooltip={}];\n", i,
                               dot_quoted(fmt::format("{}: {}\nunsupported", i, o.name())), dot_quoted(bad->second));
        for (auto t : o.outputs()) producer[static_cast<std::size_t>(t)] = static_cast<std::int64_t>(i);
    }
    auto tensor_label = [&](std::size_t t) {
        const auto tv = g.tensor(t);
        return fmt::format("{} {}", tflite::type_name(tv.type()), shape_text(tv.shape()));
    };
    for (auto t : g.inputs())
        out += fmt::format("  t{} [shape=ellipse, label={}];\n", t, dot_quoted(fmt::format("in: {}", tensor_label(static_cast<std::size_t>(t)))));
    for (auto t : g.outputs()) {
        out += fmt::format("  out{} [shape=ellipse, label={}];\n", t, dot_quoted(fmt::format("out: {}", tensor_label(static_cast<std::size_t>(t)))));
        const auto p = producer[static_cast<std::size_t>(t)];
        out += p >= 0 ? fmt::format("  op{} -> out{};\n", p, t) : fmt::format("  t{} -> out{};\n", t, t);
    }
    for (std::size_t i = 0; i < g.operator_count(); ++i) {
        for (auto t : g.op(i).inputs()) {
            if (t < 0) continue;
            const auto p = producer[static_cast<std::size_t>(t)];
            const bool is_input = std::find(g.inputs().begin(), g.inputs().end(), t) != g.inputs().end();
            if (p >= 0)
                out += fmt::format("  op{} -> op{} [label={}];\n", p, i, dot_quoted(tensor_label(static_cast<std::size_t>(t))));
            else if (is_input)
                out += fmt::format("  t{} -> op{};\n", t, i);
        }
    }
    return out + "}\n";
}

inline std::string vnnx_type_name(std::int32_t t) {
    const auto n = format::operator_name(t);
    return n.empty() ? fmt::format("type {}", t) : std::string(n);
}

inline std::string calc_type_name(std::int32_t t) {
    switch (t) {
        case 0: return "uint8";
        case 1: return "int8";
        case 2: return "int16";
        case 3: return "int32";
        default: return fmt::format("unknown({})", t);
    }
}

inline std::string io_json(const format::io_tensor& t) {
    return fmt::format("{{\"node\": {}, \"shape\": {}, \"dtype\": {}, \"scale\": {}, \"zero_point\": {}}}", t.node,
                       json::list(t.shape), json::quote(calc_type_name(t.type)), t.scale, t.zero_point);
}

inline std::string vnnx_json(const format::model_view& v) {
    const auto& h = v.header();
    std::string out = fmt::format(
        "{{\"format\": \"vnnx\",\n \"file\": {},\n \"version\": \"0x{:08x}\", \"preset\": {}, \"data_bytes\": {}, "
        "\"allocate_bytes\": {}, \"replay_bytes\": {}, \"include_io_data\": {},\n \"layers\": {}, \"tensors\": {},\n \"nodes\": [",
        json::quote(v.source()), h.version, h.vbx_nn_preset, h.data_bytes, h.allocate_bytes, h.replay_buffer_size,
        h.include_io_data != 0, v.num_layers(), v.num_tensors());
    for (std::size_t i = 0; i < v.num_nodes(); ++i) {
        const auto& n = v.node(i);
        std::string layers = "[";
        bool first = true;
        for (const auto& l : v.node_layers(i)) {
            layers += (first ? "" : ", ") + json::quote(vnnx_type_name(l.type));
            first = false;
        }
        out += fmt::format("{}\n  {{\"index\": {}, \"type\": {}, \"layers\": {}], \"tensors\": {}}}", i ? "," : "", i,
                           json::quote(vnnx_type_name(n.type)), layers, n.num_tensors);
    }
    out += "],\n \"inputs\": [";
    for (std::size_t i = 0; i < v.num_inputs(); ++i) out += (i ? ", " : "") + io_json(v.input(i));
    out += "],\n \"outputs\": [";
    for (std::size_t i = 0; i < v.num_outputs(); ++i) out += (i ? ", " : "") + io_json(v.output(i));
    return out + "]}\n";
}

inline std::string vnnx_text(const format::model_view& v) {
    const auto& h = v.header();
    std::string out = fmt::format(
        "{}: VNNX model (version 0x{:08x}, preset {}), {} nodes, {} layers, {} tensors\n"
        "sizes: data {} bytes, allocate {} bytes, replay {} bytes, test vectors {}\n",
        v.source(), h.version, h.vbx_nn_preset, v.num_nodes(), v.num_layers(), v.num_tensors(), h.data_bytes,
        h.allocate_bytes, h.replay_buffer_size, h.include_io_data != 0 ? "included" : "not included");
    auto io_line = [](const format::io_tensor& t) {
        std::string shape;
        for (std::size_t i = 0; i < t.shape.size(); ++i) shape += fmt::format("{}{}", i ? "x" : "", t.shape[i]);
        return fmt::format("  node {} {} {} scale {} zero point {}\n", t.node, calc_type_name(t.type), shape, t.scale,
                           t.zero_point);
    };
    out += "inputs:\n";
    for (std::size_t i = 0; i < v.num_inputs(); ++i) out += io_line(v.input(i));
    out += "outputs:\n";
    for (std::size_t i = 0; i < v.num_outputs(); ++i) out += io_line(v.output(i));
    out += "nodes:\n";
    for (std::size_t i = 0; i < v.num_nodes(); ++i) {
        std::string layers;
        for (const auto& l : v.node_layers(i)) layers += " " + vnnx_type_name(l.type);
        out += fmt::format("  {:>3} {:<20} tensors {:>3}  layers:{}\n", i, vnnx_type_name(v.node(i).type),
                           v.node(i).num_tensors, layers.empty() ? " none" : layers);
    }
    return out;
}

inline std::string vnnx_shape_text(const format::vnnx_tensor_t& t) {
    std::string out;
    for (std::int32_t d = 0; d < t.dims && d < 6; ++d) out += fmt::format("{}{}", d ? "x" : "", t.shape[d]);
    return out.empty() ? "scalar" : out;
}

/// Graphviz of the VNNX node graph: one box per node labelled with its type, layers and
/// channels-first shapes; an edge where a node (or one of its layers) reads the buffer an
/// earlier node wrote last. Buffers are reused, so only the last writer of an offset counts.
inline std::string vnnx_dot(const format::model_view& v) {
    std::string out = "digraph vnnx {\n  rankdir=TB;\n  node [shape=box];\n";
    std::map<std::uint64_t, std::size_t> written_by;  // buffer offset -> last node writing it
    for (std::size_t i = 0; i < v.num_nodes(); ++i) {
        const auto& n = v.node(i);
        const auto tensors = v.node_tensors(i);
        const auto layer_list = v.node_layers(i);
        std::string layers;
        for (const auto& l : layer_list) layers += (layers.empty() ? "" : " ") + vnnx_type_name(l.type);
        const std::int64_t outs = layer_list.empty() ? n.num_outputs : layer_list.back().num_outputs;
        const auto last = outs > 0 ? v.node_output_index(i, 0) : tensors.size();
        const std::string in_shape = n.num_inputs > 0 && !tensors.empty() ? vnnx_shape_text(tensors[0]) : "?";
        const std::string out_shape = last < tensors.size() ? vnnx_shape_text(tensors[last]) : "?";
        out += fmt::format("  n{} [label={}];\n", i,
                           dot_quoted(fmt::format("{}: {}{}\n{} -> {}", i, vnnx_type_name(n.type),
                                                  layers.empty() ? "" : "\n" + layers, in_shape, out_shape)));
        std::map<std::size_t, std::string> from;  // producer node -> the first shape it passes
        auto reads = [&](std::size_t first, std::int64_t count) {
            for (std::int64_t k = 0; k < count && first + static_cast<std::size_t>(k) < tensors.size(); ++k) {
                const auto& t = tensors[first + static_cast<std::size_t>(k)];
                const auto it = written_by.find(t.direct.value);
                if (it != written_by.end() && it->second != i) from.emplace(it->second, vnnx_shape_text(t));
            }
        };
        auto writes = [&](std::size_t first, std::int64_t count) {
            for (std::int64_t k = 0; k < count && first + static_cast<std::size_t>(k) < tensors.size(); ++k)
                written_by[tensors[first + static_cast<std::size_t>(k)].direct.value] = i;
        };
        // Tensor order (vnnx-format.md §6.3): node inputs, node outputs, then each layer's
        // inputs and outputs.
        reads(0, n.num_inputs);
        std::size_t at = static_cast<std::size_t>(std::max(0, n.num_inputs)) + static_cast<std::size_t>(std::max(0, n.num_outputs));
        writes(static_cast<std::size_t>(std::max(0, n.num_inputs)), n.num_outputs);
        for (const auto& l : layer_list) {
            reads(at, l.num_inputs);
            writes(at + static_cast<std::size_t>(std::max(0, l.num_inputs)), l.num_outputs);
            at += static_cast<std::size_t>(std::max(0, l.num_tensors));
        }
        for (const auto& [p, shape] : from) out += fmt::format("  n{} -> n{} [label={}];\n", p, i, dot_quoted(shape));
    }
    for (std::size_t i = 0; i < v.num_inputs(); ++i) {
        const auto& t = v.input(i);
        out += fmt::format("  in{} [shape=ellipse, label={}];\n  in{} -> n{};\n", i,
                           dot_quoted(fmt::format("in {}: {} {}", i, calc_type_name(t.type), vnnx_shape_text(t.tensor))), i, t.node);
    }
    for (std::size_t o = 0; o < v.num_outputs(); ++o) {
        const auto& t = v.output(o);
        out += fmt::format("  out{} [shape=ellipse, label={}];\n  n{} -> out{};\n", o,
                           dot_quoted(fmt::format("out {}: {} {}", o, calc_type_name(t.type), vnnx_shape_text(t.tensor))), t.node, o);
    }
    return out + "}\n";
}

/// A .vnnx file: by extension, or by the magic number at byte 76.
inline bool looks_like_vnnx(const std::filesystem::path& p, std::span<const std::byte> bytes) {
    if (p.extension() == ".vnnx") return true;
    return bytes.size() >= 80 && load_le<std::uint32_t>(bytes.data() + 76) == format::magic;
}

inline int run_info(const parsed_args& a) {
    if (a.positional().size() != 1) usage_error("info: expects exactly one MODEL (.tflite or .vnnx); see 'vnnx info --help'");
    const std::filesystem::path path = a.positional()[0];
    const auto bytes = read_file(path);
    const bool json = a.has("json");
    const bool dot = a.has("dot");
    if (json && dot) usage_error("info: choose one of --json and --dot");
    std::string out;
    if (looks_like_vnnx(path, bytes)) {
        const format::model_view v(bytes, path.string());
        out = json ? vnnx_json(v) : dot ? vnnx_dot(v) : vnnx_text(v);
    } else {
        const auto m = tflite::model_view::parse(bytes, path.string());
        out = json ? tflite_json(m) : dot ? tflite_dot(m) : tflite_text(m);
    }
    std::fputs(out.c_str(), stdout);
    return 0;
}

}  // namespace info_detail

inline const command info_command{
    "info",
    "show what a .tflite or .vnnx model holds: operators, tensors, io, MACs, unsupported operators",
    "vnnx info MODEL.tflite|MODEL.vnnx [--json | --dot]",
    "A TFLite model is listed with its operator counts, inputs and outputs (shape, dtype, scale, zero point),\n"
    "multiply-accumulates, and every operator the compiler cannot take with the rule it breaks.\n"
    "A VNNX file is listed with its nodes, layers, tensors, io and sizes.\n"
    "--dot prints Graphviz: the TFLite operator graph (operators the compiler cannot take in red) or\n"
    "the VNNX node graph (each node with its type, layers and shapes); render it with\n"
    "'vnnx info model.tflite --dot | dot -Tsvg -o model.svg'.\n\n"
    "example: vnnx info model.tflite --json",
    {{"json", "", "", "print one JSON object instead of text"},
     {"dot", "", "", "print the operator (TFLite) or node (VNNX) graph in Graphviz dot"}},
    &info_detail::run_info,
};

}  // namespace vnnx::cli
