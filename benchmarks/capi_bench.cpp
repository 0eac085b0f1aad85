// One inference through libvbx_cnn_sim.so (vbx_cnn_model_start, then poll) against the same
// inference in process (vnnx::sim::machine: set_input, run, read the output), on the same
// model, input, ISA and thread count, in alternating rounds of one process. Beside them: the
// copy of the io buffers alone (the library copies the inputs in and the outputs out) and the
// library's check that the model's bytes have not changed since its machine was made.
//
//   vnnx_capi_bench [--rounds N] [MODEL.tflite|MODEL.vnnx ...]
//
// Without models: the demo model, and the shared models of VNNX_BENCH_MODELS_DIR present.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <vnnx/capi/vbx_cnn_sim.h>
#include <vnnx/compiler/compile.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/tflite/builder.hpp>

namespace {
using clock_type = std::chrono::steady_clock;
volatile std::size_t sink = 0;  // keeps the timed reads and compares from being optimised away

double us_since(clock_type::time_point t0) {
    return std::chrono::duration<double, std::micro>(clock_type::now() - t0).count();
}

std::vector<std::byte> load(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return {};
    std::vector<std::byte> v(static_cast<std::size_t>(f.tellg()));
    f.seekg(0);
    f.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size()));
    return v;
}

struct row {
    std::string name;
    double inproc = 1e30, inproc2 = 1e30, library = 1e30, io_copy = 1e30, compare = 1e30;
    std::size_t model_bytes = 0, io_bytes = 0;
};

row measure(const std::string& name, const std::vector<std::byte>& vnnx, int rounds) {
    row r;
    r.name = name;
    r.model_bytes = vnnx.size();
    vnnx::sim::run_options opt;
    opt.threads = 1;
    vnnx::sim::machine m(vnnx, name, opt);
    // A second machine of the same model: how far two identical in-process machines differ
    // (where their memory images landed) is the noise floor of the comparison.
    vnnx::sim::machine m2(vnnx, name, opt);
    const auto& view = m.view();

    // Inputs: the embedded test vectors (zeros when the file has none); outputs the library fills.
    std::vector<std::vector<std::byte>> inputs, outputs;
    for (std::size_t i = 0; i < view.num_inputs(); ++i) {
        const auto& io = view.input(i);
        inputs.emplace_back(io.length * vnnx::format::element_size(io.type));
        if (!io.test_vector.empty()) std::memcpy(inputs.back().data(), io.test_vector.data(), inputs.back().size());
        r.io_bytes += inputs.back().size();
    }
    for (std::size_t o = 0; o < view.num_outputs(); ++o) {
        const auto& io = view.output(o);
        outputs.emplace_back(io.length * vnnx::format::element_size(io.type));
        r.io_bytes += outputs.back().size();
    }
    std::vector<std::vector<std::byte>> in_dst, out_src;
    for (auto& b : inputs) in_dst.emplace_back(b.size());
    for (auto& b : outputs) out_src.emplace_back(b.size());
    std::vector<vbx_cnn_io_ptr_t> ptrs;
    for (auto& b : inputs) ptrs.push_back(reinterpret_cast<std::uintptr_t>(b.data()));
    for (auto& b : outputs) ptrs.push_back(reinterpret_cast<std::uintptr_t>(b.data()));

    // The caller's model memory, padded to allocate_bytes as the SDK's programs pad it.
    std::vector<std::byte> model(view.header().allocate_bytes);
    std::memcpy(model.data(), vnnx.data(), vnnx.size());
    std::vector<std::byte> copy_of_model = vnnx;
    vbx_cnn_t* core = vbx_cnn_init(nullptr);  // VNNX_SIM_THREADS / VNNX_SIM_ISA unset: 1 thread, best ISA
    auto* mptr = reinterpret_cast<model_t*>(model.data());

    for (int k = 0; k < rounds; ++k) {
        auto t0 = clock_type::now();
        for (std::size_t i = 0; i < inputs.size(); ++i) m.set_input(i, inputs[i]);
        m.run();
        for (std::size_t o = 0; o < outputs.size(); ++o) sink = sink + m.output(o).size();
        r.inproc = std::min(r.inproc, us_since(t0));

        t0 = clock_type::now();
        for (std::size_t i = 0; i < inputs.size(); ++i) m2.set_input(i, inputs[i]);
        m2.run();
        for (std::size_t o = 0; o < outputs.size(); ++o) sink = sink + m2.output(o).size();
        r.inproc2 = std::min(r.inproc2, us_since(t0));

        t0 = clock_type::now();
        if (vbx_cnn_model_start(core, mptr, ptrs.data()) != 0 || vbx_cnn_model_poll(core) != 0) {
            std::fprintf(stderr, "%s: the library failed: %s\n", name.c_str(), vnnx_sim_error_message(core));
            std::exit(1);
        }
        r.library = std::min(r.library, us_since(t0));

        // The library's own copies: each input into the machine's memory, each output out of it.
        t0 = clock_type::now();
        for (std::size_t i = 0; i < inputs.size(); ++i) std::memcpy(in_dst[i].data(), inputs[i].data(), inputs[i].size());
        for (std::size_t o = 0; o < outputs.size(); ++o) std::memcpy(outputs[o].data(), out_src[o].data(), outputs[o].size());
        r.io_copy = std::min(r.io_copy, us_since(t0));

        t0 = clock_type::now();
        sink = sink + static_cast<std::size_t>(std::memcmp(copy_of_model.data(), model.data(), vnnx.size()) == 0);
        r.compare = std::min(r.compare, us_since(t0));
    }
    vnnx_sim_free(core);
    return r;
}
}  // namespace

