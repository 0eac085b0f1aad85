// Golden Conv2DOptions fields, data-section items and OUTPUT_SHAPER layers of compiled
// single-convolution models; the expected numbers are derived by hand from lowering.md §7.1, §8.
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

using namespace conv_test;
using vnnx::format::model_view;
using vnnx::format::node_options::Conv2DOptions;
using vnnx::format::layer_options::ShaperOptions;

namespace {

// 1x1 conv, C = 2, K = 2, per-tensor weight scale: S_in 0.5, S_w 0.25, S_out 1 -> s = 0.125.
std::vector<std::byte> tiny_model() {
    using B = builtin_operator;
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 2, 2, 2}, quant{0.5f, 2});
    const auto w = b.add_constant("filter", tensor_type::INT8, {2, 1, 1, 2}, std::vector<std::int8_t>{3, -1, 5, 7},
                                  quant{std::vector<float>{0.25f}, std::vector<std::int64_t>{0}, 0});
    const auto bias = b.add_constant("bias", tensor_type::INT32, {2}, std::vector<std::int32_t>{10, -20},
                                     quant{std::vector<float>{0.125f}, std::vector<std::int64_t>{0}, 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 2, 2, 2}, quant{1.0f, 1});
    b.add_operator(B::CONV_2D, {in, w, bias}, {out},
                   vnnx::tflite::conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1,
                                                tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

std::int32_t at(const model_view& v, vnnx::format::obj_off_t o, std::size_t i) {
    return v.int32s(o.value + 4 * i, 1, "test")[0];
}

}  // namespace

TEST_CASE("conv fields: hand-derived 1x1 conv (records, bias, packing, offsets)") {
    const auto r = compile(tiny_model());
    const model_view v(r.bytes, "tiny.vnnx");
    REQUIRE(v.num_nodes() == 1);
    const auto& n = v.node(0);
    CHECK(n.type == 3);
    CHECK(n.num_sublayers == 0);  // 1x1 stride 1: the FIA grid is the output
    CHECK(n.input_offset == 2);
    CHECK(n.output_offset == 1);
    CHECK(n.activation_min == -128);
    CHECK(n.activation_max == 127);
    CHECK(n.input_strides == decltype(n.input_strides){1, 1});
    CHECK(n.channels == 2);
    CHECK(n.m == 2);
    CHECK(n.n == 2);
    CHECK(n.input_multiplier.absent());
    const auto u = n.options.get<Conv2DOptions>();
    CHECK(u.kernels == 2);
    CHECK(u.group == 1);
    CHECK(u.filter_shape_dims == decltype(u.filter_shape_dims){2, 2, 1, 1});
    CHECK(u.use_fia == 1);
    CHECK(u.use_vector == 1);
    CHECK(u.use_db == 1);
    CHECK(u.use_depthwise == 0);
    CHECK(u.use_strided == 0);
    CHECK(u.conv_rows == 0);
    CHECK(u.mxp_double_buffer == 1);
    CHECK(u.first_fia == 1);
    CHECK(u.last_fia == 1);
    CHECK(u.fia_collision == 1);
    CHECK(u.repeat == -1);
    CHECK(u.in_used == -1);
    CHECK(u.sp_used == -1);
    CHECK(u.next_fia_node_id == -1);
    CHECK(u.imaps == 2);
    CHECK(n.maps == 2);
    CHECK(u.tile_count == 1);
    CHECK(u.nlf_data.absent());

    // s = 0.125: t doubles 18 times to 32768 (e_min = -18), o = 16, om = 0.125 * 65536 = 8192.
    // Channel 0: b = 10 - 2*(3 - 1) = 6, c = 6*8192 + 1*65536 + 32768 = 147456.
    // Channel 1: b = -20 - 2*(5 + 7) = -44, c = -44*8192 + 65536 + 32768 = -262144.
    CHECK(at(v, n.output_multiplier, 0) == 8192);
    CHECK(at(v, n.output_multiplier, 1) == 8192);
    CHECK(at(v, n.output_shift, 0) == 1);
    CHECK(at(v, n.output_shift, 1) == 1);
    CHECK(at(v, u.bias_data, 0) == 6);
    CHECK(at(v, u.bias_data, 1) == -44);
    const auto rec = [&](std::size_t k) {
        return vnnx::load_le<std::uint64_t>(v.range(u.quantization_records.value + 8 * k, 8, "test").data());
    };
    // c = 147456 = 2*65536 + 16384: low field 16384 >> 6 = 256, high 2.
    CHECK(rec(0) == (256ull | (2ull << 10) | (8192ull << 42) | (1ull << 58)));
    // c = -262144 = -4*65536 + 0: low 0, high -4 as 32 bits.
    CHECK(rec(1) == ((0xFFFFFFFCull << 10) | (8192ull << 42) | (1ull << 58)));

    // Offsets (§9): om 8 B, shift 8 B, bias 8 B, pad to P = 16, filter 16*2 B, pad to 8, records.
    const auto base = n.output_multiplier.value;
    CHECK(n.output_shift.value - base == 8);
    CHECK(u.bias_data.value - base == 16);
    CHECK(u.filter_data.value - base == 32);
    CHECK(u.quantization_records.value - base == 64);
    // One map tile: block of K' = 16 kernels; byte ((c*kh + y)*kw + x)*16 + k.
    const auto f = v.range(u.filter_data.value, 32, "test");
    CHECK(static_cast<std::int8_t>(f[0]) == 3);
    CHECK(static_cast<std::int8_t>(f[1]) == 5);
    CHECK(static_cast<std::int8_t>(f[16]) == -1);
    CHECK(static_cast<std::int8_t>(f[17]) == 7);
    CHECK(static_cast<int>(f[2]) == 0);
    CHECK(r.nodes.at(0).macs == 2 * 2 * 2 * 2);
}

