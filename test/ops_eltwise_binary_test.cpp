// Two activation inputs → ELTWISE (301): golden eltwise8 fields (lowering.md §7.3.1, §8.4)
// and bit-exact simulation against the reference interpreter.
#include "ops_eltwise_harness_test.hpp"

#include <vnnx/quant/multiplier.hpp>

using namespace eltwise_test;
using vnnx::tflite::activation_function;

namespace {

struct binary_case {
    builtin_operator op;
    tensor_type type;
    std::vector<std::int32_t> a_shape, b_shape, out_shape;
    quant qa, qb, qo;
    activation_function act = activation_function::NONE;
};

std::vector<std::byte> binary_model(const binary_case& c) {
    vnnx::tflite::builder b;
    const auto a = b.add_tensor("a", c.type, c.a_shape, c.qa);
    const auto x = b.add_tensor("b", c.type, c.b_shape, c.qb);
    const auto o = b.add_tensor("out", c.type, c.out_shape, c.qo);
    switch (c.op) {
        case builtin_operator::ADD: b.add_operator(c.op, {a, x}, {o}, vnnx::tflite::add_options{c.act, true}); break;
        case builtin_operator::SUB: b.add_operator(c.op, {a, x}, {o}, vnnx::tflite::sub_options{c.act, true}); break;
        case builtin_operator::MUL: b.add_operator(c.op, {a, x}, {o}, vnnx::tflite::mul_options{c.act}); break;
        default: b.add_operator(c.op, {a, x}, {o}); break;
    }
    b.set_inputs({a, x});
    b.set_outputs({o});
    return b.finish();
}

std::vector<std::int64_t> wide(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

outcome run_case(const binary_case& c, std::uint64_t seed) {
    const auto dt = c.type == tensor_type::INT8 ? dtype::int8 : dtype::uint8;
    return run_both(binary_model(c), {ramp_input(dt, wide(c.a_shape), seed), ramp_input(dt, wide(c.b_shape), seed + 1)});
}

}  // namespace

TEST_CASE("eltwise ADD: fields of §7.3.1 and bit-exact simulation") {
    const binary_case c{builtin_operator::ADD, tensor_type::INT8, {1, 5, 7, 3}, {1, 5, 7, 3}, {1, 5, 7, 3},
                        quant{0.05f, -3}, quant{0.1f, 7}, quant{0.12f, -10}};
    const auto r = run_case(c, 11);
    require_equal(r.sim[0], r.ref[0]);
    layers_of L(r.vnnx);
    const auto& l = L.find(301);
    const auto u = l.options.get<vnnx::format::layer_options::eltwise8>();
    CHECK(u.type == 0);
    CHECK(u.left_shift == 20);
    CHECK(l.input_offset == -3);
    CHECK(u.input2_offset == 7);
    CHECK(l.output_offset == -10);
    CHECK(u.swap == 0);
    CHECK(u.bias_data.absent());
    CHECK(l.activation_min == -128);
    CHECK(l.activation_max == 127);
    CHECK(l.num_inputs == 2);
    CHECK(l.num_tensors == 3);
    // T = 2·max(S) = 0.2: QM(0.25), QM(0.5), QM(0.2 / (2^20·0.12)).
    const auto in1 = vnnx::quant::quantize_multiplier(static_cast<double>(0.05f) / (2.0 * static_cast<double>(0.1f)));
    const auto in2 = vnnx::quant::quantize_multiplier(0.1f / (2.0 * 0.1f));
    const auto out = vnnx::quant::quantize_multiplier(2.0 * static_cast<double>(0.1f) / (1048576.0 * static_cast<double>(0.12f)));
    CHECK(L.i32(l.input_multiplier) == in1.multiplier);
    CHECK(L.i32(l.input_shift) == in1.shift);
    CHECK(L.i32(u.input2_multiplier) == in2.multiplier);
    CHECK(L.i32(u.input2_shift) == in2.shift);
    CHECK(L.i32(l.output_multiplier) == out.multiplier);
    CHECK(L.i32(l.output_shift) == out.shift);
    CHECK(in2.multiplier == (1 << 30));
    CHECK(in2.shift == 0);
    // 2·S_in/S_out < 256 for both, rank 4, no operand matches the output: optimized = 1.
    CHECK(u.optimized == 1);
    // Data order: output, input, input2 pairs follow each other (4 bytes apart).
    CHECK(l.output_shift.value == l.output_multiplier.value + 4);
    CHECK(l.input_multiplier.value == l.output_shift.value + 4);
    CHECK(u.input2_multiplier.value == l.input_shift.value + 4);
}

TEST_CASE("eltwise ADD: optimized variants 2, 3, 4") {
    binary_case c{builtin_operator::ADD, tensor_type::INT8, {1, 4, 4, 2}, {1, 4, 4, 2}, {1, 4, 4, 2},
                  quant{0.1f, 5}, quant{0.1f, 5}, quant{0.1f, 5}};
    SECTION("both inputs match the output") {
        const auto r = run_case(c, 3);
        require_equal(r.sim[0], r.ref[0]);
        CHECK(layers_of(r.vnnx).find(301).options.get<vnnx::format::layer_options::eltwise8>().optimized == 2);
    }
    SECTION("only input 0 matches") {
        c.qb = quant{0.2f, 1};
        const auto r = run_case(c, 4);
        require_equal(r.sim[0], r.ref[0]);
        CHECK(layers_of(r.vnnx).find(301).options.get<vnnx::format::layer_options::eltwise8>().optimized == 3);
    }
    SECTION("only input 1 matches") {
        c.qa = quant{0.2f, 1};
        const auto r = run_case(c, 5);
        require_equal(r.sim[0], r.ref[0]);
        CHECK(layers_of(r.vnnx).find(301).options.get<vnnx::format::layer_options::eltwise8>().optimized == 4);
    }
}

TEST_CASE("eltwise ADD/SUB/MUL with fused RELU and RELU6 (the RELU6 quirk fixed)") {
    for (auto op : {builtin_operator::ADD, builtin_operator::SUB, builtin_operator::MUL}) {
        for (auto act : {activation_function::RELU, activation_function::RELU6, activation_function::RELU_N1_TO_1}) {
            const binary_case c{op, tensor_type::INT8, {1, 3, 5, 7}, {1, 3, 5, 7}, {1, 3, 5, 7},
                                quant{0.04f, 2}, quant{0.03f, -6}, quant{0.02f, -20}, act};
            INFO(vnnx::builtin_name(op) << " act " << static_cast<int>(act));
            const auto r = run_case(c, 21);
            require_equal(r.sim[0], r.ref[0]);
            layers_of Lv(r.vnnx);
            const auto& l = Lv.find(301);
            CHECK(l.activation_min == (act == activation_function::RELU_N1_TO_1 ? -20 - 50 : -20));
            if (act == activation_function::RELU6) CHECK(l.activation_max == 127);  // -20 + 300 clamps
            if (act == activation_function::RELU_N1_TO_1) CHECK(l.activation_max == 30);
        }
    }
    // RELU6 that binds: S_out = 0.05, z = -100 → max = -100 + 120 = 20.
    const binary_case c{builtin_operator::ADD, tensor_type::INT8, {1, 2, 2, 5}, {1, 2, 2, 5}, {1, 2, 2, 5},
                        quant{0.05f, 0}, quant{0.05f, 0}, quant{0.05f, -100}, activation_function::RELU6};
    const auto r = run_case(c, 7);
    require_equal(r.sim[0], r.ref[0]);
    layers_of Lv(r.vnnx);
            const auto& l = Lv.find(301);
    CHECK(l.activation_min == -100);
    CHECK(l.activation_max == 20);
}

TEST_CASE("eltwise on uint8: bounds in the uint8 range (the 127 quirk fixed)") {
    for (auto op : {builtin_operator::ADD, builtin_operator::SUB, builtin_operator::MUL}) {
        const binary_case c{op, tensor_type::UINT8, {1, 3, 3, 5}, {1, 3, 3, 5}, {1, 3, 3, 5},
                            quant{0.02f, 128}, quant{0.03f, 100}, quant{0.04f, 120}, activation_function::RELU};
        INFO(vnnx::builtin_name(op));
        const auto r = run_case(c, 31);
        require_equal(r.sim[0], r.ref[0]);
        layers_of Lv(r.vnnx);
            const auto& l = Lv.find(301);
        CHECK(l.activation_min == 120);
        CHECK(l.activation_max == 255);
        CHECK(l.input_data_type == 0);
    }
}

TEST_CASE("eltwise MUL: empty input arrays, QM(S_in·S_in2/S_out)") {
    const binary_case c{builtin_operator::MUL, tensor_type::INT8, {1, 4, 6, 3}, {1, 4, 6, 3}, {1, 4, 6, 3},
                        quant{0.07f, 3}, quant{0.05f, -2}, quant{0.01f, 9}};
    const auto r = run_case(c, 41);
    require_equal(r.sim[0], r.ref[0]);
    layers_of L(r.vnnx);
    const auto& l = L.find(301);
    const auto u = l.options.get<vnnx::format::layer_options::eltwise8>();
    CHECK(u.type == 1);
    CHECK(u.left_shift == -1);
    CHECK(u.optimized == 0);
    const auto m = vnnx::quant::quantize_multiplier(static_cast<double>(0.07f * 0.05f / 0.01f));
    CHECK(L.i32(l.output_multiplier) == m.multiplier);
    CHECK(L.i32(l.output_shift) == m.shift);
    // The four input arrays are empty: every offset points at the end of the output pair.
    CHECK(l.input_multiplier.value == l.output_shift.value + 4);
    CHECK(l.input_shift.value == l.input_multiplier.value);
    CHECK(u.input2_multiplier.value == l.input_multiplier.value);
    CHECK(u.input2_shift.value == l.input_multiplier.value);
}

TEST_CASE("eltwise MAXIMUM / MINIMUM: raw scales, left_shift 0, raw-code results") {
    for (auto op : {builtin_operator::MAXIMUM, builtin_operator::MINIMUM}) {
        for (auto t : {tensor_type::INT8, tensor_type::UINT8}) {
            const std::int64_t z = t == tensor_type::INT8 ? -4 : 130;
            const binary_case c{op, t, {1, 3, 4, 3}, {1, 3, 4, 3}, {1, 3, 4, 3}, quant{0.1f, z}, quant{0.1f, z},
                                quant{0.1f, z}};
            const auto r = run_case(c, 51);
            require_equal(r.sim[0], r.ref[0]);
            layers_of L(r.vnnx);
            const auto& l = L.find(301);
            const auto u = l.options.get<vnnx::format::layer_options::eltwise8>();
            CHECK(u.type == (op == builtin_operator::MAXIMUM ? 11 : 10));
            CHECK(u.left_shift == 0);
            const auto q = vnnx::quant::quantize_multiplier(static_cast<double>(0.1f));
            CHECK(L.i32(l.input_multiplier) == q.multiplier);
            CHECK(L.i32(l.input_shift) == q.shift);
            CHECK(L.i32(l.output_multiplier) == q.multiplier);
        }
    }
}

TEST_CASE("eltwise broadcast of an activation with a trailing 1 (x − mean)") {
    SECTION("rank 3, mean [1, N, 1], odd sizes") {
        const binary_case c{builtin_operator::SUB, tensor_type::INT8, {1, 7, 5}, {1, 7, 1}, {1, 7, 5},
                            quant{0.05f, 3}, quant{0.05f, -1}, quant{0.06f, 0}};
        const auto r = run_case(c, 61);
        require_equal(r.sim[0], r.ref[0]);
    }
    SECTION("rank 4, per-pixel second input [1, H, W, 1]") {
        const binary_case c{builtin_operator::MUL, tensor_type::INT8, {1, 3, 5, 6}, {1, 3, 5, 1}, {1, 3, 5, 6},
                            quant{0.05f, 3}, quant{0.02f, -1}, quant{0.01f, 2}};
        const auto r = run_case(c, 62);
        require_equal(r.sim[0], r.ref[0]);
    }
    SECTION("the broadcast operand first") {
        const binary_case c{builtin_operator::SUB, tensor_type::UINT8, {1, 4, 1}, {1, 4, 9}, {1, 4, 9},
                            quant{0.05f, 120}, quant{0.03f, 128}, quant{0.06f, 128}};
        const auto r = run_case(c, 63);
        require_equal(r.sim[0], r.ref[0]);
    }
    SECTION("per-channel second input [1, 1, 1, C]") {
        const binary_case c{builtin_operator::ADD, tensor_type::INT8, {1, 4, 3, 5}, {1, 1, 1, 5}, {1, 4, 3, 5},
                            quant{0.05f, 3}, quant{0.02f, -1}, quant{0.04f, 2}};
        const auto r = run_case(c, 64);
        require_equal(r.sim[0], r.ref[0]);
    }
}

TEST_CASE("eltwise: shapes that cannot broadcast channels-first are rejected with the rule") {
    const binary_case c{builtin_operator::ADD, tensor_type::INT8, {1, 4, 4, 3}, {3}, {1, 4, 4, 3},
                        quant{0.05f, 0}, quant{0.05f, 0}, quant{0.05f, 0}};
    const auto m = binary_model(c);
    try {
        (void)vnnx::compile(m, {}, "rank.tflite");
        FAIL("compiled");
    } catch (const vnnx::error& e) {
        const std::string what = e.what();
        CHECK(what.find("rank.tflite") != std::string::npos);
        CHECK(what.find("operator 0 (ADD)") != std::string::npos);
        CHECK(what.find("output's rank") != std::string::npos);
        CHECK(e.kind() == vnnx::error_kind::unsupported);
    }
}

TEST_CASE("eltwise SUB, SQUARED_DIFFERENCE, MAXIMUM, MINIMUM on large equal shapes (the pair table) are bit-exact") {
    // 18432 elements: the SIMD ISAs look the results up in a table of all 65536 input pairs
    // made by the element loop (simulate() checks them against the scalar loop on 1 and 2
    // threads), and the reference checks both.
    for (auto op : {builtin_operator::SUB, builtin_operator::SQUARED_DIFFERENCE, builtin_operator::MAXIMUM,
                    builtin_operator::MINIMUM}) {
        for (auto t : {tensor_type::INT8, tensor_type::UINT8}) {
            const std::int64_t z = t == tensor_type::INT8 ? -9 : 121;
            const std::vector<std::int32_t> s{1, 64, 32, 9};
            const bool raw = op == builtin_operator::MAXIMUM || op == builtin_operator::MINIMUM;
            const binary_case c{op, t, s, s, s, quant{0.031f, z}, raw ? quant{0.031f, z} : quant{0.047f, z + 5},
                                raw ? quant{0.031f, z} : quant{0.09f, z - 3}};
            INFO("op " << static_cast<int>(op) << (t == tensor_type::INT8 ? " int8" : " uint8"));
            const auto r = run_case(c, 77);
            require_equal(r.sim[0], r.ref[0]);
        }
    }
}
