// FIA preload flags (lowering.md §7.1.8): next_fia_node_id chains the conv nodes, and
// preload_next_fia / fia_preloaded are set in pairs where the next conv's input is ready early.
#include <catch2/catch.hpp>

#include "ops_conv_common.hpp"
#include "support/models.hpp"

#include <vnnx/support/atomic_file.hpp>

using namespace conv_test;
using vnnx::format::model_view;
using vnnx::format::node_options::Conv2DOptions;

namespace {

using B = builtin_operator;

std::int32_t conv1x1(vnnx::tflite::builder& b, std::int32_t in, const std::string& name, std::int32_t C, std::int32_t K,
                     std::uint64_t seed) {
    const auto w = vnnx::tflite::detail::add_conv_weights(b, name, {K, 1, 1, C}, 0, 0.05f, seed);
    const auto out = b.add_tensor(name, tensor_type::INT8, {1, 6, 6, K}, quant{0.05f, 0});
    b.add_operator(B::CONV_2D, {in, w.weights, w.bias}, {out},
                   vnnx::tflite::conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1,
                                                tensor_type::FLOAT32});
    return out;
}

// input -> A; A -> B; A -> C; B + C -> output. A feeds both later convs.
std::vector<std::byte> fork_model() {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 6, 6, 4}, quant{0.05f, 0});
    const auto a = conv1x1(b, in, "A", 4, 8, 1);
    const auto x = conv1x1(b, a, "B", 8, 8, 2);
    const auto y = conv1x1(b, a, "C", 8, 8, 3);
    const auto out = b.add_tensor("output", tensor_type::INT8, {1, 6, 6, 8}, quant{0.1f, 0});
    b.add_operator(B::ADD, {x, y}, {out}, vnnx::tflite::add_options{activation_function::NONE, true});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

struct flags {
    std::int32_t next = -1, preload_next = 0, preloaded = 0;
};

/// The flags the rule of §7.1.8 gives, computed from the emitted records and the tensor names
/// of the compile report (tensors are matched by name, as the SDK's prev_nodes does: a node
/// whose layer reads the next conv's input counts as its producer).
std::vector<flags> expected_flags(const model_view& v, const vnnx::compile_result& r) {
    std::vector<std::size_t> convs;
    for (std::size_t k = 0; k < v.num_nodes(); ++k)
        if (v.node(k).type == 3) convs.push_back(k);
    std::vector<flags> f(v.num_nodes());
    auto last_producer = [&](std::size_t k) {
        const auto& names_k = r.nodes.at(k).tensor_names;
        const auto n_in = static_cast<std::size_t>(v.node(k).num_inputs);
        std::int64_t last = -1;
        for (std::size_t j = 0; j < v.num_nodes(); ++j) {
            const auto& names_j = r.nodes.at(j).tensor_names;
            // every name after node j's inputs: its outputs, then its layers' tensors (the
            // SDK's tensor list of a node holds both)
            const auto j_in = static_cast<std::size_t>(v.node(j).num_inputs);
            for (std::size_t o = j_in; o < names_j.size(); ++o)
                for (std::size_t i = 0; i < n_in; ++i)
                    if (names_j.at(o) == names_k.at(i)) last = static_cast<std::int64_t>(j);
        }
        return last;
    };
    for (std::size_t i = 0; i < convs.size(); ++i) {
        const std::size_t n = convs[i];
        if (i + 1 == convs.size()) break;
        const std::size_t nn = convs[i + 1];
        f[n].next = static_cast<std::int32_t>(nn);
        const auto& a = v.node(n);
        const auto& b = v.node(nn);
        const auto ua = a.options.get<Conv2DOptions>();
        const auto ub = b.options.get<Conv2DOptions>();
        const std::int64_t p = last_producer(nn);
        bool pre = p >= 0 && p < static_cast<std::int64_t>(n);
        if (p == static_cast<std::int64_t>(n)) {
            std::int64_t last = ua.kernels;
            while (last - a.maps > 0) last -= a.maps;  // the SDK's loop
            if (ua.kernels - (last + a.maps) > ub.imaps && ua.kernels - last > std::min<std::int64_t>(2 * ub.imaps, b.channels))
                pre = true;
            if (a.orow_last - a.row_inc > b.row_start + b.rows_0 &&
                a.orow_last > std::min<std::int64_t>(b.row_start + b.rows_0 + b.rows, b.m))
                pre = true;
        }
        if (pre) {
            f[n].preload_next = 1;
            f[nn].preloaded = 1;
        }
    }
    return f;
}

