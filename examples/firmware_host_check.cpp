// A firmware host proves at compile time that its own C header describes the VNNX layout that
// vnnx::format reads and writes. The block in extern "C" is written the way a firmware's
// vnnx-types.h declares the records (packed, 4-byte aligned, 64-bit offsets, anonymous
// unions); every VNNX_CHECK_C_* line is a set of static_asserts on sizeof and offsetof.
// If it compiles, the layouts agree; running it prints the sizes for the record.
#include <cstdint>
#include <cstdio>

#include <vnnx/format.hpp>

namespace firmware {
extern "C" {
#define FW_PACKED __attribute__((packed, aligned(4)))
typedef uint64_t obj_off_t;

typedef struct FW_PACKED {
    uint32_t base_ptr_offset_from_sp_start;
    uint32_t offset;
} indirect_ptr_t;

typedef struct FW_PACKED {
    int32_t type;
    int32_t shape[6];
    int32_t dims;
    int32_t external_producer, external_consumer;
    float scale;
    int32_t scale_f16, zero, multiplier, shift;
    indirect_ptr_t indirect;
    obj_off_t direct;
} vnnx_tensor_t;

typedef struct FW_PACKED {
    int32_t kernels, stride_width, stride_height, dilation_width_factor, dilation_height_factor;
    int32_t padding_width, padding_height, filter_shape_dims[4], group, imaps, conv_rows;
    int32_t use_vector, use_fia, use_db, use_depthwise, use_strided, fit_weights;
    int32_t split_weight_shaper_buffers, direct_dma, mxp_double_buffer, repeat;
    int32_t in_used, w_used, qt_used, out_used, sp_used, fia_preloaded, next_fia_node_id, preload_next_fia;
    obj_off_t filter_data, bias_data, quantization_records, nlf_data;
    uint32_t tile_count;
} layer_conv_t;

typedef struct FW_PACKED {
    int32_t diff_min, axis, depth, count;
    obj_off_t vci_int8, lut_int32, idx_int8;
} layer_softmax_t;

typedef struct FW_PACKED {
    int32_t type, input_data_type, output_data_type;
    int32_t strides[2], kernel_shape[2], dilations[2], pads[6];
    int32_t maps, num_inputs, num_outputs, num_tensors, activation_min, activation_max;
    obj_off_t input_multiplier, input_shift;
    int32_t input_offset;
    obj_off_t output_multiplier, output_shift;
    int32_t output_offset, nop;
    obj_off_t tensors;
    union {
        layer_conv_t Conv2DOptions;  // the largest member: it sets the union's size
        layer_softmax_t SoftmaxOptions;
        struct FW_PACKED { int32_t begin[4], end[4], stride[4]; } SliceOptions;
    };
} vnnx_layer_t;

typedef struct FW_PACKED {
    int32_t kernels, stride_width, stride_height, dilation_width_factor, dilation_height_factor;
    int32_t padding_width, padding_height, filter_shape_dims[4], group, imaps, conv_rows;
    int32_t use_vector, use_fia, use_db, use_depthwise, use_strided, fit_weights;
    int32_t split_weight_shaper_buffers, direct_dma, mxp_double_buffer, first_fia, last_fia, fia_collision;
    int32_t repeat, in_used, w_used, qt_used, out_used, sp_used, fia_preloaded, next_fia_node_id, preload_next_fia;
    obj_off_t filter_data, bias_data, quantization_records, nlf_data;
    uint32_t tile_count;
} node_conv_t;

typedef struct FW_PACKED {
    int32_t filter_shape_dims[2], input_stride, use_fia, first_fia, last_fia, fia_collision, mxp_double_buffer;
    obj_off_t filter_data, bias_data, quantization_records, nlf_data;
} node_fc_t;

typedef struct FW_PACKED {
    int32_t type, input_data_type, output_data_type, offloaded;
    int32_t input_strides[2], output_strides[2];
    int32_t channels, m, n, maps, rows, cols, skip, scratchpad_bytes;
    char input_description[48], output_description[48];
    obj_off_t sublayers;
    int32_t num_sublayers;
    int32_t row_start, row_last, orow_last, row_inc, row_inc0, rows_0, rows_final;
    int32_t col_start, col_last, ocol_last, col_inc, col_inc0, cols_0, cols_final;
    int32_t prefetch_bytes_per_map, use_replay;
    obj_off_t replay_buffer;
    int32_t replay_buffer_size, num_inputs, num_outputs, num_tensors;
    obj_off_t tensors;
    int32_t activation_min, activation_max;
    obj_off_t input_multiplier, input_shift;
    int32_t input_offset;
    obj_off_t output_multiplier, output_shift;
    int32_t output_offset;
    union {
        node_conv_t Conv2DOptions;  // the largest member
        node_fc_t FullyConnectedOptions;
        struct FW_PACKED { int32_t channels, rows, columns; } reduce8;
    };
} vnnx_subgraph_node_t;

typedef struct FW_PACKED {
    uint32_t version, vbx_nn_preset, num_inputs, num_outputs;
    uint32_t fixed_replay_buffer0, fixed_replay_buffer1, fixed_replay_buffer2, fixed_replay_buffer3;
    uint32_t include_io_data, data_bytes, allocate_bytes;
    obj_off_t io_nodes, io_offsets;
    int32_t num_layers;
    obj_off_t replay_buffer;
    int32_t replay_buffer_size;
    uint32_t magic;
    int32_t sparsity;
    vnnx_subgraph_node_t subgraphs[0];  // the node table follows the header
} vnnx_graph_t;
#undef FW_PACKED
}
}  // namespace firmware

// Each line checks sizeof and every field of a record, or of one union member, against the
// field lists of vnnx/format/records.hpp (a header declaring all 42 union members can check
// everything at once with VNNX_CHECK_C_ALL).
VNNX_CHECK_C_RECORD(firmware::indirect_ptr_t, indirect_ptr_t);
VNNX_CHECK_C_RECORD(firmware::vnnx_tensor_t, vnnx_tensor_t);
VNNX_CHECK_C_RECORD(firmware::vnnx_layer_t, vnnx_layer_t);
VNNX_CHECK_C_LAYER_OPTION(firmware::vnnx_layer_t, Conv2DOptions);
VNNX_CHECK_C_LAYER_OPTION(firmware::vnnx_layer_t, SoftmaxOptions);
VNNX_CHECK_C_LAYER_OPTION(firmware::vnnx_layer_t, SliceOptions);
VNNX_CHECK_C_RECORD(firmware::vnnx_subgraph_node_t, vnnx_subgraph_node_t);
VNNX_CHECK_C_NODE_OPTION(firmware::vnnx_subgraph_node_t, Conv2DOptions);
VNNX_CHECK_C_NODE_OPTION(firmware::vnnx_subgraph_node_t, FullyConnectedOptions);
VNNX_CHECK_C_NODE_OPTION(firmware::vnnx_subgraph_node_t, reduce8);
VNNX_CHECK_C_RECORD(firmware::vnnx_graph_t, vnnx_graph_t);

int main() {
    std::printf("firmware header matches vnnx::format: graph %zu, node %zu, layer %zu, tensor %zu bytes\n",
                sizeof(firmware::vnnx_graph_t), sizeof(firmware::vnnx_subgraph_node_t),
                sizeof(firmware::vnnx_layer_t), sizeof(firmware::vnnx_tensor_t));
    return 0;
}
