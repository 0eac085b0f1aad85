#pragma once
// `vnnx infer MODEL.vnnx [-i IN.npy ...] -o OUTDIR [--threads N] [--jobs N] [--isa I] [--layout tflite|vnnx] [--seed N]`:
// runs a VNNX file in the simulator and writes output_0.npy, output_1.npy, ...; inputs holding
// several samples run as a batch, --jobs machines side by side.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cmd_info.hpp"
#include "command.hpp"
#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/sim/batch.hpp"
#include "vnnx/sim/io.hpp"
#include "vnnx/sim/machine.hpp"
#include "vnnx/sim/nodes/batch_matmul.hpp"  // bmm::matrices, for its MACs
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/mapped_file.hpp"
#include "vnnx/support/npy.hpp"

namespace vnnx::cli {

namespace infer_detail {

inline std::uint64_t parse_count(const std::string& text, const char* option, std::uint64_t lo, std::uint64_t hi) {
    std::size_t used = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || text.empty() || text[0] == '-' || v < lo || v > hi)
        usage_error(fmt::format("infer: {} expects an integer in {}..{}, got '{}'", option, lo, hi, text));
    return v;
}

// Multiply-accumulates of a CONV_2D node (0 for other nodes), from its record.
inline std::int64_t conv_macs(const format::vnnx_subgraph_node_t& node) {
    if (node.type != static_cast<std::int32_t>(builtin_operator::CONV_2D)) return 0;
    const auto u = node.options.get<format::node_options::Conv2DOptions>();
    const auto& f = u.filter_shape_dims;
    const std::int64_t kh = f[2], kw = f[3];
    const std::int64_t sh = std::max(1, u.stride_height), sw = std::max(1, u.stride_width);
    const std::int64_t oh = (node.m - (kh - 1) * std::max(1, u.dilation_height_factor) - 1) / sh + 1;
    const std::int64_t ow = (node.n - (kw - 1) * std::max(1, u.dilation_width_factor) - 1) / sw + 1;
    if (oh <= 0 || ow <= 0) return 0;
    const std::int64_t per_output = (u.use_depthwise == 1 ? 1 : node.channels) * kh * kw;
    return std::int64_t{u.kernels} * oh * ow * per_output;
}

// Multiply-accumulates of a node: a CONV_2D's from its record, a BATCH_MATMUL's from its
// tensors (output elements times the contracted length); 0 for other nodes.
inline std::int64_t node_macs(const format::vnnx_subgraph_node_t& node, const std::vector<sim::tensor_ref>& tensors) {
    if (node.type != static_cast<std::int32_t>(builtin_operator::BATCH_MATMUL)) return conv_macs(node);
    if (tensors.size() < 3) return 0;
    const sim::bmm::matrices a(tensors[0]), y(tensors[2]);
    const bool adj_x = node.options.get<format::node_options::BatchMatMulOptions>().adj_x != 0;
    std::int64_t outputs = y.rows * y.cols;
    for (const auto d : y.batch) outputs *= d;
    return outputs * (adj_x ? a.rows : a.cols);
}

// CPU time of the whole process (every simulator thread).
inline double process_cpu_ms() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Runs once to warm up (weights are unpacked and packed on first use), then `runs` more times and
// prints each node's fastest wall time and fastest process CPU time, slowest node (by CPU time)
// first: the minima filter out the time slices a loaded machine takes away, and CPU time is
// not inflated by them at all (with several threads it sums their work).
inline void print_profile(sim::machine& m, const std::string& path, unsigned runs) {
    using clock = std::chrono::steady_clock;
    m.run();
    const auto& v = m.view();
    std::vector<double> ms(v.num_nodes(), 1e300), cpu(v.num_nodes(), 1e300);
    double total = 1e300, total_cpu = 1e300;
    for (unsigned r = 0; r < runs; ++r) {
        auto t0 = clock::now();
        double c0 = process_cpu_ms();
        const auto start = t0;
        const double cpu_start = c0;
        m.run([&](std::size_t k) {
            const auto t1 = clock::now();
            const double c1 = process_cpu_ms();
            ms[k] = std::min(ms[k], std::chrono::duration<double, std::milli>(t1 - t0).count());
            cpu[k] = std::min(cpu[k], c1 - c0);
            t0 = t1;
            c0 = c1;
        });
        total = std::min(total, std::chrono::duration<double, std::milli>(clock::now() - start).count());
        total_cpu = std::min(total_cpu, process_cpu_ms() - cpu_start);
    }
    double sum = 0, sum_cpu = 0;
    for (double t : ms) sum += t;
    for (double t : cpu) sum_cpu += t;
    std::printf("profile of %s: %zu nodes; fastest of %u runs: %.3f ms wall, %.3f ms CPU; sums of per-node minima: "
                "%.3f ms wall, %.3f ms CPU\n",
                path.c_str(), ms.size(), runs, total, total_cpu, sum, sum_cpu);
    total = sum_cpu;
    std::vector<std::size_t> order(ms.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return cpu[x] > cpu[y]; });
    std::printf("%6s %-26s %6s %9s %9s %6s %6s %8s %7s  %s\n", "node", "type (node/first layer)", "layers", "wall ms", "CPU ms", "%", "cum %",
                "MMAC", "GMAC/s", "output (C x H x W)");
    double cum = 0;
    for (std::size_t k : order) {
        cum += cpu[k];
        const auto& node = v.node(k);
        const auto tensors = m.resolve(k);
        // What the node leaves: its last layer's first output, else the node's own first output
        // (an IDENTITY node's own output is only the copy its layers start from).
        std::string shape;
        const auto own_in = static_cast<std::size_t>(std::max(0, node.num_inputs));
        std::size_t at = node.num_outputs > 0 ? own_in : tensors.size();
        std::size_t next = own_in + static_cast<std::size_t>(std::max(0, node.num_outputs));
        for (const auto& layer : v.node_layers(k)) {
            const auto n = static_cast<std::size_t>(std::max(0, layer.num_tensors));
            if (layer.num_outputs > 0 && layer.num_outputs <= layer.num_tensors)
                at = next + n - static_cast<std::size_t>(layer.num_outputs);
            next += n;
        }
        if (at < tensors.size()) {
            const auto& t = tensors[at];
            shape = fmt::format("{} x {} x {}", t.channels(), t.rows(), t.cols());
        }
        const double macs = static_cast<double>(node_macs(node, tensors));
        // GMAC/s of the CPU time: the rate on one core when the simulator runs one thread.
        // The node's VNNX type, and for a node of layers (IDENTITY) what its first layer is.
        std::string kind = info_detail::vnnx_type_name(node.type);
        if (const auto layers = v.node_layers(k); !layers.empty()) kind += "/" + info_detail::vnnx_type_name(layers[0].type);
        std::printf("%6zu %-26s %6zu %9.3f %9.3f %6.2f %6.2f %8.2f %7.2f  %s\n", k, kind.c_str(), v.node_layers(k).size(), ms[k], cpu[k],
                    total > 0 ? 100.0 * cpu[k] / total : 0.0, total > 0 ? 100.0 * cum / total : 0.0, macs / 1e6,
                    cpu[k] > 0 ? macs / 1e6 / cpu[k] : 0.0, shape.c_str());
    }
}

