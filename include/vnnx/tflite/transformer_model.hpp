#pragma once
// A transformer encoder block as TFLite exports it in int8, made with the builder: pre-norm
// LayerNorm (MEAN over the last axis, SUB, SQUARED_DIFFERENCE or the self-MUL, MEAN, ADD ε,
// RSQRT, MUL, MUL γ, ADD β), multi-head self-attention (token-wise FULLY_CONNECTED Q/K/V,
// RESHAPE + TRANSPOSE into heads, BATCH_MATMUL Q·Kᵀ, SOFTMAX with β = 1/√D, BATCH_MATMUL P·V,
// heads merged back, output projection), a residual ADD, a second LayerNorm, a GELU MLP (the
// GELU operator, tanh or erf form, or the decomposed tanh pattern) and a second residual ADD.
// Weights are deterministic random; the quantization keeps each tensor near its real range.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/support/error.hpp"
#include "vnnx/tflite/builder.hpp"

namespace vnnx::tflite {

struct transformer_block_options {
    std::int32_t tokens = 16, dim = 32, heads = 2, mlp = 64;
    bool squared_difference = true;  // LayerNorm variance by SQUARED_DIFFERENCE (else SUB then MUL)
    enum class gelu_form { tanh_op, erf_op, decomposed_tanh } gelu = gelu_form::tanh_op;
};

namespace detail {

class transformer_maker {
public:
    transformer_maker(builder& b, const transformer_block_options& o) : b_(b), o_(o) {}

    std::int32_t act(const std::string& name, std::vector<std::int32_t> shape, float scale, std::int64_t zero) {
        return b_.add_tensor(name, tensor_type::INT8, std::move(shape), quant{scale, zero});
    }
    std::vector<std::int32_t> rows(std::int32_t c) const { return {1, o_.tokens, c}; }

    template <class Options = no_options>
    std::int32_t op(builtin_operator code, std::vector<std::int32_t> in, std::int32_t out, Options opts = {}) {
        b_.add_operator(code, std::move(in), {out}, opts);
        return out;
    }

    std::int32_t i32(const std::string& name, std::vector<std::int32_t> v) {
        return b_.add_constant(name, tensor_type::INT32, {static_cast<std::int32_t>(v.size())}, v);
    }

    /// An int8 constant of `n` values with one scale (per-tensor, zero point 0).
    std::int32_t const8(const std::string& name, std::vector<std::int32_t> shape, float scale, std::int8_t lo, std::int8_t hi) {
        std::size_t n = 1;
        for (auto d : shape) n *= static_cast<std::size_t>(d);
        return b_.add_constant(name, tensor_type::INT8, std::move(shape), random_int8(seed_++, n, lo, hi), quant{scale, 0});
    }

    /// LayerNorm over the last axis; x has scale s_in (values within about ±6).
    std::int32_t layer_norm(const std::string& p, std::int32_t x, float s_in) {
        const std::int32_t c = o_.dim;
        const auto axis = i32(p + "/axis", {2});
        const auto mean = op(builtin_operator::MEAN, {x, axis}, act(p + "/mean", rows(1), s_in / 4, 0), reducer_options{true});
        const auto xc = op(builtin_operator::SUB, {x, mean}, act(p + "/centered", rows(c), s_in, 0), sub_options{});
        std::int32_t sq = 0;
        if (o_.squared_difference)
            sq = op(builtin_operator::SQUARED_DIFFERENCE, {x, mean}, act(p + "/squared", rows(c), 0.25f, -128));
        else
            sq = op(builtin_operator::MUL, {xc, xc}, act(p + "/squared", rows(c), 0.25f, -128), mul_options{});
        const auto var = op(builtin_operator::MEAN, {sq, i32(p + "/axis2", {2})}, act(p + "/variance", rows(1), 0.1f, -128),
                            reducer_options{true});
        const auto eps = b_.add_constant(p + "/epsilon", tensor_type::INT8, {1}, std::vector<std::int8_t>{-127}, quant{0.1f, -128});
        const auto ve = op(builtin_operator::ADD, {var, eps}, act(p + "/variance_eps", rows(1), 0.1f, -128), add_options{});
        const auto inv = op(builtin_operator::RSQRT, {ve}, act(p + "/inv_std", rows(1), 1.0f / 128, -128));
        const auto nrm = op(builtin_operator::MUL, {xc, inv}, act(p + "/normalized", rows(c), 0.03f, 0), mul_options{});
        const auto gamma = const8(p + "/gamma", {c}, 1.0f / 100, 70, 127);
        const auto scaled = op(builtin_operator::MUL, {nrm, gamma}, act(p + "/scaled", rows(c), 0.03f, 0), mul_options{});
        const auto beta = const8(p + "/beta", {c}, 1.0f / 200, -40, 40);
        return op(builtin_operator::ADD, {scaled, beta}, act(p, rows(c), 0.03f, 0), add_options{});
    }

