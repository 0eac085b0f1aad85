// format/c_check: a firmware host proves its own C structs match ours at compile time, here
// with the macros that take the fields by name (a subset, as a host checks the fields it
// reads), against the firmware-style header test/firmware_types.h (packed, aligned(4),
// anonymous unions). format_c_header_test.cpp checks the same header whole with the macros
// generated from the field lists.
#include <cstdint>

#include <catch2/catch.hpp>

#include <vnnx/format/c_check.hpp>
#include <vnnx/format/records.hpp>

extern "C" {
#include "firmware_types.h"
}

VNNX_CHECK_C_STRUCT(::indirect_ptr_t, vnnx::format::indirect_ptr_t, base_ptr_offset_from_sp_start, offset);
VNNX_CHECK_C_STRUCT(::vnnx_tensor_t, vnnx::format::vnnx_tensor_t, type, shape, dims, external_producer,
                    external_consumer, scale, scale_f16, zero, multiplier, shift, indirect, direct);
VNNX_CHECK_C_STRUCT(::vnnx_layer_t, vnnx::format::vnnx_layer_t, type, input_data_type, output_data_type, strides,
                    kernel_shape, dilations, pads, maps, num_inputs, num_outputs, num_tensors, activation_min,
                    activation_max, input_multiplier, input_shift, input_offset, output_multiplier, output_shift,
                    output_offset, nop, tensors);
VNNX_CHECK_C_UNION_MEMBER(::vnnx_layer_t, vnnx::format::vnnx_layer_t, leakyrelu, vnnx::format::layer_options::leakyrelu,
                          alpha_multiplier, alpha_shift);
VNNX_CHECK_C_UNION_MEMBER(::vnnx_layer_t, vnnx::format::vnnx_layer_t, SliceOptions,
                          vnnx::format::layer_options::SliceOptions, begin, end, stride);

TEST_CASE("c_check: a firmware-style packed struct matches (checked at compile time)") {
    // The checks above are static_asserts; here the same facts at run time, for the report.
    CHECK(sizeof(::vnnx_tensor_t) == 76);
    CHECK(sizeof(::vnnx_layer_t) == 300);
    CHECK(alignof(::vnnx_tensor_t) == 4);  // packed, aligned(4): 64-bit fields at 4 mod 8
}
