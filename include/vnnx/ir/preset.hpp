#pragma once
// What the tiler and the weight packer derive from a hardware size preset: usable scratchpad, FIA
// shaper buffer sizes, scratchpad alignment (lowering.md §2.6, §10.4.2; SDK vnnx_allocation.py shaper
// bank counts and bank sizes). The preset table itself is the format layer's (format/enums.hpp).
// Only ncomp (uncompressed weights) is modelled.
#include <array>
#include <cstdint>
#include <string_view>

#include "vnnx/format/enums.hpp"

namespace vnnx::compiler {

using format::preset;

struct preset_info {
    std::string_view name;
    std::uint32_t id;  // header field vbx_nn_preset
    int vector_lanes;
    int filter_copies;
    int parallel_output_maps;  // P
    int scratchpad_kb;

    [[nodiscard]] static constexpr preset_info from(const format::preset_params& p) {
        return {p.name,
                static_cast<std::uint32_t>(p.id),
                static_cast<int>(p.vector_lanes),
                static_cast<int>(p.filter_copies),
                static_cast<int>(p.parallel_output_maps),
                static_cast<int>(p.scratchpad_kb)};
    }

    // The runtime keeps 256 bytes of the scratchpad for itself.
    [[nodiscard]] constexpr int usable_scratchpad() const { return scratchpad_kb * 1024 - 256; }
    // ncomp: input shaper = FILTER_COPIES x 2 banks x 2 KB, weight shaper = P x 2 banks x 1 KB.
    static constexpr int input_shaper_banks = 2;
    static constexpr int weight_shaper_banks = 2;
    [[nodiscard]] constexpr int input_shaper_bytes() const { return filter_copies * input_shaper_banks * 2048; }
    [[nodiscard]] constexpr int weight_shaper_bytes() const {
        return parallel_output_maps * weight_shaper_banks * 1024;
    }
    [[nodiscard]] constexpr int input_shaper_bank_bytes() const { return input_shaper_bytes() / input_shaper_banks; }
    [[nodiscard]] constexpr int weight_shaper_bank_bytes() const {
        return weight_shaper_bytes() / weight_shaper_banks;
    }
    // 1024 quantization records of 8 bytes.
    static constexpr int quantization_shaper_bytes = 8192;
    static constexpr int quantization_record_bytes = 8;
    // Scratchpad buffers are aligned to 4 bytes per vector lane.
    [[nodiscard]] constexpr int align_unit() const { return 4 * vector_lanes; }
    [[nodiscard]] constexpr long long align(long long bytes) const {
        const long long a = align_unit();
        return (bytes + a - 1) / a * a;
    }
};

inline constexpr std::array<preset_info, format::presets.size()> preset_table = [] {
    std::array<preset_info, format::presets.size()> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = preset_info::from(format::presets[i]);
    return t;
}();

[[nodiscard]] constexpr const preset_info& info(preset p) { return preset_table[static_cast<std::size_t>(p)]; }

static_assert(info(preset::V250).usable_scratchpad() == 32512);
static_assert(info(preset::V500).usable_scratchpad() == 65280);
static_assert(info(preset::V1000).usable_scratchpad() == 130816);
static_assert(info(preset::V1000).input_shaper_bytes() / 2 == 32768);
static_assert(info(preset::V250).weight_shaper_bytes() / 2 == 8192);

}  // namespace vnnx::compiler
