#pragma once
// Every layer executor; sim/registry.hpp builds its table from these.
#include "vnnx/sim/layers/lut.hpp"
#include "vnnx/sim/layers/output_shaper.hpp"
#include "vnnx/sim/layers/activations.hpp"
#include "vnnx/sim/layers/broadcast.hpp"
#include "vnnx/sim/layers/eltwise.hpp"
#include "vnnx/sim/layers/movement.hpp"
#include "vnnx/sim/layers/pool.hpp"
#include "vnnx/sim/layers/reduce.hpp"
#include "vnnx/sim/layers/argmax.hpp"
#include "vnnx/sim/layers/resize.hpp"
#include "vnnx/sim/layers/softmax.hpp"
#include "vnnx/sim/layers/space_depth.hpp"
