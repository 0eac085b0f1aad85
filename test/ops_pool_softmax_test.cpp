// SOFTMAX (lowering.md §7.6.2, §8.7) and ARG_MAX / ARG_MIN (§7.7.2): fields and tables by
// hand, the simulator against ref::run (softmax within 1 LSB, its exactness measured; arg-max
// bit-exact), beta honoured, the channel axis of 3-D/4-D tensors, more than 128 classes.
#include "ops_pool_harness.hpp"

#include <cmath>

#include <vnnx/ops/argmax.hpp>
#include <vnnx/ops/softmax.hpp>
#include <vnnx/quant/softmax_tables.hpp>

using namespace pool_test;

namespace {

std::vector<std::byte> softmax_model(tensor_type t, std::vector<std::int32_t> shape, float si, float beta) {
    vnnx::tflite::builder b;
    const bool u8 = t == tensor_type::UINT8;
    const auto in = b.add_tensor("in", t, shape, u8 ? q8(si, 128) : q8(si, 5));
    const auto out = b.add_tensor("out", t, shape, u8 ? q8(1.0f / 256, 0) : q8(1.0f / 256, -128));
    b.add_operator(builtin_operator::SOFTMAX, {in}, {out}, vnnx::tflite::softmax_options{beta});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

std::vector<std::byte> argmax_model(builtin_operator code, tensor_type t, std::vector<std::int32_t> shape, std::int32_t axis,
                                    tensor_type out_type = tensor_type::INT32) {
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", t, shape, q8(0.1f, 0));
    const auto r = static_cast<std::int32_t>(shape.size());
    std::vector<std::int32_t> os;
    for (std::int32_t i = 0; i < r; ++i)
        if (i != (axis < 0 ? axis + r : axis)) os.push_back(shape[static_cast<std::size_t>(i)]);
    const auto out = b.add_tensor("out", out_type, os, {});
    const auto ax = b.add_constant("axis", tensor_type::INT32, {1}, std::vector<std::int32_t>{axis});
    if (code == builtin_operator::ARG_MAX)
        b.add_operator(code, {in, ax}, {out}, vnnx::tflite::arg_max_options{out_type});
    else
        b.add_operator(code, {in, ax}, {out}, vnnx::tflite::arg_min_options{out_type});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

}  // namespace

TEST_CASE("softmax: simulator within 1 LSB of ref::run, exactness measured") {
    struct c_t {
        tensor_type t;
        std::vector<std::int32_t> shape;
        float si, beta;
    };
    const std::vector<c_t> cases = {
        {tensor_type::INT8, {1, 10}, 0.1f, 1.0f},
        {tensor_type::INT8, {4, 1000}, 0.05f, 1.0f},    // ImageNet-sized rows
        {tensor_type::INT8, {1, 4, 5, 12}, 0.2f, 1.0f}, // channel axis of a 4-D tensor
        {tensor_type::INT8, {2, 7, 33}, 0.08f, 1.0f},   // 3-D
        {tensor_type::INT8, {3, 20}, 0.1f, 0.5f},       // beta honoured
        {tensor_type::INT8, {3, 20}, 0.02f, 3.0f},
        {tensor_type::UINT8, {2, 50}, 0.1f, 1.0f},
        {tensor_type::UINT8, {1, 3, 3, 9}, 0.3f, 1.5f},
    };
    std::int64_t differing = 0, total = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        INFO("case " << i);
        std::vector<std::int64_t> s(k.shape.begin(), k.shape.end());
        const auto r = run_both(softmax_model(k.t, k.shape, k.si, k.beta), {random_array(dtype_of(k.t), s, 500 + i)});
        const auto d = compare(r);
        CHECK(d.max_abs <= 1);
        differing += d.count;
        total += d.total;
    }
    // Measured: the integer table (24-bit) and double arithmetic against TFLite's float table and
    // float sum agree on nearly every element; ties near .5 may fall the other way.
    WARN("softmax: " << differing << " of " << total << " elements differ from ref::run by 1 LSB");
    CHECK(differing * 100 <= total);
}

TEST_CASE("softmax: SoftmaxOptions and tables by hand") {
    const float si = 0.1f, beta = 0.5f;
    const emitted e(vnnx::compile(softmax_model(tensor_type::INT8, {1, 4, 5, 12}, si, beta), {}, "pool.tflite"));
    const auto& l = e.view.node_layers(0).back();
    CHECK(l.type == 25);
    const auto o = l.options.get<vnnx::format::layer_options::SoftmaxOptions>();
    CHECK(o.axis == -3);
    CHECK(o.depth == 12);
    CHECK(o.diff_min == -1);
    // QM(1/(S_out·2^16)) with S_out = 1/256: 2^-8 → (2^30, −7).
    CHECK(e.view.int32s(l.input_multiplier.value, 1, "m")[0] == (1 << 30));
    CHECK(e.view.int32s(l.input_shift.value, 1, "s")[0] == -7);
    CHECK(l.output_multiplier.absent());
    // Table entry for v = 127 is round(lut_scale) = 2^24 (depth 12 < 128); v = 126 is
    // round(exp(−S_in·β)·2^24) (beta folded in).
    const auto planes = e.view.range(o.vci_int8.value, 1024, "vci_int8");
    auto entry = [&](int v) {
        const auto r = static_cast<std::size_t>(static_cast<std::uint8_t>(v));
        return std::to_integer<std::uint32_t>(planes[r]) | std::to_integer<std::uint32_t>(planes[256 + r]) << 8 |
               std::to_integer<std::uint32_t>(planes[512 + r]) << 16 | std::to_integer<std::uint32_t>(planes[768 + r]) << 24;
    };
    CHECK(entry(127) == (1u << 24));
    CHECK(entry(126) == static_cast<std::uint32_t>(std::round(std::exp(-static_cast<double>(si * beta)) * 16777216.0)));
    // Step list: first code −128, values ascending with the codes.
    REQUIRE(o.count > 1);
    const auto codes = e.view.range(o.idx_int8.value, static_cast<std::uint64_t>(o.count), "idx");
    CHECK(static_cast<std::int8_t>(std::to_integer<std::uint8_t>(codes[0])) == -128);
    const auto values = e.view.int32s(o.lut_int32.value, static_cast<std::uint64_t>(o.count), "lut");
    CHECK(static_cast<std::uint32_t>(values.back()) == (1u << 24));
    // rank 2 normalises the columns
    const emitted e2(vnnx::compile(softmax_model(tensor_type::INT8, {3, 20}, si, 1.0f), {}, "pool.tflite"));
    const auto o2 = e2.view.node_layers(0).back().options.get<vnnx::format::layer_options::SoftmaxOptions>();
    CHECK(o2.axis == -1);
    CHECK(o2.depth == 20);
}

TEST_CASE("argmax: ARG_MAX / ARG_MIN equal ref::run, also above 128 classes and on other axes") {
    struct c_t {
        builtin_operator code;
        tensor_type t;
        std::vector<std::int32_t> shape;
        std::int32_t axis;
    };
    using B = builtin_operator;
    const std::vector<c_t> cases = {
        {B::ARG_MAX, tensor_type::INT8, {1, 4, 5, 10}, -1},
        {B::ARG_MAX, tensor_type::INT8, {1, 1001}, 1},          // > 128 classes
        {B::ARG_MAX, tensor_type::UINT8, {1, 3, 300}, 2},
        {B::ARG_MIN, tensor_type::INT8, {1, 4, 5, 10}, 3},
        {B::ARG_MIN, tensor_type::UINT8, {2, 6, 7}, -1},
        {B::ARG_MAX, tensor_type::INT8, {1, 6, 5, 3}, 1},       // over H
        {B::ARG_MAX, tensor_type::INT8, {1, 6, 5, 3}, 2},       // over W
        {B::ARG_MAX, tensor_type::UINT8, {1, 65, 70, 21}, -1},  // a segmentation map: several pixel blocks
        {B::ARG_MIN, tensor_type::INT8, {1, 65, 70, 21}, 3},
    };
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& k = cases[i];
        INFO("case " << i);
        std::vector<std::int64_t> s(k.shape.begin(), k.shape.end());
        // a narrow value range makes ties common: the first index must win
        const auto r = run_both(argmax_model(k.code, k.t, k.shape, k.axis), {random_array(dtype_of(k.t), s, 700 + i, -20, 20)});
        require_equal(r);
    }
}

