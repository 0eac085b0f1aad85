/* A firmware-style C header for the VNNX records: written the way a firmware's vnnx-types.h
 * declares them (packed structs aligned to 4 bytes, 64-bit offsets, anonymous unions of
 * named member structs). It is text of its own, not generated: a field changed in
 * vnnx/format/records.hpp and not here fails format_c_header_test.cpp, which checks every
 * record and union member with VNNX_CHECK_C_ALL; firmware_types_c.c compiles it as C11. */
#ifndef VNNX_TEST_FIRMWARE_TYPES_H
#define VNNX_TEST_FIRMWARE_TYPES_H
#include <stdint.h>

#define VNNX_FW_PACKED __attribute__((packed, aligned(4)))

typedef uint64_t obj_off_t;

typedef struct VNNX_FW_PACKED {
    uint32_t base_ptr_offset_from_sp_start;
    uint32_t offset;
} indirect_ptr_t;

typedef struct VNNX_FW_PACKED {
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

typedef struct VNNX_FW_PACKED {
    int32_t type;
    int32_t input_data_type;
    int32_t output_data_type;
    int32_t strides[2];
    int32_t kernel_shape[2];
    int32_t dilations[2];
    int32_t pads[6];
    int32_t maps;
    int32_t num_inputs;
    int32_t num_outputs;
    int32_t num_tensors;
    int32_t activation_min;
    int32_t activation_max;
    obj_off_t input_multiplier;
    obj_off_t input_shift;
    int32_t input_offset;
    obj_off_t output_multiplier;
    obj_off_t output_shift;
    int32_t output_offset;
    int32_t nop;
    obj_off_t tensors;
    union {
        struct VNNX_FW_PACKED {
            int32_t kernels;
            int32_t stride_width;
            int32_t stride_height;
            int32_t dilation_width_factor;
            int32_t dilation_height_factor;
            int32_t padding_width;
            int32_t padding_height;
            int32_t filter_shape_dims[4];
            int32_t group;
            int32_t imaps;
            int32_t conv_rows;
            int32_t use_vector;
            int32_t use_fia;
            int32_t use_db;
            int32_t use_depthwise;
            int32_t use_strided;
            int32_t fit_weights;
            int32_t split_weight_shaper_buffers;
            int32_t direct_dma;
            int32_t mxp_double_buffer;
            int32_t repeat;
            int32_t in_used;
            int32_t w_used;
            int32_t qt_used;
            int32_t out_used;
            int32_t sp_used;
            int32_t fia_preloaded;
            int32_t next_fia_node_id;
            int32_t preload_next_fia;
            obj_off_t filter_data;
            obj_off_t bias_data;
            obj_off_t quantization_records;
            obj_off_t nlf_data;
            uint32_t tile_count;
        } Conv2DOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
        } ConcatOptions;
        struct VNNX_FW_PACKED {
            obj_off_t input2_multiplier;
            obj_off_t input2_shift;
            int32_t input2_offset;
            obj_off_t bias_data;
            int32_t swap;
            int32_t optimized;
            int32_t isize;
            int32_t left_shift;
            int32_t type;
        } eltwise8;
        struct VNNX_FW_PACKED {
            int32_t channels;
            int32_t rows;
            int32_t columns;
        } reduce8;
        struct VNNX_FW_PACKED {
            int32_t filter_shape_dims[4];
            obj_off_t filter_multiplier;
            obj_off_t filter_shift;
            int32_t filter_offset;
            obj_off_t filter_data;
            obj_off_t bias_data;
            float iscale;
            float fscale;
            float oscale;
            int32_t broadcast;
            int32_t optimized;
            int32_t isize;
            int32_t left_shift;
            int32_t sub;
            int32_t swap_inputs;
        } broadcast8;
        struct VNNX_FW_PACKED {
            int32_t value;
            int32_t transpose_dilate_w;
            int32_t transpose_dilate_h;
        } PadOptions;
        struct VNNX_FW_PACKED {
            float min;
            float max;
        } clip;
        struct VNNX_FW_PACKED {
            int32_t unsigned_input;
            int32_t unsigned_output;
            obj_off_t weights;
        } depthwise;
        struct VNNX_FW_PACKED {
            obj_off_t alpha_multiplier;
            obj_off_t alpha_shift;
            int32_t alpha_offset;
            int32_t optimized;
            int32_t maps_at_once;
            float iscale;
            float ascale;
            float oscale;
            obj_off_t vci_int8;
            obj_off_t alpha_data;
            int32_t alpha_shape[4];
        } prelu;
        struct VNNX_FW_PACKED {
            obj_off_t alpha_multiplier;
            obj_off_t alpha_shift;
        } leakyrelu;
        struct VNNX_FW_PACKED {
            int32_t diff_min;
            int32_t axis;
            int32_t depth;
            int32_t count;
            obj_off_t vci_int8;
            obj_off_t lut_int32;
            obj_off_t idx_int8;
        } SoftmaxOptions;
        struct VNNX_FW_PACKED {
            int32_t input_range_radius;
            int32_t count;
            int32_t lut_count;
            obj_off_t vci_int8;
            obj_off_t lut_int8;
            obj_off_t idx_int8;
        } ActivationOptions;
        struct VNNX_FW_PACKED {
            int32_t diff_min;
            int32_t outer_size;
            int32_t depth;
            int32_t reverse_scaling_divisor;
            int32_t reverse_scaling_right_shift;
            int32_t axis;
        } LogSoftmaxOptions;
        struct VNNX_FW_PACKED {
            obj_off_t memory_offset;
        } prefetch;
        struct VNNX_FW_PACKED {
            int32_t begin[4];
            int32_t end[4];
            int32_t stride[4];
        } SliceOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
            int32_t batch_dims;
            obj_off_t coord_data;
            int32_t batch_size;
            int32_t outer_size;
            int32_t axis_size;
            int32_t inner_size;
            int32_t coord_size;
            int32_t swap_input_order;
        } GatherOptions;
        struct VNNX_FW_PACKED {
            obj_off_t block_shape_data;
            obj_off_t paddings_data;
        } SpaceToBatchNDOptions;
        struct VNNX_FW_PACKED {
            obj_off_t block_shape_data;
            obj_off_t crop_data;
        } BatchToSpaceNDOptions;
        struct VNNX_FW_PACKED {
            int32_t mode;
        } MirrorPadOptions;
        struct VNNX_FW_PACKED {
            int32_t mode;
        } ReshapeOptions;
        struct VNNX_FW_PACKED {
            int32_t r;
        } PixelShuffleOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
            int32_t count;
            int32_t dims;
        } PackOptions;
        struct VNNX_FW_PACKED {
            float scale[2];
            int32_t mode;
            int32_t num_c_inc;
            obj_off_t c_inc;
            int32_t min_rows;
            int32_t min_cols;
            int32_t min_maps;
            int32_t rows_trips;
            int32_t cols_trips;
            int32_t maps_trips;
            int32_t in_scratchpad;
        } ResizeOptions;
        struct VNNX_FW_PACKED {
            int32_t permutation[3];
            int32_t out_maps_at_once;
            int32_t out_rows_at_once;
        } TransposeOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
            int32_t max_split;
            obj_off_t splits;
        } SplitOptions;
        struct VNNX_FW_PACKED {
            int32_t colar_map_dims[2];
            obj_off_t colar_map_data;
        } embedding;
        struct VNNX_FW_PACKED {
            int32_t max;
            int32_t filter_shape_dims[4];
            obj_off_t filter_multiplier;
            obj_off_t filter_shift;
            int32_t filter_offset;
            obj_off_t filter_data;
        } MinMaxOptions;
        struct VNNX_FW_PACKED {
            int32_t height;
            int32_t height_final;
            int32_t width;
            int32_t width_final;
            int32_t shaper_height;
            int32_t shaper_height_final;
            int32_t shaper_width;
            int32_t shaper_width_final;
            int32_t stride_height;
            int32_t use_strided;
        } ShaperOptions;
    };
} vnnx_layer_t;

