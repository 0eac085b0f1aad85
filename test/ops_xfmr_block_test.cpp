// A transformer encoder block (vnnx/tflite/transformer_model.hpp) end to end: it compiles for
// V250, V500 and V1000, its two attention products are BATCH_MATMUL nodes, and the simulator
// agrees with the reference interpreter within 1 LSB on at least 99.5% of the outputs (the
// reference is checked against TFLite itself by the golden vectors in test/data/ref).
#include "ops_eltwise_harness_test.hpp"

#include <cstdlib>

#include <vnnx/tflite/transformer_model.hpp>

using namespace eltwise_test;
namespace tfl = vnnx::tflite;

TEST_CASE("transformer block: compiles for every preset and simulates within 1 LSB of the reference") {
    using F = tfl::transformer_block_options::gelu_form;
    std::vector<tfl::transformer_block_options> variants(5);
    variants[1].squared_difference = false;
    variants[1].gelu = F::erf_op;
    variants[2].gelu = F::decomposed_tanh;
    variants[3].tokens = 9;
    variants[3].dim = 24;
    variants[3].heads = 3;
    variants[3].mlp = 40;
    variants[4].tokens = 128;  // large enough that the FCs' FIA requantization differs on a few outputs
    variants[4].dim = 128;
    variants[4].heads = 4;
    variants[4].mlp = 512;
    std::size_t total = 0, within1 = 0;
    for (std::size_t v = 0; v < variants.size(); ++v) {
        const auto& o = variants[v];
        const auto bytes = tfl::transformer_block_model(o);
        const auto model = tfl::model_view::parse(bytes, "block.tflite");
        for (std::uint64_t seed : {41u, 42u}) {
            const auto x = ramp_input(dtype::int8, {1, o.tokens, o.dim}, seed);
            const auto ref = vnnx::ref::run(model, {x});
            for (auto p : {vnnx::format::preset::V250, vnnx::format::preset::V500, vnnx::format::preset::V1000}) {
                INFO("variant " << v << ", preset " << static_cast<int>(p) << ", seed " << seed);
                vnnx::compile_options co;
                co.preset = p;
                const auto compiled = vnnx::compile(bytes, co, "block.tflite");
                const vnnx::format::model_view view(compiled.bytes, "block.vnnx");
                std::size_t bmm = 0;
                for (std::size_t k = 0; k < view.num_nodes(); ++k) bmm += view.node(k).type == 126 ? 1 : 0;
                CHECK(bmm == 2);
                const auto sim = simulate(compiled.bytes, {x}, ref);
                REQUIRE(sim[0].element_count() == ref[0].element_count());
                std::size_t ok = 0;
                for (std::size_t i = 0; i < ref[0].element_count(); ++i)
                    ok += std::llabs(sim[0].get<std::int64_t>(i) - ref[0].get<std::int64_t>(i)) <= 1 ? 1 : 0;
                CHECK(ok * 1000 >= ref[0].element_count() * 995);
                total += ref[0].element_count();
                within1 += ok;
            }
        }
    }
    CHECK(total == 3 * 2 * (3 * 16 * 32 + 9 * 24 + 128 * 128));
    CHECK(within1 * 1000 >= total * 995);
}

TEST_CASE("transformer block: the maker refuses impossible shapes") {
    tfl::transformer_block_options o;
    o.heads = 5;  // 32 is not a multiple of 5
    CHECK_THROWS_WITH(tfl::transformer_block_model(o), Catch::Contains("multiple of heads"));
}
