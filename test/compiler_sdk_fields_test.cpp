// Record fields written as the VectorBlox SDK's compiler writes them (docs/sdk-differences.md),
// each rebuilt on a model of the project's own builder: MEAN's multiplier in double precision,
// an IDENTITY node's copy record, `input_offset` -1 on layers that never read it, ELTWISE
// `isize` and `swap`, and the IDENTITY copy in the strided layout before a strided convolution
// whose input cannot be written strided by its producer. The simulator runs each model and
// must agree with the reference interpreter, so the records are also checked for meaning.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "vnnx/quant/multiplier.hpp"

namespace {
using namespace conv_test;
using vnnx::format::model_view;
using B = builtin_operator;
namespace fo = vnnx::format;
using vnnx::tflite::quant;

constexpr std::int32_t identity_type = static_cast<std::int32_t>(fo::vnnx_operator::IDENTITY);
constexpr std::int32_t eltwise_type = static_cast<std::int32_t>(fo::vnnx_operator::ELTWISE);

/// Largest |sim - ref| over the model's first output, on one patterned input (TFLite layout);
/// `exact` gets the share of equal elements.
int max_diff_against_reference(const std::vector<std::byte>& tfl, const std::vector<std::byte>& vnnx_bytes,
                               const std::vector<std::int64_t>& in_shape, double* exact = nullptr,
                               vnnx::dtype in_type = vnnx::dtype::int8) {
    vnnx::ndarray x(in_type, in_shape);
    for (std::size_t i = 0; i < x.data.size(); ++i) x.data[i] = static_cast<std::byte>((i * 37 + 11) % 251);
    const auto view = vnnx::tflite::model_view::parse(tfl, "sdk_fields.tflite");
    const auto ref = vnnx::ref::run(view, {x});
    const auto want = to_channels_first(ref.at(0));
    const auto got = simulate(vnnx_bytes, to_channels_first(x));
    REQUIRE(got.size() == want.size());
    int worst = 0;
    std::size_t same = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const int d = std::abs(int(static_cast<std::int8_t>(got[i])) - int(static_cast<std::int8_t>(want[i])));
        worst = std::max(worst, d);
        same += d == 0;
    }
    if (exact != nullptr) *exact = got.empty() ? 1.0 : static_cast<double>(same) / static_cast<double>(got.size());
    return worst;
}

std::int32_t conv(vnnx::tflite::builder& b, std::int32_t in, const std::string& name, std::vector<std::int32_t> wshape,
                  std::vector<std::int32_t> out_shape, int stride, float out_scale, std::uint64_t seed) {
    const auto w = vnnx::tflite::detail::add_conv_weights(b, name + "_w", std::move(wshape), 0, 0.05f, seed);
    const auto out = b.add_tensor(name, tensor_type::INT8, std::move(out_shape), quant{out_scale, -3});
    b.add_operator(B::CONV_2D, {in, w.weights, w.bias}, {out},
                   vnnx::tflite::conv2d_options{padding_mode::VALID, stride, stride, activation_function::NONE, 1, 1,
                                                tensor_type::FLOAT32});
    return out;
}
}  // namespace

TEST_CASE("SDK fields: MEAN's multiplier is S_in * (1/n) / S_out in double precision", "[compiler][sdk]") {
    const float si = 0.0173f, so = 0.0119f;
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 7, 7, 8}, quant{si, -3});
    const auto ax = b.add_constant("axes", tensor_type::INT32, {2}, std::vector<std::int32_t>{1, 2});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 1, 1, 8}, quant{so, 5});
    b.add_operator(B::MEAN, {in, ax}, {out}, vnnx::tflite::reducer_options{true});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto tfl = b.finish();
    const auto r = compile(tfl);
    const model_view v(r.bytes, "mean.vnnx");
    REQUIRE(v.num_nodes() >= 1);
    const auto& n = v.node(0);
    REQUIRE(n.type == static_cast<std::int32_t>(B::MEAN));
    const auto want = vnnx::quant::quantize_multiplier(static_cast<double>(si) * (1.0 / 49.0) / static_cast<double>(so));
    const auto in_float = vnnx::quant::quantize_multiplier(static_cast<double>(si / (49.0f * so)));
    REQUIRE(want.multiplier != in_float.multiplier);  // the case tells the two apart
    CHECK(v.int32s(n.output_multiplier.value, 1, "output_multiplier")[0] == want.multiplier);
    CHECK(v.int32s(n.output_shift.value, 1, "output_shift")[0] == want.shift);
    CHECK(max_diff_against_reference(tfl, r.bytes, {1, 7, 7, 8}) <= 1);
}

