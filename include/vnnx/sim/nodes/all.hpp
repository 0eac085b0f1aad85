#pragma once
// Every node executor; sim/registry.hpp builds its table from these.
#include "vnnx/sim/nodes/identity.hpp"
#include "vnnx/sim/nodes/conv.hpp"
#include "vnnx/sim/nodes/concat_split.hpp"
#include "vnnx/sim/nodes/mean.hpp"
#include "vnnx/sim/nodes/batch_matmul.hpp"
