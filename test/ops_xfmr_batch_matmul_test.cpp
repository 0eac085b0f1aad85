// BATCH_MATMUL (lowering.md §7.9): between two activations a BATCH_MATMUL node (126) whose
// BatchMatMulOptions carry the model's adj flags, simulated from the tensor records alone;
// with a constant operand a FULLY_CONNECTED on the convolution engine. The simulator is
// compared with the reference interpreter (itself checked against TFLite in ref/golden).
#include "ops_eltwise_harness_test.hpp"

#include <cstdlib>

using namespace eltwise_test;
using vnnx::tflite::batch_matmul_options;

namespace {

struct bmm_case {
    std::vector<std::int32_t> a, b, out;
    bool adj_x = false, adj_y = false;
    quant qa, qb, qo;
    bool constant_b = false;
};

std::vector<std::byte> bmm_model(const bmm_case& c) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("a", tensor_type::INT8, c.a, c.qa);
    std::int32_t z = 0;
    if (c.constant_b) {
        std::size_t n = 1;
        for (auto d : c.b) n *= static_cast<std::size_t>(d);
        z = b.add_constant("b", tensor_type::INT8, c.b, vnnx::tflite::random_int8(17, n), c.qb);
    } else {
        z = b.add_tensor("b", tensor_type::INT8, c.b, c.qb);
    }
    const auto y = b.add_tensor("y", tensor_type::INT8, c.out, c.qo);
    b.add_operator(builtin_operator::BATCH_MATMUL, {x, z}, {y}, batch_matmul_options{c.adj_x, c.adj_y, false});
    if (c.constant_b) b.set_inputs({x});
    else b.set_inputs({x, z});
    b.set_outputs({y});
    return b.finish();
}

std::vector<std::int64_t> wide(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

struct agreement {
    std::size_t total = 0, exact = 0, within1 = 0;
};

agreement compare(const ndarray& got, const ndarray& want) {
    REQUIRE(got.element_count() == want.element_count());
    agreement r;
    r.total = got.element_count();
    for (std::size_t i = 0; i < r.total; ++i) {
        const auto d = std::llabs(got.get<std::int64_t>(i) - want.get<std::int64_t>(i));
        if (d == 0) ++r.exact;
        if (d <= 1) ++r.within1;
    }
    return r;
}

}  // namespace

TEST_CASE("BATCH_MATMUL between two activations: node 126 with the model's adj flags, bit-exact") {
    const quant qa{0.05f, 3}, qb{0.04f, -5}, qo{0.08f, 2};
    const std::vector<bmm_case> cases = {
        {{1, 2, 5, 7}, {1, 2, 7, 3}, {1, 2, 5, 3}, false, false, qa, qb, qo},             // rank 4, odd sizes
        {{2, 6, 4}, {2, 6, 4}, {2, 6, 6}, false, true, qa, qb, quant{0.1f, -3}},            // Q·Kᵀ, rank 3
        {{1, 2, 16, 16}, {1, 2, 16, 8}, {1, 2, 16, 8}, false, false, quant{1.0f / 256, -128}, qb, qo},  // P·V
        {{2, 1, 7, 5}, {3, 7, 4}, {2, 3, 5, 4}, true, false, quant{0.03f, 0}, quant{0.07f, -9}, quant{0.09f, 5}},
        {{3, 9, 5}, {1, 11, 9}, {3, 5, 11}, true, true, qa, qb, qo},                        // both flags, broadcast B
        {{1, 3, 5, 13}, {13, 6}, {1, 3, 5, 6}, false, false, qa, qb, qo},                   // rank-2 B broadcast
        {{7, 3}, {3, 9}, {7, 9}, false, false, qa, qb, qo},                                 // rank 2
        // attention-sized: several 16-row panels and 8-column tiles, columns split over threads
        {{1, 1, 130, 72}, {1, 1, 72, 150}, {1, 1, 130, 150}, false, false, qa, qb, quant{0.9f, -7}},
    };
    for (const auto& c : cases) {
        INFO("A " << c.a.size() << "-D, adj_x " << c.adj_x << ", adj_y " << c.adj_y);
        const auto a = ramp_input(dtype::int8, wide(c.a), 3), b = ramp_input(dtype::int8, wide(c.b), 4);
        const auto r = run_both(bmm_model(c), {a, b});
        require_equal(r.sim[0], r.ref[0]);
        const vnnx::format::model_view v(r.vnnx, "bmm.vnnx");
        REQUIRE(v.num_nodes() == 1);
        const auto& nd = v.node(0);
        CHECK(nd.type == 126);
        CHECK(nd.num_inputs == 2);
        CHECK(nd.use_replay == 0);
        const auto o = nd.options.get<vnnx::format::node_options::BatchMatMulOptions>();
        CHECK(o.adj_x == (c.adj_x ? 1 : 0));
        CHECK(o.adj_y == (c.adj_y ? 1 : 0));
        CHECK(o.asym == 1);
    }
}

