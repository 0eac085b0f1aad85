// `vnnx info --dot` on a .tflite and a .vnnx file: the text names what it should (operators,
// unsupported ones in red, VNNX node types and shapes), and Graphviz's `dot` renders it to SVG.
#include <cstdlib>
#include <string>

#include "cli_harness_test.hpp"
#include "vnnx/format/model_view.hpp"

using namespace cli_test;

namespace {

bool have_dot() {
    if (std::system("command -v dot >/dev/null 2>&1") == 0) return true;
    WARN("skipped: Graphviz 'dot' is not installed (Debian package graphviz)");
    return false;
}

/// Renders `dot_file` with Graphviz; the SVG text, empty when dot failed.
std::string render_svg(const temp_dir& dir, const std::string& dot_file) {
    const std::string svg = dir / "graph.svg";
    const std::string cmd = "dot -Tsvg " + dot_file + " -o " + svg + " 2>&1";
    if (std::system(cmd.c_str()) != 0) return {};
    const auto bytes = vnnx::read_file(svg);
    return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

std::size_t count(const std::string& text, const std::string& part) {
    std::size_t n = 0;
    for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
}

}  // namespace

TEST_CASE("cli dot: the TFLite graph, unsupported operators in red, rendered by Graphviz") {
    if (!tool_built()) return;
    temp_dir dir("dot_tflite");
    // QUANTIZE (supported), then FLOOR (not an operator the compiler takes): one black box, one red.
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 5, 3}, quant{0.5f, 0});
    const auto mid = b.add_tensor("mid", tensor_type::INT8, {1, 4, 5, 3}, quant{0.25f, 3});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 4, 5, 3}, quant{0.25f, 3});
    b.add_operator(builtin_operator::QUANTIZE, {in}, {mid});
    b.add_operator(builtin_operator::FLOOR, {mid}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    write_bytes(dir / "m.tflite", b.finish());
    const auto r = run_tool("info " + (dir / "m.tflite") + " --dot");
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.out.rfind("digraph tflite {", 0) == 0);
    CHECK(contains(r.out, "op0 [label=\"0: QUANTIZE\"];"));
    CHECK(contains(r.out, "op1 [label=\"1: FLOOR\\nunsupported\", color=red, fontcolor=red, tooltip="));
    CHECK(count(r.out, "color=red") == 2);  // color= and fontcolor= of FLOOR only
    CHECK(contains(r.out, "t0 [shape=ellipse, label=\"in: int8 1x4x5x3\"];"));
    CHECK(contains(r.out, "op0 -> op1 [label=\"int8 1x4x5x3\"];"));
    CHECK(contains(r.out, "op1 -> out2;"));

    if (!have_dot()) return;
    std::filesystem::path dot_file = dir.path / "m.dot";
    write_bytes(dot_file.string(), std::vector<std::byte>(reinterpret_cast<const std::byte*>(r.out.data()),
                                                          reinterpret_cast<const std::byte*>(r.out.data() + r.out.size())));
    const auto svg = render_svg(dir, dot_file.string());
    REQUIRE_FALSE(svg.empty());
    CHECK(contains(svg, "<svg"));
    CHECK(contains(svg, ">0: QUANTIZE</text>"));
    CHECK(contains(svg, ">1: FLOOR</text>"));
    CHECK(contains(svg, "stroke=\"red\""));
    CHECK(contains(svg, "fill=\"red\""));  // the red label text
}

TEST_CASE("cli dot: the VNNX node graph with node types and shapes, rendered by Graphviz") {
    if (!tool_built()) return;
    temp_dir dir("dot_vnnx");
    write_bytes(dir / "demo.tflite", vnnx::tflite::demo_model());
    const auto c = run_tool("compile -t " + (dir / "demo.tflite") + " -s V1000 -o " + (dir / "demo.vnnx"));
    INFO(c.out);
    REQUIRE(c.status == 0);
    const auto r = run_tool("info " + (dir / "demo.vnnx") + " --dot");
    INFO(r.out);
    REQUIRE(r.status == 0);
    const auto bytes = vnnx::read_file(dir / "demo.vnnx");
    const vnnx::format::model_view v(bytes, "demo.vnnx");
    CHECK(r.out.rfind("digraph vnnx {", 0) == 0);
    for (std::size_t i = 0; i < v.num_nodes(); ++i) {
        INFO(i);
        const std::string name(vnnx::format::operator_name(v.node(i).type));
        CHECK(contains(r.out, "  n" + std::to_string(i) + " [label=\"" + std::to_string(i) + ": " + name));
    }
    // The demo's input is int8 1x32x32x3 NHWC: channels first in the VNNX graph.
    CHECK(contains(r.out, "in0 [shape=ellipse, label=\"in 0: int8 1x3x32x32\"];"));
    CHECK(contains(r.out, "\\n1x3x32x32 -> "));
    CHECK(contains(r.out, "in0 -> n0;"));
    CHECK(contains(r.out, "n" + std::to_string(v.output(0).node) + " -> out0;"));
    CHECK(count(r.out, " -> n") >= v.num_nodes());  // every node has an input edge
    CHECK_FALSE(contains(r.out, "color=red"));
    CHECK(contains(r.out, "n0 -> n1 [label="));
    // The residual ADD is an ELTWISE layer of node 3 reading node 1's output: an edge that skips
    // node 2, found through a layer's tensor rather than the node's own input.
    CHECK(contains(r.out, "n1 -> n3 [label=\"1x8x16x16\"];"));

    if (!have_dot()) return;
    std::filesystem::path dot_file = dir.path / "demo.dot";
    write_bytes(dot_file.string(), std::vector<std::byte>(reinterpret_cast<const std::byte*>(r.out.data()),
                                                          reinterpret_cast<const std::byte*>(r.out.data() + r.out.size())));
    const auto svg = render_svg(dir, dot_file.string());
    REQUIRE_FALSE(svg.empty());
    CHECK(contains(svg, "<svg"));
    CHECK(count(svg, "class=\"node\"") == v.num_nodes() + v.num_inputs() + v.num_outputs());
    CHECK(contains(svg, ">in 0: int8 1x3x32x32</text>"));
}
