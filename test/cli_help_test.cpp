// The tool explains itself: `vnnx --help`, `vnnx help <command>`, `vnnx <command> --help` and
// `vnnx --version` for every command; unknown commands and options name the nearest valid one;
// usage errors read "vnnx: error: ..." and exit with status 2.
#include <string>
#include <vector>

#include "cli_harness_test.hpp"

using namespace cli_test;

namespace {

const std::vector<std::string> commands{"layout", "info", "compile", "infer", "compare", "demo", "ops"};

/// The number of lines of `text` that start with `prefix`.
std::size_t lines_starting(const std::string& text, const std::string& prefix) {
    std::size_t n = 0, at = 0;
    while (at < text.size()) {
        if (text.compare(at, prefix.size(), prefix) == 0) ++n;
        const auto nl = text.find('\n', at);
        if (nl == std::string::npos) break;
        at = nl + 1;
    }
    return n;
}

}  // namespace

TEST_CASE("cli help: vnnx --help lists every command once, help and -h say the same") {
    if (!tool_built()) return;
    const auto r = run_tool("--help");
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("vnnx ", 0) == 0);
    CHECK(contains(r.out, "usage: vnnx <command> [options]"));
    for (const auto& c : commands) {
        INFO(c);
        CHECK(lines_starting(r.out, "  " + c + " ") == 1);
    }
    CHECK(run_tool("-h").out == r.out);
    CHECK(run_tool("help").out == r.out);
    // No argument at all: the same text, but on stderr and as a usage error.
    const auto none = run_tool("");
    CHECK(none.status == 2);
    CHECK(none.out == r.out);
}

TEST_CASE("cli help: every command's help, three ways, with its usage and options") {
    if (!tool_built()) return;
    for (const auto& c : commands) {
        INFO(c);
        const auto h = run_tool("help " + c);
        REQUIRE(h.status == 0);
        CHECK(h.out.rfind("usage: vnnx " + c, 0) == 0);
        CHECK(contains(h.out, "options:\n"));
        CHECK(contains(h.out, "-h, --help"));
        const auto long_form = run_tool(c + " --help");
        CHECK(long_form.status == 0);
        CHECK(long_form.out == h.out);
        const auto short_form = run_tool(c + " -h");
        CHECK(short_form.status == 0);
        CHECK(short_form.out == h.out);
    }
    // Options a user looks for appear in the help of their command.
    CHECK(contains(run_tool("help compile").out, "--size_conf SIZE"));
    CHECK(contains(run_tool("help compile").out, "-v, --verbose"));
    CHECK(contains(run_tool("help infer").out, "-v, --verbose"));
    CHECK(contains(run_tool("help info").out, "--dot"));
    CHECK(contains(run_tool("help compare").out, "--per-node"));
    CHECK(contains(run_tool("help ops").out, "--markdown"));
}

TEST_CASE("cli help: --version prints the project version") {
    if (!tool_built()) return;
    const auto r = run_tool("--version");
    CHECK(r.status == 0);
    CHECK(r.out == std::string("vnnx ") + VNNX_VERSION_TEXT + "\n");
    CHECK(contains(run_tool("--help").out, VNNX_VERSION_TEXT));
}

TEST_CASE("cli help: unknown commands and options name the nearest valid one, exit 2") {
    if (!tool_built()) return;
    struct near_miss {
        std::string args, said, meant;
    };
    const std::vector<near_miss> cases{
        {"compil -t m.tflite", "unknown command 'compil'", "did you mean 'compile'?"},
        {"inferr m.vnnx", "unknown command 'inferr'", "did you mean 'infer'?"},
        {"help comapre", "unknown command 'comapre'", "did you mean 'compare'?"},
        {"layout --jsn", "layout: unknown option '--jsn'", "did you mean '--json'?"},
        {"info m.tflite --dto", "info: unknown option '--dto'", "did you mean '--dot'?"},
        {"compile --tfilte m.tflite", "compile: unknown option '--tfilte'", "did you mean '--tflite'?"},
        {"compile -t m.tflite --size-conf V1000", "compile: unknown option '--size-conf'", "did you mean '--size_conf'?"},
        {"compile -t m.tflite -s V1000 --reprot r.json", "compile: unknown option '--reprot'", "did you mean '--report'?"},
        {"infer m.vnnx --thread 2", "infer: unknown option '--thread'", "did you mean '--threads'?"},
        {"infer m.vnnx --verbos", "infer: unknown option '--verbos'", "did you mean '--verbose'?"},
        {"compare m.tflite --per_node", "compare: unknown option '--per_node'", "did you mean '--per-node'?"},
        {"demo --hepl", "demo: unknown option '--hepl'", "did you mean '--help'?"},
    };
    for (const auto& c : cases) {
        INFO(c.args);
        const auto r = run_tool(c.args);
        CHECK(r.status == 2);
        CHECK(r.out == "vnnx: error: " + c.said + "; " + c.meant + "\n");
    }
    // Nothing close: a pointer to the help instead of a guess.
    auto r = run_tool("frobnicate");
    CHECK(r.status == 2);
    CHECK(r.out == "vnnx: error: unknown command 'frobnicate'; see 'vnnx --help'\n");
    r = run_tool("infer m.vnnx --completely-different");
    CHECK(r.status == 2);
    CHECK(r.out == "vnnx: error: infer: unknown option '--completely-different'; see 'vnnx infer --help'\n");
}

TEST_CASE("cli help: other usage errors read 'vnnx: error:' and exit 2") {
    if (!tool_built()) return;
    for (const std::string args : {"compile -s V1000", "infer", "info", "compare", "info a.tflite b.tflite",
                                   "compile -t m.tflite -s", "infer m.vnnx -o out --threads 0", "layout extra"}) {
        INFO(args);
        const auto r = run_tool(args);
        CHECK(r.status == 2);
        CHECK(r.out.rfind("vnnx: error: ", 0) == 0);
        CHECK(lines_starting(r.out, "vnnx: error: ") == 1);
    }
}
