#pragma once
// The TFLite tables this project reads, described as trait types over the flatbuffers runtime.
// Each table lists its fields once (name, vtable slot, kind/type, default) in an X-list; the
// accessors (model_view), the verifier and the builder are all derived from that one list.
// Facts (slots, defaults, union numbers) follow TensorFlow Lite's schema version 3.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <flatbuffers/flatbuffers.h>

namespace vnnx::tflite {

// Vectors are read in place as spans: that needs the flatbuffers little-endian layout natively.
static_assert(std::endian::native == std::endian::little, "vnnx::tflite reads flatbuffer vectors in place");

// ---------------------------------------------------------------------------------------------
// Enums of the schema (values are the file's values).

enum class tensor_type : std::int8_t {
    FLOAT32 = 0, FLOAT16 = 1, INT32 = 2, UINT8 = 3, INT64 = 4, STRING = 5, BOOL = 6, INT16 = 7,
    COMPLEX64 = 8, INT8 = 9, FLOAT64 = 10, COMPLEX128 = 11, UINT64 = 12, RESOURCE = 13, VARIANT = 14,
    UINT32 = 15, UINT16 = 16, INT4 = 17,
};
inline constexpr int tensor_type_count = 18;

/// "int8", "float32", ...; "" for a value outside the schema.
[[nodiscard]] constexpr std::string_view type_name(tensor_type t) noexcept {
    constexpr std::string_view names[tensor_type_count] = {
        "float32", "float16", "int32", "uint8", "int64", "string", "bool", "int16", "complex64",
        "int8", "float64", "complex128", "uint64", "resource", "variant", "uint32", "uint16", "int4"};
    const int i = static_cast<int>(t);
    return i >= 0 && i < tensor_type_count ? names[i] : std::string_view{};
}

/// Bytes per element; 0 for types without a fixed element size (string, resource, variant, int4).
[[nodiscard]] constexpr std::size_t element_size(tensor_type t) noexcept {
    switch (t) {
        case tensor_type::FLOAT32: case tensor_type::INT32: case tensor_type::UINT32: return 4;
        case tensor_type::FLOAT16: case tensor_type::INT16: case tensor_type::UINT16: return 2;
        case tensor_type::UINT8: case tensor_type::INT8: case tensor_type::BOOL: return 1;
        case tensor_type::INT64: case tensor_type::UINT64: case tensor_type::FLOAT64:
        case tensor_type::COMPLEX64: return 8;
        case tensor_type::COMPLEX128: return 16;
        default: return 0;
    }
}

[[nodiscard]] constexpr bool is_valid(tensor_type t) noexcept {
    return static_cast<int>(t) >= 0 && static_cast<int>(t) < tensor_type_count;
}

enum class padding_mode : std::int8_t { SAME = 0, VALID = 1 };
enum class activation_function : std::int8_t { NONE = 0, RELU = 1, RELU_N1_TO_1 = 2, RELU6 = 3, TANH = 4, SIGN_BIT = 5 };
enum class mirror_pad_mode : std::int8_t { REFLECT = 0, SYMMETRIC = 1 };
enum class fc_weights_format : std::int8_t { DEFAULT = 0, SHUFFLED4x16INT8 = 1 };

[[nodiscard]] constexpr std::string_view activation_name(activation_function a) noexcept {
    constexpr std::string_view names[] = {"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"};
    const int i = static_cast<int>(a);
    return i >= 0 && i < 6 ? names[i] : std::string_view{};
}

// ---------------------------------------------------------------------------------------------
// Field kinds: how a field is stored, read, verified and written.
namespace schema {

struct no_default {};

template <class T>
struct scalar {
    using value = T;
    using default_type = T;
    // bools travel as one byte; enums as their underlying type
    using storage = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t,
                                       typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>,
                                                                   std::type_identity<T>>::type>;
};
struct string {
    using value = std::string;
    using default_type = no_default;
};
template <class T>
struct vector {
    using element = T;
    using value = std::vector<T>;
    using default_type = no_default;
};
template <class Trait>
struct table {
    using trait = Trait;
    using default_type = no_default;
};
template <class Trait>
struct table_vector {
    using trait = Trait;
    using default_type = no_default;
};
/// A table we do not read (metadata, sparsity, union members we ignore): checked for bounds only.
struct opaque_table {
    using default_type = no_default;
};
struct opaque_table_vector {
    using default_type = no_default;
};

template <class Kind>
struct field {
    std::string_view name;
    flatbuffers::voffset_t slot;
    typename Kind::default_type def{};
    using kind = Kind;
    /// The vtable offset of slot n: the vtable starts with its own size and the table size.
    [[nodiscard]] constexpr flatbuffers::voffset_t voffset() const noexcept {
        return static_cast<flatbuffers::voffset_t>(4 + 2 * slot);
    }
};

}  // namespace schema

// ---------------------------------------------------------------------------------------------
// Table traits. X(name, slot, kind, default)

#define VNNX_TFLITE_FIELD_DESC(n, slot, kind, def) static constexpr ::vnnx::tflite::schema::field<kind> n{#n, slot, def};
#define VNNX_TFLITE_FIELD_CALL(n, slot, kind, def) f(n);
#define VNNX_TFLITE_FIELD_MEMBER(n, slot, kind, def) typename kind::value n = def;
#define VNNX_TFLITE_FIELD_PAIR(n, slot, kind, def) f(n, &value::n);

#define VNNX_TFLITE_TABLE(Trait, FIELDS)                                    \
    struct Trait {                                                          \
        static constexpr std::string_view table_name = #Trait;              \
        FIELDS(VNNX_TFLITE_FIELD_DESC)                                      \
        template <class F>                                                  \
        static constexpr void for_each_field([[maybe_unused]] F&& f) {      \
            FIELDS(VNNX_TFLITE_FIELD_CALL)                                  \
        }                                                                   \
    }

// An options table: also a value struct (defaults applied) and its BuiltinOptions union number.
#define VNNX_TFLITE_OPTIONS(Trait, snake, union_number, FIELDS)                     \
    struct Trait {                                                                  \
        static constexpr std::string_view table_name = #Trait;                      \
        static constexpr std::uint8_t union_type = union_number;                    \
        FIELDS(VNNX_TFLITE_FIELD_DESC)                                              \
        template <class F>                                                          \
        static constexpr void for_each_field([[maybe_unused]] F&& f) {              \
            FIELDS(VNNX_TFLITE_FIELD_CALL)                                          \
        }                                                                           \
        struct value {                                                              \
            using trait = Trait;                                                    \
            FIELDS(VNNX_TFLITE_FIELD_MEMBER)                                        \
        };                                                                          \
        template <class F>                                                          \
        static void for_each_member([[maybe_unused]] F&& f) {                       \
            FIELDS(VNNX_TFLITE_FIELD_PAIR)                                          \
        }                                                                           \
    };                                                                              \
    }                                                                               \
    using snake = opt::Trait::value;                                                \
    namespace opt {

namespace tbl {
using namespace schema;

#define VNNX_TFLITE_BUFFER_FIELDS(X) \
    X(data, 0, vector<std::uint8_t>, {}) X(offset, 1, scalar<std::uint64_t>, 0) X(size, 2, scalar<std::uint64_t>, 0)
VNNX_TFLITE_TABLE(Buffer, VNNX_TFLITE_BUFFER_FIELDS);

#define VNNX_TFLITE_OPERATOR_CODE_FIELDS(X)                                                     \
    X(deprecated_builtin_code, 0, scalar<std::int8_t>, 0) X(custom_code, 1, string, {})         \
    X(version, 2, scalar<std::int32_t>, 1) X(builtin_code, 3, scalar<std::int32_t>, 0)
VNNX_TFLITE_TABLE(OperatorCode, VNNX_TFLITE_OPERATOR_CODE_FIELDS);

// `details` is a union: its type byte takes slot 4, the table slot 5.
#define VNNX_TFLITE_QUANTIZATION_FIELDS(X)                                                      \
    X(min, 0, vector<float>, {}) X(max, 1, vector<float>, {}) X(scale, 2, vector<float>, {})    \
    X(zero_point, 3, vector<std::int64_t>, {}) X(details_type, 4, scalar<std::uint8_t>, 0)      \
    X(details, 5, opaque_table, {}) X(quantized_dimension, 6, scalar<std::int32_t>, 0)
VNNX_TFLITE_TABLE(QuantizationParameters, VNNX_TFLITE_QUANTIZATION_FIELDS);

#define VNNX_TFLITE_TENSOR_FIELDS(X)                                                              \
    X(shape, 0, vector<std::int32_t>, {}) X(type, 1, scalar<tensor_type>, tensor_type::FLOAT32)   \
    X(buffer, 2, scalar<std::uint32_t>, 0) X(name, 3, string, {})                                 \
    X(quantization, 4, table<QuantizationParameters>, {}) X(is_variable, 5, scalar<bool>, false)  \
    X(sparsity, 6, opaque_table, {}) X(shape_signature, 7, vector<std::int32_t>, {})              \
    X(has_rank, 8, scalar<bool>, false) X(variant_tensors, 9, opaque_table_vector, {})
VNNX_TFLITE_TABLE(Tensor, VNNX_TFLITE_TENSOR_FIELDS);

// builtin_options: union (type slot 3, table slot 4); builtin_options_2: slots 11, 12.
#define VNNX_TFLITE_OPERATOR_FIELDS(X)                                                             \
    X(opcode_index, 0, scalar<std::uint32_t>, 0) X(inputs, 1, vector<std::int32_t>, {})            \
    X(outputs, 2, vector<std::int32_t>, {}) X(builtin_options_type, 3, scalar<std::uint8_t>, 0)    \
    X(builtin_options, 4, opaque_table, {}) X(custom_options, 5, vector<std::uint8_t>, {})         \
    X(custom_options_format, 6, scalar<std::int8_t>, 0)                                            \
    X(mutating_variable_inputs, 7, vector<std::uint8_t>, {}) X(intermediates, 8, vector<std::int32_t>, {}) \
    X(large_custom_options_offset, 9, scalar<std::uint64_t>, 0)                                    \
    X(large_custom_options_size, 10, scalar<std::uint64_t>, 0)                                     \
    X(builtin_options_2_type, 11, scalar<std::uint8_t>, 0) X(builtin_options_2, 12, opaque_table, {}) \
    X(debug_metadata_index, 13, scalar<std::int32_t>, -1)
VNNX_TFLITE_TABLE(Operator, VNNX_TFLITE_OPERATOR_FIELDS);

#define VNNX_TFLITE_SUBGRAPH_FIELDS(X)                                                            \
    X(tensors, 0, table_vector<Tensor>, {}) X(inputs, 1, vector<std::int32_t>, {})                \
    X(outputs, 2, vector<std::int32_t>, {}) X(operators, 3, table_vector<Operator>, {})           \
    X(name, 4, string, {}) X(debug_metadata_index, 5, scalar<std::int32_t>, -1)
VNNX_TFLITE_TABLE(SubGraph, VNNX_TFLITE_SUBGRAPH_FIELDS);

#define VNNX_TFLITE_MODEL_FIELDS(X)                                                                  \
    X(version, 0, scalar<std::uint32_t>, 0) X(operator_codes, 1, table_vector<OperatorCode>, {})     \
    X(subgraphs, 2, table_vector<SubGraph>, {}) X(description, 3, string, {})                        \
    X(buffers, 4, table_vector<Buffer>, {}) X(metadata_buffer, 5, vector<std::int32_t>, {})          \
    X(metadata, 6, opaque_table_vector, {}) X(signature_defs, 7, opaque_table_vector, {})
VNNX_TFLITE_TABLE(Model, VNNX_TFLITE_MODEL_FIELDS);

}  // namespace tbl

// ---------------------------------------------------------------------------------------------
// Options tables of the operators in lowering.md §6 (and a few neighbours), with their
// BuiltinOptions union numbers. `opt::Conv2DOptions` is the trait, `conv2d_options` its value.
namespace opt {
using namespace schema;
#define VNNX_TFLITE_NO_FIELDS(X)

#define VNNX_F_CONV2D(X)                                                                                  \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0)                                                               \
    X(fused_activation_function, 3, scalar<activation_function>, activation_function::NONE)               \
    X(dilation_w_factor, 4, scalar<std::int32_t>, 1) X(dilation_h_factor, 5, scalar<std::int32_t>, 1)      \
    X(quantized_bias_type, 6, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(Conv2DOptions, conv2d_options, 1, VNNX_F_CONV2D)

#define VNNX_F_DWCONV(X)                                                                                  \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0) X(depth_multiplier, 3, scalar<std::int32_t>, 0)                \
    X(fused_activation_function, 4, scalar<activation_function>, activation_function::NONE)               \
    X(dilation_w_factor, 5, scalar<std::int32_t>, 1) X(dilation_h_factor, 6, scalar<std::int32_t>, 1)
VNNX_TFLITE_OPTIONS(DepthwiseConv2DOptions, depthwise_conv2d_options, 2, VNNX_F_DWCONV)

#define VNNX_F_POOL(X)                                                                                    \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0) X(filter_width, 3, scalar<std::int32_t>, 0)                    \
    X(filter_height, 4, scalar<std::int32_t>, 0)                                                          \
    X(fused_activation_function, 5, scalar<activation_function>, activation_function::NONE)
VNNX_TFLITE_OPTIONS(Pool2DOptions, pool2d_options, 5, VNNX_F_POOL)

#define VNNX_F_FC(X)                                                                                      \
    X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE)               \
    X(weights_format, 1, scalar<fc_weights_format>, fc_weights_format::DEFAULT)                           \
    X(keep_num_dims, 2, scalar<bool>, false) X(asymmetric_quantize_inputs, 3, scalar<bool>, false)         \
    X(quantized_bias_type, 4, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(FullyConnectedOptions, fully_connected_options, 8, VNNX_F_FC)

#define VNNX_F_SOFTMAX(X) X(beta, 0, scalar<float>, 0.0f)
VNNX_TFLITE_OPTIONS(SoftmaxOptions, softmax_options, 9, VNNX_F_SOFTMAX)

#define VNNX_F_CONCAT(X) \
    X(axis, 0, scalar<std::int32_t>, 0) X(fused_activation_function, 1, scalar<activation_function>, activation_function::NONE)
VNNX_TFLITE_OPTIONS(ConcatenationOptions, concatenation_options, 10, VNNX_F_CONCAT)

#define VNNX_F_ADDSUB(X) \
    X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE) X(pot_scale_int16, 1, scalar<bool>, true)
VNNX_TFLITE_OPTIONS(AddOptions, add_options, 11, VNNX_F_ADDSUB)
VNNX_TFLITE_OPTIONS(SubOptions, sub_options, 28, VNNX_F_ADDSUB)

#define VNNX_F_ACT_ONLY(X) X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE)
VNNX_TFLITE_OPTIONS(L2NormOptions, l2norm_options, 12, VNNX_F_ACT_ONLY)
VNNX_TFLITE_OPTIONS(MulOptions, mul_options, 21, VNNX_F_ACT_ONLY)
VNNX_TFLITE_OPTIONS(DivOptions, div_options, 29, VNNX_F_ACT_ONLY)

#define VNNX_F_RESIZE_BILINEAR(X)                                                                  \
    X(new_height, 0, scalar<std::int32_t>, 0) X(new_width, 1, scalar<std::int32_t>, 0)              \
    X(align_corners, 2, scalar<bool>, false) X(half_pixel_centers, 3, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(ResizeBilinearOptions, resize_bilinear_options, 15, VNNX_F_RESIZE_BILINEAR)

#define VNNX_F_RESHAPE(X) X(new_shape, 0, vector<std::int32_t>, {})
VNNX_TFLITE_OPTIONS(ReshapeOptions, reshape_options, 17, VNNX_F_RESHAPE)

#define VNNX_F_BLOCK(X) X(block_size, 0, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(SpaceToDepthOptions, space_to_depth_options, 19, VNNX_F_BLOCK)
VNNX_TFLITE_OPTIONS(DepthToSpaceOptions, depth_to_space_options, 94, VNNX_F_BLOCK)

VNNX_TFLITE_OPTIONS(PadOptions, pad_options, 22, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_GATHER(X) X(axis, 0, scalar<std::int32_t>, 0) X(batch_dims, 1, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(GatherOptions, gather_options, 23, VNNX_F_GATHER)

VNNX_TFLITE_OPTIONS(BatchToSpaceNDOptions, batch_to_space_nd_options, 24, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(SpaceToBatchNDOptions, space_to_batch_nd_options, 25, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(TransposeOptions, transpose_options, 26, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_REDUCER(X) X(keep_dims, 0, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(ReducerOptions, reducer_options, 27, VNNX_F_REDUCER)

#define VNNX_F_SQUEEZE(X) X(squeeze_dims, 0, vector<std::int32_t>, {})
VNNX_TFLITE_OPTIONS(SqueezeOptions, squeeze_options, 30, VNNX_F_SQUEEZE)

#define VNNX_F_STRIDED_SLICE(X)                                                                  \
    X(begin_mask, 0, scalar<std::int32_t>, 0) X(end_mask, 1, scalar<std::int32_t>, 0)             \
    X(ellipsis_mask, 2, scalar<std::int32_t>, 0) X(new_axis_mask, 3, scalar<std::int32_t>, 0)     \
    X(shrink_axis_mask, 4, scalar<std::int32_t>, 0) X(offset, 5, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(StridedSliceOptions, strided_slice_options, 32, VNNX_F_STRIDED_SLICE)

VNNX_TFLITE_OPTIONS(ExpOptions, exp_options, 33, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_SPLIT(X) X(num_splits, 0, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(SplitOptions, split_options, 35, VNNX_F_SPLIT)
VNNX_TFLITE_OPTIONS(SplitVOptions, split_v_options, 79, VNNX_F_SPLIT)

VNNX_TFLITE_OPTIONS(LogSoftmaxOptions, log_softmax_options, 36, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_CAST(X) \
    X(in_data_type, 0, scalar<tensor_type>, tensor_type::FLOAT32) X(out_data_type, 1, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(CastOptions, cast_options, 37, VNNX_F_CAST)

VNNX_TFLITE_OPTIONS(DequantizeOptions, dequantize_options, 38, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(MaximumMinimumOptions, maximum_minimum_options, 39, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_ARG(X) X(output_type, 0, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(ArgMaxOptions, arg_max_options, 40, VNNX_F_ARG)
VNNX_TFLITE_OPTIONS(ArgMinOptions, arg_min_options, 57, VNNX_F_ARG)

VNNX_TFLITE_OPTIONS(LessOptions, less_options, 41, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(NegOptions, neg_options, 42, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(PadV2Options, pad_v2_options, 43, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(GreaterOptions, greater_options, 44, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(GreaterEqualOptions, greater_equal_options, 45, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(LessEqualOptions, less_equal_options, 46, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(SliceOptions, slice_options, 48, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_TRANSPOSE_CONV(X)                                                                          \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0)                                                               \
    X(fused_activation_function, 3, scalar<activation_function>, activation_function::NONE)               \
    X(quantized_bias_type, 4, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(TransposeConvOptions, transpose_conv_options, 49, VNNX_F_TRANSPOSE_CONV)

VNNX_TFLITE_OPTIONS(TileOptions, tile_options, 51, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(ExpandDimsOptions, expand_dims_options, 52, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(EqualOptions, equal_options, 53, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(NotEqualOptions, not_equal_options, 54, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_SHAPE(X) X(out_type, 0, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(ShapeOptions, shape_options, 55, VNNX_F_SHAPE)

VNNX_TFLITE_OPTIONS(PowOptions, pow_options, 56, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_PACK(X) X(values_count, 0, scalar<std::int32_t>, 0) X(axis, 1, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(PackOptions, pack_options, 59, VNNX_F_PACK)

#define VNNX_F_UNPACK(X) X(num, 0, scalar<std::int32_t>, 0) X(axis, 1, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(UnpackOptions, unpack_options, 64, VNNX_F_UNPACK)

#define VNNX_F_LSTM(X)                                                                                    \
    X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE)               \
    X(cell_clip, 1, scalar<float>, 0.0f) X(proj_clip, 2, scalar<float>, 0.0f)                             \
    X(time_major, 3, scalar<bool>, false) X(asymmetric_quantize_inputs, 4, scalar<bool>, false)            \
    X(diagonal_recurrent_tensors, 5, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(UnidirectionalSequenceLSTMOptions, unidirectional_sequence_lstm_options, 71, VNNX_F_LSTM)

#define VNNX_F_RESIZE_NN(X) X(align_corners, 0, scalar<bool>, false) X(half_pixel_centers, 1, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(ResizeNearestNeighborOptions, resize_nearest_neighbor_options, 74, VNNX_F_RESIZE_NN)

#define VNNX_F_LEAKY(X) X(alpha, 0, scalar<float>, 0.0f)
VNNX_TFLITE_OPTIONS(LeakyReluOptions, leaky_relu_options, 75, VNNX_F_LEAKY)

VNNX_TFLITE_OPTIONS(SquaredDifferenceOptions, squared_difference_options, 76, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_MIRROR(X) X(mode, 0, scalar<mirror_pad_mode>, mirror_pad_mode::REFLECT)
VNNX_TFLITE_OPTIONS(MirrorPadOptions, mirror_pad_options, 77, VNNX_F_MIRROR)

VNNX_TFLITE_OPTIONS(AbsOptions, abs_options, 78, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(QuantizeOptions, quantize_options, 89, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(HardSwishOptions, hard_swish_options, 91, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_BMM(X) \
    X(adj_x, 0, scalar<bool>, false) X(adj_y, 1, scalar<bool>, false) X(asymmetric_quantize_inputs, 2, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(BatchMatMulOptions, batch_matmul_options, 101, VNNX_F_BMM)

#define VNNX_F_GELU(X) X(approximate, 0, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(GeluOptions, gelu_options, 116, VNNX_F_GELU)

}  // namespace opt

// The per-table X-lists were only needed to expand the traits above.
#undef VNNX_F_ACT_ONLY
#undef VNNX_F_ADDSUB
#undef VNNX_F_ARG
#undef VNNX_F_BLOCK
#undef VNNX_F_BMM
#undef VNNX_F_CAST
#undef VNNX_F_CONCAT
#undef VNNX_F_CONV2D
#undef VNNX_F_DWCONV
#undef VNNX_F_FC
#undef VNNX_F_GATHER
#undef VNNX_F_GELU
#undef VNNX_F_LEAKY
#undef VNNX_F_LSTM
#undef VNNX_F_MIRROR
#undef VNNX_F_PACK
#undef VNNX_F_POOL
#undef VNNX_F_REDUCER
#undef VNNX_F_RESHAPE
#undef VNNX_F_RESIZE_BILINEAR
#undef VNNX_F_RESIZE_NN
#undef VNNX_F_SHAPE
#undef VNNX_F_SOFTMAX
#undef VNNX_F_SPLIT
#undef VNNX_F_SQUEEZE
#undef VNNX_F_STRIDED_SLICE
#undef VNNX_F_TRANSPOSE_CONV
#undef VNNX_F_UNPACK

/// Every options trait above, for dispatch by union number.
template <class... T>
struct type_list {};
using all_options = type_list<
    opt::Conv2DOptions, opt::DepthwiseConv2DOptions, opt::Pool2DOptions, opt::FullyConnectedOptions,
    opt::SoftmaxOptions, opt::ConcatenationOptions, opt::AddOptions, opt::SubOptions, opt::L2NormOptions,
    opt::MulOptions, opt::DivOptions, opt::ResizeBilinearOptions, opt::ReshapeOptions, opt::SpaceToDepthOptions,
    opt::DepthToSpaceOptions, opt::PadOptions, opt::GatherOptions, opt::BatchToSpaceNDOptions,
    opt::SpaceToBatchNDOptions, opt::TransposeOptions, opt::ReducerOptions, opt::SqueezeOptions,
    opt::StridedSliceOptions, opt::ExpOptions, opt::SplitOptions, opt::SplitVOptions, opt::LogSoftmaxOptions,
    opt::CastOptions, opt::DequantizeOptions, opt::MaximumMinimumOptions, opt::ArgMaxOptions, opt::ArgMinOptions,
    opt::LessOptions, opt::NegOptions, opt::PadV2Options, opt::GreaterOptions, opt::GreaterEqualOptions,
    opt::LessEqualOptions, opt::SliceOptions, opt::TransposeConvOptions, opt::TileOptions, opt::ExpandDimsOptions,
    opt::EqualOptions, opt::NotEqualOptions, opt::ShapeOptions, opt::PowOptions, opt::PackOptions,
    opt::UnpackOptions, opt::UnidirectionalSequenceLSTMOptions, opt::ResizeNearestNeighborOptions,
    opt::LeakyReluOptions, opt::SquaredDifferenceOptions, opt::MirrorPadOptions, opt::AbsOptions,
    opt::QuantizeOptions, opt::HardSwishOptions, opt::BatchMatMulOptions, opt::GeluOptions>;

/// Calls f(trait{}) for the trait with union number `type`; returns false when none matches.
template <class F, class... T>
constexpr bool visit_options(std::uint8_t type, F&& f, type_list<T...> = {}) {
    return ((T::union_type == type ? (f(T{}), true) : false) || ...);
}

/// The TFLite spelling of an options union member this project knows ("Conv2DOptions"), or "".
[[nodiscard]] inline std::string_view options_name(std::uint8_t type) {
    std::string_view out;
    visit_options(type, [&](auto t) { out = decltype(t)::table_name; }, all_options{});
    return out;
}

static_assert(opt::Conv2DOptions::dilation_h_factor.voffset() == 14);
static_assert(tbl::QuantizationParameters::quantized_dimension.voffset() == 16);
static_assert(opt::GeluOptions::union_type == 116 && opt::BatchMatMulOptions::union_type == 101);

}  // namespace vnnx::tflite
