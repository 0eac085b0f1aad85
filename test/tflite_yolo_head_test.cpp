// The YOLOv8 head with its post-processing (tflite/yolo_head_model.hpp): its operator mix, that it
// compiles whole for V250, V500 and V1000, and that the simulator agrees with the reference
// interpreter (within 1 LSB on >= 99.5% of the outputs) and with TFLite's own golden outputs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "vnnx/compiler/compile.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/yolo_head_model.hpp"

using vnnx::builtin_operator;

namespace {

// The conv outputs differ from TFLite's by at most 1 LSB (the FIA's requantization); the box
// normalisation (MUL of the box rows by 1 / grid size) maps one LSB of its input to up to
// (corner scale / grid) / output scale ~ 3.7 LSB of the output, so a rare element is that far.
constexpr int max_lsb = 4;

struct agreement {
    std::size_t total = 0, exact = 0, within1 = 0;
    int max_diff = 0;
    std::set<int> values;
};

agreement compare_int8(std::span<const std::byte> got, std::span<const std::byte> want) {
    agreement a;
    REQUIRE(got.size() == want.size());
    for (std::size_t j = 0; j < got.size(); ++j) {
        const int x = static_cast<std::int8_t>(got[j]), y = static_cast<std::int8_t>(want[j]);
        const int d = std::abs(x - y);
        a.max_diff = std::max(a.max_diff, d);
        a.exact += d == 0;
        a.within1 += d <= 1;
        a.values.insert(y);
        ++a.total;
    }
    return a;
}

std::vector<vnnx::ndarray> random_inputs(const vnnx::tflite::model_view& view, std::uint64_t seed) {
    std::vector<vnnx::ndarray> ins;
    const auto g = view.subgraph(0);
    for (std::size_t i = 0; i < g.inputs().size(); ++i) {
        const auto t = g.tensor(static_cast<std::size_t>(g.inputs()[i]));
        vnnx::ndarray x(vnnx::dtype::int8, std::vector<std::int64_t>(t.shape().begin(), t.shape().end()));
        const auto r = vnnx::tflite::random_int8(seed + i, x.element_count(), -128, 127);
        for (std::size_t k = 0; k < r.size(); ++k) x.data[k] = static_cast<std::byte>(r[k]);
        ins.push_back(std::move(x));
    }
    return ins;
}

std::vector<std::byte> simulate(const std::vector<std::byte>& vnnx_bytes, const std::vector<vnnx::ndarray>& ins) {
    vnnx::sim::machine m(vnnx_bytes, "head.vnnx");
    for (std::size_t i = 0; i < ins.size(); ++i) m.set_input(i, vnnx::sim::to_channels_first(ins[i]).data);
    m.run();
    const auto out = m.output(0);
    return {out.begin(), out.end()};
}

}  // namespace

TEST_CASE("yolov8_head_model: the post-processing of a YOLOv8 export") {
    vnnx::tflite::yolo_head_params p;
    p.image_size = 64;
    p.channels = 16;
    p.classes = 8;
    const auto bytes = vnnx::tflite::yolov8_head_model(p);
    const auto view = vnnx::tflite::model_view::parse(bytes, "head64.tflite");
    const auto g = view.subgraph(0);
    std::map<builtin_operator, int> count;
    for (std::size_t i = 0; i < g.operator_count(); ++i) ++count[g.op(i).op()];
    CHECK(count[builtin_operator::CONV_2D] == 7);         // box and class per scale, the DFL expectation
    CHECK(count[builtin_operator::CONCATENATION] == 4);   // boxes and classes across scales, box rows, output
    CHECK(count[builtin_operator::TRANSPOSE] == 3);
    CHECK(count[builtin_operator::SOFTMAX] == 1);
    CHECK(count[builtin_operator::STRIDED_SLICE] == 2);
    CHECK(count[builtin_operator::LOGISTIC] == 1);
    CHECK(count[builtin_operator::SUB] == 2);
    CHECK(count[builtin_operator::ADD] == 2);
    CHECK(count[builtin_operator::MUL] == 2);
    CHECK(count[builtin_operator::QUANTIZE] == 1);
    // The DFL reshape to [1, 4, 16, N] and a slice with a negative begin.
    const std::int32_t n = 8 * 8 + 4 * 4 + 2 * 2;
    bool dfl_reshape = false, negative_slice = false;
    for (std::size_t i = 0; i < g.operator_count(); ++i) {
        const auto o = g.op(i);
        const auto out = g.tensor(static_cast<std::size_t>(o.outputs()[0])).shape();
        if (o.op() == builtin_operator::RESHAPE && std::vector<std::int32_t>(out.begin(), out.end()) == std::vector<std::int32_t>{1, 4, 16, n})
            dfl_reshape = true;
        if (o.op() == builtin_operator::STRIDED_SLICE) {
            const auto begin = g.tensor(static_cast<std::size_t>(o.inputs()[1])).data();
            negative_slice = negative_slice || static_cast<std::int8_t>(begin[4]) == -2;
        }
    }
    CHECK(dfl_reshape);
    CHECK(negative_slice);
    REQUIRE(g.inputs().size() == 3);
    REQUIRE(g.outputs().size() == 1);
    const auto s = g.tensor(static_cast<std::size_t>(g.outputs()[0])).shape();
    CHECK(std::vector<std::int32_t>(s.begin(), s.end()) == std::vector<std::int32_t>{1, 4 + 8, n});
    p.image_size = 100;
    CHECK_THROWS(vnnx::tflite::yolov8_head_model(p));
}