    /// Token-wise FULLY_CONNECTED [1, T, c_in] -> [1, T, c_out] with bias (input scale s_in ≈ 0.03).
    std::int32_t linear(const std::string& p, std::int32_t x, std::int32_t c_in, std::int32_t c_out, float s_in, float s_out,
                        std::int64_t z_out = 0) {
        const float sw = 1.0f / (std::sqrt(static_cast<float>(c_in)) * 73.0f * 1.5f);
        const auto w = const8(p + "/weights", {c_out, c_in}, sw, -127, 127);
        const auto bias = b_.add_constant(p + "/bias", tensor_type::INT32, {c_out},
                                          random_int32(seed_++, static_cast<std::size_t>(c_out), -300, 300),
                                          quant{s_in * sw, 0});
        fully_connected_options fo;
        fo.keep_num_dims = true;
        return op(builtin_operator::FULLY_CONNECTED, {x, w, bias}, act(p, rows(c_out), s_out, z_out), fo);
    }

    /// [1, T, d] -> [1, H, T, D]
    std::int32_t split_heads(const std::string& p, std::int32_t x, float s) {
        const std::int32_t h = o_.heads, d = o_.dim / o_.heads;
        const auto r = op(builtin_operator::RESHAPE, {x, i32(p + "/shape", {1, o_.tokens, h, d})},
                          act(p + "/heads", {1, o_.tokens, h, d}, s, 0), reshape_options{{1, o_.tokens, h, d}});
        return op(builtin_operator::TRANSPOSE, {r, i32(p + "/perm", {0, 2, 1, 3})}, act(p + "/heads_first", {1, h, o_.tokens, d}, s, 0),
                  transpose_options{});
    }

    std::int32_t attention(std::int32_t x) {
        const std::int32_t h = o_.heads, d = o_.dim / o_.heads, t = o_.tokens;
        const auto q = split_heads("attn/q", linear("attn/q", x, o_.dim, o_.dim, 0.03f, 0.03f), 0.03f);
        const auto k = split_heads("attn/k", linear("attn/k", x, o_.dim, o_.dim, 0.03f, 0.03f), 0.03f);
        const auto v = split_heads("attn/v", linear("attn/v", x, o_.dim, o_.dim, 0.03f, 0.03f), 0.03f);
        const auto s = op(builtin_operator::BATCH_MATMUL, {q, k}, act("attn/scores", {1, h, t, t}, 0.08f, 0),
                          batch_matmul_options{false, true, false});
        const auto pr = op(builtin_operator::SOFTMAX, {s}, act("attn/probs", {1, h, t, t}, 1.0f / 256, -128),
                           softmax_options{1.0f / std::sqrt(static_cast<float>(d))});
        const auto ctx = op(builtin_operator::BATCH_MATMUL, {pr, v}, act("attn/context", {1, h, t, d}, 0.02f, 0),
                            batch_matmul_options{false, false, false});
        const auto tr = op(builtin_operator::TRANSPOSE, {ctx, i32("attn/merge/perm", {0, 2, 1, 3})},
                           act("attn/merge/tokens_first", {1, t, h, d}, 0.02f, 0), transpose_options{});
        const auto merged = op(builtin_operator::RESHAPE, {tr, i32("attn/merge/shape", {1, t, o_.dim})},
                               act("attn/merge", rows(o_.dim), 0.02f, 0), reshape_options{{1, t, o_.dim}});
        return linear("attn/out", merged, o_.dim, o_.dim, 0.02f, 0.03f);
    }

