// Limits applied where untrusted sizes enter (issue 8): the TFLite reader's tensor element count
// and operator count, and through the tool the file size and the simulator's memory image, each
// raised or lowered with its VNNX_MAX_* variable.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "vnnx/compiler/compile.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace {

namespace fs = std::filesystem;
using vnnx::tflite::tensor_type;

std::vector<std::byte> model_with(std::vector<std::int32_t> shape, int ops = 1) {
    vnnx::tflite::builder b;
    auto x = b.add_tensor("in", tensor_type::INT8, shape, vnnx::tflite::quant{0.5f, 0});
    const auto first = x;
    for (int i = 0; i < ops; ++i) {
        const auto y = b.add_tensor("t" + std::to_string(i), tensor_type::INT8, shape, vnnx::tflite::quant{0.25f, 3});
        b.add_operator(vnnx::builtin_operator::QUANTIZE, {x}, {y});
        x = y;
    }
    b.set_inputs({first});
    b.set_outputs({x});
    return b.finish();
}

struct limits_guard {
    vnnx::limits saved = vnnx::active_limits();
    ~limits_guard() { vnnx::set_limits(saved); }
};

struct tool_result {
    int status = -1;
    std::string err;
};

tool_result run(const std::string& env_and_args) {
    tool_result r;
    const std::string cmd = "env " + env_and_args + " 2>&1 >/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) return r;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.err.append(buf, n);
    const int st = ::pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}


// A model of `count` subgraphs in which subgraph g (g < count - 1) runs one WHILE whose condition
// and body are subgraph callee(g); the last subgraph has no operator. Written field by field
// (the builder makes one subgraph): WHILE is builtin 119, WhileOptions union member 93 with
// cond_subgraph_index and body_subgraph_index in fields 0 and 1.
template <class Callee>
std::vector<std::byte> nested_model(int count, Callee callee) {
    flatbuffers::FlatBufferBuilder b;
    using flatbuffers::Offset;
    std::vector<Offset<void>> subgraphs;
    for (int g = 0; g < count; ++g) {
        const bool leaf = g == count - 1;
        std::vector<Offset<void>> tensors;
        for (int t = 0; t < (leaf ? 1 : 2); ++t) {
            const auto shape = b.CreateVector(std::vector<std::int32_t>{1});
            const auto name = b.CreateString("t" + std::to_string(t));
            const auto start = b.StartTable();
            b.AddOffset(4, shape);
            b.AddElement<std::int8_t>(6, 9, 0);  // INT8
            b.AddElement<std::uint32_t>(8, 0, 0);
            b.AddOffset(10, name);
            tensors.push_back(Offset<void>(b.EndTable(start)));
        }
        std::vector<Offset<void>> ops;
        if (!leaf) {
            const std::int32_t target = callee(g);
            const auto opt = b.StartTable();
            b.AddElement<std::int32_t>(4, target, -1);
            b.AddElement<std::int32_t>(6, target, -1);
            const auto options = b.EndTable(opt);
            const auto in = b.CreateVector(std::vector<std::int32_t>{0});
            const auto out = b.CreateVector(std::vector<std::int32_t>{1});
            const auto start = b.StartTable();
            b.AddElement<std::uint32_t>(4, 0, 1);  // opcode_index 0, written
            b.AddOffset(6, in);
            b.AddOffset(8, out);
            b.AddElement<std::uint8_t>(10, 93, 0);
            b.AddOffset(12, Offset<void>(options));
            ops.push_back(Offset<void>(b.EndTable(start)));
        }
        const auto tv = b.CreateVector(tensors);
        const auto inputs = b.CreateVector(std::vector<std::int32_t>{0});
        const auto outputs = b.CreateVector(std::vector<std::int32_t>{leaf ? 0 : 1});
        const auto ov = b.CreateVector(ops);
        const auto start = b.StartTable();
        b.AddOffset(4, tv);
        b.AddOffset(6, inputs);
        b.AddOffset(8, outputs);
        b.AddOffset(10, ov);
        subgraphs.push_back(Offset<void>(b.EndTable(start)));
    }
    const auto code_start = b.StartTable();
    b.AddElement<std::int8_t>(4, 119, 0);
    b.AddElement<std::int32_t>(10, 119, 0);
    const auto code = Offset<void>(b.EndTable(code_start));
    const auto buffer = Offset<void>(b.EndTable(b.StartTable()));
    const auto codes = b.CreateVector(std::vector<Offset<void>>{code});
    const auto sgs = b.CreateVector(subgraphs);
    const auto buffers = b.CreateVector(std::vector<Offset<void>>{buffer});
    const auto start = b.StartTable();
    b.AddElement<std::uint32_t>(4, 3, 0);
    b.AddOffset(6, codes);
    b.AddOffset(8, sgs);
    b.AddOffset(12, buffers);
    b.Finish(Offset<void>(b.EndTable(start)), "TFL3");
    const auto* d = reinterpret_cast<const std::byte*>(b.GetBufferPointer());
    return {d, d + b.GetSize()};
}

