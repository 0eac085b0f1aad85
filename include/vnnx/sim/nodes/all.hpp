#pragma once
// Every node executor; sim/registry.hpp builds its table from these.
#include "vnnx/sim/nodes/identity.hpp"
