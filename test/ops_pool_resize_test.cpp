// RESIZE_NEAREST_NEIGHBOR / RESIZE_BILINEAR (lowering.md §7.5, §8.8): ResizeOptions by hand
// (scale, mode with the align_corners / half_pixel_centers bits, c_inc), and the simulator
// bit-exact with ref::run for ×2, ×0.5, non-integer scales, all four option combinations,
// int8 and uint8.
#include "ops_pool_harness.hpp"

#include <vnnx/ops/resize.hpp>

using namespace pool_test;

namespace {

std::vector<std::byte> resize_model(builtin_operator code, tensor_type t, std::int32_t ih, std::int32_t iw,
                                    std::int32_t oh, std::int32_t ow, std::int32_t c, bool align, bool half) {
    vnnx::tflite::builder b;
    const auto q = t == tensor_type::UINT8 ? q8(0.1f, 120) : q8(0.1f, -4);
    const auto in = b.add_tensor("in", t, {1, ih, iw, c}, q);
    const auto out = b.add_tensor("out", t, {1, oh, ow, c}, q);
    const auto size = b.add_constant("size", tensor_type::INT32, {2}, std::vector<std::int32_t>{oh, ow});
    if (code == builtin_operator::RESIZE_BILINEAR)
        b.add_operator(code, {in, size}, {out}, vnnx::tflite::resize_bilinear_options{0, 0, align, half});
    else
        b.add_operator(code, {in, size}, {out}, vnnx::tflite::resize_nearest_neighbor_options{align, half});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

struct size_case {
    std::int32_t ih, iw, oh, ow, c;
};

}  // namespace

TEST_CASE("resize: simulator equals ref::run for every option combination") {
    const std::vector<size_case> sizes = {
        {4, 5, 8, 10, 3},   // ×2
        {8, 6, 4, 3, 2},    // ×0.5
        {5, 7, 9, 11, 3},   // non-integer up
        {9, 10, 5, 7, 2},   // non-integer down
        {3, 3, 7, 7, 4},
        {5, 7, 33, 37, 2},  // rows wider than one 16-column vector step, with a tail
        {4, 9, 7, 150, 2},  // output rows over several 64-column steps of the tap tables
        {3, 70, 5, 140, 2}, // input rows wider than 64 bytes
        {5, 41, 10, 82, 3}, // x2 over 16-byte vectors and a ragged end (nearest: each byte twice, rows in pairs)
        {6, 16, 12, 32, 2}, // x2, rows of exactly one vector
        {5, 20, 9, 40, 2},  // x2 columns, rows not all in pairs
        {1, 1, 7, 9, 5},    // one pixel broadcast (filled rows)
        {3, 1, 8, 5, 2},    // one column, rows repeated
        {6, 9, 140, 75, 7}, // bilinear work items: bands of 64 rows, groups of 3 planes and a rest
        // Dyadic weights (align_corners with power-of-two ratios), the SIMD paths' integer form:
        {5, 9, 65, 129, 3},   // 1/16 both ways (DeepLabV3's 33 -> 513), the largest exact unit, 2^8
        {3, 5, 9, 17, 2},     // 1/4 both ways; without flags 3/9, 5/17: the float rule
        {4, 4, 16, 16, 3},    // without flags 1/4; with half_pixel_centers negative weights at the edge
        {2, 70, 17, 139, 2},  // 1/16 rows, 1/2 columns over 64 input bytes (columns without permutes)
        {3, 3, 65, 65, 2},    // 1/32 both ways: 2^10, past the 16-bit form, the float rule
        {7, 7, 7, 7, 2},      // a unit ratio: integer taps, shift 0
    };
    for (auto code : {builtin_operator::RESIZE_NEAREST_NEIGHBOR, builtin_operator::RESIZE_BILINEAR})
        for (auto t : {tensor_type::INT8, tensor_type::UINT8})
            for (int flags = 0; flags < 3; ++flags)  // none, align_corners, half_pixel_centers
                for (std::size_t i = 0; i < sizes.size(); ++i) {
                    const auto& s = sizes[i];
                    INFO(vnnx::builtin_name(code) << " type " << static_cast<int>(t) << " flags " << flags << " size case " << i);
                    const auto model = resize_model(code, t, s.ih, s.iw, s.oh, s.ow, s.c, flags == 1, flags == 2);
                    const auto r = run_both(model, {random_array(dtype_of(t), {1, s.ih, s.iw, s.c}, 300 + i)});
                    require_equal(r);
                }
}

TEST_CASE("resize: ResizeOptions fields by hand") {
    SECTION("nearest ×2 on 3 → 6 columns: c_inc 2,2,2, mode 0") {
        const emitted e(vnnx::compile(resize_model(builtin_operator::RESIZE_NEAREST_NEIGHBOR, tensor_type::INT8, 2, 3,
                                                   4, 6, 2, false, false),
                                      {}, "pool.tflite"));
        const auto& l = e.view.node_layers(0).back();
        CHECK(l.type == 97);
        const auto r = l.options.get<vnnx::format::layer_options::ResizeOptions>();
        CHECK(r.scale[0] == 2.0f);
        CHECK(r.scale[1] == 2.0f);
        CHECK(r.mode == 0);
        CHECK(r.num_c_inc == 3);
        const auto c = e.view.range(r.c_inc.value, 3, "c_inc");
        CHECK(std::to_integer<int>(c[0]) == 2);
        CHECK(std::to_integer<int>(c[1]) == 2);
        CHECK(std::to_integer<int>(c[2]) == 2);
        CHECK(r.rows_trips == 1);
        CHECK(r.cols_trips == 1);
        CHECK(r.maps_trips == 1);
        CHECK(r.in_scratchpad == 0);
    }
    SECTION("nearest ×0.5: no c_inc") {
        const emitted e(vnnx::compile(resize_model(builtin_operator::RESIZE_NEAREST_NEIGHBOR, tensor_type::INT8, 8, 6,
                                                   4, 3, 2, false, true),
                                      {}, "pool.tflite"));
        const auto r = e.view.node_layers(0).back().options.get<vnnx::format::layer_options::ResizeOptions>();
        CHECK(r.scale[0] == 0.5f);
        CHECK(r.mode == 0x200);  // half_pixel_centers bit
        CHECK(r.num_c_inc == 0);
        CHECK(r.c_inc.absent());
    }
    SECTION("bilinear 3 → 7 columns: ratio trunc((3072 + 3.5)/7) = 439, indices 0,0,0,1,1,2,2") {
        const emitted e(vnnx::compile(resize_model(builtin_operator::RESIZE_BILINEAR, tensor_type::INT8, 3, 3, 7, 7, 4,
                                                   true, false),
                                      {}, "pool.tflite"));
        const auto& l = e.view.node_layers(0).back();
        CHECK(l.type == 23);
        const auto r = l.options.get<vnnx::format::layer_options::ResizeOptions>();
        CHECK(r.mode == (1 | 0x100));
        CHECK(r.in_scratchpad == 1);
        // align_corners: s = (1024·2 + 3)/6 = 341; positions 0,341,682,1023,1364,1705,2046 → lo 0,0,0,0,1,1,1
        REQUIRE(r.num_c_inc == 2);
        const auto c = e.view.range(r.c_inc.value, 2, "c_inc");
        CHECK(std::to_integer<int>(c[0]) == 4);
        CHECK(std::to_integer<int>(c[1]) == 3);
    }
    SECTION("bilinear without flags uses the SDK's column map") {
        const emitted e(vnnx::compile(resize_model(builtin_operator::RESIZE_BILINEAR, tensor_type::INT8, 3, 3, 7, 7, 4,
                                                   false, false),
                                      {}, "pool.tflite"));
        const auto r = e.view.node_layers(0).back().options.get<vnnx::format::layer_options::ResizeOptions>();
        CHECK(r.mode == 1);
        // ratio 439: j·439/1024 = 0, .43, .86, 1.29, 1.71, 2.14, 2.57 → 0,0,0,1,1,2,2
        REQUIRE(r.num_c_inc == 3);
        const auto c = e.view.range(r.c_inc.value, 3, "c_inc");
        CHECK(std::to_integer<int>(c[0]) == 3);
        CHECK(std::to_integer<int>(c[1]) == 2);
        CHECK(std::to_integer<int>(c[2]) == 2);
    }
    SECTION("bilinear of a 1×1 input is a nearest layer") {
        const emitted e(vnnx::compile(resize_model(builtin_operator::RESIZE_BILINEAR, tensor_type::INT8, 1, 1, 4, 4, 3,
                                                   false, false),
                                      {}, "pool.tflite"));
        const auto& l = e.view.node_layers(0).back();
        CHECK(l.type == 97);
        CHECK(l.options.get<vnnx::format::layer_options::ResizeOptions>().mode == 0);
    }
}

TEST_CASE("resize: the simulator takes the columns from the emitted c_inc bytes") {
    // Nearest 3 -> 6 columns (c_inc 2,2,2): rewritten to 1,3,2 in the file, the simulator must
    // read input column 1 into output columns 1..3; counts that do not add up to 6 are rejected.
    const auto model = resize_model(builtin_operator::RESIZE_NEAREST_NEIGHBOR, tensor_type::INT8, 2, 3, 4, 6, 1, false, false);
    auto bytes = vnnx::compile(model, {}, "pool.tflite").bytes;
    std::size_t at = 0;
    {
        const vnnx::format::model_view v(bytes, "pool.vnnx");
        const auto r = v.node_layers(0).back().options.get<vnnx::format::layer_options::ResizeOptions>();
        REQUIRE(r.num_c_inc == 3);
        at = static_cast<std::size_t>(r.c_inc.value);
    }
    REQUIRE(std::to_integer<int>(bytes[at]) == 2);
    auto run = [&](std::vector<std::byte> file) {
        vnnx::sim::machine m(file, "pool.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        std::vector<std::int8_t> in{10, 11, 12, 20, 21, 22};  // channels-first [1, 1, 2, 3]
        m.set_input(0, std::as_bytes(std::span<const std::int8_t>(in)));
        m.run();
        const auto out = m.output(0);
        return std::vector<std::int8_t>(reinterpret_cast<const std::int8_t*>(out.data()),
                                        reinterpret_cast<const std::int8_t*>(out.data()) + out.size());
    };
    CHECK(run(bytes) == std::vector<std::int8_t>{10, 10, 11, 11, 12, 12, 10, 10, 11, 11, 12, 12,
                                                 20, 20, 21, 21, 22, 22, 20, 20, 21, 21, 22, 22});
    auto moved = bytes;
    moved[at] = std::byte{1}, moved[at + 1] = std::byte{3};
    CHECK(run(moved) == std::vector<std::int8_t>{10, 11, 11, 11, 12, 12, 10, 11, 11, 11, 12, 12,
                                                 20, 21, 21, 21, 22, 22, 20, 21, 21, 21, 22, 22});
    auto short_counts = bytes;
    short_counts[at + 2] = std::byte{1};
    CHECK_THROWS_WITH(run(short_counts), Catch::Contains("c_inc counts 5 output columns, the output has 6"));
}