TEST_CASE("BATCH_MATMUL with a constant operand runs as a FULLY_CONNECTED within 1 LSB") {
    const std::vector<bmm_case> cases = {
        {{1, 9, 6}, {6, 5}, {1, 9, 5}, false, false, quant{0.05f, -4}, quant{0.02f, 0}, quant{0.04f, 1}, true},
        {{1, 16, 32}, {1, 48, 32}, {1, 16, 48}, false, true, quant{0.05f, 7}, quant{0.01f, 0}, quant{0.06f, -2}, true},
        {{2, 3, 5, 11}, {11, 7}, {2, 3, 5, 7}, false, false, quant{0.05f, 0}, quant{0.015f, 3}, quant{0.05f, 0}, true},
    };
    agreement all;
    for (const auto& c : cases) {
        const auto a = ramp_input(dtype::int8, wide(c.a), 5);
        const auto r = run_both(bmm_model(c), {a});
        const auto g = compare(r.sim[0], r.ref[0]);
        all.total += g.total;
        all.exact += g.exact;
        all.within1 += g.within1;
        CHECK(g.within1 == g.total);
        const vnnx::format::model_view v(r.vnnx, "bmm.vnnx");
        bool conv = false;
        for (std::size_t k = 0; k < v.num_nodes(); ++k) conv = conv || v.node(k).type == 3;
        CHECK(conv);
    }
    // The FIA's 16-bit multiplier rounds differently from TFLite on a few outputs only.
    CHECK(all.exact * 100 >= all.total * 90);
}

TEST_CASE("BATCH_MATMUL: unsupported forms are named") {
    bmm_case c{{1, 4, 6}, {6, 5}, {1, 4, 5}, true, false, quant{0.05f, 0}, quant{0.02f, 0}, quant{0.04f, 0}, true};
    c.a = {1, 6, 4};
    CHECK_THROWS_WITH(vnnx::compile(bmm_model(c), {}, "bmm.tflite"),
                      Catch::Contains("bmm.tflite") && Catch::Contains("BATCH_MATMUL") && Catch::Contains("adj_x with a constant"));
    bmm_case d{{1, 4, 6}, {1, 7, 5}, {1, 4, 5}, false, false, quant{0.05f, 0}, quant{0.02f, 0}, quant{0.04f, 0}};
    CHECK_THROWS_WITH(vnnx::compile(bmm_model(d), {}, "bmm.tflite"), Catch::Contains("contracted dims differ"));
}

TEST_CASE("BATCH_MATMUL node followed by layers: Q·Kᵀ, scale, additive mask, softmax") {
    vnnx::tflite::builder b;
    const auto I8 = tensor_type::INT8;
    const auto q = b.add_tensor("q", I8, {1, 2, 9, 8}, quant{0.05f, 1}), k = b.add_tensor("k", I8, {1, 2, 9, 8}, quant{0.04f, -2});
    const auto s = b.add_tensor("s", I8, {1, 2, 9, 9}, quant{0.1f, 0});
    b.add_operator(builtin_operator::BATCH_MATMUL, {q, k}, {s}, batch_matmul_options{false, true, false});
    const auto c = b.add_constant("scale", I8, {1}, std::vector<std::int8_t>{90}, quant{0.005f, 0});
    const auto s2 = b.add_tensor("scaled", I8, {1, 2, 9, 9}, quant{0.05f, 0});
    b.add_operator(builtin_operator::MUL, {s, c}, {s2}, vnnx::tflite::mul_options{});
    const auto mask = b.add_tensor("mask", I8, {1, 1, 9, 9}, quant{0.1f, 0});
    const auto s3 = b.add_tensor("masked", I8, {1, 2, 9, 9}, quant{0.1f, 0});
    b.add_operator(builtin_operator::ADD, {s2, mask}, {s3}, vnnx::tflite::add_options{});
    const auto p = b.add_tensor("probs", I8, {1, 2, 9, 9}, quant{1.0f / 256, -128});
    b.add_operator(builtin_operator::SOFTMAX, {s3}, {p}, vnnx::tflite::softmax_options{1.0f});
    b.set_inputs({q, k, mask});
    b.set_outputs({p});
    const auto r = run_both(b.finish(), {ramp_input(dtype::int8, {1, 2, 9, 8}, 1), ramp_input(dtype::int8, {1, 2, 9, 8}, 2),
                                         ramp_input(dtype::int8, {1, 1, 9, 9}, 3)});
    require_equal(r.sim[0], r.ref[0]);
    const vnnx::format::model_view v(r.vnnx, "attn.vnnx");
    REQUIRE(v.num_nodes() >= 1);
    CHECK(v.node(0).type == 126);
    CHECK(v.node_layers(0).size() == 2);  // the scale (a LUT) and the mask ADD run inside the node
}
