#pragma once
// LUT (303): a chain of element-wise 8-bit operators replaced by 256-entry tables
// (lowering.md §3.4, §7.6.1, §8.6). One table per channel of a small per-channel constant
// (1..4). The serialized table is in byte order: entry r is the output for the input whose
// byte value is r.
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/ops/trait.hpp"

namespace vnnx::ops {

struct lut_op {
    static constexpr builtin_operator code = builtin_operator::CUSTOM;  // not a TFLite operator
    static constexpr std::string_view summary = "chain of element-wise operators as 256-entry tables";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::LUT);
    using member = format::layer_options::ActivationOptions;

    /// The tiler's model: a table lookup (its tables preloaded).
    static bool tile(const graph&, const compiler::op&, std::int32_t, bool, compiler::layer& L) {
        L.kind = compiler::op_kind::lut;
        return true;
    }

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.tables.empty() || o.tables.size() > 4) return "a LUT needs 1 to 4 tables";
        for (const auto& t : o.tables)
            if (t.size() != 256) return "a LUT table needs 256 entries";
        if (o.tables.size() > 1) {
            const auto& s = g.t(o.inputs.at(0)).shape;
            if (s.empty() || s.back() != static_cast<std::int32_t>(o.tables.size()))
                return "per-channel tables need as many channels as tables";
        }
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto out_type = c.g.t(o.outputs.at(0)).type;
        const bool wide = out_type == tflite::tensor_type::INT32;
        if (out_type == tflite::tensor_type::BOOL) {
            // A comparison's 0/1 output carries no quantization, as the ELTWISE comparison's.
            l.tensors.back().zero = 0;
            l.tensors.back().scale = 1.0f;
        }
        std::vector<std::uint8_t> bytes;
        for (const auto& table : o.tables) {
            if (wide) {
                for (int plane = 0; plane < 4; ++plane)
                    for (auto v : table) bytes.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * plane)));
            } else {
                for (auto v : table) bytes.push_back(static_cast<std::uint8_t>(v));
            }
        }
        format::layer_options::ActivationOptions a{};
        a.input_range_radius = -1;
        a.count = -1;
        a.lut_count = static_cast<std::int32_t>(o.tables.size());
        a.vci_int8 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(bytes))};
        a.lut_int8 = format::absent_offset;
        a.idx_int8 = format::absent_offset;
        l.set(a);
    }
};

}  // namespace vnnx::ops
