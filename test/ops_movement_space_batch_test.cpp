// DILATE, SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND: builder-made single-op models over shapes,
// block shapes, paddings/crops and types; the simulator agrees bit for bit with the reference
// interpreter, the reference with hand-derived TFLite values, and the records carry the
// parameters (PadOptions dilations and fill, int32 arrays in the blob).
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_movement_harness.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/ops/registry.hpp"

using namespace movement_test;

namespace {

dtype dtype_of(tensor_type t) { return t == tensor_type::UINT8 ? dtype::uint8 : dtype::int8; }

std::vector<std::byte> space_batch(builtin_operator code, tensor_type t, std::vector<std::int32_t> in, std::vector<std::int32_t> out,
                                   std::vector<std::int32_t> block, std::vector<std::int32_t> pads,
                                   vnnx::tflite::quant qin = q8(), vnnx::tflite::quant qout = q8()) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", t, std::move(in), qin);
    const auto bs = b.add_constant<std::int32_t>("block", tensor_type::INT32, {static_cast<std::int32_t>(block.size())}, block);
    const auto p = b.add_constant<std::int32_t>("pads", tensor_type::INT32, {static_cast<std::int32_t>(block.size()), 2}, pads);
    const auto y = b.add_tensor("y", t, std::move(out), qout);
    if (code == builtin_operator::SPACE_TO_BATCH_ND) b.add_operator(code, {x, bs, p}, {y}, opt::space_to_batch_nd_options{});
    else b.add_operator(code, {x, bs, p}, {y}, opt::batch_to_space_nd_options{});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

std::vector<std::byte> dilate(tensor_type t, std::vector<std::int32_t> in, std::vector<std::int32_t> d, std::int8_t value,
                              vnnx::tflite::quant q = q8()) {
    vnnx::tflite::builder b;
    std::vector<std::int32_t> out = in;
    for (std::size_t a = 0; a < in.size(); ++a) out[a] = (in[a] - 1) * d[a] + 1;
    const auto x = b.add_tensor("x", t, std::move(in), q);
    const auto dc = b.add_constant<std::int32_t>("dilations", tensor_type::INT32, {static_cast<std::int32_t>(d.size())}, d);
    const auto v = t == tensor_type::UINT8
                       ? b.add_constant<std::uint8_t>("value", t, {}, std::vector<std::uint8_t>{static_cast<std::uint8_t>(value)}, q)
                       : b.add_constant<std::int8_t>("value", t, {}, std::vector<std::int8_t>{value}, q);
    const auto y = b.add_tensor("y", t, std::move(out), q);
    b.add_operator(builtin_operator::DILATE, {x, dc, v}, {y});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

}  // namespace

TEST_CASE("space/batch: simulator equals the reference over shapes, blocks, paddings and types") {
    using B = builtin_operator;
    struct variant {
        B code;
        tensor_type type;
        std::vector<std::int32_t> in, out, block, pads;
    };
    const std::vector<variant> variants{
        {B::SPACE_TO_BATCH_ND, tensor_type::INT8, {1, 4, 6, 3}, {4, 2, 3, 3}, {2, 2}, {0, 0, 0, 0}},
        {B::SPACE_TO_BATCH_ND, tensor_type::INT8, {1, 5, 7, 5}, {4, 3, 4, 5}, {2, 2}, {1, 0, 0, 1}},
        {B::SPACE_TO_BATCH_ND, tensor_type::UINT8, {2, 3, 4, 1}, {12, 2, 2, 1}, {2, 3}, {0, 1, 1, 1}},
        {B::SPACE_TO_BATCH_ND, tensor_type::INT8, {1, 6, 6, 7}, {9, 4, 2, 7}, {3, 3}, {3, 3, 0, 0}},
        {B::BATCH_TO_SPACE_ND, tensor_type::INT8, {4, 2, 3, 3}, {1, 4, 6, 3}, {2, 2}, {0, 0, 0, 0}},
        {B::BATCH_TO_SPACE_ND, tensor_type::INT8, {4, 3, 4, 5}, {1, 5, 7, 5}, {2, 2}, {1, 0, 0, 1}},
        {B::BATCH_TO_SPACE_ND, tensor_type::UINT8, {12, 2, 2, 1}, {2, 3, 4, 1}, {2, 3}, {0, 1, 1, 1}},
        {B::BATCH_TO_SPACE_ND, tensor_type::INT8, {6, 3, 5, 2}, {3, 3, 10, 2}, {1, 2}, {0, 0, 0, 0}},
    };
    std::uint64_t seed = 60;
    for (const auto& v : variants) {
        INFO(vnnx::builtin_name(v.code) << " in " << v.in[0] << "x" << v.in[1] << "x" << v.in[2] << "x" << v.in[3]);
        const auto model = space_batch(v.code, v.type, v.in, v.out, v.block, v.pads);
        const auto x = random_array(dtype_of(v.type), {v.in.begin(), v.in.end()}, ++seed);
        const auto r = run_both(model, {x});
        require_equal(r);
        const emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == static_cast<std::int32_t>(v.code));
    }
}