TEST_CASE("conv fields: 3x3 stride 1 gets a shaper over full-width rows") {
    spec s;
    s.H = 6;
    s.W = 6;
    s.C = 3;
    s.K = 5;
    const auto r = compile(build(s));
    const model_view v(r.bytes, "c.vnnx");
    REQUIRE(v.num_nodes() == 1);
    const auto& n = v.node(0);
    REQUIRE(n.num_sublayers == 1);
    const auto& l = v.node_layers(0)[0];
    CHECK(l.type == 305);
    CHECK(l.num_tensors == 2);
    CHECK(l.input_offset == 3);
    CHECK(l.output_offset == 3);
    const auto so = l.options.get<ShaperOptions>();
    CHECK(so.height == 4);
    CHECK(so.width == 4);
    CHECK(so.shaper_height == 4);
    CHECK(so.shaper_width == 6);
    CHECK(so.height_final == 4);
    CHECK(so.shaper_width_final == 6);
    CHECK(so.stride_height == 1);
    CHECK(so.use_strided == 0);
    const auto ts = v.node_tensors(0);
    REQUIRE(ts.size() == 4);  // input, grid; shaper: grid, output
    CHECK(ts[1].shape[2] == 4);
    CHECK(ts[1].shape[3] == 6);
    CHECK(ts[1].direct.value == ts[2].direct.value);
    CHECK(ts[3].shape[1] == 5);
    CHECK(ts[3].shape[2] == 4);
    CHECK(ts[3].shape[3] == 4);
    const auto u = n.options.get<Conv2DOptions>();
    CHECK(u.filter_shape_dims == decltype(u.filter_shape_dims){5, 3, 3, 3});
    // C' = 4 (odd C padded), K' = 16: 16*4*9 bytes of filter between the 8-aligned records and the bias.
    CHECK(u.quantization_records.value - u.filter_data.value == 16 * 4 * 9);
    CHECK((u.filter_data.value - n.output_multiplier.value) % 16 == 0);
}

