#pragma once
// Compile-time sets: operator traits state their constraints (allowed activations, paddings,
// axes, element types) as sets, and the check is a constant expression.
#include <cstddef>
#include <type_traits>

namespace vnnx::meta {

/// A set of values known at compile time. Duplicates are rejected so that size() is honest.
template <auto... Vs>
struct value_set {
    static constexpr std::size_t size = sizeof...(Vs);

    template <class V>
    [[nodiscard]] static constexpr bool contains(const V& v) noexcept {
        return ((Vs == v) || ... || false);
    }

    /// Calls f(v) for every element, in declaration order.
    template <class F>
    static constexpr void for_each(F&& f) { (f(Vs), ...); }

private:
    static constexpr bool unique() noexcept {
        constexpr std::size_t n = sizeof...(Vs);
        if constexpr (n < 2) {
            return true;
        } else {
            const std::common_type_t<decltype(Vs)...> a[n]{Vs...};
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = i + 1; j < n; ++j)
                    if (a[i] == a[j]) return false;
            return true;
        }
    }
    static_assert(unique(), "meta::value_set: duplicate value");
};

/// A set of types known at compile time.
template <class... Ts>
struct set {
    static constexpr std::size_t size = sizeof...(Ts);

    template <class T>
    static constexpr bool contains = (std::is_same_v<T, Ts> || ... || false);

    /// Position of T in the list (size when absent).
    template <class T>
    static constexpr std::size_t index_of = [] {
        std::size_t i = 0;
        ((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
        return i;
    }();

    template <class F>
    static constexpr void for_each(F&& f) { (f(std::type_identity<Ts>{}), ...); }
};

}  // namespace vnnx::meta
