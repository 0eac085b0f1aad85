// `vnnx compile`: the built tool on builder-made models in a temporary folder: exit codes, error
// messages, nothing written on failure, the JSON report's values, embedded test vectors.
#include <random>

#include "cli_harness_test.hpp"
#include "data/tflite/json_lite.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/sim/io.hpp"

using namespace cli_test;

TEST_CASE("cli compile: writes a VNNX file whose test vectors are the given input and the reference output") {
    if (!tool_built()) return;
    temp_dir dir("compile_vectors");
    write_bytes(dir / "m.tflite", requantize_model(4, 5, 3));
    const auto input = ramp({1, 4, 5, 3});
    vnnx::write_npy(dir / "in.npy", input);
    const auto r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -i " + (dir / "in.npy") + " -o " + (dir / "m.vnnx"));
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(contains(r.out, "m.vnnx"));
    const auto bytes = vnnx::read_file(dir / "m.vnnx");
    const vnnx::format::model_view v(bytes, "m.vnnx");
    CHECK(v.header().vbx_nn_preset == 2);
    REQUIRE(v.header().include_io_data == 1);
    REQUIRE(v.num_inputs() == 1);
    REQUIRE(v.num_outputs() == 1);
    CHECK(v.input(0).shape == std::vector<std::int32_t>{1, 3, 4, 5});
    // Channels first: element (c, h, w) of the vector is NHWC element (h, w, c) of the file.
    const auto tin = v.input(0).test_vector;
    const auto tout = v.output(0).test_vector;
    REQUIRE(tin.size() == 60);
    REQUIRE(tout.size() == 60);
    for (int c = 0; c < 3; ++c)
        for (int h = 0; h < 4; ++h)
            for (int w = 0; w < 5; ++w) {
                const std::size_t cf = static_cast<std::size_t>((c * 4 + h) * 5 + w);
                const int x = input.get<int>(static_cast<std::size_t>((h * 5 + w) * 3 + c));
                CHECK(static_cast<std::int8_t>(tin[cf]) == x);
                CHECK(static_cast<std::int8_t>(tout[cf]) == requantized(x));
            }
    // As the SDK: a channels-first array (and one without the batch) is taken in the model's order.
    vnnx::write_npy(dir / "in_cf.npy", vnnx::sim::to_channels_first(input));
    auto no_batch = input;
    no_batch.shape = {4, 5, 3};
    vnnx::write_npy(dir / "in_nb.npy", no_batch);
    for (const char* name : {"in_cf.npy", "in_nb.npy"}) {
        const auto again = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -i " + (dir / name) + " -o " + (dir / "again.vnnx"));
        INFO(again.out);
        REQUIRE(again.status == 0);
        CHECK(vnnx::read_file(dir / "again.vnnx") == bytes);
    }
}

TEST_CASE("cli compile: without -i the input is the SDK's seed-42 pseudo-random input") {
    if (!tool_built()) return;
    temp_dir dir("compile_seed");
    write_bytes(dir / "m.tflite", requantize_model(2, 3, 4));
    const auto r = run_tool("compile -t " + (dir / "m.tflite") + " -s V500 -o " + (dir / "m.vnnx"));
    INFO(r.out);
    REQUIRE(r.status == 0);
    const auto bytes = vnnx::read_file(dir / "m.vnnx");
    const vnnx::format::model_view v(bytes, "m.vnnx");
    CHECK(v.header().vbx_nn_preset == 1);
    std::mt19937 gen(42);
    const auto nhwc = vnnx::sim::random_array(gen, vnnx::dtype::int8, {1, 2, 3, 4});
    CHECK(nhwc.get<int>(0) == 102);  // NumPy: np.random.seed(42); randint(0, 256) starts 102, 179, 92
    CHECK(nhwc.get<int>(1) == 179 - 256);
    const auto cf = vnnx::sim::to_channels_first(nhwc);
    const auto tin = v.input(0).test_vector;
    REQUIRE(tin.size() == cf.data.size());
    CHECK(std::equal(tin.begin(), tin.end(), cf.data.begin()));
    CHECK(static_cast<std::int8_t>(tin[6]) == -77);  // c=1, h=0, w=0 is the second draw, 179 as int8
    // Two inputs: the SDK seeds again for each, so both hold the same numbers.
    write_bytes(dir / "add.tflite", add_model());
    const auto a2 = run_tool("compile -t " + (dir / "add.tflite") + " -s V1000 -o " + (dir / "add.vnnx"));
    INFO(a2.out);
    REQUIRE(a2.status == 0);
    const auto add_bytes = vnnx::read_file(dir / "add.vnnx");
    const vnnx::format::model_view av(add_bytes, "add.vnnx");
    REQUIRE(av.num_inputs() == 2);
    std::mt19937 g2(42);
    const auto first = vnnx::sim::to_channels_first(vnnx::sim::random_array(g2, vnnx::dtype::int8, {1, 3, 4, 2}));
    for (std::size_t i = 0; i < 2; ++i) {
        const auto tv = av.input(i).test_vector;
        REQUIRE(tv.size() == first.data.size());
        CHECK(std::equal(tv.begin(), tv.end(), first.data.begin()));
    }
}