// subgraph g calls g + 1: `count` levels of nesting.
std::vector<std::byte> chain_model(int count) {
    return nested_model(count, [](int g) { return g + 1; });
}

const std::filesystem::path fuzz_corpus = std::filesystem::path(VNNX_TEST_DATA_DIR) / ".." / ".." / "fuzz" / "corpus";

}  // namespace

TEST_CASE("hostile limits: the TFLite reader bounds tensor elements and operators") {
    limits_guard guard;
    // 2^29 elements: within the format's 2^31 but above the default limit of 2^28.
    const auto big = model_with({1, 1 << 13, 1 << 13, 8});
    try {
        (void)vnnx::tflite::model_view::parse(big, "big.tflite");
        FAIL("accepted");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
        CHECK_THAT(e.what(), Catch::StartsWith("big.tflite: subgraphs[0].tensors[0] (Tensor 'in'): element count 536870912 "
                                               "exceeds the limit of 268435456") &&
                                 Catch::Contains("VNNX_MAX_TENSOR_ELEMENTS"));
    }
    vnnx::limits raised = guard.saved;
    raised.max_tensor_elements = std::uint64_t{1} << 30;
    vnnx::set_limits(raised);
    CHECK_NOTHROW(vnnx::tflite::model_view::parse(big, "big.tflite"));

    const auto chain = model_with({1, 2, 2, 1}, 12);
    vnnx::limits few = guard.saved;
    few.max_operators = 10;
    vnnx::set_limits(few);
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(chain, "chain.tflite"),
                      Catch::Contains("chain.tflite: subgraphs[0] (SubGraph): has 12 operators, more than the limit of 10"));
    vnnx::set_limits(guard.saved);
    CHECK(vnnx::tflite::model_view::parse(chain, "chain.tflite").subgraph(0).operator_count() == 12);
}

TEST_CASE("hostile limits: the tool takes VNNX_MAX_FILE_BYTES and VNNX_MAX_ACTIVATION_BYTES") {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("vnnx_hostile_limits_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string tool = "'" + std::string(VNNX_TOOL_PATH) + "'";
    const fs::path model = dir / "m.tflite", compiled = dir / "m.vnnx";
    vnnx::write_file_atomic(model, model_with({1, 4, 5, 3}));

    auto r = run("VNNX_MAX_FILE_BYTES=100 " + tool + " info " + model.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + model.string() + ": file is larger than the limit of 100 bytes"));
    r = run("VNNX_MAX_FILE_BYTES=oops " + tool + " info " + model.string());
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: VNNX_MAX_FILE_BYTES=oops: expected a positive decimal count"));
    r = run("VNNX_MAX_FILE_BYTES=1000000 " + tool + " info " + model.string());
    CHECK(r.status == 0);

    r = run(tool + " compile -t " + model.string() + " -s V1000 -o " + compiled.string());
    REQUIRE(r.status == 0);
    r = run("VNNX_MAX_ACTIVATION_BYTES=64 " + tool + " infer " + compiled.string() + " -o " + (dir / "out").string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + compiled.string() + ": header allocate_bytes: ") &&
                          Catch::Contains("exceeds the limit of 64 (raise it with VNNX_MAX_ACTIVATION_BYTES)"));
    CHECK_FALSE(fs::exists(dir / "out"));
    fs::remove_all(dir);
}

