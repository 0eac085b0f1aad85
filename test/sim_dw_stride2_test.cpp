// Column-stride-2 depthwise convolutions: the AVX-512 kernel (dw_stride2.hpp) equals the scalar
// definition, and a compiled column-strided depthwise node run as one fused stride-2 convolution
// (its OUTPUT_SHAPER and STRIDED_SLICE layers skipped; without AVX-512 the slice gathered from
// the grid) gives the same bytes as the layers and as
// the scalar simulator; and the check that allows it tells observable tensors from internal ones.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "support/models.hpp"
#include "support/sim_random.hpp"

#include <vnnx/sim/dead_bytes.hpp>
#include <vnnx/sim/kernels/conv.hpp>
#include <vnnx/support/atomic_file.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;
using namespace vnnx_test;
}  // namespace

TEST_CASE("dw stride 2: SIMD equals scalar for column stride 2") {
    std::mt19937 rng(20261130);
    std::uniform_int_distribution<int> ch(1, 70), sp(1, 90), ks(0, 4), sh(1, 2), dh(1, 2), coin(0, 1), ten(0, 9);
    const int kernel[5] = {3, 5, 1, 2, 7};
    for (int n = 0; n < 120; ++n) {
        k::conv_shape s;
        s.channels = s.kernels = s.groups = n < 4 ? 16 * (n + 1) + (n % 2) : ch(rng);
        s.kernel_h = kernel[n % 8 < 6 ? (n % 2) : ks(rng)];
        s.kernel_w = kernel[n % 8 < 6 ? (n % 2) : ks(rng)];
        s.stride_h = sh(rng);
        s.stride_w = 2;
        s.dilation_h = ten(rng) == 0 ? dh(rng) : 1;
        s.height = (s.kernel_h - 1) * s.dilation_h + sp(rng);
        s.width = s.kernel_w - 1 + sp(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const bool extreme = ten(rng) == 0;
        const auto x = random_bytes(rng, s.input_size(), extreme);
        const auto w = random_weights(rng, s.weight_size(), extreme);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 32);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(s.output_size(), 0x5A);
            k::conv2d(s, w, rq, i).run(x, got);
            INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " H=" << s.height << " W=" << s.width
                        << " k=" << s.kernel_h << "x" << s.kernel_w << " sh=" << s.stride_h << " dh=" << s.dilation_h
                        << " in_signed=" << s.input_signed << " out_signed=" << s.output_signed);
            REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
        }
    }
}

