#pragma once
// The record layouts as data, computed by walking the compile-time field lists: every
// record's size, every field's offset and size, every union member with its fields (offsets
// relative to the member's start). `vnnx layout` prints it; std only (no fmt), so firmware
// hosts can use it too.
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "vnnx/meta/reflect.hpp"
#include "vnnx/format/enums.hpp"
#include "vnnx/format/layout_asserts.hpp"
#include "vnnx/format/records.hpp"

namespace vnnx::format {

struct member_layout {
    std::string_view name;
    std::size_t offset = 0;  // of the union inside the record
    std::size_t size = 0;    // of this member
    std::vector<meta::field_info> fields;
};

struct record_layout {
    std::string_view name;
    std::size_t size = 0;
    std::vector<meta::field_info> fields;  // the union itself is not a field: see unions
    std::vector<member_layout> unions;
};

namespace detail {
template <class R>
record_layout layout_of() {
    record_layout out;
    out.name = R::record_name;
    out.size = meta::serialized_size_v<R>;
    std::size_t i = 0;
    meta::for_each_field<R>([&](std::string_view, auto tag, auto) {
        using T = typename decltype(tag)::type;
        const meta::field_info f = meta::fields_v<R>[i++];
        if constexpr (requires { typename T::descriptor; }) {
            T::descriptor::for_each_member([&](auto member_tag) {
                using M = typename decltype(member_tag)::type;
                const auto& mf = meta::fields_v<M>;
                out.unions.push_back({M::member_name, f.offset, meta::serialized_size_v<M>, {mf.begin(), mf.end()}});
            });
        } else {
            out.fields.push_back(f);
        }
    });
    return out;
}
}  // namespace detail

/// The five records, in the order the firmware header is usually read.
[[nodiscard]] inline std::vector<record_layout> layouts() {
    return {detail::layout_of<vnnx_graph_t>(), detail::layout_of<vnnx_layer_t>(),
            detail::layout_of<vnnx_subgraph_node_t>(), detail::layout_of<vnnx_tensor_t>(),
            detail::layout_of<indirect_ptr_t>()};
}

/// The layouts as JSON: {"version": "0x2330b149", "structs": {name: {"size", "fields", "unions"}}}.
[[nodiscard]] inline std::string layout_json() {
    const auto field_list = [](const std::vector<meta::field_info>& fields, const std::string& indent) {
        std::string s = "{";
        for (std::size_t i = 0; i < fields.size(); ++i) {
            s += i == 0 ? "\n" : ",\n";
            s += indent + "\"" + std::string(fields[i].name) + "\": {\"offset\": " + std::to_string(fields[i].offset) +
                 ", \"size\": " + std::to_string(fields[i].size) + "}";
        }
        return s + "}";
    };
    static constexpr char digits[] = "0123456789abcdef";
    std::string version = "0x";
    for (int sh = 28; sh >= 0; sh -= 4) version += digits[(graph_version >> sh) & 0xF];

    std::string s = "{\"version\": \"" + version + "\",\n \"structs\": {";
    const auto all = layouts();
    for (std::size_t r = 0; r < all.size(); ++r) {
        const auto& rec = all[r];
        s += r == 0 ? "\n" : ",\n";
        s += "  \"" + std::string(rec.name) + "\": {\"size\": " + std::to_string(rec.size) +
             ",\n   \"fields\": " + field_list(rec.fields, "    ") + ",\n   \"unions\": {";
        for (std::size_t u = 0; u < rec.unions.size(); ++u) {
            const auto& m = rec.unions[u];
            s += u == 0 ? "\n" : ",\n";
            s += "    \"" + std::string(m.name) + "\": {\"offset\": " + std::to_string(m.offset) +
                 ", \"size\": " + std::to_string(m.size) + ", \"fields\": " + field_list(m.fields, "      ") + "}";
        }
        s += "}}";
    }
    return s + "}}\n";
}

}  // namespace vnnx::format
