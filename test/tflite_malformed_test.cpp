// Untrusted bytes: truncated files, flipped bytes, offsets pointing outside, huge counts, valid
// flatbuffers that are not TFLite models, and models that break the semantic rules all end in a
// vnnx::error naming the place and the rule, never a crash (also run under ASan/UBSan).
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "support/models.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/support_check.hpp"

using namespace vnnx::tflite;
using B = vnnx::builtin_operator;

namespace {

/// The error text of parse(), or "" when the bytes were accepted.
std::string parse_error(const std::vector<std::byte>& bytes, const char* source = "bad.tflite") {
    try {
        (void)model_view::parse(bytes, source);
    } catch (const vnnx::error& e) {
        return e.what();
    }
    return {};
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

/// Touches everything a consumer might read; must be safe for any model parse() accepted.
void walk(const model_view& m) {
    for (std::size_t s = 0; s < m.subgraph_count(); ++s) {
        const auto g = m.subgraph(s);
        for (std::size_t i = 0; i < g.tensor_count(); ++i) {
            const auto t = g.tensor(i);
            (void)t.name();
            (void)t.element_count();
            const auto d = t.data();
            if (!d.empty()) (void)d.back();
            const auto q = t.quant();
            if (!q.empty()) (void)(q.scale.back() + static_cast<float>(q.zero_point.back()));
        }
        for (std::size_t i = 0; i < g.operator_count(); ++i) {
            const auto o = g.op(i);
            (void)o.name();
            visit_options(o.options_type(), [&](auto tr) { (void)o.template options<decltype(tr)>(); }, all_options{});
        }
    }
    (void)summarize(m);
}

std::size_t offset_in(const std::vector<std::byte>& bytes, const void* p) {
    return static_cast<std::size_t>(static_cast<const std::byte*>(p) - bytes.data());
}

void put_u32(std::vector<std::byte>& bytes, std::size_t at, std::uint32_t v) { vnnx::store_le(bytes.data() + at, v); }

/// A small valid model: conv + add with constants.
std::vector<std::byte> small_model() {
    builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 4, 2}, quant{0.5f, 1});
    const auto w = b.add_constant("w", tensor_type::INT8, {3, 1, 1, 2}, random_int8(3, 6), quant{{0.1f, 0.2f, 0.3f}, {0, 0, 0}, 0});
    const auto bias = b.add_constant("b", tensor_type::INT32, {3}, std::vector<std::int32_t>{1, 2, 3});
    const auto c = b.add_tensor("c", tensor_type::INT8, {1, 4, 4, 3}, quant{0.25f, 0});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 4, 4, 3}, quant{0.5f, 0});
    b.add_operator(B::CONV_2D, {in, w, bias}, {c}, conv2d_options{});
    b.add_operator(B::ADD, {c, c}, {out}, add_options{});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("tflite malformed: too short, wrong identifier", "[tflite][malformed]") {
    const auto good = small_model();
    for (std::size_t n = 0; n < 8; ++n) {
        const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
        CHECK(contains(parse_error(cut), "too short"));
    }
    auto bad = good;
    std::memcpy(bad.data() + 4, "TFL2", 4);
    CHECK(parse_error(bad) == "bad.tflite: not a TFLite model: file identifier is 'TFL2', expected 'TFL3'");
}

TEST_CASE("tflite malformed: truncated at every length", "[tflite][malformed]") {
    for (const auto& good : {small_model(), demo_model()}) {
        REQUIRE(parse_error(good).empty());
        for (std::size_t n = 8; n < good.size(); ++n) {
            const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
            const auto e = parse_error(cut);
            INFO("truncated to " << n << " of " << good.size() << " bytes");
            REQUIRE_FALSE(e.empty());
            REQUIRE(contains(e, "bad.tflite: "));
        }
    }
}

