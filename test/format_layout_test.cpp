// format/layout_json: the layout generator behind `vnnx layout --json`.
#include <cstdio>
#include <string>

#include <catch2/catch.hpp>

#include <vnnx/format/layout_json.hpp>

using namespace vnnx::format;

namespace {
const record_layout& find(const std::vector<record_layout>& all, std::string_view name) {
    for (const auto& r : all)
        if (r.name == name) return r;
    FAIL("no record " << name);
    return all.front();
}
}  // namespace

TEST_CASE("layout: 5 sizes, 102 fields, 42 union members, 252 union-member fields") {
    const auto all = layouts();
    std::size_t fields = 0, members = 0, member_fields = 0;
    for (const auto& r : all) {
        fields += r.fields.size();
        members += r.unions.size();
        for (const auto& m : r.unions) member_fields += m.fields.size();
    }
    CHECK(all.size() == 5);
    CHECK(fields == 102);
    CHECK(members == 42);
    CHECK(member_fields == 252);
    CHECK(find(all, "vnnx_graph_t").size == 84);
    CHECK(find(all, "vnnx_subgraph_node_t").size == 492);
    CHECK(find(all, "vnnx_layer_t").size == 300);
    CHECK(find(all, "vnnx_tensor_t").size == 76);
    CHECK(find(all, "indirect_ptr_t").size == 8);
}

TEST_CASE("layout: selected values") {
    const auto all = layouts();
    const auto& g = find(all, "vnnx_graph_t");
    CHECK(g.fields.back().name == "subgraphs");  // the zero-length node table marker
    CHECK(g.fields.back().offset == 84);
    CHECK(g.fields.back().size == 0);
    const auto& node = find(all, "vnnx_subgraph_node_t");
    CHECK(node.unions.size() == 14);
    CHECK(node.unions.front().name == "Conv2DOptions");
    CHECK(node.unions.front().offset == 316);
    CHECK(node.unions.front().size == 176);
    const auto& layer = find(all, "vnnx_layer_t");
    CHECK(layer.unions.size() == 28);
    CHECK(layer.unions.back().name == "ShaperOptions");
    CHECK(layer.unions.back().size == 40);
    const auto& tensor = find(all, "vnnx_tensor_t");
    CHECK(tensor.fields[1].name == "shape");
    CHECK(tensor.fields[1].size == 24);  // an array is one entry with its full size
}

TEST_CASE("layout: JSON text") {
    const std::string j = layout_json();
    CHECK(j.rfind("{\"version\": \"0x2330b149\",", 0) == 0);
    CHECK(j.find("\"vnnx_graph_t\": {\"size\": 84,") != std::string::npos);
    CHECK(j.find("\"io_nodes\": {\"offset\": 44, \"size\": 8}") != std::string::npos);
    CHECK(j.find("\"Conv2DOptions\": {\"offset\": 136, \"size\": 164, \"fields\": {\n      \"kernels\": {\"offset\": 0, \"size\": 4}") != std::string::npos);
    CHECK(j.find("\"tile_count\": {\"offset\": 172, \"size\": 4}") != std::string::npos);  // node variant
    CHECK(j.find("\"tile_count\": {\"offset\": 160, \"size\": 4}") != std::string::npos);  // layer variant
    CHECK(j.find("\"indirect\": {\"offset\": 60, \"size\": 8}") != std::string::npos);
    CHECK(j.find("\"indirect_ptr_t\": {\"size\": 8,") != std::string::npos);
    CHECK(j.find("\"options\"") == std::string::npos);  // the union is listed under "unions" only
    // Balanced braces: a cheap structural check.
    long depth = 0;
    for (char c : j) depth += c == '{' ? 1 : c == '}' ? -1 : 0;
    CHECK(depth == 0);
}

TEST_CASE("layout: the tool prints the same JSON") {
    const std::string tool = VNNX_TOOL_PATH;
    if (tool.empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    FILE* p = popen((tool + " layout --json").c_str(), "r");
    REQUIRE(p != nullptr);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    CHECK(pclose(p) == 0);
    CHECK(out == layout_json());
}
