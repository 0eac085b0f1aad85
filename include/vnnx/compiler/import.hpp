#pragma once
// Copies the main subgraph of a verified TFLite model into the compiler's graph; each
// operator's options are read by its trait (ops::read_options).
#include <algorithm>
#include <cstring>
#include <string>
#include <unordered_set>
#include <vector>

#include "vnnx/ir/graph.hpp"
#include "vnnx/ops/registry.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/support/linkage.hpp"

namespace vnnx::compiler {

/// The main subgraph as a compiler graph. With constant_storage::borrow its constants point into
/// the model's bytes, which must then outlive the graph.
VNNX_ENTRY graph import_graph(const tflite::model_view& m, constant_storage storage = constant_storage::copy);
#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY graph import_graph(const tflite::model_view& m, constant_storage storage) {
    graph g;
    g.source = std::string(m.source());
    const auto sg = m.subgraph(0);
    g.tensors.reserve(sg.tensor_count());
    for (std::size_t i = 0; i < sg.tensor_count(); ++i) {
        const auto tv = sg.tensor(i);
        tensor t;
        t.name = std::string(tv.name());
        if (t.name.empty()) t.name = "tensor" + std::to_string(i);
        t.type = tv.type();
        t.shape.assign(tv.shape().begin(), tv.shape().end());
        const auto q = tv.quant();
        t.quant.scale.assign(q.scale.begin(), q.scale.end());
        t.quant.zero_point.assign(q.zero_point.begin(), q.zero_point.end());
        t.quant.quantized_dimension = q.quantized_dimension;
        if (tv.is_constant()) {
            const auto d = tv.data();
            t.data = storage == constant_storage::borrow ? constant_bytes::borrow(d)
                                                         : constant_bytes(std::vector<std::byte>(d.begin(), d.end()));
        }
        g.tensors.push_back(std::move(t));
    }
    // Names identify buffers in a VNNX file: make them unique (a set: a model may have very many).
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (!seen.insert(g.tensors[i].name).second) {
            g.tensors[i].name += "#" + std::to_string(i);
            seen.insert(g.tensors[i].name);
        }
    for (std::size_t i = 0; i < sg.operator_count(); ++i) {
        const auto v = sg.op(i);
        op o;
        o.code = v.op();
        o.inputs.assign(v.inputs().begin(), v.inputs().end());
        o.outputs.assign(v.outputs().begin(), v.outputs().end());
        o.source_index = static_cast<std::int32_t>(i);
        o.custom_code = std::string(v.custom_code());
        ops::read_options(v, o.options);  // the options its trait reads
        g.ops.push_back(std::move(o));
    }
    g.inputs.assign(sg.inputs().begin(), sg.inputs().end());
    g.outputs.assign(sg.outputs().begin(), sg.outputs().end());
    // An activation with no element, yet other dimensions that would size every tiling walk and
    // buffer (operator intermediates, which are never lowered, may be empty; so may an int32
    // shape vector such as the empty RESHAPE target of a scalar, which shape folding consumes).
    const auto check_not_empty = [&](std::int32_t i) {
        if (i < 0) return;
        const auto& t = g.t(i);
        if (t.is_constant() || (t.shape.size() <= 1 && t.type == tensor_type::INT32) || std::find(t.shape.begin(), t.shape.end(), 0) == t.shape.end()) return;
        std::string dims;
        for (std::size_t d = 0; d < t.shape.size(); ++d) dims += (d ? "x" : "") + std::to_string(t.shape[d]);
        fail(error_kind::unsupported, g.source + ": tensor " + std::to_string(i) + " '" + t.name + "': shape " + dims +
                                          " has no elements (empty activations are not supported)");
    };
    for (const auto& o : g.ops) {
        for (const auto i : o.inputs) check_not_empty(i);
        for (const auto i : o.outputs) check_not_empty(i);
    }
    return g;
}
#endif

}  // namespace vnnx::compiler