TEST_CASE("tflite malformed: flipped bytes never crash", "[tflite][malformed]") {
    const auto good = small_model();
    std::size_t rejected = 0, accepted = 0;
    auto attempt = [&](const std::vector<std::byte>& bytes) {
        try {
            const auto m = model_view::parse(bytes, "flipped.tflite");
            walk(m);
            ++accepted;
        } catch (const vnnx::error& e) {
            CHECK(contains(e.what(), "flipped.tflite: "));
            ++rejected;
        }
    };
    for (std::size_t i = 0; i < good.size(); ++i) {
        for (std::uint8_t mask : {std::uint8_t{0xFF}, std::uint8_t{0x80}, std::uint8_t{0x01}}) {
            auto bad = good;
            bad[i] ^= std::byte{mask};
            attempt(bad);
        }
    }
    // Random multi-byte damage.
    prng r(99);
    for (int k = 0; k < 2000; ++k) {
        auto bad = good;
        const int flips = 1 + static_cast<int>(r.uniform(0, 7));
        for (int f = 0; f < flips; ++f)
            bad[static_cast<std::size_t>(r.uniform(0, static_cast<std::int64_t>(bad.size()) - 1))] =
                static_cast<std::byte>(r.uniform(0, 255));
        attempt(bad);
    }
    CHECK(rejected > 0);
    CHECK(accepted > 0);  // flips inside weights or names are still valid models
}

TEST_CASE("tflite malformed: offsets pointing outside and huge counts", "[tflite][malformed]") {
    const auto good = small_model();
    const auto m = model_view::parse(good, "good");
    const auto g = m.subgraph();

    SECTION("root offset outside the buffer") {
        auto bad = good;
        put_u32(bad, 0, static_cast<std::uint32_t>(good.size() + 100));
        CHECK(parse_error(bad) == "bad.tflite: model: the root table offset points outside the buffer");
    }
    SECTION("vtable of the root table outside the buffer") {
        auto bad = good;
        const std::size_t root = vnnx::load_le<std::uint32_t>(good.data());
        put_u32(bad, root, 0x7FFFFFF0u);
        CHECK(contains(parse_error(bad), "model (Model): table header or vtable lies outside the buffer"));
    }
    SECTION("huge vector length") {
        auto bad = good;
        const auto shape = g.tensor(1).shape();
        put_u32(bad, offset_in(good, shape.data()) - 4, 0x3FFFFFFFu);
        const auto e = parse_error(bad);
        CHECK(contains(e, "subgraphs[0].tensors[1] (Tensor): field 'shape' (slot 0) is a vector whose length runs past"));
    }
    SECTION("huge tensor count") {
        auto bad = good;
        const auto* tensors = g.tensor(0).table();
        const auto* vec = flatbuffers::GetRoot<flatbuffers::Table>(good.data())
                              ->GetPointer<const detail::fb_table_vector*>(tbl::Model::subgraphs.voffset())
                              ->Get(0)
                              ->GetPointer<const detail::fb_table_vector*>(tbl::SubGraph::tensors.voffset());
        REQUIRE(vec->Get(0) == tensors);
        put_u32(bad, offset_in(good, vec), 0xFFFFFFFFu);
        CHECK(contains(parse_error(bad), "subgraphs[0] (SubGraph): field 'tensors' (slot 0) is a vector whose length runs past"));
    }
    SECTION("string offset outside") {
        auto bad = good;
        const auto* t = g.tensor(2).table();
        const auto* field = t->GetAddressOf(tbl::Tensor::name.voffset());
        REQUIRE(field != nullptr);
        put_u32(bad, offset_in(good, field), 0x7FFFFF00u);
        CHECK(contains(parse_error(bad), "subgraphs[0].tensors[2] (Tensor): field 'name' (slot 3) has an offset that points outside"));
    }
    SECTION("buffer index out of range") {
        auto bad = good;
        const auto* field = g.tensor(1).table()->GetAddressOf(tbl::Tensor::buffer.voffset());
        REQUIRE(field != nullptr);
        put_u32(bad, offset_in(good, field), 77);
        CHECK(contains(parse_error(bad), "subgraphs[0].tensors[1] (Tensor 'w'): buffer index 77 out of range (3 buffers)"));
    }
    SECTION("opcode index out of range") {
        auto bad = good;
        const auto* field = g.op(1).table()->GetAddressOf(tbl::Operator::opcode_index.voffset());
        REQUIRE(field != nullptr);
        put_u32(bad, offset_in(good, field), 5);
        CHECK(contains(parse_error(bad), "subgraphs[0].operators[1] (Operator): opcode_index 5 out of range (2 operator codes)"));
    }
    SECTION("unknown builtin code") {
        auto bad = good;
        const auto* codes = flatbuffers::GetRoot<flatbuffers::Table>(good.data())
                                ->GetPointer<const detail::fb_table_vector*>(tbl::Model::operator_codes.voffset());
        const auto* field = codes->Get(0)->GetAddressOf(tbl::OperatorCode::builtin_code.voffset());
        REQUIRE(field != nullptr);  // CONV_2D = 3 is not the default
        put_u32(bad, offset_in(good, field), 4000);
        try {
            (void)model_view::parse(bad, "bad.tflite");
            FAIL("accepted");
        } catch (const vnnx::error& e) {
            CHECK(e.kind() == vnnx::error_kind::unsupported);
            CHECK(std::string(e.what()) ==
                  "bad.tflite: operator_codes[0] (OperatorCode): builtin code 4000 is not known to this reader (0..205)");
        }
    }
}