TEST_CASE("SDK fields: an IDENTITY node's copy record and its layers' input_offset", "[compiler][sdk]") {
    // PAD -> ADD of an 8-element constant (a broadcast8 layer) -> SOFTMAX, one IDENTITY node.
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 4, 4, 8}, quant{0.1f, 3});
    const auto pads = b.add_constant("pads", tensor_type::INT32, {4, 2}, std::vector<std::int32_t>{0, 0, 1, 1, 1, 1, 0, 0});
    const auto padded = b.add_tensor("padded", tensor_type::INT8, {1, 6, 6, 8}, quant{0.1f, 3});
    b.add_operator(B::PAD, {in, pads}, {padded});
    std::vector<std::int8_t> cv;
    for (int i = 0; i < 8; ++i) cv.push_back(static_cast<std::int8_t>(i * 9 - 30));
    const auto k = b.add_constant("k", tensor_type::INT8, {8}, cv, quant{0.05f, 2});
    const auto sum = b.add_tensor("sum", tensor_type::INT8, {1, 6, 6, 8}, quant{0.15f, -2});
    b.add_operator(B::ADD, {padded, k}, {sum}, vnnx::tflite::add_options{activation_function::NONE, true});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 6, 6, 8}, quant{1.0f / 256, -128});
    b.add_operator(B::SOFTMAX, {sum}, {out}, vnnx::tflite::softmax_options{1.0f});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto tfl = b.finish();
    const auto r = compile(tfl);
    const model_view v(r.bytes, "chain.vnnx");
    std::vector<fo::vnnx_layer_t> layers;
    for (std::size_t n = 0; n < v.num_nodes(); ++n) {
        CHECK(v.node(n).type == identity_type);
        for (const auto& l : v.node_layers(n)) layers.push_back(l);
    }
    REQUIRE(layers.size() == 3);
    CHECK(layers[0].type == static_cast<std::int32_t>(B::PAD));
    CHECK(layers[0].input_offset == -1);
    CHECK(layers[1].type == static_cast<std::int32_t>(B::ADD));
    CHECK(layers[1].input_offset == 3);  // the broadcast layer subtracts the zero point
    CHECK(layers[2].type == static_cast<std::int32_t>(B::SOFTMAX));
    CHECK(layers[2].input_offset == -1);
    CHECK(max_diff_against_reference(tfl, r.bytes, {1, 4, 4, 8}) <= 1);

    // A node that starts with the SOFTMAX: its copy record carries the softmax output's
    // quantization (the SDK's last node of kws and vww), its bytes stay the input's.
    vnnx::tflite::builder s;
    const auto x = s.add_tensor("x", tensor_type::INT8, {1, 10}, quant{0.14f, 14});
    const auto y = s.add_tensor("y", tensor_type::INT8, {1, 10}, quant{1.0f / 256, -128});
    s.add_operator(B::SOFTMAX, {x}, {y}, vnnx::tflite::softmax_options{1.0f});
    s.set_inputs({x});
    s.set_outputs({y});
    const auto stfl = s.finish();
    const auto sr = compile(stfl);
    const model_view sv(sr.bytes, "softmax.vnnx");
    REQUIRE(sv.num_nodes() == 1);
    const auto ts = sv.node_tensors(0);
    REQUIRE(ts.size() >= 2);
    CHECK(ts[0].scale == 0.14f);
    CHECK(ts[0].zero == 14);
    CHECK(ts[1].scale == 1.0f / 256);
    CHECK(ts[1].zero == -128);
    CHECK(sv.node(0).output_offset == -128);
    CHECK(max_diff_against_reference(stfl, sr.bytes, {1, 10}) <= 1);
}

