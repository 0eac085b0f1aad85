// format/writer + format/model_view: the worked example of vnnx-format.md §11 built with the
// writer, read back, and the reader's rejections of damaged files.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/format/model_view.hpp>
#include <vnnx/format/writer.hpp>

namespace {
using namespace vnnx;
using namespace vnnx::format;

vnnx_tensor_t io_tensor_record(std::uint32_t blob_offset, std::int32_t scale_f16) {
    vnnx_tensor_t t{};
    t.type = static_cast<std::int32_t>(calc_type::CALC_TYPE_INT8);
    t.shape = {1, 3, 8, 8, 0, 0};
    t.dims = 4;
    t.scale = 0.5f;
    t.scale_f16 = scale_f16;
    t.multiplier = -1;
    t.shift = -1;
    t.indirect = {0, blob_offset};
    t.direct = obj_off_t{blob_offset};
    return t;
}

void put_i32(std::vector<std::byte>& blob, std::size_t at, std::int32_t v) { store_le<std::int32_t>(blob.data() + at, v); }

// One IDENTITY node with one RELU layer on a 1x8x8x3 int8 tensor, V1000, ncomp, R = 128.
std::vector<std::byte> worked_example() {
    vnnx_subgraph_node_t node{};
    node.type = static_cast<std::int32_t>(vnnx_operator::IDENTITY);
    node.input_data_type = node.output_data_type = 1;
    node.input_strides = node.output_strides = {1, 1};
    node.use_replay = 1;
    node.replay_buffer = obj_off_t{0};
    node.num_inputs = node.num_outputs = 1;
    std::memcpy(node.input_description.data(), "in", 2);
    std::memcpy(node.output_description.data(), "out", 3);

    vnnx_layer_t relu{};
    relu.type = static_cast<std::int32_t>(builtin_operator::RELU);
    relu.input_data_type = relu.output_data_type = 1;
    relu.strides = relu.kernel_shape = relu.dilations = {1, 1};
    relu.num_inputs = relu.num_outputs = 1;
    relu.num_tensors = 2;
    relu.activation_min = 0;
    relu.activation_max = 127;
    relu.output_multiplier = obj_off_t{0};  // blob-relative: the writer adds W
    relu.output_shift = obj_off_t{4};

    // Blob: multiplier, shift, io tables twice, input buffer, output buffer.
    std::vector<std::byte> blob(424);
    put_i32(blob, 0, 0x40000000);
    put_i32(blob, 4, 1);
    for (std::size_t copy : {8u, 24u}) {
        put_i32(blob, copy + 0, 0);  // io_nodes
        put_i32(blob, copy + 4, 0);
        put_i32(blob, copy + 8, 0);  // io_offsets
        put_i32(blob, copy + 12, 3);
    }
    for (std::size_t i = 0; i < 192; ++i) {
        blob[40 + i] = static_cast<std::byte>(i * 7 - 90);                    // test input
        blob[232 + i] = static_cast<std::byte>(std::max(0, int(std::int8_t(i * 7 - 90))));  // RELU of it
    }

    writer w;
    w.add_node(node, {relu},
               {io_tensor_record(40, 32768), io_tensor_record(424, -1), io_tensor_record(424, -1),
                io_tensor_record(232, 32768)});
    vnnx_graph_t h{};
    h.vbx_nn_preset = static_cast<std::uint32_t>(preset::V1000);
    h.num_inputs = h.num_outputs = 1;
    h.include_io_data = 1;
    h.io_nodes = obj_off_t{24};
    h.io_offsets = obj_off_t{32};
    h.sparsity = static_cast<std::int32_t>(compression::ncomp);
    return w.write(h, blob, 128, 192);
}

std::string reject(const std::vector<std::byte>& bytes) {
    try {
        model_view v(bytes, "bad.vnnx");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == error_kind::bad_input);
        return e.what();
    }
    FAIL("the reader accepted a damaged file");
    return {};
}

template <class T>
void poke(std::vector<std::byte>& b, std::size_t at, T v) { store_le<T>(b.data() + at, v); }
}  // namespace

