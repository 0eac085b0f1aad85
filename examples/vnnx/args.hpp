#pragma once
// A small declarative argument parser for the vnnx tool: each command lists its options
// once; the same list drives parsing, `--help` and "did you mean" suggestions.
#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "vnnx/support/error.hpp"

namespace vnnx::cli {

struct option_spec {
    std::string_view long_name;   // without the leading "--"
    std::string_view short_name;  // without the leading "-", may be empty
    std::string_view value_name;  // empty: a flag without a value
    std::string_view help;
    bool repeatable = false;      // values may follow one flag (-i a.npy b.npy) or the flag may repeat
};

class parsed_args {
public:
    [[nodiscard]] bool has(std::string_view name) const { return values_.count(std::string(name)) != 0; }
    [[nodiscard]] std::optional<std::string> get(std::string_view name) const {
        auto it = values_.find(std::string(name));
        if (it == values_.end() || it->second.empty()) return std::nullopt;
        return it->second.back();
    }
    [[nodiscard]] std::vector<std::string> all(std::string_view name) const {
        auto it = values_.find(std::string(name));
        return it == values_.end() ? std::vector<std::string>{} : it->second;
    }
    [[nodiscard]] const std::vector<std::string>& positional() const { return positional_; }

    std::map<std::string, std::vector<std::string>> values_;
    std::vector<std::string> positional_;
};

namespace detail {
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j)
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0u : 1u)});
        std::swap(prev, cur);
    }
    return prev[b.size()];
}
}  // namespace detail

/// The closest of `candidates` to `word`, if any is reasonably close.
inline std::optional<std::string> nearest(std::string_view word, const std::vector<std::string>& candidates) {
    std::optional<std::string> best;
    std::size_t best_d = std::max<std::size_t>(2, word.size() / 2) + 1;
    for (const auto& c : candidates) {
        const std::size_t d = detail::edit_distance(word, c);
        if (d < best_d) best_d = d, best = c;
    }
    return best;
}

[[noreturn]] inline void usage_error(std::string what) { throw vnnx::error(error_kind::usage, std::move(what)); }

inline parsed_args parse(std::string_view command, const std::vector<option_spec>& specs,
                         const std::vector<std::string>& argv) {
    parsed_args out;
    auto find = [&](std::string_view tok) -> const option_spec* {
        for (const auto& s : specs) {
            if (tok.starts_with("--") && tok.substr(2) == s.long_name) return &s;
            if (!s.short_name.empty() && tok.size() > 1 && tok[0] == '-' && tok[1] != '-' && tok.substr(1) == s.short_name)
                return &s;
        }
        return nullptr;
    };
    auto spelled = [&] {
        std::vector<std::string> names{"--help"};
        for (const auto& s : specs) {
            names.push_back(fmt::format("--{}", s.long_name));
            if (!s.short_name.empty()) names.push_back(fmt::format("-{}", s.short_name));
        }
        return names;
    };
    for (std::size_t i = 0; i < argv.size(); ++i) {
        std::string tok = argv[i];
        std::optional<std::string> inline_value;
        if (tok.starts_with("--") && tok.find('=') != std::string::npos) {
            inline_value = tok.substr(tok.find('=') + 1);
            tok = tok.substr(0, tok.find('='));
        }
        if (tok == "--") {
            for (++i; i < argv.size(); ++i) out.positional_.push_back(argv[i]);
            break;
        }
        if (tok.size() < 2 || tok[0] != '-' || (tok.size() > 1 && std::isdigit(static_cast<unsigned char>(tok[1])))) {
            out.positional_.push_back(tok);
            continue;
        }
        const option_spec* s = find(tok);
        if (s == nullptr) {
            auto near = nearest(tok, spelled());
            usage_error(near ? fmt::format("{}: unknown option '{}'; did you mean '{}'?", command, tok, *near)
                             : fmt::format("{}: unknown option '{}'; see 'vnnx {} --help'", command, tok, command));
        }
        auto& slot = out.values_[std::string(s->long_name)];
        if (s->value_name.empty()) {
            if (inline_value) usage_error(fmt::format("{}: option '--{}' takes no value", command, s->long_name));
            slot.emplace_back("1");
            continue;
        }
        if (!s->repeatable && !slot.empty())
            usage_error(fmt::format("{}: option '--{}' given more than once", command, s->long_name));
        if (inline_value) {
            slot.push_back(*inline_value);
            continue;
        }
        std::size_t taken = 0;
        while (i + 1 < argv.size()) {
            const std::string& next = argv[i + 1];
            const bool is_option = next.size() > 1 && next[0] == '-' && !std::isdigit(static_cast<unsigned char>(next[1]));
            if (is_option) break;
            if (taken == 1 && !s->repeatable) break;
            slot.push_back(next);
            ++i;
            ++taken;
            if (!s->repeatable) break;
        }
        if (taken == 0)
            usage_error(fmt::format("{}: option '{}' needs a value <{}>", command, tok, s->value_name));
    }
    return out;
}

inline std::string options_help(const std::vector<option_spec>& specs) {
    std::string out = "options:\n";
    for (const auto& s : specs) {
        std::string left = s.short_name.empty() ? fmt::format("    --{}", s.long_name)
                                                : fmt::format("  -{}, --{}", s.short_name, s.long_name);
        if (!s.value_name.empty()) left += fmt::format(" {}{}", s.value_name, s.repeatable ? " ..." : "");
        out += fmt::format("{:<34} {}\n", left, s.help);
    }
    out += fmt::format("{:<34} {}\n", "  -h, --help", "show this help");
    return out;
}

}  // namespace vnnx::cli
