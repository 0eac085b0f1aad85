#pragma once
// The growing data blob of a VNNX file (the SDK calls it "weights"): parameters, I/O tables and
// I/O buffers. Every append is zero-padded to a multiple of 4 bytes (lowering.md §2.4); offsets
// returned are blob-relative and become model-relative at relocation (vnnx-format.md §7.2).
// The blob is most of the file: packed weights are written into it in place (extend), a capacity
// hint spares the copies of regrowth, and emit takes it over as the file's bytes (take).
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "vnnx/support/bytes.hpp"
#include "vnnx/support/huge_pages.hpp"

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
        if constexpr (sizeof(T) == 1 || std::endian::native == std::endian::little) {
            // The host's bytes are already little-endian: one copy, no zero fill first.
            const auto* p = reinterpret_cast<const std::byte*>(values.data());
            bytes_.insert(bytes_.end(), p, p + values.size() * sizeof(T));
        } else {
            const auto out = extend(values.size() * sizeof(T));
            for (std::size_t i = 0; i < values.size(); ++i) store_le<T>(out.data() + i * sizeof(T), values[i]);
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

    /// Appends `n` zero bytes for the caller to fill in place (no padding is added); the span is
    /// valid until the next append.
    std::span<std::byte> extend(std::size_t n) {
        const std::size_t from = bytes_.size();
        bytes_.resize(from + n);
        return {bytes_.data() + from, n};
    }

    /// Room for `n` bytes in all (blob and what emit puts in front of it): an over-estimate costs
    /// only address space, since pages are touched when written.
    void expect(std::size_t n) { reserve_huge(bytes_, n); }

    [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
    [[nodiscard]] std::span<std::byte> bytes() noexcept { return bytes_; }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }

    /// Hands the blob over (the section is left empty).
    [[nodiscard]] std::vector<std::byte> take() noexcept { return std::exchange(bytes_, {}); }

private:
    std::vector<std::byte> bytes_;
};

}  // namespace vnnx::compiler