TEST_CASE("regions: the offset calculator reproduces the worked example") {
    const std::size_t layers[] = {1}, tensors[] = {4};
    const auto r = compute_regions(layers, tensors, 128);
    CHECK(r.layer_table == 576);
    CHECK(r.tensor_table == 876);
    CHECK(r.tensors_end == 1180);
    CHECK(r.replay == 1184);
    CHECK(r.data == 1312);
    CHECK(r.node_sublayers == std::vector<std::uint64_t>{576});
    CHECK(r.node_tensors == std::vector<std::uint64_t>{876});

    const std::size_t l3[] = {2, 0, 1}, t3[] = {5, 2, 3};
    const auto r3 = compute_regions(l3, t3, 100);
    CHECK(r3.layer_table == 84 + 3 * 492);
    CHECK(r3.node_sublayers == std::vector<std::uint64_t>{1560, 2160, 2160});
    CHECK(r3.node_tensors == std::vector<std::uint64_t>{2460, 2840, 2992});
    CHECK(r3.replay == 3232);  // round_up(2460 + 760, 16)
    CHECK(r3.data == 3232 + 112);
}

TEST_CASE("writer: the worked example is byte-exact in its header and reads back") {
    const auto bytes = worked_example();
    REQUIRE(bytes.size() == 1736);
    // vnnx-format.md §11, header bytes 0..83.
    const unsigned char expected[84] = {
        0x49, 0xb1, 0x30, 0x23, 0x02, 0, 0, 0, 0x01, 0, 0, 0, 0x01, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x01, 0, 0, 0, 0xc8, 0x06, 0, 0, 0x88, 0x07, 0, 0, 0x38, 0x05, 0, 0,
        0, 0, 0, 0, 0x40, 0x05, 0, 0, 0, 0, 0, 0, 0x01, 0, 0, 0,
        0xa0, 0x04, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0xed, 0x11, 0xbe, 0x1a,
        0, 0, 0, 0};
    for (std::size_t i = 0; i < 84; ++i) {
        INFO("header byte " << i);
        CHECK(std::to_integer<unsigned>(bytes[i]) == expected[i]);
    }

    const model_view v(bytes, "example.vnnx");
    CHECK(v.num_nodes() == 1);
    CHECK(v.num_layers() == 1);
    CHECK(v.num_tensors() == 4);
    CHECK(v.replay_offset() == 1184);
    CHECK(v.replay_size() == 128);
    CHECK(v.data_offset() == 1312);
    CHECK(v.header().allocate_bytes == 1928);
    const auto& n = v.node(0);
    CHECK(n.type == 300);
    CHECK(n.sublayers.value == 576);
    CHECK(n.tensors.value == 876);
    CHECK(n.num_tensors == 4);
    CHECK(n.replay_buffer.value == 0);  // not relocated
    CHECK(n.options.all_zero());
    CHECK(std::string(n.output_description.data()) == "out");
    const auto layers = v.node_layers(0);
    REQUIRE(layers.size() == 1);
    CHECK(layers[0].type == 19);
    CHECK(layers[0].output_multiplier.value == 1312);
    CHECK(layers[0].output_shift.value == 1316);
    CHECK(layers[0].input_multiplier.absent());
    CHECK(layers[0].tensors.absent());
    CHECK(v.int32s(layers[0].output_multiplier.value, 1, "multiplier")[0] == 0x40000000);
    const auto tensors = v.node_tensors(0);
    REQUIRE(tensors.size() == 4);
    CHECK(tensors[1].direct.value == 1736);  // activation arena, past the file
    CHECK(tensors[1].indirect.offset == 1736);

    REQUIRE(v.num_inputs() == 1);
    REQUIRE(v.num_outputs() == 1);
    const auto& in = v.input(0);
    CHECK(in.node == 0);
    CHECK(in.index == 0);
    CHECK(in.shape == std::vector<std::int32_t>{1, 3, 8, 8});
    CHECK(in.type == 1);
    CHECK(in.scale == 0.5f);
    CHECK(in.scale_f16 == 32768);
    CHECK(in.zero_point == 0);
    CHECK(in.offset == 1352);
    CHECK(in.direct == 1352);
    CHECK(in.length == 192);
    REQUIRE(in.test_vector.size() == 192);
    CHECK(std::to_integer<int>(in.test_vector[1]) == static_cast<std::uint8_t>(7 - 90));
    const auto& out = v.output(0);
    CHECK(out.index == 3);
    CHECK(out.direct == 1544);
    CHECK(std::to_integer<int>(out.test_vector[1]) == 0);
    CHECK(std::to_integer<int>(out.test_vector[100]) == static_cast<std::uint8_t>(std::int8_t(700 - 90)));

    CHECK(v.node_output_index(0, 0) == 3);  // the RELU layer's output, as io_offsets says
    REQUIRE_THROWS_WITH(v.node_output_index(0, 1), Catch::Contains("node 0 (IDENTITY): it has no output 1"));
    REQUIRE_THROWS_WITH(v.input(1), Catch::Contains("input index 1 is out of range"));
    REQUIRE_THROWS_WITH(v.range(1700, 100, "weights"), Catch::Contains("example.vnnx: weights: 100 bytes at offset 1700"));
}

