// `vnnx infer`: outputs equal an in-process simulation and the embedded expected output; layout,
// seed and input checks; outputs written only on success.
#include <random>
#include <sstream>
#include <string>

#include "cli_harness_test.hpp"
#include "vnnx/compiler/compile.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/sim/machine.hpp"

using namespace cli_test;

namespace {

/// Compiles `tflite` with the tool (-i files or the default input) into dir/m.vnnx.
void compile_with_tool(const temp_dir& dir, const std::vector<std::byte>& tflite, const std::string& inputs = "") {
    write_bytes(dir / "m.tflite", tflite);
    const auto r = run_tool("compile -t " + (dir / "m.tflite") + " -s V1000 " + inputs + " -o " + (dir / "m.vnnx"));
    INFO(r.out);
    REQUIRE(r.status == 0);
}

/// The simulator's outputs for NHWC inputs, in process, as NHWC arrays.
std::vector<vnnx::ndarray> simulate(const std::vector<std::byte>& vnnx_bytes, const std::vector<vnnx::ndarray>& inputs) {
    vnnx::sim::machine m(vnnx_bytes, "m.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    for (std::size_t i = 0; i < inputs.size(); ++i)
        m.set_input(i, vnnx::sim::io_bytes(m.view().input(i), inputs[i], vnnx::sim::io_layout::tflite, "in"));
    m.run();
    std::vector<vnnx::ndarray> out;
    for (std::size_t o = 0; o < m.view().num_outputs(); ++o)
        out.push_back(vnnx::sim::io_array(m.view().output(o), m.output(o), vnnx::sim::io_layout::tflite, "out"));
    return out;
}

}  // namespace

TEST_CASE("cli infer: without -i the embedded test input reproduces the embedded expected output") {
    if (!tool_built()) return;
    temp_dir dir("infer_embedded");
    const auto model = add_model();
    const auto x = ramp({1, 3, 4, 2}, 11, -90), y = ramp({1, 3, 4, 2}, -13, 120);
    vnnx::write_npy(dir / "x.npy", x);
    vnnx::write_npy(dir / "y.npy", y);
    compile_with_tool(dir, model, "-i " + (dir / "x.npy") + " " + (dir / "y.npy"));
    const auto r = run_tool("infer " + (dir / "m.vnnx") + " -o " + (dir / "out"));
    INFO(r.out);
    REQUIRE(r.status == 0);
    const auto got = vnnx::read_npy(dir / "out/output_0.npy");
    // TFLite layout and dtype, equal to the reference interpreter's answer for the same inputs.
    const auto tfl = vnnx::tflite::model_view::parse(model, "m.tflite");
    const auto want = vnnx::ref::run(tfl, {x, y});
    CHECK(got.type == vnnx::dtype::int8);
    CHECK(got.shape == std::vector<std::int64_t>{1, 3, 4, 2});
    CHECK(got == want[0]);
    // ... which is also what the file stores as its expected output.
    const auto bytes = vnnx::read_file(dir / "m.vnnx");
    const vnnx::format::model_view v(bytes, "m.vnnx");
    CHECK(vnnx::sim::io_array(v.output(0), v.output(0).test_vector, vnnx::sim::io_layout::tflite, "t") == got);
}

TEST_CASE("cli infer: -i arrays give the in-process simulation's outputs, in either layout") {
    if (!tool_built()) return;
    temp_dir dir("infer_inputs");
    compile_with_tool(dir, requantize_model(3, 4, 5));
    const auto in = ramp({1, 3, 4, 5}, 5, 17);
    vnnx::write_npy(dir / "in.npy", in);
    auto r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "in.npy") + " -o " + (dir / "out") + " --isa scalar --threads 2");
    INFO(r.out);
    REQUIRE(r.status == 0);
    const auto bytes = vnnx::read_file(dir / "m.vnnx");
    const auto want = simulate(bytes, {in});
    const auto got = vnnx::read_npy(dir / "out/output_0.npy");
    CHECK(got == want[0]);
    for (std::size_t i = 0; i < in.element_count(); ++i) CHECK(got.get<int>(i) == requantized(in.get<int>(i)));
    // --layout vnnx: channels-first arrays in and out.
    vnnx::write_npy(dir / "in_cf.npy", vnnx::sim::to_channels_first(in));
    r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "in_cf.npy") + " -o " + (dir / "cf") + " --layout vnnx");
    REQUIRE(r.status == 0);
    CHECK(vnnx::read_npy(dir / "cf/output_0.npy") == vnnx::sim::to_channels_first(want[0]));
    // --seed: the seed-N pseudo-random input drawn in the TFLite layout.
    r = run_tool("infer " + (dir / "m.vnnx") + " --seed 7 -o " + (dir / "seeded"));
    REQUIRE(r.status == 0);
    std::mt19937 gen(7);
    const auto rnd = vnnx::sim::random_array(gen, vnnx::dtype::int8, {1, 3, 4, 5});
    CHECK(vnnx::read_npy(dir / "seeded/output_0.npy") == simulate(bytes, {rnd})[0]);
}