// Writes OUTDIR/output_N.npy atomically, one line each on stdout.
inline void write_outputs(const std::string& out_dir, const std::vector<ndarray>& outs) {
    const std::filesystem::path dir(out_dir);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) fail(error_kind::io, fmt::format("{}: cannot create the output folder: {}", dir.string(), ec.message()));
    for (std::size_t o = 0; o < outs.size(); ++o) {
        const auto file = dir / fmt::format("output_{}.npy", o);
        write_npy(file, outs[o]);
        std::string shape;
        for (std::size_t d = 0; d < outs[o].shape.size(); ++d) shape += fmt::format("{}{}", d ? "x" : "", outs[o].shape[d]);
        std::printf("wrote %s (%s %s)\n", file.string().c_str(), std::string(dtype_name(outs[o].type)).c_str(), shape.c_str());
    }
}

// Inputs holding several samples along a new first axis: they run side by side on `opt.jobs`
// machines (sim::batch_runner), and each output stacks the samples' arrays the same way.
inline int run_batch(std::span<const std::byte> bytes, const std::string& path, const std::vector<std::string>& files,
                     const std::vector<ndarray>& arrays, std::size_t samples, sim::io_layout layout, sim::batch_options opt,
                     const std::string& out_dir) {
    sim::batch_runner br(bytes, path, opt);
    const auto& v = br.view();
    std::vector<std::vector<ndarray>> outs(v.num_outputs(), std::vector<ndarray>(samples));
    const auto start = std::chrono::steady_clock::now();
    br.run(
        samples,
        [&](sim::machine& m, std::size_t s) {
            for (std::size_t i = 0; i < arrays.size(); ++i)
                m.set_input(i, sim::io_bytes(v.input(i), sim::sample_of(arrays[i], s), layout,
                                             fmt::format("{} (sample {} of input {} of {})", files[i], s, i, path)));
        },
        [&](sim::machine& m, std::size_t s) {
            for (std::size_t o = 0; o < outs.size(); ++o)
                outs[o][s] = sim::io_array(v.output(o), m.output(o), layout, fmt::format("{}: output {}", path, o));
        });
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    std::printf("ran %zu samples on %u job(s) in %.1f ms (%.1f samples/s)\n", samples, br.jobs(), ms,
                ms > 0 ? 1e3 * static_cast<double>(samples) / ms : 0.0);
    std::vector<ndarray> stacked;
    for (const auto& parts : outs) stacked.push_back(sim::stack_samples(parts));
    write_outputs(out_dir, stacked);
    return 0;
}

