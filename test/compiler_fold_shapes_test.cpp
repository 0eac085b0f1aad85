// FOLD_SHAPES: RESHAPE targets computed at run time from SHAPE of an activation (the Keras
// export pattern SHAPE → STRIDED_SLICE → PACK → RESHAPE, and GATHER / MUL / FLOOR_DIV /
// CONCATENATION on the int32 shape) become constants; the models compile and the simulator
// agrees bit for bit with the reference interpreter, which evaluates the shape arithmetic itself.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_movement_harness.hpp"
#include "vnnx/compiler/verify.hpp"

using namespace movement_test;
using vnnx::tflite::activation_function;

namespace {

using B = builtin_operator;

/// x [1,4,6,8] int8 → RESHAPE(x, PACK(STRIDED_SLICE(SHAPE(x))[0], -1, last)) with `last` taken
/// from the shape by a negative index (begin -1, end_mask).
std::vector<std::byte> keras_model() {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 6, 8}, q8());
    const auto shape = b.add_tensor("shape", tensor_type::INT32, {4});
    b.add_operator(B::SHAPE, {x}, {shape}, opt::shape_options{tensor_type::INT32});
    const auto b0 = b.add_constant("b0", tensor_type::INT32, {1}, std::vector<std::int32_t>{0});
    const auto e1 = b.add_constant("e1", tensor_type::INT32, {1}, std::vector<std::int32_t>{1});
    const auto s1 = b.add_constant("s1", tensor_type::INT32, {1}, std::vector<std::int32_t>{1});
    const auto batch = b.add_tensor("batch", tensor_type::INT32, {});
    b.add_operator(B::STRIDED_SLICE, {shape, b0, e1, s1}, {batch}, opt::strided_slice_options{0, 0, 0, 0, 1, false});
    const auto bl = b.add_constant("bl", tensor_type::INT32, {1}, std::vector<std::int32_t>{-1});
    const auto el = b.add_constant("el", tensor_type::INT32, {1}, std::vector<std::int32_t>{0});
    const auto last = b.add_tensor("last", tensor_type::INT32, {1});
    b.add_operator(B::STRIDED_SLICE, {shape, bl, el, s1}, {last}, opt::strided_slice_options{0, 1, 0, 0, 0, false});
    const auto last_s = b.add_tensor("last_s", tensor_type::INT32, {});
    b.add_operator(B::RESHAPE, {last, b.add_constant("scalar", tensor_type::INT32, {0}, std::vector<std::int32_t>{})}, {last_s},
                   opt::reshape_options{{}});
    const auto minus1 = b.add_constant("minus1", tensor_type::INT32, {}, std::vector<std::int32_t>{-1});
    const auto target = b.add_tensor("target", tensor_type::INT32, {3});
    b.add_operator(B::PACK, {batch, minus1, last_s}, {target}, opt::pack_options{3, 0});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 24, 8}, q8());
    b.add_operator(B::RESHAPE, {x, target}, {y}, opt::reshape_options{{}});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

/// x [1,4,6,8] → RESHAPE(x, CONCAT([1], H*W*2, C floordiv 2)) with H, W, C gathered from SHAPE(x).
std::vector<std::byte> gather_model() {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 6, 8}, q8(0.1f, -7));
    const auto shape = b.add_tensor("shape", tensor_type::INT32, {4});
    b.add_operator(B::SHAPE, {x}, {shape}, opt::shape_options{tensor_type::INT32});
    auto gather = [&](const char* name, std::vector<std::int32_t> idx) {
        const auto i = b.add_constant(std::string(name) + "_i", tensor_type::INT32, {static_cast<std::int32_t>(idx.size())}, idx);
        const auto t = b.add_tensor(name, tensor_type::INT32, {static_cast<std::int32_t>(idx.size())});
        b.add_operator(B::GATHER, {shape, i}, {t}, opt::gather_options{0, 0});
        return t;
    };
    const auto hw = gather("hw", {1, 2});  // [4, 6]
    const auto h = gather("h", {1});
    const auto w = gather("w", {2});
    const auto c = gather("c", {3});
    const auto hxw = b.add_tensor("hxw", tensor_type::INT32, {1});
    b.add_operator(B::MUL, {h, w}, {hxw}, opt::mul_options{activation_function::NONE});
    const auto two = b.add_constant("two", tensor_type::INT32, {}, std::vector<std::int32_t>{2});
    const auto rows = b.add_tensor("rows", tensor_type::INT32, {1});
    b.add_operator(B::MUL, {hxw, two}, {rows}, opt::mul_options{activation_function::NONE});
    const auto half = b.add_tensor("half", tensor_type::INT32, {1});
    b.add_operator(B::FLOOR_DIV, {c, two}, {half});
    const auto one = b.add_constant("one", tensor_type::INT32, {1}, std::vector<std::int32_t>{1});
    const auto target = b.add_tensor("target", tensor_type::INT32, {3});
    b.add_operator(B::CONCATENATION, {one, rows, half}, {target}, opt::concatenation_options{0, activation_function::NONE});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 48, 4}, q8(0.1f, -7));
    b.add_operator(B::RESHAPE, {x, target}, {y}, opt::reshape_options{{}});
    // hw is read by nothing that reaches an output; it folds all the same.
    (void)hw;
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

