// format/c_check: a firmware host proves its own C structs match ours at compile time. The
// structs below are written the way the firmware header writes them (packed, aligned(4)),
// including an anonymous union, and checked field by field.
#include <cstdint>

#include <catch2/catch.hpp>

#include <vnnx/format/c_check.hpp>
#include <vnnx/format/records.hpp>

namespace fw {
extern "C" {
typedef uint64_t obj_off_t;
typedef struct __attribute__((packed, aligned(4))) {
    uint32_t base_ptr_offset_from_sp_start;
    uint32_t offset;
} indirect_ptr_t;

typedef struct __attribute__((packed, aligned(4))) {
    int32_t type;
    int32_t shape[6];
    int32_t dims;
    int32_t external_producer;
    int32_t external_consumer;
    float scale;
    int32_t scale_f16;
    int32_t zero;
    int32_t multiplier;
    int32_t shift;
    indirect_ptr_t indirect;
    obj_off_t direct;
} vnnx_tensor_t;

typedef struct __attribute__((packed, aligned(4))) {
    int32_t type, input_data_type, output_data_type;
    int32_t strides[2], kernel_shape[2], dilations[2], pads[6];
    int32_t maps, num_inputs, num_outputs, num_tensors, activation_min, activation_max;
    obj_off_t input_multiplier, input_shift;
    int32_t input_offset;
    obj_off_t output_multiplier, output_shift;
    int32_t output_offset, nop;
    obj_off_t tensors;
    union {
        struct __attribute__((packed, aligned(4))) {
            obj_off_t alpha_multiplier;
            obj_off_t alpha_shift;
        } leakyrelu;
        struct __attribute__((packed, aligned(4))) {
            int32_t begin[4], end[4], stride[4];
        } SliceOptions;
        struct __attribute__((packed, aligned(4))) {
            int32_t pad_to_full_size[41];  // stands in for the largest member (164 bytes)
        } big;
    };
} vnnx_layer_t;
}
}  // namespace fw

VNNX_CHECK_C_STRUCT(fw::indirect_ptr_t, vnnx::format::indirect_ptr_t, base_ptr_offset_from_sp_start, offset);
VNNX_CHECK_C_STRUCT(fw::vnnx_tensor_t, vnnx::format::vnnx_tensor_t, type, shape, dims, external_producer,
                    external_consumer, scale, scale_f16, zero, multiplier, shift, indirect, direct);
VNNX_CHECK_C_STRUCT(fw::vnnx_layer_t, vnnx::format::vnnx_layer_t, type, input_data_type, output_data_type, strides,
                    kernel_shape, dilations, pads, maps, num_inputs, num_outputs, num_tensors, activation_min,
                    activation_max, input_multiplier, input_shift, input_offset, output_multiplier, output_shift,
                    output_offset, nop, tensors);
VNNX_CHECK_C_UNION_MEMBER(fw::vnnx_layer_t, vnnx::format::vnnx_layer_t, leakyrelu, vnnx::format::layer_options::leakyrelu,
                          alpha_multiplier, alpha_shift);
VNNX_CHECK_C_UNION_MEMBER(fw::vnnx_layer_t, vnnx::format::vnnx_layer_t, SliceOptions,
                          vnnx::format::layer_options::SliceOptions, begin, end, stride);

TEST_CASE("c_check: a firmware-style packed struct matches (checked at compile time)") {
    // The checks above are static_asserts; here the same facts at run time, for the report.
    CHECK(sizeof(fw::vnnx_tensor_t) == 76);
    CHECK(sizeof(fw::vnnx_layer_t) == 300);
    CHECK(alignof(fw::vnnx_tensor_t) == 4);  // packed, aligned(4): 64-bit fields at 4 mod 8
}
