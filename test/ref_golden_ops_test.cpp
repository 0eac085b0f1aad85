// Single-op golden vectors made by TFLite itself (test/data/ref/*): the reference interpreter
// must reproduce them bit for bit. They cover operators and quantizations the shared models
// lack (LOGISTIC, TANH, HARD_SWISH, MAX_POOL, MUL/SUB, MAXIMUM, generic MEAN, bilinear modes...).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "vnnx/ref/interpreter.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

TEST_CASE("ref: bit-exact against TFLite on the single-op golden vectors") {
    const std::filesystem::path root = std::filesystem::path(VNNX_TEST_DATA_DIR) / "ref";
    REQUIRE(std::filesystem::is_directory(root));
    std::vector<std::filesystem::path> dirs;
    for (const auto& e : std::filesystem::directory_iterator(root))
        if (e.is_directory()) dirs.push_back(e.path());
    std::sort(dirs.begin(), dirs.end());
    CHECK(dirs.size() >= 140);
    for (const auto& d : dirs) {
        DYNAMIC_SECTION(d.filename().string()) {
            const auto bytes = vnnx::read_file(d / "model.tflite");
            const auto model = vnnx::tflite::model_view::parse(bytes, d.filename().string() + "/model.tflite");
            std::vector<vnnx::ndarray> inputs;
            for (std::size_t i = 0; std::filesystem::exists(d / ("input_" + std::to_string(i) + ".npy")); ++i)
                inputs.push_back(vnnx::read_npy(d / ("input_" + std::to_string(i) + ".npy")));
            const auto outputs = vnnx::ref::run(model, inputs);
            REQUIRE(outputs.size() == model.subgraph(0).outputs().size());
            // tflite_undefined.txt: "output element" pairs where TFLite's value comes from undefined
            // behaviour (the file says which); those elements alone are not compared.
            std::set<std::pair<std::size_t, std::size_t>> undefined;
            if (std::ifstream f(d / "tflite_undefined.txt"); f) {
                for (std::string line; std::getline(f, line);) {
                    std::istringstream ls(line);
                    std::size_t o = 0, e = 0;
                    if (line.empty() || line[0] == '#' || !(ls >> o >> e)) continue;
                    undefined.emplace(o, e);
                }
                CHECK(undefined.size() <= 4);
            }
            for (std::size_t i = 0; i < outputs.size(); ++i) {
                auto want = vnnx::read_npy(d / ("output_" + std::to_string(i) + ".npy"));
                INFO("output " << i);
                CHECK(outputs[i].type == want.type);
                REQUIRE(outputs[i].data.size() == want.data.size());
                for (const auto& [o, e] : undefined)
                    if (o == i) want.set<std::int64_t>(e, outputs[i].get<std::int64_t>(e));
                CHECK(outputs[i].data == want.data);
            }
        }
    }
}

TEST_CASE("ref: interpreter errors name the model and the rule") {
    const std::filesystem::path d = std::filesystem::path(VNNX_TEST_DATA_DIR) / "ref" / "add_uint8";
    const auto bytes = vnnx::read_file(d / "model.tflite");
    const auto model = vnnx::tflite::model_view::parse(bytes, "add.tflite");
    const auto a = vnnx::read_npy(d / "input_0.npy");
    CHECK_THROWS_WITH(vnnx::ref::run(model, {a}), Catch::Contains("add.tflite") && Catch::Contains("2 inputs, 1 were given"));
    vnnx::ndarray wrong(vnnx::dtype::int8, a.shape);
    CHECK_THROWS_WITH(vnnx::ref::run(model, {wrong, a}), Catch::Contains("must be uint8, got int8"));
    vnnx::ndarray small(vnnx::dtype::uint8, {3});
    CHECK_THROWS_WITH(vnnx::ref::run(model, {small, a}), Catch::Contains("needs 128 elements, got 3"));
    // Every tensor is visible after a traced run, and the observer sees each operator once.
    std::size_t calls = 0;
    const auto tr = vnnx::ref::run_traced(model, {a, vnnx::read_npy(d / "input_1.npy")},
                                          [&](std::size_t, const auto&) { ++calls; });
    CHECK(calls == model.subgraph(0).operator_count());
    CHECK(tr.tensors.size() == model.subgraph(0).tensor_count());
    CHECK(tr.tensors[static_cast<std::size_t>(model.subgraph(0).outputs()[0])]->data == tr.outputs[0].data);
}