TEST_CASE("dw stride 2: the fused node equals its layers and the scalar simulator") {
    using namespace conv_test;
    // AVX-512 runs the column-stride-2 kernel; the other ISAs gather the slice from the grid
    // the ordinary kernel wrote. Both skip the OUTPUT_SHAPER and STRIDED_SLICE layers.
    std::vector<isa_kind> isas{isa_kind::scalar};
    for (isa_kind i : simd_isas()) isas.push_back(i);
    std::mt19937 rng(5150);
    std::uniform_int_distribution<int> ch(1, 40), sp(0, 30), coin(0, 1);
    std::vector<int> fused_nodes(isas.size(), 0);
    int grid_nodes = 0;
    for (int n = 0; n < 16; ++n) {
        spec s;
        s.op = kind::depthwise;
        s.C = n < 2 ? 32 + 3 * n : ch(rng);
        s.kh = s.kw = n % 2 == 0 ? 3 : 5;
        s.sw = 2;
        s.sh = coin(rng) + 1;
        s.H = s.kh + sp(rng);
        s.W = s.kw + sp(rng);
        s.W += (s.W % 2 == n / 2 % 2) ? 1 : 0;  // odd and even widths
        s.in_type = s.out_type = coin(rng) ? tensor_type::UINT8 : tensor_type::INT8;
        s.act = coin(rng) ? activation_function::RELU6 : activation_function::NONE;
        s.pad = coin(rng) ? padding_mode::SAME : padding_mode::VALID;
        s.seed = static_cast<std::uint64_t>(100 + n);
        const auto compiled = compile(build(s));
        const auto in = to_channels_first(input_for(s, s.seed + 7));
        auto run = [&](isa_kind isa, bool fuse, unsigned threads, std::size_t* fused) {
            vnnx::sim::run_options ro{isa, threads};
            ro.fuse_layers = fuse;
            vnnx::sim::machine m(compiled.bytes, "dw_stride2.vnnx", ro);
            m.set_input(0, in);
            m.run();
            // The convolution nodes' fusions (an IDENTITY node before them may fuse too).
            if (fused)
                for (std::size_t j = 0; j < m.view().num_nodes(); ++j)
                    if (m.view().node(j).type == static_cast<std::int32_t>(builtin_operator::CONV_2D))
                        *fused += m.layers_fused(j);
            const auto o = m.output(0);
            return std::vector<std::byte>(o.begin(), o.end());
        };
        // The nodes whose output is an FIA grid (OUTPUT_SHAPER then STRIDED_SLICE): the only
        // ones the gather fuses.
        const vnnx::format::model_view v(compiled.bytes, "dw_stride2.vnnx");
        for (std::size_t j = 0; j < v.num_nodes(); ++j) {
            const auto l = v.node_layers(j);
            if (v.node(j).type == static_cast<std::int32_t>(builtin_operator::CONV_2D) && l.size() == 2 &&
                l[0].type == static_cast<std::int32_t>(vnnx::format::vnnx_operator::OUTPUT_SHAPER))
                ++grid_nodes;
        }
        std::size_t unfused = 0;
        const auto want = run(isa_kind::scalar, false, 1, &unfused);
        INFO("C=" << s.C << " H=" << s.H << " W=" << s.W << " k=" << s.kh << " sh=" << s.sh << " uint8="
                  << (s.in_type == tensor_type::UINT8) << " same=" << (s.pad == padding_mode::SAME));
        for (std::size_t i = 0; i < isas.size(); ++i) {
            INFO("isa " << vnnx::sim::isa_name(isas[i]));
            std::size_t fused = 0;
            const auto layers = run(isas[i], false, 1, &unfused);
            const auto got = run(isas[i], true, 1, &fused);
            const auto got2 = run(isas[i], true, 2, nullptr);
            CHECK(unfused == 0);
            REQUIRE(want == layers);
            REQUIRE(want == got);
            REQUIRE(want == got2);
            fused_nodes[i] += fused > 0 ? 1 : 0;
        }
    }
    // The compiler lowers these to [OUTPUT_SHAPER +] STRIDED_SLICE; the fused path must be
    // taken: always on AVX-512, after a grid elsewhere.
    CHECK(grid_nodes >= 4);
    for (std::size_t i = 0; i < isas.size(); ++i) {
        INFO("isa " << vnnx::sim::isa_name(isas[i]));
        CHECK(fused_nodes[i] == (vnnx::sim::uses_avx512(isas[i]) ? 16 : grid_nodes));
    }
}

TEST_CASE("dw stride 2: only unobservable intermediate tensors count as dead (MobileNetV2)") {
    const auto path = vnnx::test::shared_model("coral-test-data__tf2_mobilenet_v2_1.0_224_ptq");
    if (!path) return;
    const auto compiled = vnnx::compile(vnnx::read_file(*path), vnnx::compile_options{}, path->filename().string());
    const vnnx::format::model_view v(compiled.bytes, "mobilenet_v2.vnnx");
    auto range = [&](std::size_t node, std::size_t i) {
        const auto& t = v.node_tensors(node)[i];
        std::uint64_t n = 1;
        for (std::int32_t d = 0; d < t.dims; ++d) n *= static_cast<std::uint64_t>(t.shape[static_cast<std::size_t>(d)]);
        return std::pair<std::uint64_t, std::uint64_t>{t.direct.value, t.direct.value + n};
    };
    std::size_t checked = 0;
    for (std::size_t k = 0; k + 1 < v.num_nodes(); ++k) {
        const auto layers = v.node_layers(k);
        if (layers.size() != 2 || layers[1].type != static_cast<std::int32_t>(vnnx::builtin_operator::STRIDED_SLICE)) continue;
        INFO("node " << k);
        // The grid and the shaper's output are read by the node's own layers only; the slice's
        // output is the next node's input, and a graph input or output is always observable.
        CHECK(vnnx::sim::dead_after(v, k, {range(k, 1), range(k, 3)}));
        CHECK_FALSE(vnnx::sim::dead_after(v, k, {range(k, 5)}));
        CHECK_FALSE(vnnx::sim::dead_after(v, k, {range(k + 1, 0)}));
        CHECK_FALSE(vnnx::sim::dead_after(v, k, {{v.input(0).direct, v.input(0).direct + 1}}));
        CHECK_FALSE(vnnx::sim::dead_after(v, k, {{v.output(0).direct, v.output(0).direct + 1}}));
        ++checked;
    }
    CHECK(checked == 4);
}
