// Shared models that need only convolutions, FC and the operators around them (RESHAPE,
// SOFTMAX, pools, ADD, MEAN): compiled, simulated on the seed-0 input and compared with TFLite's
// own output (../shared/models/ref). The per-model exact-match rate and largest difference are
// reported; a model whose operators are not all supported yet is listed and skipped.
#include <filesystem>

#include <catch2/catch.hpp>

#include <vnnx/support/atomic_file.hpp>
#include <vnnx/support/bytes.hpp>

#include "ops_conv_common.hpp"
#include "support/models.hpp"

using namespace conv_test;

namespace {

struct model_case {
    const char* stem;
    int max_diff;  // bound on the largest output difference (1-LSB conv differences propagate)
    // The rule (max |diff| <= 1, >= 99.5% within 1 LSB) holds on the seed-0 input.
    bool rule = true;
};

}  // namespace

TEST_CASE("conv models: simulator vs TFLite on shared conv/FC models") {
    const auto dir = vnnx::test::models_dir();
    if (!dir) {
        WARN("skipped: shared models folder not found (set VNNX_MODELS_DIR)");
        return;
    }
    const model_case cases[] = {
        {"tflite-micro__hello_world_int8", 1},         {"mlcommons-tiny__ad01_int8", 1},
        {"mlcommons-tiny__kws_ref_model", 1},          {"tflite-micro__person_detect", 1},
        {"mlcommons-tiny__vww_96_int8", 1},
        // uint8 with weight zero points far from 128: some channels cannot keep exact weights
        // (docs/numerics.md), and 1001 probabilities meet the rule or miss it by one element
        // depending on the input (seed 0: 998 exact, one element 2 LSB off).
        {"coral-test-data__mobilenet_v1_0.25_128_quant", 3, false},
        // ResNet-8: 1-LSB conv differences (the FIA's 16-bit multiplier, docs/numerics.md) add up
        // through three residual blocks, and the final SOFTMAX (scale 1/256) magnifies a logit
        // difference: 17 LSB seen on the seed input. Every node alone is within 1 LSB except the
        // conv + ADD nodes, where the ADD's scales magnify the conv's 1 LSB.
        {"mlcommons-tiny__pretrainedResnet_quant", 20, false}, {"mlcommons-tiny__str_ww_ref_model", 1},
        {"tflite-micro__micro_speech_quantized", 1},
    };
    for (const auto& mc : cases) {
        const auto path = *dir / (std::string(mc.stem) + ".tflite");
        const auto refdir = *dir / "ref" / mc.stem;
        if (!std::filesystem::exists(path) || !std::filesystem::exists(refdir / "input_0.npy")) {
            WARN(mc.stem << ": skipped, model or reference vectors not found");
            continue;
        }
        const auto bytes = vnnx::read_file(path);
        vnnx::compile_result r;
        try {
            r = vnnx::compile(bytes, vnnx::compile_options{}, path.filename().string());
        } catch (const vnnx::error& e) {
            WARN(mc.stem << ": not compiled yet: " << e.what());
            continue;
        }
        const auto x = vnnx::read_npy(refdir / "input_0.npy");
        const auto y = vnnx::read_npy(refdir / "output_0.npy");
        std::vector<std::byte> got;
        try {
            got = simulate(r.bytes, to_channels_first(x), vnnx::sim::best_isa(), 2);
        } catch (const vnnx::error& e) {
            if (std::string(e.what()).find("no executor") != std::string::npos) {
                WARN(mc.stem << ": not simulated yet: " << e.what());
                continue;
            }
            FAIL_CHECK(mc.stem << ": " << e.what());
            continue;
        }
        const auto want = to_channels_first(y);
        INFO(mc.stem);
        REQUIRE(got.size() == want.size());
        const bool u8 = y.type == vnnx::dtype::uint8;
        int max_diff = 0;
        std::size_t exact = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const int a = u8 ? int(static_cast<std::uint8_t>(got[i])) : int(static_cast<std::int8_t>(got[i]));
            const int b = u8 ? int(static_cast<std::uint8_t>(want[i])) : int(static_cast<std::int8_t>(want[i]));
            max_diff = std::max(max_diff, std::abs(a - b));
            exact += a == b;
        }
        std::size_t within1 = 0;
        for (std::size_t i = 0; i < got.size(); ++i) {
            const int a = u8 ? int(static_cast<std::uint8_t>(got[i])) : int(static_cast<std::int8_t>(got[i]));
            const int b = u8 ? int(static_cast<std::uint8_t>(want[i])) : int(static_cast<std::int8_t>(want[i]));
            within1 += std::abs(a - b) <= 1;
        }
        WARN(mc.stem << ": " << r.nodes.size() << " nodes, output exact-match " << exact << "/" << got.size()
                     << ", within 1 LSB " << within1 << ", max diff " << max_diff);
        CHECK(max_diff <= mc.max_diff);
        if (mc.rule) CHECK(within1 * 1000 >= got.size() * 995);
    }
}

TEST_CASE("conv models: DeepLabV3's labels equal TFLite's on every SIMD path and thread count") {
    // Its segmentation head (RESIZE_BILINEAR 33 -> 513, ARG_MAX over 21 classes) runs fused on
    // AVX2 and AVX-512 (sim/nodes/segmentation_head.hpp); the scalar path takes seconds and the
    // head's unit tests cover it.
    const std::string stem = "coral-test-data__deeplabv3_mnv2_dm05_pascal_quant";
    const auto path = vnnx::test::shared_model(stem);
    if (!path) return;
    const auto refdir = path->parent_path() / "ref" / stem;
    if (!std::filesystem::exists(refdir / "input_0.npy")) {
        WARN(stem << ": skipped, reference vectors not found");
        return;
    }
    const auto r = vnnx::compile(vnnx::read_file(*path), vnnx::compile_options{}, path->filename().string());
    const auto x = to_channels_first(vnnx::read_npy(refdir / "input_0.npy"));
    const auto y = vnnx::read_npy(refdir / "output_0.npy");  // int64 labels [1, 513, 513]
    REQUIRE(y.type == vnnx::dtype::int64);
    const std::size_t n = y.data.size() / 8;
    REQUIRE(n == 513u * 513u);
    for (auto isa : vnnx::sim::simd_isa_kinds) {
        if (!vnnx::sim::isa_supported(isa)) continue;
        for (unsigned threads : {1u, 2u}) {
            INFO("isa " << vnnx::sim::isa_name(isa) << ", " << threads << " thread(s)");
            const auto got = simulate(r.bytes, x, isa, threads);  // int32 labels
            REQUIRE(got.size() == 4 * n);
            std::size_t equal = 0;
            for (std::size_t i = 0; i < n; ++i)
                equal += vnnx::load_le<std::int32_t>(got.data() + 4 * i) == vnnx::load_le<std::int64_t>(y.data.data() + 8 * i);
            CHECK(equal == n);
        }
    }
}
