#pragma once
// A union described as a list of member types. Each member is a reflected struct that names
// itself (`member_name`); the union's size is the largest member's serialized size.
#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

#include "vnnx/meta/reflect.hpp"
#include "vnnx/meta/set.hpp"

namespace vnnx::meta {

template <class T>
concept union_member = reflected<T> && requires { { T::member_name } -> std::convertible_to<std::string_view>; };

template <union_member... Members>
struct union_of {
    using members = set<Members...>;
    static constexpr std::size_t member_count = sizeof...(Members);
    static constexpr std::size_t size = std::max({serialized_size_v<Members>...});
    static constexpr std::array<std::string_view, member_count> names{Members::member_name...};

    template <class M>
    static constexpr bool holds = members::template contains<M>;

    /// Index of the member called `name`, or member_count.
    [[nodiscard]] static constexpr std::size_t index_of_name(std::string_view name) noexcept {
        for (std::size_t i = 0; i < member_count; ++i)
            if (names[i] == name) return i;
        return member_count;
    }

    template <class F>
    static constexpr void for_each_member(F&& f) { members::for_each(f); }
};

}  // namespace vnnx::meta