    std::int32_t gelu(std::int32_t x) {
        using F = transformer_block_options::gelu_form;
        const auto c = o_.mlp;
        const float s_out = 0.02f;
        const std::int64_t z_out = -110;  // GELU's range [-0.17, 3.8]
        if (o_.gelu != F::decomposed_tanh)
            return op(builtin_operator::GELU, {x}, act("mlp/gelu", rows(c), s_out, z_out), gelu_options{o_.gelu == F::tanh_op});
        // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))), one operator per step as converters emit it.
        auto scalar = [&](const std::string& n, float value, float scale, std::int64_t zero) {
            const auto code = static_cast<std::int8_t>(std::lround(value / scale) + zero);
            return b_.add_constant(n, tensor_type::INT8, {1}, std::vector<std::int8_t>{code}, quant{scale, zero});
        };
        const auto x2 = op(builtin_operator::MUL, {x, x}, act("mlp/gelu/x2", rows(c), 0.06f, -128), mul_options{});
        const auto x3 = op(builtin_operator::MUL, {x2, x}, act("mlp/gelu/x3", rows(c), 0.15f, 0), mul_options{});
        const auto cx3 = op(builtin_operator::MUL, {x3, scalar("mlp/gelu/c", 0.044715f, 0.0004f, 0)},
                            act("mlp/gelu/cx3", rows(c), 0.008f, 0), mul_options{});
        const auto inner = op(builtin_operator::ADD, {x, cx3}, act("mlp/gelu/inner", rows(c), 0.05f, 0), add_options{});
        const auto arg = op(builtin_operator::MUL, {inner, scalar("mlp/gelu/k", 0.7978846f, 0.00714f, 0)},
                            act("mlp/gelu/arg", rows(c), 0.04f, 0), mul_options{});
        const auto th = op(builtin_operator::TANH, {arg}, act("mlp/gelu/tanh", rows(c), 1.0f / 128, 0));
        const auto one = op(builtin_operator::ADD, {th, scalar("mlp/gelu/one", 1.0f, 1.0f / 127, 0)},
                            act("mlp/gelu/one_plus", rows(c), 1.0f / 127, -128), add_options{});
        const auto half = op(builtin_operator::MUL, {x, scalar("mlp/gelu/half", 0.5f, 0.5f / 127, 0)},
                             act("mlp/gelu/half_x", rows(c), 0.015f, 0), mul_options{});
        return op(builtin_operator::MUL, {half, one}, act("mlp/gelu", rows(c), s_out, z_out), mul_options{});
    }

    std::int32_t mlp(std::int32_t x) {
        const auto h = linear("mlp/fc1", x, o_.dim, o_.mlp, 0.03f, 0.03f);
        return linear("mlp/fc2", gelu(h), o_.mlp, o_.dim, 0.02f, 0.04f);
    }

private:
    builder& b_;
    transformer_block_options o_;
    std::uint64_t seed_ = 5000;
};

}  // namespace detail

/// One int8 encoder block: input and output [1, tokens, dim] (input scale 0.05, zero point 0).
[[nodiscard]] inline std::vector<std::byte> transformer_block_model(const transformer_block_options& o = {}) {
    if (o.tokens < 1 || o.dim < 1 || o.heads < 1 || o.mlp < 1 || o.dim % o.heads != 0 || o.tokens > 4096 || o.dim > 4096 ||
        o.mlp > 16384)
        fail(error_kind::usage, "transformer_block_model: tokens, dim, heads and mlp must be positive, dim a multiple of heads");
    builder b;
    b.set_description("vnnx: int8 transformer encoder block, random weights");
    detail::transformer_maker m(b, o);
    const auto x = m.act("tokens", m.rows(o.dim), 0.05f, 0);
    const auto a = m.attention(m.layer_norm("ln1", x, 0.05f));
    const auto r1 = m.op(builtin_operator::ADD, {x, a}, m.act("residual1", m.rows(o.dim), 0.06f, 0), add_options{});
    const auto f = m.mlp(m.layer_norm("ln2", r1, 0.06f));
    const auto out = m.op(builtin_operator::ADD, {r1, f}, m.act("block_out", m.rows(o.dim), 0.08f, 0), add_options{});
    b.set_inputs({x});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace vnnx::tflite
