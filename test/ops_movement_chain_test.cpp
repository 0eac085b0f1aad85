// Data-movement operators chained: several layers in one IDENTITY node, node outputs feeding
// layers, and a TILE after another operator (it starts its own node). Bit-exact with ref::run.
#include "ops_movement_harness.hpp"

#include <vnnx/support/atomic_file.hpp>

#include "support/models.hpp"

using namespace movement_test;

namespace {

std::int32_t i32_const(vnnx::tflite::builder& b, const std::string& name, const std::vector<std::int32_t>& v) {
    return b.add_constant(name, tensor_type::INT32, {static_cast<std::int32_t>(v.size())}, v);
}

}  // namespace

TEST_CASE("movement: PAD, STRIDED_SLICE and EXPAND_DIMS run as layers of one IDENTITY node") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 5, 6, 3}, q8());
    const auto pads = b.add_constant("pads", tensor_type::INT32, {4, 2}, std::vector<std::int32_t>{0, 0, 1, 1, 2, 0, 0, 0});
    const auto padded = b.add_tensor("padded", tensor_type::INT8, {1, 7, 8, 3}, q8());
    b.add_operator(builtin_operator::PAD, {in, pads}, {padded});
    const auto reshaped = b.add_tensor("reshaped", tensor_type::INT8, {1, 7, 8, 1, 3}, q8());
    const auto ax = b.add_constant("axis", tensor_type::INT32, {1}, std::vector<std::int32_t>{3});
    b.add_operator(builtin_operator::EXPAND_DIMS, {padded, ax}, {reshaped});
    const auto sliced = b.add_tensor("sliced", tensor_type::INT8, {1, 3, 4, 1, 2}, q8());
    vnnx::tflite::strided_slice_options o{};
    b.add_operator(builtin_operator::STRIDED_SLICE,
                   {reshaped, i32_const(b, "begin", {0, 1, 0, 0, 1}), i32_const(b, "end", {1, 7, 8, 1, 3}),
                    i32_const(b, "strides", {1, 2, 2, 1, 1})},
                   {sliced}, o);
    b.set_inputs({in});
    b.set_outputs({sliced});
    const auto r = run_both(b.finish(), {random_array(dtype::int8, {1, 5, 6, 3}, 3000)});
    require_equal(r);
    REQUIRE(r.compiled.nodes.size() == 1);
    CHECK(r.compiled.nodes[0].type == "IDENTITY");
    CHECK(r.compiled.nodes[0].layers.size() == 3);
}

TEST_CASE("movement: attention head split and merge (RESHAPE, TRANSPOSE [0,2,1,3], RESHAPE)") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("tokens", tensor_type::INT8, {1, 6, 32}, q8());
    const auto heads = b.add_tensor("heads", tensor_type::INT8, {1, 6, 4, 8}, q8());
    b.add_operator(builtin_operator::RESHAPE, {in, i32_const(b, "s1", {1, 6, 4, 8})}, {heads},
                   vnnx::tflite::reshape_options{{1, 6, 4, 8}});
    const auto t = b.add_tensor("by_head", tensor_type::INT8, {1, 4, 6, 8}, q8());
    b.add_operator(builtin_operator::TRANSPOSE, {heads, i32_const(b, "perm", {0, 2, 1, 3})}, {t});
    const auto merged = b.add_tensor("merged", tensor_type::INT8, {4, 48}, q8());
    b.add_operator(builtin_operator::RESHAPE, {t, i32_const(b, "s2", {4, 48})}, {merged}, vnnx::tflite::reshape_options{{4, 48}});
    b.set_inputs({in});
    b.set_outputs({merged});
    const auto r = run_both(b.finish(), {random_array(dtype::int8, {1, 6, 32}, 3100)});
    require_equal(r);
    CHECK(r.compiled.nodes.size() >= 2);
}

namespace {

// RESHAPE → TILE [2,1,2] → CONCATENATION → PACK; with `tile` false the TILE is spelled as two
// concatenations (the reference interpreter has no TILE).
std::vector<std::byte> tile_chain(bool tile) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 2, 3, 4}, q8());
    const auto r1 = b.add_tensor("r1", tensor_type::INT8, {2, 3, 4}, q8());
    b.add_operator(builtin_operator::RESHAPE, {in, i32_const(b, "s", {2, 3, 4})}, {r1}, vnnx::tflite::reshape_options{{2, 3, 4}});
    const auto tiled = b.add_tensor("tiled", tensor_type::INT8, {4, 3, 8}, q8());
    const auto none = vnnx::tflite::activation_function::NONE;
    if (tile) {
        b.add_operator(builtin_operator::TILE, {r1, i32_const(b, "mult", {2, 1, 2})}, {tiled});
    } else {
        const auto t0 = b.add_tensor("t0", tensor_type::INT8, {4, 3, 4}, q8());
        b.add_operator(builtin_operator::CONCATENATION, {r1, r1}, {t0}, vnnx::tflite::concatenation_options{0, none});
        b.add_operator(builtin_operator::CONCATENATION, {t0, t0}, {tiled}, vnnx::tflite::concatenation_options{2, none});
    }
    const auto cat = b.add_tensor("cat", tensor_type::INT8, {4, 6, 8}, q8());
    b.add_operator(builtin_operator::CONCATENATION, {tiled, tiled}, {cat}, vnnx::tflite::concatenation_options{1, none});
    const auto packed = b.add_tensor("packed", tensor_type::INT8, {4, 6, 2, 8}, q8());
    b.add_operator(builtin_operator::PACK, {cat, cat}, {packed}, vnnx::tflite::pack_options{2, 2});
    b.set_inputs({in});
    b.set_outputs({packed});
    return b.finish();
}

}  // namespace

