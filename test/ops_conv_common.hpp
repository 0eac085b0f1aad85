#pragma once
// Shared by the ops_conv_*_test.cpp files: builder-made single-convolution models, their
// compilation, simulation (any ISA) and comparison with the reference interpreter.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/format/model_view.hpp>
#include <vnnx/ref/interpreter.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/support/npy.hpp>
#include <vnnx/tflite/builder.hpp>
#include <vnnx/tflite/model_view.hpp>

namespace conv_test {

using vnnx::builtin_operator;
using vnnx::tflite::activation_function;
using vnnx::tflite::padding_mode;
using vnnx::tflite::quant;
using vnnx::tflite::tensor_type;

enum class kind { conv, depthwise, fc };

struct spec {
    kind op = kind::conv;
    int N = 1, H = 8, W = 8, C = 4, K = 8, kh = 3, kw = 3, sh = 1, sw = 1, dh = 1, dw = 1;
    int mult = 1;  // depthwise depth multiplier
    activation_function act = activation_function::NONE;
    tensor_type in_type = tensor_type::INT8, out_type = tensor_type::INT8, w_type = tensor_type::INT8;
    bool per_channel = true;
    bool bias = true;
    std::int64_t w_zero = 0;  // weight zero point (uint8 weights)
    std::int64_t in_zero = -5, out_zero = 3;
    float in_scale = 0.05f, out_scale = 0.08f;
    std::uint64_t seed = 1;
    padding_mode pad = padding_mode::VALID;
    int w_abs_max = 128;  // int8 weights drawn from [-w_abs_max, w_abs_max] when below 128
    int w_fill = 0;       // when nonzero, every int8 weight is this value
    int in_fill = 999;    // when in [-128, 127], every input byte is this value
    int w_outlier_c = -1;  // uint8 conv weights: when >= 0, only this input channel's weights leave
                           // int8 around w_zero (the others are clamped into it)

