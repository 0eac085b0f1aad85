#pragma once
// Enumerations and constants of the VNNX format (vnnx-format.md §5, §8), with the numeric
// values of the firmware header. TFLite's BuiltinOperator codes are in builtin_operator.hpp.
#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace vnnx::format {

/// `magic` at header offset 76.
inline constexpr std::uint32_t magic = 0x1ABE11EDu;
/// First 8 hex digits of the MD5 of the firmware's vnnx-types.h: tied to this exact layout.
inline constexpr std::uint32_t graph_version = 0x2330B149u;

/// Element type of tensors and of node/layer inputs and outputs (`calc_type_e`).
enum class calc_type : std::int32_t {
    CALC_TYPE_UINT8 = 0,  // also TFLite BOOL
    CALC_TYPE_INT8 = 1,
    CALC_TYPE_INT16 = 2,
    CALC_TYPE_INT32 = 3,
    CALC_TYPE_UNKNOWN = 4,
};

/// Bytes per element, or 0 for CALC_TYPE_UNKNOWN and values outside the enum.
[[nodiscard]] constexpr std::uint32_t element_size(std::int32_t type) noexcept {
    switch (type) {
        case 0: case 1: return 1;
        case 2: return 2;
        case 3: return 4;
        default: return 0;
    }
}

/// VNNX-specific operator codes, disjoint from TFLite's 0..205 (`VNNXOperator`).
enum class vnnx_operator : std::int32_t {
    IDENTITY = 300,
    ELTWISE = 301,
    PREFETCH = 302,
    LUT = 303,
    PIXEL_SHUFFLE = 304,
    OUTPUT_SHAPER = 305,
    UNKNOWN_SUBGRAPH = 306,
};

/// Kind of an ELTWISE layer (`eltwise8.type`, `eltwise_type_e`).
enum class eltwise_type : std::int32_t {
    ELTWISE_ADD = 0,
    ELTWISE_MUL = 1,
    ELTWISE_SUB = 2,
    ELTWISE_DIV = 3,
    ELTWISE_GREATER = 4,
    ELTWISE_GREATER_EQUAL = 5,
    ELTWISE_LESS = 6,
    ELTWISE_LESS_EQUAL = 7,
    ELTWISE_EQUAL = 8,
    ELTWISE_NOT_EQUAL = 9,
    ELTWISE_MINIMUM = 10,
    ELTWISE_MAXIMUM = 11,
    ELTWISE_SQUARED_DIFFERENCE = 12,
};

/// `ResizeOptions.mode` (`resize_mode_e`).
enum class resize_mode : std::int32_t {
    RESIZE_NEAREST = 0,
    RESIZE_LINEAR = 1,
};

/// Header `sparsity`: the core's compression configuration (`vbx_cnn_comp_conf_e`).
enum class compression : std::int32_t {
    ncomp = 0,  // no compression
    comp = 1,   // structured (sparse weights)
    ucomp = 2,  // unstructured, external NX engine
};

/// Header `vbx_nn_preset`: the core size (`vbx_cnn_size_conf_e`).
enum class preset : std::uint32_t { V250 = 0, V500 = 1, V1000 = 2, V2000 = 3, V4000 = 4 };

/// What the compiler derives from a preset (lowering.md §2.6).
struct preset_params {
    preset id;
    std::string_view name;
    std::uint32_t vector_lanes;
    std::uint32_t filter_copies;
    std::uint32_t parallel_output_maps;
    std::uint32_t scratchpad_kb;
};

inline constexpr std::array<preset_params, 5> presets{{
    {preset::V250, "V250", 2, 8, 8, 32},
    {preset::V500, "V500", 4, 8, 16, 64},
    {preset::V1000, "V1000", 8, 16, 16, 128},
    {preset::V2000, "V2000", 16, 32, 32, 256},
    {preset::V4000, "V4000", 16, 32, 32, 256},
}};

[[nodiscard]] constexpr const preset_params& params(preset p) noexcept {
    return presets[static_cast<std::uint32_t>(p)];
}

[[nodiscard]] constexpr std::optional<preset> preset_from_name(std::string_view name) noexcept {
    for (const auto& p : presets)
        if (p.name == name) return p.id;
    return std::nullopt;
}

[[nodiscard]] constexpr std::optional<compression> compression_from_name(std::string_view name) noexcept {
    if (name == "ncomp") return compression::ncomp;
    if (name == "comp") return compression::comp;
    if (name == "ucomp") return compression::ucomp;
    return std::nullopt;
}

[[nodiscard]] constexpr std::string_view name_of(vnnx_operator op) noexcept {
    switch (op) {
        case vnnx_operator::IDENTITY: return "IDENTITY";
        case vnnx_operator::ELTWISE: return "ELTWISE";
        case vnnx_operator::PREFETCH: return "PREFETCH";
        case vnnx_operator::LUT: return "LUT";
        case vnnx_operator::PIXEL_SHUFFLE: return "PIXEL_SHUFFLE";
        case vnnx_operator::OUTPUT_SHAPER: return "OUTPUT_SHAPER";
        case vnnx_operator::UNKNOWN_SUBGRAPH: return "UNKNOWN_SUBGRAPH";
    }
    return {};
}

}  // namespace vnnx::format
