#pragma once
// Every operator trait. To add an operator: write its trait in the header of its family and
// include that header here; ops/registry.hpp picks it up.
#include "vnnx/ops/lut.hpp"
#include "vnnx/ops/conv.hpp"
#include "vnnx/ops/activations.hpp"
#include "vnnx/ops/eltwise.hpp"
#include "vnnx/ops/reshape.hpp"
#include "vnnx/ops/concat_split.hpp"
#include "vnnx/ops/slice.hpp"
#include "vnnx/ops/pad.hpp"
#include "vnnx/ops/pool.hpp"
#include "vnnx/ops/reduce.hpp"
#include "vnnx/ops/argmax.hpp"
#include "vnnx/ops/resize.hpp"
#include "vnnx/ops/softmax.hpp"
#include "vnnx/ops/space_depth.hpp"
#include "vnnx/ops/batch_matmul.hpp"
