#pragma once
// Hardware size presets of the VectorBlox core (lowering.md §2.6, vnnx-format.md §5.6) and the FIA
// buffer sizes derived from them (SDK vnnx_allocation.py: shaper bank counts and bank sizes).
// Only ncomp (uncompressed weights) is modelled.
#include <array>
#include <cstdint>
#include <string_view>

namespace vnnx::compiler {

enum class preset : std::uint32_t { v250 = 0, v500 = 1, v1000 = 2, v2000 = 3, v4000 = 4 };

struct preset_info {
    std::string_view name;
    std::uint32_t id;  // header field vbx_nn_preset
    int vector_lanes;
    int filter_copies;
    int parallel_output_maps;  // P
    int scratchpad_kb;

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

inline constexpr std::array<preset_info, 5> preset_table{{
    {"V250", 0, 2, 8, 8, 32},
    {"V500", 1, 4, 8, 16, 64},
    {"V1000", 2, 8, 16, 16, 128},
    {"V2000", 3, 16, 32, 32, 256},
    {"V4000", 4, 16, 32, 32, 256},
}};

[[nodiscard]] constexpr const preset_info& info(preset p) { return preset_table[static_cast<std::size_t>(p)]; }

static_assert(info(preset::v250).usable_scratchpad() == 32512);
static_assert(info(preset::v500).usable_scratchpad() == 65280);
static_assert(info(preset::v1000).usable_scratchpad() == 130816);

}  // namespace vnnx::compiler
