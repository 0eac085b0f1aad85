#pragma once
// IDENTITY (300): a node that only runs its layers. With one input it first copies the input
// into its output tensor (the `<input>.id` copy of lowering.md §5.3) when the two differ.
#include <cstring>

#include "vnnx/format/enums.hpp"
#include "vnnx/sim/executors.hpp"

namespace vnnx::sim {

template <>
struct node_exec<static_cast<std::int32_t>(format::vnnx_operator::IDENTITY)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.tensors.size() < 2) return;
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.data == out.data) return;
        if (in.type != out.type && !((in.type == 0 || in.type == 1) && (out.type == 0 || out.type == 1)))
            c.reject("copies calc type " + std::to_string(in.type) + " into calc type " + std::to_string(out.type));
        c.require_same_count(in, out);
        std::memmove(out.data, in.data, static_cast<std::size_t>(in.count) * in.elem);
    }
};

}  // namespace vnnx::sim
