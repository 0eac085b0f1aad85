#pragma once
// Collects calibration.hpp's data: the reference interpreter runs the model on sample inputs and
// hands over every convolution's accumulators. Samples are taken at evenly spaced positions, at
// most `per_channel` per channel over all inputs, so that the data stays small whatever the
// model's resolution.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "vnnx/ir/calibration.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::compiler {

/// Runs every input set (one ndarray per graph input each) through the reference interpreter
/// and keeps at most `per_channel` samples per output channel of each convolution.
inline calibration calibrate(const tflite::model_view& model, const std::vector<std::vector<ndarray>>& input_sets,
                             std::size_t per_channel = 1024) {
    calibration cal;
    cal.inputs = input_sets.size();
    if (input_sets.empty()) return cal;
    const std::size_t per_set = std::max<std::size_t>(1, per_channel / input_sets.size());
    const auto sg = model.subgraph(0);
    const ref::accumulator_observer keep = [&](std::size_t op_index, const ndarray& acc, const ndarray& out) {
        if (acc.shape.empty() || acc.type != dtype::int32) return;
        const auto channels = static_cast<std::size_t>(acc.shape.back());
        if (channels == 0) return;
        const std::size_t positions = acc.element_count() / channels;
        auto& c = cal.ops[static_cast<std::int32_t>(op_index)];
        if (c.samples.empty()) {
            const auto o = sg.op(op_index);
            const auto q = sg.tensor(static_cast<std::size_t>(o.outputs()[0])).quant();
            c.channels = static_cast<std::int32_t>(channels);
            c.out_scale = q.scale.empty() ? 0.0 : static_cast<double>(q.scale[0]);
            c.out_zero = q.zero_point.empty() ? 0 : static_cast<std::int32_t>(q.zero_point[0]);
            c.samples.resize(channels);
        }
        if (c.samples.size() != channels) return;
        const std::size_t step = std::max<std::size_t>(1, (positions + per_set - 1) / per_set);
        const auto* a = reinterpret_cast<const std::int32_t*>(acc.data.data());
        for (std::size_t p = 0; p < positions; p += step)
            for (std::size_t k = 0; k < channels; ++k)
                c.samples[k].push_back({a[p * channels + k], out.get<std::int32_t>(p * channels + k)});
    };
    for (const auto& set : input_sets) (void)ref::run_observing_accumulators(model, set, keep);
    return cal;
}

}  // namespace vnnx::compiler
