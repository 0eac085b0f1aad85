#pragma once
// vnnx: compile int8 TensorFlow Lite models to VectorBlox VNNX and simulate them.
// The umbrella header: everything the library offers.
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"
