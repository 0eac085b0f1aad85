// A convolution node whose one layer pads its output (the padded input of the next depthwise,
// as the compiler lowers MobileNet blocks), or whose layers crop its stride-2 grid and pad the
// crop (a MobileNet stem), writes its rows straight into the padded tensor and fills only the
// border: the same bytes as running the layers, on every ISA and thread count, and as the
// reference interpreter within the FIA's rounding; the fused path must be taken.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"

#include <vnnx/ref/interpreter.hpp>

namespace {
using namespace conv_test;
using vnnx::sim::isa_kind;

struct block {
    int H, W, C, K, kh;
    int stride;  // 1: the first conv is 1x1 VALID; 2: 3x3 stride 2 SAME (an FIA grid)
    tensor_type t;
    activation_function act;
    std::uint64_t seed;
};

// input -> CONV_2D 1x1 (C -> K), or 3x3 stride 2 SAME -> DEPTHWISE_CONV_2D kh x kh SAME -> output
std::vector<std::byte> build_block(const block& s) {
    using B = builtin_operator;
    vnnx::tflite::builder b;
    const std::int64_t z = s.t == tensor_type::UINT8 ? 128 : 0;
    const auto in = b.add_tensor("input", s.t, {1, s.H, s.W, s.C}, quant{0.05f, z - 5});
    const int oh = (s.H + s.stride - 1) / s.stride, ow = (s.W + s.stride - 1) / s.stride;
    const auto mid = b.add_tensor("expanded", s.t, {1, oh, ow, s.K}, quant{0.07f, z + 3});
    const auto out = b.add_tensor("output", s.t, {1, oh, ow, s.K}, quant{0.09f, z - 2});
    auto conv_weights = [&](const char* name, std::vector<std::int32_t> shape, std::int32_t qdim, std::uint64_t seed,
                            float in_scale) {
        const int K = s.K;
        std::size_t n = 1;
        for (auto d : shape) n *= static_cast<std::size_t>(d);
        // uint8 models (per-tensor uint8 weights, zero point 128) or int8 (per-channel int8 weights)
        const bool u8 = s.t == tensor_type::UINT8;
        const auto scales = vnnx::tflite::random_float(seed + 1, u8 ? 1 : static_cast<std::size_t>(K), 0.004f, 0.02f);
        const auto r = vnnx::tflite::random_int8(seed, n);
        std::int32_t w;
        if (u8) {
            std::vector<std::uint8_t> u(n);
            for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<std::uint8_t>(static_cast<int>(r[i]) + 128);
            w = b.add_constant(name, tensor_type::UINT8, shape, u, quant{scales, {128}, qdim});
        } else {
            w = b.add_constant(name, tensor_type::INT8, shape, r, quant{scales, std::vector<std::int64_t>(scales.size(), 0), qdim});
        }
        std::vector<float> bs;
        for (int k = 0; k < K; ++k) bs.push_back(scales[u8 ? 0 : static_cast<std::size_t>(k)] * in_scale);
        const auto bias = b.add_constant(std::string(name) + "_bias", tensor_type::INT32, {K},
                                         vnnx::tflite::random_int32(seed + 2, static_cast<std::size_t>(K), -3000, 3000),
                                         quant{bs, std::vector<std::int64_t>(bs.size(), 0), 0});
        return std::pair{w, bias};
    };
    const int k1 = s.stride == 1 ? 1 : 3;
    const auto [w1, b1] = conv_weights("expand", {s.K, k1, k1, s.C}, 0, s.seed, 0.05f);
    b.add_operator(B::CONV_2D, {in, w1, b1}, {mid},
                   vnnx::tflite::conv2d_options{s.stride == 1 ? padding_mode::VALID : padding_mode::SAME, s.stride,
                                                s.stride, s.act, 1, 1, tensor_type::FLOAT32});
    const auto [w2, b2] = conv_weights("depthwise", {1, s.kh, s.kh, s.K}, 3, s.seed + 10, 0.07f);
    b.add_operator(B::DEPTHWISE_CONV_2D, {mid, w2, b2}, {out},
                   vnnx::tflite::depthwise_conv2d_options{padding_mode::SAME, 1, 1, 1, s.act, 1, 1});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}
}  // namespace

