// Chains of element-wise operators become one LUT (lowering.md §3.4): activations in a row,
// x·x and x+x, small constants (per-channel tables), constant-first SUB, SiLU; forks stop a
// chain. Each is simulated bit-exactly against the reference interpreter.
#include "ops_eltwise_harness_test.hpp"

#include <vnnx/compiler/import.hpp>
#include <vnnx/ir/lut_tables.hpp>
#include <vnnx/ir/lut_chain.hpp>

using namespace eltwise_test;
using B = vnnx::builtin_operator;

namespace {

ndarray all_codes(dtype t, std::vector<std::int64_t> shape) {
    ndarray a(t, std::move(shape));
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const auto r = static_cast<std::int64_t>((i * 53 + i / 256) % 256);
        a.set<std::int64_t>(i, t == dtype::int8 ? r - 128 : r);
    }
    return a;
}

/// Operators of the model after the transforms (the LUT pass with the default evaluator).
std::vector<vnnx::compiler::op> transformed(const std::vector<std::byte>& bytes) {
    const auto model = vnnx::tflite::model_view::parse(bytes, "chain.tflite");
    auto g = vnnx::compiler::import_graph(model);
    g = vnnx::compiler::transform(std::move(g), vnnx::compiler::default_lut_evaluator());
    return g.ops;
}

std::size_t count_luts(const std::vector<vnnx::compiler::op>& ops) {
    std::size_t n = 0;
    for (const auto& o : ops) n += o.kind == vnnx::compiler::op_type::lut ? 1 : 0;
    return n;
}

void check_chain(const std::vector<std::byte>& bytes, const ndarray& input, std::size_t want_ops, std::size_t want_luts,
                 std::size_t want_tables = 1) {
    const auto ops = transformed(bytes);
    CHECK(ops.size() == want_ops);
    CHECK(count_luts(ops) == want_luts);
    for (const auto& o : ops)
        if (o.kind == vnnx::compiler::op_type::lut) CHECK(o.tables.size() == want_tables);
    const auto r = run_both(bytes, {input});
    for (std::size_t i = 0; i < r.ref.size(); ++i) require_equal(r.sim[i], r.ref[i]);
}

}  // namespace

TEST_CASE("LUT chain: RELU6 → LOGISTIC → TANH is one table") {
    vnnx::tflite::builder b;
    const std::vector<std::int32_t> s{1, 8, 8, 5};
    const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.05f, 3});
    const auto t1 = b.add_tensor("t1", tensor_type::INT8, s, quant{0.03f, -128});
    const auto t2 = b.add_tensor("t2", tensor_type::INT8, s, quant{1.0f / 256, -128});
    const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{1.0f / 128, 0});
    b.add_operator(B::RELU6, {in}, {t1});
    b.add_operator(B::LOGISTIC, {t1}, {t2});
    b.add_operator(B::TANH, {t2}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    check_chain(b.finish(), all_codes(dtype::int8, {1, 8, 8, 5}), 1, 1);
}

TEST_CASE("LUT chain: x·x and x+x") {
    for (auto op : {B::MUL, B::ADD}) {
        vnnx::tflite::builder b;
        const std::vector<std::int32_t> s{1, 8, 4, 3};
        const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.04f, -6});
        const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{0.05f, 10});
        if (op == B::MUL) b.add_operator(op, {in, in}, {out}, vnnx::tflite::mul_options{});
        else b.add_operator(op, {in, in}, {out}, vnnx::tflite::add_options{});
        b.set_inputs({in});
        b.set_outputs({out});
        INFO(vnnx::builtin_name(op));
        check_chain(b.finish(), all_codes(dtype::int8, {1, 8, 4, 3}), 1, 1);
    }
}

