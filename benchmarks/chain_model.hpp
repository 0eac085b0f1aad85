#pragma once
// A model of `blocks` identical MobileNetV2 inverted-residual blocks (1x1 expand to 4C with
// RELU6, 3x3 depthwise with RELU6, 1x1 project to C, residual ADD) at a fixed size: its file
// size, operator count and weight bytes grow in proportion to `blocks`, so compiling it for
// a series of block counts shows whether the compiler's cost is linear in the model's size.
// The weights are random and each layer amplifies: a model for timing the compiler, not for
// numerics (a 1-LSB rounding difference in the first layer grows along the chain).
#include <cstdint>
#include <string>
#include <vector>

#include <vnnx/tflite/builder.hpp>

namespace vnnx::bench {

[[nodiscard]] inline std::vector<std::byte> chain_model(int blocks, std::int32_t channels = 64, std::int32_t size = 28) {
    using namespace vnnx::tflite;
    using B = vnnx::builtin_operator;
    using q = vnnx::tflite::quant;
    builder b;
    b.set_description("vnnx bench: " + std::to_string(blocks) + " inverted-residual blocks");
    const q act{0.05f, -128};  // RELU6 outputs
    const q sum{0.1f, 0};      // project outputs and block outputs
    const std::int32_t c = channels, e = 4 * channels;
    const std::int32_t in = b.add_tensor("input", tensor_type::INT8, {1, size, size, c}, sum);
    std::int32_t x = in;
    for (int i = 0; i < blocks; ++i) {
        const std::string n = "block" + std::to_string(i);
        const auto seed = 100 + 10 * static_cast<std::uint64_t>(i);
        const auto ew = vnnx::tflite::detail::add_conv_weights(b, n + "/expand", {e, 1, 1, c}, 0, sum.scale[0], seed);
        const auto t1 = b.add_tensor(n + "/expand", tensor_type::INT8, {1, size, size, e}, act);
        b.add_operator(B::CONV_2D, {x, ew.weights, ew.bias}, {t1},
                       conv2d_options{padding_mode::SAME, 1, 1, activation_function::RELU6, 1, 1, tensor_type::FLOAT32});
        const auto dw = vnnx::tflite::detail::add_conv_weights(b, n + "/depthwise", {1, 3, 3, e}, 3, act.scale[0], seed + 3);
        const auto t2 = b.add_tensor(n + "/depthwise", tensor_type::INT8, {1, size, size, e}, act);
        b.add_operator(B::DEPTHWISE_CONV_2D, {t1, dw.weights, dw.bias}, {t2},
                       depthwise_conv2d_options{padding_mode::SAME, 1, 1, 1, activation_function::RELU6, 1, 1});
        const auto pw = vnnx::tflite::detail::add_conv_weights(b, n + "/project", {c, 1, 1, e}, 0, act.scale[0], seed + 6);
        const auto t3 = b.add_tensor(n + "/project", tensor_type::INT8, {1, size, size, c}, sum);
        b.add_operator(B::CONV_2D, {t2, pw.weights, pw.bias}, {t3},
                       conv2d_options{padding_mode::SAME, 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32});
        const auto t4 = b.add_tensor(n + "/add", tensor_type::INT8, {1, size, size, c}, sum);
        b.add_operator(B::ADD, {x, t3}, {t4}, add_options{activation_function::NONE, true});
        x = t4;
    }
    b.set_inputs({in});
    b.set_outputs({x});
    return b.finish();
}

}  // namespace vnnx::bench