TEST_CASE("hostile limits: the TFLite reader bounds subgraph nesting and refuses recursion") {
    limits_guard guard;
    CHECK(vnnx::active_limits().max_subgraph_depth == 16);
    // 16 levels: accepted; 17: a limit error naming the subgraph and the variable.
    CHECK(vnnx::tflite::model_view::parse(chain_model(16), "ok.tflite").subgraph_count() == 16);
    try {
        (void)vnnx::tflite::model_view::parse(chain_model(17), "deep.tflite");
        FAIL("accepted");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
        CHECK_THAT(e.what(), Catch::StartsWith("deep.tflite: subgraphs[16] (SubGraph): is nested 17 subgraphs deep, "
                                               "more than the limit of 16 (raise it with VNNX_MAX_SUBGRAPH_DEPTH)"));
    }
    vnnx::limits raised = guard.saved;
    raised.max_subgraph_depth = 17;
    vnnx::set_limits(raised);
    CHECK(vnnx::tflite::model_view::parse(chain_model(17), "deep.tflite").subgraph_count() == 17);
    // 200 levels under a limit of 17: refused at level 18 (the walk stops there).
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(chain_model(200), "deeper.tflite"),
                      Catch::Contains("subgraphs[17] (SubGraph): is nested 18 subgraphs deep"));
    vnnx::set_limits(guard.saved);

    // Subgraph 2 calls subgraph 1 again: recursion, whatever the limit.
    const auto loop = nested_model(4, [](int g) { return g == 2 ? 1 : g + 1; });
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(loop, "loop.tflite"),
                      Catch::StartsWith("loop.tflite: subgraphs[2] (SubGraph): calls subgraph 1, which is already being called"));
    // A subgraph index past the end.
    const auto dangling = nested_model(3, [](int g) { return g == 1 ? 7 : g + 1; });
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(dangling, "dangling.tflite"),
                      Catch::Contains("dangling.tflite: subgraphs[1].operators[0] (WHILE): subgraph index 7 out of range (3 subgraphs)"));
    // A low limit: exactly its number of levels passes (each WHILE names its callee twice, as
    // condition and body: a subgraph reached again counts at its own depth).
    vnnx::limits tight = guard.saved;
    tight.max_subgraph_depth = 3;
    vnnx::set_limits(tight);
    CHECK(vnnx::tflite::model_view::parse(chain_model(3), "three.tflite").subgraph_count() == 3);
    CHECK_THROWS_AS(vnnx::tflite::model_view::parse(chain_model(4), "four.tflite"), vnnx::error);
}

TEST_CASE("hostile limits: the VNNX reader bounds its node count") {
    limits_guard guard;
    const auto file = vnnx::read_file(fuzz_corpus / "vnnx_sim" / "real_hello_world_int8.vnnx");
    const vnnx::format::model_view v(file, "hello.vnnx");
    const std::size_t nodes = v.num_nodes();
    REQUIRE(nodes >= 1);
    vnnx::limits few = guard.saved;
    few.max_nodes = nodes - 1;
    vnnx::set_limits(few);
    try {
        const vnnx::format::model_view refused(file, "hello.vnnx");
        FAIL("accepted");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
        CHECK_THAT(e.what(), Catch::StartsWith("hello.vnnx: header num_layers: " + std::to_string(nodes) +
                                               " exceeds the limit of " + std::to_string(nodes - 1) +
                                               " (raise it with VNNX_MAX_NODES)"));
    }
    // The same limit bounds the layers the nodes own (there are at least as many).
    const std::size_t layers = v.num_layers();
    REQUIRE(layers >= nodes);
    if (layers > nodes) {
        few.max_nodes = layers - 1;
        vnnx::set_limits(few);
        CHECK_THROWS_WITH(vnnx::format::model_view(file, "hello.vnnx"),
                          Catch::StartsWith("hello.vnnx: the nodes' sublayer count: " + std::to_string(layers) +
                                            " exceeds the limit of " + std::to_string(layers - 1)));
    }
    few.max_nodes = layers;
    vnnx::set_limits(few);
    CHECK(vnnx::format::model_view(file, "hello.vnnx").num_nodes() == nodes);
}

