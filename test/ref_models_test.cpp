// The reference interpreter against TensorFlow Lite's own interpreter: for every shared model
// whose stored vectors came out "ok" and whose compute is integer, ref::run on input_*.npy
// must equal output_*.npy bit for bit.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/models.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace {

using vnnx::tflite::tensor_type;

// Why a model cannot be judged bit for bit, or "" when it can: float compute inside the graph
// (anything but a QUANTIZE of a graph input or a DEQUANTIZE to a graph output) or LSTM.
std::string skip_reason(const vnnx::tflite::model_view& m) {
    const auto g = m.subgraph(0);
    auto is_graph = [](std::span<const std::int32_t> list, std::int32_t t) {
        return std::find(list.begin(), list.end(), t) != list.end();
    };
    for (std::size_t k = 0; k < g.operator_count(); ++k) {
        const auto op = g.op(k);
        if (op.op() == vnnx::builtin_operator::UNIDIRECTIONAL_SEQUENCE_LSTM)
            return "operator " + std::to_string(k) + " is an LSTM (outside the reference interpreter's scope)";
        if (op.op() == vnnx::builtin_operator::QUANTIZE && is_graph(g.inputs(), op.inputs()[0])) continue;
        if (op.op() == vnnx::builtin_operator::DEQUANTIZE && is_graph(g.outputs(), op.outputs()[0])) continue;
        for (auto list : {op.inputs(), op.outputs()})
            for (auto t : list)
                if (t >= 0 && (g.tensor(static_cast<std::size_t>(t)).type() == tensor_type::FLOAT32 ||
                               g.tensor(static_cast<std::size_t>(t)).type() == tensor_type::FLOAT16))
                    return "float compute at operator " + std::to_string(k) + " (" + op.name() + ")";
    }
    return "";
}

bool status_ok(const std::filesystem::path& meta) {
    std::ifstream f(meta);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str().find("\"status\": \"ok\"") != std::string::npos;
}

}  // namespace

TEST_CASE("ref: bit-exact against the TFLite interpreter on the shared models") {
    const auto dir = vnnx::test::models_dir();
    if (!dir) {
        WARN("skipped: shared models folder not found (set VNNX_MODELS_DIR)");
        return;
    }
    const char* only = std::getenv("VNNX_REF_MODEL");  // optional filter for debugging
    std::vector<std::filesystem::path> refs;
    for (const auto& e : std::filesystem::directory_iterator(*dir / "ref")) refs.push_back(e.path());
    std::sort(refs.begin(), refs.end());
    int matched = 0;
    for (const auto& r : refs) {
        const std::string name = r.filename().string();
        if (only != nullptr && name.find(only) == std::string::npos) continue;
        if (!status_ok(r / "meta.json")) {
            WARN(name << ": skipped, TFLite did not run it (meta.json status is not ok)");
            continue;
        }
        const auto model_path = *dir / (name + ".tflite");
        const auto bytes = vnnx::read_file(model_path);
        const auto model = vnnx::tflite::model_view::parse(bytes, model_path.filename().string());
        if (const auto why = skip_reason(model); !why.empty()) {
            WARN(name << ": skipped, " << why);
            continue;
        }
        {
            std::vector<vnnx::ndarray> inputs;
            for (std::size_t i = 0; std::filesystem::exists(r / ("input_" + std::to_string(i) + ".npy")); ++i)
                inputs.push_back(vnnx::read_npy(r / ("input_" + std::to_string(i) + ".npy")));
            const auto outputs = vnnx::ref::run(model, inputs);
            REQUIRE(outputs.size() == model.subgraph(0).outputs().size());
            bool all = true;
            for (std::size_t i = 0; i < outputs.size(); ++i) {
                const auto want = vnnx::read_npy(r / ("output_" + std::to_string(i) + ".npy"));
                INFO(name << " output " << i);
                REQUIRE(outputs[i].type == want.type);
                REQUIRE(outputs[i].element_count() == want.element_count());
                std::size_t differ = 0;
                double worst = 0;
                for (std::size_t k = 0; k < want.element_count(); ++k) {
                    const double d = std::abs(outputs[i].get<double>(k) - want.get<double>(k));
                    if (outputs[i].data.empty() || d != 0) ++differ;
                    worst = std::max(worst, d);
                }
                INFO(differ << " of " << want.element_count() << " elements differ, largest difference " << worst);
                CHECK(differ == 0);
                all = all && differ == 0;
            }
            if (all) ++matched;
        }
    }
    WARN("reference interpreter: " << matched << " shared models match TFLite bit for bit");
}