    [[nodiscard]] int out_h() const { return (H - ((kh - 1) * dh + 1)) / sh + 1; }
    [[nodiscard]] int out_w() const { return (W - ((kw - 1) * dw + 1)) / sw + 1; }
};

inline std::vector<std::byte> build(const spec& s) {
    using B = builtin_operator;
    vnnx::tflite::builder b;
    const std::int64_t in_zero = s.in_type == tensor_type::UINT8 ? s.in_zero + 128 : s.in_zero;
    const std::int64_t out_zero = s.out_type == tensor_type::UINT8 ? s.out_zero + 128 : s.out_zero;
    const bool fc = s.op == kind::fc;
    const std::vector<std::int32_t> in_shape = fc ? std::vector<std::int32_t>{s.N, s.C} : std::vector<std::int32_t>{s.N, s.H, s.W, s.C};
    const auto in = b.add_tensor("input", s.in_type, in_shape, quant{s.in_scale, in_zero});
    const int K = s.op == kind::depthwise ? s.C * s.mult : s.K;
    std::vector<std::int32_t> wshape;
    if (s.op == kind::conv) wshape = {K, s.kh, s.kw, s.C};
    else if (s.op == kind::depthwise) wshape = {1, s.kh, s.kw, K};
    else wshape = {K, s.C};
    std::size_t n = 1;
    for (auto d : wshape) n *= static_cast<std::size_t>(d);
    const std::size_t nq = s.per_channel ? static_cast<std::size_t>(K) : 1;
    auto scales = vnnx::tflite::random_float(s.seed + 1, nq, 0.004f, 0.02f);
    std::vector<std::int64_t> zps(nq, s.w_zero);
    const std::int32_t qdim = s.op == kind::depthwise ? 3 : 0;
    std::int32_t w;
    if (s.w_type == tensor_type::UINT8) {
        const auto r = vnnx::tflite::random_int8(s.seed, n, -128, 127);
        std::vector<std::uint8_t> u(n);
        for (std::size_t i = 0; i < n; ++i) u[i] = static_cast<std::uint8_t>(static_cast<int>(r[i]) + 128);
        if (s.w_outlier_c >= 0 && s.op == kind::conv)
            for (std::size_t i = 0; i < n; ++i)
                if (static_cast<int>(i % static_cast<std::size_t>(s.C)) != s.w_outlier_c)
                    u[i] = static_cast<std::uint8_t>(std::clamp<int>(u[i], static_cast<int>(s.w_zero) - 128,
                                                                     static_cast<int>(s.w_zero) + 127));
        w = b.add_constant("filter", tensor_type::UINT8, wshape, u, quant{scales, zps, qdim});
    } else {
        auto r = s.w_abs_max < 128 ? vnnx::tflite::random_int8(s.seed, n, -s.w_abs_max, s.w_abs_max)
                                   : vnnx::tflite::random_int8(s.seed, n);
        if (s.w_fill != 0) std::fill(r.begin(), r.end(), static_cast<std::int8_t>(s.w_fill));
        w = b.add_constant("filter", tensor_type::INT8, wshape, r, quant{scales, zps, qdim});
    }
    std::vector<std::int32_t> inputs{in, w};
    if (s.bias) {
        std::vector<float> bs;
        for (float x : scales) bs.push_back(x * s.in_scale);
        const auto bias = vnnx::tflite::random_int32(s.seed + 2, static_cast<std::size_t>(K), -3000, 3000);
        inputs.push_back(b.add_constant("bias", tensor_type::INT32, {K}, bias,
                                        quant{bs, std::vector<std::int64_t>(bs.size(), 0), 0}));
    }
    if (fc) {
        const auto out = b.add_tensor("output", s.out_type, {s.N, K}, quant{s.out_scale, out_zero});
        b.add_operator(B::FULLY_CONNECTED, inputs, {out},
                       vnnx::tflite::fully_connected_options{s.act, {}, false, false, tensor_type::FLOAT32});
        b.set_inputs({in});
        b.set_outputs({out});
        return b.finish();
    }
    const int oh = s.pad == padding_mode::SAME ? (s.H + s.sh - 1) / s.sh : s.out_h();
    const int ow = s.pad == padding_mode::SAME ? (s.W + s.sw - 1) / s.sw : s.out_w();
    const auto out = b.add_tensor("output", s.out_type, {s.N, oh, ow, K}, quant{s.out_scale, out_zero});
    if (s.op == kind::conv)
        b.add_operator(B::CONV_2D, inputs, {out},
                       vnnx::tflite::conv2d_options{s.pad, s.sw, s.sh, s.act, s.dw, s.dh, tensor_type::FLOAT32});
    else
        b.add_operator(B::DEPTHWISE_CONV_2D, inputs, {out},
                       vnnx::tflite::depthwise_conv2d_options{s.pad, s.sw, s.sh, s.mult, s.act, s.dw, s.dh});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

inline vnnx::dtype dtype_of(tensor_type t) { return t == tensor_type::UINT8 ? vnnx::dtype::uint8 : vnnx::dtype::int8; }

/// Deterministic input in TFLite layout.
inline vnnx::ndarray input_for(const spec& s, std::uint64_t seed) {
    std::vector<std::int64_t> shape = s.op == kind::fc ? std::vector<std::int64_t>{s.N, s.C}
                                                       : std::vector<std::int64_t>{s.N, s.H, s.W, s.C};
    vnnx::ndarray a(dtype_of(s.in_type), shape);
    const auto r = vnnx::tflite::random_int8(seed, a.element_count(), -128, 127);
    const bool fill = s.in_fill >= -128 && s.in_fill <= 127;
    for (std::size_t i = 0; i < r.size(); ++i) a.data[i] = static_cast<std::byte>(fill ? static_cast<std::int8_t>(s.in_fill) : r[i]);
    return a;
}

/// [N]HWC -> [N]CHW bytes (rank 3 and 4, 8-bit), unchanged otherwise.
inline std::vector<std::byte> to_channels_first(const vnnx::ndarray& a) {
    if (a.shape.size() != 4 && a.shape.size() != 3) return a.data;
    const std::size_t r = a.shape.size();
    const auto N = r == 4 ? a.shape[0] : 1, H = a.shape[r - 3], W = a.shape[r - 2], C = a.shape[r - 1];
    std::vector<std::byte> out(a.data.size());
    for (std::int64_t n = 0; n < N; ++n)
        for (std::int64_t y = 0; y < H; ++y)
            for (std::int64_t x = 0; x < W; ++x)
                for (std::int64_t c = 0; c < C; ++c)
                    out[static_cast<std::size_t>(((n * C + c) * H + y) * W + x)] =
                        a.data[static_cast<std::size_t>(((n * H + y) * W + x) * C + c)];
    return out;
}

inline vnnx::compile_result compile(const std::vector<std::byte>& model, vnnx::format::preset p = vnnx::format::preset::V1000) {
    vnnx::compile_options opt;
    opt.preset = p;
    return vnnx::compile(model, opt, "conv_case.tflite");
}

/// Simulated output 0 in channels-first bytes.
inline std::vector<std::byte> simulate(const std::vector<std::byte>& vnnx_bytes, const std::vector<std::byte>& input_cf,
                                       vnnx::sim::isa_kind isa = vnnx::sim::isa_kind::scalar, unsigned threads = 1) {
    vnnx::sim::machine m(vnnx_bytes, "conv_case.vnnx", {isa, threads});
    m.set_input(0, input_cf);
    m.run();
    const auto o = m.output(0);
    return {o.begin(), o.end()};
}

struct comparison {
    std::size_t total = 0, exact = 0;
    int max_diff = 0;
    [[nodiscard]] double exact_rate() const { return total ? static_cast<double>(exact) / static_cast<double>(total) : 1.0; }
};

/// Compiles, simulates and compares with the reference interpreter over a few inputs.
inline comparison compare_with_reference(const spec& s, int inputs = 2,
                                         vnnx::format::preset p = vnnx::format::preset::V1000) {
    const auto model = build(s);
    const auto compiled = compile(model, p);
    const auto view = vnnx::tflite::model_view::parse(model, "conv_case.tflite");
    comparison c;
    for (int i = 0; i < inputs; ++i) {
        const auto x = input_for(s, s.seed * 100 + static_cast<std::uint64_t>(i));
        const auto ref = vnnx::ref::run(view, {x});
        const auto want = to_channels_first(ref.at(0));
        const auto got = simulate(compiled.bytes, to_channels_first(x));
        REQUIRE(got.size() == want.size());
        const bool u8 = s.out_type == tensor_type::UINT8;
        for (std::size_t j = 0; j < got.size(); ++j) {
            const int a = u8 ? int(static_cast<std::uint8_t>(got[j])) : int(static_cast<std::int8_t>(got[j]));
            const int b = u8 ? int(static_cast<std::uint8_t>(want[j])) : int(static_cast<std::int8_t>(want[j]));
            c.max_diff = std::max(c.max_diff, std::abs(a - b));
            c.exact += a == b;
            ++c.total;
        }
    }
    return c;
}

}  // namespace conv_test
