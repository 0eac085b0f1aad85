#pragma once
// What every sub-command of the vnnx tool provides. Each command lives in a header of its
// own (cmd_<name>.hpp) and is listed once in main.cpp.
#include <string>
#include <string_view>
#include <vector>

#include "args.hpp"

namespace vnnx::cli {

struct command {
    std::string_view name;
    std::string_view summary;   // one line for `vnnx --help`
    std::string_view usage;     // synopsis line(s)
    std::string_view details;   // free text after the options (examples)
    std::vector<option_spec> options;
    int (*run)(const parsed_args&);
};

inline std::string help_text(const command& c) {
    std::string out = fmt::format("usage: {}\n\n{}\n\n", c.usage, c.summary);
    out += options_help(c.options);
    if (!c.details.empty()) out += fmt::format("\n{}\n", c.details);
    return out;
}

}  // namespace vnnx::cli