int main(int argc, char** argv) {
    int rounds = 200;
    std::vector<std::string> paths;
    for (int a = 1; a < argc; ++a) {
        const std::string s = argv[a];
        if (s == "--rounds" && a + 1 < argc) rounds = std::max(1, std::atoi(argv[++a]));
        else paths.push_back(s);
    }
    if (paths.empty()) {
        for (const char* f : {"coral-test-data__tf2_mobilenet_v2_1.0_224_ptq.tflite", "mlcommons-tiny__vww_96_int8.tflite",
                              "mlcommons-tiny__kws_ref_model.tflite"}) {
            const std::filesystem::path p = std::filesystem::path(VNNX_BENCH_MODELS_DIR) / f;
            if (std::filesystem::exists(p)) paths.push_back(p.string());
        }
    }
    std::vector<row> rows;
    try {
        rows.push_back(measure("demo", vnnx::compile(vnnx::tflite::demo_model(), {}, "demo.tflite").bytes, rounds * 10));
        for (const auto& p : paths) {
            auto bytes = load(p);
            if (bytes.empty()) {
                std::fprintf(stderr, "%s: cannot read\n", p.c_str());
                return 1;
            }
            if (p.size() > 7 && p.substr(p.size() - 7) == ".tflite") bytes = vnnx::compile(bytes, {}, p).bytes;
            rows.push_back(measure(std::filesystem::path(p).stem().string(), bytes, rounds));
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "vnnx_capi_bench: %s\n", e.what());
        return 1;
    }
    std::printf("fastest of %d alternating rounds, one thread, the best ISA\n", rounds);
    std::printf("%-44s %9s %10s %10s %10s %7s %9s %9s %10s\n", "model", "model KiB", "in-proc us", "2nd mach us",
                "library us", "ratio", "extra us", "io copy", "full cmp us");
    for (const auto& r : rows) {
        const double base = std::min(r.inproc, r.inproc2);
        std::printf("%-44s %9.1f %10.1f %10.1f %10.1f %7.3f %9.1f %9.1f %10.1f\n", r.name.c_str(), r.model_bytes / 1024.0,
                    r.inproc, r.inproc2, r.library, r.library / base, r.library - base, r.io_copy, r.compare);
    }
    std::printf("ratio and extra: the library against the faster of the two in-process machines; full cmp: one\n"
                "memcmp of the whole model, what VNNX_SIM_CHECK_MODEL=full adds to every start (and its cache misses)\n");
    return 0;
}