TEST_CASE("cli infer: wrong inputs and usage fail clearly and write nothing") {
    if (!tool_built()) return;
    temp_dir dir("infer_errors");
    compile_with_tool(dir, requantize_model(3, 4, 5));
    vnnx::write_npy(dir / "cf.npy", ramp({1, 5, 3, 4}));
    auto r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "cf.npy") + " -o " + (dir / "out"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "vnnx: error: " + (dir / "cf.npy") + " (input 0 of " + (dir / "m.vnnx") +
                              "): shape (1, 5, 3, 4) does not match the model's (1, 3, 4, 5)"));
    vnnx::write_npy(dir / "u8.npy", vnnx::ndarray(vnnx::dtype::uint8, {1, 3, 4, 5}));
    r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "u8.npy") + " -o " + (dir / "out"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "dtype uint8 does not match the model's int8"));
    CHECK_FALSE(std::filesystem::exists(dir / "out/output_0.npy"));
    r = run_tool("infer " + (dir / "m.vnnx"));
    CHECK(r.status == 2);
    CHECK(contains(r.out, "-o OUTDIR is required"));
    r = run_tool("infer " + (dir / "m.vnnx") + " -o " + (dir / "out") + " --layout nchw");
    CHECK(r.status == 2);
    r = run_tool("infer " + (dir / "m.vnnx") + " -o " + (dir / "out") + " --threads 0");
    CHECK(r.status == 2);
    r = run_tool("infer " + (dir / "m.vnnx") + " -o " + (dir / "out") + " --isa mmx");
    CHECK(r.status == 2);
    // A damaged file: bad input, named.
    write_bytes(dir / "bad.vnnx", std::vector<std::byte>(100, std::byte{0x5a}));
    r = run_tool("infer " + (dir / "bad.vnnx") + " -o " + (dir / "out"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, "vnnx: error: " + (dir / "bad.vnnx")));
}

TEST_CASE("cli infer: a batch along a new first axis gives each sample's answer, stacked, on any --jobs") {
    if (!tool_built()) return;
    temp_dir dir("infer_batch");
    const auto model = add_model();
    compile_with_tool(dir, model);
    const auto tfl = vnnx::tflite::model_view::parse(model, "m.tflite");
    // Five samples of both inputs; each sample's sum is the reference interpreter's.
    const auto xs = ramp({5, 3, 4, 2}, 11, -90), ys = ramp({5, 3, 4, 2}, -13, 120);
    vnnx::write_npy(dir / "xs.npy", xs);
    vnnx::write_npy(dir / "ys.npy", ys);
    for (const char* jobs : {"1", "2", "4"}) {
        const std::string out = dir / (std::string("out") + jobs);
        const auto r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "xs.npy") + " " + (dir / "ys.npy") + " -o " + out +
                                " --jobs " + jobs);
        INFO(r.out);
        REQUIRE(r.status == 0);
        CHECK(contains(r.out, "ran 5 samples on"));
        const auto got = vnnx::read_npy(out + "/output_0.npy");
        REQUIRE(got.shape == std::vector<std::int64_t>{5, 3, 4, 2});
        for (std::size_t s = 0; s < 5; ++s) {
            auto x = vnnx::sim::sample_of(xs, s), y = vnnx::sim::sample_of(ys, s);
            x.shape.insert(x.shape.begin(), 1);
            y.shape.insert(y.shape.begin(), 1);
            auto want = vnnx::ref::run(tfl, {x, y})[0];
            want.shape.erase(want.shape.begin());
            CHECK(vnnx::sim::sample_of(got, s) == want);
        }
    }
    // Channels first, N x C x H x W: the same sums, rotated.
    vnnx::write_npy(dir / "xs_cf.npy", vnnx::sim::to_channels_first(xs));
    vnnx::write_npy(dir / "ys_cf.npy", vnnx::sim::to_channels_first(ys));
    auto r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "xs_cf.npy") + " " + (dir / "ys_cf.npy") + " -o " +
                      (dir / "cf") + " --layout vnnx --jobs 2");
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(vnnx::read_npy(dir / "cf/output_0.npy") == vnnx::sim::to_channels_first(vnnx::read_npy(dir / "out2/output_0.npy")));
    // Inputs that disagree on the sample count: named, nothing written.
    vnnx::write_npy(dir / "ys3.npy", ramp({3, 3, 4, 2}));
    r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "xs.npy") + " " + (dir / "ys3.npy") + " -o " + (dir / "bad"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, (dir / "ys3.npy") + " (input 1 of " + (dir / "m.vnnx") + "): holds 3 sample(s), " + (dir / "xs.npy") +
                              " (input 0) holds 5"));
    CHECK_FALSE(std::filesystem::exists(dir / "bad/output_0.npy"));
    // A wrong dtype in a batch names the file and the sample.
    vnnx::write_npy(dir / "ys_u8.npy", vnnx::ndarray(vnnx::dtype::uint8, {5, 3, 4, 2}));
    r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "xs.npy") + " " + (dir / "ys_u8.npy") + " -o " + (dir / "bad"));
    CHECK(r.status == 1);
    CHECK(contains(r.out, (dir / "ys_u8.npy") + " (sample 0 of input 1 of " + (dir / "m.vnnx") +
                              "): dtype uint8 does not match the model's int8"));
    CHECK_FALSE(std::filesystem::exists(dir / "bad/output_0.npy"));
    r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "xs.npy") + " " + (dir / "ys.npy") + " -o " + (dir / "bad") + " --profile");
    CHECK(r.status == 2);
    CHECK(contains(r.out, "--profile and -v run one sample; the inputs hold 5"));
    r = run_tool("infer " + (dir / "m.vnnx") + " -i " + (dir / "xs.npy") + " " + (dir / "ys.npy") + " -o " + (dir / "bad") + " --jobs 0");
    CHECK(r.status == 2);
    CHECK_FALSE(std::filesystem::exists(dir / "bad/output_0.npy"));
}