std::vector<std::int32_t> reshape_target(const vnnx::compiler::graph& g) {
    for (const auto& o : g.ops)
        if (o.code == B::RESHAPE && g.t(o.inputs[0]).type == tensor_type::INT8) return g.t(o.inputs[1]).values<std::int32_t>();
    return {};
}

}  // namespace

TEST_CASE("fold shapes: SHAPE, STRIDED_SLICE (shrink, negative index), RESHAPE and PACK fold to a constant target") {
    const auto bytes = keras_model();
    const auto m = vnnx::tflite::model_view::parse(bytes, "keras.tflite");
    auto g = vnnx::compiler::import_graph(m);
    REQUIRE(g.ops.size() == 6);
    CHECK_FALSE(vnnx::compiler::find_problems(g).empty());  // unfolded, RESHAPE's target is not constant
    CHECK(vnnx::compiler::passes::fold_shapes(g) == 5);
    REQUIRE(g.ops.size() == 1);
    CHECK(g.ops[0].code == B::RESHAPE);
    CHECK(reshape_target(g) == std::vector<std::int32_t>{1, -1, 8});
    CHECK(vnnx::compiler::find_problems(m).empty());
    const auto x = random_array(dtype::int8, {1, 4, 6, 8}, 11);
    require_equal(run_both(bytes, {x}, "keras.tflite"));
}

TEST_CASE("fold shapes: GATHER, MUL, FLOOR_DIV and CONCATENATION on the shape") {
    const auto bytes = gather_model();
    const auto m = vnnx::tflite::model_view::parse(bytes, "gather.tflite");
    auto g = vnnx::compiler::import_graph(m);
    CHECK(vnnx::compiler::passes::fold_shapes(g) == 9);
    REQUIRE(g.ops.size() == 1);
    CHECK(reshape_target(g) == std::vector<std::int32_t>{1, 48, 4});
    const auto x = random_array(dtype::int8, {1, 4, 6, 8}, 12);
    require_equal(run_both(bytes, {x}, "gather.tflite"));
}

TEST_CASE("fold shapes: quantized arithmetic and graph outputs are left alone") {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 2, 2, 4}, q8());
    const auto shape = b.add_tensor("shape", tensor_type::INT32, {4});
    b.add_operator(B::SHAPE, {x}, {shape}, opt::shape_options{tensor_type::INT32});
    const auto k = b.add_constant("k", tensor_type::INT8, {4}, std::vector<std::int8_t>{1, 2, 3, 4}, q8());
    const auto k2 = b.add_constant("k2", tensor_type::INT8, {4}, std::vector<std::int8_t>{5, 6, 7, 8}, q8());
    const auto sum = b.add_tensor("sum", tensor_type::INT8, {4}, q8());
    b.add_operator(B::ADD, {k, k2}, {sum}, opt::add_options{activation_function::NONE, false});
    b.set_inputs({x});
    b.set_outputs({shape, sum});
    const auto bytes = b.finish();
    const auto m = vnnx::tflite::model_view::parse(bytes, "outputs.tflite");
    auto g = vnnx::compiler::import_graph(m);
    CHECK(vnnx::compiler::passes::fold_shapes(g) == 0);
    CHECK(g.ops.size() == 2);
}
