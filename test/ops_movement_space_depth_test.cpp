// DEPTH_TO_SPACE and SPACE_TO_DEPTH: builder-made single-op models in several shapes, block
// sizes and types; the simulator agrees bit for bit with the reference interpreter, the reference
// with hand-derived TFLite values, and the block size travels in the tensor records.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_movement_harness.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/ops/registry.hpp"

using namespace movement_test;

namespace {

std::vector<std::byte> one_op(builtin_operator code, tensor_type t, std::vector<std::int32_t> in, std::vector<std::int32_t> out,
                              std::int32_t bs, vnnx::tflite::quant qin = q8(), vnnx::tflite::quant qout = q8()) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", t, std::move(in), qin);
    const auto y = b.add_tensor("y", t, std::move(out), qout);
    if (code == builtin_operator::DEPTH_TO_SPACE) b.add_operator(code, {x}, {y}, opt::depth_to_space_options{bs});
    else b.add_operator(code, {x}, {y}, opt::space_to_depth_options{bs});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

dtype dtype_of(tensor_type t) { return t == tensor_type::UINT8 ? dtype::uint8 : dtype::int8; }

}  // namespace

TEST_CASE("depth/space: simulator equals the reference over shapes, block sizes and types") {
    struct variant {
        builtin_operator code;
        tensor_type type;
        std::vector<std::int32_t> in, out;
        std::int32_t bs;
    };
    const std::vector<variant> variants{
        {builtin_operator::DEPTH_TO_SPACE, tensor_type::INT8, {1, 3, 5, 8}, {1, 6, 10, 2}, 2},
        {builtin_operator::DEPTH_TO_SPACE, tensor_type::UINT8, {1, 2, 2, 18}, {1, 6, 6, 2}, 3},
        {builtin_operator::DEPTH_TO_SPACE, tensor_type::INT8, {1, 4, 3, 4}, {1, 8, 6, 1}, 2},
        {builtin_operator::DEPTH_TO_SPACE, tensor_type::INT8, {1, 2, 3, 5}, {1, 2, 3, 5}, 1},
        {builtin_operator::SPACE_TO_DEPTH, tensor_type::INT8, {1, 4, 6, 3}, {1, 2, 3, 12}, 2},
        {builtin_operator::SPACE_TO_DEPTH, tensor_type::UINT8, {1, 8, 4, 5}, {1, 2, 1, 80}, 4},
        {builtin_operator::SPACE_TO_DEPTH, tensor_type::INT8, {1, 6, 9, 7}, {1, 2, 3, 63}, 3},
    };
    std::uint64_t seed = 40;
    for (const auto& v : variants) {
        INFO(vnnx::builtin_name(v.code) << " bs " << v.bs << " in " << v.in[1] << "x" << v.in[2] << "x" << v.in[3]);
        const auto model = one_op(v.code, v.type, v.in, v.out, v.bs);
        const auto x = random_array(dtype_of(v.type), {v.in.begin(), v.in.end()}, ++seed);
        const auto r = run_both(model, {x});
        require_equal(r);
        // One IDENTITY node whose one layer is the operator itself; nothing in the record but the tensors.
        const emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == static_cast<std::int32_t>(v.code));
    }
}

TEST_CASE("depth/space: the reference follows TFLite's element order") {
    // DEPTH_TO_SPACE bs 2 on one pixel of 8 channels: channel (i*2 + j)*2 + c goes to (i, j, c).
    const auto model = one_op(builtin_operator::DEPTH_TO_SPACE, tensor_type::INT8, {1, 1, 1, 8}, {1, 2, 2, 2}, 2);
    ndarray x(dtype::int8, {1, 1, 1, 8});
    for (std::size_t i = 0; i < 8; ++i) x.set<std::int64_t>(i, static_cast<std::int64_t>(i) * 10);
    const auto r = run_both(model, {x});
    require_equal(r);
    const std::vector<std::int64_t> want{0, 10, 20, 30, 40, 50, 60, 70};  // [h][w][c] = i, j, c in order
    for (std::size_t i = 0; i < 8; ++i) CHECK(r.ref[0].get<std::int64_t>(i) == want[i]);
    // SPACE_TO_DEPTH bs 2 on a 2x2 single-channel image: out channel i*2 + j = pixel (i, j).
    const auto back = one_op(builtin_operator::SPACE_TO_DEPTH, tensor_type::INT8, {1, 2, 4, 1}, {1, 1, 2, 4}, 2);
    ndarray img(dtype::int8, {1, 2, 4, 1});
    for (std::size_t i = 0; i < 8; ++i) img.set<std::int64_t>(i, static_cast<std::int64_t>(i));  // row-major 2x4
    const auto s = run_both(back, {img});
    require_equal(s);
    const std::vector<std::int64_t> want2{0, 1, 4, 5, 2, 3, 6, 7};
    for (std::size_t i = 0; i < 8; ++i) CHECK(s.ref[0].get<std::int64_t>(i) == want2[i]);
}

TEST_CASE("depth/space: the checks name the rule broken") {
    auto problems = [](const std::vector<std::byte>& bytes) {
        const auto m = vnnx::tflite::model_view::parse(bytes, "sd.tflite");
        return vnnx::compiler::find_problems(m);
    };
    auto p = problems(one_op(builtin_operator::DEPTH_TO_SPACE, tensor_type::INT8, {1, 2, 2, 6}, {1, 4, 4, 1}, 2));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("multiple of block_size^2"));
    p = problems(one_op(builtin_operator::SPACE_TO_DEPTH, tensor_type::INT8, {1, 4, 4, 2}, {1, 2, 2, 8}, 2, q8(0.05f, 3), q8(0.1f, 3)));
    REQUIRE(p.size() == 1);
    CHECK(p[0].reason == "input and output must share the quantization");
    p = problems(one_op(builtin_operator::SPACE_TO_DEPTH, tensor_type::INT8, {1, 4, 4, 2}, {1, 4, 1, 8}, 2));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("should be [1,2,2,8]"));
    const auto& e = vnnx::ops::entry_for(builtin_operator::DEPTH_TO_SPACE);
    CHECK(e.supported);
    CHECK(e.layer_type == 5);
    CHECK(vnnx::ops::entry_for(builtin_operator::SPACE_TO_DEPTH).layer_type == 26);
}
