// Every shared model that compiles is read back with format::model_view and checked against its
// TFLite graph: magic, version, sizes, I/O count, channels-first shapes, types, scales and zero
// points; compiling twice gives the same bytes; V250, V500 and V1000 all compile. Models that do
// not compile yet are listed with their error (WARN); only those in `must_compile` fail the test.
#include <algorithm>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/format/model_view.hpp>
#include <vnnx/support/atomic_file.hpp>
#include <vnnx/tflite/model_view.hpp>

#include "support/models.hpp"

namespace {

using vnnx::tflite::tensor_type;

// Models whose every operator the compiler supports today (on V250, V500 and V1000); keep this
// list honest.
const std::set<std::string> must_compile = {
    "coral-test-data__deeplabv3_mnv2_dm05_pascal_quant",
    "coral-test-data__mobilenet_v1_0.25_128_quant",
    "coral-test-data__movenet_single_pose_lightning_ptq",  // cut before its float/int32 tail
    "coral-test-data__split_concat",
    "coral-test-data__tf2_mobilenet_v2_1.0_224_ptq",
    "mlcommons-tiny__ad01_int8",
    "mlcommons-tiny__kws_ref_model",
    "mlcommons-tiny__pretrainedResnet_quant",
    "mlcommons-tiny__str_ww_ref_model",
    "mlcommons-tiny__vww_96_int8",
    "tflite-micro-pr1341__custom_model_rf_keras",
    "tflite-micro-pr1341__id_model",
    "tflite-micro-pr1341__retinaface",
    "tflite-micro__hello_world_int8",
    "tflite-micro__micro_speech_quantized",
    "tflite-micro__person_detect",
};

std::int32_t calc_type(tensor_type t) {
    switch (t) {
        case tensor_type::UINT8: case tensor_type::BOOL: return 0;
        case tensor_type::INT8: return 1;
        case tensor_type::INT16: return 2;
        case tensor_type::INT32: return 3;
        case tensor_type::INT64: return 3;  // ARG_MAX indices: VNNX has no 64-bit type (NARROW_INDICES)
        default: return 4;
    }
}

std::vector<std::int32_t> channels_first(std::vector<std::int32_t> s) {
    for (auto& d : s)
        if (d < 0) d = 1;
    if (s.size() < 3) return s;
    std::vector<std::int32_t> out(s.begin(), s.end() - 3);
    out.push_back(s.back());
    out.push_back(s[s.size() - 3]);
    out.push_back(s[s.size() - 2]);
    return out;
}

// The graph I/O after REMOVE_FP32_IO (lowering.md §3.2): a float input read only by a QUANTIZE is
// replaced by that QUANTIZE's output, a float output written by a DEQUANTIZE by its input.
std::vector<vnnx::tflite::tensor_view> io_tensors(const vnnx::tflite::subgraph_view& sg, bool inputs) {
    using vnnx::builtin_operator;
    std::vector<vnnx::tflite::tensor_view> out;
    for (auto t : inputs ? sg.inputs() : sg.outputs()) {
        auto tv = sg.tensor(static_cast<std::size_t>(t));
        if (tv.type() == tensor_type::FLOAT32) {
            for (std::size_t i = 0; i < sg.operator_count(); ++i) {
                const auto o = sg.op(i);
                if (inputs && o.op() == builtin_operator::QUANTIZE && !o.inputs().empty() && o.inputs()[0] == t)
                    tv = sg.tensor(static_cast<std::size_t>(o.outputs()[0]));
                if (!inputs && o.op() == builtin_operator::DEQUANTIZE && !o.outputs().empty() && o.outputs()[0] == t)
                    tv = sg.tensor(static_cast<std::size_t>(o.inputs()[0]));
            }
        }
        out.push_back(tv);
    }
    return out;
}

// `cut`: the TFLite tensors behind the outputs of a model cut before its post-processing.
void check_io(const vnnx::format::model_view& v, const vnnx::tflite::subgraph_view& sg, bool inputs,
              const std::vector<std::int32_t>& cut = {}) {
    auto want = io_tensors(sg, inputs);
    if (!inputs && !cut.empty()) {
        want.clear();
        for (auto t : cut) want.push_back(sg.tensor(static_cast<std::size_t>(t)));
    }
    REQUIRE((inputs ? v.num_inputs() : v.num_outputs()) == want.size());
    for (std::size_t i = 0; i < want.size(); ++i) {
        const auto& io = inputs ? v.input(i) : v.output(i);
        const auto& t = want[i];
        INFO((inputs ? "input " : "output ") << i << " (" << t.name() << ")");
        const std::vector<std::int32_t> tfl(t.shape().begin(), t.shape().end());
        CHECK(io.shape == channels_first(tfl));
        CHECK(io.type == calc_type(t.type()));
        const auto q = t.quant();
        // An unquantized 8-bit input read through a CAST to float holds raw integers: scale 1,
        // zero point 0 (FOLD_INPUT_CAST).
        if (inputs && q.scale.empty() && io.type <= 1) {
            CHECK(io.scale == 1.0f);
            CHECK(io.zero_point == 0);
            continue;
        }
        // Indices (ARG_MAX) have no quantization in TFLite; their VNNX record says scale 1.0
        // (lowering.md §7.7.2).
        const bool indices = q.scale.empty() && (t.type() == tensor_type::INT32 || t.type() == tensor_type::INT64);
        CHECK(io.scale == (q.scale.empty() ? (indices ? 1.0f : 0.0f) : q.scale[0]));
        CHECK(io.zero_point == (q.zero_point.empty() ? 0 : static_cast<std::int32_t>(q.zero_point[0])));
    }
}

}  // namespace