TEST_CASE("conv fields: stride 2 uses the strided grid, stride (2,1) a row-stepped one") {
    spec s;
    s.H = 9;
    s.W = 9;
    s.sh = s.sw = 2;
    {
        // The input is the model's: an IDENTITY node copies it into the strided layout first.
        const model_view v(compile(build(s)).bytes, "s2.vnnx");
        REQUIRE(v.num_nodes() == 2);
        CHECK(v.node(0).type == static_cast<std::int32_t>(vnnx::format::vnnx_operator::IDENTITY));
        CHECK(v.node(0).output_strides == decltype(v.node(0).output_strides){2, 2});
        const auto u = v.node(1).options.get<Conv2DOptions>();
        CHECK(u.use_strided == 1);
        CHECK(u.stride_width == 2);
        CHECK(v.node(1).input_strides == decltype(v.node(1).input_strides){2, 2});
        REQUIRE(v.node(1).num_sublayers == 1);
        const auto so = v.node_layers(1)[0].options.get<ShaperOptions>();
        CHECK(so.height == 4);  // (9 - 3)/2 + 1
        CHECK(so.shaper_height == 5);  // ceil(9/2)
        CHECK(so.shaper_width == 5);
        CHECK(so.use_strided == 1);
        CHECK(so.stride_height == 2);
    }
    s.sw = 1;
    {
        const model_view v(compile(build(s)).bytes, "s21.vnnx");
        const auto u = v.node(0).options.get<Conv2DOptions>();
        CHECK(u.use_strided == 0);
        const auto so = v.node_layers(0)[0].options.get<ShaperOptions>();
        CHECK(so.height == 4);
        CHECK(so.width == 7);
        CHECK(so.shaper_height == 7);  // every row offset
        CHECK(so.shaper_width == 9);
        CHECK(so.use_strided == 0);
    }
}

TEST_CASE("conv fields: depthwise with height dilation materialises kh'") {
    spec s;
    s.op = kind::depthwise;
    s.C = 6;
    s.H = 10;
    s.W = 7;
    s.dh = 2;
    const model_view v(compile(build(s)).bytes, "dw.vnnx");
    const auto& n = v.node(0);
    const auto u = n.options.get<Conv2DOptions>();
    CHECK(u.use_depthwise == 1);
    CHECK(u.group == 6);
    CHECK(u.kernels == 6);
    CHECK(u.filter_shape_dims == decltype(u.filter_shape_dims){1, 6, 5, 3});  // kh' = (3-1)*2 + 1
    CHECK(u.dilation_height_factor == 1);
    CHECK(u.use_strided == 0);
    // Depthwise stride 1: the grid is the output, no shaper.
    CHECK(n.num_sublayers == 0);
}

TEST_CASE("conv fields: activation bounds (§8.3, corrected for uint8 and RELU_N1_TO_1)") {
    spec s;
    s.kh = s.kw = 1;
    auto bounds = [&](activation_function a, tensor_type t, float scale, std::int64_t zero) {
        spec c = s;
        c.act = a;
        c.out_type = t;
        c.out_scale = scale;
        c.out_zero = t == tensor_type::UINT8 ? zero - 128 : zero;
        const model_view v(compile(build(c)).bytes, "act.vnnx");
        return std::pair{v.node(0).activation_min, v.node(0).activation_max};
    };
    CHECK(bounds(activation_function::NONE, tensor_type::INT8, 0.05f, -10) == std::pair{-128, 127});
    CHECK(bounds(activation_function::RELU, tensor_type::INT8, 0.05f, -10) == std::pair{-10, 127});
    // round_even(6/0.05 - 10) = 110
    CHECK(bounds(activation_function::RELU6, tensor_type::INT8, 0.05f, -10) == std::pair{-10, 110});
    CHECK(bounds(activation_function::RELU6, tensor_type::INT8, 0.02f, -10) == std::pair{-10, 127});
    CHECK(bounds(activation_function::RELU_N1_TO_1, tensor_type::INT8, 1.0f / 64, 0) == std::pair{-64, 64});
    CHECK(bounds(activation_function::NONE, tensor_type::UINT8, 0.05f, 128) == std::pair{0, 255});
    CHECK(bounds(activation_function::RELU, tensor_type::UINT8, 0.05f, 128) == std::pair{128, 255});
    CHECK(bounds(activation_function::RELU6, tensor_type::UINT8, 0.05f, 10) == std::pair{10, 130});
}

TEST_CASE("conv fields: maps tiles, K not a multiple of P, first/last FIA") {
    spec s;
    s.K = 20;  // K' = 32 on V1000
    s.C = 5;
    s.kh = s.kw = 1;
    const model_view v(compile(build(s)).bytes, "k20.vnnx");
    const auto u = v.node(0).options.get<Conv2DOptions>();
    CHECK(u.kernels == 20);
    CHECK(u.quantization_records.value - u.filter_data.value == 32 * 6);  // K' * C'
    CHECK(u.first_fia == 1);
    CHECK(u.last_fia == 1);
}

