// MAX_POOL_2D / AVERAGE_POOL_2D (lowering.md §7.5): layer fields by hand, simulator bit-exact
// with ref::run for kernel/stride/padding/type/activation variants.
#include "ops_pool_harness.hpp"

#include <vnnx/ops/pool.hpp>

using namespace pool_test;
using vnnx::tflite::activation_function;
using vnnx::tflite::padding_mode;

namespace {

struct pool_case {
    builtin_operator code;
    tensor_type type;
    std::int32_t h, w, c, kh, kw, sh, sw;
    padding_mode pad;
    activation_function act = activation_function::NONE;
};

std::int32_t out_dim(std::int32_t in, std::int32_t k, std::int32_t s, padding_mode p) {
    return p == padding_mode::SAME ? (in + s - 1) / s : (in - k) / s + 1;
}

std::vector<std::byte> pool_model(const pool_case& k, std::int32_t oh, std::int32_t ow) {
    vnnx::tflite::builder b;
    const auto q = k.type == tensor_type::UINT8 ? q8(0.1f, 128) : q8(0.1f, -3);
    const auto in = b.add_tensor("in", k.type, {1, k.h, k.w, k.c}, q);
    const auto out = b.add_tensor("out", k.type, {1, oh, ow, k.c}, q);
    b.add_operator(k.code, {in}, {out}, vnnx::tflite::pool2d_options{k.pad, k.sw, k.sh, k.kw, k.kh, k.act});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("pool: simulator equals ref::run for max and average pools") {
    using B = builtin_operator;
    using T = tensor_type;
    const std::vector<pool_case> cases = {
        {B::MAX_POOL_2D, T::INT8, 8, 8, 5, 2, 2, 2, 2, padding_mode::VALID},
        {B::MAX_POOL_2D, T::INT8, 7, 9, 3, 3, 3, 2, 2, padding_mode::VALID},
        {B::MAX_POOL_2D, T::INT8, 7, 9, 3, 3, 3, 2, 2, padding_mode::SAME},  // explicit PADV2(-128)
        {B::MAX_POOL_2D, T::UINT8, 6, 5, 4, 3, 2, 1, 2, padding_mode::SAME},
        {B::MAX_POOL_2D, T::INT8, 5, 5, 2, 5, 5, 1, 1, padding_mode::SAME, activation_function::RELU},
        {B::AVERAGE_POOL_2D, T::INT8, 8, 8, 5, 2, 2, 2, 2, padding_mode::VALID},
        {B::AVERAGE_POOL_2D, T::INT8, 7, 9, 3, 3, 3, 2, 1, padding_mode::VALID},
        {B::AVERAGE_POOL_2D, T::INT8, 7, 9, 3, 3, 3, 2, 2, padding_mode::SAME},  // counts in-bounds taps
        {B::AVERAGE_POOL_2D, T::UINT8, 6, 5, 4, 3, 2, 1, 2, padding_mode::SAME},
        {B::AVERAGE_POOL_2D, T::INT8, 5, 6, 3, 2, 3, 1, 1, padding_mode::VALID, activation_function::RELU6},
        {B::AVERAGE_POOL_2D, T::INT8, 4, 4, 6, 4, 4, 1, 1, padding_mode::VALID},  // global → MEAN node
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        INFO("case " << i);
        const auto oh = out_dim(k.h, k.kh, k.sh, k.pad), ow = out_dim(k.w, k.kw, k.sw, k.pad);
        const auto model = pool_model(k, oh, ow);
        const auto r = run_both(model, {random_array(dtype_of(k.type), {1, k.h, k.w, k.c}, 100 + i)});
        if (i + 1 == cases.size()) {
            // POOL_AS_MEAN: MEAN's multiplier 1/n versus the pool's exact division: 1 LSB at ties.
            const auto d = compare(r);
            CHECK(d.max_abs <= 1);
        } else {
            require_equal(r);
        }
    }
}

TEST_CASE("pool: layer fields (kernel, strides, pads, bounds)") {
    using B = builtin_operator;
    SECTION("SAME average pool keeps TFLite's pads and honours RELU6") {
        const pool_case k{B::AVERAGE_POOL_2D, tensor_type::INT8, 7, 9, 3, 3, 4, 2, 2, padding_mode::SAME,
                          activation_function::RELU6};
        const auto model = pool_model(k, 4, 5);
        const emitted e(vnnx::compile(model, {}, "pool.tflite"));
        REQUIRE(e.view.num_nodes() == 1);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        const auto& l = layers[0];
        CHECK(l.type == 1);
        CHECK(l.kernel_shape == std::array<std::int32_t, 2>{3, 4});
        CHECK(l.strides == std::array<std::int32_t, 2>{2, 2});
        // H: total = (4−1)·2 + 3 − 7 = 2 → 1/1; W: total = (5−1)·2 + 4 − 9 = 3 → 1/2.
        CHECK(l.pads == std::array<std::int32_t, 6>{0, 1, 1, 0, 1, 2});
        // RELU6 with S = 0.1, z = −3: [max(−128, −3), min(127, −3 + 60)].
        CHECK(l.activation_min == -3);
        CHECK(l.activation_max == 57);
        CHECK(l.input_offset == -1);  // a pooling layer never subtracts it: the SDK's -1
        CHECK(l.output_offset == -3);
    }
    SECTION("SAME max pool becomes PAD(−128) + VALID pool") {
        const pool_case k{B::MAX_POOL_2D, tensor_type::INT8, 7, 9, 3, 3, 3, 2, 2, padding_mode::SAME};
        const emitted e(vnnx::compile(pool_model(k, 4, 5), {}, "pool.tflite"));
        std::vector<std::int32_t> types;
        for (std::size_t n = 0; n < e.view.num_nodes(); ++n)
            for (const auto& l : e.view.node_layers(n)) types.push_back(l.type);
        REQUIRE(types.size() == 2);
        CHECK(types[0] == 34);
        CHECK(types[1] == 17);
        const auto& l = e.view.node_layers(e.view.num_nodes() - 1).back();
        CHECK(l.pads == std::array<std::int32_t, 6>{0, 0, 0, 0, 0, 0});
        CHECK(l.activation_min == -128);
        CHECK(l.activation_max == 127);
    }
}

TEST_CASE("pool: differing input and output quantization is rejected with the rule") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 4, 2}, q8(0.1f, 0));
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 2, 2, 2}, q8(0.2f, 0));
    b.add_operator(builtin_operator::MAX_POOL_2D, {in}, {out},
                   vnnx::tflite::pool2d_options{padding_mode::VALID, 2, 2, 2, 2, activation_function::NONE});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto model = b.finish();
    CHECK_THROWS_WITH(vnnx::compile(model, {}, "pool.tflite"),
                      Catch::Contains("MAX_POOL_2D") && Catch::Contains("quantization must be equal"));
}