TEST_CASE("movement: TILE after a RESHAPE starts a node of its own, then CONCATENATION and PACK") {
    const auto x = random_array(dtype::int8, {1, 2, 3, 4}, 3200);
    const auto model = tile_chain(true);
    const auto compiled = vnnx::compile(model, {}, "tile_chain.tflite");
    REQUIRE(compiled.nodes.size() == 4);
    CHECK(compiled.nodes[1].type == "TILE");
    CHECK(compiled.nodes[2].type == "CONCATENATION");
    CHECK(compiled.nodes[3].type == "PACK");
    vnnx::sim::machine m(compiled.bytes, "tile_chain.vnnx", {vnnx::sim::isa_kind::scalar, 1});
    m.set_input(0, to_cf(x).data);
    m.run();
    const auto same = tile_chain(false);
    const auto want = vnnx::ref::run(vnnx::tflite::model_view::parse(same, "same.tflite"), {x});
    const auto got = from_cf(m.output(0), dtype::int8, want[0].shape);
    CHECK(got.data == want[0].data);
}

TEST_CASE("movement: SPLIT outputs feed UNPACK, GATHER and CAST nodes") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 5, 6}, q8());
    const auto ax = b.add_constant("axis", tensor_type::INT32, {}, std::vector<std::int32_t>{-1});
    const auto a = b.add_tensor("a", tensor_type::INT8, {1, 4, 5, 2}, q8());
    const auto c = b.add_tensor("c", tensor_type::INT8, {1, 4, 5, 4}, q8());
    b.add_operator(builtin_operator::SPLIT_V, {in, i32_const(b, "sizes", {2, 4}), ax}, {a, c}, vnnx::tflite::split_v_options{2});
    const auto u0 = b.add_tensor("u0", tensor_type::INT8, {1, 5, 2}, q8());
    const auto u1 = b.add_tensor("u1", tensor_type::INT8, {1, 5, 2}, q8());
    const auto u2 = b.add_tensor("u2", tensor_type::INT8, {1, 5, 2}, q8());
    const auto u3 = b.add_tensor("u3", tensor_type::INT8, {1, 5, 2}, q8());
    b.add_operator(builtin_operator::UNPACK, {a}, {u0, u1, u2, u3}, vnnx::tflite::unpack_options{4, 1});
    const auto g = b.add_tensor("g", tensor_type::INT8, {1, 4, 3, 4}, q8());
    b.add_operator(builtin_operator::GATHER, {c, i32_const(b, "idx", {4, 0, 2})}, {g}, vnnx::tflite::gather_options{2, 0});
    const auto w = b.add_tensor("w", tensor_type::INT32, {1, 4, 3, 4});
    b.add_operator(builtin_operator::CAST, {g}, {w}, vnnx::tflite::cast_options{tensor_type::INT8, tensor_type::INT32});
    b.set_inputs({in});
    b.set_outputs({u0, u3, w});
    const auto r = run_both(b.finish(), {random_array(dtype::int8, {1, 4, 5, 6}, 3300)});
    require_equal(r);
}

TEST_CASE("movement: the shared split_concat model equals TFLite's own outputs") {
    const std::string stem = "coral-test-data__split_concat";
    const auto path = vnnx::test::shared_model(stem);
    if (!path) return;
    const auto model = vnnx::read_file(*path);
    const auto refdir = path->parent_path() / "ref" / stem;
    std::vector<ndarray> inputs;
    for (int i = 0; i < 3; ++i) inputs.push_back(vnnx::read_npy(refdir / ("input_" + std::to_string(i) + ".npy")));
    const auto r = run_both(model, inputs, stem + ".tflite");
    require_equal(r);  // simulator == reference interpreter
    REQUIRE(r.sim.size() == 5);
    for (std::size_t o = 0; o < r.sim.size(); ++o) {  // == the real TFLite interpreter
        INFO("output " << o);
        const auto want = vnnx::read_npy(refdir / ("output_" + std::to_string(o) + ".npy"));
        CHECK(r.sim[o].data == want.data);
    }
}
