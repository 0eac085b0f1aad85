// `vnnx ops`: the table printed by the tool is the operator registry, row by row; docs/OPS.md is
// the tool's --markdown output; the constraints the table shows (paddings, ranks) are enforced.
#include <bit>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <catch2/catch.hpp>

#include "cli_harness_test.hpp"
#include "data/tflite/json_lite.hpp"
#include "vnnx/compiler/verify.hpp"
#include "vnnx/format/union_select.hpp"
#include "vnnx/ops/registry.hpp"
#include "vnnx/ops/sdk_list.hpp"
#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/model_view.hpp"

using namespace cli_test;
using vnnx::builtin_operator;
using vnnx::tflite::tensor_type;

TEST_CASE("vnnx ops --json: one row per registry entry, with the entry's facts") {
    if (!tool_built()) return;
    const auto r = run_tool("ops --json");
    REQUIRE(r.status == 0);
    const auto j = vnnx::test::json::parse(r.out);
    std::set<int> seen;
    for (const auto& row : j["supported"].arr) {
        const int code = static_cast<int>(row["code"].num);
        INFO(row["op"].str);
        REQUIRE(code >= 0);
        REQUIRE(code < vnnx::builtin_operator_count);
        const auto& e = vnnx::ops::entry_for(static_cast<builtin_operator>(code));
        CHECK(e.supported);
        CHECK(row["op"].str == vnnx::builtin_name(code));
        CHECK(row["node_type"].num == e.node_type);
        CHECK(row["layer_type"].num == e.layer_type);
        CHECK(row["union"].str == e.member);
        CHECK(row["summary"].str == e.summary);
        CHECK(row["notes"].str == e.notes);
        CHECK(row["axes"].str == e.axes);
        CHECK(row["dtypes"].arr.size() == static_cast<std::size_t>(std::popcount(e.dtype_mask)));
        CHECK(row["activations"].arr.size() == static_cast<std::size_t>(std::popcount(e.activation_mask)));
        CHECK(row["paddings"].arr.size() == static_cast<std::size_t>(std::popcount(e.padding_mask)));
        if (e.ranks.max > 0) {
            CHECK(row["ranks"][0].num == e.ranks.min);
            CHECK(row["ranks"][1].num == e.ranks.max);
        } else {
            CHECK(row["ranks"].k == vnnx::test::json::value::kind::null);
        }
        if (e.node_type != vnnx::ops::identity_node) CHECK_THAT(row["node"].str, Catch::Contains(std::string(vnnx::format::operator_name(e.node_type))));
        CHECK(row["in_sdk_list"].b == vnnx::ops::in_sdk_list(e.code));
        CHECK(seen.insert(code).second);
    }
    std::size_t supported = 0;
    for (const auto& e : vnnx::ops::table) supported += e.supported ? 1 : 0;
    CHECK(seen.size() == supported);
    CHECK(supported >= 61);
    // Every operator of the SDK's list is either a row or listed as not supported, never both.
    std::set<std::string> missing;
    for (const auto& m : j["not_supported"].arr) missing.insert(m.str);
    for (auto code : vnnx::ops::sdk_operators) {
        INFO(vnnx::builtin_name(code));
        CHECK(seen.count(static_cast<int>(code)) + missing.count(std::string(vnnx::builtin_name(code))) == 1);
    }
    CHECK(missing.count("UNIDIRECTIONAL_SEQUENCE_LSTM") == 1);
    CHECK(missing.size() + supported >= vnnx::ops::sdk_operators.size());
    REQUIRE(j["patterns"].arr.size() == 1);
    CHECK(j["patterns"][0]["name"].str == "SILU");
}

TEST_CASE("vnnx ops: the facts of a few well-known rows") {
    if (!tool_built()) return;
    const auto j = vnnx::test::json::parse(run_tool("ops --json").out);
    auto row = [&](const std::string& op) -> const vnnx::test::json::value& {
        for (const auto& r : j["supported"].arr)
            if (r["op"].str == op) return r;
        FAIL("no row " << op);
        return j;
    };
    const auto& conv = row("CONV_2D");
    CHECK(conv["node"].str == "CONV_2D (3)");
    CHECK(conv["union"].str == "Conv2DOptions");
    CHECK(conv["paddings"].arr.size() == 2);
    CHECK(conv["ranks"][0].num == 4);
    CHECK(conv["activations"].arr.size() == 4);
    const auto& softmax = row("SOFTMAX");
    CHECK(softmax["node"].str == "IDENTITY (300)");
    CHECK(softmax["layer"].str == "SOFTMAX (25)");
    CHECK_THAT(softmax["notes"].str, Catch::Contains("beta"));
    CHECK(row("ADD")["activations"].arr.size() == 4);
    CHECK(row("TILE")["ranks"][1].num == 4);
}

