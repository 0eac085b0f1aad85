#pragma once
// Calibration data for the FIA records (quant/fia_fit.hpp): for every CONV_2D,
// DEPTHWISE_CONV_2D and FULLY_CONNECTED of the model, per output channel, accumulators the
// reference computed on sample inputs (bias included, before requantization) with TFLite's
// output code for each. The conv lowering fits each channel's record to them; calibrate.hpp
// collects them.
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace vnnx::compiler {

/// One observation of a channel: TFLite's accumulator A (Σ(x − z_in)(w − z_w) + bias) and its
/// output code.
struct accumulator_sample {
    std::int32_t acc = 0;
    std::int32_t y = 0;
};

struct op_calibration {
    std::int32_t channels = 0;
    double out_scale = 0;  // the output's quantization the samples were computed for
    std::int32_t out_zero = 0;
    std::vector<std::vector<accumulator_sample>> samples;  // [channel][sample]
};

struct calibration {
    std::unordered_map<std::int32_t, op_calibration> ops;  // by TFLite operator index
    std::size_t inputs = 0;                                // sample inputs run

    [[nodiscard]] const op_calibration* find(std::int32_t op_index) const {
        const auto it = ops.find(op_index);
        return it == ops.end() ? nullptr : &it->second;
    }
};

/// What the fit did over one compile: channels fitted, channels whose record changed, and how
/// many samples §8.2's records and the fitted ones reproduce exactly.
struct record_fit_stats {
    std::size_t channels = 0, changed = 0, samples = 0, matched_before = 0, matched_after = 0;
};

}  // namespace vnnx::compiler
