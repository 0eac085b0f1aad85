// The vnnx command-line tool: one binary, one sub-command per job.
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "vnnx/support/limits.hpp"
#include "cmd_layout.hpp"
#include "cmd_info.hpp"
#include "cmd_compile.hpp"
#include "cmd_infer.hpp"
#include "cmd_compare.hpp"
#include "cmd_demo.hpp"
#include "cmd_ops.hpp"

#ifndef VNNX_VERSION_STRING
#define VNNX_VERSION_STRING "0.0.0"
#endif

namespace vnnx::cli {

// Every command, in the order `vnnx --help` lists them.
inline const std::vector<const command*>& all_commands() {
    static const std::vector<const command*> list{
        &layout_command,
        &info_command,
        &compile_command,
        &infer_command,
        &compare_command,
        &demo_command,
        &ops_command,
    };
    return list;
}

inline std::string tool_help() {
    std::string out =
        "vnnx " VNNX_VERSION_STRING " - compile int8 TensorFlow Lite models to VectorBlox VNNX and simulate them\n\n"
        "usage: vnnx <command> [options]\n       vnnx help <command>\n       vnnx --version\n\ncommands:\n";
    for (const command* c : all_commands()) out += fmt::format("  {:<10} {}\n", c->name, c->summary);
    out += "\nRun 'vnnx <command> --help' for the options of a command.\n";
    return out;
}

inline const command* find_command(std::string_view name) {
    for (const command* c : all_commands())
        if (c->name == name) return c;
    return nullptr;
}

[[noreturn]] inline void unknown_command(std::string_view name) {
    std::vector<std::string> names;
    for (const command* c : all_commands()) names.emplace_back(c->name);
    auto near = nearest(name, names);
    usage_error(near ? fmt::format("unknown command '{}'; did you mean '{}'?", name, *near)
                     : fmt::format("unknown command '{}'; see 'vnnx --help'", name));
}

inline int main_impl(const std::vector<std::string>& args) {
    if (args.empty()) {
        std::fputs(tool_help().c_str(), stderr);
        return 2;
    }
    const std::string& first = args[0];
    if (first == "--help" || first == "-h") {
        std::fputs(tool_help().c_str(), stdout);
        return 0;
    }
    if (first == "--version") {
        std::puts("vnnx " VNNX_VERSION_STRING);
        return 0;
    }
    if (first == "help") {
        if (args.size() == 1) {
            std::fputs(tool_help().c_str(), stdout);
            return 0;
        }
        const command* c = find_command(args[1]);
        if (c == nullptr) unknown_command(args[1]);
        std::fputs(help_text(*c).c_str(), stdout);
        return 0;
    }
    const command* c = find_command(first);
    if (c == nullptr) unknown_command(first);
    std::vector<std::string> rest(args.begin() + 1, args.end());
    for (const auto& a : rest) {
        if (a == "--help" || a == "-h") {
            std::fputs(help_text(*c).c_str(), stdout);
            return 0;
        }
    }
    return c->run(parse(c->name, c->options, rest));
}

}  // namespace vnnx::cli

int main(int argc, char** argv) {
    // A full or size-limited disk must give "vnnx: error: ...: write failed", not death by SIGXFSZ.
    std::signal(SIGXFSZ, SIG_IGN);
    try {
        vnnx::set_limits(vnnx::limits_from_environment());  // VNNX_MAX_* raise the input limits
        const int status = vnnx::cli::main_impl(std::vector<std::string>(argv + 1, argv + argc));
        // A report that could not be written (a full disk) is a failure, not a silent success.
        if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
            std::fprintf(stderr, "vnnx: error: <standard output>: write failed: %s\n", std::strerror(errno));
            return 1;
        }
        return status;
    } catch (const vnnx::error& e) {
        std::fprintf(stderr, "vnnx: error: %s\n", e.what());
        return e.exit_code();
    } catch (const std::bad_alloc&) {
        std::fputs("vnnx: error: out of memory\n", stderr);
        return 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vnnx: error: %s\n", e.what());
        return 1;
    }
}
