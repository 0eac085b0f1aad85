#pragma once
// How the library's heavy entry points are linked. By default vnnx is header-only: every entry
// point is an inline function and each translation unit that calls one compiles it (with all
// of the compiler, simulator or reference interpreter behind it).
//
// A program of many translation units can compile those once instead: define
// VNNX_SEPARATE_COMPILATION in every translation unit that includes vnnx, and additionally
// VNNX_IMPLEMENTATION in exactly one of them (see README.md, "Compiling vnnx once"). The
// entry points are then ordinary external functions, declared everywhere and defined in that
// one unit; everything else stays inline and behaves the same. The entry points:
//   vnnx::compile                                   (the whole compiler)
//   vnnx::compiler::import_graph, find_problems, checked_graph (the operator table's checks)
//   vnnx::sim::node_function, layer_function        (the simulator's executor tables)
//   vnnx::sim::machine's constructor, run(), resolve()
//   vnnx::ref::run, run_traced, run_until, run_observing_accumulators (the reference interpreter)
//   vnnx::tflite::model_view::parse, builder::finish, vnnx::format::model_view's validation
#if defined(VNNX_SEPARATE_COMPILATION)
#define VNNX_ENTRY
#if defined(VNNX_IMPLEMENTATION)
#define VNNX_DEFINE_ENTRIES 1
#else
#define VNNX_DEFINE_ENTRIES 0
#endif
#else
#define VNNX_ENTRY inline
#define VNNX_DEFINE_ENTRIES 1
#endif
