// SLICE, STRIDED_SLICE (lowering.md §7.4.3) and TRANSPOSE (§7.4.4): canonical SliceOptions and
// TransposeOptions by hand, and the simulator bit-exact with ref::run. The reference
// interpreter has no SLICE, so a SLICE is compared with the equal STRIDED_SLICE.
#include "ops_movement_harness.hpp"

#include <vnnx/ops/slice.hpp>

#include <algorithm>
#include <numeric>
#include <optional>
#include <random>

using namespace movement_test;
namespace lo = vnnx::format::layer_options;

namespace {

std::vector<std::int64_t> i64(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

struct ss_case {
    std::vector<std::int32_t> is, begin, end, strides, os;
    std::int32_t begin_mask = 0, end_mask = 0, shrink = 0;
    std::array<std::int32_t, 4> g_begin{}, g_end{}, g_stride{};
};

std::vector<std::byte> strided_model(const ss_case& c, tensor_type t = tensor_type::INT8, std::int32_t ellipsis = 0) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", t, c.is, q8());
    const auto n = static_cast<std::int32_t>(c.begin.size());
    const auto bt = b.add_constant("begin", tensor_type::INT32, {n}, c.begin);
    const auto et = b.add_constant("end", tensor_type::INT32, {n}, c.end);
    const auto st = b.add_constant("strides", tensor_type::INT32, {n}, c.strides);
    const auto out = b.add_tensor("out", t, c.os, q8());
    vnnx::tflite::strided_slice_options o{};
    o.begin_mask = c.begin_mask;
    o.end_mask = c.end_mask;
    o.shrink_axis_mask = c.shrink;
    o.ellipsis_mask = ellipsis;
    b.add_operator(builtin_operator::STRIDED_SLICE, {in, bt, et, st}, {out}, o);
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

lo::SliceOptions only_slice_layer(const vnnx::compile_result& r, std::int32_t type) {
    emitted e(r);
    REQUIRE(e.view.num_nodes() == 1);
    CHECK(e.view.node(0).type == 300);
    const auto layers = e.view.node_layers(0);
    REQUIRE(layers.size() == 1);
    CHECK(layers[0].type == type);
    return layers[0].options.get<lo::SliceOptions>();
}

}  // namespace

TEST_CASE("movement: STRIDED_SLICE canonicalised (masks, negative indices and strides, shrink)") {
    std::vector<ss_case> cases;
    // Plain strides on H and W.
    cases.push_back({{1, 8, 8, 6}, {0, 1, 0, 0}, {1, 7, 8, 6}, {1, 2, 3, 1}, {1, 3, 3, 6}, 0, 0, 0,
                     {0, 0, 1, 0}, {1, 6, 7, 8}, {1, 1, 2, 3}});
    // Masks over junk values and negative begin/end (the SDK ignores both [quirk]).
    cases.push_back({{1, 6, 7, 5}, {5, 2, -3, 4}, {0, -1, 7, 0}, {1, 1, 1, 1}, {1, 3, 3, 1}, 0b0001, 0b1001, 0,
                     {0, 4, 2, 4}, {1, 5, 5, 7}, {1, 1, 1, 1}});
    // shrink_axis on W: the rank-3 output is laid out channels-first in its own way.
    cases.push_back({{1, 4, 5, 6}, {0, 0, 2, 0}, {1, 4, 3, 6}, {1, 1, 1, 1}, {1, 4, 6}, 0, 0, 0b0100,
                     {0, 0, 0, 2}, {1, 6, 4, 3}, {1, 1, 1, 1}});
    // Negative strides, one with end_mask.
    cases.push_back({{1, 5, 6, 3}, {0, 4, -1, 0}, {1, 0, 0, 3}, {1, -1, -2, 1}, {1, 4, 3, 3}, 0, 0b0100, 0,
                     {0, 0, 4, 5}, {1, 3, 0, -1}, {1, 1, -1, -2}});
    // Rank 2, fewer entries than axes.
    cases.push_back({{6, 10}, {1}, {5}, {2}, {2, 10}, 0, 0, 0, {0, 0, 1, 0}, {1, 1, 5, 10}, {1, 1, 2, 1}});
    // Rank 3 with shrink of the channels: rank 2 output.
    cases.push_back({{4, 5, 3}, {1, 0, 2}, {3, 5, 3}, {1, 2, 1}, {2, 3}, 0, 0, 0b100, {0, 2, 1, 0}, {1, 3, 3, 5}, {1, 1, 1, 2}});
    // Rank 5 with a leading 1 (SliceOptions holds the last four channels-first axes).
    cases.push_back({{1, 2, 3, 4, 5}, {0, 1, 0, 1, 0}, {1, 2, 3, 4, 5}, {1, 1, 1, 1, 1}, {1, 1, 3, 3, 5}, 0, 0, 0,
                     {1, 0, 0, 1}, {2, 5, 3, 4}, {1, 1, 1, 1}});
    // Odd sizes, stride larger than the extent, end beyond the dim (clamped).
    cases.push_back({{1, 7, 9, 5}, {0, 6, 1, 0}, {1, 100, 9, 5}, {1, 4, 5, 2}, {1, 1, 2, 3}, 0, 0, 0,
                     {0, 0, 6, 1}, {1, 5, 7, 9}, {1, 2, 4, 5}});
    std::uint64_t seed = 1000;
    for (const auto& c : cases) {
        INFO("input " << vnnx::ops::movement::shape_text(c.is));
        const auto r = run_both(strided_model(c), {random_array(dtype::int8, i64(c.is), seed++)});
        require_equal(r);
        const auto so = only_slice_layer(r.compiled, 45);
        CHECK(so.begin == c.g_begin);
        CHECK(so.end == c.g_end);
        CHECK(so.stride == c.g_stride);
    }
}

TEST_CASE("movement: STRIDED_SLICE of uint8 data") {
    ss_case c{{1, 5, 5, 4}, {0, 1, 1, 1}, {1, 5, 4, 4}, {1, 2, 1, 2}, {1, 2, 3, 2}};
    require_equal(run_both(strided_model(c, tensor_type::UINT8), {random_array(dtype::uint8, {1, 5, 5, 4}, 77)}));
}

TEST_CASE("movement: STRIDED_SLICE rules that cannot be expressed are rejected") {
    SECTION("rank 5 with a leading dim other than 1") {
        ss_case c{{2, 2, 3, 4, 5}, {0, 0, 0, 0, 0}, {2, 2, 3, 4, 2}, {1, 1, 1, 1, 1}, {2, 2, 3, 4, 2}};
        const auto m = strided_model(c);
        CHECK_THROWS_WITH(vnnx::compile(m, {}, "ss.tflite"),
                          Catch::Contains("ss.tflite") && Catch::Contains("STRIDED_SLICE") && Catch::Contains("SliceOptions holds 4 axes"));
    }
    SECTION("ellipsis mask") {
        ss_case c{{1, 4, 4, 2}, {0, 0}, {1, 2}, {1, 1}, {1, 4, 4, 2}};
        const auto m = strided_model(c, tensor_type::INT8, 1);
        CHECK_THROWS_WITH(vnnx::compile(m, {}, "ss.tflite"), Catch::Contains("ellipsis_mask"));
    }
}

TEST_CASE("movement: SLICE to SliceOptions, equal to the same STRIDED_SLICE") {
    struct c_t {
        std::vector<std::int32_t> is, begin, size, os;
        std::array<std::int32_t, 4> g_begin, g_end;
    };
    const std::vector<c_t> cases = {
        {{1, 5, 6, 4}, {0, 1, 2, 1}, {1, 3, -1, 2}, {1, 3, 4, 2}, {0, 1, 1, 2}, {1, 3, 4, 6}},
        {{7, 9}, {2, 3}, {4, 5}, {4, 5}, {0, 0, 2, 3}, {1, 1, 6, 8}},
        {{6, 5, 4}, {1, 0, 1}, {3, 5, 2}, {3, 5, 2}, {0, 1, 1, 0}, {1, 3, 4, 5}},
        {{9}, {4}, {-1}, {5}, {0, 0, 0, 4}, {1, 1, 1, 9}},
    };
    std::uint64_t seed = 1100;
    for (const auto& c : cases) {
        INFO("SLICE " << vnnx::ops::movement::shape_text(c.is));
        vnnx::tflite::builder b;
        const auto in = b.add_tensor("in", tensor_type::INT8, c.is, q8());
        const auto n = static_cast<std::int32_t>(c.begin.size());
        const auto bt = b.add_constant("begin", tensor_type::INT32, {n}, c.begin);
        const auto st = b.add_constant("size", tensor_type::INT32, {n}, c.size);
        const auto out = b.add_tensor("out", tensor_type::INT8, c.os, q8());
        b.add_operator(builtin_operator::SLICE, {in, bt, st}, {out});
        b.set_inputs({in});
        b.set_outputs({out});
        const auto model = b.finish();
        const auto x = random_array(dtype::int8, i64(c.is), seed++);
        const auto compiled = vnnx::compile(model, {}, "slice.tflite");
        const auto so = only_slice_layer(compiled, 65);
        CHECK(so.begin == c.g_begin);
        CHECK(so.end == c.g_end);
        CHECK(so.stride == std::array<std::int32_t, 4>{1, 1, 1, 1});

        ss_case same{c.is, c.begin, {}, std::vector<std::int32_t>(c.begin.size(), 1), c.os};
        for (std::size_t i = 0; i < c.begin.size(); ++i) same.end.push_back(c.begin[i] + c.os[i]);
        const auto ref_model = strided_model(same);
        const auto tfl = vnnx::tflite::model_view::parse(ref_model, "same.tflite");
        const auto want = vnnx::ref::run(tfl, {x});
        vnnx::sim::machine m(compiled.bytes, "slice.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        m.set_input(0, to_cf(x).data);
        m.run();
        const auto got = from_cf(m.output(0), dtype::int8, want[0].shape);
        CHECK(got.data == want[0].data);
    }
}

namespace {

std::vector<std::byte> transpose_model(std::vector<std::int32_t> is, const std::vector<std::int32_t>& perm) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, is, q8());
    const auto p = b.add_constant("perm", tensor_type::INT32, {static_cast<std::int32_t>(perm.size())}, perm);
    std::vector<std::int32_t> os;
    for (auto a : perm) os.push_back(is[static_cast<std::size_t>(a)]);
    const auto out = b.add_tensor("out", tensor_type::INT8, os, q8());
    b.add_operator(builtin_operator::TRANSPOSE, {in, p}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("movement: TRANSPOSE permutations on channels-first axes") {
    struct c_t {
        std::vector<std::int32_t> is, perm;
        std::array<std::int32_t, 3> p;
    };
    const std::vector<c_t> cases = {
        {{1, 4, 5, 6}, {0, 3, 1, 2}, {2, 0, 1}},  // NHWC → NCHW (lowering.md §7.4.4 example)
        {{1, 4, 5, 6}, {0, 2, 1, 3}, {0, 2, 1}},  // attention heads
        {{1, 4, 5, 6}, {0, 1, 3, 2}, {2, 1, 0}},
        {{4, 5, 6}, {2, 0, 1}, {2, 0, 1}},
        {{3, 5, 7}, {1, 2, 0}, {1, 2, 0}},
        {{1, 2, 3, 4, 5}, {0, 1, 3, 2, 4}, {0, 2, 1}},
        {{5, 7}, {1, 0}, {0, 2, 1}},              // rank 2: rejected by the SDK, one CF swap here
        {{1, 4, 5, 6}, {1, 0, 2, 3}, {1, 0, 2}},  // moves the unit batch: equal to a C/H swap
        {{2, 3, 4, 5}, {0, 1, 2, 3}, {0, 1, 2}},  // identity
    };
    std::uint64_t seed = 1200;
    for (const auto& c : cases) {
        INFO("TRANSPOSE " << vnnx::ops::movement::shape_text(c.is) << " " << vnnx::ops::movement::shape_text(c.perm));
        const auto r = run_both(transpose_model(c.is, c.perm), {random_array(dtype::int8, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 39);
        const auto t = layers[0].options.get<lo::TransposeOptions>();
        CHECK(t.permutation == c.p);
        CHECK(t.out_maps_at_once == 1);
        CHECK(t.out_rows_at_once == 1);
    }
}

TEST_CASE("movement: TRANSPOSE across a non-unit leading axis is rejected with the rule") {
    const auto m = transpose_model({3, 2, 4, 5}, {1, 0, 2, 3});
    CHECK_THROWS_WITH(vnnx::compile(m, {}, "tr.tflite"),
                      Catch::Contains("tr.tflite") && Catch::Contains("TRANSPOSE") &&
                          Catch::Contains("not a permutation of the last three channels-first axes"));
}

TEST_CASE("movement: the strided-walk search for a TransposeOptions.permutation equals the element-by-element search") {
    // The element maps are what decide; the walks only make the common case cheap. On every
    // permutation of random shapes of rank 2..5 (unit axes among them) both searches agree.
    namespace mv = vnnx::ops::movement;
    std::mt19937 rng(11);
    std::uniform_int_distribution<int> dim(1, 5), rank(2, 5);
    int accepted = 0, total = 0;
    for (int n = 0; n < 300; ++n) {
        const auto r = static_cast<std::size_t>(rank(rng));
        std::vector<std::int32_t> shape(r);
        for (auto& d : shape) d = dim(rng) == 1 ? 1 : dim(rng);
        std::vector<std::int32_t> perm(r);
        std::iota(perm.begin(), perm.end(), 0);
        std::shuffle(perm.begin(), perm.end(), rng);
        const auto want = mv::transpose_element_map(shape, perm);
        const auto in_cf = vnnx::ops::channels_first(shape);
        std::optional<std::array<std::int32_t, 3>> slow;
        std::array<std::int32_t, 3> p{0, 1, 2};
        do
            if (mv::cf_permutation_element_map(in_cf, p) == want) {
                slow = p;
                break;
            }
        while (std::next_permutation(p.begin(), p.end()));
        const auto fast = mv::transpose_permutation(shape, perm);
        INFO("case " << n);
        REQUIRE(fast.has_value() == slow.has_value());
        if (fast) REQUIRE(mv::cf_permutation_element_map(in_cf, *fast) == want);
        accepted += fast.has_value();
        ++total;
    }
    // Both kinds occur: permutations VNNX can hold and ones it cannot.
    CHECK(accepted > 50);
    CHECK(accepted < total);
}
