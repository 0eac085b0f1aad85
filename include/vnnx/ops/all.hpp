#pragma once
// Every operator trait. To add an operator: write its trait in the header of its family and
// include that header here; ops/registry.hpp picks it up.
#include "vnnx/ops/lut.hpp"