TEST_CASE("vnnx ops: docs/OPS.md is the --markdown output") {
    if (!tool_built()) return;
    const auto r = run_tool("ops --markdown");
    REQUIRE(r.status == 0);
    std::ifstream f(std::string(VNNX_TEST_DATA_DIR) + "/../../docs/OPS.md", std::ios::binary);
    if (!f) {
        WARN("skipped: docs/OPS.md not found next to the tests");
        return;
    }
    std::stringstream ss;
    ss << f.rdbuf();
    CHECK(ss.str() == r.out);  // regenerate with: vnnx ops --markdown > docs/OPS.md
    CHECK(contains(r.out, "| CONV_2D | CONV_2D (3) |"));
    CHECK(contains(r.out, "- UNIDIRECTIONAL_SEQUENCE_LSTM — not supported"));
}

TEST_CASE("vnnx ops: usage errors") {
    if (!tool_built()) return;
    CHECK(run_tool("ops --markdown --json").status == 2);
    CHECK(run_tool("ops extra").status == 2);
    const auto t = run_tool("ops");
    CHECK(t.status == 0);
    CHECK(contains(t.out, "not yet supported ("));
}

TEST_CASE("registry: the ranks and paddings of the table are enforced by the check") {
    using namespace vnnx::tflite;
    // A 3-D input to AVERAGE_POOL_2D (ranks 4..4) is rejected with the table's rule.
    builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {4, 4, 3}, quant{0.1f, 0});
    const auto y = b.add_tensor("y", tensor_type::INT8, {2, 2, 3}, quant{0.1f, 0});
    b.add_operator(builtin_operator::AVERAGE_POOL_2D, {x}, {y},
                   pool2d_options{padding_mode::VALID, 2, 2, 2, 2, activation_function::NONE});
    b.set_inputs({x});
    b.set_outputs({y});
    const auto bytes = b.finish();
    const auto m = model_view::parse(bytes, "pool3d.tflite");
    const auto p = vnnx::compiler::find_problems(m);
    REQUIRE(p.size() == 1);
    CHECK(p[0].op == "AVERAGE_POOL_2D");
    CHECK(p[0].reason == "data input rank 3 is outside 4..4");
    const auto& pool = vnnx::ops::entry_for(builtin_operator::AVERAGE_POOL_2D);
    CHECK(pool.padding_mask == 3u);
    CHECK(pool.ranks.min == 4);
    // Operators without a padding option state none.
    CHECK(vnnx::ops::entry_for(builtin_operator::ADD).padding_mask == 0u);
    CHECK(vnnx::ops::entry_for(builtin_operator::ADD).ranks.max == 0);
}

// Every operator `vnnx ops` lists compiles: each has a TFLite-judged golden folder
// (test/data/ref, which sim_golden_ops_test.cpp compiles and simulates), or is listed here with
// the test that covers it instead.
TEST_CASE("vnnx ops lists only what compiles: a golden folder holds every listed operator") {
    namespace fs = std::filesystem;
    const std::map<builtin_operator, const char*> elsewhere = {
        {builtin_operator::DILATE, "TFLite's build predates it: ops_movement_space_batch_test.cpp"},
        {builtin_operator::PADV2, "TFLite's build leaves its output unwritten: ops_movement_pad_test.cpp"},
    };
    std::set<builtin_operator> in_goldens;
    for (const auto& e : fs::directory_iterator(fs::path(VNNX_TEST_DATA_DIR) / "ref")) {
        if (!fs::exists(e.path() / "model.tflite")) continue;
        const auto bytes = vnnx::read_file(e.path() / "model.tflite");
        const auto m = vnnx::tflite::model_view::parse(bytes, e.path().string());
        const auto g = m.subgraph(0);
        for (std::size_t i = 0; i < g.operator_count(); ++i) in_goldens.insert(g.op(i).op());
    }
    std::size_t listed = 0;
    for (std::int32_t c = 0; c < vnnx::builtin_operator_count; ++c) {
        const auto code = static_cast<builtin_operator>(c);
        if (!vnnx::ops::entry_for(code).supported) continue;
        ++listed;
        INFO(vnnx::builtin_name(code));
        if (const auto it = elsewhere.find(code); it != elsewhere.end()) {
            INFO(it->second);
            CHECK(!in_goldens.count(code));  // an exception that no longer holds goes
        } else {
            CHECK(in_goldens.count(code));
        }
    }
    CHECK(listed >= 70);
}
