// An IDENTITY node whose one layer reads the node's copy of its input (the `.id` copy before
// ARG_MAX in a segmentation head: RESIZE_BILINEAR -> ARG_MAX) runs the layer on the input in
// place when nothing else reads the copy: the same output bytes as copying first, on every ISA
// and thread count, equal to the reference interpreter, and the copy is really skipped.
#include <cstdint>
#include <vector>

#include "ops_pool_harness.hpp"

using namespace pool_test;

namespace {

struct head {
    std::int32_t ih, iw, oh, ow, classes;
    tensor_type t;
    bool align = false;
};

// input -> RESIZE_BILINEAR (ih x iw -> oh x ow) -> ARG_MAX over the classes -> output; with
// `also_scores` the upsampled scores are a graph output too.
std::vector<std::byte> head_model(const head& s, bool also_scores = false) {
    vnnx::tflite::builder b;
    const auto q = s.t == tensor_type::UINT8 ? q8(0.1f, 120) : q8(0.1f, -4);
    const auto in = b.add_tensor("scores", s.t, {1, s.ih, s.iw, s.classes}, q);
    const auto up = b.add_tensor("upsampled", s.t, {1, s.oh, s.ow, s.classes}, q);
    const auto out = b.add_tensor("labels", tensor_type::INT32, {1, s.oh, s.ow}, {});
    const auto size = b.add_constant("size", tensor_type::INT32, {2}, std::vector<std::int32_t>{s.oh, s.ow});
    b.add_operator(builtin_operator::RESIZE_BILINEAR, {in, size}, {up}, vnnx::tflite::resize_bilinear_options{0, 0, s.align, false});
    const auto ax = b.add_constant("axis", tensor_type::INT32, {1}, std::vector<std::int32_t>{3});
    b.add_operator(builtin_operator::ARG_MAX, {up, ax}, {out}, vnnx::tflite::arg_max_options{tensor_type::INT32});
    b.set_inputs({in});
    if (also_scores) b.set_outputs({out, up});
    else b.set_outputs({out});
    return b.finish();
}

// The node whose copy feeds its one ARG_MAX layer, or the node count when there is none.
std::size_t copying_argmax_node(const vnnx::format::model_view& v) {
    for (std::size_t k = 0; k < v.num_nodes(); ++k) {
        const auto layers = v.node_layers(k);
        const auto recs = v.node_tensors(k);
        if (v.node(k).type == static_cast<std::int32_t>(vnnx::format::vnnx_operator::IDENTITY) && layers.size() == 1 &&
            layers[0].type == static_cast<std::int32_t>(builtin_operator::ARG_MAX) && recs.size() == 4 &&
            recs[0].direct.value != recs[1].direct.value && recs[2].direct.value == recs[1].direct.value)
            return k;
    }
    return v.num_nodes();
}

// uint8 image [1,h,w,3] -> QUANTIZE to int8 -> PAD (1 row/column before, 2 after): a classifier's
// input, one IDENTITY node whose layers are the LUT and the PAD.
std::vector<std::byte> image_model(std::int32_t h, std::int32_t w) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("image", tensor_type::UINT8, {1, h, w, 3}, q8(0.0078f, 128));
    const auto q = b.add_tensor("quantized", tensor_type::INT8, {1, h, w, 3}, q8(0.0083f, 3));
    const auto out = b.add_tensor("padded", tensor_type::INT8, {1, h + 3, w + 3, 3}, q8(0.0083f, 3));
    const auto pads = b.add_constant("pads", tensor_type::INT32, {4, 2}, std::vector<std::int32_t>{0, 0, 1, 2, 1, 2, 0, 0});
    b.add_operator(builtin_operator::QUANTIZE, {in}, {q});
    b.add_operator(builtin_operator::PAD, {q, pads}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("fused identity: a node's first layer of several reads the input in place") {
    for (auto [h, w] : {std::pair{5, 7}, std::pair{31, 2}, std::pair{64, 64}}) {
        INFO("image " << h << "x" << w);
        const auto model = image_model(h, w);
        const auto x = random_array(dtype::uint8, {1, h, w, 3}, 91);
        const auto r = run_both(model, {x});
        REQUIRE(r.sim.size() == 1);
        CHECK(r.sim[0].data == r.ref[0].data);  // QUANTIZE and PAD are exact
        const vnnx::format::model_view v(r.compiled.bytes, "image.vnnx");
        REQUIRE(v.num_nodes() == 1);
        REQUIRE(v.node(0).type == static_cast<std::int32_t>(vnnx::format::vnnx_operator::IDENTITY));
        REQUIRE(v.node_layers(0).size() == 2);
        for (auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::isa_kind::avx512_vnni,
                          vnnx::sim::isa_kind::avx512_vbmi, vnnx::sim::isa_kind::avx512_amx}) {
            if (!vnnx::sim::isa_supported(isa)) continue;
            for (bool fuse : {false, true}) {
                vnnx::sim::run_options ro{isa, 2};
                ro.fuse_layers = fuse;
                vnnx::sim::machine m(r.compiled.bytes, "image.vnnx", ro);
                m.set_input(0, to_cf(x).data);
                m.run();
                CHECK(m.layers_fused(0) == (fuse ? 1u : 0u));
                const auto o = m.output(0);
                const auto want = to_cf(r.ref[0]).data;
                CHECK(std::equal(o.begin(), o.end(), want.begin(), want.end()));
            }
        }
    }
}

TEST_CASE("fused identity: the layer reads the node's input in place, same bytes as after the copy") {
    const std::vector<head> heads = {
        {5, 5, 37, 37, 21, tensor_type::UINT8},  // DeepLabV3's head, smaller
        {4, 6, 9, 13, 3, tensor_type::INT8},
        {3, 3, 3, 3, 7, tensor_type::UINT8},     // a resize to the same size
        {6, 2, 11, 40, 130, tensor_type::UINT8}, // more than 128 classes
    };
    // The same-size uint8 head has integer taps: on AVX2 and AVX-512 it runs as one segmentation
    // head (the next test), which leaves the ARG_MAX node's input unwritten too.
    auto head_fused = [](const head& s, vnnx::sim::isa_kind isa) {
        return isa != vnnx::sim::isa_kind::scalar && s.t == tensor_type::UINT8 && s.ih == s.oh && s.iw == s.ow;
    };
    for (const auto& s : heads) {
        INFO("head " << s.ih << "x" << s.iw << " -> " << s.oh << "x" << s.ow << ", " << s.classes << " classes");
        const auto model = head_model(s);
        const auto x = random_array(s.t == tensor_type::UINT8 ? dtype::uint8 : dtype::int8, {1, s.ih, s.iw, s.classes}, 77);
        const auto r = run_both(model, {x});
        REQUIRE(r.sim.size() == 1);
        CHECK(r.sim[0].data == r.ref[0].data);  // ARG_MAX after the resize is exact

        const auto& bytes = r.compiled.bytes;
        const vnnx::format::model_view v(bytes, "head.vnnx");
        const std::size_t k = copying_argmax_node(v);
        REQUIRE(k < v.num_nodes());
        const std::uint64_t copy_bytes = static_cast<std::uint64_t>(s.oh) * s.ow * s.classes;
        for (auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::isa_kind::avx2, vnnx::sim::isa_kind::avx512_vnni,
                          vnnx::sim::isa_kind::avx512_vbmi, vnnx::sim::isa_kind::avx512_amx}) {
            if (!vnnx::sim::isa_supported(isa)) continue;
            for (unsigned threads : {1u, 2u}) {
                INFO("isa " << vnnx::sim::isa_name(isa) << ", " << threads << " thread(s)");
                // The output, and node k's input and copy bytes after the run.
                auto run = [&](bool fuse, std::vector<std::byte>& source, std::vector<std::byte>& copy) {
                    vnnx::sim::run_options ro{isa, threads};
                    ro.fuse_layers = fuse;
                    vnnx::sim::machine m(bytes, "head.vnnx", ro);
                    m.set_input(0, to_cf(x).data);
                    m.run();
                    CHECK(m.layers_fused(k) == (fuse ? 1u : 0u));
                    const auto t = m.resolve(k);
                    REQUIRE(t[0].count == copy_bytes);
                    REQUIRE(t[1].count == copy_bytes);
                    source.assign(t[0].data, t[0].data + copy_bytes);
                    copy.assign(t[1].data, t[1].data + copy_bytes);
                    const auto o = m.output(0);
                    return std::vector<std::byte>(o.begin(), o.end());
                };
                std::vector<std::byte> source, copied, fused_source, skipped;
                const auto want = run(false, source, copied);
                CHECK(run(true, fused_source, skipped) == want);
                CHECK((fused_source == source) == !head_fused(s, isa));
                // Without fusion the copy holds the upsampled scores; with it, it was not written.
                CHECK(copied == source);
                CHECK(skipped != source);
            }
        }
    }
}