TEST_CASE("argmax: reduce8 and offsets by hand") {
    const emitted e(vnnx::compile(argmax_model(builtin_operator::ARG_MAX, tensor_type::INT8, {1, 4, 5, 200}, -1), {},
                                  "pool.tflite"));
    const auto& l = e.view.node_layers(e.view.num_nodes() - 1).back();
    CHECK(l.type == 56);
    const auto r8 = l.options.get<vnnx::format::layer_options::reduce8>();
    CHECK(r8.channels == 1);
    CHECK(r8.rows == 0);
    CHECK(r8.columns == 0);
    CHECK(l.input_offset == 0);
    CHECK(l.output_offset == 0);
    CHECK(l.output_data_type == 3);  // INT32
}

TEST_CASE("argmax: an INT64 output (TFLite's default) is an INT32 tensor holding the same indices") {
    using B = builtin_operator;
    for (const auto code : {B::ARG_MAX, B::ARG_MIN}) {
        INFO((code == B::ARG_MAX ? "ARG_MAX" : "ARG_MIN"));
        const std::vector<std::int32_t> shape = {1, 4, 5, 21};
        const auto model = argmax_model(code, tensor_type::UINT8, shape, -1, tensor_type::INT64);
        const auto in = random_array(dtype::uint8, {1, 4, 5, 21}, 901, -20, 20);
        // run_both reads the simulator's output in the reference's dtype; here they differ.
        outcome r;
        r.compiled = vnnx::compile(model, vnnx::compile_options{}, "pool.tflite");
        r.ref = vnnx::ref::run(vnnx::tflite::model_view::parse(model, "pool.tflite"), {in});
        vnnx::sim::machine m(r.compiled.bytes, "pool.vnnx", {vnnx::sim::isa_kind::scalar, 1});
        m.set_input(0, to_cf(in).data);
        m.run();
        REQUIRE(r.ref.size() == 1);
        r.sim.push_back(from_cf(m.output(0), dtype::int32, r.ref[0].shape));
        CHECK(r.ref[0].type == dtype::int64);
        const emitted e(r.compiled);
        CHECK(e.view.output(0).type == 3);  // INT32: VNNX has no 64-bit calc type
        CHECK(e.view.node_layers(e.view.num_nodes() - 1).back().output_data_type == 3);
        REQUIRE(r.sim[0].type == dtype::int32);
        REQUIRE(r.sim[0].element_count() == r.ref[0].element_count());
        std::size_t differ = 0;
        for (std::size_t i = 0; i < r.ref[0].element_count(); ++i)
            differ += r.sim[0].get<std::int64_t>(i) != r.ref[0].get<std::int64_t>(i);
        CHECK(differ == 0);
    }
}
