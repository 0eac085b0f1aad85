// Conventions of the VectorBlox SDK's own .vnnx files that the simulator follows, each rebuilt
// here from a model of the project's own builder (no SDK file is kept): our compiler writes the
// model the usual way, the test rewrites the records as the SDK writes them, and both files must
// give the same bytes.
//   - 2-D tensors written as dims 4 with shape [n, m, 0, 0] (the SDK's hello_world and ad01):
//     an entry <= 0 is no dimension, as the firmware's element count skips it.
//   - A convolution of one input channel written as a depthwise one of group = kernels
//     (person_detect's first layer): filter_shape_dims [1, K, kh, kw], imaps 1, the filter packed
//     the depthwise way for K channels; output channel k reads input channel k / (K / C).
#include <cstdint>
#include <cstring>
#include <vector>

#include <catch2/catch.hpp>

#include "vnnx/compiler/compile.hpp"
#include "vnnx/ir/weight_packing.hpp"
#include "vnnx/format/codec.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/sim/weight_unpacking.hpp"
#include "vnnx/tflite/builder.hpp"

namespace {
using namespace vnnx::tflite;
using vnnx::builtin_operator;
namespace fmt_ = vnnx::format;

constexpr std::uint64_t header_size = fmt_::record_size_v<fmt_::vnnx_graph_t>;
constexpr std::uint64_t node_size = fmt_::record_size_v<fmt_::vnnx_subgraph_node_t>;
constexpr std::uint64_t tensor_size = fmt_::record_size_v<fmt_::vnnx_tensor_t>;

std::vector<std::byte> run_once(const std::vector<std::byte>& model, const std::vector<std::byte>& input,
                                vnnx::sim::isa_kind isa = vnnx::sim::isa_kind::scalar) {
    vnnx::sim::run_options opt;
    opt.isa = isa;
    vnnx::sim::machine m(model, "model.vnnx", opt);
    m.set_input(0, input);
    m.run();
    const auto o = m.output(0);
    return {o.begin(), o.end()};
}

std::vector<std::byte> pattern(std::size_t n, int salt) {
    std::vector<std::byte> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::byte>((static_cast<int>(i) * 73 + salt) % 256);
    return v;
}
}  // namespace

TEST_CASE("SDK convention: shape entries <= 0 are no dimension (2-D tensors as dims 4, [n, m, 0, 0])", "[sim][sdk]") {
    const auto model = vnnx::compile(demo_model(), {}, "demo.tflite").bytes;
    auto sdk = model;
    const fmt_::model_view v(model, "demo.vnnx");
    std::size_t patched = 0;
    for (std::size_t k = 0; k < v.num_nodes(); ++k) {
        const auto& nd = v.node(k);
        for (std::int32_t i = 0; i < nd.num_tensors; ++i) {
            const std::uint64_t at = nd.tensors.value + tensor_size * static_cast<std::uint64_t>(i);
            auto t = fmt_::decode<fmt_::vnnx_tensor_t>(sdk.data() + at);
            if (t.dims != 2) continue;
            t.dims = 4;
            t.shape[2] = 0;
            t.shape[3] = (patched % 2 == 0) ? 0 : -1;  // the firmware skips negative entries too
            fmt_::encode(sdk.data() + at, t);
            ++patched;
        }
    }
    REQUIRE(patched >= 2);  // the demo's fully connected layer and softmax are 2-D
    const auto input = pattern(32 * 32 * 3, 11);
    for (auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::best_isa()}) CHECK(run_once(sdk, input, isa) == run_once(model, input, isa));

    // An entry past 2^24 is still refused, naming the node and the tensor (node 1's input: not
    // a graph input, whose shape the reader checks first).
    REQUIRE(v.num_nodes() > 1);
    auto huge = model;
    const auto& nd1 = v.node(1);
    auto t = fmt_::decode<fmt_::vnnx_tensor_t>(huge.data() + nd1.tensors.value);
    t.shape[0] = (1 << 24) + 1;
    fmt_::encode(huge.data() + nd1.tensors.value, t);
    CHECK_THROWS_WITH(run_once(huge, input), Catch::Contains("node 1 tensor 0") && Catch::Contains("larger than 2^24"));
}

