#pragma once
// Little-endian serialization of reflected records: field after field, no padding, every
// scalar through store_le/load_le (memcpy), never by casting a packed struct.
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "vnnx/meta/reflect.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::format {

/// `obj_off_t`: a byte offset from the first byte of the graph header; all ones = absent.
/// A type of its own so that the reader can find and check every offset field.
struct obj_off_t {
    static constexpr std::uint64_t absent_value = ~std::uint64_t{0};
    static constexpr std::size_t serialized_size = 8;

    std::uint64_t value = absent_value;  // the SDK's default for an unset offset is -1

    [[nodiscard]] constexpr bool absent() const noexcept { return value == absent_value; }
    constexpr bool operator==(const obj_off_t&) const = default;

    void encode_to(std::byte* dst) const noexcept { store_le<std::uint64_t>(dst, value); }
    static obj_off_t decode_from(const std::byte* src) noexcept { return {load_le<std::uint64_t>(src)}; }
};

inline constexpr obj_off_t absent_offset{};
[[nodiscard]] constexpr obj_off_t offset_at(std::uint64_t v) noexcept { return obj_off_t{v}; }

template <class T>
concept custom_codec = requires(const T& v, std::byte* dst, const std::byte* src) {
    v.encode_to(dst);
    { T::decode_from(src) } -> std::same_as<T>;
};

/// Writes v's serialized form (meta::serialized_size_v<T> bytes) at dst.
template <class T>
void encode(std::byte* dst, const T& v) noexcept {
    if constexpr (custom_codec<T>) {
        v.encode_to(dst);
    } else if constexpr (le_scalar<T>) {
        store_le<T>(dst, v);
    } else if constexpr (meta::is_std_array<T>::value) {
        constexpr std::size_t step = meta::serialized_size_v<typename T::value_type>;
        for (std::size_t i = 0; i < v.size(); ++i) encode(dst + i * step, v[i]);
    } else {
        static_assert(meta::reflected<T>, "format::encode: type has no serialized form");
        constexpr auto fields = meta::fields_v<T>;
        std::size_t i = 0;
        meta::for_each_field<T>([&](std::string_view, auto, auto get) { encode(dst + fields[i++].offset, get(v)); });
    }
}

/// Reads a T from its serialized form at src (meta::serialized_size_v<T> bytes).
template <class T>
[[nodiscard]] T decode(const std::byte* src) noexcept {
    if constexpr (custom_codec<T>) {
        return T::decode_from(src);
    } else if constexpr (le_scalar<T>) {
        return load_le<T>(src);
    } else if constexpr (meta::is_std_array<T>::value) {
        constexpr std::size_t step = meta::serialized_size_v<typename T::value_type>;
        T out{};
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode<typename T::value_type>(src + i * step);
        return out;
    } else {
        static_assert(meta::reflected<T>, "format::decode: type has no serialized form");
        constexpr auto fields = meta::fields_v<T>;
        T out{};
        std::size_t i = 0;
        meta::for_each_field<T>([&](std::string_view, auto tag, auto get) {
            get(out) = decode<typename decltype(tag)::type>(src + fields[i++].offset);
        });
        return out;
    }
}

/// The serialized bytes of one record.
template <class T>
[[nodiscard]] std::array<std::byte, meta::serialized_size_v<T>> to_bytes(const T& v) noexcept {
    std::array<std::byte, meta::serialized_size_v<T>> out{};
    encode(out.data(), v);
    return out;
}

/// Emitter: writes record v into buf at byte `offset`. Throws when it does not fit.
template <class T>
void emit(std::span<std::byte> buf, std::size_t offset, const T& v) {
    constexpr std::size_t size = meta::serialized_size_v<T>;
    if (offset > buf.size() || buf.size() - offset < size)
        throw error(error_kind::limit, "emit: a record of " + std::to_string(size) + " bytes at offset " +
                                           std::to_string(offset) + " does not fit in a buffer of " +
                                           std::to_string(buf.size()) + " bytes");
    encode(buf.data() + offset, v);
}

/// Emitter: appends record v to the end of out.
template <class T>
void append(std::vector<std::byte>& out, const T& v) {
    const std::size_t at = out.size();
    out.resize(at + meta::serialized_size_v<T>);
    encode(out.data() + at, v);
}

/// Bounds-checked read of a record at `offset`; `source` and `what` name it in the error.
template <class T>
[[nodiscard]] T read_record(std::span<const std::byte> bytes, std::uint64_t offset, std::string_view source,
                            std::string_view what) {
    constexpr std::size_t size = meta::serialized_size_v<T>;
    if (offset > bytes.size() || bytes.size() - offset < size)
        fail_input(std::string(source) + ": " + std::string(what) + " at offset " + std::to_string(offset) +
                   " needs " + std::to_string(size) + " bytes but the file has " + std::to_string(bytes.size()));
    return decode<T>(bytes.data() + offset);
}

}  // namespace vnnx::format
