// Zero-copy channel splits and concatenations (lowering.md §11.2, vnnx-format.md §7.1): the node
// stays in the table with skip = 1, its parts are placed at byte offsets of one buffer (offset =
// bytes of the preceding parts), and the simulator, which does not run skipped nodes, still gives
// the reference interpreter's answer. MAX_POOL_2D nodes around them keep every value exact.
#include "ops_movement_harness.hpp"

#include <map>

using namespace movement_test;
namespace fo = vnnx::format::node_options;

namespace {

using B = builtin_operator;

// 2x2 VALID max pool, stride 1: H and W shrink by 1 (no PAD node in front).
std::int32_t pool(vnnx::tflite::builder& b, std::int32_t in, const std::string& name, std::vector<std::int32_t> shape) {
    const auto out = b.add_tensor(name, tensor_type::INT8, shape, q8());
    b.add_operator(B::MAX_POOL_2D, {in}, {out},
                   opt::pool2d_options{opt::padding_mode::VALID, 1, 1, 2, 2, opt::activation_function::NONE});
    return out;
}

std::int32_t split_axis(vnnx::tflite::builder& b, std::int32_t axis) {
    return b.add_constant("axis", tensor_type::INT32, {}, std::vector<std::int32_t>{axis});
}

// x [1,6,6,3], y [1,6,6,2] -> pool each -> CONCATENATION on channels -> pool -> output.
std::vector<std::byte> concat_model() {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 6, 6, 3}, q8());
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 6, 6, 2}, q8());
    const auto a = pool(b, x, "a", {1, 5, 5, 3});
    const auto c = pool(b, y, "b", {1, 5, 5, 2});
    const auto cat = b.add_tensor("cat", tensor_type::INT8, {1, 5, 5, 5}, q8());
    b.add_operator(B::CONCATENATION, {a, c}, {cat}, opt::concatenation_options{3, opt::activation_function::NONE});
    const auto out = pool(b, cat, "out", {1, 4, 4, 5});
    b.set_inputs({x, y});
    b.set_outputs({out});
    return b.finish();
}

// x [1,5,5,4] -> pool -> SPLIT in two on channels -> pool each -> two outputs; with `join`, the
// two halves are concatenated again (reversed) instead.
std::vector<std::byte> split_model(bool join) {
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 5, 5, 4}, q8());
    const auto p = pool(b, x, "p", {1, 4, 4, 4});
    const auto s0 = b.add_tensor("s0", tensor_type::INT8, {1, 4, 4, 2}, q8());
    const auto s1 = b.add_tensor("s1", tensor_type::INT8, {1, 4, 4, 2}, q8());
    b.add_operator(B::SPLIT, {split_axis(b, 3), p}, {s0, s1}, opt::split_options{2});
    b.set_inputs({x});
    if (join) {
        const auto cat = b.add_tensor("cat", tensor_type::INT8, {1, 4, 4, 4}, q8());
        b.add_operator(B::CONCATENATION, {s1, s0}, {cat}, opt::concatenation_options{3, opt::activation_function::NONE});
        b.set_outputs({pool(b, cat, "out", {1, 3, 3, 4})});
    } else {
        b.set_outputs({pool(b, s0, "o0", {1, 3, 3, 2}), pool(b, s1, "o1", {1, 3, 3, 2})});
    }
    return b.finish();
}

/// Buffer offset (tensor `direct`) of every tensor name of the compiled model.
std::map<std::string, std::uint64_t> offsets(const outcome& r, const emitted& e) {
    std::map<std::string, std::uint64_t> at;
    for (std::size_t k = 0; k < e.view.num_nodes(); ++k) {
        const auto recs = e.view.node_tensors(k);
        const auto& names = r.compiled.nodes.at(k).tensor_names;
        REQUIRE(names.size() == recs.size());
        for (std::size_t i = 0; i < recs.size(); ++i) {
            const auto it = at.find(names[i]);
            if (it != at.end()) CHECK(it->second == recs[i].direct.value);  // one buffer per name
            at[names[i]] = recs[i].direct.value;
        }
    }
    return at;
}

std::size_t node_of_type(const emitted& e, std::int32_t type) {
    for (std::size_t k = 0; k < e.view.num_nodes(); ++k)
        if (e.view.node(k).type == type) return k;
    FAIL("no node of type " << type);
    return 0;
}

}  // namespace

