// ELTWISE as a later layer of a node (lowering.md §7.3.1 `swap`): a LUT then an ADD whose
// other operand is a graph input, in both operand orders; and a small residual block.
#include "ops_eltwise_harness_test.hpp"

using namespace eltwise_test;
using B = vnnx::builtin_operator;

namespace {

std::vector<std::byte> lut_then_add(bool chained_first, B op) {
    vnnx::tflite::builder b;
    const std::vector<std::int32_t> s{1, 6, 5, 3};
    const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.05f, 2});
    const auto in2 = b.add_tensor("in2", tensor_type::INT8, s, quant{0.04f, -7});
    const auto t = b.add_tensor("t", tensor_type::INT8, s, quant{0.03f, -128});
    const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{0.06f, 4});
    b.add_operator(B::RELU, {in}, {t});
    const std::vector<std::int32_t> ins = chained_first ? std::vector<std::int32_t>{t, in2} : std::vector<std::int32_t>{in2, t};
    if (op == B::ADD) b.add_operator(op, ins, {out}, vnnx::tflite::add_options{});
    else if (op == B::SUB) b.add_operator(op, ins, {out}, vnnx::tflite::sub_options{});
    else b.add_operator(op, ins, {out}, vnnx::tflite::mul_options{});
    b.set_inputs({in, in2});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("ELTWISE after a LUT in one node: swap and bit-exact results") {
    for (auto op : {B::ADD, B::SUB, B::MUL}) {
        for (bool chained_first : {true, false}) {
            INFO(vnnx::builtin_name(op) << " chained operand first " << chained_first);
            const auto r = run_both(lut_then_add(chained_first, op),
                                    {ramp_input(dtype::int8, {1, 6, 5, 3}, 1), ramp_input(dtype::int8, {1, 6, 5, 3}, 2)});
            require_equal(r.sim[0], r.ref[0]);
            layers_of L(r.vnnx);
            REQUIRE(L.view.num_nodes() == 1);
            const auto layers = L.view.node_layers(0);
            REQUIRE(layers.size() == 2);
            CHECK(layers[0].type == 303);
            CHECK(layers[1].type == 301);
            CHECK(layers[1].options.get<vnnx::format::layer_options::eltwise8>().swap == (chained_first ? 1 : 0));
        }
    }
}

TEST_CASE("residual block: x + LEAKY_RELU(x) with a fork, uint8") {
    vnnx::tflite::builder b;
    const std::vector<std::int32_t> s{1, 7, 3, 5};
    const auto in = b.add_tensor("in", tensor_type::UINT8, s, quant{0.05f, 128});
    const auto t = b.add_tensor("t", tensor_type::UINT8, s, quant{0.04f, 100});
    const auto out = b.add_tensor("out", tensor_type::UINT8, s, quant{0.08f, 90});
    b.add_operator(B::LEAKY_RELU, {in}, {t}, vnnx::tflite::leaky_relu_options{0.2f});
    b.add_operator(B::ADD, {in, t}, {out}, vnnx::tflite::add_options{vnnx::tflite::activation_function::RELU, true});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto r = run_both(b.finish(), {ramp_input(dtype::uint8, {1, 7, 3, 5}, 3)});
    require_equal(r.sim[0], r.ref[0]);
}