inline int run_infer(const parsed_args& a) {
    if (a.positional().size() != 1) usage_error("infer: expects exactly one MODEL.vnnx; see 'vnnx infer --help'");
    const auto out_dir = a.get("output");
    if (!out_dir) usage_error("infer: -o OUTDIR is required; see 'vnnx infer --help'");
    sim::run_options ro;
    if (auto t = a.get("threads")) ro.threads = static_cast<unsigned>(parse_count(*t, "--threads", 1, 256));
    if (auto i = a.get("isa")) ro.isa = sim::isa_from_name(*i);
    sim::io_layout layout = sim::io_layout::tflite;
    if (auto l = a.get("layout")) {
        if (*l == "vnnx") layout = sim::io_layout::vnnx;
        else if (*l != "tflite") usage_error(fmt::format("infer: --layout expects tflite or vnnx, got '{}'", *l));
    }
    const auto files = a.all("inputs");
    const auto seed = a.get("seed");
    if (seed && !files.empty()) usage_error("infer: choose one of -i and --seed");

    const std::string path = a.positional()[0];
    const mapped_file file(path);  // the machine copies it into its memory: no read buffer
    const auto bytes = file.bytes();
    const format::model_view v(bytes, path);
    if (!files.empty() && files.size() != v.num_inputs())
        usage_error(fmt::format("infer: {} has {} input(s), {} .npy file(s) were given", path, v.num_inputs(), files.size()));
    std::vector<ndarray> arrays;
    std::size_t samples = 1;
    for (std::size_t i = 0; i < files.size(); ++i) {
        arrays.push_back(read_npy(files[i]));
        const std::size_t n = sim::io_samples(v.input(i), arrays[i], layout);
        // Not a shape of this input: io_bytes names what the model expects.
        if (n == 0) (void)sim::io_bytes(v.input(i), arrays[i], layout, fmt::format("{} (input {} of {})", files[i], i, path));
        if (i == 0) samples = n;
        else if (n != samples)
            fail_input(fmt::format("{} (input {} of {}): holds {} sample(s), {} (input 0) holds {}", files[i], i, path, n,
                                   files[0], samples));
    }
    const unsigned jobs = a.get("jobs") ? static_cast<unsigned>(parse_count(*a.get("jobs"), "--jobs", 1, 256)) : 1;
    if (samples > 1) {
        if (a.has("profile") || a.has("verbose"))
            usage_error(fmt::format("infer: --profile and -v run one sample; the inputs hold {}", samples));
        return run_batch(bytes, path, files, arrays, samples, layout, {ro.isa, std::min<unsigned>(jobs, static_cast<unsigned>(samples)), ro.threads},
                         *out_dir);
    }
    sim::machine m(bytes, path, ro);
    const bool embedded = files.empty() && !seed && v.header().include_io_data != 0;
    // No file, no seed and no embedded vector: the SDK's default input (seed 42).
    const auto seed_value = seed ? static_cast<std::uint32_t>(parse_count(*seed, "--seed", 0, 0xFFFFFFFFu))
                                 : sim::default_input_seed;
    for (std::size_t i = 0; i < v.num_inputs(); ++i) {
        const auto& io = v.input(i);
        if (!files.empty()) {
            m.set_input(i, sim::io_bytes(io, arrays[i], layout, fmt::format("{} (input {} of {})", files[i], i, path)));
        } else if (embedded) {
            m.set_input(i, io.test_vector);
        } else {
            // Drawn in the TFLite layout and seeded per input, as vnnx compile (and the SDK) does.
            std::mt19937 gen(seed_value);
            const ndarray arr = sim::random_array(gen, sim::io_dtype(io.type), sim::io_shape(io, sim::io_layout::tflite));
            m.set_input(i, sim::io_bytes(io, arr, sim::io_layout::tflite, fmt::format("{}: input {}", path, i)));
        }
    }
    if (a.has("profile")) {
        print_profile(m, path, 5);
    } else if (a.has("verbose")) {
        // Per-node progress on stderr: on a big model the user sees where the time goes.
        using clock = std::chrono::steady_clock;
        const auto start = clock::now();
        auto last = start;
        const std::size_t n = v.num_nodes();
        m.run([&](std::size_t k) {
            const auto now = clock::now();
            std::fprintf(stderr, "vnnx infer: node %zu/%zu %s: %.1f ms\n", k + 1, n,
                         info_detail::vnnx_type_name(v.node(k).type).c_str(),
                         std::chrono::duration<double, std::milli>(now - last).count());
            last = now;
        });
        std::fprintf(stderr, "vnnx infer: %zu nodes in %.1f ms\n", n,
                     std::chrono::duration<double, std::milli>(clock::now() - start).count());
    } else {
        m.run();
    }
    std::vector<ndarray> outs;
    for (std::size_t o = 0; o < v.num_outputs(); ++o)
        outs.push_back(sim::io_array(v.output(o), m.output(o), layout, fmt::format("{}: output {}", path, o)));
    write_outputs(*out_dir, outs);
    return 0;
}

}  // namespace infer_detail

