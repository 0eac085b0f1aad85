// CONCATENATION, SPLIT, SPLIT_V, PACK, UNPACK, TILE (lowering.md §7.2): node fields by hand,
// multi-output nodes, and the simulator bit-exact with ref::run (TILE: with a direct loop,
// the reference interpreter has no TILE).
#include "ops_movement_harness.hpp"

#include <vnnx/ops/concat_split.hpp>

using namespace movement_test;
namespace fo = vnnx::format::node_options;

namespace {

std::vector<std::int64_t> i64(const std::vector<std::int32_t>& s) { return {s.begin(), s.end()}; }

std::vector<std::byte> concat_model(const std::vector<std::vector<std::int32_t>>& ins, std::vector<std::int32_t> os, std::int32_t axis) {
    vnnx::tflite::builder b;
    std::vector<std::int32_t> t;
    for (std::size_t i = 0; i < ins.size(); ++i) t.push_back(b.add_tensor("in" + std::to_string(i), tensor_type::INT8, ins[i], q8()));
    const auto out = b.add_tensor("out", tensor_type::INT8, os, q8());
    b.add_operator(builtin_operator::CONCATENATION, t, {out},
                   vnnx::tflite::concatenation_options{axis, vnnx::tflite::activation_function::NONE});
    b.set_inputs(t);
    b.set_outputs({out});
    return b.finish();
}

std::vector<ndarray> inputs_for(const std::vector<std::vector<std::int32_t>>& shapes, std::uint64_t seed) {
    std::vector<ndarray> v;
    for (const auto& s : shapes) v.push_back(random_array(dtype::int8, i64(s), seed++));
    return v;
}

}  // namespace

TEST_CASE("movement: CONCATENATION node on every axis, ranks 2-5") {
    struct c_t {
        std::vector<std::vector<std::int32_t>> ins;
        std::vector<std::int32_t> out;
        std::int32_t axis, cf_axis, channels, m, n;
    };
    const std::vector<c_t> cases = {
        {{{1, 4, 5, 3}, {1, 4, 5, 2}}, {1, 4, 5, 5}, 3, 1, 5, 4, 5},     // channels: CF axis 1
        {{{1, 4, 5, 3}, {1, 4, 5, 2}}, {1, 4, 5, 5}, -1, 1, 5, 4, 5},
        {{{1, 2, 5, 3}, {1, 3, 5, 3}, {1, 1, 5, 3}}, {1, 6, 5, 3}, 1, 2, 3, 6, 5},  // H → CF 2
        {{{1, 4, 2, 3}, {1, 4, 5, 3}}, {1, 4, 7, 3}, -2, 3, 3, 4, 7},   // W → CF 3
        {{{2, 3, 2, 3}, {1, 3, 2, 3}}, {3, 3, 2, 3}, 0, 0, 3, 3, 2},    // batch
        {{{4, 3}, {4, 6}}, {4, 9}, 1, 1, 1, 4, 9},                       // rank 2 unchanged
        {{{5, 3, 2}, {5, 3, 1}}, {5, 3, 3}, -1, 0, 3, 5, 3},            // rank 3 channels → 0
        {{{2, 1, 3, 4, 5}, {2, 2, 3, 4, 5}}, {2, 3, 3, 4, 5}, 1, 1, 5, 3, 4},  // rank 5
    };
    std::uint64_t seed = 100;
    for (const auto& c : cases) {
        INFO("axis " << c.axis << " out " << vnnx::ops::movement::shape_text(c.out));
        const auto r = run_both(concat_model(c.ins, c.out, c.axis), inputs_for(c.ins, seed));
        seed += 10;
        require_equal(r);
        emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto& nd = e.view.node(0);
        CHECK(nd.type == 2);
        CHECK(nd.num_inputs == static_cast<std::int32_t>(c.ins.size()));
        CHECK(nd.num_outputs == 1);
        CHECK(nd.num_tensors == static_cast<std::int32_t>(c.ins.size()) + 1);
        CHECK(nd.options.get<fo::ConcatOptions>().axis == c.cf_axis);
        CHECK(nd.channels == c.channels);
        CHECK(nd.m == c.m);
        CHECK(nd.n == c.n);
        CHECK(e.view.node_layers(0).empty());
    }
}

