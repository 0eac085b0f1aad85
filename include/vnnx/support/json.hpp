#pragma once
// The two pieces every JSON view of the tool is built from (`vnnx info --json`, `vnnx ops --json`,
// `vnnx compile --report`): a quoted, escaped string and a list of already formatted items.
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace vnnx::json {

/// `s` as a JSON string literal: quotes and backslashes escaped, control bytes as \n, \t, \r or
/// \u00XX; other bytes pass through (model names are UTF-8).
inline std::string quote(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) out += fmt::format("\\u{:04x}", c);
                else out += ch;
        }
    }
    return out + "\"";
}

/// `[a, b, ...]` of the items as fmt prints them (numbers, or strings already quoted).
template <class Range>
std::string list(const Range& r) {
    std::string out = "[";
    bool first = true;
    for (const auto& v : r) {
        out += fmt::format("{}{}", first ? "" : ", ", v);
        first = false;
    }
    return out + "]";
}

}  // namespace vnnx::json
