// The YOLOv8n-shaped benchmark model (tflite/yolo_model.hpp) at a small size: its operator mix,
// that it compiles, and that the simulator agrees with the reference interpreter on every output
// for the scalar path and the fastest SIMD path.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <algorithm>
#include <map>
#include <span>

#include "vnnx/compiler/compile.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/yolo_model.hpp"

using vnnx::builtin_operator;

namespace {
/// Equal elements and the largest |difference| of two int8 byte arrays, accumulated over calls.
struct int8_agreement {
    std::size_t total = 0, exact = 0;
    int max_diff = 0;
    void add(std::span<const std::byte> got, std::span<const std::byte> want) {
        REQUIRE(got.size() == want.size());
        for (std::size_t j = 0; j < got.size(); ++j) {
            const int a = static_cast<std::int8_t>(got[j]), b = static_cast<std::int8_t>(want[j]);
            max_diff = std::max(max_diff, std::abs(a - b));
            exact += a == b;
            ++total;
        }
    }
    [[nodiscard]] double rate() const { return total ? static_cast<double>(exact) / static_cast<double>(total) : 1.0; }
};
}  // namespace

TEST_CASE("yolov8n_model: YOLOv8n's operator mix and output shapes") {
    const auto bytes = vnnx::tflite::yolov8n_model(64);
    const auto view = vnnx::tflite::model_view::parse(bytes, "yolo64.tflite");
    const auto g = view.subgraph(0);
    std::map<builtin_operator, int> count;
    for (std::size_t i = 0; i < g.operator_count(); ++i) ++count[g.op(i).op()];
    // 57 Conv+SiLU, 6 plain 1x1 head convs; 8 C2f splits; 6 residual adds; 3 SPPF pools; 2 upsamples.
    CHECK(count[builtin_operator::CONV_2D] == 63);
    CHECK(count[builtin_operator::LOGISTIC] == 57);
    CHECK(count[builtin_operator::MUL] == 57);
    CHECK(count[builtin_operator::SPLIT] == 8);
    CHECK(count[builtin_operator::ADD] == 6);
    CHECK(count[builtin_operator::MAX_POOL_2D] == 3);
    CHECK(count[builtin_operator::RESIZE_NEAREST_NEIGHBOR] == 2);
    CHECK(count[builtin_operator::CONCATENATION] == 8 + 1 + 4 + 3);
    REQUIRE(g.outputs().size() == 3);
    const std::int32_t sizes[3] = {8, 4, 2};
    for (std::size_t o = 0; o < 3; ++o) {
        const auto s = g.tensor(static_cast<std::size_t>(g.outputs()[o])).shape();
        REQUIRE(s.size() == 4);
        CHECK(s[1] == sizes[o]);
        CHECK(s[2] == sizes[o]);
        CHECK(s[3] == 144);
    }
    CHECK_THROWS(vnnx::tflite::yolov8n_model(100));
}

TEST_CASE("yolov8n_model at 64x64: compiles, and the simulator agrees with the reference") {
    const auto bytes = vnnx::tflite::yolov8n_model(64);
    vnnx::compile_options opt;
    opt.preset = vnnx::format::preset::V1000;
    const auto compiled = vnnx::compile(bytes, opt, "yolo64.tflite");
    CHECK(compiled.macs > 0);
    const auto view = vnnx::tflite::model_view::parse(bytes, "yolo64.tflite");

    vnnx::ndarray x(vnnx::dtype::int8, {1, 64, 64, 3});
    const auto r = vnnx::tflite::random_int8(5, x.element_count(), -128, 127);
    for (std::size_t i = 0; i < r.size(); ++i) x.data[i] = static_cast<std::byte>(r[i]);
    const auto want = vnnx::ref::run(view, {x});
    REQUIRE(want.size() == 3);

    std::vector<vnnx::sim::isa_kind> isas{vnnx::sim::isa_kind::scalar};
    if (vnnx::sim::best_isa() != vnnx::sim::isa_kind::scalar) isas.push_back(vnnx::sim::best_isa());
    std::vector<std::vector<std::byte>> scalar_out;
    for (const auto isa : isas) {
        INFO("isa " << vnnx::sim::isa_name(isa));
        vnnx::sim::machine m(compiled.bytes, "yolo64.vnnx", {isa, 2});
        m.set_input(0, vnnx::sim::to_channels_first(x).data);
        m.run();
        // Every ISA gives the scalar path's bytes.
        for (std::size_t o = 0; o < 3; ++o) {
            const auto got = m.output(o);
            if (isa == vnnx::sim::isa_kind::scalar) scalar_out.emplace_back(got.begin(), got.end());
            else CHECK(std::equal(got.begin(), got.end(), scalar_out.at(o).begin(), scalar_out.at(o).end()));
        }
        int8_agreement d;
        for (std::size_t o = 0; o < 3; ++o) d.add(m.output(o), vnnx::sim::to_channels_first(want[o]).data);
        WARN("yolo64 " << vnnx::sim::isa_name(isa) << ": exact-match rate " << 100.0 * d.rate() << "% of " << d.total
                       << ", max diff " << d.max_diff);
        CHECK(d.total == 144u * (64 + 16 + 4));
        CHECK(d.rate() >= 0.9);
        CHECK(d.max_diff <= 2);
    }
}