TEST_CASE("cli compile: --report JSON and -v table carry per-node values and totals") {
    if (!tool_built()) return;
    temp_dir dir("compile_report");
    write_bytes(dir / "m.tflite", add_model());
    const auto r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -o " + (dir / "m.vnnx") + " --report " +
                            (dir / "r.json") + " -v");
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(contains(r.out, "node type"));
    CHECK(contains(r.out, "total: "));
    CHECK(contains(r.out, "transforms: "));  // per-pass timings
    const auto file_bytes = std::filesystem::file_size(dir / "m.vnnx");
    const auto raw = vnnx::read_file(dir / "r.json");
    const auto json = vnnx::test::json::parse(std::string(reinterpret_cast<const char*>(raw.data()), raw.size()));
    CHECK(json["preset"].str == "V1000");
    const auto& totals = json["totals"];
    CHECK(totals["file_bytes"].num == static_cast<double>(file_bytes));
    const auto bytes = vnnx::read_file(dir / "m.vnnx");
    const vnnx::format::model_view v(bytes, "m.vnnx");
    CHECK(totals["allocate_bytes"].num == static_cast<double>(v.header().allocate_bytes));
    CHECK(totals["nodes"].num == static_cast<double>(v.num_nodes()));
    CHECK(totals["layers"].num == static_cast<double>(v.num_layers()));
    CHECK(totals["macs"].num == 0);
    const auto& nodes = json["nodes"];
    REQUIRE(nodes.arr.size() == v.num_nodes());
    CHECK(nodes[0]["input_shape"].arr.size() == 4);
    CHECK(nodes[0]["input_shape"][1].num == 2);  // channels first: [1, 2, 3, 4]
    CHECK(nodes[0]["input_shape"][2].num == 3);
    CHECK(nodes[0]["input_shape"][3].num == 4);
    CHECK(json["node_types"].obj.size() >= 1);
}

TEST_CASE("cli compile: several sizes write one suffixed file each") {
    if (!tool_built()) return;
    temp_dir dir("compile_multi");
    write_bytes(dir / "m.tflite", requantize_model());
    const auto r = run_tool("compile -t " + (dir / "m.tflite") + " -s V250,V1000 -o " + (dir / "m.vnnx"));
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK_FALSE(std::filesystem::exists(dir / "m.vnnx"));
    for (const auto& [name, preset] : {std::pair{"m_V250.vnnx", 0u}, std::pair{"m_V1000.vnnx", 2u}}) {
        const auto bytes = vnnx::read_file(dir / name);
        CHECK(vnnx::format::model_view(bytes, name).header().vbx_nn_preset == preset);
    }
    // Without -o: the SDK's name, MODEL_<SIZE>_<COMP>.vnnx beside the model.
    const auto d = run_tool("compile -t " + (dir / "m.tflite") + " -s V500");
    INFO(d.out);
    CHECK(d.status == 0);
    CHECK(std::filesystem::exists(dir / "m_V500_ncomp.vnnx"));
}

TEST_CASE("cli compile: an unsupported model gets one error listing every operator, nothing is written") {
    if (!tool_built()) return;
    temp_dir dir("compile_unsupported");
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::FLOAT32, {1, 4, 4, 3});
    const auto t = b.add_tensor("t", tensor_type::FLOAT32, {1, 4, 4, 3});
    const auto out = b.add_tensor("out", tensor_type::FLOAT32, {1, 4, 4, 3});
    b.add_operator(builtin_operator::FLOOR, {in}, {t});
    b.add_operator(builtin_operator::EXP, {t}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    write_bytes(dir / "bad.tflite", b.finish());
    write_bytes(dir / "keep.vnnx", std::vector<std::byte>{std::byte{1}, std::byte{2}, std::byte{3}});
    const auto r = run_tool("compile -t " + (dir / "bad.tflite") + " -s V1000 -o " + (dir / "new.vnnx"));
    INFO(r.out);
    CHECK(r.status == 1);
    CHECK(contains(r.out, "vnnx: error: " + (dir / "bad.tflite") + ": "));
    CHECK(contains(r.out, "FLOOR"));
    CHECK(contains(r.out, "EXP"));
    CHECK_FALSE(std::filesystem::exists(dir / "new.vnnx"));
    // An existing output is left as it was.
    const auto k = run_tool("compile -t " + (dir / "bad.tflite") + " -s V1000 -o " + (dir / "keep.vnnx"));
    CHECK(k.status == 1);
    CHECK(vnnx::read_file(dir / "keep.vnnx").size() == 3);
    // No stray temporary files either.
    std::size_t files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path)) ++files;
    CHECK(files == 2);
}