TEST_CASE("SDK fields: a node that starts with a table describes its copy as the input", "[compiler][sdk]") {
    // uint8 input, zero 127 -> int8 (MobileNetV2's first node): the SDK's table pattern starts
    // with a CAST that keeps the input's type and zero point.
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::UINT8, {1, 4, 4, 3}, quant{0.0078f, 127});
    const auto q = b.add_tensor("q", tensor_type::INT8, {1, 4, 4, 3}, quant{0.0078f, -1});
    b.add_operator(B::QUANTIZE, {in}, {q});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 4, 4, 3}, quant{1.0f / 256, -128});
    b.add_operator(B::LOGISTIC, {q}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto r = compile(b.finish());
    const model_view v(r.bytes, "table.vnnx");
    REQUIRE(v.num_nodes() == 1);
    const auto& n = v.node(0);
    REQUIRE(n.type == identity_type);
    REQUIRE(v.node_layers(0).size() >= 1);
    CHECK(v.node_layers(0)[0].type == static_cast<std::int32_t>(fo::vnnx_operator::LUT));
    CHECK(n.output_data_type == static_cast<std::int32_t>(fo::calc_type::CALC_TYPE_UINT8));
    CHECK(n.output_offset == 127);
    const auto ts = v.node_tensors(0);
    REQUIRE(ts.size() >= 2);
    CHECK(ts[1].type == static_cast<std::int32_t>(fo::calc_type::CALC_TYPE_UINT8));
    CHECK(ts[1].zero == 127);
}

TEST_CASE("SDK fields: a residual ELTWISE after a conv: isize is its tile, swap names the conv's side", "[compiler][sdk]") {
    for (const bool conv_first : {true, false}) {
        INFO((conv_first ? "ADD(conv, input)" : "ADD(input, conv)"));
        vnnx::tflite::builder b;
        const auto in = b.add_tensor("input", tensor_type::INT8, {1, 12, 12, 16}, quant{0.05f, -3});
        const auto y = conv(b, in, "y", {16, 1, 1, 16}, {1, 12, 12, 16}, 1, 0.07f, 5);
        const auto out = b.add_tensor("output", tensor_type::INT8, {1, 12, 12, 16}, quant{0.09f, 1});
        b.add_operator(B::ADD, conv_first ? std::vector<std::int32_t>{y, in} : std::vector<std::int32_t>{in, y}, {out},
                       vnnx::tflite::add_options{activation_function::NONE, true});
        b.set_inputs({in});
        b.set_outputs({out});
        const auto tfl = b.finish();
        const auto r = compile(tfl);
        const model_view v(r.bytes, "residual.vnnx");
        REQUIRE(v.num_nodes() == 1);
        const auto& n = v.node(0);
        REQUIRE(n.type == static_cast<std::int32_t>(B::CONV_2D));
        const fo::vnnx_layer_t* elt = nullptr;
        for (const auto& l : v.node_layers(0))
            if (l.type == eltwise_type) elt = &l;
        REQUIRE(elt != nullptr);
        const auto u = elt->options.get<fo::layer_options::eltwise8>();
        REQUIRE(u.optimized == 1);
        CHECK(u.isize == n.maps * n.rows * n.cols);  // 1x1 conv: its output tile is the input tile
        CHECK(u.isize > 0);
        CHECK(u.swap == (conv_first ? 1 : 0));
        CHECK(max_diff_against_reference(tfl, r.bytes, {1, 12, 12, 16}) <= 1);
    }
}

