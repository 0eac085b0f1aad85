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
#include "vnnx/tflite/builder.hpp"

namespace vnnx::cli {

namespace demo_detail {

inline int run_demo(const parsed_args& a) {
    if (!a.positional().empty()) usage_error(fmt::format("demo: unexpected argument '{}'", a.positional().front()));
    const std::string source = "demo.tflite";
    const auto tfl = tflite::demo_model();
    const auto model = tflite::model_view::parse(tfl, source);
    compile_options opt;
    opt.preset = format::preset::V1000;
    auto c = pipeline::compile_with_vectors(tfl, source, opt, pipeline::test_inputs(model, {}, sim::default_input_seed));
    const auto r = pipeline::simulate_and_compare(c, model, "demo.vnnx", a.has("per-node"));
    std::string out = fmt::format("vnnx demo: {} ({} operators, {} bytes of TFLite)\n", model.description(),
                                  model.subgraph(0).operator_count(), tfl.size());
    out += "input: pseudo-random integers 0..255 cast to int8 (NumPy seed 42, as vnnx_compile)\n\n";
    out += report::compile_table(c.result, {source, "demo.vnnx", "V1000"});
    out += "\nsimulator against the reference interpreter:\n" + pipeline::outcome_text(r);
    std::fputs(out.c_str(), stdout);
    return r.agree() ? 0 : 1;
}

}  // namespace demo_detail

inline const command demo_command{
    "demo",
    "compile the built-in demo CNN for V1000, simulate it and compare with the reference",
    "vnnx demo [--per-node]",
    "Nothing is read or written: the demo model is built in memory. Exit status 0 when the\n"
    "simulator agrees with the reference interpreter (see 'vnnx compare'), else 1.",
    {{"per-node", "", "", "also compare every node's tensor with the reference"}},
    &demo_detail::run_demo,
};

}  // namespace vnnx::cli