TEST_CASE("reader: damaged files are rejected with a message naming the rule") {
    const auto good = worked_example();

    SECTION("truncated") {
        CHECK_THAT(reject({good.begin(), good.begin() + 40}), Catch::Contains("bad.vnnx: file is 40 bytes, shorter than the 84-byte graph header"));
        CHECK_THAT(reject({good.begin(), good.end() - 1}), Catch::Contains("data_bytes = 1736 but the file is 1735 bytes"));
    }
    SECTION("bad magic") {
        auto b = good;
        poke<std::uint32_t>(b, 76, 0xDEADBEEF);
        CHECK_THAT(reject(b), Catch::Contains("bad magic 0xdeadbeef at offset 76"));
    }
    SECTION("bad version") {
        auto b = good;
        poke<std::uint32_t>(b, 0, 0x12345678);
        CHECK_THAT(reject(b), Catch::Contains("unsupported format version 0x12345678"));
    }
    SECTION("allocate_bytes below data_bytes") {
        auto b = good;
        poke<std::uint32_t>(b, 40, 1000);
        CHECK_THAT(reject(b), Catch::Contains("allocate_bytes = 1000 is less than data_bytes = 1736"));
    }
    SECTION("an offset past the end") {
        auto b = good;
        poke<std::uint64_t>(b, 576 + 104, 5000);  // layer 0 output_multiplier
        CHECK_THAT(reject(b), Catch::Contains("layer 0 (RELU): output_multiplier = 5000 is outside the model [0, allocate_bytes = 1928)"));
        b = good;
        poke<std::uint64_t>(b, 876 + 68, 99999);  // tensor 0 direct
        CHECK_THAT(reject(b), Catch::Contains("tensor 0: direct = 99999 is outside"));
        b = good;
        poke<std::uint64_t>(b, 44, 4000);  // header io_nodes
        CHECK_THAT(reject(b), Catch::Contains("graph header: io_nodes = 4000 is outside"));
    }
    SECTION("an offset in a union member selected by the type") {
        auto b = good;
        poke<std::int32_t>(b, 576, 98);             // layer becomes LEAKY_RELU: union holds leakyrelu
        poke<std::uint64_t>(b, 576 + 136, 4096);    // leakyrelu.alpha_multiplier
        poke<std::uint64_t>(b, 576 + 144, ~0ull);   // alpha_shift absent
        CHECK_THAT(reject(b), Catch::Contains("layer 0 (LEAKY_RELU): alpha_multiplier = 4096 is outside"));
    }
    SECTION("tables out of range") {
        auto b = good;
        poke<std::int32_t>(b, 84 + 256, 400);  // node num_tensors
        CHECK_THAT(reject(b), Catch::Contains("past the end of the 1736-byte file"));
        b = good;
        poke<std::int32_t>(b, 60, 1000);  // num_layers
        CHECK_THAT(reject(b), Catch::Contains("node table of 1000 nodes ends at"));
        b = good;
        poke<std::uint64_t>(b, 84 + 160, 500);  // sublayers before the layer table
        CHECK_THAT(reject(b), Catch::Contains("node 0 (IDENTITY): layer records [500, 800) is outside the layer records table [576, 876)"));
    }
    SECTION("misaligned records") {
        auto b = good;
        poke<std::uint64_t>(b, 84 + 260, 880);  // tensors 4 bytes into the table
        poke<std::int32_t>(b, 84 + 256, 3);
        CHECK_THAT(reject(b), Catch::Contains("tensor records offset 880 is misaligned"));
        b = good;
        poke<std::uint64_t>(b, 64, 1188);  // replay region
        CHECK_THAT(reject(b), Catch::Contains("replay region at offset 1188 is not 16-byte aligned"));
    }
    SECTION("overlapping regions") {
        auto b = good;
        poke<std::uint64_t>(b, 64, 1168);  // replay region over the tensor table
        CHECK_THAT(reject(b), Catch::Contains("replay region at offset 1168 overlaps the record tables, which end at 1180"));
        b = good;
        poke<std::int32_t>(b, 72, 600);  // replay region runs past the file
        CHECK_THAT(reject(b), Catch::Contains("do not fit in the 1736-byte file"));
    }
    SECTION("io tables") {
        auto b = good;
        poke<std::int32_t>(b, 1344 + 4, 9);  // io_offsets[1]
        CHECK_THAT(reject(b), Catch::Contains("output 0: io_offsets entry 9 is not a tensor index of node 0 (it has 4)"));
        b = good;
        poke<std::int32_t>(b, 1336, 2);  // io_nodes[0]
        CHECK_THAT(reject(b), Catch::Contains("input 0: io_nodes entry 2 is not a node index"));
        b = good;
        poke<std::uint32_t>(b, 8, 1000);  // num_inputs
        CHECK_THAT(reject(b), Catch::Contains("io_nodes table"));
    }
}

