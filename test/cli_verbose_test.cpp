// -v of `vnnx compile` and `vnnx infer`: progress and pass timings on stderr, tables on stdout;
// `-s V250,V500,V1000` compiles all three sizes in one run and prints their sizes side by side.
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_harness_test.hpp"
#include "vnnx/format/model_view.hpp"

using namespace cli_test;

namespace {

struct split_result {
    int status = -1;
    std::string out, err;
};

/// Runs the tool with stdout and stderr kept apart.
split_result run_split(const temp_dir& dir, const std::string& args) {
    const std::string err_file = dir / "stderr.txt";
    split_result r;
    FILE* p = ::popen((std::string(VNNX_TOOL_PATH) + " " + args + " 2>" + err_file).c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    const auto bytes = vnnx::read_file(err_file);
    r.err.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return r;
}

/// The whitespace-separated words of the line of `text` that starts with `head`.
std::vector<std::string> row(const std::string& text, const std::string& head) {
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind(head, 0) != 0) continue;
        std::istringstream words(line.substr(head.size()));
        std::vector<std::string> out;
        for (std::string w; words >> w;) out.push_back(w);
        return out;
    }
    return {};
}

}  // namespace

TEST_CASE("cli verbose: compile -v times every pass on stderr and prints the node table on stdout") {
    if (!tool_built()) return;
    temp_dir dir("verbose_compile");
    write_bytes(dir / "demo.tflite", vnnx::tflite::demo_model());
    const auto r = run_split(dir, "compile -t " + (dir / "demo.tflite") + " -s V1000 -o " + (dir / "demo.vnnx") + " -v");
    INFO(r.out);
    INFO(r.err);
    REQUIRE(r.status == 0);
    for (const std::string pass : {"read: ", "transforms: ", "lowering: ", "layout: ", "emit: "})
        CHECK(contains(r.err, "vnnx compile [V1000]: " + pass));
    CHECK(contains(r.err, "vnnx compile: reading " + (dir / "demo.tflite") + " ("));
    CHECK(contains(r.err, "vnnx compile: [V1000] compiled, "));
    CHECK(contains(r.err, "operators after the transforms, "));
    CHECK_FALSE(contains(r.out, " ms\n"));  // timings stay off stdout
    const auto bytes = vnnx::read_file(dir / "demo.vnnx");
    const vnnx::format::model_view v(bytes, "demo.vnnx");
    // One table row per node, in order, with its type.
    for (std::size_t i = 0; i < v.num_nodes(); ++i) {
        const auto words = row(r.out, fmt::format("{:>4}  ", i));
        INFO(i);
        REQUIRE_FALSE(words.empty());
        CHECK(words[0] == vnnx::format::operator_name(v.node(i).type));
    }
    CHECK(contains(r.out, fmt::format("total: {} nodes, file {} bytes", v.num_nodes(), bytes.size())));
    // Without -v: only the result line.
    const auto quiet = run_split(dir, "compile -t " + (dir / "demo.tflite") + " -s V1000 -o " + (dir / "demo.vnnx"));
    CHECK(quiet.status == 0);
    CHECK(quiet.err.empty());
    CHECK(quiet.out == fmt::format("wrote {} ({} bytes, {} nodes, V1000)\n", dir / "demo.vnnx", bytes.size(), v.num_nodes()));
}

TEST_CASE("cli verbose: -s V250,V500,V1000 writes three suffixed files and a side-by-side size table") {
    if (!tool_built()) return;
    temp_dir dir("verbose_sizes");
    write_bytes(dir / "demo.tflite", vnnx::tflite::demo_model());
    const auto r = run_split(dir, "compile -t " + (dir / "demo.tflite") + " -s V250,V500,V1000 -o " + (dir / "demo.vnnx"));
    INFO(r.out);
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(row(r.out, "size") == std::vector<std::string>{"V250", "V500", "V1000"});
    const auto file_bytes = row(r.out, "file bytes");
    const auto allocate = row(r.out, "allocate bytes");
    const auto nodes = row(r.out, "nodes");
    REQUIRE(file_bytes.size() == 3);
    REQUIRE(allocate.size() == 3);
    REQUIRE(nodes.size() == 3);
    CHECK(row(r.out, "weight bytes").size() == 3);
    CHECK(row(r.out, "MACs").size() == 3);
    const char* names[] = {"demo_V250.vnnx", "demo_V500.vnnx", "demo_V1000.vnnx"};
    for (std::uint32_t k = 0; k < 3; ++k) {
        INFO(names[k]);
        const auto bytes = vnnx::read_file(dir / names[k]);
        const vnnx::format::model_view v(bytes, names[k]);
        CHECK(v.header().vbx_nn_preset == k);
        CHECK(file_bytes[k] == std::to_string(bytes.size()));
        CHECK(allocate[k] == std::to_string(v.header().allocate_bytes));
        CHECK(nodes[k] == std::to_string(v.num_nodes()));
        CHECK(contains(r.out, "wrote " + (dir / names[k]) + " ("));
    }
    CHECK_FALSE(std::filesystem::exists(dir / "demo.vnnx"));
    // One size: no table.
    const auto one = run_split(dir, "compile -t " + (dir / "demo.tflite") + " -s V500 -o " + (dir / "one.vnnx"));
    CHECK(one.status == 0);
    CHECK(row(one.out, "size").empty());
}

TEST_CASE("cli verbose: infer -v reports each node's progress on stderr") {
    if (!tool_built()) return;
    temp_dir dir("verbose_infer");
    write_bytes(dir / "demo.tflite", vnnx::tflite::demo_model());
    REQUIRE(run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 -o " + (dir / "demo.vnnx")).status == 0);
    const auto bytes = vnnx::read_file(dir / "demo.vnnx");
    const vnnx::format::model_view v(bytes, "demo.vnnx");
    const auto n = v.num_nodes();
    const auto r = run_split(dir, "infer " + (dir / "demo.vnnx") + " -o " + (dir / "out") + " -v");
    INFO(r.err);
    REQUIRE(r.status == 0);
    for (std::size_t k = 0; k < n; ++k) {
        INFO(k);
        CHECK(contains(r.err, fmt::format("vnnx infer: node {}/{} {}: ", k + 1, n, vnnx::format::operator_name(v.node(k).type))));
    }
    CHECK(contains(r.err, fmt::format("vnnx infer: {} nodes in ", n)));
    CHECK(contains(r.out, "wrote " + (dir / "out") + "/output_0.npy"));
    const auto quiet = run_split(dir, "infer " + (dir / "demo.vnnx") + " -o " + (dir / "out2"));
    CHECK(quiet.status == 0);
    CHECK(quiet.err.empty());
}