TEST_CASE("fused identity: a dyadic uint8 resize and its channel ARG_MAX run as one segmentation head") {
    const std::vector<head> heads = {
        {5, 5, 65, 65, 21, tensor_type::UINT8, true},   // DeepLabV3's head, smaller: 1/16 steps, unit 2^8
        {3, 5, 17, 33, 21, tensor_type::UINT8, true},   // 1/8 both ways, rows of two bands
        {3, 3, 9, 17, 200, tensor_type::UINT8, true},   // 200 classes, 1/4 and 1/8
        {4, 4, 16, 16, 7, tensor_type::UINT8, false},   // without align_corners: 1/4
        {7, 7, 7, 7, 5, tensor_type::UINT8, false},     // the same size: integer taps
    };
    for (const auto& s : heads) {
        INFO("head " << s.ih << "x" << s.iw << " -> " << s.oh << "x" << s.ow << ", " << s.classes << " classes");
        const auto x = random_array(dtype::uint8, {1, s.ih, s.iw, s.classes}, 78);
        // run_both: the scalar path equals the reference, every SIMD path (fused) equals the scalar one.
        const auto model = head_model(s);
        const auto r = run_both(model, {x});
        REQUIRE(r.sim.size() == 1);
        CHECK(r.sim[0].data == r.ref[0].data);
        const auto& bytes = r.compiled.bytes;
        const vnnx::format::model_view v(bytes, "head.vnnx");
        const std::size_t k = copying_argmax_node(v);
        REQUIRE(k < v.num_nodes());
        REQUIRE(k > 0);
        const std::uint64_t map_bytes = static_cast<std::uint64_t>(s.oh) * s.ow * s.classes;
        std::vector<std::byte> scores;  // the score map as the scalar (unfused) run leaves it
        for (auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::isa_kind::avx2, vnnx::sim::isa_kind::avx512_vnni,
                         vnnx::sim::isa_kind::avx512_vbmi, vnnx::sim::isa_kind::avx512_amx}) {
            if (!vnnx::sim::isa_supported(isa)) continue;
            for (unsigned threads : {1u, 2u}) {
                INFO("isa " << vnnx::sim::isa_name(isa) << ", " << threads << " thread(s)");
                vnnx::sim::machine m(bytes, "head.vnnx", {isa, threads});
                m.set_input(0, to_cf(x).data);
                m.run();
                const auto o = m.output(0);
                const auto want = to_cf(r.ref[0]).data;
                CHECK(std::equal(o.begin(), o.end(), want.begin(), want.end()));
                // Fused: the ARG_MAX node was carried out by the resize node, the score map (its
                // input) never written; unfused (scalar) it holds the upsampled scores.
                const bool fused = isa != vnnx::sim::isa_kind::scalar;
                CHECK(m.layers_fused(k) == 1u);
                const auto t = m.resolve(k);
                REQUIRE(t[0].count == map_bytes);
                const std::vector<std::byte> map(t[0].data, t[0].data + map_bytes);
                if (isa == vnnx::sim::isa_kind::scalar) scores = map;
                REQUIRE(scores.size() == map_bytes);
                CHECK((map == scores) == !fused);
            }
        }
        // When the score map is a graph output too, it must be written: no fusion, both outputs right.
        const auto both = run_both(head_model(s, true), {x});
        REQUIRE(both.sim.size() == 2);
        CHECK(both.sim[0].data == both.ref[0].data);
        CHECK(both.sim[1].data == both.ref[1].data);
    }
}
