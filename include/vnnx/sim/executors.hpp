#pragma once
// Executors by VNNX type code. `node_exec<T>` runs a node of type T on its own tensors,
// `layer_exec<T>` a layer of type T; each is specialised in the header of its family
// (sim/nodes/*.hpp, sim/layers/*.hpp) and sim/registry.hpp folds them into dispatch tables.
// A node executor whose first run prepares data from the file (packed weights in its cache)
// may also have `static void prepare(node_context&)`, which does only that: the machine then
// prepares such nodes ahead on another thread during a first run (machine.hpp).
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