TEST_CASE("models: every shared model that compiles reads back consistently") {
    const auto dir = vnnx::test::models_dir();
    if (!dir) {
        WARN("skipped: shared models folder not found (set VNNX_MODELS_DIR)");
        return;
    }
    std::vector<std::filesystem::path> files;
    for (const auto& e : std::filesystem::directory_iterator(*dir))
        if (e.path().extension() == ".tflite") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    REQUIRE(!files.empty());
    std::size_t compiled = 0;
    std::string failures;
    for (const auto& path : files) {
        const std::string stem = path.stem().string();
        const auto bytes = vnnx::read_file(path);
        vnnx::compile_result r;
        try {
            vnnx::compile_options opt;
            opt.preset = vnnx::format::preset::V1000;
            opt.cut.mode = vnnx::compiler::cut_mode::automatic;
            r = vnnx::compile(bytes, opt, path.filename().string());
        } catch (const vnnx::error& e) {
            failures += "\n  " + stem + ": " + e.what();
            if (must_compile.count(stem)) FAIL_CHECK(stem << " must compile: " << e.what());
            continue;
        }
        ++compiled;
        INFO(stem);
        const vnnx::format::model_view v(r.bytes, stem + ".vnnx");
        const auto& h = v.header();
        CHECK(h.magic == vnnx::format::magic);
        CHECK(h.version == vnnx::format::graph_version);
        CHECK(h.vbx_nn_preset == 2u);
        CHECK(h.data_bytes == r.bytes.size());
        CHECK(h.allocate_bytes >= h.data_bytes);
        CHECK(h.allocate_bytes == r.allocate_bytes);
        const auto model = vnnx::tflite::model_view::parse(bytes, path.filename().string());
        check_io(v, model.subgraph(0), true);
        check_io(v, model.subgraph(0), false, r.partition.cut ? r.partition.outputs : std::vector<std::int32_t>{});

        if (!must_compile.count(stem)) continue;  // the heavier checks on the listed models
        vnnx::compile_options again;
        again.preset = vnnx::format::preset::V1000;
        again.cut.mode = vnnx::compiler::cut_mode::automatic;
        CHECK(vnnx::compile(bytes, again, path.filename().string()).bytes == r.bytes);
        for (auto p : {vnnx::format::preset::V250, vnnx::format::preset::V500}) {
            vnnx::compile_options o;
            o.preset = p;
            o.cut.mode = vnnx::compiler::cut_mode::automatic;
            CHECK_NOTHROW(vnnx::compile(bytes, o, path.filename().string()));
        }
    }
    WARN(compiled << " of " << files.size() << " shared models compile"
                  << (failures.empty() ? std::string() : "; not yet:" + failures));
}