TEST_CASE("SDK fields: a strided conv reads a strided copy when its producer cannot write one", "[compiler][sdk]") {
    // ResNet's downsampling block: A's output feeds a 3x3 stride-2 conv and a 1x1 stride-2
    // shortcut; both read it densely from A, so each gets an IDENTITY node (no layers) that
    // copies it into the strided layout just before it.
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 9, 9, 8}, quant{0.05f, -3});
    const auto a = conv(b, in, "a", {8, 1, 1, 8}, {1, 9, 9, 8}, 1, 0.06f, 7);
    const auto x = conv(b, a, "x", {16, 3, 3, 8}, {1, 4, 4, 16}, 2, 0.08f, 8);
    const auto y = conv(b, a, "y", {16, 1, 1, 8}, {1, 5, 5, 16}, 2, 0.07f, 9);
    const auto out_x = b.add_tensor("output_x", tensor_type::INT8, {1, 4, 4, 16}, quant{0.08f, -3});
    b.add_operator(B::RELU, {x}, {out_x});
    b.set_inputs({in});
    b.set_outputs({out_x, y});
    const auto tfl = b.finish();
    const auto r = compile(tfl);
    const model_view v(r.bytes, "strided.vnnx");
    std::vector<std::size_t> copies, strided;
    for (std::size_t k = 0; k < v.num_nodes(); ++k) {
        const auto& n = v.node(k);
        if (n.type == identity_type && n.num_sublayers == 0) copies.push_back(k);
        if (n.type == static_cast<std::int32_t>(B::CONV_2D) && n.options.get<fo::node_options::Conv2DOptions>().use_strided == 1)
            strided.push_back(k);
    }
    REQUIRE(strided.size() == 2);
    REQUIRE(copies.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
        INFO("strided conv node " << strided[i]);
        REQUIRE(copies[i] + 1 == strided[i]);  // the copy runs just before its conv
        const auto& c = v.node(copies[i]);
        const auto& s = v.node(strided[i]);
        CHECK(c.output_strides == s.input_strides);
        CHECK(s.input_strides == decltype(s.input_strides){2, 2});
        CHECK(c.input_strides == decltype(c.input_strides){1, 1});
        CHECK(c.num_inputs == 1);
        CHECK(c.num_outputs == 1);
        // The conv reads the copy: the same arena bytes as the copy's output record.
        CHECK(v.node_tensors(strided[i])[0].direct.value == v.node_tensors(copies[i])[1].direct.value);
        CHECK(v.node_tensors(copies[i])[0].direct.value != v.node_tensors(copies[i])[1].direct.value);
    }
    // A, the producer, keeps writing densely for both readers.
    CHECK(v.node(0).output_strides == decltype(v.node(0).output_strides){1, 1});
    // Two convolutions in a row: A's 1-LSB differences pass through the 72 terms of the 3x3 conv.
    double exact = 0;
    CHECK(max_diff_against_reference(tfl, r.bytes, {1, 9, 9, 8}, &exact) <= 3);
    CHECK(exact >= 0.9);

    // A strided conv on the model input itself: the input is the host's, so it is copied too.
    vnnx::tflite::builder f;
    const auto fin = f.add_tensor("input", tensor_type::INT8, {1, 9, 9, 8}, quant{0.05f, -3});
    const auto fy = conv(f, fin, "y", {16, 1, 1, 8}, {1, 5, 5, 16}, 2, 0.07f, 10);
    f.set_inputs({fin});
    f.set_outputs({fy});
    const auto ftfl = f.finish();
    const auto fr = compile(ftfl);
    const model_view fv(fr.bytes, "first.vnnx");
    REQUIRE(fv.num_nodes() == 2);
    CHECK(fv.node(0).type == identity_type);
    CHECK(fv.node(0).num_sublayers == 0);
    CHECK(fv.node(0).output_strides == decltype(fv.node(0).output_strides){2, 2});
    CHECK(fv.node(1).type == static_cast<std::int32_t>(B::CONV_2D));
    CHECK(max_diff_against_reference(ftfl, fr.bytes, {1, 9, 9, 8}) <= 1);
}