TEST_CASE("reader: overlapping node tables are rejected") {
    // Two nodes whose layer records overlap: node 1 claims node 0's layer.
    vnnx_subgraph_node_t node{};
    node.type = 300;
    vnnx_layer_t layer{};
    layer.type = 19;
    writer w;
    w.add_node(node, {layer}, {vnnx_tensor_t{}});
    w.add_node(node, {layer}, {vnnx_tensor_t{}});
    std::vector<std::byte> blob(16);
    vnnx_graph_t h{};
    h.io_nodes = obj_off_t{0};
    h.io_offsets = obj_off_t{8};
    auto b = w.write(h, blob, 0, 0);
    { const model_view ok(b, "two.vnnx"); CHECK(ok.num_layers() == 2); }
    poke<std::uint64_t>(b, 84 + 492 + 160, 84 + 2 * 492);  // node 1 sublayers = node 0's
    CHECK_THAT(reject(b), Catch::Contains("overlaps those of node 0 (IDENTITY)"));
}

TEST_CASE("reader: every truncation and every single-byte corruption is accepted or rejected cleanly") {
    const auto good = worked_example();
    std::size_t rejected = 0, accepted = 0;
    for (std::size_t len = 0; len < good.size(); len += 7) {
        try {
            model_view v({good.data(), len}, "cut.vnnx");
            ++accepted;
        } catch (const vnnx::error&) {
            ++rejected;
        }
    }
    CHECK(accepted == 0);  // data_bytes no longer matches
    // Flip each byte of the records and io tables; whatever is accepted must stay readable.
    for (std::size_t at = 0; at < 1360; ++at) {
        auto b = good;
        b[at] ^= std::byte{0x80};
        try {
            const model_view v(b, "flip.vnnx");
            for (std::size_t i = 0; i < v.num_nodes(); ++i) {
                CHECK(v.node_layers(i).size() == static_cast<std::size_t>(v.node(i).num_sublayers));
                CHECK(v.node_tensors(i).size() == static_cast<std::size_t>(v.node(i).num_tensors));
            }
            for (std::size_t i = 0; i < v.num_inputs(); ++i) CHECK(v.input(i).test_vector.size() <= b.size());
            ++accepted;
        } catch (const vnnx::error& e) {
            CHECK(std::string(e.what()).rfind("flip.vnnx: ", 0) == 0);
            ++rejected;
        }
    }
    CHECK(rejected > 100);
    CHECK(accepted > 100);
}
