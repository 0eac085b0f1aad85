// PAD, PADV2 (lowering.md §7.5) and GATHER (§7.7.3): PadOptions / pads and GatherOptions by
// hand, and the simulator bit-exact with ref::run.
#include "ops_movement_harness.hpp"

#include <vnnx/ops/pad.hpp>
#include <vnnx/ops/slice.hpp>

using namespace movement_test;
namespace lo = vnnx::format::layer_options;

namespace {

std::vector<std::int64_t> i64(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

struct pad_case {
    builtin_operator code;
    tensor_type type;
    std::vector<std::int32_t> is;
    std::vector<std::int32_t> pads;  // TFLite [rank, 2]
    std::int32_t value;              // PADV2 constant
    std::array<std::int32_t, 6> g_pads;
    std::int32_t g_value;
    bool int64_pads = false;
};

std::vector<std::byte> pad_model(const pad_case& c) {
    vnnx::tflite::builder b;
    const auto q = q8(0.1f, c.type == tensor_type::UINT8 ? 128 : -5);
    const auto in = b.add_tensor("in", c.type, c.is, q);
    const auto r = static_cast<std::int32_t>(c.is.size());
    std::int32_t p;
    if (c.int64_pads) {
        std::vector<std::int64_t> v(c.pads.begin(), c.pads.end());
        p = b.add_constant("pads", tensor_type::INT64, {r, 2}, v);
    } else {
        p = b.add_constant("pads", tensor_type::INT32, {r, 2}, c.pads);
    }
    auto os = c.is;
    for (std::size_t a = 0; a < os.size(); ++a) os[a] += c.pads[2 * a] + c.pads[2 * a + 1];
    const auto out = b.add_tensor("out", c.type, os, q);
    if (c.code == builtin_operator::PADV2) {
        std::vector<std::uint8_t> v{static_cast<std::uint8_t>(c.value)};
        const auto cv = b.add_constant("value", c.type, {}, v, q);
        b.add_operator(c.code, {in, p, cv}, {out});
    } else {
        b.add_operator(c.code, {in, p}, {out});
    }
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("movement: PAD and PADV2 layers, ranks 1-5") {
    const std::vector<pad_case> cases = {
        {builtin_operator::PAD, tensor_type::INT8, {1, 4, 5, 3}, {0, 0, 1, 2, 0, 3, 1, 1}, 0, {1, 1, 0, 1, 2, 3}, -5},
        {builtin_operator::PADV2, tensor_type::UINT8, {1, 3, 3, 2}, {0, 0, 2, 0, 1, 1, 0, 0}, 200, {0, 2, 1, 0, 0, 1}, 200},
        {builtin_operator::PADV2, tensor_type::INT8, {1, 5, 7, 3}, {0, 0, 1, 1, 1, 1, 0, 0}, -128, {0, 1, 1, 0, 1, 1}, -128},
        {builtin_operator::PAD, tensor_type::INT8, {5, 6}, {1, 0, 2, 3}, 0, {0, 1, 2, 0, 0, 3}, -5},
        {builtin_operator::PAD, tensor_type::UINT8, {4, 5, 2}, {1, 1, 0, 2, 3, 0}, 0, {3, 1, 0, 0, 1, 2}, 128},
        {builtin_operator::PAD, tensor_type::INT8, {7}, {2, 3}, 0, {0, 0, 2, 0, 0, 3}, -5},
        {builtin_operator::PAD, tensor_type::INT8, {1, 2, 3, 4, 5}, {0, 0, 0, 0, 1, 0, 0, 2, 2, 1}, 0, {2, 1, 0, 1, 0, 2}, -5, true},
    };
    std::uint64_t seed = 2000;
    for (const auto& c : cases) {
        INFO(vnnx::builtin_name(c.code) << " " << vnnx::ops::movement::shape_text(c.is));
        const auto d = c.type == tensor_type::UINT8 ? dtype::uint8 : dtype::int8;
        const auto r = run_both(pad_model(c), {random_array(d, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 34);
        CHECK(layers[0].pads == c.g_pads);
        const auto po = layers[0].options.get<lo::PadOptions>();
        CHECK(po.value == c.g_value);
        CHECK(po.transpose_dilate_w == 1);
        CHECK(po.transpose_dilate_h == 1);
    }
}

TEST_CASE("movement: PAD of a batch axis is rejected with the rule") {
    pad_case c{builtin_operator::PAD, tensor_type::INT8, {1, 2, 2, 3}, {1, 0, 0, 0, 0, 0, 0, 0}, 0, {}, 0};
    const auto m = pad_model(c);
    CHECK_THROWS_WITH(vnnx::compile(m, {}, "pad.tflite"),
                      Catch::Contains("pad.tflite") && Catch::Contains("PAD") && Catch::Contains("leading axis 0"));
}

namespace {

std::vector<std::byte> gather_model(tensor_type t, std::vector<std::int32_t> is, std::vector<std::int32_t> idx_shape,
                                    const std::vector<std::int32_t>& idx, std::int32_t axis, bool indices_first = false) {
    vnnx::tflite::builder b;
    std::int32_t ix = -1;
    if (indices_first) ix = b.add_constant("indices", tensor_type::INT32, idx_shape, idx);
    const auto in = b.add_tensor("params", t, is, q8());
    if (!indices_first) ix = b.add_constant("indices", tensor_type::INT32, idx_shape, idx);
    const auto r = static_cast<std::int32_t>(is.size());
    const auto a = static_cast<std::size_t>(axis < 0 ? axis + r : axis);
    std::vector<std::int32_t> os(is.begin(), is.begin() + static_cast<std::ptrdiff_t>(a));
    os.insert(os.end(), idx_shape.begin(), idx_shape.end());
    os.insert(os.end(), is.begin() + static_cast<std::ptrdiff_t>(a) + 1, is.end());
    const auto out = b.add_tensor("out", t, os, q8());
    b.add_operator(builtin_operator::GATHER, {in, ix}, {out}, vnnx::tflite::gather_options{axis, 0});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("movement: GATHER with constant indices") {
    struct c_t {
        tensor_type t;
        dtype d;
        std::vector<std::int32_t> is, idx_shape, idx;
        std::int32_t axis;
        std::int32_t g_axis, g_axis_size, g_outer, g_inner;
        bool indices_first = false;
    };
    const std::vector<c_t> cases = {
        {tensor_type::INT8, dtype::int8, {1, 5, 6, 4}, {3}, {3, 0, 2}, 3, 1, 4, 1, 30},
        {tensor_type::INT8, dtype::int8, {1, 5, 6, 4}, {5}, {4, 4, 0, 1, 2}, 1, 2, 5, 4, 6, true},
        {tensor_type::UINT8, dtype::uint8, {7, 3}, {2}, {6, 1}, 0, 0, 7, 1, 3},
        {tensor_type::INT32, dtype::int32, {10, 4}, {3}, {0, 3, 3}, -1, 1, 4, 10, 1},
        {tensor_type::INT8, dtype::int8, {1, 5, 6, 4}, {}, {2}, 3, 1, 4, 1, 30},      // scalar index: rank drops
        {tensor_type::INT8, dtype::int8, {6, 4}, {2, 2}, {5, 0, 1, 5}, 0, 0, 6, 1, 4},  // 2-D indices: rank grows
        {tensor_type::INT8, dtype::int8, {2, 5, 3}, {4}, {2, 2, 1, 0}, 1, 2, 5, 6, 1},  // rank 3, W
    };
    std::uint64_t seed = 2100;
    for (const auto& c : cases) {
        INFO("GATHER " << vnnx::ops::movement::shape_text(c.is) << " axis " << c.axis);
        const auto r = run_both(gather_model(c.t, c.is, c.idx_shape, c.idx, c.axis, c.indices_first),
                                {random_array(c.d, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 36);
        const auto go = layers[0].options.get<lo::GatherOptions>();
        CHECK(go.axis == c.g_axis);
        CHECK(go.axis_size == c.g_axis_size);
        CHECK(go.outer_size == c.g_outer);
        CHECK(go.inner_size == c.g_inner);
        CHECK(go.coord_size == static_cast<std::int32_t>(c.idx.size()));
        CHECK(go.batch_dims == 0);
        CHECK(go.batch_size == 1);
        CHECK(go.swap_input_order == 0);
        CHECK(e.view.int32s(go.coord_data.value, c.idx.size(), "coords") == c.idx);
    }
}

TEST_CASE("movement: GATHER with an index out of range is rejected with the rule") {
    const auto m = gather_model(tensor_type::INT8, {1, 2, 2, 4}, {2}, {1, 4}, 3);
    CHECK_THROWS_WITH(vnnx::compile(m, {}, "gather.tflite"),
                      Catch::Contains("gather.tflite") && Catch::Contains("GATHER") && Catch::Contains("index 1 (4)"));
}
