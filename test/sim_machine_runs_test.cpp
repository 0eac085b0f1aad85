// A first run prepares the convolutions ahead on a second thread (run_options::prepare_ahead):
// it gives the bytes a run that prepares node by node gives, and a bad record found while
// preparing ahead is still reported by the run, at its node.
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
#include "vnnx/tflite/yolo_model.hpp"

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
    for (isa_kind isa : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi}) {
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

TEST_CASE("machine: a first run preparing ahead equals one preparing node by node, and its errors come from the run") {
    // The YOLO-shaped model at 64: 60-odd convolutions, several of them fused with the next node.
    const auto compiled = conv_test::compile(vnnx::tflite::yolov8n_model(64));
    const vnnx::format::model_view v(compiled.bytes, "yolo.vnnx");
    std::vector<std::byte> in(v.input(0).length);
    for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>((i * 37 + 11) % 251);
    auto first_run = [&](const std::vector<std::byte>& bytes, bool ahead) {
        vnnx::sim::run_options o;
        o.prepare_ahead = ahead;
        vnnx::sim::machine m(bytes, "yolo.vnnx", o);
        m.set_input(0, in);
        m.run();
        std::vector<std::byte> out;
        for (std::size_t j = 0; j < v.num_outputs(); ++j) {
            const auto s = m.output(j);
            out.insert(out.end(), s.begin(), s.end());
        }
        // A second run on the same machine (caches made ahead) gives the same bytes.
        m.run();
        std::vector<std::byte> again;
        for (std::size_t j = 0; j < v.num_outputs(); ++j) {
            const auto s = m.output(j);
            again.insert(again.end(), s.begin(), s.end());
        }
        CHECK(again == out);
        return out;
    };
    const auto node_by_node = first_run(compiled.bytes, false);
    for (int rep = 0; rep < 3; ++rep) CHECK(first_run(compiled.bytes, true) == node_by_node);

    // A late convolution whose filter_data points past the file: the preparation ahead meets it
    // first, but the error is the run's, naming the node.
    std::size_t late = 0;
    for (std::size_t k = 0; k < v.num_nodes(); ++k)
        if (v.node(k).type == static_cast<std::int32_t>(builtin_operator::CONV_2D) && v.node(k).skip == 0) late = k;
    REQUIRE(late > 10);
    using vnnx::format::vnnx_subgraph_node_t;
    using vnnx::meta::offset_of_v;
    std::vector<std::byte> bad = compiled.bytes;
    const std::uint64_t at = vnnx::format::model_view::header_size + vnnx::format::model_view::node_size * late + offset_of_v<vnnx_subgraph_node_t, "options"> +
                             offset_of_v<vnnx::format::node_options::Conv2DOptions, "filter_data">;
    const std::uint64_t far = bad.size() + 4096;
    std::memcpy(bad.data() + at, &far, 8);
    for (bool ahead : {false, true}) {
        std::string what = "(no error)";
        try {
            (void)first_run(bad, ahead);
        } catch (const std::exception& e) {
            what = e.what();
        }
        INFO("prepare ahead " << ahead);
        CHECK_THAT(what, Catch::Contains("yolo.vnnx") && Catch::Contains("node " + std::to_string(late)) &&
                             Catch::Contains("filter_data"));
    }
}