typedef struct VNNX_FW_PACKED {
    int32_t type;
    int32_t input_data_type;
    int32_t output_data_type;
    int32_t offloaded;
    int32_t input_strides[2];
    int32_t output_strides[2];
    int32_t channels;
    int32_t m;
    int32_t n;
    int32_t maps;
    int32_t rows;
    int32_t cols;
    int32_t skip;
    int32_t scratchpad_bytes;
    char input_description[48];
    char output_description[48];
    obj_off_t sublayers;
    int32_t num_sublayers;
    int32_t row_start;
    int32_t row_last;
    int32_t orow_last;
    int32_t row_inc;
    int32_t row_inc0;
    int32_t rows_0;
    int32_t rows_final;
    int32_t col_start;
    int32_t col_last;
    int32_t ocol_last;
    int32_t col_inc;
    int32_t col_inc0;
    int32_t cols_0;
    int32_t cols_final;
    int32_t prefetch_bytes_per_map;
    int32_t use_replay;
    obj_off_t replay_buffer;
    int32_t replay_buffer_size;
    int32_t num_inputs;
    int32_t num_outputs;
    int32_t num_tensors;
    obj_off_t tensors;
    int32_t activation_min;
    int32_t activation_max;
    obj_off_t input_multiplier;
    obj_off_t input_shift;
    int32_t input_offset;
    obj_off_t output_multiplier;
    obj_off_t output_shift;
    int32_t output_offset;
    union {
        struct VNNX_FW_PACKED {
            int32_t kernels;
            int32_t stride_width;
            int32_t stride_height;
            int32_t dilation_width_factor;
            int32_t dilation_height_factor;
            int32_t padding_width;
            int32_t padding_height;
            int32_t filter_shape_dims[4];
            int32_t group;
            int32_t imaps;
            int32_t conv_rows;
            int32_t use_vector;
            int32_t use_fia;
            int32_t use_db;
            int32_t use_depthwise;
            int32_t use_strided;
            int32_t fit_weights;
            int32_t split_weight_shaper_buffers;
            int32_t direct_dma;
            int32_t mxp_double_buffer;
            int32_t first_fia;
            int32_t last_fia;
            int32_t fia_collision;
            int32_t repeat;
            int32_t in_used;
            int32_t w_used;
            int32_t qt_used;
            int32_t out_used;
            int32_t sp_used;
            int32_t fia_preloaded;
            int32_t next_fia_node_id;
            int32_t preload_next_fia;
            obj_off_t filter_data;
            obj_off_t bias_data;
            obj_off_t quantization_records;
            obj_off_t nlf_data;
            uint32_t tile_count;
        } Conv2DOptions;
        struct VNNX_FW_PACKED {
            obj_off_t input2_multiplier;
            obj_off_t input2_shift;
            int32_t input2_offset;
            obj_off_t bias_data;
            int32_t swap;
            int32_t optimized;
            int32_t isize;
            int32_t left_shift;
            int32_t type;
        } eltwise8;
        struct VNNX_FW_PACKED {
            int32_t channels;
            int32_t rows;
            int32_t columns;
        } reduce8;
        struct VNNX_FW_PACKED {
            int32_t filter_shape_dims[2];
            int32_t input_stride;
            int32_t use_fia;
            int32_t first_fia;
            int32_t last_fia;
            int32_t fia_collision;
            int32_t mxp_double_buffer;
            obj_off_t filter_data;
            obj_off_t bias_data;
            obj_off_t quantization_records;
            obj_off_t nlf_data;
        } FullyConnectedOptions;
        struct VNNX_FW_PACKED {
            int32_t adj_x;
            int32_t adj_y;
            int32_t asym;
        } BatchMatMulOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
        } ConcatOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
            int32_t count;
            int32_t dims;
        } PackOptions;
        struct VNNX_FW_PACKED {
            int32_t pixels_per_loop;
        } argmax;
        struct VNNX_FW_PACKED {
            float alpha;
            float beta;
            float bias;
            float scale;
            int32_t size;
        } lrn;
        struct VNNX_FW_PACKED {
            int32_t tile[4];
        } TileOptions;
        struct VNNX_FW_PACKED {
            int32_t stride;
        } reorg;
        struct VNNX_FW_PACKED {
            float scale[2];
            int32_t mode;
            int32_t num_c_inc;
            obj_off_t c_inc;
            int32_t min_rows;
            int32_t min_cols;
            int32_t min_maps;
            int32_t rows_trips;
            int32_t cols_trips;
            int32_t maps_trips;
            int32_t in_scratchpad;
        } ResizeOptions;
        struct VNNX_FW_PACKED {
            int32_t permutation[3];
            int32_t out_maps_at_once;
            int32_t out_rows_at_once;
        } TransposeOptions;
        struct VNNX_FW_PACKED {
            int32_t axis;
            int32_t max_split;
            obj_off_t splits;
        } SplitOptions;
    };
} vnnx_subgraph_node_t;

typedef struct VNNX_FW_PACKED {
    uint32_t version;
    uint32_t vbx_nn_preset;
    uint32_t num_inputs;
    uint32_t num_outputs;
    uint32_t fixed_replay_buffer0;
    uint32_t fixed_replay_buffer1;
    uint32_t fixed_replay_buffer2;
    uint32_t fixed_replay_buffer3;
    uint32_t include_io_data;
    uint32_t data_bytes;
    uint32_t allocate_bytes;
    obj_off_t io_nodes;
    obj_off_t io_offsets;
    int32_t num_layers;
    obj_off_t replay_buffer;
    int32_t replay_buffer_size;
    uint32_t magic;
    int32_t sparsity;
    vnnx_subgraph_node_t subgraphs[0];
} vnnx_graph_t;

#endif
