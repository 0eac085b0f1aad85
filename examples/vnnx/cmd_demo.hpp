#pragma once
// `vnnx demo`: the Quick start's main job. Builds the built-in demo model (a small int8 CNN:
// conv, depthwise conv, add, pools, fully connected, softmax), compiles it for V1000, runs it in
// the simulator and in the reference interpreter, and reports nodes, sizes and agreement.
#include <cstdio>
#include <string>

#include <fmt/format.h>

#include "cmd_compare.hpp"
#include "cmd_compile.hpp"
#include "command.hpp"
#include "vnnx/report/compile_report.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/tflite/builder.hpp"

namespace vnnx::cli {

namespace demo_detail {

inline int run_demo(const parsed_args& a) {
    if (!a.positional().empty()) usage_error(fmt::format("demo: unexpected argument '{}'", a.positional().front()));
    const std::string source = "demo.tflite";
    const auto tfl = tflite::demo_model();
    // A model file to try the other commands on (the README's examples use it).
    if (auto save = a.get("save")) {
        write_file_atomic(*save, tfl);
        std::printf("wrote %s (the demo model, %zu bytes)\n", save->c_str(), tfl.size());
        return 0;
    }
    const auto model = tflite::model_view::parse(tfl, source);
    compile_options opt;
    opt.preset = format::preset::V1000;
    auto c = pipeline::compile_with_vectors(tfl, source, opt, pipeline::test_inputs(model, {}, sim::default_input_seed));
    const auto iso = pipeline::simulate_and_compare(c, model, "demo.vnnx", true, {}, true);
    const auto r = pipeline::simulate_and_compare(c, model, "demo.vnnx", true);
    std::string out = fmt::format("{} ({} operators, {} bytes of TFLite)\n", model.description(),
                                  model.subgraph(0).operator_count(), tfl.size());
    out += "input: pseudo-random integers 0..255 cast to int8 (NumPy seed 42, as vnnx_compile)\n\n";
    out += report::compile_table(c.result, {source, "demo.vnnx", "V1000"});
    out += "\nsimulator against the reference interpreter, per output and per node:\n" + pipeline::outputs_text(r) +
           pipeline::node_table(r, false) + pipeline::verdict_text(r, iso);
    std::fputs(out.c_str(), stdout);
    // The demo shows the pipeline; 'vnnx compare' is the check whose status reports agreement.
    return 0;
}

}  // namespace demo_detail

inline const command demo_command{
    "demo",
    "compile the built-in demo CNN for V1000, simulate it and compare with the reference",
    "vnnx demo [--save DEMO.tflite]",
    "Without --save nothing is read or written: the demo model is built in memory. The report ends with the\n"
    "comparison of every output and every node with the reference interpreter, and the verdict of 'vnnx\n"
    "compare' (every node alone within 1 LSB, or within its table's step). Exit status 0 when the demo\n"
    "ran, 1 on an error.\n"
    "--save writes the demo model as a .tflite file instead, to try the other commands on.\n\n"
    "example: vnnx demo --save demo.tflite && vnnx compile -t demo.tflite -s V1000 -o demo.vnnx",
    {{"save", "", "DEMO.tflite", "write the demo model to this file and stop"}},
    &demo_detail::run_demo,
};

}  // namespace vnnx::cli
