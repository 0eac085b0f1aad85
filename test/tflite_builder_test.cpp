// Builder round trips: models made by tflite::builder read back through model_view with the
// same facts (tensors, quantization, constants, operators, options with defaults), and the
// support check / MAC count on small synthetic models.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/support_check.hpp"

using namespace vnnx::tflite;
using B = vnnx::builtin_operator;

namespace {
std::vector<std::int32_t> vec(std::span<const std::int32_t> s) { return {s.begin(), s.end()}; }
}  // namespace

TEST_CASE("tflite builder: tensors, quantization and constants round trip", "[tflite][builder]") {
    builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 8, 8, 3}, quant{0.5f, -1});
    const auto w_values = random_int8(7, 4 * 3 * 3 * 3);
    const auto w = b.add_constant("w", tensor_type::INT8, {4, 3, 3, 3}, w_values,
                                  quant{{0.01f, 0.02f, 0.03f, 0.04f}, {0, 0, 0, 0}, 0});
    const auto bias_values = random_int32(8, 4, -100, 100);
    const auto bias = b.add_constant("bias", tensor_type::INT32, {4}, bias_values, quant{{0.005f, 0.01f, 0.015f, 0.02f}, {0, 0, 0, 0}});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 8, 8, 4}, quant{0.25f, 3});
    b.add_operator(B::CONV_2D, {in, w, bias}, {out},
                   conv2d_options{padding_mode::SAME, 1, 1, activation_function::RELU, 1, 1, tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto bytes = b.finish();

    const auto m = model_view::parse(bytes, "built.tflite");
    CHECK(m.source() == "built.tflite");
    CHECK(m.version() == 3);
    REQUIRE(m.subgraph_count() == 1);
    const auto g = m.subgraph();
    CHECK(g.name() == "main");
    REQUIRE(g.tensor_count() == 4);
    CHECK(vec(g.inputs()) == std::vector<std::int32_t>{in});
    CHECK(vec(g.outputs()) == std::vector<std::int32_t>{out});

    const auto ti = g.tensor(static_cast<std::size_t>(in));
    CHECK(ti.name() == "in");
    CHECK(ti.type() == tensor_type::INT8);
    CHECK(vec(ti.shape()) == std::vector<std::int32_t>{1, 8, 8, 3});
    CHECK(ti.element_count() == 192);
    CHECK_FALSE(ti.is_constant());
    CHECK(ti.data().empty());
    REQUIRE_FALSE(ti.quant().empty());
    CHECK_FALSE(ti.quant().per_channel());
    CHECK(ti.quant().scale[0] == 0.5f);
    CHECK(ti.quant().zero_point[0] == -1);

    const auto tw = g.tensor(static_cast<std::size_t>(w));
    REQUIRE(tw.is_constant());
    REQUIRE(tw.data().size() == w_values.size());
    for (std::size_t i = 0; i < w_values.size(); ++i)
        REQUIRE(static_cast<std::int8_t>(tw.data()[i]) == w_values[i]);
    CHECK(tw.quant().per_channel());
    CHECK(tw.quant().scale.size() == 4);
    CHECK(tw.quant().scale[3] == 0.04f);
    CHECK(tw.quant().quantized_dimension == 0);

    const auto tb = g.tensor(static_cast<std::size_t>(bias));
    REQUIRE(tb.data().size() == 16);
    CHECK(tb.type() == tensor_type::INT32);
    CHECK(vnnx::load_le<std::int32_t>(tb.data().data() + 12) == bias_values[3]);

    REQUIRE(g.operator_count() == 1);
    const auto op = g.op(0);
    CHECK(op.op() == B::CONV_2D);
    CHECK(op.name() == "CONV_2D");
    CHECK(vec(op.inputs()) == std::vector<std::int32_t>{in, w, bias});
    CHECK(vec(op.outputs()) == std::vector<std::int32_t>{out});
    const auto o = op.options<opt::Conv2DOptions>();
    CHECK(o.padding == padding_mode::SAME);
    CHECK(o.stride_w == 1);
    CHECK(o.fused_activation_function == activation_function::RELU);
    CHECK(o.dilation_h_factor == 1);
    // MACs: 64 output pixels x 4 channels x 27.
    CHECK(count_macs(m) == 64u * 4u * 27u);
    CHECK(is_integer(m));
}

TEST_CASE("tflite builder: options of many tables round trip, defaults applied", "[tflite][builder]") {
    builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 4, 8}, quant{0.1f, 0});
    std::vector<std::int32_t> outs;
    auto out = [&](std::vector<std::int32_t> shape) {
        outs.push_back(b.add_tensor("t" + std::to_string(outs.size()), tensor_type::INT8, std::move(shape), quant{0.1f, 0}));
        return outs.back();
    };
    b.add_operator(B::MAX_POOL_2D, {x}, {out({1, 2, 2, 8})}, pool2d_options{padding_mode::VALID, 2, 2, 2, 2, activation_function::NONE});
    b.add_operator(B::RESHAPE, {x}, {out({1, 128})}, reshape_options{{1, 128}});
    b.add_operator(B::SOFTMAX, {outs[1]}, {out({1, 128})}, softmax_options{0.5f});
    b.add_operator(B::CONCATENATION, {x, x}, {out({1, 4, 4, 16})}, concatenation_options{-1, activation_function::RELU6});
    b.add_operator(B::STRIDED_SLICE, {x}, {out({1, 2, 4, 8})}, strided_slice_options{1, 2, 0, 0, 4, false});
    b.add_operator(B::LEAKY_RELU, {x}, {out({1, 4, 4, 8})}, leaky_relu_options{0.125f});
    b.add_operator(B::SQUEEZE, {x}, {out({4, 4, 8})}, squeeze_options{{0}});
    b.add_operator(B::MIRROR_PAD, {x}, {out({1, 6, 6, 8})}, mirror_pad_options{mirror_pad_mode::SYMMETRIC});
    b.add_operator(B::GELU, {x}, {out({1, 4, 4, 8})}, gelu_options{true});
    b.add_operator(B::RESIZE_BILINEAR, {x}, {out({1, 8, 8, 8})}, resize_bilinear_options{0, 0, false, true});
    b.add_operator(B::MEAN, {x}, {out({1, 1, 1, 8})}, reducer_options{true});
    b.add_operator(B::ADD, {x, x}, {out({1, 4, 4, 8})});  // no options table: defaults
    b.add_operator(B::SPLIT_V, {x}, {out({1, 4, 4, 8})}, split_v_options{1});
    b.add_operator(B::PACK, {x, x}, {out({2, 1, 4, 4, 8})}, pack_options{2, 0});
    b.set_inputs({x});
    b.set_outputs(outs);
    const auto bytes = b.finish();
    const auto m = model_view::parse(bytes, "options.tflite");
    const auto g = m.subgraph();
    REQUIRE(g.operator_count() == 14);

    const auto pool = g.op(0).options<opt::Pool2DOptions>();
    CHECK(pool.padding == padding_mode::VALID);
    CHECK(pool.filter_width == 2);
    CHECK(pool.filter_height == 2);
    CHECK(g.op(1).options<opt::ReshapeOptions>().new_shape == std::vector<std::int32_t>{1, 128});
    CHECK(g.op(2).options<opt::SoftmaxOptions>().beta == 0.5f);
    const auto cat = g.op(3).options<opt::ConcatenationOptions>();
    CHECK(cat.axis == -1);
    CHECK(cat.fused_activation_function == activation_function::RELU6);
    const auto ss = g.op(4).options<opt::StridedSliceOptions>();
    CHECK(ss.begin_mask == 1);
    CHECK(ss.end_mask == 2);
    CHECK(ss.shrink_axis_mask == 4);
    CHECK(g.op(5).options<opt::LeakyReluOptions>().alpha == 0.125f);
    CHECK(g.op(6).options<opt::SqueezeOptions>().squeeze_dims == std::vector<std::int32_t>{0});
    CHECK(g.op(7).options<opt::MirrorPadOptions>().mode == mirror_pad_mode::SYMMETRIC);
    CHECK(g.op(8).options<opt::GeluOptions>().approximate);
    const auto rb = g.op(9).options<opt::ResizeBilinearOptions>();
    CHECK_FALSE(rb.align_corners);
    CHECK(rb.half_pixel_centers);
    CHECK(g.op(10).options<opt::ReducerOptions>().keep_dims);
    // ADD without a table: the schema defaults (pot_scale_int16 defaults to true).
    CHECK(g.op(11).options_type() == 0);
    const auto add = g.op(11).options<opt::AddOptions>();
    CHECK(add.fused_activation_function == activation_function::NONE);
    CHECK(add.pot_scale_int16);
    CHECK(g.op(12).options<opt::SplitVOptions>().num_splits == 1);
    CHECK(g.op(13).options<opt::PackOptions>().values_count == 2);
    // Asking for another table is an error naming the operator and both tables.
    try {
        (void)g.op(0).options<opt::Conv2DOptions>();
        FAIL("expected an error");
    } catch (const vnnx::error& e) {
        CHECK(std::string(e.what()) == "options.tflite: operator 0 (MAX_POOL_2D): options are Pool2DOptions, not Conv2DOptions");
    }
    // Operator codes are shared between operators of one kind.
    CHECK(m.operator_code_count() == 14);
}