TEST_CASE("yolov8n_model decoded: a real export's head on the same network, compiled whole, simulator near the reference") {
    const auto bytes = vnnx::tflite::yolov8n_model(64, {.decoded = true});
    const auto view = vnnx::tflite::model_view::parse(bytes, "yolo64d.tflite");
    const auto g = view.subgraph(0);
    std::map<builtin_operator, int> count;
    for (std::size_t i = 0; i < g.operator_count(); ++i) ++count[g.op(i).op()];
    // The network's 63 convs and the DFL expectation; per scale an NCHW transpose, then the DFL's.
    CHECK(count[builtin_operator::CONV_2D] == 64);
    CHECK(count[builtin_operator::TRANSPOSE] == 3 + 1);
    CHECK(count[builtin_operator::SOFTMAX] == 1);
    CHECK(count[builtin_operator::STRIDED_SLICE] == 2 + 2);
    CHECK(count[builtin_operator::LOGISTIC] == 57 + 1);
    REQUIRE(g.outputs().size() == 1);
    const auto s = g.tensor(static_cast<std::size_t>(g.outputs()[0])).shape();
    const std::int32_t n = 8 * 8 + 4 * 4 + 2 * 2;
    CHECK(std::vector<std::int32_t>(s.begin(), s.end()) == std::vector<std::int32_t>{1, 84, n});

    vnnx::compile_options opt;
    opt.preset = vnnx::format::preset::V1000;
    const auto compiled = vnnx::compile(bytes, opt, "yolo64d.tflite");
    vnnx::ndarray x(vnnx::dtype::int8, {1, 64, 64, 3});
    const auto r = vnnx::tflite::random_int8(5, x.element_count(), -128, 127);
    for (std::size_t i = 0; i < r.size(); ++i) x.data[i] = static_cast<std::byte>(r[i]);
    const auto want = vnnx::ref::run(view, {x});
    REQUIRE(want.size() == 1);
    const auto ref = vnnx::sim::to_channels_first(want[0]).data;
    std::vector<std::byte> first;
    for (const auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::best_isa()}) {
        INFO("isa " << vnnx::sim::isa_name(isa));
        vnnx::sim::machine m(compiled.bytes, "yolo64d.vnnx", {isa, 2});
        m.set_input(0, vnnx::sim::to_channels_first(x).data);
        m.run();
        const auto got = m.output(0);
        if (first.empty()) first.assign(got.begin(), got.end());
        CHECK(std::equal(got.begin(), got.end(), first.begin(), first.end()));  // every ISA the same bytes
        int8_agreement d;
        d.add(got, ref);
        WARN("yolo64 decoded " << vnnx::sim::isa_name(isa) << ": exact-match rate " << 100.0 * d.rate() << "% of "
                               << d.total << ", max diff " << d.max_diff);
        CHECK(d.rate() >= 0.9);
        CHECK(d.max_diff <= 3);
    }
}

TEST_CASE("yolov8n_model with C2PSA: YOLO11's attention block compiles whole, simulator near the reference") {
    const auto bytes = vnnx::tflite::yolov8n_model(128, {.decoded = true, .c2psa = true});
    const auto view = vnnx::tflite::model_view::parse(bytes, "yolo11_128.tflite");
    const auto g = view.subgraph(0);
    std::map<builtin_operator, int> count;
    for (std::size_t i = 0; i < g.operator_count(); ++i) ++count[g.op(i).op()];
    // qᵀ·k and v·pᵀ; the attention's softmax beside the DFL's; q, k, v sliced beside the head's four
    // slices; the qkv transpose and two back to NHWC beside the head's four; one depthwise conv.
    CHECK(count[builtin_operator::BATCH_MATMUL] == 2);
    CHECK(count[builtin_operator::SOFTMAX] == 2);
    CHECK(count[builtin_operator::STRIDED_SLICE] == 4 + 3);
    CHECK(count[builtin_operator::TRANSPOSE] == 4 + 3);
    CHECK(count[builtin_operator::DEPTHWISE_CONV_2D] == 1);

    vnnx::compile_options opt;
    opt.preset = vnnx::format::preset::V1000;
    const auto compiled = vnnx::compile(bytes, opt, "yolo11_128.tflite");
    vnnx::ndarray x(vnnx::dtype::int8, {1, 128, 128, 3});
    const auto r = vnnx::tflite::random_int8(9, x.element_count(), -128, 127);
    for (std::size_t i = 0; i < r.size(); ++i) x.data[i] = static_cast<std::byte>(r[i]);
    const auto want = vnnx::ref::run(view, {x});
    REQUIRE(want.size() == 1);
    const auto ref = vnnx::sim::to_channels_first(want[0]).data;
    std::vector<std::byte> first;
    for (const auto isa : {vnnx::sim::isa_kind::scalar, vnnx::sim::best_isa()}) {
        INFO("isa " << vnnx::sim::isa_name(isa));
        vnnx::sim::machine m(compiled.bytes, "yolo11_128.vnnx", {isa, 2});
        m.set_input(0, vnnx::sim::to_channels_first(x).data);
        m.run();
        const auto got = m.output(0);
        if (first.empty()) first.assign(got.begin(), got.end());
        CHECK(std::equal(got.begin(), got.end(), first.begin(), first.end()));
        int8_agreement d;
        d.add(got, ref);
        WARN("yolo11 128 " << vnnx::sim::isa_name(isa) << ": exact-match rate " << 100.0 * d.rate() << "% of " << d.total
                           << ", max diff " << d.max_diff);
        CHECK(d.rate() >= 0.9);
        CHECK(d.max_diff <= 3);
    }
}
