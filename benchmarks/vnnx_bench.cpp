// vnnx_bench: the single-core int8 VNNI peak (a vpdpbusd microkernel) and the simulator's conv
// kernels in GMAC/s on typical layer shapes, per ISA and thread count.
//   vnnx_bench [--json FILE] [--threads N] [--quick]
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/conv.hpp>
#include <vnnx/sim/thread_pool.hpp>
#include <vnnx/support/atomic_file.hpp>

namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;
using clock_type = std::chrono::steady_clock;

namespace {

#if VNNX_SIM_X86
// 16 independent vpdpbusd chains: throughput-bound, not latency-bound.
VNNX_TARGET_AVX512 std::int64_t vnni_peak_loop(const std::uint8_t* a, const std::int8_t* b, std::int64_t iters) {
    __m512i acc[16];
    for (auto& v : acc) v = _mm512_setzero_si512();
    const __m512i x = _mm512_loadu_si512(a);
    const __m512i w = _mm512_loadu_si512(b);
    for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
        for (auto& v : acc) v = _mm512_dpbusd_epi32(v, x, w);
    }
    __m512i s = acc[0];
    for (int i = 1; i < 16; ++i) s = _mm512_add_epi32(s, acc[i]);
    return _mm512_reduce_add_epi32(s);
}
#endif

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

double vnni_peak_gmacs() {
#if VNNX_SIM_X86
    if (!vnnx::sim::isa_supported(isa_kind::avx512_vnni)) return 0;
    alignas(64) std::uint8_t a[64];
    alignas(64) std::int8_t b[64];
    for (int i = 0; i < 64; ++i) a[i] = static_cast<std::uint8_t>(i), b[i] = static_cast<std::int8_t>(i - 32);
    const std::int64_t iters = 20'000'000;
    double best = 1e30;
    volatile std::int64_t sink = 0;
    for (int r = 0; r < 3; ++r) {
        const auto t0 = clock_type::now();
        sink = sink + vnni_peak_loop(a, b, iters);
        best = std::min(best, seconds_since(t0));
    }
    return static_cast<double>(iters) * 16 * 64 / best / 1e9;
#else
    return 0;
#endif
}

struct layer {
    const char* name;
    k::conv_shape shape;
};

std::vector<layer> layers() {
    std::vector<layer> out;
    k::conv_shape s;
    s.channels = 24, s.height = s.width = 56, s.kernels = 144;  // MobileNetV2 block 3 expand
    out.push_back({"mnv2_1x1_expand_56x56_24to144", s});
    s = {};
    s.channels = s.kernels = s.groups = 144, s.height = s.width = 58, s.kernel_h = s.kernel_w = 3;
    out.push_back({"mnv2_dw3x3_56x56_144", s});
    s = {};
    s.channels = 144, s.height = s.width = 28, s.kernels = 32;  // project
    out.push_back({"mnv2_1x1_project_28x28_144to32", s});
    s = {};
    s.channels = 64, s.height = s.width = 162, s.kernels = 64, s.kernel_h = s.kernel_w = 3;  // YOLOv8n P2 3x3
    out.push_back({"yolo_3x3_160x160_64to64", s});
    s = {};
    s.channels = 64, s.height = s.width = 161, s.kernels = 128, s.kernel_h = s.kernel_w = 3, s.stride_h = s.stride_w = 2;
    out.push_back({"yolo_3x3s2_160to80_64to128", s});
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    std::string json_path;
    unsigned max_threads = 2;
    bool quick = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) json_path = argv[++i];
        else if (a == "--threads" && i + 1 < argc) max_threads = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--quick") quick = true;
        else {
            std::fprintf(stderr, "usage: vnnx_bench [--json FILE] [--threads N] [--quick]\n");
            return 2;
        }
    }
    const double peak = vnni_peak_gmacs();
    std::printf("vpdpbusd single-core peak: %.1f GMAC/s\n\n", peak);
    std::printf("%-34s %-7s %7s %10s %9s %8s\n", "layer", "isa", "threads", "MMAC", "ms", "GMAC/s");
    std::string json = "{\n  \"vnni_peak_gmacs\": " + std::to_string(peak) + ",\n  \"results\": [";
    bool first = true;
    std::mt19937 rng(1);
    for (const auto& l : layers()) {
        std::vector<std::uint8_t> x(l.shape.input_size());
        std::vector<std::int8_t> w(l.shape.weight_size());
        for (auto& b : x) b = static_cast<std::uint8_t>(rng());
        for (auto& b : w) b = static_cast<std::int8_t>(rng());
        k::requant_params rq;
        rq.multiplier.assign(l.shape.kernels, 300);
        rq.shift.assign(l.shape.kernels, 24);
        rq.constant.assign(l.shape.kernels, 1 << 23);
        std::vector<std::uint8_t> y(l.shape.output_size());
        for (isa_kind i : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni}) {
            if (!vnnx::sim::isa_supported(i)) continue;
            const k::conv2d conv(l.shape, w, rq, i, l.name);
            k::conv_workspace ws;
            for (unsigned t = 1; t <= max_threads; ++t) {
                if (i == isa_kind::scalar && (t > 1 || quick)) continue;
                vnnx::sim::thread_pool pool(t);
                conv.run(x, y, ws, &pool);  // warm-up: grows the workspace, touches memory
                const int reps = i == isa_kind::scalar ? 1 : (quick ? 3 : 10);
                double best = 1e30;
                for (int r = 0; r < reps; ++r) {
                    const auto t0 = clock_type::now();
                    conv.run(x, y, ws, &pool);
                    best = std::min(best, seconds_since(t0));
                }
                const double mmac = static_cast<double>(conv.macs()) / 1e6;
                const double gmacs = mmac / 1e3 / best;
                std::printf("%-34s %-7s %7u %10.1f %9.3f %8.1f\n", l.name, std::string(vnnx::sim::isa_name(i)).c_str(), t,
                            mmac, best * 1e3, gmacs);
                json += std::string(first ? "\n" : ",\n") + "    {\"layer\": \"" + l.name + "\", \"isa\": \"" +
                        std::string(vnnx::sim::isa_name(i)) + "\", \"threads\": " + std::to_string(t) +
                        ", \"mmac\": " + std::to_string(mmac) + ", \"ms\": " + std::to_string(best * 1e3) +
                        ", \"gmacs\": " + std::to_string(gmacs) + "}";
                first = false;
            }
        }
    }
    json += "\n  ]\n}\n";
    if (!json_path.empty()) vnnx::write_file_atomic(json_path, json);
    return 0;
}