TEST_CASE("zero copy: a channel CONCATENATION is skipped, its inputs are slices of its output") {
    const std::vector<ndarray> in = {random_array(dtype::int8, {1, 6, 6, 3}, 7), random_array(dtype::int8, {1, 6, 6, 2}, 8)};
    const auto r = run_both(concat_model(), in);
    require_equal(r);
    emitted e(r.compiled);
    // The node stays in the table (4 nodes: three pools and the concatenation), marked skip.
    CHECK(e.view.num_nodes() == 4);
    const auto k = node_of_type(e, 2);
    CHECK(e.view.node(k).skip == 1);
    for (std::size_t j = 0; j < e.view.num_nodes(); ++j)
        if (j != k) CHECK(e.view.node(j).skip == 0);
    const auto at = offsets(r, e);
    // Channels first: a is [3,5,5] at the start of cat [5,5,5], b follows after 3*5*5 bytes.
    CHECK(at.at("a") == at.at("cat"));
    CHECK(at.at("b") == at.at("cat") + 3 * 5 * 5);
}

TEST_CASE("zero copy: a channel SPLIT is skipped, its outputs are slices of its input") {
    const std::vector<ndarray> in = {random_array(dtype::int8, {1, 5, 5, 4}, 21)};
    const auto r = run_both(split_model(false), in);
    require_equal(r);
    emitted e(r.compiled);
    CHECK(e.view.num_nodes() == 4);
    const auto k = node_of_type(e, 49);
    CHECK(e.view.node(k).skip == 1);
    CHECK(e.view.node(k).options.get<fo::SplitOptions>().axis == -3);
    const auto at = offsets(r, e);
    CHECK(at.at("s0") == at.at("p"));
    CHECK(at.at("s1") == at.at("p") + 2 * 4 * 4);
    // The whole buffer lives as long as its parts: no other tensor overlaps it while they are read.
    CHECK(at.at("o0") != at.at("p"));
}

TEST_CASE("zero copy: a SPLIT read by a CONCATENATION is copied, the CONCATENATION is skipped (SDK rule)") {
    const std::vector<ndarray> in = {random_array(dtype::int8, {1, 5, 5, 4}, 33)};
    const auto r = run_both(split_model(true), in);
    require_equal(r);
    emitted e(r.compiled);
    CHECK(e.view.num_nodes() == 4);
    CHECK(e.view.node(node_of_type(e, 49)).skip == 0);
    CHECK(e.view.node(node_of_type(e, 2)).skip == 1);
    const auto at = offsets(r, e);
    // concat(s1, s0): s1 first.
    CHECK(at.at("s1") == at.at("cat"));
    CHECK(at.at("s0") == at.at("cat") + 2 * 4 * 4);
}

TEST_CASE("zero copy: graph I/O and non-channel axes keep the copy") {
    SECTION("the concatenation's output is a graph output") {
        vnnx::tflite::builder b;
        const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 4, 2}, q8());
        const auto a = pool(b, x, "a", {1, 3, 3, 2});
        const auto c = pool(b, x, "c", {1, 3, 3, 2});
        const auto cat = b.add_tensor("cat", tensor_type::INT8, {1, 3, 3, 4}, q8());
        b.add_operator(B::CONCATENATION, {a, c}, {cat}, opt::concatenation_options{3, opt::activation_function::NONE});
        b.set_inputs({x});
        b.set_outputs({cat});
        const auto r = run_both(b.finish(), {random_array(dtype::int8, {1, 4, 4, 2}, 5)});
        require_equal(r);
        emitted e(r.compiled);
        CHECK(e.view.node(node_of_type(e, 2)).skip == 0);
    }
    SECTION("a concatenation on H") {
        vnnx::tflite::builder b;
        const auto x = b.add_tensor("x", tensor_type::INT8, {1, 4, 4, 2}, q8());
        const auto a = pool(b, x, "a", {1, 3, 3, 2});
        const auto c = pool(b, x, "c", {1, 3, 3, 2});
        const auto cat = b.add_tensor("cat", tensor_type::INT8, {1, 6, 3, 2}, q8());
        b.add_operator(B::CONCATENATION, {a, c}, {cat}, opt::concatenation_options{1, opt::activation_function::NONE});
        b.set_inputs({x});
        b.set_outputs({pool(b, cat, "out", {1, 5, 2, 2})});
        const auto r = run_both(b.finish(), {random_array(dtype::int8, {1, 4, 4, 2}, 6)});
        require_equal(r);
        emitted e(r.compiled);
        CHECK(e.view.node(node_of_type(e, 2)).skip == 0);
    }
}
