// `vnnx info`: the built tool on builder-made models written to temporary files; the JSON is
// parsed and checked, and bad input ends in "vnnx: error: <file>: ..." with exit status 1.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "data/tflite/json_lite.hpp"
#include "vnnx/format/writer.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/tflite/builder.hpp"

namespace {

struct run_result {
    int status = -1;
    std::string out;
};

run_result run_tool(const std::string& args) {
    run_result r;
    FILE* p = ::popen((std::string(VNNX_TOOL_PATH) + " " + args + " 2>&1").c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

struct temp_file {
    std::filesystem::path path;
    temp_file(const std::string& name, std::span<const std::byte> bytes)
        : path(std::filesystem::temp_directory_path() / ("vnnx_tflite_" + std::to_string(::getpid()) + "_" + name)) {
        vnnx::write_file_atomic(path, bytes);
    }
    ~temp_file() {
        std::error_code ec;
        std::filesystem::remove(path, ec);
    }
};

bool tool_built() {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return false;
    }
    return true;
}

/// A one-node .vnnx file made with the format layer's writer: IDENTITY node, one RELU layer,
/// int8 1x4x6x6 in and out (channels-first), no embedded test vectors.
std::vector<std::byte> tiny_vnnx() {
    using namespace vnnx::format;
    vnnx_subgraph_node_t node{};
    node.type = static_cast<std::int32_t>(vnnx_operator::IDENTITY);
    node.input_data_type = node.output_data_type = 1;
    node.input_strides = node.output_strides = {1, 1};
    node.num_inputs = node.num_outputs = 1;
    vnnx_layer_t relu{};
    relu.type = static_cast<std::int32_t>(vnnx::builtin_operator::RELU);
    relu.input_data_type = relu.output_data_type = 1;
    relu.num_inputs = relu.num_outputs = 1;
    relu.num_tensors = 2;
    relu.activation_max = 127;
    auto tensor = [](std::uint32_t at, float scale, std::int32_t zero) {
        vnnx_tensor_t t{};
        t.type = static_cast<std::int32_t>(calc_type::CALC_TYPE_INT8);
        t.shape = {1, 4, 6, 6, 0, 0};
        t.dims = 4;
        t.scale = scale;
        t.zero = zero;
        t.indirect = {0, at};
        t.direct = obj_off_t{at};
        return t;
    };
    // blob: io_nodes {0, 0}, io_offsets {0, 1}, then the two 144-byte io buffers
    std::vector<std::byte> blob(16 + 2 * 144);
    vnnx::store_le<std::int32_t>(blob.data() + 12, 1);
    writer w;
    w.add_node(node, {relu}, {tensor(16, 0.25f, -3), tensor(160, 0.125f, -128)});
    vnnx_graph_t h{};
    h.vbx_nn_preset = static_cast<std::uint32_t>(preset::V1000);
    h.num_inputs = h.num_outputs = 1;
    h.io_nodes = obj_off_t{0};
    h.io_offsets = obj_off_t{8};
    return w.write(h, blob, 0, 64);
}

}  // namespace

TEST_CASE("vnnx info on a .vnnx file, found by extension or by magic", "[tflite][cli]") {
    if (!tool_built()) return;
    const auto bytes = tiny_vnnx();
    for (const char* name : {"tiny.vnnx", "tiny.bin"}) {
        temp_file f(name, bytes);
        const auto r = run_tool("info " + f.path.string() + " --json");
        INFO(r.out);
        REQUIRE(r.status == 0);
        const auto j = vnnx::test::json::parse(r.out);
        CHECK(j["format"].str == "vnnx");
        CHECK(j["data_bytes"].num == static_cast<double>(bytes.size()));
        CHECK(j["allocate_bytes"].num == static_cast<double>(bytes.size() + 64));
        REQUIRE(j["nodes"].arr.size() == 1);
        CHECK(j["nodes"][0]["type"].str == "IDENTITY");
        REQUIRE(j["nodes"][0]["layers"].arr.size() == 1);
        CHECK(j["nodes"][0]["layers"][0].str == "RELU");
        CHECK(j["nodes"][0]["tensors"].num == 2);
        CHECK(j["layers"].num == 1);
        REQUIRE(j["inputs"].arr.size() == 1);
        CHECK(j["inputs"][0]["dtype"].str == "int8");
        CHECK(j["inputs"][0]["shape"].arr.size() == 4);
        CHECK(j["inputs"][0]["shape"][1].num == 4);
        CHECK(j["inputs"][0]["scale"].num == 0.25);
        CHECK(j["inputs"][0]["zero_point"].num == -3);
        CHECK(j["outputs"][0]["zero_point"].num == -128);
    }
    temp_file f("tiny_text.vnnx", bytes);
    const auto r = run_tool("info " + f.path.string());
    REQUIRE(r.status == 0);
    CHECK(r.out.find("VNNX model") != std::string::npos);
    CHECK(r.out.find("IDENTITY") != std::string::npos);
    CHECK(r.out.find("layers: RELU") != std::string::npos);
}

TEST_CASE("vnnx info --json on the demo model", "[tflite][cli]") {
    if (!tool_built()) return;
    const auto bytes = vnnx::tflite::demo_model();
    temp_file f("demo.tflite", bytes);
    const auto r = run_tool("info " + f.path.string() + " --json");
    REQUIRE(r.status == 0);
    const auto j = vnnx::test::json::parse(r.out);
    CHECK(j["format"].str == "tflite");
    CHECK(j["operators"]["CONV_2D"].num == 2);
    CHECK(j["operators"]["DEPTHWISE_CONV_2D"].num == 1);
    CHECK(j["operators"]["SOFTMAX"].num == 1);
    CHECK(j["operators"].obj.size() == 8);
    REQUIRE(j["inputs"].arr.size() == 1);
    const auto& in = j["inputs"][0];
    CHECK(in["name"].str == "input");
    CHECK(in["dtype"].str == "int8");
    CHECK(in["shape"].arr.size() == 4);
    CHECK(in["shape"][1].num == 32);
    CHECK(in["scale"].num == Approx(1.0 / 128));
    CHECK(in["zero_point"].num == 0);
    CHECK(j["outputs"][0]["zero_point"].num == -128);
    CHECK(j["tensors"].num == 19);
    CHECK(j["macs"].num == 16.0 * 16 * 8 * 27 + 16 * 16 * 8 * 9 + 8 * 8 * 16 * 8 + 10 * 16);
    CHECK(j["integer"].b);
    CHECK(j["unsupported"].arr.empty());
}

TEST_CASE("vnnx info: per-channel, unquantized and unsupported in JSON", "[tflite][cli]") {
    if (!tool_built()) return;
    using namespace vnnx::tflite;
    builder b;
    const auto x = b.add_tensor("x\"quoted\"", tensor_type::FLOAT32, {1, 4});
    const auto pc = b.add_tensor("pc", tensor_type::INT8, {2, 4}, quant{{0.5f, 0.25f}, {1, -1}, 0});
    const auto y = b.add_tensor("y", tensor_type::FLOAT32, {1, 4});
    b.add_operator(vnnx::builtin_operator::RELU, {x}, {y});
    b.add_custom_operator("Thing", {x}, {pc});
    b.set_inputs({x});
    b.set_outputs({y, pc});
    const auto bytes = b.finish();
    temp_file f("mixed.tflite", bytes);
    const auto r = run_tool("info " + f.path.string() + " --json");
    REQUIRE(r.status == 0);
    const auto j = vnnx::test::json::parse(r.out);
    CHECK(j["inputs"][0]["name"].str == "x\"quoted\"");
    CHECK_FALSE(j["inputs"][0].has("scale"));
    CHECK_FALSE(j["inputs"][0].has("zero_point"));
    const auto& o = j["outputs"][1];
    REQUIRE(o["scale"].arr.size() == 2);
    CHECK(o["scale"][1].num == 0.25);
    CHECK(o["zero_point"][1].num == -1);
    CHECK(o["quantized_dimension"].num == 0);
    CHECK(j["operators"]["CUSTOM:Thing"].num == 1);
    CHECK_FALSE(j["integer"].b);
    REQUIRE(j["unsupported"].arr.size() == 2);
    CHECK(j["unsupported"][0]["index"].num == 0);
    CHECK(j["unsupported"][0]["op"].str == "RELU");
    CHECK(j["unsupported"][1]["op"].str == "CUSTOM:Thing");
    CHECK(j["unsupported"][1]["reason"].str.find("custom operator 'Thing'") != std::string::npos);
}

TEST_CASE("vnnx info: text output", "[tflite][cli]") {
    if (!tool_built()) return;
    const auto bytes = vnnx::tflite::demo_model();
    temp_file f("demo_text.tflite", bytes);
    const auto r = run_tool("info " + f.path.string());
    REQUIRE(r.status == 0);
    CHECK(r.out.find("TFLite model (schema 3), 1 subgraph(s), 19 tensors, 9 operators") != std::string::npos);
    CHECK(r.out.find("'input' int8 1x32x32x3 scale 0.0078125 zero point 0") != std::string::npos);
    CHECK(r.out.find("unsupported: none") != std::string::npos);
}

TEST_CASE("vnnx info: bad input and bad usage", "[tflite][cli]") {
    if (!tool_built()) return;
    auto bytes = vnnx::tflite::demo_model();
    bytes.resize(bytes.size() / 2);
    temp_file f("cut.tflite", bytes);
    auto r = run_tool("info " + f.path.string());
    CHECK(r.status == 1);
    CHECK(r.out.rfind("vnnx: error: " + f.path.string() + ": ", 0) == 0);

    const std::vector<std::byte> junk(200, std::byte{7});
    temp_file v("junk.vnnx", junk);
    r = run_tool("info " + v.path.string() + " --json");
    CHECK(r.status == 1);
    CHECK(r.out.find("vnnx: error: " + v.path.string() + ": ") != std::string::npos);
    CHECK(r.out.find("not a VNNX file") != std::string::npos);

    r = run_tool("info");
    CHECK(r.status == 2);
    r = run_tool("info " + f.path.string() + " --jsn");
    CHECK(r.status == 2);
    CHECK(r.out.find("did you mean '--json'") != std::string::npos);
    r = run_tool("info /nonexistent/model.tflite");
    CHECK(r.status == 1);
}

TEST_CASE("vnnx info --dot draws the operator graph", "[tflite][cli]") {
    if (!tool_built()) return;
    const auto bytes = vnnx::tflite::demo_model();
    temp_file f("demo_dot.tflite", bytes);
    auto r = run_tool("info " + f.path.string() + " --dot");
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("digraph tflite {", 0) == 0);
    CHECK(r.out.find("op0 [label=\"0: CONV_2D\"];") != std::string::npos);
    CHECK(r.out.find("op0 -> op1 [label=\"int8 1x16x16x8\"];") != std::string::npos);
    CHECK(r.out.find("op0 -> op2") != std::string::npos);  // the residual ADD reads conv1 too
    CHECK(r.out.find("op8 -> out") != std::string::npos);
    r = run_tool("info " + f.path.string() + " --dot --json");
    CHECK(r.status == 2);
}
