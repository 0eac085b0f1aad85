#pragma once
// Executors by VNNX type code. `node_exec<T>` runs a node of type T on its own tensors,
// `layer_exec<T>` a layer of type T; each is specialised in the header of its family
// (sim/nodes/*.hpp, sim/layers/*.hpp) and sim/registry.hpp folds them into dispatch tables.
// An executor whose first run prepares data from the records (packed weights, tables in its
// cache) may also have `static void prepare(node_context&)` (`layer_context&` for a layer),
// which does only that and touches no tensor's data: the machine then prepares such nodes and
// layers ahead on another thread during a first run (machine.hpp).
#include <cstdint>

#include "vnnx/sim/context.hpp"

namespace vnnx::sim {

inline constexpr std::int32_t max_type_code = 306;

template <std::int32_t Type>
struct node_exec {
    static constexpr bool defined = false;
};

template <std::int32_t Type>
struct layer_exec {
    static constexpr bool defined = false;
};

}  // namespace vnnx::sim
