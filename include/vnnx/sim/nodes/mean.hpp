#pragma once
// MEAN (40) node: a MEAN that starts its split (lowering.md §7.7.1). Tensors: the input, the
// output; node union reduce8; the same arithmetic as the MEAN layer (sim/layers/reduce.hpp).
#include <cstdint>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/layers/reduce.hpp"

namespace vnnx::sim {

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::MEAN)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.rec.num_outputs != 1 || c.tensors.size() < 2)
            c.reject("expects one input and one output tensor");
        const auto r8 = c.rec.options.get<format::node_options::reduce8>();
        const auto a = reduce_exec_detail::args_of(c, r8, static_cast<std::int32_t>(builtin_operator::MEAN), c.tensors[1]);
        reduce_exec_detail::run_reduce(c, c.tensors[0], c.tensors[1], a);
    }
};

}  // namespace vnnx::sim