TEST_CASE("tflite malformed: valid flatbuffers that are not TFLite models", "[tflite][malformed]") {
    SECTION("no file identifier") {
        flatbuffers::FlatBufferBuilder fb;
        const auto start = fb.StartTable();
        fb.AddElement<std::uint32_t>(4, 3, 0);
        fb.Finish(flatbuffers::Offset<flatbuffers::Table>(fb.EndTable(start)));
        const auto* p = reinterpret_cast<const std::byte*>(fb.GetBufferPointer());
        const std::vector<std::byte> bytes(p, p + fb.GetSize());
        CHECK(contains(parse_error(bytes), "not a TFLite model: file identifier is"));
    }
    SECTION("subgraphs field holding a number instead of a vector") {
        flatbuffers::FlatBufferBuilder fb;
        const auto start = fb.StartTable();
        fb.AddElement<std::uint32_t>(tbl::Model::version.voffset(), 3, 0);
        fb.AddElement<std::uint32_t>(tbl::Model::subgraphs.voffset(), 0x7FFF0000u, 0);
        fb.Finish(flatbuffers::Offset<flatbuffers::Table>(fb.EndTable(start)), "TFL3");
        const auto* p = reinterpret_cast<const std::byte*>(fb.GetBufferPointer());
        const std::vector<std::byte> bytes(p, p + fb.GetSize());
        CHECK(contains(parse_error(bytes), "model (Model): field 'subgraphs' (slot 2) has an offset that points outside"));
    }
    SECTION("version holding a string, then no subgraphs") {
        flatbuffers::FlatBufferBuilder fb;
        const auto s = fb.CreateString("three");
        const auto start = fb.StartTable();
        fb.AddOffset(tbl::Model::version.voffset(), s);
        fb.Finish(flatbuffers::Offset<flatbuffers::Table>(fb.EndTable(start)), "TFL3");
        const auto* p = reinterpret_cast<const std::byte*>(fb.GetBufferPointer());
        const std::vector<std::byte> bytes(p, p + fb.GetSize());
        CHECK(contains(parse_error(bytes), "schema version is"));
    }
    SECTION("an empty model table") {
        flatbuffers::FlatBufferBuilder fb;
        const auto start = fb.StartTable();
        fb.AddElement<std::uint32_t>(tbl::Model::version.voffset(), 3, 0);
        fb.Finish(flatbuffers::Offset<flatbuffers::Table>(fb.EndTable(start)), "TFL3");
        const auto* p = reinterpret_cast<const std::byte*>(fb.GetBufferPointer());
        const std::vector<std::byte> bytes(p, p + fb.GetSize());
        CHECK(parse_error(bytes) == "bad.tflite: model (Model): has no subgraphs");
    }
}

