#pragma once
// Reflection over records whose fields are listed once with VNNX_META_STRUCT (meta/struct.hpp).
// From that list: the serialized size of a record (no padding anywhere, as in the VNNX
// format), every field's offset and size, and lookup by name at compile time.
//
// Serialized size of a field type:
//   arithmetic or enum         sizeof
//   std::array<E, N>           N * size(E)
//   a type with a static `serialized_size` member (offsets, union storage)
//   a reflected struct         sum of its fields
#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>
#include <utility>

#include "vnnx/meta/fixed_string.hpp"

namespace vnnx::meta {

template <class T>
struct is_std_array : std::false_type {};
template <class E, std::size_t N>
struct is_std_array<std::array<E, N>> : std::true_type {};

template <class T>
concept reflected = requires { typename T::vnnx_reflected; };

template <class T>
concept has_serialized_size = requires { { T::serialized_size } -> std::convertible_to<std::size_t>; };

template <class T>
constexpr std::size_t serialized_size_of();

/// Calls f(name, member type tag, accessor) for every field of a reflected struct, in order.
template <reflected T, class F>
constexpr void for_each_field(F&& f) {
    T::vnnx_visit_fields(f);
}

template <class T>
constexpr std::size_t serialized_size_of() {
    if constexpr (has_serialized_size<T>) {
        return T::serialized_size;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
        return sizeof(T);
    } else if constexpr (is_std_array<T>::value) {
        return std::tuple_size_v<T> * serialized_size_of<typename T::value_type>();
    } else if constexpr (reflected<T>) {
        std::size_t total = 0;
        for_each_field<T>([&](std::string_view, auto tag, auto) {
            total += serialized_size_of<typename decltype(tag)::type>();
        });
        return total;
    } else {
        static_assert(sizeof(T) == 0, "meta::serialized_size_v: type has no serialized form");
        return 0;
    }
}

/// Bytes a value of T takes in the file.
template <class T>
inline constexpr std::size_t serialized_size_v = serialized_size_of<T>();

/// One field as it sits in the serialized record.
struct field_info {
    std::string_view name;
    std::size_t offset;
    std::size_t size;
};

template <reflected T>
inline constexpr std::size_t field_count_v = T::vnnx_field_count;

namespace detail {
template <reflected T>
constexpr auto make_fields() {
    std::array<field_info, field_count_v<T>> out{};
    std::size_t i = 0, offset = 0;
    for_each_field<T>([&](std::string_view name, auto tag, auto) {
        const std::size_t size = serialized_size_of<typename decltype(tag)::type>();
        out[i++] = field_info{name, offset, size};
        offset += size;
    });
    return out;
}

template <reflected T>
consteval std::size_t find_field(std::string_view name) {
    const auto fields = make_fields<T>();
    for (std::size_t i = 0; i < fields.size(); ++i)
        if (fields[i].name == name) return i;
    // Not a constant expression: naming a field that does not exist fails to compile here.
    throw "meta::offset_of_v: no field of that name";
}
}  // namespace detail

/// Every field of T with its serialized offset and size, in declaration order.
template <reflected T>
inline constexpr auto fields_v = detail::make_fields<T>();

/// Serialized offset of field `Name` of T; a misspelt name does not compile.
template <reflected T, fixed_string Name>
inline constexpr std::size_t offset_of_v = fields_v<T>[detail::find_field<T>(Name.view())].offset;

/// Serialized size of field `Name` of T.
template <reflected T, fixed_string Name>
inline constexpr std::size_t field_size_v = fields_v<T>[detail::find_field<T>(Name.view())].size;

}  // namespace vnnx::meta