TEST_CASE("space/batch: the reference follows TFLite's element order and pads with the output zero point") {
    using B = builtin_operator;
    // SPACE_TO_BATCH_ND block [2, 2] on a 2x2 image [[1, 2], [3, 4]]: batch b holds pixel (b / 2, b % 2).
    auto model = space_batch(B::SPACE_TO_BATCH_ND, tensor_type::INT8, {1, 2, 2, 1}, {4, 1, 1, 1}, {2, 2}, {0, 0, 0, 0});
    ndarray x(dtype::int8, {1, 2, 2, 1});
    for (std::size_t i = 0; i < 4; ++i) x.set<std::int64_t>(i, static_cast<std::int64_t>(i) + 1);
    auto r = run_both(model, {x});
    require_equal(r);
    for (std::size_t i = 0; i < 4; ++i) CHECK(r.ref[0].get<std::int64_t>(i) == static_cast<std::int64_t>(i) + 1);
    // Block [1, 2] with one column of padding on the left (zero point 3): image [5, 6, 7] becomes
    // batches [3, 6] (even columns of [3, 5, 6, 7]) and [5, 7] (odd columns).
    model = space_batch(B::SPACE_TO_BATCH_ND, tensor_type::INT8, {1, 1, 3, 1}, {2, 1, 2, 1}, {1, 2}, {0, 0, 1, 0});
    ndarray row(dtype::int8, {1, 1, 3, 1});
    for (std::size_t i = 0; i < 3; ++i) row.set<std::int64_t>(i, static_cast<std::int64_t>(i) + 5);
    r = run_both(model, {row});
    require_equal(r);
    const std::vector<std::int64_t> want{3, 6, 5, 7};
    for (std::size_t i = 0; i < 4; ++i) CHECK(r.ref[0].get<std::int64_t>(i) == want[i]);
    // BATCH_TO_SPACE_ND undoes it, crops included.
    model = space_batch(B::BATCH_TO_SPACE_ND, tensor_type::INT8, {2, 1, 2, 1}, {1, 1, 3, 1}, {1, 2}, {0, 0, 1, 0});
    ndarray back(dtype::int8, {2, 1, 2, 1});
    for (std::size_t i = 0; i < 4; ++i) back.set<std::int64_t>(i, want[i]);
    r = run_both(model, {back});
    require_equal(r);
    for (std::size_t i = 0; i < 3; ++i) CHECK(r.ref[0].get<std::int64_t>(i) == static_cast<std::int64_t>(i) + 5);
}

