#pragma once
// `vnnx compile -t MODEL.tflite -s V1000 [-c ncomp] [-i IN.npy ...] -o OUT.vnnx [--report R.json] [-v]`:
// the SDK's vnnx_compile. The file embeds test vectors as the SDK's does: the given inputs (or the
// SDK's pseudo-random input) and the outputs the reference interpreter computes for them, both
// channels first. Also the pipeline helpers `vnnx compare` and `vnnx demo` share.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "command.hpp"
#include "vnnx/compiler/calibrate.hpp"
#include "vnnx/compiler/compile.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/ref/interpreter.hpp"
#include "vnnx/report/compile_report.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::cli {

namespace pipeline {

/// The array type of a TFLite tensor (what the reference interpreter takes and returns).
inline dtype tflite_dtype(const tflite::tensor_view& t, const std::string& what) {
    switch (t.type()) {
        case tflite::tensor_type::INT8: return dtype::int8;
        case tflite::tensor_type::UINT8: return dtype::uint8;
        case tflite::tensor_type::INT16: return dtype::int16;
        case tflite::tensor_type::INT32: return dtype::int32;
        case tflite::tensor_type::INT64: return dtype::int64;  // ARG_MAX indices, narrowed to int32 in VNNX
        case tflite::tensor_type::FLOAT32: return dtype::float32;
        default:
            fail(error_kind::unsupported, what + ": tensor type " + std::string(tflite::type_name(t.type())) +
                                              " cannot be a test vector");
    }
}

/// Array `a` (from `file`) as model input i: its dtype checked, a channels-first array transposed
/// (as the SDK does), its shape the model's (a leading batch of 1 may be missing).
inline ndarray conform_input(const tflite::model_view& m, std::size_t i, ndarray a, const std::string& file) {
    const auto g = m.subgraph(0);
    const auto t = g.tensor(static_cast<std::size_t>(g.inputs()[i]));
    const dtype want = tflite_dtype(t, fmt::format("{}: input {} ('{}')", m.source(), i, t.name()));
    const std::vector<std::int64_t> shape(t.shape().begin(), t.shape().end());
    if (a.type != want)
        fail_input(fmt::format("{}: dtype {} does not match {} of the model's input {} ('{}')", file, dtype_name(a.type),
                               dtype_name(want), i, t.name()));
    // As the SDK: a rank-3/4 array whose axes are the other order (channels first against a
    // channels-last input, or the reverse) is transposed to the model's order.
    if (a.shape.size() >= 3 && a.shape.size() <= 4 && !sim::detail::same_shape_up_to_batch(a.shape, shape)) {
        if (sim::detail::same_shape_up_to_batch(sim::channels_last_shape(a.shape), shape)) a = sim::to_channels_last(a);
        else if (sim::detail::same_shape_up_to_batch(sim::channels_first_shape(a.shape), shape)) a = sim::to_channels_first(a);
    }
    if (!sim::detail::same_shape_up_to_batch(a.shape, shape))
        fail_input(fmt::format("{}: shape {} does not match {} of the model's input {} ('{}', TFLite layout NHWC)", file,
                               sim::detail::shape_text(a.shape), sim::detail::shape_text(shape), i, t.name()));
    a.shape = shape;
    return a;
}

/// The graph inputs in the TFLite layout and dtype: the .npy files given (one per input, in
/// model-input order, a leading batch of 1 may be missing), or the SDK's pseudo-random input
/// (integers 0..255 cast to the input type, NumPy seeded with `seed` for each input).
inline std::vector<ndarray> test_inputs(const tflite::model_view& m, const std::vector<std::string>& files,
                                        std::uint32_t seed) {
    const auto g = m.subgraph(0);
    const auto ins = g.inputs();
    const std::string source(m.source());
    if (!files.empty() && files.size() != ins.size())
        fail(error_kind::usage, fmt::format("{}: the model has {} input(s), {} .npy file(s) were given", source,
                                            ins.size(), files.size()));
    std::vector<ndarray> out;
    for (std::size_t i = 0; i < ins.size(); ++i) {
        const auto t = g.tensor(static_cast<std::size_t>(ins[i]));
        const std::string what = fmt::format("{}: input {} ('{}')", source, i, t.name());
        const dtype want = tflite_dtype(t, what);
        const std::vector<std::int64_t> shape(t.shape().begin(), t.shape().end());
        if (files.empty()) {
            // The SDK seeds NumPy again for every input (default_input_arr in infer_tflite.py).
            std::mt19937 gen(seed);
            out.push_back(sim::random_array(gen, want, shape));
            continue;
        }
        out.push_back(conform_input(m, i, read_npy(files[i]), files[i]));
    }
    return out;
}

/// The calibration inputs of `vnnx compile --calibrate` (single-input models): one sample per
/// file, or one per row of a file whose leading axis is a batch of them.
inline std::vector<std::vector<ndarray>> calibration_inputs(const tflite::model_view& m, const std::vector<std::string>& files) {
    const auto ins = m.subgraph(0).inputs();
    if (ins.size() != 1)
        fail(error_kind::usage, fmt::format("{}: --calibrate takes models of one input; this one has {}", m.source(), ins.size()));
    const auto t = m.subgraph(0).tensor(static_cast<std::size_t>(ins[0]));
    const std::vector<std::int64_t> shape(t.shape().begin(), t.shape().end());
    std::vector<std::vector<ndarray>> sets;
    for (const auto& f : files) {
        ndarray a = read_npy(f);
        const bool batch = !shape.empty() && shape[0] == 1 && a.shape.size() == shape.size() && a.shape[0] > 1;
        const std::size_t n = batch ? static_cast<std::size_t>(a.shape[0]) : 1;
        const std::size_t each = a.data.size() / n;
        for (std::size_t k = 0; k < n; ++k) {
            ndarray one(a.type, a.shape);
            if (batch) one.shape[0] = 1;
            one.data.assign(a.data.begin() + static_cast<std::ptrdiff_t>(k * each), a.data.begin() + static_cast<std::ptrdiff_t>((k + 1) * each));
            sets.push_back({conform_input(m, 0, std::move(one), n > 1 ? fmt::format("{} [{}]", f, k) : f)});
        }
    }
    return sets;
}


/// The part of the model `vnnx compile` would compile (partition.hpp), or one error listing every
/// operator the compiler cannot take, before the reference interpreter runs (its own message
/// would name only the first). The graph borrows the model's constants: planning reads no weight.
inline compiler::partition plan(const tflite::model_view& m, const compiler::cut_request& cut) {
    return compiler::plan_partition(compiler::checked_graph(m, compiler::constant_storage::borrow), cut);
}

/// The --cut and --outputs options of compile and compare.
inline compiler::cut_request cut_options(const parsed_args& a, std::string_view command) {
    compiler::cut_request r;
    const std::string mode = a.get("cut").value_or("auto");
    if (mode == "auto") r.mode = compiler::cut_mode::automatic;
    else if (mode == "none") r.mode = compiler::cut_mode::none;
    else usage_error(fmt::format("{}: unknown value '{}' for --cut; expected auto or none", command, mode));
    for (const auto& v : a.all("outputs")) {
        std::size_t at = 0;
        while (at <= v.size()) {
            const auto comma = v.find(',', at);
            const auto name = v.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
            if (!name.empty()) r.outputs.push_back(name);
            if (comma == std::string::npos) break;
            at = comma + 1;
        }
    }
    if (!r.outputs.empty() && a.get("cut"))
        usage_error(fmt::format("{}: --outputs already says where the graph ends; leave --cut out", command));
    return r;
}

/// The --calibrate data: the reference's accumulators on the given inputs (null without).
inline std::shared_ptr<const compiler::calibration> calibration_of(const tflite::model_view& m, const parsed_args& a,
                                                                  std::string_view command) {
    const auto files = a.all("calibrate");
    if (files.empty()) return nullptr;
    if (a.has("sdk-scales")) usage_error("--calibrate fits records, --sdk-scales keeps the SDK's: give one of them");
    auto sets = calibration_inputs(m, files);
    try {
        return std::make_shared<const compiler::calibration>(compiler::calibrate(m, sets));
    } catch (const error& e) {
        // The reference runs the whole graph; a cut model's host part may hold what it cannot run.
        if (!plan(m, cut_options(a, command)).cut) throw;
        fail(e.kind(), fmt::format("--calibrate runs the whole model in the reference interpreter, which stops in the part "
                                   "left to the host: {}; compile without --calibrate",
                                   e.what()));
    }
}

/// One line on what fitting the records did.
inline std::string fit_text(const compiler::record_fit_stats& f, std::size_t inputs) {
    auto pct = [&](std::size_t n) { return f.samples ? 100.0 * static_cast<double>(n) / static_cast<double>(f.samples) : 100.0; };
    return fmt::format("records fitted to {} calibration input(s): {} of {} channels changed; calibration outputs "
                       "reproduced exactly {:.2f}% -> {:.2f}% of {}\n",
                       inputs, f.changed, f.channels, pct(f.matched_before), pct(f.matched_after), f.samples);
}

/// The TFLite tensors behind the VNNX outputs.
inline std::vector<std::int32_t> vnnx_output_tensors(const tflite::model_view& m, const compiler::partition& p) {
    if (p.cut) return p.outputs;
    const auto outs = m.subgraph(0).outputs();
    return {outs.begin(), outs.end()};
}

/// A bool array as the 0/1 uint8 array VNNX holds for it.
inline ndarray bool_as_uint8(const ndarray& a) {
    ndarray u(dtype::uint8, a.shape);
    u.data = a.data;
    return u;
}

/// A TFLite-layout array as the channels-first bytes of a VNNX io tensor of type `calc_type`
/// (float arrays, when the model's float io was folded away, are quantized with its scale; int64
/// indices become the int32 of the VNNX tensor).
inline std::vector<std::byte> vnnx_bytes(const ndarray& a, std::int32_t calc_type, float scale, std::int32_t zero,
                                         const std::string& what) {
    const dtype want = sim::io_dtype(calc_type);
    ndarray v = a.type == want                                       ? a
                : a.type == dtype::bool_ && want == dtype::uint8 ? bool_as_uint8(a)
                : a.type == dtype::int64 && want == dtype::int32 ? sim::narrow_int64(a, what)
                                                                 : sim::quantize_array(a, want, scale, zero, what);
    if (v.type != want)
        fail_input(fmt::format("{}: a {} array cannot fill a {} tensor", what, dtype_name(a.type), dtype_name(want)));
    return sim::to_channels_first(v).data;
}

/// A compilation with embedded test vectors and the reference run that produced them.
struct compiled {
    compile_result result;
    std::vector<ndarray> inputs;  // TFLite layout and dtype
    ref::run_trace trace;         // reference outputs and every tensor it computed
    bool reference = true;        // false: the reference could not run, the expected outputs are zeros
    std::vector<std::int32_t> out_tensors;  // the TFLite tensors behind the VNNX outputs
};

/// The reference run that gives the expected outputs (at the cut tensors when the model is cut);
/// with `skip`, none: zero outputs. Without `keep_tensors` the trace holds the outputs only (each
/// intermediate tensor is released after its last use).
inline compiled reference_vectors(const tflite::model_view& model, const std::string& source, std::vector<ndarray> inputs,
                                  const compiler::cut_request& cut, bool reference_optional, bool skip = false,
                                  bool keep_tensors = true) {
    const auto part = plan(model, cut);
    compiled c;
    c.out_tensors = vnnx_output_tensors(model, part);
    c.inputs = inputs;
    const auto g = model.subgraph(0);
    auto zero_outputs = [&] {
        c.reference = false;
        for (auto o : c.out_tensors) {
            const auto t = g.tensor(static_cast<std::size_t>(o));
            c.trace.outputs.emplace_back(tflite_dtype(t, source), std::vector<std::int64_t>(t.shape().begin(), t.shape().end()));
        }
    };
    if (skip) {
        zero_outputs();
        return c;
    }
    try {
        if (part.cut) c.trace = ref::run_until(model, std::move(inputs), part.outputs);
        else if (keep_tensors) c.trace = ref::run_traced(model, std::move(inputs));
        else c.trace.outputs = ref::run(model, std::move(inputs));
    } catch (const vnnx::error& e) {
        // An operator the compiler takes but the reference interpreter does not: `vnnx compile`
        // still writes the file, with zero expected outputs (lowering.md §13 lists this
        // deviation); `vnnx compare` cannot go on.
        if (!reference_optional || e.kind() != error_kind::unsupported) throw;
        std::fprintf(stderr, "vnnx: warning: %s; the embedded expected outputs are zeros\n", e.what());
        zero_outputs();
    }
    return c;
}

/// Compiles with the test vectors of `c` (from reference_vectors) embedded; fills c.result.
inline void compile_vectors_into(compiled& c, std::span<const std::byte> tflite_bytes, const tflite::model_view& model,
                                 const std::string& source, compile_options opt) {
    const auto g = model.subgraph(0);
    // The io tensors of the VNNX file have the TFLite tensors' integer type, except where the
    // compiler folded a float QUANTIZE/DEQUANTIZE away: then a first compilation tells their
    // type and quantization (the test vectors do not change anything else).
    bool has_float = false;
    for (const auto& a : c.inputs) has_float |= a.type == dtype::float32;
    for (const auto& a : c.trace.outputs) has_float |= a.type == dtype::float32;
    std::vector<format::io_tensor> ins, outs;
    compile_result first;
    if (has_float) {
        first = vnnx::compile(tflite_bytes, opt, source);
        const format::model_view v(first.bytes, source);
        for (std::size_t i = 0; i < v.num_inputs(); ++i) ins.push_back(v.input(i));
        for (std::size_t o = 0; o < v.num_outputs(); ++o) outs.push_back(v.output(o));
    }
    auto calc_of = [](dtype t) {
        switch (t) {
            case dtype::uint8:
            case dtype::bool_: return 0;
            case dtype::int8: return 1;
            case dtype::int16: return 2;
            default: return 3;
        }
    };
    auto target = [&](const std::vector<format::io_tensor>& ios, std::size_t i, const ndarray& a) {
        if (i < ios.size()) return std::tuple{ios[i].type, ios[i].scale, ios[i].zero_point};
        return std::tuple{calc_of(a.type), 0.0f, 0};
    };
    opt.test_inputs.clear();
    opt.test_outputs.clear();
    for (std::size_t i = 0; i < c.inputs.size(); ++i) {
        const auto [type, scale, zero] = target(ins, i, c.inputs[i]);
        opt.test_inputs.push_back(vnnx_bytes(c.inputs[i], type, scale, zero, fmt::format("{}: input {}", source, i)));
    }
    for (std::size_t o = 0; o < c.trace.outputs.size(); ++o) {
        const auto [type, scale, zero] = target(outs, o, c.trace.outputs[o]);
        opt.test_outputs.push_back(
            vnnx_bytes(c.trace.outputs[o], type, scale, zero, fmt::format("{}: reference output {} of '{}'", source, o,
                                                                          g.tensor(static_cast<std::size_t>(c.out_tensors[o])).name())));
    }
    c.result = vnnx::compile(tflite_bytes, opt, source);
}

inline compiled compile_with_vectors(std::span<const std::byte> tflite_bytes, const std::string& source,
                                     compile_options opt, std::vector<ndarray> inputs, bool reference_optional = false) {
    const auto model = tflite::model_view::parse(tflite_bytes, source);
    compiled c = reference_vectors(model, source, std::move(inputs), opt.cut, reference_optional);
    compile_vectors_into(c, tflite_bytes, model, source, std::move(opt));
    return c;
}

inline std::vector<format::preset> parse_presets(const std::string& text, std::string_view command) {
    std::vector<format::preset> out;
    std::size_t at = 0;
    while (at <= text.size()) {
        const auto comma = text.find(',', at);
        const std::string name = text.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
        const auto p = format::preset_from_name(name);
        if (!p || (*p != format::preset::V250 && *p != format::preset::V500 && *p != format::preset::V1000))
            usage_error(fmt::format("{}: unknown size '{}' for -s; expected V250, V500 or V1000 (or a comma-separated list)",
                                    command, name));
        if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

inline std::string preset_name(format::preset p) { return std::string(format::params(p).name); }

/// OUT.vnnx -> OUT_V500.vnnx when several sizes are compiled at once.
inline std::filesystem::path suffixed(const std::filesystem::path& p, const std::string& suffix) {
    return p.parent_path() / (p.stem().string() + "_" + suffix + p.extension().string());
}

}  // namespace pipeline

namespace compile_detail {

inline int run_compile(const parsed_args& a) {
    if (!a.positional().empty())
        usage_error(fmt::format("compile: unexpected argument '{}'; the model is given with -t", a.positional().front()));
    const auto model_path = a.get("tflite");
    if (!model_path) usage_error("compile: -t MODEL.tflite is required; see 'vnnx compile --help'");
    const auto size = a.get("size_conf");
    if (!size) usage_error("compile: -s V250|V500|V1000 is required; see 'vnnx compile --help'");
    const auto presets = pipeline::parse_presets(*size, "compile");
    const std::string comp_name = a.get("compression-vbx").value_or("ncomp");
    const auto comp = format::compression_from_name(comp_name);
    if (!comp) usage_error(fmt::format("compile: unknown compression '{}' for -c; expected ncomp, comp or ucomp", comp_name));
    const bool verbose = a.has("verbose");

    std::filesystem::path out_path;
    if (auto o = a.get("output")) {
        out_path = *o;
    } else {
        // The SDK's default: the model path without .tflite, then _<SIZE>_<COMP>.vnnx.
        std::filesystem::path p(*model_path);
        out_path = p.parent_path() / (p.stem().string() + "_" + (presets.size() == 1 ? pipeline::preset_name(presets[0]) + "_" : "") +
                                      comp_name + ".vnnx");
    }
    const auto report_path = a.get("report");

    // -v: progress and timings on stderr, so that stdout keeps the results only.
    using clock = std::chrono::steady_clock;
    auto since = clock::now();
    auto progress = [&](const std::string& what) {
        if (!verbose) return;
        const auto now = clock::now();
        std::fprintf(stderr, "vnnx compile: %s: %.1f ms\n", what.c_str(),
                     std::chrono::duration<double, std::milli>(now - since).count());
        since = now;
    };
    const auto bytes = read_file(*model_path);
    const auto model = tflite::model_view::parse(bytes, *model_path);
    auto inputs = pipeline::test_inputs(model, a.all("inputs"), sim::default_input_seed);
    progress(fmt::format("reading {} ({} bytes) and its test inputs", *model_path, bytes.size()));

    // One reference run serves every size: the test vectors do not depend on it.
    const auto cut = pipeline::cut_options(a, "compile");
    const auto calib = pipeline::calibration_of(model, a, "compile");
    if (calib) progress(fmt::format("calibration: {} input(s) through the reference", calib->inputs));
    const bool no_vectors = a.has("no-vectors");
    // Only the outputs are embedded: the intermediate tensors are not kept (nor copied per size).
    const auto vectors = pipeline::reference_vectors(model, *model_path, std::move(inputs), cut, true, no_vectors, false);
    progress(no_vectors ? std::string("test vectors skipped (--no-vectors)") : std::string("reference run for the test vectors"));

    struct done {
        std::filesystem::path out, report;
        pipeline::compiled c;
        std::string preset;
    };
    std::vector<done> results;
    for (const auto p : presets) {
        compile_options opt;
        opt.preset = p;
        opt.cut = cut;
        opt.compression = *comp;
        opt.sdk_scales = a.has("sdk-scales");
        opt.requantize_outliers = a.has("requantize-outliers");
        opt.calibration = calib;
        const std::string pname = pipeline::preset_name(p);
        if (verbose) opt.log = [pname](const std::string& line) { std::fprintf(stderr, "vnnx compile [%s]: %s\n", pname.c_str(), line.c_str()); };
        done d;
        d.preset = pname;
        d.out = presets.size() == 1 || !a.get("output") ? out_path : pipeline::suffixed(out_path, pname);
        if (presets.size() > 1 && !a.get("output")) {
            std::filesystem::path m(*model_path);
            d.out = m.parent_path() / (m.stem().string() + "_" + pname + "_" + comp_name + ".vnnx");
        }
        if (report_path) d.report = presets.size() == 1 ? std::filesystem::path(*report_path) : pipeline::suffixed(*report_path, pname);
        d.c = vectors;
        pipeline::compile_vectors_into(d.c, bytes, model, *model_path, opt);
        progress(fmt::format("[{}] compiled, {} nodes, {} bytes", pname, d.c.result.nodes.size(), d.c.result.bytes.size()));
        if (results.empty() && !d.c.result.cut_report.empty())
            std::fprintf(stderr, "vnnx: note: %s\n", d.c.result.cut_report.c_str());
        results.push_back(std::move(d));
    }
    // Every size compiled: only now is anything written (each file atomically).
    for (const auto& d : results) {
        const report::compile_info info{*model_path, d.out.string(), d.preset};
        write_file_atomic(d.out, d.c.result.bytes);
        if (!d.report.empty()) write_file_atomic(d.report, report::compile_json(d.c.result, info));
        if (verbose) std::fputs(report::compile_table(d.c.result, info).c_str(), stdout);
        std::printf("wrote %s (%zu bytes, %zu nodes, %s)\n", d.out.string().c_str(), d.c.result.bytes.size(),
                    d.c.result.nodes.size(), d.preset.c_str());
        if (calib) std::fputs(pipeline::fit_text(d.c.result.fit, calib->inputs).c_str(), stdout);
    }
    progress("writing");
    if (results.size() > 1) {
        std::vector<std::pair<std::string, const compile_result*>> cols;
        for (const auto& d : results) cols.emplace_back(d.preset, &d.c.result);
        std::fputs(report::sizes_table(cols).c_str(), stdout);
    }
    return 0;
}

}  // namespace compile_detail

inline const command compile_command{
    "compile",
    "compile an int8 TFLite model to a VNNX file (with embedded test vectors)",
    "vnnx compile -t MODEL.tflite -s V250|V500|V1000[,...] [-c ncomp] [-i IN.npy ...] [-o OUT.vnnx]\n"
    "                    [--report REPORT.json] [-v] [--cut auto|none] [--outputs TENSOR,...] [--no-vectors]\n"
    "                    [--sdk-scales] [--calibrate CAL.npy ...] [--requantize-outliers]",
    "Options follow the SDK's vnnx_compile. The file embeds test vectors: the inputs given with -i\n"
    "(.npy in the TFLite layout NHWC and the input's dtype, one per model input; a channels-first\n"
    "array is transposed, as the SDK does) or, without -i, the\n"
    "SDK's pseudo-random input (integers 0..255 cast to the input type, NumPy seed 42), and the\n"
    "outputs the reference interpreter computes for them; both are stored channels first. The\n"
    "reference runs once for all sizes; --no-vectors skips it (the expected outputs are zeros).\n"
    "Several sizes (-s V250,V1000) write one file each, the size appended to the name (OUT_V250.vnnx),\n"
    "and print a table of their sizes side by side.\n"
    "A model that ends in float or int32 post-processing the compiler cannot take (and that leaves\n"
    "no convolution to the host) is cut (--cut auto, the default): the VNNX file holds the integer\n"
    "part, its outputs are the tensors the host part reads, and a note on stderr lists the host's\n"
    "operators and those tensors; --cut none fails instead, --outputs T1,T2 cuts at given tensors.\n"
    "--sdk-scales rounds every scale to six decimals, as the SDK's flow reads the model (JSON\n"
    "text from flatc), so that its records, tables and weights are the SDK's; the default keeps\n"
    "the file's float32 scales, which are TFLite's.\n"
    "--calibrate runs the reference on sample inputs (one per file, or a batch [N, ...] per file;\n"
    "single-input models) and fits each convolution's records to the accumulators it sees: per\n"
    "channel the multiplier (within 2 of the SDK's) and constant that reproduce TFLite's outputs\n"
    "most often, where the SDK's formula is exact only near zero. Use inputs like the real ones.\n"
    "A uint8 CONV_2D whose weights leave int8 around their zero point also reads a second copy\n"
    "of the input channels those weights read (GATHER and CONCATENATION nodes) and splits the\n"
    "weights over the two, which is TFLite's sum exactly; --requantize-outliers requantizes such\n"
    "channels as the SDK does (fewer nodes and MACs, up to tens of LSB off per node).\n"
    "Without -o the output is MODEL_<SIZE>_<COMP>.vnnx beside the model. Nothing is written unless\n"
    "every size compiles. Exit status: 0 success, 1 bad or unsupported model, 2 bad usage.\n\n"
    "example: vnnx compile -t model.tflite -s V1000 -o model.vnnx --report model.json -v",
    {{"tflite", "t", "MODEL.tflite", "the int8 TFLite model"},
     {"size_conf", "s", "SIZE", "V250, V500 or V1000; a comma-separated list compiles several"},
     {"compression-vbx", "c", "COMP", "weight compression: ncomp (the only one supported; default)"},
     {"inputs", "i", "IN.npy", "test inputs to embed, one per model input (TFLite layout)", true},
     {"output", "o", "OUT.vnnx", "the VNNX file to write"},
     {"report", "", "REPORT.json", "also write a JSON report: per node and node type, totals"},
     {"no-vectors", "", "", "skip the reference run: the embedded test outputs are zeros (milliseconds instead of a model run)"},
     {"calibrate", "", "CAL.npy", "fit the conv records to the reference's accumulators on these inputs (TFLite layout)", true},
     {"sdk-scales", "", "", "scales rounded to six decimals as the SDK's flow reads them: the SDK's records exactly"},
     {"requantize-outliers", "", "", "requantize uint8 weight channels that leave int8 (the SDK's form, fewer MACs, less exact)"},
     {"verbose", "v", "", "progress and each pass's time on stderr, the per-node table on stdout"},
     {"cut", "", "MODE", "auto (default): a float/int32 post-processing tail is left to the host; none: compile all or fail"},
     {"outputs", "", "TENSOR", "compile up to these tensors (names or indices, comma-separated); they become the outputs", true}},
    &compile_detail::run_compile,
};

}  // namespace vnnx::cli
