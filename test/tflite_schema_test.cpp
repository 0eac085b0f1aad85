// The schema traits at compile time: vtable slots, defaults and union numbers are the TFLite
// schema's facts, value structs start at the defaults, and every operator's expected options
// table is one we describe.
#include <set>

#include <catch2/catch.hpp>

#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/schema.hpp"
#include "vnnx/ops/sdk_list.hpp"
#include "vnnx/tflite/support_check.hpp"

using namespace vnnx::tflite;

// Core tables: vtable offset = 4 + 2 * slot; unions take two slots (type, then table).
static_assert(tbl::Model::version.voffset() == 4 && tbl::Model::buffers.voffset() == 12);
static_assert(tbl::OperatorCode::builtin_code.slot == 3 && tbl::OperatorCode::version.def == 1);
static_assert(tbl::Tensor::quantization.slot == 4 && tbl::Tensor::type.def == tensor_type::FLOAT32);
static_assert(tbl::Operator::builtin_options_type.slot == 3 && tbl::Operator::builtin_options.slot == 4);
static_assert(tbl::Operator::builtin_options_2_type.slot == 11 && tbl::Operator::debug_metadata_index.def == -1);
static_assert(tbl::QuantizationParameters::details_type.slot == 4 && tbl::QuantizationParameters::quantized_dimension.slot == 6);

// Options tables.
static_assert(opt::Conv2DOptions::union_type == 1 && opt::DepthwiseConv2DOptions::union_type == 2);
static_assert(opt::Pool2DOptions::union_type == 5 && opt::FullyConnectedOptions::union_type == 8);
static_assert(opt::ReshapeOptions::union_type == 17 && opt::StridedSliceOptions::union_type == 32);
static_assert(opt::TransposeConvOptions::union_type == 49 && opt::LeakyReluOptions::union_type == 75);
static_assert(opt::SplitVOptions::union_type == 79 && opt::DepthToSpaceOptions::union_type == 94);
static_assert(opt::DepthwiseConv2DOptions::depth_multiplier.slot == 3);
static_assert(opt::DepthwiseConv2DOptions::fused_activation_function.slot == 4);
static_assert(opt::Conv2DOptions::dilation_w_factor.def == 1 && opt::AddOptions::pot_scale_int16.def);
static_assert(std::is_same_v<conv2d_options, opt::Conv2DOptions::value>);
static_assert(std::is_same_v<schema::scalar<bool>::storage, std::uint8_t>);
static_assert(std::is_same_v<schema::scalar<padding_mode>::storage, std::int8_t>);
static_assert(element_size(tensor_type::INT8) == 1 && element_size(tensor_type::FLOAT16) == 2 &&
              element_size(tensor_type::INT64) == 8 && element_size(tensor_type::STRING) == 0);
static_assert(type_name(tensor_type::INT8) == "int8" && type_name(tensor_type::BOOL) == "bool" &&
              type_name(static_cast<tensor_type>(99)).empty());

TEST_CASE("tflite schema: value structs start at the schema defaults", "[tflite][schema]") {
    const conv2d_options c{};
    CHECK(c.padding == padding_mode::SAME);
    CHECK(c.dilation_w_factor == 1);
    CHECK(c.dilation_h_factor == 1);
    CHECK(c.stride_w == 0);
    CHECK(add_options{}.pot_scale_int16);
    CHECK(reshape_options{}.new_shape.empty());
    CHECK(mirror_pad_options{}.mode == mirror_pad_mode::REFLECT);
}

TEST_CASE("tflite schema: union numbers are unique and match the operators", "[tflite][schema]") {
    std::set<int> seen;
    std::size_t traits = 0;
    auto each = [&]<class... T>(type_list<T...>) {
        ((seen.insert(T::union_type), ++traits), ...);
    };
    each(all_options{});
    CHECK(seen.size() == traits);
    CHECK(options_name(1) == "Conv2DOptions");
    CHECK(options_name(116) == "GeluOptions");
    CHECK(options_name(200).empty());
    // Every operator of lowering.md §6 that takes an options table has its trait here.
    for (auto op : vnnx::ops::sdk_operators) {
        const auto want = expected_options(op);
        if (want == 0) continue;
        INFO(vnnx::builtin_name(op));
        CHECK_FALSE(options_name(want).empty());
    }
    CHECK(expected_options(vnnx::builtin_operator::MEAN) == opt::ReducerOptions::union_type);
    CHECK(expected_options(vnnx::builtin_operator::MAX_POOL_2D) == opt::Pool2DOptions::union_type);
    CHECK(expected_options(vnnx::builtin_operator::RELU) == 0);
}
