#pragma once
// The verdict of `vnnx compare` and `vnnx demo`, by the VectorBlox SDK's own standard: a compiled
// model is judged layer by layer (each node run on the reference's inputs must be within 1 LSB
// of TFLite), then by its task. A node that applies a lookup table after its accumulation (a LUT
// layer, a convolution's nlf_data) is allowed the step of its table next to the expected value:
// a 1-LSB difference before the table becomes one step after it. The tables are read from the
// node's own records.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "vnnx/format/enums.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/support/npy.hpp"

namespace vnnx::cli::verdict {

/// Allowed |difference| for each expected 8-bit value (index: the value's byte, 0..255).
struct tolerance {
    std::array<std::int64_t, 256> at{};
    std::string rule = "1 LSB";
    tolerance() { at.fill(1); }
};

/// Tolerance of a node whose output went through `tables` (256 entries each, the output type's
/// values): at expected value v, the largest step |T[j ± 1] - T[j]| over the entries j holding v
/// (at least 1); a value no entry holds gets the table's largest step.
inline tolerance from_tables(const std::vector<std::array<std::int32_t, 256>>& tables) {
    tolerance t;
    if (tables.empty()) return t;
    std::int64_t largest = 1;
    std::array<std::int64_t, 256> best{};
    std::array<bool, 256> seen{};
    for (const auto& T : tables)
        for (std::size_t j = 0; j < 256; ++j) {
            std::int64_t step = 1;
            if (j > 0) step = std::max<std::int64_t>(step, std::llabs(std::int64_t{T[j]} - T[j - 1]));
            if (j < 255) step = std::max<std::int64_t>(step, std::llabs(std::int64_t{T[j + 1]} - T[j]));
            largest = std::max(largest, step);
            const auto byte = static_cast<std::size_t>(static_cast<std::uint8_t>(T[j]));
            best[byte] = std::max(best[byte], step);
            seen[byte] = true;
        }
    for (std::size_t b = 0; b < 256; ++b) t.at[b] = seen[b] ? best[b] : largest;
    t.rule = fmt::format("its table's step ({} at most)", largest);
    return t;
}

/// The tables a node applies last to the tensor at record index `tensor` (a LUT layer's, or a
/// convolution's nlf_data for its own output); nullopt when it applies none.
inline std::optional<tolerance> table_tolerance(const format::model_view& v, std::size_t node, std::size_t tensor) {
    const auto& rec = v.node(node);
    const auto n_in = static_cast<std::size_t>(std::max(0, rec.num_inputs));
    const std::size_t own = n_in + static_cast<std::size_t>(std::max(0, rec.num_outputs));
    if (tensor >= n_in && tensor < own) {
        if (rec.type != static_cast<std::int32_t>(builtin_operator::CONV_2D)) return std::nullopt;
        const auto u = rec.options.get<format::node_options::Conv2DOptions>();
        if (u.nlf_data.absent()) return std::nullopt;
        const auto raw = v.range(u.nlf_data.value, 256, "nlf_data");
        std::array<std::int32_t, 256> T{};
        const bool s = rec.output_data_type == static_cast<std::int32_t>(format::calc_type::CALC_TYPE_INT8);
        for (std::size_t j = 0; j < 256; ++j)
            T[j] = s ? static_cast<std::int8_t>(raw[j]) : static_cast<std::int32_t>(static_cast<std::uint8_t>(raw[j]));
        return from_tables({T});
    }
    std::size_t at = own;
    for (const auto& layer : v.node_layers(node)) {
        const auto n = static_cast<std::size_t>(std::max(0, layer.num_tensors));
        if (tensor + 1 == at + n) {
            if (layer.type != static_cast<std::int32_t>(format::vnnx_operator::LUT)) return std::nullopt;
            const auto o = layer.options.get<format::layer_options::ActivationOptions>();
            const bool s = layer.output_data_type == static_cast<std::int32_t>(format::calc_type::CALC_TYPE_INT8);
            if (o.lut_count < 1 || o.lut_count > 4 || (!s && layer.output_data_type != 0)) return std::nullopt;
            const auto raw = v.range(o.vci_int8.value, 256 * static_cast<std::uint64_t>(o.lut_count), "vci_int8");
            std::vector<std::array<std::int32_t, 256>> tables(static_cast<std::size_t>(o.lut_count));
            for (std::size_t t = 0; t < tables.size(); ++t)
                for (std::size_t j = 0; j < 256; ++j) {
                    const auto b = raw[t * 256 + j];
                    tables[t][j] = s ? static_cast<std::int8_t>(b) : static_cast<std::int32_t>(static_cast<std::uint8_t>(b));
                }
            return from_tables(tables);
        }
        at += n;
    }
    return std::nullopt;
}

/// Elements of `got` further from `want` than allowed, and the largest allowance used.
struct judgement {
    std::size_t beyond = 0;
    std::int64_t worst_excess_diff = 0, worst_allowed = 1;
};

inline judgement judge(const ndarray& got, const ndarray& want, const tolerance& t) {
    judgement j;
    const bool eight = dtype_size(want.type) == 1 && dtype_size(got.type) == 1;
    for (std::size_t i = 0; i < want.element_count() && i < got.element_count(); ++i) {
        const std::int64_t w = want.get<std::int64_t>(i);
        const std::int64_t d = std::llabs(got.get<std::int64_t>(i) - w);
        const std::int64_t allowed = eight ? t.at[static_cast<std::uint8_t>(w)] : 1;
        if (d > allowed) {
            ++j.beyond;
            if (d > j.worst_excess_diff) {
                j.worst_excess_diff = d;
                j.worst_allowed = allowed;
            }
        }
    }
    return j;
}

}  // namespace vnnx::cli::verdict
