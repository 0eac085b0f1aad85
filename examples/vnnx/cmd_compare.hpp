#pragma once
// `vnnx compare MODEL.tflite [-i IN.npy ...] [-s V1000] [--per-node]`: compiles the model, runs the
// VNNX bytes in the simulator and the TFLite model in the reference interpreter on the same input,
// and reports how far the outputs (and, with --per-node, every node's tensor) are apart.
#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmd_compile.hpp"
#include "command.hpp"
#include "node_verdict.hpp"
#include "vnnx/report/compare.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/sim/machine.hpp"

namespace vnnx::cli {

namespace pipeline {

struct node_diff {
    std::size_t node = 0;
    std::string type, tensor;
    std::string skipped;  // why this node was not compared (empty: compared)
    report::array_diff diff;
    bool by_table = false;          // judged by the step of the table it applies last
    std::string rule = "1 LSB";     // what is allowed
    verdict::judgement judged;      // elements beyond what is allowed
    [[nodiscard]] bool holds() const { return !skipped.empty() || judged.beyond == 0; }
};

struct outcome {
    std::vector<std::string> output_names;
    std::vector<report::array_diff> outputs;
    std::vector<node_diff> nodes;  // with per_node

    /// Every output within the end-to-end rule of array_diff::agree().
    [[nodiscard]] bool outputs_agree() const {
        for (const auto& d : outputs)
            if (!d.agree()) return false;
        return true;
    }
    /// Every compared node within what it is allowed (meaningful for an isolated run).
    [[nodiscard]] bool nodes_hold() const {
        for (const auto& n : nodes)
            if (!n.holds()) return false;
        return true;
    }
};

/// A channels-first simulator tensor as an array.
inline ndarray tensor_array(const sim::tensor_ref& t) {
    ndarray a(sim::io_dtype(t.type), std::vector<std::int64_t>(t.shape.begin(), t.shape.end()));
    if (a.data.size() != t.count * t.elem) fail_input("simulator tensor: size does not match its shape");
    if (!a.data.empty()) std::memcpy(a.data.data(), t.data, a.data.size());
    return a;
}

/// Runs the compiled bytes on their embedded test input and compares with the reference run
/// that made them: graph outputs always, each node's final tensor with `per_node`. With
/// `isolate`, every node output that has a reference tensor (graph outputs excepted) is
/// overwritten with it after the comparison and the node's layers run again from it, so each node
/// starts from the reference's inputs and its own arithmetic shows alone.
inline outcome simulate_and_compare(const compiled& c, const tflite::model_view& model, const std::string& source,
                                    bool per_node, sim::run_options ro = {}, bool isolate = false) {
    // Isolation reruns layers from their inputs, and a per-node report reads every node's
    // tensors: both need the intermediate tensors a fusing node leaves unwritten.
    ro.fuse_layers = ro.fuse_layers && !isolate && !per_node;
    sim::machine m(c.result.bytes, source, ro);
    const auto& v = m.view();
    for (std::size_t i = 0; i < v.num_inputs(); ++i) m.set_input(i, v.input(i).test_vector);
    outcome out;
    const auto g = model.subgraph(0);
    std::map<std::string, std::size_t> by_name;
    for (std::size_t t = 0; t < g.tensor_count(); ++t) by_name.emplace(std::string(g.tensor(t).name()), t);
    // A TFLite tensor behind a buffer name: the name itself, or the name without the suffix the
    // compiler gives buffers derived from it ("x.id", "x/conv"); either must hold as many
    // elements as the reference tensor to count.
    auto index_of = [&](const std::string& name) -> std::optional<std::size_t> {
        auto it = by_name.find(name);
        if (it == by_name.end()) {
            const auto cut = name.find_last_of("./");
            if (cut != std::string::npos && cut > 0) it = by_name.find(name.substr(0, cut));
        }
        if (it == by_name.end() || !c.trace.tensors[it->second]) return std::nullopt;
        return it->second;
    };
    auto reference_of = [&](const std::string& name) -> const ndarray* {
        const auto i = index_of(name);
        return i ? &*c.trace.tensors[*i] : nullptr;
    };
    // Graph outputs keep the simulator's values, so the output lines judge the last nodes alone.
    const auto out_tensors = vnnx_output_tensors(model, c.result.partition);
    std::set<std::size_t> graph_outputs;
    for (auto o : out_tensors) graph_outputs.insert(static_cast<std::size_t>(o));
    auto overwrite = [&](const sim::tensor_ref& t, const std::string& name, const ndarray& cf) {
        const auto i = index_of(name);
        if (!isolate || !i || graph_outputs.count(*i) != 0 || cf.data.size() != t.count * t.elem) return;
        std::memcpy(t.data, cf.data.data(), cf.data.size());
    };
    m.run([&](std::size_t k) {
        if (!per_node) return;
        node_diff nd;
        nd.node = k;
        const auto tensors = m.resolve(k);
        const std::vector<std::string> none;
        const auto& names = k < c.result.nodes.size() ? c.result.nodes[k].tensor_names : none;
        if (k < c.result.nodes.size()) nd.type = c.result.nodes[k].type;
        if (names.size() != tensors.size()) {
            nd.skipped = fmt::format("{} tensor records but {} names from the compiler", tensors.size(), names.size());
            out.nodes.push_back(std::move(nd));
            return;
        }
        // The node's last tensor that the reference also computed (the final one may be a
        // staging buffer of the compiler's own).
        // Outputs only: the node's own outputs, then each layer's output (its last record).
        std::vector<std::size_t> outputs;
        const auto& rec = v.node(k);
        const auto n_in = static_cast<std::size_t>(std::max(0, rec.num_inputs));
        const std::size_t own = n_in + static_cast<std::size_t>(std::max(0, rec.num_outputs));
        for (std::size_t i = n_in; i < own && i < tensors.size(); ++i) outputs.push_back(i);
        std::size_t next = own;
        for (const auto& layer : v.node_layers(k)) {
            next += static_cast<std::size_t>(std::max(0, layer.num_tensors));
            if (next > 0 && next <= tensors.size()) outputs.push_back(next - 1);
        }
        // The reference of buffer i, channels first. The buffer may be a RESHAPE of the reference
        // tensor ("x/rows"): TFLite keeps the NHWC order, so the reference is read in the buffer's
        // own shape (a no-op for the tensor itself).
        auto reference_cf = [&](std::size_t i) -> std::optional<ndarray> {
            const ndarray* want = reference_of(names[i]);
            if (want == nullptr || want->type == dtype::float32 || want->element_count() != tensors[i].count) return std::nullopt;
            ndarray nhwc = *want;
            nhwc.shape = sim::channels_last_shape(std::vector<std::int64_t>(tensors[i].shape.begin(), tensors[i].shape.end()));
            return sim::to_channels_first(nhwc);
        };
        nd.skipped = "no output of this node is a reference tensor";
        for (std::size_t j = outputs.size(); j-- > 0;) {
            const std::size_t i = outputs[j];
            const auto cf = reference_cf(i);
            if (!cf) continue;
            nd.tensor = names[i];
            nd.skipped.clear();
            const auto got = tensor_array(tensors[i]);
            nd.diff = report::compare_arrays(got, *cf, fmt::format("{}: node {} tensor '{}'", source, k, names[i]));
            verdict::tolerance tol;
            if (auto t = verdict::table_tolerance(v, k, i)) {
                tol = *t;
                nd.by_table = true;
            }
            nd.rule = tol.rule;
            nd.judged = verdict::judge(got, *cf, tol);
            break;
        }
        if (isolate) {
            // The node's own outputs take the reference's values, then its layers run again from
            // them, so that buffers without a reference (a PAD's output) follow; each layer output
            // with a reference takes it too. A layer that works in place is not run twice.
            for (std::size_t i = n_in; i < own && i < tensors.size(); ++i)
                if (const auto cf = reference_cf(i)) overwrite(tensors[i], names[i], *cf);
            const sim::execution ex{ro.isa, nullptr};
            std::size_t at = own;
            for (const auto& layer : v.node_layers(k)) {
                const auto n = static_cast<std::size_t>(std::max(0, layer.num_tensors));
                if (n == 0 || at + n > tensors.size()) break;
                std::vector<sim::tensor_ref> ts(tensors.begin() + static_cast<std::ptrdiff_t>(at),
                                                tensors.begin() + static_cast<std::ptrdiff_t>(at + n));
                const auto& o = ts.back();
                bool in_place = false;
                for (std::size_t t = 0; t + 1 < n; ++t)
                    in_place = in_place || (ts[t].data < o.data + o.count * o.elem && o.data < ts[t].data + ts[t].count * ts[t].elem);
                if (!in_place) {
                    std::shared_ptr<void> cache;
                    sim::layer_context lc{v, layer, std::span<sim::tensor_ref>(ts), fmt::format("node {} layer (isolated)", k), ex, k, &cache};
                    sim::layer_function(layer.type)(lc);
                }
                if (const auto cf = reference_cf(at + n - 1)) overwrite(tensors[at + n - 1], names[at + n - 1], *cf);
                at += n;
            }
        }
        out.nodes.push_back(std::move(nd));
    });
    for (std::size_t o = 0; o < v.num_outputs(); ++o) {
        const auto& io = v.output(o);
        // The embedded test output is the reference output, channels first, in the tensor's type.
        const ndarray got = sim::io_array(io, m.output(o), sim::io_layout::vnnx, fmt::format("{}: output {}", source, o));
        const ndarray want = sim::io_array(io, io.test_vector, sim::io_layout::vnnx, fmt::format("{}: reference output {}", source, o));
        out.outputs.push_back(report::compare_arrays(got, want, fmt::format("{}: output {}", source, o)));
        out.output_names.push_back(o < out_tensors.size() ? std::string(g.tensor(static_cast<std::size_t>(out_tensors[o])).name())
                                                          : std::string());
    }
    return out;
}

inline std::string diff_line(const report::array_diff& d) {
    return fmt::format("{} elements, {} exact ({:.2f}%), {} within 1 LSB ({:.2f}%), max |diff| {}", d.elements, d.exact,
                       100.0 * d.exact_rate(), d.within1, 100.0 * d.within1_rate(), d.max_diff);
}

inline std::string outputs_text(const outcome& r) {
    std::string out;
    for (std::size_t o = 0; o < r.outputs.size(); ++o)
        out += fmt::format("output {} '{}': {}\n", o, r.output_names[o], diff_line(r.outputs[o]));
    return out;
}

/// The per-node table: end to end (each node on the simulator's own inputs) or isolated (each on
/// the reference's), the latter with what each node is allowed.
inline std::string node_table(const outcome& r, bool isolated) {
    if (r.nodes.empty()) return {};
    std::string out = isolated ? "\nper node, each run alone on the reference's inputs:\n"
                               : "\nper node, end to end (each on the simulator's own inputs):\n";
    out += fmt::format("{:>4}  {:<18} {:<28} {:>9} {:>9} {:>9}{}\n", "node", "type", "tensor", "elements", "exact",
                       "max|diff|", isolated ? "  allowed" : "");
    const node_diff* first = nullptr;
    for (const auto& n : r.nodes) {
        if (!n.skipped.empty()) {
            out += fmt::format("{:>4}  {:<18} {:<28} not compared: {}\n", n.node, n.type, n.tensor, n.skipped);
            continue;
        }
        out += fmt::format("{:>4}  {:<18} {:<28} {:>9} {:>9} {:>9}", n.node, n.type, n.tensor, n.diff.elements,
                           n.diff.exact, n.diff.max_diff);
        if (isolated) out += fmt::format("  {}{}", n.rule, n.holds() ? "" : fmt::format(" -- {} elements beyond", n.judged.beyond));
        out += "\n";
        if (first == nullptr && !n.diff.identical()) first = &n;
    }
    out += first ? fmt::format("first node that differs: {} ({} '{}'): {}, first at element {}\n", first->node,
                               first->type, first->tensor, diff_line(first->diff), first->diff.first_diff)
                 : std::string("every compared node is bit-exact\n");
    return out;
}

/// The verdict (every node alone, as the SDK judges a model layer by layer) and, beside it, the
/// end-to-end figures of the outputs.
inline std::string verdict_text(const outcome& e2e, const outcome& iso) {
    std::size_t compared = 0, by_table = 0, skipped = 0, failing = 0;
    const node_diff* first_failing = nullptr;
    for (const auto& n : iso.nodes) {
        if (!n.skipped.empty()) {
            ++skipped;
            continue;
        }
        ++compared;
        by_table += n.by_table ? 1 : 0;
        if (!n.holds()) {
            ++failing;
            if (first_failing == nullptr) first_failing = &n;
        }
    }
    std::string out = fmt::format("\nnodes run alone on the reference's inputs: {} compared, {} hold", compared, compared - failing);
    if (by_table) out += fmt::format(" ({} judged by the step of the table they apply)", by_table);
    if (skipped) out += fmt::format(", {} without a reference tensor", skipped);
    out += "\n";
    if (first_failing)
        out += fmt::format("first node that does not hold: {} ({} '{}'): {} elements beyond {}, {} off where {} was allowed\n",
                           first_failing->node, first_failing->type, first_failing->tensor, first_failing->judged.beyond,
                           first_failing->rule, first_failing->judged.worst_excess_diff, first_failing->judged.worst_allowed);
    std::int64_t worst = 0;
    for (const auto& d : e2e.outputs) worst = std::max(worst, d.max_diff);
    if (e2e.outputs_agree())
        out += "end to end: every output within 1 LSB of the reference\n";
    else
        out += fmt::format("end to end: outputs up to {} LSB from the reference: the 1-LSB differences of the 16-bit\n"
                           "  requantization grow through the layers after them (a softmax widens them); the SDK also\n"
                           "  judges a model layer by layer, then by its answers (same class, same mask, same boxes)\n",
                           worst);
    out += fmt::format("agree: {} (rule: every node within 1 LSB of the reference on the reference's inputs, or within\n"
                       "  the step of the table it applies)\n",
                       iso.nodes_hold() ? "yes" : "no");
    return out;
}

}  // namespace pipeline

namespace compare_detail {

inline int run_compare(const parsed_args& a) {
    if (a.positional().size() != 1) usage_error("compare: expects exactly one MODEL.tflite; see 'vnnx compare --help'");
    const std::string path = a.positional()[0];
    const auto presets = pipeline::parse_presets(a.get("size_conf").value_or("V1000"), "compare");
    if (presets.size() != 1) usage_error("compare: -s takes one size");
    sim::run_options ro;
    if (auto i = a.get("isa")) ro.isa = sim::isa_from_name(*i);
    const auto bytes = read_file(path);
    const auto model = tflite::model_view::parse(bytes, path);
    compile_options opt;
    opt.preset = presets[0];
    opt.cut = pipeline::cut_options(a, "compare");
    opt.calibration = pipeline::calibration_of(model, a, "compare");
    auto c = pipeline::compile_with_vectors(bytes, path, opt, pipeline::test_inputs(model, a.all("inputs"), sim::default_input_seed));
    if (!c.result.cut_report.empty())
        std::fprintf(stderr, "vnnx: note: %s\n(the outputs below are compared at the cut)\n", c.result.cut_report.c_str());
    const bool per_node = a.has("per-node");
    const auto iso = pipeline::simulate_and_compare(c, model, path, true, ro, true);
    const auto e2e = pipeline::simulate_and_compare(c, model, path, per_node, ro, false);
    std::string out = pipeline::outputs_text(e2e);
    if (per_node) out += pipeline::node_table(e2e, false);
    if (a.has("isolate")) out += pipeline::node_table(iso, true);
    out += pipeline::verdict_text(e2e, iso);
    std::fputs(out.c_str(), stdout);
    return iso.nodes_hold() ? 0 : 1;
}

}  // namespace compare_detail

inline const command compare_command{
    "compare",
    "compile a TFLite model, simulate it and compare with the reference interpreter",
    "vnnx compare MODEL.tflite [-i IN.npy ...] [-s V1000] [--per-node] [--isolate] [--isa scalar|avx2|avx512|vbmi|amx]\n"
    "                    [--cut auto|none] [--outputs TENSOR,...] [--calibrate CAL.npy ...]",
    "Judges the model as the VectorBlox SDK does, layer by layer: every node runs alone on the\n"
    "reference's inputs (the reference's tensors replace its inputs) and must be within 1 LSB of the\n"
    "reference, or, for a node that applies a lookup table last (a LUT layer, a convolution's table),\n"
    "within the step of that table next to the expected value, read from the node's records. Beside\n"
    "the verdict it prints the end-to-end figures per output (elements, exact matches, matches within\n"
    "1 LSB, max |diff|): there 1-LSB differences can grow through later layers. With --per-node the\n"
    "end-to-end table of every node is printed (the first node that differs is named); --isolate\n"
    "prints the table of the nodes run alone, with what each is allowed. Without -i the SDK's\n"
    "pseudo-random input (NumPy seed 42) is used. A model ending in float or int32 post-processing\n"
    "is cut as by 'vnnx compile' (a note on stderr says where) and compared at the cut tensors.\n"
    "Exit status 0 when every node holds, else 1.\n\n"
    "example: vnnx compare model.tflite --per-node",
    {{"inputs", "i", "IN.npy", "inputs, one per model input (TFLite layout and dtype)", true},
     {"calibrate", "", "CAL.npy", "compile with records fitted to the reference's accumulators on these inputs", true},
     {"size_conf", "s", "SIZE", "V250, V500 or V1000 (default V1000)"},
     {"per-node", "", "", "compare every node's tensor and name the first that differs"},
     {"isa", "", "ISA", "simulator instruction set: scalar, avx2, avx512 (without VBMI), vbmi (AVX-512 with VBMI byte permutes) or amx (vbmi with AMX-INT8 convolutions)"},
     {"isolate", "", "", "per node, starting every node from the reference's tensors (its own error alone)"},
     {"cut", "", "MODE", "auto (default): a float/int32 post-processing tail is left out, the cut tensors compared; none"},
     {"outputs", "", "TENSOR", "compile and compare up to these tensors (names or indices, comma-separated)", true}},
    &compare_detail::run_compare,
};

}  // namespace vnnx::cli
