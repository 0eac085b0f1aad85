#pragma once
// A string usable as a template argument (C++20 class-type non-type parameter), so that a
// field can be named at compile time: offset_of_v<vnnx_tensor_t, "direct">.
#include <algorithm>
#include <cstddef>
#include <string_view>

namespace vnnx::meta {

template <std::size_t N>
struct fixed_string {
    char data[N]{};  // includes the terminating NUL

    constexpr fixed_string(const char (&s)[N]) noexcept { std::copy_n(s, N, data); }

    [[nodiscard]] constexpr std::string_view view() const noexcept { return {data, N - 1}; }
    [[nodiscard]] constexpr std::size_t size() const noexcept { return N - 1; }
    constexpr operator std::string_view() const noexcept { return view(); }

    template <std::size_t M>
    constexpr bool operator==(const fixed_string<M>& o) const noexcept { return view() == o.view(); }
};

template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N>;

}  // namespace vnnx::meta