TEST_CASE("movement: CONCATENATION rejects inputs it cannot copy") {
    SECTION("different quantization") {
        vnnx::tflite::builder b;
        const auto a = b.add_tensor("a", tensor_type::INT8, {1, 2, 2, 3}, q8(0.05f, 3));
        const auto c = b.add_tensor("c", tensor_type::INT8, {1, 2, 2, 3}, q8(0.1f, 3));
        const auto out = b.add_tensor("out", tensor_type::INT8, {1, 2, 2, 6}, q8(0.05f, 3));
        b.add_operator(builtin_operator::CONCATENATION, {a, c}, {out}, vnnx::tflite::concatenation_options{3, vnnx::tflite::activation_function::NONE});
        b.set_inputs({a, c});
        b.set_outputs({out});
        const auto m = b.finish();
        CHECK_THROWS_WITH(vnnx::compile(m, {}, "cat.tflite"),
                          Catch::Contains("cat.tflite") && Catch::Contains("CONCATENATION") && Catch::Contains("quantization"));
    }
    SECTION("fused activation") {
        vnnx::tflite::builder b;
        const auto a = b.add_tensor("a", tensor_type::INT8, {1, 2, 2, 3}, q8());
        const auto out = b.add_tensor("out", tensor_type::INT8, {1, 2, 2, 6}, q8());
        b.add_operator(builtin_operator::CONCATENATION, {a, a}, {out}, vnnx::tflite::concatenation_options{3, vnnx::tflite::activation_function::RELU});
        b.set_inputs({a});
        b.set_outputs({out});
        const auto m = b.finish();
        CHECK_THROWS_WITH(vnnx::compile(m, {}, "cat.tflite"), Catch::Contains("fused activation"));
    }
}

namespace {

std::vector<std::byte> split_model(bool v, std::vector<std::int32_t> is, const std::vector<std::int32_t>& sizes, std::int32_t axis) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, is, q8());
    const auto ax = b.add_constant("axis", tensor_type::INT32, {}, std::vector<std::int32_t>{axis});
    std::vector<std::int32_t> outs;
    const auto rank = static_cast<std::int32_t>(is.size());
    for (std::size_t k = 0; k < sizes.size(); ++k) {
        auto s = is;
        s[static_cast<std::size_t>(axis < 0 ? axis + rank : axis)] = sizes[k];
        outs.push_back(b.add_tensor("out" + std::to_string(k), tensor_type::INT8, s, q8()));
    }
    const auto n = static_cast<std::int32_t>(sizes.size());
    if (v) {
        const auto sz = b.add_constant("sizes", tensor_type::INT32, {n}, sizes);
        b.add_operator(builtin_operator::SPLIT_V, {in, sz, ax}, outs, vnnx::tflite::split_v_options{n});
    } else {
        b.add_operator(builtin_operator::SPLIT, {ax, in}, outs, vnnx::tflite::split_options{n});
    }
    b.set_inputs({in});
    b.set_outputs(outs);
    return b.finish();
}

}  // namespace

