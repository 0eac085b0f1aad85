#pragma once
// VNNX_META_STRUCT(name, (type, field)...): declares the fields and makes the struct a
// Boost.Hana Struct, like BOOST_HANA_DEFINE_STRUCT but without its 40-field limit.
// A field type must not contain a top-level comma (use an alias: i32s<6>, chars<48>).
#include <boost/hana/pair.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/tuple.hpp>

#include "vnnx/meta/pp.hpp"

namespace vnnx::meta::detail {
template <class... Pairs>
constexpr auto accessor_tuple(int, Pairs... pairs) {
    return boost::hana::make_tuple(pairs...);
}
}  // namespace vnnx::meta::detail

#define VNNX_META_DECLARE_I(type, name) type name;
#define VNNX_META_DECLARE(self, field) VNNX_META_DECLARE_I field
#define VNNX_META_ACCESSOR_I(self, type, name)                                         \
    , ::boost::hana::make_pair(BOOST_HANA_STRING(#name),                                \
                               [](auto&& s) -> decltype(auto) { return (static_cast<decltype(s)&&>(s).name); })
#define VNNX_META_ACCESSOR_J(...) VNNX_META_ACCESSOR_I(__VA_ARGS__)
#define VNNX_META_ACCESSOR(self, field) VNNX_META_ACCESSOR_J(self, VNNX_META_UNPAREN field)
#define VNNX_META_UNPAREN(...) __VA_ARGS__

#define VNNX_META_STRUCT(self, ...)                                                    \
    VNNX_PP_FOR_EACH(VNNX_META_DECLARE, self, __VA_ARGS__)                             \
    struct hana_accessors_impl {                                                       \
        static constexpr auto apply() {                                                \
            return ::vnnx::meta::detail::accessor_tuple(0 VNNX_PP_FOR_EACH(VNNX_META_ACCESSOR, self, __VA_ARGS__)); \
        }                                                                              \
    }