TEST_CASE("cli infer: --profile names each node's type and its first layer") {
    if (!tool_built()) return;
    temp_dir dir("infer_profile");
    compile_with_tool(dir, add_model());
    const auto r = run_tool("infer " + (dir / "m.vnnx") + " -o " + (dir / "out") + " --profile");
    INFO(r.out);
    REQUIRE(r.status == 0);
    // The ADD model is one IDENTITY node whose layer is an ELTWISE: both names, never a blank.
    CHECK(contains(r.out, "type (node/first layer)"));
    CHECK(contains(r.out, "IDENTITY/ELTWISE"));
}

TEST_CASE("cli infer: --profile shows what a node of layers leaves, and a BATCH_MATMUL's MACs") {
    if (!tool_built()) return;
    temp_dir dir("infer_profile_shapes");
    // int8 [1,16,20,32] -> RESIZE_NEAREST_NEIGHBOR x2 -> [1,32,40,32]; then Q·Kᵀ of it with itself.
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 16, 20, 32}, quant{0.05f, -3});
    const auto size = b.add_constant("size", tensor_type::INT32, {2}, std::vector<std::int32_t>{32, 40});
    const auto up = b.add_tensor("up", tensor_type::INT8, {1, 32, 40, 32}, quant{0.05f, -3});
    b.add_operator(builtin_operator::RESIZE_NEAREST_NEIGHBOR, {x, size}, {up},
                   vnnx::tflite::resize_nearest_neighbor_options{false, false});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 32, 40, 40}, quant{0.1f, 2});
    b.add_operator(builtin_operator::BATCH_MATMUL, {up, up}, {y}, vnnx::tflite::batch_matmul_options{false, true, false});
    b.set_inputs({x});
    b.set_outputs({y});
    compile_with_tool(dir, b.finish());
    const auto r = run_tool("infer " + (dir / "m.vnnx") + " -o " + (dir / "out") + " --profile");
    INFO(r.out);
    REQUIRE(r.status == 0);
    // The resize node leaves 32 x 32 x 40 (channels first), not the 32 x 16 x 20 copy it starts from.
    std::istringstream lines(r.out);
    bool resize = false, bmm = false;
    for (std::string line; std::getline(lines, line);) {
        if (contains(line, "RESIZE_NEAREST_NEIGHBOR")) {
            resize = true;
            CHECK(contains(line, "32 x 32 x 40"));
        }
        if (contains(line, "BATCH_MATMUL")) {
            bmm = true;
            // 32 x 40 x 40 outputs, each a sum of 32 products: 1.6384 MMAC.
            std::istringstream fields(line);
            std::string node, type, layers, wall, cpu, pct, cum, mmac;
            fields >> node >> type >> layers >> wall >> cpu >> pct >> cum >> mmac;
            CHECK(std::stod(mmac) == Approx(1.6384).margin(0.006));
        }
    }
    CHECK(resize);
    CHECK(bmm);
}