TEST_CASE("movement: SPLIT and SPLIT_V nodes describe every output") {
    struct c_t {
        bool v;
        std::vector<std::int32_t> is, sizes;
        std::int32_t axis, cf_axis;
    };
    const std::vector<c_t> cases = {
        {false, {1, 4, 5, 6}, {2, 2, 2}, 3, -3},
        {false, {1, 4, 5, 6}, {2, 2}, -3, -2},
        {false, {1, 4, 6, 3}, {3, 3}, 2, -1},
        {false, {6, 4}, {3, 3}, 0, -2},
        {true, {1, 4, 5, 7}, {1, 4, 2}, -1, -3},
        {true, {1, 5, 3, 2}, {3, 2}, 1, -2},
        {true, {3, 9}, {2, 3, 4}, 1, -1},
        {true, {2, 5, 7}, {4, 1}, 1, -1},  // rank 3: W → CF -1
    };
    std::uint64_t seed = 300;
    for (const auto& c : cases) {
        INFO((c.v ? "SPLIT_V " : "SPLIT ") << vnnx::ops::movement::shape_text(c.is) << " axis " << c.axis);
        const auto r = run_both(split_model(c.v, c.is, c.sizes, c.axis), {random_array(dtype::int8, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto& nd = e.view.node(0);
        CHECK(nd.type == (c.v ? 102 : 49));
        CHECK(nd.num_inputs == 1);
        CHECK(nd.num_outputs == static_cast<std::int32_t>(c.sizes.size()));
        const auto so = nd.options.get<fo::SplitOptions>();
        CHECK(so.axis == c.cf_axis);
        CHECK(so.max_split == *std::max_element(c.sizes.begin(), c.sizes.end()));
        CHECK(e.view.int32s(so.splits.value, c.sizes.size(), "splits") == c.sizes);
    }
}

TEST_CASE("movement: SPLIT whose axis is not a constant is rejected") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 2, 2, 4}, q8());
    const auto ax = b.add_tensor("axis", tensor_type::INT32, {});
    const auto o0 = b.add_tensor("o0", tensor_type::INT8, {1, 2, 2, 2}, q8());
    const auto o1 = b.add_tensor("o1", tensor_type::INT8, {1, 2, 2, 2}, q8());
    b.add_operator(builtin_operator::SPLIT, {ax, in}, {o0, o1}, vnnx::tflite::split_options{2});
    b.set_inputs({in, ax});
    b.set_outputs({o0, o1});
    const auto m = b.finish();
    CHECK_THROWS_WITH(vnnx::compile(m, {}, "split.tflite"), Catch::Contains("SPLIT") && Catch::Contains("axis must be a constant"));
}

TEST_CASE("movement: PACK node on every axis, and UNPACK layers with every output") {
    struct c_t {
        std::vector<std::int32_t> is;
        std::int32_t axis, count, cf_axis;
    };
    const std::vector<c_t> pack_cases = {
        {{4, 5, 3}, 0, 2, -4}, {{4, 5, 3}, 1, 3, -2}, {{4, 5, 3}, 2, 2, -1}, {{4, 5, 3}, 3, 2, -3},
        {{4, 5, 3}, -1, 3, -3}, {{5, 3}, 0, 2, -2}, {{5, 3}, 2, 4, -3}, {{7}, 1, 3, -1}, {{2, 3, 4, 5}, 4, 2, -3},
    };
    std::uint64_t seed = 500;
    for (const auto& c : pack_cases) {
        INFO("PACK " << vnnx::ops::movement::shape_text(c.is) << " axis " << c.axis);
        vnnx::tflite::builder b;
        std::vector<std::int32_t> ins;
        for (std::int32_t k = 0; k < c.count; ++k) ins.push_back(b.add_tensor("in" + std::to_string(k), tensor_type::INT8, c.is, q8()));
        auto os = c.is;
        const auto rank = static_cast<std::int32_t>(c.is.size()) + 1;
        os.insert(os.begin() + (c.axis < 0 ? c.axis + rank : c.axis), c.count);
        const auto out = b.add_tensor("out", tensor_type::INT8, os, q8());
        b.add_operator(builtin_operator::PACK, ins, {out}, vnnx::tflite::pack_options{c.count, c.axis});
        b.set_inputs(ins);
        b.set_outputs({out});
        std::vector<ndarray> xs;
        for (std::int32_t k = 0; k < c.count; ++k) xs.push_back(random_array(dtype::int8, i64(c.is), seed++));
        const auto r = run_both(b.finish(), xs);
        require_equal(r);
        emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto& nd = e.view.node(0);
        CHECK(nd.type == 83);
        CHECK(nd.num_inputs == c.count);
        const auto po = nd.options.get<fo::PackOptions>();
        CHECK(po.axis == c.cf_axis);
        CHECK(po.count == c.count);
        CHECK(po.dims == static_cast<std::int32_t>(c.is.size()));
    }

    const std::vector<c_t> unpack_cases = {
        {{2, 4, 5, 3}, 0, 2, -4}, {{2, 4, 5, 3}, 3, 3, -3}, {{2, 4, 5, 3}, 1, 4, -2}, {{2, 4, 5, 3}, -2, 5, -1},
        {{4, 5, 3}, 2, 3, -3}, {{4, 5, 3}, 0, 4, -2}, {{3, 6}, 0, 3, -2}, {{3, 6}, -1, 6, -1},
    };
    for (const auto& c : unpack_cases) {
        INFO("UNPACK " << vnnx::ops::movement::shape_text(c.is) << " axis " << c.axis);
        vnnx::tflite::builder b;
        const auto in = b.add_tensor("in", tensor_type::INT8, c.is, q8());
        auto os = c.is;
        os.erase(os.begin() + (c.axis < 0 ? c.axis + static_cast<std::int32_t>(c.is.size()) : c.axis));
        std::vector<std::int32_t> outs;
        for (std::int32_t k = 0; k < c.count; ++k) outs.push_back(b.add_tensor("out" + std::to_string(k), tensor_type::INT8, os, q8()));
        b.add_operator(builtin_operator::UNPACK, {in}, outs, vnnx::tflite::unpack_options{c.count, c.axis});
        b.set_inputs({in});
        b.set_outputs(outs);
        const auto r = run_both(b.finish(), {random_array(dtype::int8, i64(c.is), seed++)});
        require_equal(r);
        emitted e(r.compiled);
        REQUIRE(e.view.num_nodes() == 1);
        CHECK(e.view.node(0).type == 300);
        const auto layers = e.view.node_layers(0);
        REQUIRE(layers.size() == 1);
        CHECK(layers[0].type == 88);
        CHECK(layers[0].num_outputs == c.count);
        CHECK(layers[0].num_tensors == c.count + 1);
        const auto po = layers[0].options.get<vnnx::format::layer_options::PackOptions>();
        CHECK(po.axis == c.cf_axis);
        CHECK(po.count == c.count);
        CHECK(po.dims == static_cast<std::int32_t>(c.is.size()));
    }
}