TEST_CASE("fused pad: a conv node writes into its PAD layer's output, same bytes as the layer") {
    std::mt19937 rng(3434);
    std::uniform_int_distribution<int> sp(1, 20), ch(1, 40), coin(0, 1);
    int fused_nodes = 0, grid_nodes = 0;
    for (int n = 0; n < 20; ++n) {
        block s{sp(rng), sp(rng), ch(rng), ch(rng), n % 3 == 2 ? 5 : 3, n < 12 ? 1 : 2,
                coin(rng) ? tensor_type::UINT8 : tensor_type::INT8,
                coin(rng) ? activation_function::RELU6 : activation_function::NONE, static_cast<std::uint64_t>(40 + n)};
        const auto model = build_block(s);
        const auto compiled = compile(model);
        spec is;
        is.H = s.H, is.W = s.W, is.C = s.C, is.in_type = s.t;
        const auto x = input_for(is, s.seed + 5);
        const auto in = to_channels_first(x);
        auto run = [&](isa_kind isa, bool fuse, unsigned threads, std::size_t& fused) {
            vnnx::sim::run_options ro{isa, threads};
            ro.fuse_layers = fuse;
            vnnx::sim::machine m(compiled.bytes, "block.vnnx", ro);
            m.set_input(0, in);
            m.run();
            for (std::size_t j = 0; j < m.view().num_nodes(); ++j)  // the conv nodes' fusions
                if (m.view().node(j).type == static_cast<std::int32_t>(builtin_operator::CONV_2D)) fused += m.layers_fused(j);
            const auto o = m.output(0);
            return std::vector<std::byte>(o.begin(), o.end());
        };
        INFO("H=" << s.H << " W=" << s.W << " C=" << s.C << " K=" << s.K << " k=" << s.kh << " stride=" << s.stride
                  << " uint8=" << (s.t == tensor_type::UINT8));
        std::size_t unfused = 0, fused = 0;
        const auto want = run(isa_kind::scalar, false, 1, unfused);
        CHECK(unfused == 0);
        std::size_t runs = 0;
        for (isa_kind isa : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi, isa_kind::avx512_amx}) {
            if (!vnnx::sim::isa_supported(isa)) continue;
            for (unsigned threads : {1u, 2u}) {
                std::size_t f = 0;
                REQUIRE(run(isa, true, threads, f) == want);
                fused += f;
                ++runs;
            }
        }
        fused_nodes += fused > 0 ? 1 : 0;
        // A stride-2 node crops its grid and pads: both layers are done by the kernel's writes.
        if (s.stride == 2) grid_nodes += fused == 2 * runs ? 1 : 0;
        // And the answer itself: within the FIA's rounding of the reference interpreter.
        const auto tfl = vnnx::tflite::model_view::parse(model, "block.tflite");
        const auto ref = to_channels_first(vnnx::ref::run(tfl, {x})[0]);
        REQUIRE(ref.size() == want.size());
        int worst = 0;
        for (std::size_t i = 0; i < ref.size(); ++i) {
            const int a = s.t == tensor_type::UINT8 ? std::to_integer<std::uint8_t>(ref[i])
                                                    : static_cast<std::int8_t>(std::to_integer<std::uint8_t>(ref[i]));
            const int g = s.t == tensor_type::UINT8 ? std::to_integer<std::uint8_t>(want[i])
                                                    : static_cast<std::int8_t>(std::to_integer<std::uint8_t>(want[i]));
            worst = std::max(worst, std::abs(a - g));
        }
        CHECK(worst <= 3);
    }
    // The compiler lowers the depthwise's SAME padding to a PAD layer of the conv node.
    CHECK(fused_nodes == 20);
    CHECK(grid_nodes == 8);
}