TEST_CASE("tflite builder: operator codes beyond 127 and custom operators", "[tflite][builder]") {
    builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 16}, quant{0.1f, 0});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 16}, quant{0.1f, 0});
    const auto z = b.add_tensor("z", tensor_type::INT8, {1, 16}, quant{0.1f, 0});
    b.add_operator(B::GELU, {x}, {y}, gelu_options{false});
    b.add_custom_operator("MyOp", {y}, {z}, {1, 2, 3});
    b.set_inputs({x});
    b.set_outputs({z});
    const auto bytes = b.finish();
    const auto m = model_view::parse(bytes, "custom.tflite");
    const auto g = m.subgraph();
    CHECK(g.op(0).op() == B::GELU);  // deprecated byte is 127, builtin_code 150
    CHECK(g.op(1).op() == B::CUSTOM);
    CHECK(g.op(1).custom_code() == "MyOp");
    CHECK(g.op(1).name() == "CUSTOM:MyOp");
    CHECK(g.op(1).custom_options().size() == 3);
}

TEST_CASE("tflite builder: MACs of transpose conv, batch matmul and depthwise", "[tflite][builder]") {
    builder b;
    const auto shape = b.add_constant("oshape", tensor_type::INT32, {4}, std::vector<std::int32_t>{1, 8, 8, 4});
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 4, 6}, quant{0.1f, 0});
    const auto w = b.add_constant("w", tensor_type::INT8, {4, 3, 3, 6}, random_int8(1, 4 * 9 * 6), quant{0.01f, 0});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 8, 8, 4}, quant{0.1f, 0});
    b.add_operator(B::TRANSPOSE_CONV, {shape, w, x}, {y}, transpose_conv_options{padding_mode::SAME, 2, 2, activation_function::NONE, tensor_type::FLOAT32});
    const auto a = b.add_tensor("a", tensor_type::INT8, {2, 5, 7}, quant{0.1f, 0});
    const auto c = b.add_tensor("c", tensor_type::INT8, {2, 7, 3}, quant{0.1f, 0});
    const auto d = b.add_tensor("d", tensor_type::INT8, {2, 5, 3}, quant{0.1f, 0});
    b.add_operator(B::BATCH_MATMUL, {a, c}, {d}, batch_matmul_options{false, false, false});
    const auto dw = b.add_constant("dw", tensor_type::INT8, {1, 3, 3, 6}, random_int8(2, 54), quant{0.01f, 0});
    const auto z = b.add_tensor("z", tensor_type::INT8, {1, 4, 4, 6}, quant{0.1f, 0});
    b.add_operator(B::DEPTHWISE_CONV_2D, {x, dw}, {z}, depthwise_conv2d_options{padding_mode::SAME, 1, 1, 1, activation_function::NONE, 1, 1});
    b.set_inputs({x, a, c});
    b.set_outputs({y, d, z});
    const auto bytes = b.finish();
    const auto m = model_view::parse(bytes, "macs.tflite");
    const auto g = m.subgraph();
    CHECK(operator_macs(g, g.op(0)) == 16u * 6u * 4u * 9u);  // every input pixel x kh*kw*oc*ic
    CHECK(operator_macs(g, g.op(1)) == 2u * 5u * 3u * 7u);
    CHECK(operator_macs(g, g.op(2)) == 16u * 6u * 9u);
    CHECK(count_macs(m) == 16u * 6u * 4u * 9u + 2u * 5u * 3u * 7u + 16u * 6u * 9u);
}