TEST_CASE("movement: TILE node, multiples in channels-first order") {
    struct c_t {
        std::vector<std::int32_t> is, mult;
        std::array<std::int32_t, 4> tile;
    };
    const std::vector<c_t> cases = {
        {{5}, {3}, {1, 1, 1, 3}},
        {{2, 3}, {2, 3}, {1, 1, 2, 3}},
        {{2, 3, 4}, {2, 1, 3}, {1, 3, 2, 1}},
        {{1, 2, 3, 5}, {2, 3, 1, 2}, {2, 2, 3, 1}},
    };
    std::uint64_t seed = 700;
    for (const auto& c : cases) {
        INFO("TILE " << vnnx::ops::movement::shape_text(c.is));
        vnnx::tflite::builder b;
        const auto in = b.add_tensor("in", tensor_type::INT8, c.is, q8());
        const auto mult = b.add_constant("multiples", tensor_type::INT32, {static_cast<std::int32_t>(c.mult.size())}, c.mult);
        auto os = c.is;
        for (std::size_t i = 0; i < os.size(); ++i) os[i] *= c.mult[i];
        const auto out = b.add_tensor("out", tensor_type::INT8, os, q8());
        b.add_operator(builtin_operator::TILE, {in, mult}, {out});
        b.set_inputs({in});
        b.set_outputs({out});
        const auto model = b.finish();
        const auto x = random_array(dtype::int8, i64(c.is), seed++);

        const auto compiled = vnnx::compile(model, {}, "tile.tflite");
        vnnx::sim::machine m(compiled.bytes, "tile.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        m.set_input(0, to_cf(x).data);
        m.run();
        const auto y = from_cf(m.output(0), dtype::int8, i64(os));
        // TFLite TILE: out[i...] = in[i mod dim ...], in TFLite order.
        std::vector<std::int64_t> idx(os.size(), 0);
        std::size_t bad = 0;
        for (std::size_t e = 0; e < y.element_count(); ++e) {
            std::int64_t src = 0;
            for (std::size_t d = 0; d < os.size(); ++d) src = src * c.is[d] + idx[d] % c.is[d];
            bad += y.get<int>(e) != x.get<int>(static_cast<std::size_t>(src));
            for (std::size_t d = os.size(); d-- > 0;) {
                if (++idx[d] < os[d]) break;
                idx[d] = 0;
            }
        }
        CHECK(bad == 0);
        emitted e(compiled);
        REQUIRE(e.view.num_nodes() == 1);
        const auto& nd = e.view.node(0);
        CHECK(nd.type == 69);
        CHECK(nd.num_inputs == 1);
        CHECK(nd.num_tensors == 2);
        CHECK(nd.options.get<fo::TileOptions>().tile == c.tile);
    }
}

TEST_CASE("movement: a SPLIT feeding a CONCATENATION of its parts in another order") {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 3, 4, 6}, q8());
    const auto ax = b.add_constant("axis", tensor_type::INT32, {}, std::vector<std::int32_t>{3});
    const auto o0 = b.add_tensor("o0", tensor_type::INT8, {1, 3, 4, 3}, q8());
    const auto o1 = b.add_tensor("o1", tensor_type::INT8, {1, 3, 4, 3}, q8());
    b.add_operator(builtin_operator::SPLIT, {ax, in}, {o0, o1}, vnnx::tflite::split_options{2});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 3, 8, 3}, q8());
    b.add_operator(builtin_operator::CONCATENATION, {o1, o0}, {out},
                   vnnx::tflite::concatenation_options{2, vnnx::tflite::activation_function::NONE});
    b.set_inputs({in});
    b.set_outputs({out});
    const auto r = run_both(b.finish(), {random_array(dtype::int8, {1, 3, 4, 6}, 900)});
    require_equal(r);
    REQUIRE(r.compiled.nodes.size() == 2);
    CHECK(r.compiled.nodes[0].type == "SPLIT");
    CHECK(r.compiled.nodes[1].type == "CONCATENATION");
}

