#pragma once
// Small graph-editing helpers shared by the passes.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "vnnx/ir/graph.hpp"

namespace vnnx::compiler::passes {

/// Adds a constant int32 tensor.
inline std::int32_t add_i32_constant(graph& g, const std::string& name, std::vector<std::int32_t> shape,
                                     const std::vector<std::int32_t>& values) {
    tensor t;
    t.name = g.unique_name(name);
    t.type = tensor_type::INT32;
    t.shape = std::move(shape);
    std::vector<std::byte> bytes(values.size() * 4);
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    t.data = std::move(bytes);
    return g.add_tensor(std::move(t));
}

/// Adds an activation tensor shaped like `like` with another shape.
inline std::int32_t add_activation_like(graph& g, std::int32_t like, const std::string& name,
                                        std::vector<std::int32_t> shape) {
    tensor t;
    t.name = g.unique_name(name);
    t.type = g.t(like).type;
    t.quant = g.t(like).quant;
    t.shape = std::move(shape);
    return g.add_tensor(std::move(t));
}

/// Operators reading tensor `t`, in order.
inline std::vector<std::size_t> readers_of(const graph& g, std::int32_t t) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        for (auto x : g.ops[i].inputs)
            if (x == t) {
                out.push_back(i);
                break;
            }
    return out;
}

inline bool is_graph_output(const graph& g, std::int32_t t) {
    for (auto o : g.outputs)
        if (o == t) return true;
    return false;
}

/// Replaces every read of tensor `from` by `to` (operators and graph outputs).
inline void replace_uses(graph& g, std::int32_t from, std::int32_t to) {
    for (auto& o : g.ops)
        for (auto& x : o.inputs)
            if (x == from) x = to;
    for (auto& x : g.outputs)
        if (x == from) x = to;
}

/// SAME padding of one spatial axis as TFLite computes it: (before, after).
inline std::pair<std::int32_t, std::int32_t> same_pads(std::int32_t in, std::int32_t out, std::int32_t stride,
                                                       std::int32_t kernel, std::int32_t dilation) {
    const std::int32_t k = (kernel - 1) * dilation + 1;
    const std::int32_t total = std::max(stride * (out - 1) - in + k, 0);
    return {total / 2, total - total / 2};
}

}  // namespace vnnx::compiler::passes
