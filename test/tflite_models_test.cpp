// Every shared real model is read and its facts match ../shared/models/MANIFEST.md: operator
// counts, io shapes, dtypes, scale and zero point, MACs; and `vnnx info --json` reports the same.
// Skipped, with a visible warning, when the models folder is absent.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "data/tflite/json_lite.hpp"
#include "support/models.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/support_check.hpp"

namespace {

struct io_fact {
    const char* dtype;
    std::vector<std::int32_t> shape;
    double scale;  // < 0: the tensor has no quantization
    std::int64_t zero_point;
};
struct model_fact {
    const char* name;
    std::map<std::string, std::size_t> ops;
    std::vector<io_fact> inputs, outputs;
    double mmac;
};

// From MANIFEST.md (Summary and Provenance tables); scales there have 4 significant digits.
const std::vector<model_fact>& facts() {
    static const std::vector<model_fact> f{
    {"coral-test-data__deeplabv3_mnv2_dm05_pascal_quant",
     {{"ADD", 10}, {"ARG_MAX", 1}, {"AVERAGE_POOL_2D", 1}, {"CONCATENATION", 1}, {"CONV_2D", 38}, {"DEPTHWISE_CONV_2D", 17}, {"QUANTIZE", 1}, {"RESIZE_BILINEAR", 3}},
     {{"uint8", {1,513,513,3}, 0.007812, 128}},
     {{"int64", {1,513,513}, -1.0, 0}}, 867},
    {"coral-test-data__mobilenet_v1_0.25_128_quant",
     {{"AVERAGE_POOL_2D", 1}, {"CONV_2D", 15}, {"DEPTHWISE_CONV_2D", 13}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"uint8", {1,128,128,3}, 0.007812, 128}},
     {{"uint8", {1,1001}, 0.003906, 0}}, 13.6},
    {"coral-test-data__movenet_single_pose_lightning_ptq",
     {{"ADD", 19}, {"ARG_MAX", 2}, {"CAST", 5}, {"CONCATENATION", 2}, {"CONV_2D", 50}, {"DEPTHWISE_CONV_2D", 24}, {"DEQUANTIZE", 4}, {"DIV", 1}, {"FLOOR_DIV", 2}, {"GATHER_ND", 4}, {"LOGISTIC", 2}, {"MUL", 7}, {"PACK", 3}, {"QUANTIZE", 8}, {"RESHAPE", 12}, {"RESIZE_BILINEAR", 3}, {"SQRT", 1}, {"SUB", 6}, {"UNPACK", 2}},
     {{"uint8", {1,192,192,3}, -1.0, 0}},
     {{"float32", {1,1,17,3}, -1.0, 0}}, 271},
    {"coral-test-data__split_concat",
     {{"CONCATENATION", 2}, {"SPLIT", 1}},
     {{"uint8", {1,8,8,3}, 0.007812, 128}, {"uint8", {1,8,8,1}, 0.007812, 128}, {"uint8", {1,8,8,2}, 0.007812, 128}},
     {{"uint8", {1,8,8,1}, 0.007812, 128}, {"uint8", {1,8,8,1}, 0.007812, 128}, {"uint8", {1,8,8,1}, 0.007812, 128}, {"uint8", {1,8,8,1}, 0.007812, 128}, {"uint8", {1,8,8,2}, 0.007812, 128}}, 0},
    {"coral-test-data__tf2_mobilenet_v2_1.0_224_ptq",
     {{"ADD", 10}, {"CONV_2D", 36}, {"DEPTHWISE_CONV_2D", 17}, {"MEAN", 1}, {"QUANTIZE", 2}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"uint8", {1,224,224,3}, 0.007843, 127}},
     {{"uint8", {1,1001}, 0.003906, 0}}, 301},
    {"mediapipe__face_detection_short_range",
     {{"ADD", 16}, {"CONCATENATION", 2}, {"CONV_2D", 21}, {"DEPTHWISE_CONV_2D", 16}, {"DEQUANTIZE", 74}, {"MAX_POOL_2D", 3}, {"PAD", 11}, {"RELU", 17}, {"RESHAPE", 4}},
     {{"float32", {1,128,128,3}, -1.0, 0}},
     {{"float32", {1,896,16}, -1.0, 0}, {"float32", {1,896,1}, -1.0, 0}}, 30.8},
    {"mediapipe__selfie_segmentation",
     {{"ADD", 14}, {"AVERAGE_POOL_2D", 10}, {"CONV_2D", 43}, {"CUSTOM:Convolution2DTransposeBias", 1}, {"DEPTHWISE_CONV_2D", 11}, {"DEQUANTIZE", 110}, {"HARD_SWISH", 11}, {"LOGISTIC", 11}, {"MUL", 10}, {"RELU", 22}, {"RESIZE_BILINEAR", 3}},
     {{"float32", {1,256,256,3}, -1.0, 0}},
     {{"float32", {1,256,256,1}, -1.0, 0}}, 58.2},
    {"mlcommons-tiny__ad01_int8",
     {{"FULLY_CONNECTED", 10}},
     {{"int8", {1,640}, 0.391015, 89}},
     {{"int8", {1,640}, 0.364498, 96}}, 0.264},
    {"mlcommons-tiny__kws_ref_model",
     {{"AVERAGE_POOL_2D", 1}, {"CONV_2D", 5}, {"DEPTHWISE_CONV_2D", 4}, {"FULLY_CONNECTED", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"int8", {1,49,10,1}, 0.584703, 83}},
     {{"int8", {1,12}, 0.003906, -128}}, 2.66},
    {"mlcommons-tiny__pretrainedResnet_quant",
     {{"ADD", 3}, {"AVERAGE_POOL_2D", 1}, {"CONV_2D", 9}, {"FULLY_CONNECTED", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"int8", {1,32,32,3}, 1, -128}},
     {{"int8", {1,10}, 0.003906, -128}}, 12.5},
    {"mlcommons-tiny__str_ww_ref_model",
     {{"CONV_2D", 4}, {"DEPTHWISE_CONV_2D", 4}, {"FULLY_CONNECTED", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"int8", {1,30,1,40}, 0.003701, -128}},
     {{"int8", {1,3}, 0.003906, -128}}, 0.826},
    {"mlcommons-tiny__vww_96_int8",
     {{"AVERAGE_POOL_2D", 1}, {"CONV_2D", 14}, {"DEPTHWISE_CONV_2D", 13}, {"FULLY_CONNECTED", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"int8", {1,96,96,3}, 0.003922, -128}},
     {{"int8", {1,2}, 0.003906, -128}}, 7.49},
    {"tflite-micro-pr1341__custom_model_rf_keras",
     {{"CONCATENATION", 2}, {"CONV_2D", 23}, {"DEPTHWISE_CONV_2D", 19}, {"PACK", 8}, {"PAD", 15}, {"RESHAPE", 8}, {"SHAPE", 8}, {"SOFTMAX", 1}, {"STRIDED_SLICE", 8}},
     {{"int8", {1,120,160,1}, 1, -128}},
     {{"int8", {1,812,2}, 0.003906, -128}, {"int8", {1,812,4}, 0.640915, -38}}, 19.1},
    {"tflite-micro-pr1341__id_model",
     {{"ADD", 1}, {"AVERAGE_POOL_2D", 1}, {"CONCATENATION", 1}, {"CONV_2D", 24}, {"DEPTHWISE_CONV_2D", 18}, {"EXPAND_DIMS", 1}, {"FULLY_CONNECTED", 4}, {"LEAKY_RELU", 42}, {"PAD", 21}, {"RESHAPE", 3}, {"RESIZE_NEAREST_NEIGHBOR", 1}},
     {{"int8", {1,96,96,1}, 1, -128}},
     {{"int8", {1,1,320}, 0.109243, 1}}, 13.6},
    {"tflite-micro-pr1341__retinaface",
     {{"ADD", 2}, {"CONCATENATION", 6}, {"CONV_2D", 43}, {"DEPTHWISE_CONV_2D", 13}, {"DEQUANTIZE", 3}, {"LEAKY_RELU", 38}, {"PAD", 25}, {"QUANTIZE", 1}, {"RELU", 3}, {"RESHAPE", 9}, {"RESIZE_NEAREST_NEIGHBOR", 2}, {"SOFTMAX", 1}, {"TRANSPOSE", 95}},
     {{"float32", {1,3,240,320}, -1.0, 0}},
     {{"float32", {1,3160,10}, -1.0, 0}, {"float32", {1,3160,2}, -1.0, 0}, {"float32", {1,3160,4}, -1.0, 0}}, 185},
    {"tflite-micro__dtln_noise_suppression",
     {{"FULLY_CONNECTED", 1}, {"LOGISTIC", 1}, {"UNIDIRECTIONAL_SEQUENCE_LSTM", 2}},
     {{"int8", {1,1,257}, 0.068579, -128}},
     {{"int8", {1,1,257}, 0.003906, -128}}, 0.0329},
    {"tflite-micro__hello_world_int8",
     {{"FULLY_CONNECTED", 3}},
     {{"int8", {1,1}, 0.02448, -128}},
     {{"int8", {1,1}, 0.008291, 5}}, 0.000288},
    {"tflite-micro__micro_speech_quantized",
     {{"DEPTHWISE_CONV_2D", 1}, {"FULLY_CONNECTED", 1}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"int8", {1,1960}, 0.101716, -128}},
     {{"int8", {1,4}, 0.003906, -128}}, 0.336},
    {"tflite-micro__person_detect",
     {{"AVERAGE_POOL_2D", 1}, {"CONV_2D", 14}, {"DEPTHWISE_CONV_2D", 14}, {"RESHAPE", 1}, {"SOFTMAX", 1}},
     {{"int8", {1,96,96,1}, 0.007843, -1}},
     {{"int8", {1,2}, 0.003906, -128}}, 7.16},
    };
    return f;
}