TEST_CASE("tflite builder: the demo model", "[tflite][builder][demo]") {
    const auto bytes = demo_model();
    CHECK(bytes == demo_model());  // deterministic
    const auto m = model_view::parse(bytes, "demo.tflite");
    const auto s = summarize(m);
    const std::map<std::string, std::size_t> ops{{"ADD", 1}, {"AVERAGE_POOL_2D", 1}, {"CONV_2D", 2}, {"DEPTHWISE_CONV_2D", 1},
                                                 {"FULLY_CONNECTED", 1}, {"MAX_POOL_2D", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}};
    CHECK(s.operators == ops);
    REQUIRE(s.inputs.size() == 1);
    CHECK(vec(s.inputs[0].shape()) == std::vector<std::int32_t>{1, 32, 32, 3});
    CHECK(s.inputs[0].type() == tensor_type::INT8);
    REQUIRE(s.outputs.size() == 1);
    CHECK(s.outputs[0].quant().scale[0] == 1.0f / 256);
    CHECK(s.outputs[0].quant().zero_point[0] == -128);
    CHECK(s.integer);
    // conv1 16x16x8 x 27 + dw 16x16x8 x 9 + conv2 8x8x16 x 8 + fc 10 x 16
    CHECK(s.macs == 16u * 16 * 8 * 27 + 16u * 16 * 8 * 9 + 8u * 8 * 16 * 8 + 10u * 16);
    // Per-channel conv weights with realistic scales; bias scale = input scale x weight scale.
    const auto g = m.subgraph();
    const auto conv = g.op(0);
    const auto w = g.tensor(static_cast<std::size_t>(conv.inputs()[1]));
    const auto bias = g.tensor(static_cast<std::size_t>(conv.inputs()[2]));
    REQUIRE(w.quant().scale.size() == 8);
    for (std::size_t c = 0; c < 8; ++c) {
        CHECK(w.quant().scale[c] >= 0.004f);
        CHECK(w.quant().scale[c] <= 0.01f);
        CHECK(bias.quant().scale[c] == Approx(w.quant().scale[c] / 128.0f));
    }
    const auto dw = g.tensor(static_cast<std::size_t>(g.op(1).inputs()[1]));
    CHECK(dw.quant().quantized_dimension == 3);
    CHECK(g.op(1).options<opt::DepthwiseConv2DOptions>().depth_multiplier == 1);
}

