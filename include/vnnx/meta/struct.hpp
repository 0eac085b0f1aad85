#pragma once
// VNNX_META_STRUCT(name, (type, field)...): declares the fields and generates, from the same
// list, a visitor over them and their count. This is the whole reflection of the records:
// plain member functions, no type-level tuples, so that a firmware host including only the
// records pays for their field lists and nothing else (BENCHMARKS.md, "Include cost").
// A field type must not contain a top-level comma (use an alias: i32s<6>, chars<48>).
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "vnnx/meta/pp.hpp"

namespace vnnx::meta {
/// Reads or writes the member `Member` of a struct: the accessor a field visit hands out.
template <auto Member>
struct member_access {
    template <class S>
    constexpr decltype(auto) operator()(S&& s) const noexcept {
        return (static_cast<S&&>(s).*Member);
    }
};
}  // namespace vnnx::meta

#define VNNX_META_DECLARE_I(type, name) type name;
#define VNNX_META_DECLARE(self, field) VNNX_META_DECLARE_I field
#define VNNX_META_COUNT(self, field) +1
#define VNNX_META_VISIT_I(self, type, name)                                               \
    visit_(::std::string_view{#name}, ::std::type_identity<type>{}, ::vnnx::meta::member_access<&self::name>{});
#define VNNX_META_VISIT_J(...) VNNX_META_VISIT_I(__VA_ARGS__)
#define VNNX_META_VISIT(self, field) VNNX_META_VISIT_J(self, VNNX_META_UNPAREN field)
#define VNNX_META_UNPAREN(...) __VA_ARGS__

#define VNNX_META_STRUCT(self, ...)                                                       \
    VNNX_PP_FOR_EACH(VNNX_META_DECLARE, self, __VA_ARGS__)                                \
    static constexpr ::std::size_t vnnx_field_count = 0 VNNX_PP_FOR_EACH(VNNX_META_COUNT, self, __VA_ARGS__); \
    /* Calls visit_(name, std::type_identity<type>, accessor) for every field, in order. */ \
    template <class Visit_>                                                               \
    static constexpr void vnnx_visit_fields(Visit_&& visit_) {                            \
        VNNX_PP_FOR_EACH(VNNX_META_VISIT, self, __VA_ARGS__)                              \
    }                                                                                     \
    using vnnx_reflected = void