inline const command infer_command{
    "infer",
    "run a VNNX file in the simulator and write its outputs as .npy",
    "vnnx infer MODEL.vnnx [-i IN.npy ...] -o OUTDIR [--threads N] [--jobs N] [--isa scalar|avx2|avx512|vbmi|amx]\n"
    "                  [--layout tflite|vnnx] [--seed N] [--profile] [-v]",
    "Inputs: the .npy files given with -i (one per model input, the input's dtype), else the test\n"
    "input embedded in the file, else (or with --seed N) a pseudo-random input: integers 0..255 cast\n"
    "to the input type, drawn as the SDK's NumPy generator with that seed (default 42).\n"
    "Arrays are in the TFLite layout (channels last, NHWC) unless --layout vnnx (channels first).\n"
    "Outputs are written atomically to OUTDIR/output_0.npy, output_1.npy, ... in the dtype of the\n"
    "VNNX tensor: an int64 output of the TFLite model (ARG_MAX indices) is int32 in VNNX, same values.\n"
    "A batch: arrays holding N samples along a new first axis (N x H x W x C for a 1 x H x W x C input)\n"
    "run sample by sample, --jobs of them at once, and each output stacks the N results the same way.\n\n"
    "example: vnnx infer model.vnnx -i image.npy -o out/\n"
    "         vnnx infer model.vnnx -i images_16x224x224x3.npy -o out/ --jobs 2",
    {{"inputs", "i", "IN.npy", "input arrays, one per model input", true},
     {"output", "o", "OUTDIR", "folder for output_N.npy (created if missing)"},
     {"threads", "", "N", "simulator threads per inference (default 1)"},
     {"jobs", "", "N", "with a batch: inferences run at once, one machine each (default 1)"},
     {"isa", "", "ISA", "scalar, avx2, avx512, vbmi or amx (default: the best this CPU runs)"},
     {"layout", "", "LAYOUT", "tflite (NHWC, default) or vnnx (channels first)"},
     {"seed", "", "N", "use a pseudo-random input with this seed instead of the embedded one"},
     {"verbose", "v", "", "each node's progress and time on stderr"},
     {"profile", "", "", "run 6 times; print each node's fastest wall and CPU time, slowest first"}},
    &infer_detail::run_infer,
};

}  // namespace vnnx::cli
