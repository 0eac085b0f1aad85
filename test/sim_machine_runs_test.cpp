// A machine keeps the storage of each node's resolved tensors from run to run (a warm run
// allocates nothing there), the names of its nodes and layers, and what its executors made
// once (an ADD's table): runs after runs, on other inputs, give what a fresh machine gives,
// and a tensor record outside the model's memory is still rejected naming the node and the
// tensor.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

namespace {
using namespace conv_test;
using vnnx::sim::isa_kind;

// input -> CONV_2D 1x1 -> ADD with the input (a residual block's end) -> output
std::vector<std::byte> residual_model() {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 9, 7, 8}, quant{0.07f, -3});
    const auto w = vnnx::tflite::detail::add_conv_weights(b, "project", {8, 1, 1, 8}, 0, 0.07f, 17);
    const auto y = b.add_tensor("project", tensor_type::INT8, {1, 9, 7, 8}, quant{0.05f, 4});
    b.add_operator(builtin_operator::CONV_2D, {in, w.weights, w.bias}, {y},
                   vnnx::tflite::conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1,
                                                tensor_type::FLOAT32});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 9, 7, 8}, quant{0.09f, -2});
    b.add_operator(builtin_operator::ADD, {y, in}, {out}, vnnx::tflite::add_options{activation_function::NONE, true});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

std::vector<std::byte> fresh_run(const std::vector<std::byte>& bytes, const std::vector<std::byte>& in, isa_kind isa,
                                 unsigned threads) {
    vnnx::sim::machine m(bytes, "runs.vnnx", {isa, threads});
    m.set_input(0, in);
    m.run();
    const auto o = m.output(0);
    return {o.begin(), o.end()};
}
// One machine run on x, y, x gives each time what a fresh machine gives on that input.
void runs_match_fresh(const std::vector<std::byte>& bytes, const std::vector<std::byte>& x,
                      const std::vector<std::byte>& y, isa_kind isa, unsigned threads) {
    const auto want_x = fresh_run(bytes, x, isa, threads), want_y = fresh_run(bytes, y, isa, threads);
    REQUIRE(want_x != want_y);
    vnnx::sim::machine m(bytes, "runs.vnnx", {isa, threads});
    auto run = [&](const std::vector<std::byte>& in) {
        m.set_input(0, in);
        m.run();
        const auto o = m.output(0);
        return std::vector<std::byte>(o.begin(), o.end());
    };
    CHECK(run(x) == want_x);
    CHECK(run(y) == want_y);
    CHECK(run(x) == want_x);
}
}  // namespace

TEST_CASE("machine: runs after runs give a fresh machine's answer, and a tensor outside memory is named") {
    using vnnx::format::model_view;
    using vnnx::format::vnnx_tensor_t;
    using vnnx::meta::offset_of_v;
    spec s;
    s.H = 11, s.W = 9, s.C = 6, s.K = 10, s.pad = padding_mode::SAME, s.act = activation_function::RELU;
    const auto compiled = compile(build(s));
    const std::vector<std::byte>& bytes = compiled.bytes;
    const auto a = to_channels_first(input_for(s, 5)), b = to_channels_first(input_for(s, 6));
    // The residual ADD: its later runs take the table its first run made (layers/eltwise.hpp).
    spec r;
    r.H = 9, r.W = 7, r.C = 8;
    const auto residual = compile(residual_model());
    const auto ra = to_channels_first(input_for(r, 7)), rb = to_channels_first(input_for(r, 8));
    const vnnx::format::model_view rv(residual.bytes, "residual.vnnx");
    bool has_add = false;
    for (std::size_t k = 0; k < rv.num_nodes(); ++k)
        for (const auto& l : rv.node_layers(k)) has_add |= l.type == static_cast<std::int32_t>(vnnx::format::vnnx_operator::ELTWISE);
    REQUIRE(has_add);
    for (isa_kind isa : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni}) {
        if (!vnnx::sim::isa_supported(isa)) continue;
        for (unsigned threads : {1u, 2u}) {
            INFO("isa " << vnnx::sim::isa_name(isa) << ", " << threads << " threads");
            runs_match_fresh(bytes, a, b, isa, threads);
            runs_match_fresh(residual.bytes, ra, rb, isa, threads);
        }
    }
    // A tensor record pointing past the model's memory is rejected when its node is resolved,
    // naming the file, the node and the tensor.
    const model_view v(bytes, "runs.vnnx");
    const std::size_t k = v.num_nodes() - 1;
    const std::size_t t = static_cast<std::size_t>(v.node(k).num_inputs);  // the node's first output
    REQUIRE(t < v.node_tensors(k).size());
    const std::uint64_t rec = v.node(k).tensors.value + model_view::tensor_size * t + offset_of_v<vnnx_tensor_t, "direct">;
    const std::uint64_t far = v.header().allocate_bytes - 1;  // inside, but its bytes run past the end
    std::vector<std::byte> bad = bytes;
    std::memcpy(bad.data() + rec, &far, 8);
    std::string what = "(no error)";
    try {
        fresh_run(bad, a, isa_kind::scalar, 1);
    } catch (const std::exception& e) {
        what = e.what();
    }
    CHECK_THAT(what, Catch::Contains("runs.vnnx") && Catch::Contains("node " + std::to_string(k) + " tensor " + std::to_string(t)) &&
                         Catch::Contains("lie outside the model's"));
}