TEST_CASE("yolov8_head_model: compiles whole on every size, simulator within 1 LSB of the reference") {
    struct variant {
        std::int32_t size, channels, classes;
    };
    for (const auto v : {variant{64, 16, 8}, variant{96, 13, 5}, variant{128, 32, 80}}) {
        vnnx::tflite::yolo_head_params p;
        p.image_size = v.size;
        p.channels = v.channels;
        p.classes = v.classes;
        const auto bytes = vnnx::tflite::yolov8_head_model(p);
        const auto view = vnnx::tflite::model_view::parse(bytes, "head.tflite");
        const auto ins = random_inputs(view, 11);
        const auto want = vnnx::ref::run(view, ins);
        REQUIRE(want.size() == 1);
        const auto ref_cf = vnnx::sim::to_channels_first(want[0]).data;
        for (const auto preset : {vnnx::format::preset::V250, vnnx::format::preset::V500, vnnx::format::preset::V1000}) {
            INFO("image " << v.size << ", channels " << v.channels << ", classes " << v.classes << ", preset "
                          << static_cast<int>(preset));
            vnnx::compile_options opt;
            opt.preset = preset;
            const auto c = vnnx::compile(bytes, opt, "head.tflite");
            // No cut: every operator is compiled and the one output is the model's.
            CHECK_FALSE(c.partition.cut);
            CHECK(c.partition.host_ops.empty());
            const vnnx::format::model_view vv(c.bytes, "head.vnnx");
            REQUIRE(vv.num_outputs() == 1);
            CHECK(vv.num_inputs() == 3);
            const auto a = compare_int8(simulate(c.bytes, ins), ref_cf);
            const double exact = static_cast<double>(a.exact) / static_cast<double>(a.total);
            const double within1 = static_cast<double>(a.within1) / static_cast<double>(a.total);
            if (preset == vnnx::format::preset::V1000)
                WARN("yolov8 head " << v.size << "/" << v.channels << "/" << v.classes << ": " << a.exact << " of " << a.total
                                    << " exact (" << 100.0 * exact << "%), " << 100.0 * within1 << "% within 1 LSB, max diff "
                                    << a.max_diff);
            CHECK(within1 >= 0.995);
            CHECK(a.max_diff <= max_lsb);
            // The output is not degenerate: boxes and scores span many levels.
            CHECK(a.values.size() >= 50);
        }
    }
}

TEST_CASE("yolov8_head_model: the simulator against TFLite's own outputs (golden vectors)") {
    const std::filesystem::path d = std::filesystem::path(VNNX_TEST_DATA_DIR) / "ref" / "yolov8_head_int8";
    REQUIRE(std::filesystem::is_directory(d));
    const auto bytes = vnnx::read_file(d / "model.tflite");
    // The stored model is the maker's (test/data/ref/gen_models.cpp.txt): 96, 13 channels, 5 classes.
    vnnx::tflite::yolo_head_params p;
    p.image_size = 96;
    p.channels = 13;
    p.classes = 5;
    CHECK(vnnx::tflite::yolov8_head_model(p) == bytes);
    const auto view = vnnx::tflite::model_view::parse(bytes, "yolov8_head_int8/model.tflite");
    std::vector<vnnx::ndarray> ins;
    for (int i = 0; i < 3; ++i) ins.push_back(vnnx::read_npy(d / ("input_" + std::to_string(i) + ".npy")));
    const auto tflite_out = vnnx::read_npy(d / "output_0.npy");
    // The reference is TFLite bit for bit (ref_golden_ops_test checks every golden folder too).
    CHECK(vnnx::ref::run(view, ins).at(0).data == tflite_out.data);
    vnnx::compile_options opt;
    const auto c = vnnx::compile(bytes, opt, "yolov8_head_int8.tflite");
    const auto a = compare_int8(simulate(c.bytes, ins), vnnx::sim::to_channels_first(tflite_out).data);
    const double within1 = static_cast<double>(a.within1) / static_cast<double>(a.total);
    WARN("yolov8 head against TFLite: " << a.exact << " of " << a.total << " exact, " << 100.0 * within1
                                        << "% within 1 LSB, max diff " << a.max_diff);
    CHECK(a.total == (4u + 5u) * (12u * 12u + 6u * 6u + 3u * 3u));
    CHECK(within1 >= 0.995);
    CHECK(a.max_diff <= max_lsb);
}