TEST_CASE("conv rules: a depth multiplier over several channels is an ordinary conv, bad channel counts are named") {
    using B = builtin_operator;
    auto dw_model = [](std::int32_t k_out) {
        vnnx::tflite::builder b;
        const auto in = b.add_tensor("input", tensor_type::INT8, {1, 4, 4, 2}, quant{0.5f, 0});
        const auto w = b.add_constant("filter", tensor_type::INT8, {1, 3, 3, k_out},
                                      std::vector<std::int8_t>(static_cast<std::size_t>(9 * k_out), 1),
                                      quant{std::vector<float>{0.1f}, std::vector<std::int64_t>{0}, 3});
        const auto out = b.add_tensor("output", tensor_type::INT8, {1, 2, 2, k_out}, quant{1.0f, 0});
        b.add_operator(B::DEPTHWISE_CONV_2D, {in, w}, {out},
                       vnnx::tflite::depthwise_conv2d_options{padding_mode::VALID, 1, 1, k_out / 2, activation_function::NONE, 1, 1});
        b.set_inputs({in});
        b.set_outputs({out});
        return b.finish();
    };
    // Multiplier 2 over 2 channels: one CONV_2D node with 4 kernels over both input channels.
    const auto c = compile(dw_model(4));
    const model_view v(c.bytes, "dw.vnnx");
    REQUIRE(v.num_nodes() == 1);
    const auto u = v.node(0).options.get<Conv2DOptions>();
    CHECK(u.use_depthwise == 0);
    CHECK(u.group == 1);
    CHECK(u.kernels == 4);
    CHECK(u.filter_shape_dims[0] == 4);
    CHECK(u.filter_shape_dims[1] == 2);
    // 3 outputs over 2 channels is no multiplier at all.
    try {
        (void)compile(dw_model(3));
        FAIL("3 depthwise outputs over 2 channels compiled");
    } catch (const vnnx::error& e) {
        const std::string m = e.what();
        CHECK(m.find("operator 0 (DEPTHWISE_CONV_2D)") != std::string::npos);
        CHECK(m.find("multiple of the input channels") != std::string::npos);
    }
}

TEST_CASE("conv fields: a strided conv's producer writes the strided layout (§7.1.5)") {
    using B = builtin_operator;
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 9, 9, 4}, quant{0.5f, 0});
    const auto w1 = b.add_constant("w1", tensor_type::INT8, {4, 1, 1, 4}, std::vector<std::int8_t>(16, 3),
                                   quant{std::vector<float>{0.01f}, std::vector<std::int64_t>{0}, 0});
    const auto w2 = b.add_constant("w2", tensor_type::INT8, {4, 3, 3, 4}, std::vector<std::int8_t>(144, -2),
                                   quant{std::vector<float>{0.01f}, std::vector<std::int64_t>{0}, 0});
    const auto mid = b.add_tensor("mid", tensor_type::INT8, {1, 9, 9, 4}, quant{0.1f, 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 4, 4, 4}, quant{0.1f, 0});
    const auto opts1 = vnnx::tflite::conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32};
    const auto opts2 = vnnx::tflite::conv2d_options{padding_mode::VALID, 2, 2, activation_function::NONE, 1, 1, tensor_type::FLOAT32};
    b.add_operator(B::CONV_2D, {in, w1}, {mid}, opts1);
    b.add_operator(B::CONV_2D, {mid, w2}, {out}, opts2);
    b.set_inputs({in});
    b.set_outputs({out});
    const model_view v(compile(b.finish()).bytes, "two.vnnx");
    REQUIRE(v.num_nodes() == 2);
    CHECK(v.node(0).output_strides == decltype(v.node(0).output_strides){2, 2});
    CHECK(v.node(1).output_strides == decltype(v.node(1).output_strides){1, 1});
    const auto u0 = v.node(0).options.get<Conv2DOptions>();
    const auto u1 = v.node(1).options.get<Conv2DOptions>();
    CHECK(u0.first_fia == 1);
    CHECK(u0.last_fia == 0);
    CHECK(u1.first_fia == 0);
    CHECK(u1.last_fia == 1);
}
