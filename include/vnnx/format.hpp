#pragma once
// The light face of vnnx for firmware build hosts: the VNNX records, their layout asserts and
// the VNNX_CHECK_C_* macros that prove a C header's structs have the same layout. Only the
// standard library: no flatbuffers, fmt, intrinsics, compiler or simulator
// (BENCHMARKS.md, "Include cost", measures what it costs to include).
#include "vnnx/format/enums.hpp"
#include "vnnx/format/records.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/format/c_check.hpp"
