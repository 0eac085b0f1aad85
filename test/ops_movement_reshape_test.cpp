// RESHAPE, SQUEEZE, EXPAND_DIMS (lowering.md §7.4.1) and CAST (§7.7.4): the SDK's mode
// classification by hand, the emitted fields, and the simulator bit-exact with ref::run.
#include "ops_movement_harness.hpp"

#include <vnnx/ops/reshape.hpp>

using namespace movement_test;
using vnnx::ops::movement::reshape_mode;

namespace {

std::vector<std::byte> reshape_model(builtin_operator code, tensor_type t, std::vector<std::int32_t> is,
                                     std::vector<std::int32_t> os) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", t, is, q8());
    const auto out = b.add_tensor("out", t, os, q8());
    if (code == builtin_operator::RESHAPE) {
        const auto shape = b.add_constant("shape", tensor_type::INT32, {static_cast<std::int32_t>(os.size())}, os);
        b.add_operator(code, {in, shape}, {out}, vnnx::tflite::reshape_options{os});
    } else if (code == builtin_operator::EXPAND_DIMS) {
        // The inserted axis: the first position where the shapes differ.
        std::int32_t axis = static_cast<std::int32_t>(is.size());
        for (std::size_t i = 0; i < is.size(); ++i)
            if (is[i] != os[i]) {
                axis = static_cast<std::int32_t>(i);
                break;
            }
        const auto ax = b.add_constant("axis", tensor_type::INT32, {1}, std::vector<std::int32_t>{axis});
        b.add_operator(code, {in, ax}, {out});
    } else {
        b.add_operator(code, {in}, {out});
    }
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

std::vector<std::int64_t> i64(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

struct reshape_case {
    std::vector<std::int32_t> is, os;
    std::int32_t mode, nop;
};

}  // namespace

TEST_CASE("movement: SDK reshape modes (lowering.md §7.4.1), derived by hand") {
    // Squeeze (input rank > 3): squeezed axis -4 → 4, -1 → 5, -2 → 6, -3 → 7.
    CHECK(reshape_mode({1, 4, 5, 6}, {4, 5, 6}) == 4);
    CHECK(reshape_mode({2, 4, 5, 1}, {2, 4, 5}) == 5);
    CHECK(reshape_mode({2, 4, 1, 6}, {2, 4, 6}) == 6);
    CHECK(reshape_mode({2, 1, 5, 6}, {2, 5, 6}) == 7);
    CHECK(reshape_mode({1, 2, 3, 4, 5}, {2, 3, 4, 5}) == -1);  // squeezed axis -5
    // Expand (input rank > 2): -1 with rank 3 → 8, -1 → 9, -2 → 10, -3 → 11, beyond → -1.
    CHECK(reshape_mode({4, 5, 6}, {4, 5, 6, 1}) == 8);
    CHECK(reshape_mode({2, 4, 5, 6}, {2, 4, 5, 6, 1}) == 9);
    CHECK(reshape_mode({4, 5, 6}, {4, 5, 1, 6}) == 10);
    CHECK(reshape_mode({4, 5, 6}, {4, 1, 5, 6}) == 11);
    CHECK(reshape_mode({4, 5, 6}, {1, 4, 5, 6}) == -1);
    // Join (input rank > 3): first i from the end with is[-i]·is[-i-1] = os[-i].
    CHECK(reshape_mode({2, 3, 4, 5}, {2, 3, 20}) == 13);
    CHECK(reshape_mode({2, 3, 4, 5}, {2, 12, 5}) == 14);
    CHECK(reshape_mode({2, 3, 4, 5}, {6, 4, 5}) == 15);
    // Separate: first i from the end with os[-i]·os[-i-1] = is[-i].
    CHECK(reshape_mode({1, 6, 64}, {1, 6, 8, 8}) == 17);  // head split of a transformer
    CHECK(reshape_mode({2, 12, 5}, {2, 3, 4, 5}) == 18);
    CHECK(reshape_mode({6, 4, 5}, {2, 3, 4, 5}) == 19);
    // Channels first to last, flatten and its inverse, then nothing.
    CHECK(reshape_mode({1, 2, 3, 4}, {1, 4, 2, 3}) == 2);
    CHECK(reshape_mode({1, 2, 3, 4}, {1, 24}) == 0);
    CHECK(reshape_mode({1, 24}, {1, 2, 3, 4}) == 0);
    CHECK(reshape_mode({1, 4, 5}, {4, 5}) == -1);
    CHECK(reshape_mode({2, 6}, {3, 4}) == -1);
    CHECK(reshape_mode({3, 4}, {3, 4}) == 0);
}

TEST_CASE("movement: RESHAPE layers carry mode and nop and simulate bit-exactly") {
    const std::vector<reshape_case> cases = {
        {{1, 4, 5, 6}, {4, 5, 6}, 4, 0},        // squeeze the batch: SDK nop needs no rank drop
        {{2, 4, 5, 1}, {2, 4, 5}, 5, 0},        // squeeze the channels
        {{2, 3, 4, 5}, {2, 3, 20}, 13, 0},      // join W·C
        {{1, 6, 64}, {1, 6, 8, 8}, 17, 0},      // separate the channels
        {{1, 3, 5, 7}, {1, 105}, 0, 0},         // flatten (rank drops: nop 0)
        {{1, 105}, {1, 3, 5, 7}, 0, 1},         // inverse flatten: SDK nop 1, data still moves
        {{4, 5, 6}, {4, 5, 6, 1}, 8, 1},        // expand at -1, rank 3
        {{1, 2, 3, 4}, {1, 4, 2, 3}, 2, 0},     // channels first to last
        {{1, 4, 5}, {4, 5}, -1, 0},             // mode -1 in the SDK: still compiled
        {{2, 6}, {3, 4}, -1, 0},
        {{3, 1, 7, 2, 5}, {7, 3, 10}, -1, 0},   // several axes at once, rank 5
        {{35}, {5, 7}, 17, 0},
    };
    std::uint64_t seed = 1;
    for (const auto& c : cases) {
        INFO(vnnx::ops::movement::shape_text(c.is) << " -> " << vnnx::ops::movement::shape_text(c.os));
        const auto model = reshape_model(builtin_operator::RESHAPE, tensor_type::INT8, c.is, c.os);
        const auto r = run_both(model, {random_array(dtype::int8, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        CHECK(e.view.node(0).type == 300);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 22);
        CHECK(layers[0].options.get<vnnx::format::layer_options::ReshapeOptions>().mode == c.mode);
        CHECK(layers[0].nop == c.nop);
        CHECK(layers[0].num_inputs == 1);
        CHECK(layers[0].num_outputs == 1);
    }
}

TEST_CASE("movement: RESHAPE of uint8 and int32 data") {
    {
        const auto model = reshape_model(builtin_operator::RESHAPE, tensor_type::UINT8, {2, 3, 4}, {4, 6});
        require_equal(run_both(model, {random_array(dtype::uint8, {2, 3, 4}, 7)}));
    }
    {
        const auto model = reshape_model(builtin_operator::RESHAPE, tensor_type::INT32, {1, 3, 3, 2}, {6, 3});
        require_equal(run_both(model, {random_array(dtype::int32, {1, 3, 3, 2}, 8)}));
    }
}

TEST_CASE("movement: SQUEEZE and EXPAND_DIMS become RESHAPE layers to the output shape") {
    struct c_t {
        builtin_operator code;
        std::vector<std::int32_t> is, os;
        std::int32_t mode;
    };
    const std::vector<c_t> cases = {
        {builtin_operator::SQUEEZE, {1, 1, 1, 10}, {1, 10}, 0},
        {builtin_operator::SQUEEZE, {2, 1, 5, 3}, {2, 5, 3}, 7},
        {builtin_operator::SQUEEZE, {1, 4, 5, 6}, {4, 5, 6}, 4},
        {builtin_operator::EXPAND_DIMS, {4, 5, 6}, {4, 1, 5, 6}, 11},
        {builtin_operator::EXPAND_DIMS, {3, 7}, {3, 1, 7}, 17},  // rank 2: read as a separate
        {builtin_operator::EXPAND_DIMS, {2, 4, 5, 3}, {2, 4, 5, 1, 3}, 10},
    };
    std::uint64_t seed = 20;
    for (const auto& c : cases) {
        INFO(vnnx::builtin_name(c.code) << " " << vnnx::ops::movement::shape_text(c.is));
        const auto model = reshape_model(c.code, tensor_type::INT8, c.is, c.os);
        const auto r = run_both(model, {random_array(dtype::int8, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 22);
        CHECK(layers[0].options.get<vnnx::format::layer_options::ReshapeOptions>().mode == c.mode);
    }
}

TEST_CASE("movement: CAST int8/uint8 to int32 and between 8-bit types") {
    struct c_t {
        tensor_type from, to;
        dtype din;
    };
    for (const auto& c : std::vector<c_t>{{tensor_type::INT8, tensor_type::INT32, dtype::int8},
                                          {tensor_type::UINT8, tensor_type::INT32, dtype::uint8},
                                          {tensor_type::INT8, tensor_type::UINT8, dtype::int8},
                                          {tensor_type::INT32, tensor_type::INT8, dtype::int32}}) {
        vnnx::tflite::builder b;
        const auto in = b.add_tensor("in", c.from, {1, 3, 5, 7}, q8());
        const auto out = b.add_tensor("out", c.to, {1, 3, 5, 7}, q8());
        b.add_operator(builtin_operator::CAST, {in}, {out}, vnnx::tflite::cast_options{c.from, c.to});
        b.set_inputs({in});
        b.set_outputs({out});
        const auto r = run_both(b.finish(), {random_array(c.din, {1, 3, 5, 7}, 31)});
        require_equal(r);
        emitted e(r.compiled);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 53);
        CHECK(layers[0].options.all_zero());
    }
}

TEST_CASE("movement: CAST to float is rejected with the rule") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4}, q8());
    const auto out = b.add_tensor("out", tensor_type::FLOAT32, {1, 4});
    b.add_operator(builtin_operator::CAST, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto model = b.finish();
    CHECK_THROWS_WITH(vnnx::compile(model, {}, "cast.tflite"),
                      Catch::Contains("cast.tflite") && Catch::Contains("CAST") && Catch::Contains("floating point"));
}
