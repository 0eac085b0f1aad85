#pragma once
// Every layer executor; sim/registry.hpp builds its table from these.
#include "vnnx/sim/layers/lut.hpp"