TEST_CASE("movement: large CONCATENATION and SPLIT nodes copy over the pool, equal to one thread") {
    // Channels (one piece per input) and rows (a piece per input and plane, 4-8 KiB each): above
    // the size at which the copies are sliced over two threads.
    struct c_t {
        std::vector<std::vector<std::int32_t>> ins;
        std::vector<std::int32_t> out;
        std::int32_t axis;
    };
    const std::vector<c_t> cases = {
        {{{1, 64, 64, 40}, {1, 64, 64, 24}}, {1, 64, 64, 64}, 3},
        {{{1, 64, 128, 32}, {1, 32, 128, 32}}, {1, 96, 128, 32}, 1},
    };
    std::uint64_t seed = 950;
    for (const auto& c : cases) {
        INFO("concat axis " << c.axis);
        const auto model = concat_model(c.ins, c.out, c.axis);
        const auto x = inputs_for(c.ins, seed);
        seed += 10;
        const auto r = run_both(model, x);
        require_equal(r);
        vnnx::sim::machine m(r.compiled.bytes, "movement.vnnx", {vnnx::sim::best_isa(), 2});
        for (std::size_t i = 0; i < x.size(); ++i) m.set_input(i, to_cf(x[i]).data);
        m.run();
        const auto got = from_cf(m.output(0), r.ref[0].type, r.ref[0].shape);
        CHECK(got.data == r.ref[0].data);
        // The reverse: the concatenation split back into its parts.
        const auto s = run_both(split_model(true, c.out, {c.ins[0][static_cast<std::size_t>(c.axis)], c.ins[1][static_cast<std::size_t>(c.axis)]}, c.axis),
                                {r.ref[0]});
        require_equal(s);
        vnnx::sim::machine ms(s.compiled.bytes, "movement.vnnx", {vnnx::sim::best_isa(), 2});
        ms.set_input(0, to_cf(r.ref[0]).data);
        ms.run();
        for (std::size_t o = 0; o < 2; ++o) {
            const auto part = from_cf(ms.output(o), s.ref[o].type, s.ref[o].shape);
            CHECK(part.data == x[o].data);
        }
    }
}