TEST_CASE("tflite builder: PRNG helpers are deterministic and in range", "[tflite][builder]") {
    const auto a = random_int8(42, 1000);
    CHECK(a == random_int8(42, 1000));
    CHECK(a != random_int8(43, 1000));
    bool low = false, high = false;
    for (auto v : a) {
        REQUIRE(v >= -127);
        REQUIRE(v <= 127);
        low = low || v < -100;
        high = high || v > 100;
    }
    CHECK((low && high));
    for (float f : random_float(1, 100, 0.25f, 0.5f)) {
        REQUIRE(f >= 0.25f);
        REQUIRE(f < 0.5f);
    }
    // splitmix64's published first output for seed 0
    CHECK(prng(0).next() == 0xE220A8397B1DCDAFull);
}

TEST_CASE("tflite builder: misuse is a usage error", "[tflite][builder]") {
    builder b;
    CHECK_THROWS_AS(b.add_constant("w", tensor_type::INT8, {2, 2}, std::vector<std::int8_t>{1, 2, 3}), vnnx::error);
    CHECK_THROWS_AS(b.add_constant("w", tensor_type::INT32, {2}, std::vector<std::int8_t>{1, 2}), vnnx::error);
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4});
    CHECK_THROWS_AS(b.add_operator(B::ADD, {x, x}, {x}, conv2d_options{}), vnnx::error);
}