bool close_scale(double got, double want) { return std::fabs(got - want) <= 5e-4 * want + 1e-6; }

void check_io(const vnnx::tflite::tensor_view& t, const io_fact& f) {
    INFO("tensor " << t.index() << " '" << t.name() << "'");
    CHECK(vnnx::tflite::type_name(t.type()) == f.dtype);
    CHECK(std::vector<std::int32_t>(t.shape().begin(), t.shape().end()) == f.shape);
    const auto q = t.quant();
    if (f.scale < 0) {
        CHECK(q.empty());
    } else {
        REQUIRE(q.scale.size() == 1);
        CHECK(close_scale(q.scale[0], f.scale));
        CHECK(q.zero_point[0] == f.zero_point);
    }
}

std::string run_tool(const std::string& args, int& status) {
    std::string out;
    FILE* p = ::popen((std::string(VNNX_TOOL_PATH) + " " + args + " 2>&1").c_str(), "r");
    if (p == nullptr) return out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    status = ::pclose(p);
    return out;
}

}  // namespace

TEST_CASE("tflite: every shared model reads and matches its MANIFEST facts", "[tflite][models]") {
    REQUIRE(facts().size() == 19);
    for (const auto& f : facts()) {
        auto path = vnnx::test::shared_model(f.name);
        if (!path) return;
        INFO("model " << f.name);
        const auto bytes = vnnx::read_file(*path);
        const auto m = vnnx::tflite::model_view::parse(bytes, path->string());
        const auto g = m.subgraph(0);
        const auto s = vnnx::tflite::summarize(m);
        CHECK(s.operators == f.ops);
        REQUIRE(g.inputs().size() == f.inputs.size());
        REQUIRE(g.outputs().size() == f.outputs.size());
        for (std::size_t i = 0; i < f.inputs.size(); ++i) check_io(g.tensor(static_cast<std::size_t>(g.inputs()[i])), f.inputs[i]);
        for (std::size_t i = 0; i < f.outputs.size(); ++i)
            check_io(g.tensor(static_cast<std::size_t>(g.outputs()[i])), f.outputs[i]);
        const double mmac = static_cast<double>(s.macs) / 1e6;
        CHECK(std::fabs(mmac - f.mmac) <= 0.005 * f.mmac);
    }
}