void check_flags(const model_view& v, const vnnx::compile_result& r) {
    const auto want = expected_flags(v, r);
    for (std::size_t k = 0; k < v.num_nodes(); ++k) {
        if (v.node(k).type != 3) continue;
        INFO("node " << k);
        const auto u = v.node(k).options.get<Conv2DOptions>();
        CHECK(u.next_fia_node_id == want[k].next);
        CHECK(u.preload_next_fia == want[k].preload_next);
        CHECK(u.fia_preloaded == want[k].preloaded);
    }
}

}  // namespace

TEST_CASE("conv preload: a conv whose input was produced before the previous conv is preloaded") {
    const auto r = compile(fork_model());
    const model_view v(r.bytes, "fork.vnnx");
    std::vector<std::size_t> convs;
    for (std::size_t k = 0; k < v.num_nodes(); ++k)
        if (v.node(k).type == 3) convs.push_back(k);
    REQUIRE(convs.size() == 3);
    const auto& a = v.node(convs[0]);
    const auto ua = a.options.get<Conv2DOptions>();
    const auto ub = v.node(convs[1]).options.get<Conv2DOptions>();
    const auto uc = v.node(convs[2]).options.get<Conv2DOptions>();
    // The chain of conv nodes.
    CHECK(ua.next_fia_node_id == static_cast<std::int32_t>(convs[1]));
    CHECK(ub.next_fia_node_id == static_cast<std::int32_t>(convs[2]));
    CHECK(uc.next_fia_node_id == -1);
    // The third conv reads A's output, written before the second conv ran: rule 1.
    CHECK(ub.preload_next_fia == 1);
    CHECK(uc.fia_preloaded == 1);
    CHECK(uc.preload_next_fia == 0);
    // The second conv reads what A writes (p = n). One map tile of 8 maps: last = 8,
    // K - (last + maps) = -8 is not > imaps; one row tile: orow_last - row_inc is not past the
    // second conv's first rows. So no preload between A and the second conv.
    REQUIRE(ua.kernels == 8);
    REQUIRE(a.maps == 8);
    CHECK(a.orow_last - a.row_inc <= v.node(convs[1]).row_start + v.node(convs[1]).rows_0);
    CHECK(ua.preload_next_fia == 0);
    CHECK(ua.fia_preloaded == 0);
    CHECK(ub.fia_preloaded == 0);
    check_flags(v, r);
}

TEST_CASE("conv preload: shared models follow the rule of lowering.md 7.1.8") {
    std::size_t preloaded = 0, models = 0;
    for (const char* name : {"mlcommons-tiny__vww_96_int8", "coral-test-data__tf2_mobilenet_v2_1.0_224_ptq"}) {
        INFO(name);
        const auto path = vnnx::test::shared_model(name);
        if (!path) continue;
        ++models;
        const auto r = compile(vnnx::read_file(*path));
        const model_view v(r.bytes, name);
        check_flags(v, r);
        for (std::size_t k = 0; k < v.num_nodes(); ++k)
            if (v.node(k).type == 3) preloaded += v.node(k).options.get<Conv2DOptions>().fia_preloaded == 1;
    }
    // Measured: MobileNetV2 has two conv pairs that satisfy the rule on V1000, VWW none.
    if (models == 2) CHECK(preloaded > 0);
}
