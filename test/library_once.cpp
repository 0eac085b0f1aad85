// The library's heavy entry points (compile, the simulator's executor tables, the reference
// interpreter, the TFLite and VNNX readers) compiled once for every test translation unit: the
// tests build with VNNX_SEPARATE_COMPILATION, this unit alone adds VNNX_IMPLEMENTATION.
#define VNNX_IMPLEMENTATION
#include <vnnx.hpp>