TEST_CASE("tflite: old-style opcode tables read as max(builtin_code, deprecated_builtin_code)", "[tflite][models]") {
    auto path = vnnx::test::shared_model("tflite-micro__person_detect");
    if (!path) return;
    const auto bytes = vnnx::read_file(*path);
    const auto m = vnnx::tflite::model_view::parse(bytes, path->string());
    // Without the max() every operator would read as ADD (builtin_code 0).
    bool any_conv = false;
    for (std::size_t i = 0; i < m.operator_code_count(); ++i)
        any_conv = any_conv || m.operator_code(i).op == vnnx::builtin_operator::CONV_2D;
    CHECK(any_conv);
    const auto g = m.subgraph();
    std::size_t first_conv = 0;
    while (first_conv < g.operator_count() && g.op(first_conv).op() != vnnx::builtin_operator::CONV_2D) ++first_conv;
    REQUIRE(first_conv < g.operator_count());
    const auto o = g.op(first_conv);
    const auto c = o.options<vnnx::tflite::opt::Conv2DOptions>();
    const auto w = g.tensor(static_cast<std::size_t>(o.inputs()[1]));
    // MobileNetV1 on a 1-channel input: a depthwise conv first, then pointwise 1x1 convs.
    CHECK(g.op(0).op() == vnnx::builtin_operator::DEPTHWISE_CONV_2D);
    CHECK(first_conv == 2);
    CHECK(c.stride_w == 1);
    CHECK(c.stride_h == 1);
    CHECK(c.padding == vnnx::tflite::padding_mode::SAME);
    CHECK(c.fused_activation_function == vnnx::tflite::activation_function::RELU6);
    CHECK(w.shape()[1] == 1);
    CHECK(w.shape()[2] == 1);
    // Per-channel int8 weights: one scale per output channel along dimension 0.
    CHECK(w.is_constant());
    CHECK(w.quant().per_channel());
    CHECK(w.quant().quantized_dimension == 0);
    CHECK(w.quant().scale.size() == static_cast<std::size_t>(w.shape()[0]));
    CHECK(w.data().size() == static_cast<std::size_t>(w.element_count()));
    // The bias of a depthwise conv carries the filter's stale dimension 3; read along dimension 0.
    for (std::size_t i = 0; i < g.operator_count(); ++i) {
        const auto op = g.op(i);
        if (op.op() != vnnx::builtin_operator::DEPTHWISE_CONV_2D || op.inputs().size() < 3) continue;
        const auto bias = g.tensor(static_cast<std::size_t>(op.inputs()[2]));
        CHECK(bias.type() == vnnx::tflite::tensor_type::INT32);
        if (bias.quant().per_channel()) CHECK(bias.quant().quantized_dimension == 0);
        CHECK(bias.data().size() == 4 * static_cast<std::size_t>(bias.element_count()));
    }
}