TEST_CASE("SDK convention: a one-channel convolution as a depthwise of group = kernels", "[sim][sdk]") {
    // input 1x40x30x1 -> CONV_2D 3x3 VALID, 8 filters -> 1x38x28x8
    constexpr int K = 8, kh = 3, kw = 3;
    builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 40, 30, 1}, quant{0.03f, 5});
    std::vector<std::int8_t> wv(K * kh * kw);
    for (std::size_t i = 0; i < wv.size(); ++i) wv[i] = static_cast<std::int8_t>(static_cast<int>(i * 53 % 255) - 127);
    std::vector<float> ws;
    for (int k = 0; k < K; ++k) ws.push_back(0.004f + 0.001f * static_cast<float>(k));
    const auto w = b.add_constant("filter", tensor_type::INT8, {K, kh, kw, 1}, wv, quant{ws, std::vector<std::int64_t>(K, 0), 0});
    std::vector<std::int32_t> bias;
    std::vector<float> bs;
    for (int k = 0; k < K; ++k) {
        bias.push_back(700 * k - 2500);
        bs.push_back(ws[static_cast<std::size_t>(k)] * 0.03f);
    }
    const auto bi = b.add_constant("bias", tensor_type::INT32, {K}, bias, quant{bs, std::vector<std::int64_t>(K, 0), 0});
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 38, 28, K}, quant{0.07f, -4});
    b.add_operator(builtin_operator::CONV_2D, {in, w, bi}, {out},
                   conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto model = vnnx::compile(b.finish(), {}, "conv1.tflite").bytes;

    // Find the convolution node: our compiler writes it dense, filter [8, 1, 3, 3].
    const fmt_::model_view v(model, "conv1.vnnx");
    std::size_t k_node = v.num_nodes();
    for (std::size_t k = 0; k < v.num_nodes(); ++k)
        if (v.node(k).type == static_cast<std::int32_t>(builtin_operator::CONV_2D)) k_node = k;
    REQUIRE(k_node < v.num_nodes());
    auto node = v.node(k_node);
    auto u = node.options.get<fmt_::node_options::Conv2DOptions>();
    REQUIRE(u.use_depthwise == 0);
    REQUIRE(u.filter_shape_dims[0] == K);
    REQUIRE(u.filter_shape_dims[1] == 1);
    const int P = vnnx::sim::parallel_output_maps(v.header().vbx_nn_preset);
    const auto dense_bytes = v.range(u.filter_data.value, vnnx::sim::packed_conv_bytes(K, 1, kh, kw, P), "filter");
    const auto dense = vnnx::sim::unpack_conv_weights({reinterpret_cast<const std::uint8_t*>(dense_bytes.data()), dense_bytes.size()},
                                                      K, 1, kh, kw, P, node.maps);  // W[K][1][kh][kw] = F[K][kh][kw]

    // The SDK's form: the depthwise packing of K filters, imaps 1, put after the model's memory
    // (the file grows to hold its old arena as zeros, then the filter).
    const int imaps = 1;
    const auto packed = vnnx::compiler::pack_depthwise_weights(dense, K, kh, kw, P, imaps, node.maps);
    std::vector<std::byte> sdk = model;
    auto h = fmt_::decode<fmt_::vnnx_graph_t>(sdk.data());
    std::uint64_t at = (std::uint64_t{h.allocate_bytes} + 15) / 16 * 16;
    sdk.resize(at);
    for (std::uint8_t x : packed) sdk.push_back(static_cast<std::byte>(x));
    sdk.resize((sdk.size() + 15) / 16 * 16);
    h.data_bytes = static_cast<std::uint32_t>(sdk.size());
    h.allocate_bytes = static_cast<std::uint32_t>(sdk.size());
    fmt_::encode(sdk.data(), h);
    u.use_depthwise = 1;
    u.group = K;
    u.imaps = imaps;
    u.filter_shape_dims = {1, K, kh, kw};
    u.filter_data.value = at;
    node.options.set(u);
    fmt_::encode(sdk.data() + header_size + node_size * k_node, node);

    const auto input = pattern(40 * 30, 5);
    for (auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::best_isa()}) {
        const auto want = run_once(model, input, isa);
        CHECK(run_once(sdk, input, isa) == want);
    }
    // The same filter read as a plain depthwise of 8 channels would need 8 input channels.
    auto wrong = sdk;
    u.group = 1;
    node.options.set(u);
    fmt_::encode(wrong.data() + header_size + node_size * k_node, node);
    CHECK_THROWS_WITH(run_once(wrong, input), Catch::Contains("depthwise needs filter_shape_dims"));
}
