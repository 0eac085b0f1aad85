// One source of truth for diagnostics: `vnnx info` lists exactly the operators, and the rules,
// with which `vnnx compile` fails, because both call compiler::find_problems().
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "cli_harness_test.hpp"
#include "data/tflite/json_lite.hpp"
#include "support/models.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/tflite/builder.hpp"

using namespace cli_test;
using vnnx::builtin_operator;
using vnnx::tflite::tensor_type;

namespace {

/// "operator N (OP): reason" for every problem `vnnx info --json` lists.
std::vector<std::string> info_lines(const std::string& model) {
    const auto r = run_tool("info " + model + " --json");
    REQUIRE(r.status == 0);
    const auto j = vnnx::test::json::parse(r.out);
    std::vector<std::string> out;
    for (const auto& u : j["unsupported"].arr)
        out.push_back("operator " + std::to_string(static_cast<int>(u["index"].num)) + " (" + u["op"].str + "): " + u["reason"].str);
    return out;
}

/// The "operator N (OP): reason" lines of the error `vnnx compile` stops with (empty if it compiles).
std::vector<std::string> compile_lines(const std::string& model, const temp_dir& dir) {
    const auto r = run_tool("compile -t " + model + " -s V1000 --cut none -o " + (dir / "out.vnnx"));
    std::vector<std::string> out;
    if (r.status == 0) return out;
    std::size_t at = 0;
    while ((at = r.out.find("\n  operator ", at)) != std::string::npos) {
        const auto end = r.out.find('\n', at + 1);
        out.push_back(r.out.substr(at + 3, end == std::string::npos ? std::string::npos : end - at - 3));
        at += 3;
    }
    return out;
}

std::vector<std::byte> mixed_model() {
    using namespace vnnx::tflite;
    builder b;
    const auto fin = b.add_tensor("fin", tensor_type::FLOAT32, {1, 8});
    const auto q = b.add_tensor("q", tensor_type::INT8, {1, 8}, quant{0.1f, 0});
    const auto e = b.add_tensor("e", tensor_type::INT8, {1, 8}, quant{0.1f, 0});
    const auto f = b.add_tensor("f", tensor_type::FLOAT32, {1, 8});
    const auto g2 = b.add_tensor("g", tensor_type::FLOAT32, {1, 8});
    const auto h = b.add_tensor("h", tensor_type::INT8, {1, 8}, quant{0.1f, 0});
    const auto o = b.add_tensor("o", tensor_type::FLOAT32, {1, 8});
    b.add_operator(builtin_operator::QUANTIZE, {fin}, {q});    // float graph input: fine
    b.add_operator(builtin_operator::FLOOR, {q}, {e});         // no trait
    b.add_operator(builtin_operator::DEQUANTIZE, {e}, {f});    // float output that is not a graph output
    b.add_operator(builtin_operator::RELU, {f}, {g2});         // float compute
    b.add_operator(builtin_operator::QUANTIZE, {g2}, {h});     // float input that is not a graph input
    b.add_operator(builtin_operator::DEQUANTIZE, {h}, {o});    // float graph output: fine
    b.set_inputs({fin});
    b.set_outputs({o});
    return b.finish();
}

}  // namespace

TEST_CASE("problems: every operator the compiler cannot take, at once, with its rule") {
    const auto bytes = mixed_model();
    const auto m = vnnx::tflite::model_view::parse(bytes, "mixed.tflite");
    const auto p = vnnx::compiler::find_problems(m);
    REQUIRE(p.size() == 4);
    CHECK(p[0].index == 1);
    CHECK(p[0].op == "FLOOR");
    CHECK(p[0].reason == "operator is not supported");
    CHECK(p[1].index == 2);
    CHECK_THAT(p[1].reason, Catch::Contains("floating point"));
    CHECK(p[2].index == 3);
    CHECK(p[2].op == "RELU");
    CHECK(p[3].index == 4);
    CHECK(p[3].op == "QUANTIZE");
}

TEST_CASE("problems: vnnx info and vnnx compile give the same list on builder-made models") {
    if (!tool_built()) return;
    temp_dir dir("problems_builder");
    write_bytes(dir / "mixed.tflite", mixed_model());
    const auto info = info_lines(dir / "mixed.tflite");
    CHECK(info.size() == 4);
    CHECK(info == compile_lines(dir / "mixed.tflite", dir));
    // A supported model: no problem in either.
    write_bytes(dir / "ok.tflite", requantize_model());
    CHECK(info_lines(dir / "ok.tflite").empty());
    CHECK(compile_lines(dir / "ok.tflite", dir).empty());
}

TEST_CASE("problems: vnnx info and vnnx compile give the same list on the shared models") {
    if (!tool_built()) return;
    temp_dir dir("problems_models");
    struct expect {
        const char* name;
        std::size_t count;
        const char* first;
    };
    for (const auto& e : {expect{"tflite-micro__dtln_noise_suppression", 2, "operator 0 (UNIDIRECTIONAL_SEQUENCE_LSTM): operator is not supported: its output and cell states"},
                          expect{"coral-test-data__movenet_single_pose_lightning_ptq", 29, "operator 90 (FLOOR_DIV): operator is not supported"},
                          expect{"mediapipe__selfie_segmentation", 246, "operator 0 (DEQUANTIZE): computes in floating point"}}) {
        auto path = vnnx::test::shared_model(e.name);
        if (!path) continue;
        INFO(e.name);
        const auto info = info_lines(path->string());
        REQUIRE(info.size() == e.count);
        CHECK(info[0].rfind(e.first, 0) == 0);
        CHECK(info == compile_lines(path->string(), dir));
    }
}