TEST_CASE("LUT chain: small constants, one table per channel") {
    SECTION("MUL by a per-channel constant of 3 → 3 tables") {
        vnnx::tflite::builder b;
        const std::vector<std::int32_t> s{1, 8, 8, 3};
        const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.04f, -6});
        const auto k = b.add_constant("k", tensor_type::INT8, {3}, std::vector<std::int8_t>{-90, 17, 127}, quant{0.01f, 4});
        const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{0.02f, 1});
        b.add_operator(B::MUL, {in, k}, {out}, vnnx::tflite::mul_options{});
        b.set_inputs({in});
        b.set_outputs({out});
        check_chain(b.finish(), all_codes(dtype::int8, {1, 8, 8, 3}), 1, 1, 3);
    }
    SECTION("constant-first SUB (scalar) then ADD with a [1,1,1,2] constant, uint8") {
        vnnx::tflite::builder b;
        const std::vector<std::int32_t> s{1, 16, 8, 2};
        const auto in = b.add_tensor("in", tensor_type::UINT8, s, quant{0.04f, 128});
        const auto k0 = b.add_constant("k0", tensor_type::UINT8, {}, std::vector<std::uint8_t>{200}, quant{0.02f, 100});
        const auto t = b.add_tensor("t", tensor_type::UINT8, s, quant{0.05f, 120});
        const auto k1 =
            b.add_constant("k1", tensor_type::UINT8, {1, 1, 1, 2}, std::vector<std::uint8_t>{3, 250}, quant{0.03f, 128});
        const auto out = b.add_tensor("out", tensor_type::UINT8, s, quant{0.06f, 110});
        b.add_operator(B::SUB, {k0, in}, {t}, vnnx::tflite::sub_options{});
        b.add_operator(B::ADD, {t, k1}, {out}, vnnx::tflite::add_options{vnnx::tflite::activation_function::RELU, true});
        b.set_inputs({in});
        b.set_outputs({out});
        check_chain(b.finish(), all_codes(dtype::uint8, {1, 16, 8, 2}), 1, 1, 2);
    }
    SECTION("MAXIMUM and MINIMUM with scalars") {
        vnnx::tflite::builder b;
        const std::vector<std::int32_t> s{1, 8, 8, 1};
        const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.05f, 0});
        const auto k0 = b.add_constant("k0", tensor_type::INT8, {1}, std::vector<std::int8_t>{-40}, quant{0.05f, 0});
        const auto t = b.add_tensor("t", tensor_type::INT8, s, quant{0.05f, 0});
        const auto k1 = b.add_constant("k1", tensor_type::INT8, {1}, std::vector<std::int8_t>{90}, quant{0.05f, 0});
        const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{0.05f, 0});
        b.add_operator(B::MAXIMUM, {in, k0}, {t});
        b.add_operator(B::MINIMUM, {t, k1}, {out});
        b.set_inputs({in});
        b.set_outputs({out});
        check_chain(b.finish(), all_codes(dtype::int8, {1, 8, 8, 1}), 1, 1);
    }
}

TEST_CASE("LUT chain: SiLU (LOGISTIC then MUL with its input) is one table") {
    vnnx::tflite::builder b;
    const std::vector<std::int32_t> s{1, 8, 8, 4};
    const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.06f, 5});
    const auto sig = b.add_tensor("sig", tensor_type::INT8, s, quant{1.0f / 256, -128});
    const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{0.04f, -110});
    b.add_operator(B::LOGISTIC, {in}, {sig});
    b.add_operator(B::MUL, {in, sig}, {out}, vnnx::tflite::mul_options{});
    b.set_inputs({in});
    b.set_outputs({out});
    check_chain(b.finish(), all_codes(dtype::int8, {1, 8, 8, 4}), 1, 1);
}

TEST_CASE("LUT chain: a forked tensor ends the chain") {
    vnnx::tflite::builder b;
    const std::vector<std::int32_t> s{1, 8, 8, 2};
    const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.05f, 3});
    const auto t = b.add_tensor("t", tensor_type::INT8, s, quant{0.04f, -128});
    const auto o1 = b.add_tensor("o1", tensor_type::INT8, s, quant{1.0f / 128, 0});
    const auto o2 = b.add_tensor("o2", tensor_type::INT8, s, quant{1.0f / 256, -128});
    b.add_operator(B::RELU, {in}, {t});
    b.add_operator(B::TANH, {t}, {o1});
    b.add_operator(B::LOGISTIC, {t}, {o2});
    b.set_inputs({in});
    b.set_outputs({o1, o2});
    check_chain(b.finish(), all_codes(dtype::int8, {1, 8, 8, 2}), 3, 3);
}

TEST_CASE("LUT chain: a constant of more than 4 elements stops the chain") {
    vnnx::tflite::builder b;
    const std::vector<std::int32_t> s{1, 4, 4, 5};
    const auto in = b.add_tensor("in", tensor_type::INT8, s, quant{0.05f, 3});
    const auto t = b.add_tensor("t", tensor_type::INT8, s, quant{0.04f, -128});
    const auto k = b.add_constant("k", tensor_type::INT8, {5}, std::vector<std::int8_t>{1, -2, 3, -4, 5}, quant{0.1f, 0});
    const auto out = b.add_tensor("out", tensor_type::INT8, s, quant{0.05f, 0});
    b.add_operator(B::RELU, {in}, {t});
    b.add_operator(B::ADD, {t, k}, {out}, vnnx::tflite::add_options{});
    b.set_inputs({in});
    b.set_outputs({out});
    check_chain(b.finish(), all_codes(dtype::int8, {1, 4, 4, 5}), 2, 1);
}