TEST_CASE("tflite: vnnx info --json reports the MANIFEST facts", "[tflite][models][cli]") {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    for (const auto& f : facts()) {
        auto path = vnnx::test::shared_model(f.name);
        if (!path) return;
        INFO("model " << f.name);
        int status = -1;
        const auto out = run_tool("info '" + path->string() + "' --json", status);
        REQUIRE(status == 0);
        const auto j = vnnx::test::json::parse(out);
        CHECK(j["format"].str == "tflite");
        std::map<std::string, std::size_t> ops;
        for (const auto& [k, v] : j["operators"].obj) ops[k] = static_cast<std::size_t>(v.num);
        CHECK(ops == f.ops);
        auto check_list = [](const vnnx::test::json::value& list, const std::vector<io_fact>& want) {
            REQUIRE(list.arr.size() == want.size());
            for (std::size_t i = 0; i < want.size(); ++i) {
                const auto& t = list[i];
                CHECK(t["dtype"].str == want[i].dtype);
                std::vector<std::int32_t> shape;
                for (const auto& d : t["shape"].arr) shape.push_back(static_cast<std::int32_t>(d.num));
                CHECK(shape == want[i].shape);
                if (want[i].scale < 0) {
                    CHECK_FALSE(t.has("scale"));
                    CHECK_FALSE(t.has("zero_point"));
                } else {
                    CHECK(close_scale(t["scale"].num, want[i].scale));
                    CHECK(static_cast<std::int64_t>(t["zero_point"].num) == want[i].zero_point);
                }
            }
        };
        check_list(j["inputs"], f.inputs);
        check_list(j["outputs"], f.outputs);
        CHECK(std::fabs(j["macs"].num / 1e6 - f.mmac) <= 0.005 * f.mmac);
        CHECK(j["integer"].k == vnnx::test::json::value::kind::boolean);
        CHECK(j["unsupported"].k == vnnx::test::json::value::kind::array);
    }
}
