#pragma once
// The growing data blob of a VNNX file (the SDK calls it "weights"): parameters, I/O tables and
// I/O buffers. Every append is zero-padded to a multiple of 4 bytes (lowering.md §2.4); offsets
// returned are blob-relative and become model-relative at relocation (vnnx-format.md §7.2).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <vector>

#include "vnnx/support/bytes.hpp"

namespace vnnx::compiler {

class data_section {
public:
    /// Pads with zeros so that the next append starts at a multiple of `alignment`.
    void align(std::size_t alignment) { bytes_.resize(static_cast<std::size_t>(round_up(bytes_.size(), alignment))); }

    /// Appends raw bytes; returns their blob-relative offset.
    std::int64_t append_bytes(std::span<const std::byte> data) {
        const auto at = static_cast<std::int64_t>(bytes_.size());
        bytes_.insert(bytes_.end(), data.begin(), data.end());
        align(4);
        return at;
    }

    /// Appends integers or floats little-endian; returns their blob-relative offset.
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int64_t append(std::span<const T> values) {
        const auto at = static_cast<std::int64_t>(bytes_.size());
        const std::size_t base = bytes_.size();
        bytes_.resize(base + values.size() * sizeof(T));
        if constexpr (sizeof(T) == 1 || std::endian::native == std::endian::little) {
            // The host's bytes are already little-endian: one copy (weights are megabytes).
            if (!values.empty()) std::memcpy(bytes_.data() + base, values.data(), values.size() * sizeof(T));
        } else {
            for (std::size_t i = 0; i < values.size(); ++i) store_le<T>(bytes_.data() + base + i * sizeof(T), values[i]);
        }
        align(4);
        return at;
    }
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int64_t append(const std::vector<T>& values) {
        return append(std::span<const T>(values));
    }
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int64_t append_one(T value) {
        return append(std::span<const T>(&value, 1));
    }

    /// Reserves `n` zero bytes (I/O buffers) and returns their offset.
    std::int64_t reserve(std::size_t n) {
        const auto at = static_cast<std::int64_t>(bytes_.size());
        bytes_.resize(bytes_.size() + n);
        align(4);
        return at;
    }

    [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
    [[nodiscard]] std::span<std::byte> bytes() noexcept { return bytes_; }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

}  // namespace vnnx::compiler