TEST_CASE("cli compile: bad usage exits 2, bad inputs exit 1 naming the file") {
    if (!tool_built()) return;
    temp_dir dir("compile_usage");
    write_bytes(dir / "m.tflite", requantize_model(4, 5, 3));
    auto r = run_tool("compile -s V1000 -o " + (dir / "m.vnnx"));
    CHECK(r.status == 2);
    CHECK(contains(r.out, "-t MODEL.tflite is required"));
    r = run_tool("compile -t " + (dir / "m.tflite") + " -s V9000 -o " + (dir / "m.vnnx"));
    CHECK(r.status == 2);
    CHECK(contains(r.out, "unknown size 'V9000'"));
    r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -c zip -o " + (dir / "m.vnnx"));
    CHECK(r.status == 2);
    r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -c comp -o " + (dir / "m.vnnx"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "only ncomp"));
    r = run_tool("compile -t " + (dir / "missing.tflite") + " -s V1000 -o " + (dir / "m.vnnx"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "missing.tflite"));
    // -i: wrong shape (neither NHWC nor its channels-first form), wrong dtype, wrong count.
    vnnx::write_npy(dir / "cf.npy", ramp({1, 4, 3, 5}));
    r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -i " + (dir / "cf.npy") + " -o " + (dir / "m.vnnx"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "vnnx: error: " + (dir / "cf.npy") + ": shape (1, 4, 3, 5) does not match (1, 4, 5, 3)"));
    vnnx::ndarray wide(vnnx::dtype::int16, {1, 4, 5, 3});
    vnnx::write_npy(dir / "wide.npy", wide);
    r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -i " + (dir / "wide.npy") + " -o " + (dir / "m.vnnx"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "dtype int16 does not match int8"));
    r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 -i " + (dir / "cf.npy") + " " + (dir / "cf.npy") +
                 " -o " + (dir / "m.vnnx"));
    CHECK(r.status == 2);
    CHECK(contains(r.out, "the model has 1 input(s), 2 .npy file(s) were given"));
    CHECK_FALSE(std::filesystem::exists(dir / "m.vnnx"));
}

TEST_CASE("cli compile: --sdk-scales writes the SDK's six-decimal scales, the default keeps float32") {
    if (!tool_built()) return;
    temp_dir dir("compile_sdk_scales");
    write_bytes(dir / "demo.tflite", vnnx::tflite::demo_model());  // input scale 1/128 = 0.0078125
    const auto plain = run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 --no-vectors -o " + (dir / "plain.vnnx"));
    const auto sdk = run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 --no-vectors --sdk-scales -o " + (dir / "sdk.vnnx"));
    INFO(plain.out << sdk.out);
    REQUIRE(plain.status == 0);
    REQUIRE(sdk.status == 0);
    const auto pb = vnnx::read_file(dir / "plain.vnnx"), sb = vnnx::read_file(dir / "sdk.vnnx");
    const vnnx::format::model_view pv(pb, "plain.vnnx"), sv(sb, "sdk.vnnx");
    CHECK(pv.node_tensors(0)[0].scale == 1.0f / 128);
    CHECK(sv.node_tensors(0)[0].scale == 0.007812f);  // "0.007812": the tie rounds to even
    CHECK(pb != sb);
}

TEST_CASE("cli compile: --calibrate fits the records to a batch of inputs and says what it did") {
    if (!tool_built()) return;
    temp_dir dir("compile_calibrate");
    write_bytes(dir / "demo.tflite", vnnx::tflite::demo_model());
    vnnx::ndarray batch(vnnx::dtype::int8, {3, 32, 32, 3});
    for (std::size_t i = 0; i < batch.data.size(); ++i) batch.data[i] = static_cast<std::byte>((i * 7919 + i / 97) % 251);
    vnnx::write_npy(dir / "cal.npy", batch);
    const auto plain = run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 --no-vectors -o " + (dir / "plain.vnnx"));
    const auto fit = run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 --no-vectors --calibrate " + (dir / "cal.npy") +
                              " -o " + (dir / "fit.vnnx"));
    INFO(plain.out << fit.out);
    REQUIRE(plain.status == 0);
    REQUIRE(fit.status == 0);
    CHECK(contains(fit.out, "records fitted to 3 calibration input(s)"));
    CHECK_FALSE(contains(plain.out, "records fitted"));
    // With the SDK's scales the records are the SDK's: the two options exclude each other.
    const auto both = run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 --sdk-scales --calibrate " + (dir / "cal.npy") +
                               " -o " + (dir / "both.vnnx"));
    CHECK(both.status == 2);
    CHECK(contains(both.out, "--sdk-scales"));
    CHECK_FALSE(std::filesystem::exists(dir / "both.vnnx"));
    // A model of two inputs cannot take one calibration array per sample.
    write_bytes(dir / "add.tflite", add_model());
    const auto two = run_tool("compile -t " + (dir / "add.tflite") + " -s V1000 --calibrate " + (dir / "cal.npy") + " -o " + (dir / "add.vnnx"));
    CHECK(two.status == 2);
    CHECK(contains(two.out, "one input"));
}
