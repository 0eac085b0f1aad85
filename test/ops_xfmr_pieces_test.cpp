// Each piece of a transformer block on its own: SOFTMAX on the last axis of 3-D/4-D tensors,
// the head TRANSPOSE [1,T,H,D] <-> [1,H,T,D], token-wise FULLY_CONNECTED, MEAN over the last
// axis, the LayerNorm pattern (SQUARED_DIFFERENCE or self-MUL), GELU (tanh and erf forms),
// RSQRT and residual ADDs: compiled, simulated and compared with the reference interpreter.
#include "ops_eltwise_harness_test.hpp"

#include <cstdlib>

#include <vnnx/tflite/transformer_model.hpp>

using namespace eltwise_test;
namespace tfl = vnnx::tflite;
using B = builtin_operator;

namespace {

std::vector<std::int64_t> wide(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

/// Largest absolute difference between simulator and reference over every output.
std::int64_t max_difference(const outcome& r) {
    std::int64_t worst = 0;
    REQUIRE(r.sim.size() == r.ref.size());
    for (std::size_t o = 0; o < r.sim.size(); ++o) {
        REQUIRE(r.sim[o].element_count() == r.ref[o].element_count());
        for (std::size_t i = 0; i < r.sim[o].element_count(); ++i)
            worst = std::max<std::int64_t>(worst, std::llabs(r.sim[o].get<std::int64_t>(i) - r.ref[o].get<std::int64_t>(i)));
    }
    return worst;
}

template <class Options = tfl::no_options>
std::vector<std::byte> single(B code, std::vector<std::int32_t> in_shape, std::vector<std::int32_t> out_shape, quant qi, quant qo,
                              Options opts = {}, std::vector<std::int32_t> extra = {}) {
    tfl::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, in_shape, qi);
    std::vector<std::int32_t> ins{x};
    if (!extra.empty()) ins.push_back(b.add_constant("k", tensor_type::INT32, {static_cast<std::int32_t>(extra.size())}, extra));
    const auto y = b.add_tensor("y", tensor_type::INT8, out_shape, qo);
    b.add_operator(code, ins, {y}, opts);
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

}  // namespace

TEST_CASE("transformer pieces: SOFTMAX on the last axis of 3-D and 4-D tensors") {
    for (const auto& s : {std::vector<std::int32_t>{1, 5, 13}, std::vector<std::int32_t>{1, 2, 7, 9}, std::vector<std::int32_t>{1, 2, 16, 16}}) {
        INFO("rank " << s.size() << ", last axis " << s.back());
        const auto m = single(B::SOFTMAX, s, s, quant{0.1f, 3}, quant{1.0f / 256, -128}, tfl::softmax_options{0.25f});
        const auto r = run_both(m, {ramp_input(dtype::int8, wide(s), 21)});
        require_equal(r.sim[0], r.ref[0]);
    }
}

TEST_CASE("transformer pieces: head split and merge TRANSPOSE [1,T,H,D] <-> [1,H,T,D]") {
    const std::vector<std::int32_t> perm{0, 2, 1, 3};
    const auto split = single(B::TRANSPOSE, {1, 5, 3, 7}, {1, 3, 5, 7}, quant{0.1f, 2}, quant{0.1f, 2}, tfl::transpose_options{}, perm);
    const auto rs = run_both(split, {ramp_input(dtype::int8, {1, 5, 3, 7}, 22)});
    require_equal(rs.sim[0], rs.ref[0]);
    const auto merge = single(B::TRANSPOSE, {1, 3, 5, 7}, {1, 5, 3, 7}, quant{0.1f, 2}, quant{0.1f, 2}, tfl::transpose_options{}, perm);
    const auto rm = run_both(merge, {ramp_input(dtype::int8, {1, 3, 5, 7}, 23)});
    require_equal(rm.sim[0], rm.ref[0]);
}

TEST_CASE("transformer pieces: token-wise FULLY_CONNECTED keeps the rows, within 1 LSB") {
    for (const auto& in : {std::vector<std::int32_t>{1, 16, 32}, std::vector<std::int32_t>{9, 24}, std::vector<std::int32_t>{1, 2, 5, 11}}) {
        INFO("input rank " << in.size());
        tfl::builder b;
        const std::int32_t c = in.back(), k = 13;
        auto out = in;
        out.back() = k;
        const auto x = b.add_tensor("x", tensor_type::INT8, in, quant{0.05f, -3});
        const auto w = b.add_constant("w", tensor_type::INT8, {k, c}, tfl::random_int8(31, static_cast<std::size_t>(k * c)), quant{0.01f, 0});
        const auto bias = b.add_constant("bias", tensor_type::INT32, {k}, tfl::random_int32(32, static_cast<std::size_t>(k), -500, 500),
                                         quant{0.05f * 0.01f, 0});
        const auto y = b.add_tensor("y", tensor_type::INT8, out, quant{0.08f, 4});
        tfl::fully_connected_options fo;
        fo.keep_num_dims = true;
        b.add_operator(B::FULLY_CONNECTED, {x, w, bias}, {y}, fo);
        b.set_inputs({x});
        b.set_outputs({y});
        const auto r = run_both(b.finish(), {ramp_input(dtype::int8, wide(in), 24)});
        CHECK(max_difference(r) <= 1);
    }
}

TEST_CASE("transformer pieces: MEAN over the last axis, GELU, RSQRT, SQUARED_DIFFERENCE, residual ADD") {
    const auto mean = single(B::MEAN, {1, 16, 32}, {1, 16, 1}, quant{0.05f, 1}, quant{0.0125f, -2}, tfl::reducer_options{true},
                             std::vector<std::int32_t>{2});
    CHECK(max_difference(run_both(mean, {ramp_input(dtype::int8, {1, 16, 32}, 25)})) <= 1);
    for (bool approximate : {true, false}) {
        INFO("GELU approximate " << approximate);
        const auto m = single(B::GELU, {1, 16, 64}, {1, 16, 64}, quant{0.03f, 0}, quant{0.02f, -110}, tfl::gelu_options{approximate});
        const auto r = run_both(m, {ramp_input(dtype::int8, {1, 16, 64}, 26)});
        require_equal(r.sim[0], r.ref[0]);
    }
    const auto rsq = single(B::RSQRT, {1, 16, 1}, {1, 16, 1}, quant{0.1f, -128}, quant{1.0f / 128, -128});
    const auto rr = run_both(rsq, {ramp_input(dtype::int8, {1, 16, 1}, 27)});
    require_equal(rr.sim[0], rr.ref[0]);
    for (B code : {B::SQUARED_DIFFERENCE, B::SUB, B::MUL, B::ADD}) {
        INFO(vnnx::builtin_name(code));
        tfl::builder b;
        const bool per_token = code != B::ADD;  // LayerNorm broadcasts [1,T,1]; the residual ADD does not
        const std::vector<std::int32_t> s2 = per_token ? std::vector<std::int32_t>{1, 16, 1} : std::vector<std::int32_t>{1, 16, 32};
        const auto x = b.add_tensor("x", tensor_type::INT8, {1, 16, 32}, quant{0.05f, 0});
        const auto z = b.add_tensor("z", tensor_type::INT8, s2, quant{0.0125f, 3});
        const auto y = b.add_tensor("y", tensor_type::INT8, {1, 16, 32}, code == B::SQUARED_DIFFERENCE ? quant{0.25f, -128} : quant{0.06f, 1});
        if (code == B::ADD) b.add_operator(code, {x, z}, {y}, tfl::add_options{});
        else if (code == B::SUB) b.add_operator(code, {x, z}, {y}, tfl::sub_options{});
        else if (code == B::MUL) b.add_operator(code, {x, z}, {y}, tfl::mul_options{});
        else b.add_operator(code, {x, z}, {y});
        b.set_inputs({x, z});
        b.set_outputs({y});
        const auto r = run_both(b.finish(), {ramp_input(dtype::int8, {1, 16, 32}, 28), ramp_input(dtype::int8, wide(s2), 29)});
        require_equal(r.sim[0], r.ref[0]);
    }
}

TEST_CASE("transformer pieces: the LayerNorm pattern, by SQUARED_DIFFERENCE and by self-MUL") {
    for (bool sqd : {true, false}) {
        INFO("squared_difference " << sqd);
        tfl::transformer_block_options o;
        o.squared_difference = sqd;
        tfl::builder b;
        tfl::detail::transformer_maker m(b, o);
        const auto x = m.act("x", m.rows(o.dim), 0.05f, 0);
        const auto y = m.layer_norm("ln", x, 0.05f);
        b.set_inputs({x});
        b.set_outputs({y});
        const auto r = run_both(b.finish(), {ramp_input(dtype::int8, {1, o.tokens, o.dim}, 30)});
        CHECK(max_difference(r) <= 1);
    }
}
