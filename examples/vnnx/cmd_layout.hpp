#pragma once
// `vnnx layout [--json]`: every record's size and every field's offset and size, straight from
// the compile-time field lists (the same lists the emitter and the reader use).
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "command.hpp"
#include "vnnx/format/layout_json.hpp"

namespace vnnx::cli {

namespace detail {
inline std::string layout_table() {
    std::string out = fmt::format("VNNX record layouts (graph_version 0x{:08x}, magic 0x{:08X})\n",
                                  format::graph_version, format::magic);
    for (const auto& rec : format::layouts()) {
        out += fmt::format("\n{} ({} bytes)\n  {:>6}  {:>5}  {}\n", rec.name, rec.size, "offset", "size", "field");
        for (const auto& f : rec.fields) out += fmt::format("  {:>6}  {:>5}  {}\n", f.offset, f.size, f.name);
        if (rec.unions.empty()) continue;
        out += fmt::format("  {:>6}  {:>5}  union of {} members:\n", rec.unions.front().offset,
                           rec.size - rec.unions.front().offset, rec.unions.size());
        for (const auto& m : rec.unions) {
            out += fmt::format("\n  {}.{} ({} bytes, union offset {})\n", rec.name, m.name, m.size, m.offset);
            for (const auto& f : m.fields)
                out += fmt::format("    {:>6} {:>6}  {:>5}  {}\n", f.offset, f.offset + m.offset, f.size, f.name);
        }
    }
    out += "\nUnion member rows: offset inside the member, offset inside the record, size, field.\n";
    return out;
}

inline int run_layout(const parsed_args& args) {
    if (!args.positional().empty())
        usage_error(fmt::format("layout: unexpected argument '{}'; see 'vnnx layout --help'", args.positional().front()));
    const std::string text = args.has("json") ? format::layout_json() : layout_table();
    std::fputs(text.c_str(), stdout);
    return 0;
}
}  // namespace detail

inline const command layout_command{
    "layout",
    "print every VNNX record's size and field offsets (firmware header layout)",
    "vnnx layout [--json]",
    "Sizes and offsets are computed at compile time from the record definitions and match the\n"
    "firmware header vnnx-types.h. Union member fields are listed with offsets relative to the\n"
    "member's start.",
    {{"json", "", "", "print JSON: {\"version\", \"structs\": {name: {size, fields, unions}}}"}},
    &detail::run_layout,
};

}  // namespace vnnx::cli