TEST_CASE("dilate: simulator equals the reference, the fill is the padding_value input") {
    struct variant {
        tensor_type type;
        std::vector<std::int32_t> in, d;
        std::int8_t value;
    };
    const std::vector<variant> variants{
        {tensor_type::INT8, {1, 3, 4, 5}, {1, 2, 2, 1}, -7},
        {tensor_type::INT8, {1, 5, 2, 3}, {1, 3, 1, 1}, 0},
        {tensor_type::UINT8, {1, 2, 3, 7}, {1, 1, 4, 1}, 9},
        {tensor_type::INT8, {2, 3, 3, 1}, {1, 2, 3, 1}, 100},
        {tensor_type::INT8, {4, 3, 2}, {2, 2, 1}, -128},
    };
    std::uint64_t seed = 80;
    for (const auto& v : variants) {
        INFO("dilations " << v.d[v.d.size() - 3] << "x" << v.d[v.d.size() - 2] << " rank " << v.in.size());
        const auto model = dilate(v.type, v.in, v.d, v.value);
        const auto x = random_array(dtype_of(v.type), {v.in.begin(), v.in.end()}, ++seed);
        const auto r = run_both(model, {x});
        require_equal(r);
        const emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 203);
        const auto po = layers[0].options.get<vnnx::format::layer_options::PadOptions>();
        CHECK(po.transpose_dilate_h == v.d[v.d.size() - 3]);
        CHECK(po.transpose_dilate_w == v.d[v.d.size() - 2]);
        CHECK(po.value == (v.type == tensor_type::UINT8 ? static_cast<std::uint8_t>(v.value) : v.value));
    }
    // By hand: [1, 2] dilated by 3 along W with fill -1 is [1, -1, -1, 2].
    const auto model = dilate(tensor_type::INT8, {1, 1, 2, 1}, {1, 1, 3, 1}, -1);
    ndarray x(dtype::int8, {1, 1, 2, 1});
    x.set<std::int64_t>(0, 1);
    x.set<std::int64_t>(1, 2);
    const auto r = run_both(model, {x});
    require_equal(r);
    const std::vector<std::int64_t> want{1, -1, -1, 2};
    for (std::size_t i = 0; i < 4; ++i) CHECK(r.ref[0].get<std::int64_t>(i) == want[i]);
}

TEST_CASE("space/batch and dilate: the checks name the rule broken") {
    using B = builtin_operator;
    auto problems = [](const std::vector<std::byte>& bytes) {
        const auto m = vnnx::tflite::model_view::parse(bytes, "sb.tflite");
        return vnnx::compiler::find_problems(m);
    };
    auto p = problems(space_batch(B::SPACE_TO_BATCH_ND, tensor_type::INT8, {1, 5, 4, 2}, {4, 3, 2, 2}, {2, 2}, {0, 0, 0, 0}));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("multiples of the block shape"));
    p = problems(space_batch(B::BATCH_TO_SPACE_ND, tensor_type::INT8, {3, 2, 2, 2}, {1, 4, 4, 2}, {2, 2}, {0, 0, 0, 0}));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("not a multiple of bh * bw"));
    p = problems(space_batch(B::BATCH_TO_SPACE_ND, tensor_type::INT8, {4, 2, 2, 2}, {1, 4, 4, 2}, {2, 2}, {0, 0, 0, 0}, q8(0.05f, 3), q8(0.05f, 4)));
    REQUIRE(p.size() == 1);
    CHECK(p[0].reason == "input and output must share the quantization");
    p = problems(dilate(tensor_type::INT8, {1, 2, 2, 3}, {1, 2, 2, 2}, 0));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("dilation of axis 3 must be 1"));
    p = problems(dilate(tensor_type::INT8, {1, 300, 2, 1}, {1, 65535, 1, 1}, 0));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("more than 16777216 rows or columns"));
    CHECK(vnnx::ops::entry_for(B::SPACE_TO_BATCH_ND).layer_type == 38);
    CHECK(vnnx::ops::entry_for(B::BATCH_TO_SPACE_ND).layer_type == 37);
    CHECK(vnnx::ops::entry_for(B::DILATE).layer_type == 203);
}
