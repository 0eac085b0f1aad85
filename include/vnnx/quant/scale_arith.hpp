#pragma once
// Scale arithmetic. TFLite forms some ratios of scales in float32 (MUL's S1·S2/S3, the ReLU
// family's S_in/S_out, softmax's S_in·β); the default follows it so that the simulator matches
// TFLite bit for bit. The SDK's flow (Python) forms every ratio in double from its six-decimal
// scales; --sdk-scales follows that, so that its records come out exactly.

namespace vnnx::quant {

enum class scale_arith { tflite_float, sdk_double };

/// a / b
[[nodiscard]] inline double scale_ratio(scale_arith m, double a, double b) noexcept {
    if (m == scale_arith::sdk_double) return a / b;
    return static_cast<double>(static_cast<float>(a) / static_cast<float>(b));
}

/// a · b / c, left to right
[[nodiscard]] inline double scale_product_ratio(scale_arith m, double a, double b, double c) noexcept {
    if (m == scale_arith::sdk_double) return a * b / c;
    return static_cast<double>(static_cast<float>(a) * static_cast<float>(b) / static_cast<float>(c));
}

/// a · b
[[nodiscard]] inline double scale_product(scale_arith m, double a, double b) noexcept {
    if (m == scale_arith::sdk_double) return a * b;
    return static_cast<double>(static_cast<float>(a) * static_cast<float>(b));
}

}  // namespace vnnx::quant