TEST_CASE("tflite malformed: semantic rules", "[tflite][malformed]") {
    builder b;
    b.allow_invalid();
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4}, quant{0.5f, 0});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 4}, quant{0.5f, 0});
    b.set_inputs({x});
    b.set_outputs({y});

    SECTION("operator input index out of range") {
        b.add_operator(B::RELU, {7}, {y});
        CHECK(parse_error(b.finish()) ==
              "bad.tflite: subgraphs[0].operators[0] (Operator RELU): inputs[0] = 7 is not a tensor index (2 tensors)");
    }
    SECTION("absent optional input (-1) is fine, -2 is not") {
        b.add_operator(B::RELU, {x, -1}, {y});
        CHECK(parse_error(b.finish()).empty());
        builder c;
        c.add_tensor("x", tensor_type::INT8, {1});
        c.add_operator(B::RELU, {0, -2}, {0});
        CHECK(contains(parse_error(c.finish()), "inputs[1] = -2 is not a tensor index"));
    }
    SECTION("operator output -1") {
        b.add_operator(B::RELU, {x}, {-1});
        CHECK(contains(parse_error(b.finish()), "outputs[0] = -1 is not a tensor index"));
    }
    SECTION("subgraph output out of range") {
        b.add_operator(B::RELU, {x}, {y});
        b.set_outputs({y, 2});
        CHECK(parse_error(b.finish()) == "bad.tflite: subgraphs[0] (SubGraph): outputs[1] = 2 is not a tensor index (2 tensors)");
    }
    SECTION("negative dimension") {
        b.add_tensor("neg", tensor_type::INT8, {1, -3});
        CHECK(parse_error(b.finish()) ==
              "bad.tflite: subgraphs[0].tensors[2] (Tensor 'neg'): shape[1] is -3; dimensions must be >= 0");
    }
    SECTION("element count overflow") {
        b.add_tensor("big", tensor_type::INT8, {2147483647, 2147483647, 2147483647, 4});
        try {
            (void)model_view::parse(b.finish(), "bad.tflite");
            FAIL("accepted");
        } catch (const vnnx::error& e) {
            CHECK(e.kind() == vnnx::error_kind::limit);
            CHECK(contains(e.what(), "tensors[2] (Tensor 'big'): element count overflows"));
        }
    }
    SECTION("buffer size does not match shape x element size") {
        b.add_constant("w", tensor_type::INT32, {2, 2}, std::vector<std::int32_t>{1, 2, 3});
        CHECK(parse_error(b.finish()) ==
              "bad.tflite: subgraphs[0].tensors[2] (Tensor 'w'): buffer 1 holds 12 bytes; shape x int32 needs 16");
    }
    SECTION("scale and zero point counts differ") {
        b.add_tensor("q", tensor_type::INT8, {2, 3}, quant{{0.1f, 0.2f}, {0}, 0});
        CHECK(contains(parse_error(b.finish()), "tensors[2] (Tensor 'q'): quantization has 2 scales but 1 zero points"));
    }
    SECTION("per-channel count does not match the quantized dimension") {
        b.add_tensor("q", tensor_type::INT8, {2, 3}, quant{{0.1f, 0.2f}, {0, 0}, 1});
        CHECK(contains(parse_error(b.finish()), "per-channel quantization has 2 scales but dimension 1 has size 3"));
    }
    SECTION("quantized dimension outside the rank") {
        b.add_tensor("q", tensor_type::INT8, {2, 3}, quant{{0.1f, 0.2f}, {0, 0}, 5});
        CHECK(contains(parse_error(b.finish()), "quantized_dimension 5 is outside the tensor's rank 2"));
    }
    SECTION("a 1-D per-channel tensor with a stale dimension reads along 0") {
        b.add_tensor("bias", tensor_type::INT32, {3}, quant{{0.1f, 0.2f, 0.3f}, {0, 0, 0}, 3});
        const auto bytes = b.finish();
        const auto m = model_view::parse(bytes, "ok");
        CHECK(m.subgraph().tensor(2).quant().quantized_dimension == 0);
    }
    SECTION("scale not finite") {
        b.add_tensor("q", tensor_type::INT8, {1}, quant{std::numeric_limits<float>::infinity(), 0});
        CHECK(contains(parse_error(b.finish()), "quantization scale[0] is not finite"));
    }
    SECTION("two producers of one tensor") {
        b.add_operator(B::RELU, {x}, {y});
        b.add_operator(B::RELU6, {x}, {y});
        CHECK(parse_error(b.finish()) ==
              "bad.tflite: subgraphs[0].operators[1] (Operator RELU6): output tensor 1 is also written by operator 0");
    }
    SECTION("a cycle") {
        const auto z = b.add_tensor("z", tensor_type::INT8, {1, 4});
        b.add_operator(B::ADD, {x, z}, {y});
        b.add_operator(B::RELU, {y}, {z});
        CHECK(contains(parse_error(b.finish()), "(Operator): is part of a cycle"));
    }
    SECTION("options table of another operator") {
        b.add_operator(B::ADD, {x, x}, {y}, conv2d_options{});
        CHECK(parse_error(b.finish()) ==
              "bad.tflite: subgraphs[0].operators[0] (Operator ADD): builtin_options is Conv2DOptions but ADD takes AddOptions");
    }
    SECTION("an options enum out of range") {
        b.add_operator(B::RELU, {x}, {y});
        b.add_operator(B::CONV_2D, {x, x}, {b.add_tensor("c", tensor_type::INT8, {1, 4})},
                       conv2d_options{static_cast<padding_mode>(7), 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32});
        CHECK(parse_error(b.finish()) ==
              "bad.tflite: subgraphs[0].operators[1].builtin_options (Conv2DOptions): field 'padding' (slot 0) holds 7, "
              "which is not a value of its enum");
    }
    SECTION("an unknown tensor type") {
        b.add_tensor("odd", static_cast<tensor_type>(42), {1});
        CHECK(contains(parse_error(b.finish()), "tensors[2] (Tensor 'odd'): type 42 is not a TFLite tensor type"));
    }
}

