// The headers every test unit reads, precompiled once for all of them (CMake's
// target_precompile_headers, Meson's cpp_pch): about 5 s less per unit.
#include <vnnx.hpp>
#include <catch2/catch.hpp>
