// MIRROR_PAD: builder-made single-op models, REFLECT and SYMMETRIC, paddings on every one of the
// last three axes, ranks 1 to 4, int8 and uint8, the largest pads each mode allows; the simulator
// agrees bit for bit with the reference, the reference with hand-derived TFLite values.
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "ops_movement_harness.hpp"
#include "vnnx/compiler/verify.hpp"

using namespace movement_test;
using vnnx::tflite::mirror_pad_mode;

namespace {

std::vector<std::byte> mirror_model(tensor_type t, const std::vector<std::int32_t>& in, const std::vector<std::int32_t>& pads,
                                    mirror_pad_mode mode) {
    vnnx::tflite::builder b;
    std::vector<std::int32_t> out = in;
    for (std::size_t a = 0; a < in.size(); ++a) out[a] += pads[2 * a] + pads[2 * a + 1];
    const auto x = b.add_tensor("x", t, in, q8());
    const auto p = b.add_constant("pads", tensor_type::INT32, {static_cast<std::int32_t>(in.size()), 2}, pads);
    const auto y = b.add_tensor("y", t, out, q8());
    b.add_operator(builtin_operator::MIRROR_PAD, {x, p}, {y}, opt::mirror_pad_options{mode});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

}  // namespace

TEST_CASE("mirror pad: simulator equals the reference over modes, axes, ranks and types") {
    struct variant {
        tensor_type type;
        std::vector<std::int32_t> in, pads;
    };
    const std::vector<variant> variants{
        {tensor_type::INT8, {1, 5, 6, 3}, {0, 0, 1, 2, 2, 0, 0, 0}},
        {tensor_type::INT8, {1, 4, 4, 5}, {0, 0, 0, 0, 0, 0, 1, 2}},   // channels
        {tensor_type::UINT8, {1, 3, 7, 2}, {0, 0, 2, 2, 1, 1, 1, 1}},  // every axis; REFLECT's maximum on H
        {tensor_type::INT8, {6, 7, 4}, {3, 1, 0, 2, 2, 0}},            // rank 3
        {tensor_type::INT8, {5, 9}, {1, 4, 3, 3}},                     // rank 2
        {tensor_type::UINT8, {11}, {4, 2}},                            // rank 1
    };
    std::uint64_t seed = 70;
    for (const auto mode : {mirror_pad_mode::REFLECT, mirror_pad_mode::SYMMETRIC})
        for (const auto& v : variants) {
            INFO("mode " << static_cast<int>(mode) << " rank " << v.in.size() << " seed " << seed + 1);
            const auto model = mirror_model(v.type, v.in, v.pads, mode);
            const auto x = random_array(v.type == tensor_type::UINT8 ? dtype::uint8 : dtype::int8, {v.in.begin(), v.in.end()}, ++seed);
            const auto r = run_both(model, {x});
            require_equal(r);
            const emitted e(r.compiled);
            REQUIRE(e.view.num_nodes() == 1);
            const auto layers = e.view.node_layers(0);
            REQUIRE(layers.size() == 1);
            CHECK(layers[0].type == 100);
            CHECK(layers[0].options.get<vnnx::format::layer_options::MirrorPadOptions>().mode ==
                  (mode == mirror_pad_mode::REFLECT ? 1 : 0));
        }
}

TEST_CASE("mirror pad: TFLite's values, SYMMETRIC up to the whole axis") {
    ndarray x(dtype::int8, {3});
    for (std::size_t i = 0; i < 3; ++i) x.set<std::int64_t>(i, static_cast<std::int64_t>(i) + 1);
    auto values = [&](mirror_pad_mode mode, std::vector<std::int32_t> pads) {
        const auto r = run_both(mirror_model(tensor_type::INT8, {3}, pads, mode), {x});
        require_equal(r);
        std::vector<std::int64_t> v;
        for (std::size_t i = 0; i < r.ref[0].element_count(); ++i) v.push_back(r.ref[0].get<std::int64_t>(i));
        return v;
    };
    CHECK(values(mirror_pad_mode::REFLECT, {2, 2}) == std::vector<std::int64_t>{3, 2, 1, 2, 3, 2, 1});
    CHECK(values(mirror_pad_mode::SYMMETRIC, {2, 2}) == std::vector<std::int64_t>{2, 1, 1, 2, 3, 3, 2});
    CHECK(values(mirror_pad_mode::SYMMETRIC, {3, 1}) == std::vector<std::int64_t>{3, 2, 1, 1, 2, 3, 3});
}

TEST_CASE("mirror pad: the checks name the rule broken") {
    auto problems = [](const std::vector<std::byte>& bytes) {
        const auto m = vnnx::tflite::model_view::parse(bytes, "mirror.tflite");
        return vnnx::compiler::find_problems(m);
    };
    auto p = problems(mirror_model(tensor_type::INT8, {1, 3, 4, 2}, {0, 0, 3, 0, 0, 0, 0, 0}, mirror_pad_mode::REFLECT));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("pads above 2 (REFLECT over 3 elements)"));
    CHECK(problems(mirror_model(tensor_type::INT8, {1, 3, 4, 2}, {0, 0, 3, 0, 0, 0, 0, 0}, mirror_pad_mode::SYMMETRIC)).empty());
    p = problems(mirror_model(tensor_type::INT8, {2, 3, 4, 2}, {1, 0, 0, 0, 0, 0, 0, 0}, mirror_pad_mode::SYMMETRIC));
    REQUIRE(p.size() == 1);
    CHECK_THAT(p[0].reason, Catch::Contains("leading axis 0"));
}