TEST_CASE("tflite malformed: misaligned caller bytes are copied, not misread", "[tflite][malformed]") {
    const auto good = small_model();
    std::vector<std::byte> shifted(good.size() + 1);
    std::memcpy(shifted.data() + 1, good.data(), good.size());
    const std::span<const std::byte> view(shifted.data() + 1, good.size());
    const auto m = model_view::parse(view, "shifted");
    const auto bias = m.subgraph().tensor(2);
    REQUIRE(bias.data().size() == 12);
    CHECK(reinterpret_cast<std::uintptr_t>(bias.data().data()) % 4 == 0);
    CHECK(vnnx::load_le<std::int32_t>(bias.data().data() + 8) == 3);
}

TEST_CASE("tflite malformed: a real model truncated and damaged", "[tflite][malformed][models]") {
    auto path = vnnx::test::shared_model("tflite-micro__hello_world_int8");
    if (!path) return;
    const auto good = vnnx::read_file(*path);
    REQUIRE(parse_error(good).empty());
    for (std::size_t n = 0; n < good.size(); ++n) {
        const std::vector<std::byte> cut(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
        INFO("truncated to " << n);
        REQUIRE_FALSE(parse_error(cut).empty());
    }
    prng r(5);
    std::size_t rejected = 0;
    for (int k = 0; k < 3000; ++k) {
        auto bad = good;
        const int flips = 1 + static_cast<int>(r.uniform(0, 3));
        for (int f = 0; f < flips; ++f)
            bad[static_cast<std::size_t>(r.uniform(0, static_cast<std::int64_t>(bad.size()) - 1))] ^=
                static_cast<std::byte>(r.uniform(1, 255));
        try {
            walk(model_view::parse(bad, "damaged.tflite"));
        } catch (const vnnx::error&) {
            ++rejected;
        }
    }
    CHECK(rejected > 0);
}