TEST_CASE("hostile limits: the tool takes VNNX_MAX_TENSOR_ELEMENTS, _OPERATORS, _NODES, _SUBGRAPH_DEPTH") {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    const fs::path dir = fs::temp_directory_path() / ("vnnx_hostile_limits_env_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string tool = "'" + std::string(VNNX_TOOL_PATH) + "'";
    const fs::path model = dir / "m.tflite", deep = dir / "deep.tflite", out = dir / "m.vnnx";
    vnnx::write_file_atomic(model, model_with({1, 4, 5, 3}, 3));
    vnnx::write_file_atomic(deep, chain_model(5));

    auto r = run("VNNX_MAX_TENSOR_ELEMENTS=59 " + tool + " info " + model.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + model.string() + ": ") &&
                          Catch::Contains("element count 60 exceeds the limit of 59"));
    CHECK(run("VNNX_MAX_TENSOR_ELEMENTS=60 " + tool + " info " + model.string()).status == 0);

    r = run("VNNX_MAX_OPERATORS=2 " + tool + " compile -t " + model.string() + " -s V1000 -o " + out.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + model.string() + ": ") &&
                          Catch::Contains("has 3 operators, more than the limit of 2 (raise it with VNNX_MAX_OPERATORS)"));
    CHECK_FALSE(fs::exists(out));

    r = run("VNNX_MAX_SUBGRAPH_DEPTH=4 " + tool + " info " + deep.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + deep.string() + ": subgraphs[4] (SubGraph): is nested 5"));
    CHECK(run("VNNX_MAX_SUBGRAPH_DEPTH=5 " + tool + " info " + deep.string()).status == 0);

    // The compiler refuses a memory image the simulator would refuse, and writes nothing.
    r = run("VNNX_MAX_ACTIVATION_BYTES=64 " + tool + " compile -t " + model.string() + " -s V1000 -o " + out.string());
    CHECK(r.status == 1);
    CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + model.string() + ": memory image (allocate_bytes): ") &&
                          Catch::Contains("exceeds the limit of 64 (raise it with VNNX_MAX_ACTIVATION_BYTES)"));
    CHECK_FALSE(fs::exists(out));

    r = run(tool + " compile -t " + model.string() + " -s V1000 -o " + out.string());
    REQUIRE(r.status == 0);
    const vnnx::format::model_view v(vnnx::read_file(out), "m.vnnx");
    const std::size_t nodes = v.num_nodes();
    r = run("VNNX_MAX_NODES=" + std::to_string(std::max(nodes, v.num_layers())) + " " + tool + " info " + out.string());
    CHECK(r.status == 0);
    if (nodes > 1) {
        r = run("VNNX_MAX_NODES=" + std::to_string(nodes - 1) + " " + tool + " info " + out.string());
        CHECK(r.status == 1);
        CHECK_THAT(r.err, Catch::StartsWith("vnnx: error: " + out.string() + ": header num_layers: ") &&
                              Catch::Contains("(raise it with VNNX_MAX_NODES)"));
    }
    fs::remove_all(dir);
}

TEST_CASE("hostile limits: a zero point outside its tensor type's range is refused by the reader") {
    const auto with_zero = [](tensor_type type, std::int64_t zero) {
        vnnx::tflite::builder b;
        const auto x = b.add_tensor("in", type, {1, 2, 2, 1}, vnnx::tflite::quant{{0.5f}, {zero}});
        const auto y = b.add_tensor("out", tensor_type::INT8, {1, 2, 2, 1}, vnnx::tflite::quant{{0.25f}, {3}});
        b.add_operator(vnnx::builtin_operator::QUANTIZE, {x}, {y});
        b.set_inputs({x});
        b.set_outputs({y});
        return b.finish();
    };
    CHECK_NOTHROW(vnnx::tflite::model_view::parse(with_zero(tensor_type::INT8, -128), "ok.tflite"));
    CHECK_NOTHROW(vnnx::tflite::model_view::parse(with_zero(tensor_type::UINT8, 255), "ok.tflite"));
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(with_zero(tensor_type::INT8, 2147483651LL), "z.tflite"),
                      Catch::StartsWith("z.tflite: subgraphs[0].tensors[0] (Tensor 'in'): quantization zero_point[0] = "
                                        "2147483651 is outside the range of int8"));
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(with_zero(tensor_type::UINT8, -1), "z.tflite"),
                      Catch::Contains("zero_point[0] = -1 is outside the range of uint8"));
    CHECK_THROWS_WITH(vnnx::tflite::model_view::parse(with_zero(tensor_type::INT16, 40000), "z.tflite"),
                      Catch::Contains("zero_point[0] = 40000 is outside the range of int16"));
}

TEST_CASE("hostile limits: the compiler's up-front blob reservation is bounded by the file's size") {
    // 2^28 elements per I/O tensor: the shape-based estimate is several GiB, the file a few hundred
    // bytes; reserving the estimate would be an allocation the file cannot justify.
    const auto bytes = model_with({1, 512, 512, 1024});
    const auto m = vnnx::tflite::model_view::parse(bytes, "big.tflite");
    const auto g = vnnx::compiler::checked_graph(m);
    const auto& preset = vnnx::compiler::info(vnnx::format::preset::V1000);
    const std::size_t cap = 4 * bytes.size() + (std::size_t{64} << 20);
    CHECK(vnnx::compiler::blob_capacity_hint(g, preset, bytes.size()) == cap);
    // A model file large enough to back the estimate keeps it (below the file-based cap).
    CHECK(vnnx::compiler::blob_capacity_hint(g, preset, std::size_t{1} << 29) == (std::size_t{1} << 30));
    // A small model keeps its own, smaller estimate.
    const auto small = model_with({1, 8, 8, 4});
    const auto gs = vnnx::compiler::checked_graph(vnnx::tflite::model_view::parse(small, "small.tflite"));
    const auto h = vnnx::compiler::blob_capacity_hint(gs, preset, small.size());
    CHECK(h > (std::size_t{1} << 20));
    CHECK(h < (std::size_t{2} << 20));
}
