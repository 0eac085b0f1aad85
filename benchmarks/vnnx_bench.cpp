// vnnx_bench: in one run, the single-core int8 peak (a vpdpbusd microkernel; on CPUs without
// AVX-512 VNNI a vpmaddubsw+vpmaddwd one), then per model
// the compile time (file to file) and peak memory of the compiler and the simulator, and the
// simulator's time and GMAC/s as a fraction of that peak per ISA and thread count, beside what
// as many independent one-thread copies reach together on this host and what moving data
// between two cores costs on it then (probe_cross_core); then each model's throughput on a batch
// of inputs run side by side (run_batches). Prints tables and writes JSON.
//   vnnx_bench [--models DIR] [--json FILE] [--threads N] [--quick] [--layers]
//   vnnx_bench --write-yolo SIZE FILE.tflite   (writes the YOLOv8n-shaped model and stops;
//                                               --write-yolo-decoded: with the decoding head,
//                                               --write-yolo11: YOLO11-shaped, C2PSA and the head)
// Models: MobileNetV2-224 and DeepLabV3 from DIR (skipped with a note when absent or when they do
// not compile) and the builder-made YOLOv8n-shaped model at 640x640. --layers adds the conv
// kernel microbenchmarks on typical layer shapes.
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <vnnx/compiler/compile.hpp>
#include <vnnx/format/model_view.hpp>
#include <vnnx/ref/interpreter.hpp>
#include <vnnx/sim/isa.hpp>
#include <vnnx/sim/kernels/conv.hpp>
#include <vnnx/sim/batch.hpp>
#include <vnnx/sim/io.hpp>
#include <vnnx/sim/machine.hpp>
#include <vnnx/sim/thread_pool.hpp>
#include <vnnx/support/atomic_file.hpp>
#include <vnnx/tflite/yolo_model.hpp>

#include "chain_model.hpp"

namespace k = vnnx::sim::kernels;
namespace fs = std::filesystem;
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

// The AVX2 int8 dot-product rate, for hosts without VNNI: vpmaddubsw (32 u8 x s8 products
// summed in pairs) then vpmaddwd by ones and vpaddd, one triple per 32 MACs, 8 independent
// chains. The inputs are reloaded every iteration (the empty asm clobbers memory) so that no
// product is hoisted out of the loop. vpmaddubsw saturates, so the simulator cannot use it
// as is: this rate is an upper bound for exact AVX2 kernels, not one they can reach.
VNNX_TARGET_AVX2 std::int64_t avx2_peak_loop(const std::uint8_t* a, const std::int8_t* b, std::int64_t iters) {
    __m256i acc[8];
    for (auto& v : acc) v = _mm256_setzero_si256();
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    const __m256i ones = _mm256_set1_epi16(1);
    for (std::int64_t i = 0; i < iters; ++i) {
        asm volatile("" ::: "memory");
#pragma GCC unroll 8
        for (int c = 0; c < 8; ++c) {
            const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32 * c));
            acc[c] = _mm256_add_epi32(acc[c], _mm256_madd_epi16(_mm256_maddubs_epi16(x, w), ones));
        }
    }
    __m256i s = acc[0];
    for (int i = 1; i < 8; ++i) s = _mm256_add_epi32(s, acc[i]);
    alignas(32) std::int32_t lanes[8];
    _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), s);
    std::int64_t total = 0;
    for (std::int32_t v : lanes) total += v;
    return total;
}
#endif

double seconds_since(clock_type::time_point t0) {
    return std::chrono::duration<double>(clock_type::now() - t0).count();
}

// CPU time of this process (all threads) or of the calling thread.
double cpu_seconds(clockid_t id = CLOCK_PROCESS_CPUTIME_ID) {
    timespec ts{};
    clock_gettime(id, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The single-core int8 peak the simulator is measured against: the VNNI microkernel where the
// CPU has AVX-512 VNNI, else the AVX2 one (see avx2_peak_loop), else none (0).
enum class peak_kind { none, vnni, avx2 };

peak_kind host_peak() {
#if VNNX_SIM_X86
    if (vnnx::sim::isa_supported(isa_kind::avx512_vnni)) return peak_kind::vnni;
    if (vnnx::sim::isa_supported(isa_kind::avx2)) return peak_kind::avx2;
#endif
    return peak_kind::none;
}

const char* peak_name(peak_kind k) {
    return k == peak_kind::vnni ? "vpdpbusd zmm" : k == peak_kind::avx2 ? "vpmaddubsw+vpmaddwd ymm" : "none";
}

// kind: host_peak(), or peak_kind::avx2 for the AVX2 rate on a VNNI host.
double int8_peak_gmacs(int reps = 300, peak_kind kind = host_peak()) {
#if VNNX_SIM_X86
    if (kind == peak_kind::none) return 0;
    const bool vnni = kind == peak_kind::vnni;
    alignas(64) std::uint8_t a[256];
    alignas(64) std::int8_t b[64];
    for (int i = 0; i < 256; ++i) a[i] = static_cast<std::uint8_t>(i);
    for (int i = 0; i < 64; ++i) b[i] = static_cast<std::int8_t>(i - 32);
    // Many short repetitions timed by the wall clock: on a loaded machine some of them run
    // without losing their time slice, and the fastest of those is the hardware's rate.
    const std::int64_t iters = vnni ? 200'000 : 400'000;
    const double macs = static_cast<double>(iters) * (vnni ? 16 * 64 : 8 * 32);
    double best = 1e30;
    volatile std::int64_t sink = 0;
    for (int r = 0; r < reps; ++r) {
        const auto t0 = clock_type::now();
        sink = sink + (vnni ? vnni_peak_loop(a, b, iters) : avx2_peak_loop(a, b, iters));
        best = std::min(best, seconds_since(t0));
    }
    return macs / best / 1e9;
#else
    (void)reps, (void)kind;
    return 0;
#endif
}

std::string read_text(const char* path) {
    std::ifstream f(path);
    std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
    return s;
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}

std::string json_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (static_cast<unsigned char>(c) < 0x20) c = ' ';
        out += c;
    }
    return out;
}

// ---- child processes: peak RSS is the child's own (wait4), the parent stays small ------------
struct child_result {
    bool ok = false;
    double seconds = 0;      // as the child measured it
    double cpu_seconds = 0;  // user + system time of the child (what a loaded machine does not inflate)
    double max_rss_mib = 0;  // ru_maxrss of the child
    std::string message;     // the error when not ok, else what f returned
};

// Runs f() in a forked child; f returns a short text for the parent and throws on error. The parent's resident pages at
// the fork count in the child's ru_maxrss, so children are forked before the parent loads models.
template <class F>
child_result in_child(F&& f) {
    int fd[2];
    if (pipe(fd) != 0) {
        child_result r;
        r.message = "pipe failed";
        return r;
    }
    const pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        std::string out;
        bool ok = true;
        const auto t0 = clock_type::now();
        try {
            const std::string payload = f();
            out = "ok " + std::to_string(seconds_since(t0)) + " " + payload;
        } catch (const std::exception& e) {
            out = std::string("error ") + e.what();
            ok = false;
        }
        [[maybe_unused]] auto n = write(fd[1], out.data(), out.size());
        close(fd[1]);
        _exit(ok ? 0 : 1);
    }
    close(fd[1]);
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = read(fd[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    close(fd[0]);
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    child_result r;
    r.max_rss_mib = static_cast<double>(ru.ru_maxrss) / 1024.0;
    r.cpu_seconds = static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                    static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
    if (text.rfind("ok ", 0) == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        r.ok = true;
        std::size_t used = 0;
        r.seconds = std::stod(text.substr(3), &used);
        r.message = text.size() > 4 + used ? text.substr(4 + used) : "";
    } else {
        r.message = text.rfind("error ", 0) == 0 ? text.substr(6) : "child failed (status " + std::to_string(status) + ")";
    }
    return r;
}

// The inputs of every timed run: the same pseudo-random bytes for every ISA and thread count.
void set_timing_inputs(vnnx::sim::machine& mach) {
    std::mt19937 rng(7);
    for (std::size_t i = 0; i < mach.view().num_inputs(); ++i) {
        const auto& io = mach.view().input(i);
        std::vector<std::byte> in(io.length * vnnx::format::element_size(io.type));
        for (auto& b : in) b = static_cast<std::byte>(rng());
        mach.set_input(i, in);
    }
}

// The CPUs this process may run on (its affinity mask), lowest first.
std::vector<int> allowed_cpus() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    std::vector<int> cpus;
    if (sched_getaffinity(0, sizeof allowed, &allowed) == 0)
        for (int c = 0; c < CPU_SETSIZE; ++c)
            if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
    return cpus;
}

// ---- the host's own scaling: independent one-thread copies side by side ---------------------
// On a shared host, two processes that share nothing but the machine can slow each other down
// (neighbours' load, the shared L3 and memory, clocks), so a two-thread speedup below 2x is not
// by itself the simulator's doing. side_by_side forks `copies` children, each pinned to its own
// CPU with a one-thread machine of the model; together() has all of them run it twice at once.
// The rounds below call it after each round of thread counts, so sum_i(t1 / fastest_i), t1 the
// rounds' fastest one-thread run, is measured in the same minutes as the speedup: what a
// multi-threaded run of the same work could reach on this host then.
class side_by_side {
public:
    side_by_side(const std::vector<std::byte>& bytes, const std::string& name, isa_kind isa, unsigned copies) {
        const std::vector<int> cpus = allowed_cpus();
        if (cpus.size() < copies) {
            message_ = "fewer CPUs than copies";
            return;
        }
        for (unsigned i = 0; i < copies; ++i) {
            int cmd[2], reply[2];
            if (pipe(cmd) != 0) break;
            if (pipe(reply) != 0) {
                close(cmd[0]), close(cmd[1]);
                break;
            }
            const pid_t pid = fork();
            if (pid < 0) {
                close(cmd[0]), close(cmd[1]), close(reply[0]), close(reply[1]);
                break;
            }
            if (pid == 0) {
                close(cmd[1]), close(reply[0]);
                for (const auto& k : kids_) close(k.cmd), close(k.reply);
                child_main(bytes, name, isa, cpus[i], cmd[0], reply[1]);
            }
            close(cmd[0]), close(reply[1]);
            kids_.push_back({pid, cmd[1], reply[0]});
        }
        ok_ = kids_.size() == copies;
        if (!ok_) message_ = "fork failed";
        for (const auto& k : kids_) ok_ = await(k) && ok_;
    }
    side_by_side(const side_by_side&) = delete;
    side_by_side& operator=(const side_by_side&) = delete;
    ~side_by_side() { (void)finish(); }

    /// All copies run the model twice at once; returns the seconds that took. Once a copy has
    /// failed nothing runs: a reply is awaited only from a child that was sent a command, since
    /// a healthy child sends nothing unasked and waiting for it would hang.
    double together() {
        const auto t0 = clock_type::now();
        if (!ok_) return 0;
        const char t = 't';
        std::vector<bool> sent;
        for (const auto& k : kids_) sent.push_back(write(k.cmd, &t, 1) == 1);
        for (std::size_t i = 0; i < kids_.size(); ++i) ok_ = sent[i] && await(kids_[i]) && ok_;
        return seconds_since(t0);
    }

    /// Ends the children; each one's fastest run in seconds (empty if any failed, see message()).
    std::vector<double> finish() {
        std::vector<double> fastest;
        for (const auto& k : kids_) close(k.cmd);
        for (const auto& k : kids_) {
            std::string text;
            char buf[256];
            for (ssize_t n; (n = read(k.reply, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
            close(k.reply);
            int status = 0;
            waitpid(k.pid, &status, 0);
            const auto at = text.find("ok ");
            if (at != std::string::npos) {
                fastest.push_back(std::stod(text.substr(at + 3)));
            } else {
                ok_ = false;
                const auto e = text.find("error ");
                if (message_.empty()) message_ = e == std::string::npos ? "a copy failed" : text.substr(e + 6);
            }
        }
        kids_.clear();
        if (!ok_) fastest.clear();
        return fastest;
    }
    [[nodiscard]] const std::string& message() const { return message_; }

private:
    struct child {
        pid_t pid = -1;
        int cmd = -1, reply = -1;  // the parent's ends
    };

    // One byte back per step ('w' warm, 't' done); 'e' (or end of file) when the child failed.
    static bool await(const child& k) {
        char c = 0;
        return read(k.reply, &c, 1) == 1 && c != 'e';
    }

    // Commands: 't' run twice; end of file: report "ok FASTEST" or "error WHY" and exit.
    [[noreturn]] static void child_main(const std::vector<std::byte>& bytes, const std::string& name, isa_kind isa,
                                        int cpu, int cmd, int reply) {
        std::string text;
        try {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            sched_setaffinity(0, sizeof one, &one);
            vnnx::sim::machine mach(bytes, name, vnnx::sim::run_options{isa, 1});
            set_timing_inputs(mach);
            mach.run();  // warm-up, as in the rounds
            double best = 1e30;
            char c = 'w';
            [[maybe_unused]] auto w = write(reply, &c, 1);
            while (read(cmd, &c, 1) == 1) {
                for (int rep = 0; rep < 2; ++rep) {
                    const auto t0 = clock_type::now();
                    mach.run();
                    best = std::min(best, seconds_since(t0));
                }
                w = write(reply, &c, 1);
            }
            text = "ok " + std::to_string(best);
        } catch (const std::exception& e) {
            text = std::string("error ") + e.what();
        }
        const char end = 'e';
        [[maybe_unused]] auto w = write(reply, &end, 1);
        w = write(reply, text.data(), text.size());
        _exit(0);
    }

    std::vector<child> kids_;
    bool ok_ = false;
    std::string message_;
};

// ---- the host's cross-core costs ------------------------------------------------------------
// A multi-threaded run hands data from core to core: a layer reads what the other thread wrote
// in the layer before (a convolution needs every input channel at its pixels, so no split of
// channel-first tensors keeps that local). What that costs is a property of the host, and on
// virtual machines it changes with where the vCPUs are placed. Measured on two threads pinned
// to two CPUs of this process: the round trip of one cache line between them, and the rate
// at which each reads 256 KiB the other has just written while the other does the same (the
// median of 40 rounds), beside the rate for 256 KiB neither changes.
struct cross_core {
    bool ok = false;
    double round_trip_ns = 0, fresh_gbs = 0, unchanged_gbs = 0;
    [[nodiscard]] std::string text() const {
        if (!ok) return "not measured (fewer than two CPUs, or two threads that could not run at once)";
        char b[160];
        std::snprintf(b, sizeof b, "line round trip %.0f ns; another core's fresh lines %.1f GB/s, unchanged ones %.1f GB/s",
                      round_trip_ns, fresh_gbs, unchanged_gbs);
        return b;
    }
    [[nodiscard]] std::string json() const {
        if (!ok) return "null";
        return "{\"round_trip_ns\": " + std::to_string(round_trip_ns) + ", \"fresh_gbs\": " + std::to_string(fresh_gbs) +
               ", \"unchanged_gbs\": " + std::to_string(unchanged_gbs) + "}";
    }
};

cross_core probe_cross_core() {
    cross_core r;
    const std::vector<int> cpus = allowed_cpus();
    if (cpus.size() < 2) return r;
    constexpr std::size_t half = 256 * 1024;
    constexpr int pings = 20000, rounds = 40;
    std::vector<std::uint64_t> fresh(2 * half / 8), unchanged(half / 8, 1);
    alignas(64) std::atomic<int> ping{0};
    alignas(64) std::atomic<int> arrived{0};
    std::atomic<bool> gave_up{false};
    std::atomic<std::uint64_t> sink{0};
    std::vector<double> fresh_s[2], unchanged_s[2];  // per thread, seconds per read
    double ping_s = 0;
    // Spins until ready() or, after 2 s in all (two threads that cannot run at once: a CPU
    // quota below the CPUs visible), gives up for both threads.
    const auto deadline = clock_type::now() + std::chrono::seconds(2);
    auto spin = [&](auto ready) {
        for (unsigned i = 1; !ready(); ++i) {
            if (gave_up.load(std::memory_order_relaxed)) return false;
            if (i % 1024 == 0 && clock_type::now() > deadline) {
                gave_up.store(true);
                return false;
            }
        }
        return true;
    };
    auto barrier = [&](int& phase) {
        phase += 2;
        arrived.fetch_add(1);
        return spin([&] { return arrived.load() >= phase; });
    };
    auto body = [&](int t) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[static_cast<std::size_t>(t)], &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        int phase = 0;
        if (!barrier(phase)) return;
        const auto t0 = clock_type::now();
        for (int i = 0; i < pings; ++i) {
            if (t == 0) {
                ping.store(2 * i + 1, std::memory_order_release);
                if (!spin([&] { return ping.load(std::memory_order_acquire) == 2 * i + 2; })) return;
            } else {
                if (!spin([&] { return ping.load(std::memory_order_acquire) == 2 * i + 1; })) return;
                ping.store(2 * i + 2, std::memory_order_release);
            }
        }
        if (t == 0) ping_s = seconds_since(t0);
        // The sums reach `sink` once, after the timed reads: a shared line updated inside them
        // would add a cross-core transfer to every one.
        std::uint64_t sum = 0;
        auto read_all = [&](const std::uint64_t* p, std::size_t words) {
            for (std::size_t i = 0; i < words; i += 8) sum += p[i];  // one word per line pulls the line
        };
        std::uint64_t* own = fresh.data() + static_cast<std::size_t>(t) * half / 8;
        const std::uint64_t* other = fresh.data() + static_cast<std::size_t>(1 - t) * half / 8;
        for (int round = 0; round < 2 * rounds; ++round) {
            const bool fresh_round = round % 2 == 0;
            if (fresh_round) std::fill(own, own + half / 8, static_cast<std::uint64_t>(round));
            if (!barrier(phase)) return;
            const auto r0 = clock_type::now();
            if (fresh_round) read_all(other, half / 8);
            else read_all(unchanged.data(), half / 8);
            const double s = seconds_since(r0);
            if (round >= 2) (fresh_round ? fresh_s : unchanged_s)[t].push_back(s);
            if (!barrier(phase)) return;
        }
        sink.fetch_add(sum, std::memory_order_relaxed);
    };
    std::thread a(body, 0), b(body, 1);
    a.join();
    b.join();
    if (gave_up.load()) return r;
    auto median_gbs = [&](const std::vector<double> (&per_thread)[2]) {
        std::vector<double> v(per_thread[0]);
        v.insert(v.end(), per_thread[1].begin(), per_thread[1].end());
        std::sort(v.begin(), v.end());
        return v.empty() ? 0.0 : static_cast<double>(half) / v[v.size() / 2] / 1e9;
    };
    r.ok = true;
    r.round_trip_ns = ping_s / pings * 1e9;
    r.fresh_gbs = median_gbs(fresh_s);
    r.unchanged_gbs = median_gbs(unchanged_s);
    return r;
}

double self_rss_mib() {
    long pages = 0, resident = 0;
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    if (f) {
        if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
        std::fclose(f);
    }
    return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

struct model_entry {
    std::string name;
    fs::path tflite, vnnx;
    bool ok = false;
    std::string note;
    double file_mib = 0;
    double compile_ms = 0, compile_rss_mib = 0;  // file to file, best of several
    double read_compile_ms = 0;                    // of that run: without the write (which fsyncs)
    double compile_cpu_ms = 0;                     // CPU time (user + system), best of several
    double sim_rss_mib = 0, allocate_mib = 0;
    double ref_ms = 0;  // the reference interpreter (the compiler's test vectors), best of 2
    double ref_conv_ms = 0, ref_conv_macs = 0;  // its convolutions alone (CONV_2D, DEPTHWISE, FC)
    std::int64_t macs = 0;
};

vnnx::compile_options compile_opts() {
    vnnx::compile_options o;
    o.preset = vnnx::format::preset::V1000;
    return o;
}

// ---- compiler cost against model size --------------------------------------------------------
// Chains of 4 to 64 identical blocks (chain_model.hpp): file size, operators and weights all
// grow with the block count, the layer shapes stay the same. A compiler whose cost is linear in
// the model's size compiles them in a + b * blocks; a pass that is quadratic in the operator
// count shows as a per-block cost that grows with the chain.
struct scaling_row {
    int blocks = 0;
    double file_mib = 0, compile_ms = 1e30, compile_cpu_ms = 1e30, rss_mib = 0;
    std::string note;
};

struct line_fit {
    double intercept = 0, slope = 0, max_residual = 0;  // max |residual| / measured, over the rows
};

line_fit fit_line(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (std::size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
    line_fit f;
    const double d = n * sxx - sx * sx;
    if (x.size() < 2 || d == 0) return f;
    f.slope = (n * sxy - sx * sy) / d;
    f.intercept = (sy - f.slope * sx) / n;
    for (std::size_t i = 0; i < x.size(); ++i)
        f.max_residual = std::max(f.max_residual, std::abs(y[i] - (f.intercept + f.slope * x[i])) / y[i]);
    return f;
}

// Measured while the parent has loaded nothing yet (as the models' compiles): a child forked
// from a parent whose heap holds freed pages it touched would place a small model's blob there
// and copy those pages on first write (a fault per 4 KiB page) instead of taking fresh huge pages.
std::vector<scaling_row> measure_compiler_scaling(const fs::path& tmp, bool quick) {
    const std::vector<int> counts = quick ? std::vector<int>{4, 16, 64} : std::vector<int>{4, 8, 16, 32, 64};
    std::vector<scaling_row> rows;
    for (const int n : counts) {
        scaling_row r;
        r.blocks = n;
        const fs::path tfl = tmp / ("chain_" + std::to_string(n) + ".tflite"), out = tmp / ("chain_" + std::to_string(n) + ".vnnx");
        const auto made = in_child([&] {
            vnnx::write_file_atomic(tfl, vnnx::bench::chain_model(n));
            return std::string();
        });
        if (!made.ok) r.note = "could not be made: " + made.message;
        else r.file_mib = static_cast<double>(fs::file_size(tfl)) / (1024.0 * 1024.0);
        for (int rep = 0; rep < (quick ? 3 : 7) && r.note.empty(); ++rep) {
            const auto c = in_child([&] {
                vnnx::write_file_atomic(out, vnnx::compile(vnnx::read_file(tfl), compile_opts(), tfl.string()).bytes);
                return std::string();
            });
            if (!c.ok) {
                r.note = "does not compile: " + c.message;
                break;
            }
            r.compile_ms = std::min(r.compile_ms, c.seconds * 1e3);
            r.compile_cpu_ms = std::min(r.compile_cpu_ms, c.cpu_seconds * 1e3);
            r.rss_mib = std::max(r.rss_mib, c.max_rss_mib);
        }
        rows.push_back(r);
    }
    return rows;
}

// Prints the rows with a least-squares line; returns their JSON.
std::string report_compiler_scaling(const std::vector<scaling_row>& rows) {
    std::printf("\ncompiler cost against model size: chains of MobileNetV2 blocks (64 channels, 28x28), file to file\n");
    std::printf("%8s %10s %9s %11s %9s %13s %13s\n", "blocks", "operators", "file MiB", "compile ms", "(cpu ms)",
                "ms per block", "compiler MiB");
    std::vector<double> x, wall, cpu;
    std::string json;
    for (const auto& r : rows) {
        if (!r.note.empty()) {
            std::printf("%8d %s\n", r.blocks, r.note.c_str());
            continue;
        }
        std::printf("%8d %10d %9.2f %11.2f %9.2f %13.3f %13.1f\n", r.blocks, 4 * r.blocks, r.file_mib, r.compile_ms,
                    r.compile_cpu_ms, r.compile_ms / r.blocks, r.rss_mib);
        x.push_back(r.blocks);
        wall.push_back(r.compile_ms);
        cpu.push_back(r.compile_cpu_ms);
        json += std::string(json.empty() ? "\n" : ",\n") + "      {\"blocks\": " + std::to_string(r.blocks) +
                ", \"operators\": " + std::to_string(4 * r.blocks) + ", \"file_mib\": " + std::to_string(r.file_mib) +
                ", \"compile_ms\": " + std::to_string(r.compile_ms) + ", \"compile_cpu_ms\": " +
                std::to_string(r.compile_cpu_ms) + ", \"compiler_peak_rss_mib\": " + std::to_string(r.rss_mib) + "}";
    }
    const line_fit fw = fit_line(x, wall), fc = fit_line(x, cpu);
    if (x.size() >= 2)
        std::printf("least squares: wall %.2f ms + %.3f ms per block (largest residual %.0f%%), cpu %.2f ms + %.3f ms per "
                    "block (%.0f%%)\n",
                    fw.intercept, fw.slope, 100 * fw.max_residual, fc.intercept, fc.slope, 100 * fc.max_residual);
    auto fit_json = [](const line_fit& f) {
        return "{\"intercept_ms\": " + std::to_string(f.intercept) + ", \"per_block_ms\": " + std::to_string(f.slope) +
               ", \"max_residual_fraction\": " + std::to_string(f.max_residual) + "}";
    };
    return "{\n    \"rows\": [" + json + "\n    ],\n    \"wall_fit\": " + fit_json(fw) + ",\n    \"cpu_fit\": " +
           fit_json(fc) + "\n  }";
}

// ---- batches: inferences side by side (sim::batch_runner) ----------------------------------
// A batch of 4 samples per job (distinct pseudo-random inputs) run by one job and by `jobs`
// jobs, one thread each, in alternating rounds (the fastest of at least 3, about 1 s per job
// count; 0.3 s with --quick). The jobs share nothing they write, so unlike two threads
// splitting one inference they do not hand activations between cores: this is the
// simulator's throughput on many inputs, beside the latency rows above.
std::string run_batches(const std::vector<std::byte>& bytes, const std::string& name, std::int64_t macs, double peak,
                        unsigned jobs, bool quick) {
    const isa_kind isa = vnnx::sim::best_isa();
    const std::size_t samples = 4 * std::size_t{jobs};
    std::vector<std::vector<std::vector<std::byte>>> inputs(samples);
    {
        const vnnx::format::model_view view(bytes, name);
        std::mt19937 rng(11);
        for (auto& sample : inputs)
            for (std::size_t i = 0; i < view.num_inputs(); ++i) {
                const auto& io = view.input(i);
                sample.emplace_back(io.length * vnnx::format::element_size(io.type));
                for (auto& b : sample.back()) b = static_cast<std::byte>(rng());
            }
    }
    vnnx::sim::batch_runner one(bytes, name, {isa, 1, 1}), many(bytes, name, {isa, jobs, 1});
    auto timed = [&](vnnx::sim::batch_runner& br) {
        const auto t0 = clock_type::now();
        br.run(
            samples,
            [&](vnnx::sim::machine& m, std::size_t s) {
                for (std::size_t i = 0; i < inputs[s].size(); ++i) m.set_input(i, inputs[s][i]);
            },
            [](vnnx::sim::machine&, std::size_t) {});
        return seconds_since(t0);
    };
    timed(one);  // warm-up: weights are unpacked and packed on first use, in every machine
    timed(many);
    const cross_core before = probe_cross_core();
    double best_one = 1e30, best_many = 1e30, spent = 0;
    const double budget = (quick ? 0.3 : 1.0) * 2;
    for (int r = 0; r < 1000 && (r < 3 || spent < budget); ++r) {
        const double a = timed(one), b = timed(many);
        best_one = std::min(best_one, a);
        best_many = std::min(best_many, b);
        spent += a + b;
    }
    const cross_core after = probe_cross_core();
    std::string json;
    for (unsigned j : {1u, jobs}) {
        const double t = j == 1 ? best_one : best_many;
        const double gmacs = static_cast<double>(macs) * static_cast<double>(samples) / 1e9 / t;
        const double per_core = peak > 0 ? gmacs / (peak * j) : 0;
        const double speedup = best_one / t;
        const std::string isa_text(vnnx::sim::isa_name(isa));
        std::printf("%-50s %-7s %5u %8zu %10.2f %10.3f %10.1f %8.2f %7.1f %8.2f", name.c_str(), isa_text.c_str(), j, samples,
                    t * 1e3, t * 1e3 / static_cast<double>(samples), static_cast<double>(samples) / t, gmacs, 100 * per_core,
                    speedup);
        if (j > 1 && before.ok && after.ok)
            std::printf(" %10s", (std::to_string(std::lround(before.round_trip_ns)) + "/" +
                                  std::to_string(std::lround(after.round_trip_ns))).c_str());
        std::printf("\n");
        std::fflush(stdout);
        json += std::string(json.empty() ? "" : ",\n") + "    {\"model\": \"" + name + "\", \"isa\": \"" + isa_text +
                "\", \"jobs\": " + std::to_string(j) + ", \"samples\": " + std::to_string(samples) +
                ", \"ms\": " + std::to_string(t * 1e3) + ", \"samples_per_second\": " +
                std::to_string(static_cast<double>(samples) / t) + ", \"gmacs\": " + std::to_string(gmacs) +
                ", \"fraction_of_peak_per_job\": " + std::to_string(per_core) +
                ", \"speedup_vs_1_job\": " + std::to_string(speedup) +
                (j > 1 ? ", \"cross_core_before\": " + before.json() + ", \"cross_core_after\": " + after.json()
                       : std::string()) +
                "}";
    }
    return json;
}

// ---- the conv kernel microbenchmarks (--layers) ----------------------------------------------
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

std::string run_layers(unsigned max_threads, bool quick) {
    std::printf("\n%-34s %-7s %7s %10s %9s %8s\n", "layer", "isa", "threads", "MMAC", "ms", "GMAC/s");
    std::string json;
    std::mt19937 rng(1);
    for (const auto& l : layers()) {
        std::vector<std::uint8_t> x(l.shape.input_size());
        std::vector<std::int8_t> w(l.shape.weight_size());
        for (auto& b : x) b = static_cast<std::uint8_t>(rng());
        for (auto& b : w) b = static_cast<std::int8_t>(rng());
        k::requant_params rq;
        rq.multiplier.assign(static_cast<std::size_t>(l.shape.kernels), 300);
        rq.shift.assign(static_cast<std::size_t>(l.shape.kernels), 24);
        rq.constant.assign(static_cast<std::size_t>(l.shape.kernels), 1 << 23);
        std::vector<std::uint8_t> y(l.shape.output_size());
        for (isa_kind i : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi, isa_kind::avx512_amx}) {
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
                const std::string isa(vnnx::sim::isa_name(i));
                std::printf("%-34s %-7s %7u %10.1f %9.3f %8.1f\n", l.name, isa.c_str(), t, mmac, best * 1e3, gmacs);
                json += std::string(json.empty() ? "\n" : ",\n") + "    {\"layer\": \"" + l.name + "\", \"isa\": \"" +
                        isa + "\", \"threads\": " + std::to_string(t) + ", \"mmac\": " + std::to_string(mmac) +
                        ", \"ms\": " + std::to_string(best * 1e3) + ", \"gmacs\": " + std::to_string(gmacs) + "}";
            }
        }
    }
    return json;
}

}  // namespace

int main(int argc, char** argv) {
    std::string json_path = "vnnx_bench.json";
    fs::path models_dir = VNNX_BENCH_MODELS_DIR;
    unsigned max_threads = 2;
    bool quick = false, with_layers = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--json" && i + 1 < argc) json_path = argv[++i];
        else if (a == "--models" && i + 1 < argc) models_dir = argv[++i];
        else if (a == "--threads" && i + 1 < argc) max_threads = static_cast<unsigned>(std::stoul(argv[++i]));
        else if (a == "--quick") quick = true;
        else if (a == "--layers") with_layers = true;
        else if ((a == "--write-yolo" || a == "--write-yolo-decoded" || a == "--write-yolo11") && i + 2 < argc) {
            // Writes a YOLO-shaped model at one size and stops (for vnnx compile / infer --profile).
            vnnx::write_file_atomic(argv[i + 2], vnnx::tflite::yolov8n_model(std::stoi(argv[i + 1]),
                                                                             {a != "--write-yolo", a == "--write-yolo11"}));
            return 0;
        }
        else {
            std::fprintf(stderr, "usage: vnnx_bench [--models DIR] [--json FILE] [--threads N] [--quick] [--layers]\n"
                                 "       vnnx_bench --write-yolo|--write-yolo-decoded|--write-yolo11 SIZE FILE.tflite\n");
            return 2;
        }
    }
    const auto start = clock_type::now();
    const std::string load_start = read_text("/proc/loadavg");
    const std::string cpu = cpu_model();
    std::printf("cpu: %s, %ld online cores\nload average at start: %s\n", cpu.c_str(), sysconf(_SC_NPROCESSORS_ONLN),
                load_start.c_str());
    const peak_kind kind = host_peak();
    const double peak = int8_peak_gmacs();
    std::printf("%s single-core int8 peak: %.1f GMAC/s\n", peak_name(kind), peak);
    // The AVX2 rate as well where the peak above is VNNI's, to read the avx2 rows against.
    const double avx2_peak = kind == peak_kind::vnni ? int8_peak_gmacs(100, peak_kind::avx2) : peak;
    if (kind == peak_kind::vnni)
        std::printf("%s single-core int8 rate (for the avx2 rows): %.1f GMAC/s\n", peak_name(peak_kind::avx2), avx2_peak);
    const cross_core host_start = max_threads >= 2 ? probe_cross_core() : cross_core{};
    if (max_threads >= 2) std::printf("cross-core at start: %s\n", host_start.text().c_str());

    const fs::path tmp = fs::temp_directory_path() / ("vnnx_bench_" + std::to_string(getpid()));
    fs::create_directories(tmp);
    std::vector<model_entry> models;
    for (const char* name : {"coral-test-data__tf2_mobilenet_v2_1.0_224_ptq", "coral-test-data__deeplabv3_mnv2_dm05_pascal_quant"}) {
        model_entry m;
        m.name = name;
        m.tflite = models_dir / (m.name + ".tflite");
        models.push_back(m);
    }
    // The YOLOv8n-shaped model with its three raw outputs, with a real export's decoding head,
    // and YOLO11-shaped (C2PSA attention) with that head.
    for (const auto& [name, opt] : {std::pair{"yolov8n_shaped_640", vnnx::tflite::yolo_model_options{}},
                                    std::pair{"yolov8n_decoded_640", vnnx::tflite::yolo_model_options{true, false}},
                                    std::pair{"yolo11_c2psa_decoded_640", vnnx::tflite::yolo_model_options{true, true}}}) {
        model_entry m;
        m.name = name;
        m.tflite = tmp / (m.name + ".tflite");
        // Made in a child so the parent's peak memory stays small (see in_child).
        const auto made = in_child([&] {
            vnnx::write_file_atomic(m.tflite, vnnx::tflite::yolov8n_model(640, opt));
            return std::string();
        });
        if (!made.ok) m.note = "could not be made: " + made.message;
        models.push_back(m);
    }

    // ---- compiler and simulator memory, compile time: each in a child process ----
    const double parent_rss = self_rss_mib();
    const int compile_reps = quick ? 2 : 5;
    for (auto& m : models) {
        m.vnnx = tmp / (m.name + ".vnnx");
        if (!m.note.empty()) continue;
        if (!fs::exists(m.tflite)) {
            m.note = "skipped: " + m.tflite.string() + " is absent";
            continue;
        }
        m.file_mib = static_cast<double>(fs::file_size(m.tflite)) / (1024.0 * 1024.0);
        m.compile_ms = m.compile_cpu_ms = 1e30;
        for (int r = 0; r < compile_reps && m.note.empty(); ++r) {
            const auto c = in_child([&] {
                const auto t0 = clock_type::now();
                const auto bytes = vnnx::read_file(m.tflite);
                const auto result = vnnx::compile(bytes, compile_opts(), m.tflite.string());
                const double compiled = seconds_since(t0);
                vnnx::write_file_atomic(m.vnnx, result.bytes);
                return std::to_string(compiled);
            });
            if (!c.ok) {
                m.note = "skipped: does not compile: " + c.message;
                break;
            }
            if (c.seconds * 1e3 < m.compile_ms) {
                m.compile_ms = c.seconds * 1e3;
                m.read_compile_ms = std::stod(c.message) * 1e3;
            }
            m.compile_cpu_ms = std::min(m.compile_cpu_ms, c.cpu_seconds * 1e3);
            m.compile_rss_mib = std::max(m.compile_rss_mib, c.max_rss_mib);
        }
        if (!m.note.empty()) continue;
        const auto s = in_child([&] {
            const auto bytes = vnnx::read_file(m.vnnx);
            vnnx::sim::machine mach(bytes, m.vnnx.string());
            for (std::size_t i = 0; i < mach.view().num_inputs(); ++i) {
                const auto& io = mach.view().input(i);
                mach.set_input(i, std::vector<std::byte>(io.length * vnnx::format::element_size(io.type), std::byte{1}));
            }
            mach.run();
            return std::string();
        });
        if (!s.ok) m.note = "skipped: does not simulate: " + s.message;
        m.sim_rss_mib = s.max_rss_mib;
        m.ok = m.note.empty();
        // The reference interpreter on random inputs: what `vnnx compile` spends on its test vectors.
        const auto rr = in_child([&] {
            const auto tfl = vnnx::read_file(m.tflite);
            const auto model = vnnx::tflite::model_view::parse(tfl, m.tflite.string());
            std::mt19937 gen(1);
            std::vector<vnnx::ndarray> inputs;
            const auto g = model.subgraph(0);
            for (const auto t : g.inputs()) {
                const auto x = g.tensor(static_cast<std::size_t>(t));
                const auto dt = x.type() == vnnx::tflite::tensor_type::UINT8 ? vnnx::dtype::uint8 : vnnx::dtype::int8;
                inputs.push_back(vnnx::sim::random_array(gen, dt, std::vector<std::int64_t>(x.shape().begin(), x.shape().end())));
            }
            double best = 1e30;
            for (int r = 0; r < 2; ++r) {
                const auto t0 = clock_type::now();
                (void)vnnx::ref::run(model, inputs);
                best = std::min(best, seconds_since(t0));
            }
            // The convolutions alone: an operator's time is the wall time from the end of the one
            // before (the traced run's observer marks each end) to its own end. Their MACs as the
            // filter counts them: output elements x filter elements per output channel.
            using vnnx::builtin_operator;
            double conv_macs = 0;
            for (std::size_t i = 0; i < g.operator_count(); ++i) {
                const auto op = g.op(i);
                if (op.op() != builtin_operator::CONV_2D && op.op() != builtin_operator::DEPTHWISE_CONV_2D &&
                    op.op() != builtin_operator::FULLY_CONNECTED)
                    continue;
                const auto f = g.tensor(static_cast<std::size_t>(op.inputs()[1]));
                const auto y = g.tensor(static_cast<std::size_t>(op.outputs()[0]));
                const auto ch = y.shape().empty() ? 1 : y.shape().back();
                conv_macs += static_cast<double>(y.element_count()) * static_cast<double>(f.element_count() / std::max(1, ch));
            }
            double conv_best = 1e30;
            for (int r = 0; r < 2; ++r) {
                double sum = 0;
                auto last = clock_type::now();
                (void)vnnx::ref::run_traced(model, inputs, [&](std::size_t i, const auto&) {
                    const auto op = g.op(i).op();
                    if (op == builtin_operator::CONV_2D || op == builtin_operator::DEPTHWISE_CONV_2D ||
                        op == builtin_operator::FULLY_CONNECTED)
                        sum += seconds_since(last);
                    last = clock_type::now();
                });
                conv_best = std::min(conv_best, sum);
            }
            return std::to_string(best) + " " + std::to_string(conv_best) + " " + std::to_string(conv_macs);
        });
        if (rr.ok) {
            double total = 0, conv = 0, macs = 0;
            if (std::sscanf(rr.message.c_str(), "%lf %lf %lf", &total, &conv, &macs) == 3) {
                m.ref_ms = total * 1e3;
                m.ref_conv_ms = conv * 1e3;
                m.ref_conv_macs = macs;
            }
        }
    }

    const std::vector<scaling_row> scaling = measure_compiler_scaling(tmp, quick);

    std::printf("\n%-50s %8s %11s %9s %9s %12s %9s %12s %9s %8s %8s %8s %9s\n", "model", "file MiB", "compile ms", "(no write)",
                "(cpu ms)", "compiler MiB", "budget", "sim MiB", "budget", "GMAC", "ref ms", "ref GMAC/s", "conv only");
    std::string json_models;
    std::vector<std::string> json_runs;
    for (auto& m : models) {
        if (!m.ok) {
            std::printf("%-50s %s\n", m.name.c_str(), m.note.c_str());
            json_models += std::string(json_models.empty() ? "\n" : ",\n") + "    {\"model\": \"" + m.name +
                           "\", \"skipped\": \"" + json_escape(m.note) + "\"}";
            continue;
        }
        const auto bytes = vnnx::read_file(m.vnnx);
        const vnnx::format::model_view view(bytes, m.vnnx.string());
        m.allocate_mib = static_cast<double>(view.header().allocate_bytes) / (1024.0 * 1024.0);
        {
            // MACs as the compiler counts them (true convolution work, no padding).
            const auto tfl = vnnx::read_file(m.tflite);
            m.macs = vnnx::compile(tfl, compile_opts(), m.tflite.string()).macs;
        }
        const double compile_budget = 2 * m.file_mib + 32, sim_budget = m.allocate_mib + 32;
        const double ref_gmacs = m.ref_ms > 0 ? static_cast<double>(m.macs) / (m.ref_ms * 1e6) : 0.0;
        const double ref_conv_gmacs = m.ref_conv_ms > 0 ? m.ref_conv_macs / (m.ref_conv_ms * 1e6) : 0.0;
        std::printf("%-50s %8.2f %11.2f %9.2f %9.2f %12.1f %9.1f %12.1f %9.1f %8.3f %8.1f %8.1f %9.1f\n", m.name.c_str(), m.file_mib,
                    m.compile_ms, m.read_compile_ms, m.compile_cpu_ms, m.compile_rss_mib, compile_budget, m.sim_rss_mib, sim_budget,
                    static_cast<double>(m.macs) / 1e9, m.ref_ms, ref_gmacs, ref_conv_gmacs);
        json_models += std::string(json_models.empty() ? "\n" : ",\n") + "    {\"model\": \"" + m.name +
                       "\", \"file_mib\": " + std::to_string(m.file_mib) + ", \"compile_ms\": " +
                       std::to_string(m.compile_ms) + ", \"read_compile_ms\": " + std::to_string(m.read_compile_ms) +
                       ", \"compile_cpu_ms\": " + std::to_string(m.compile_cpu_ms) +
                       ", \"compiler_peak_rss_mib\": " + std::to_string(m.compile_rss_mib) +
                       ", \"compiler_rss_budget_mib\": " + std::to_string(compile_budget) +
                       ", \"simulator_peak_rss_mib\": " + std::to_string(m.sim_rss_mib) +
                       ", \"simulator_rss_budget_mib\": " + std::to_string(sim_budget) +
                       ", \"allocate_mib\": " + std::to_string(m.allocate_mib) + ", \"macs\": " + std::to_string(m.macs) +
                       ", \"reference_ms\": " + std::to_string(m.ref_ms) + ", \"reference_gmacs\": " + std::to_string(ref_gmacs) +
                       ", \"reference_conv_ms\": " + std::to_string(m.ref_conv_ms) + ", \"reference_conv_gmacs\": " +
                       std::to_string(ref_conv_gmacs) + "}";
    }
    std::printf("(children are forked from a parent holding %.1f MiB, which their peak RSS includes)\n", parent_rss);
    const std::string scaling_json = report_compiler_scaling(scaling);

    // ---- simulator time per ISA and thread count, in this process ----
    // "% local": against the peak measured just before and just after the runs of the ISA's rows
    // (the higher of the two), since a shared host's speed drifts by 15% within minutes; "% peak"
    // is against the peak above. "copies": on the row of the most threads, what as many
    // independent one-thread copies side by side reach (side_by_side), the host's ceiling for that
    // speedup; "of copies" is the speedup as a fraction of it. "line ns": the cross-core line
    // round trip (probe_cross_core) just before and just after the ISA's rows: the host's state
    // the threads' speedup was measured in.
    std::printf("\n%-50s %-7s %7s %10s %8s %7s %8s %8s %10s %7s %9s %10s\n", "model", "isa", "threads", "ms", "GMAC/s", "% peak",
                "% local", "speedup", "cpu ms", "copies", "of copies", "line ns");
    for (auto& m : models) {
        if (!m.ok) continue;
        const auto bytes = vnnx::read_file(m.vnnx);
        for (isa_kind isa : {isa_kind::scalar, isa_kind::avx2, isa_kind::avx512_vnni, isa_kind::avx512_vbmi, isa_kind::avx512_amx}) {
            if (!vnnx::sim::isa_supported(isa)) continue;
            // One machine per thread count, all alive at once so that their runs can alternate.
            std::vector<std::unique_ptr<vnnx::sim::machine>> machs;
            std::vector<double> best(max_threads + 1, 1e30), best_cpu(max_threads + 1, 1e30);
            auto timed_run = [&](unsigned t) {
                const auto t0 = clock_type::now();
                const double c0 = cpu_seconds();
                machs[t - 1]->run();
                const double s = seconds_since(t0);
                best[t] = std::min(best[t], s);
                best_cpu[t] = std::min(best_cpu[t], cpu_seconds() - c0);
                return s;
            };
            for (unsigned t = 1; t <= max_threads; ++t) {
                machs.push_back(std::make_unique<vnnx::sim::machine>(bytes, m.vnnx.string(), vnnx::sim::run_options{isa, t}));
                set_timing_inputs(*machs.back());
                timed_run(t);  // warm-up: weights are unpacked and packed on first use
            }
            // The scalar path is slow: its warm-up run (preparation is a small part) is the sample.
            // Others: the fastest of several runs per thread count, at least 3 and about 1 s each
            // (0.3 s with --quick), in rounds that run every thread count in turn: shared hosts
            // have periods of seconds in which two-thread runs take twice as long (one thread's
            // runs do not), and a period that fell on one row's samples only made its speedup
            // meaningless.
            double local = 0, ceiling = 0;  // ceiling: what side-by-side copies reach (side_by_side)
            cross_core host_before, host_after;
            if (isa != isa_kind::scalar) {
                if (max_threads >= 2) host_before = probe_cross_core();
                local = int8_peak_gmacs(100);
                std::fill(best.begin(), best.end(), 1e30);
                std::fill(best_cpu.begin(), best_cpu.end(), 1e30);
                // A cap of 20 runs left 40 ms of samples for 2 ms models: too few for a best-of
                // on a shared machine.
                std::optional<side_by_side> copies;
                if (max_threads >= 2) copies.emplace(bytes, m.vnnx.string(), isa, max_threads);
                double spent = 0;
                const double budget = (quick ? 0.3 : 1.0) * (max_threads + (copies ? 1 : 0));
                for (int r = 0; r < 1000 && (r < 3 || spent < budget); ++r) {
                    for (unsigned t = 1; t <= max_threads; ++t)
                        for (int rep = 0; rep < 2; ++rep) spent += timed_run(t);
                    if (copies) spent += copies->together();
                }
                local = std::max(local, int8_peak_gmacs(100));
                if (max_threads >= 2) host_after = probe_cross_core();
                if (copies) {
                    const auto fastest = copies->finish();
                    for (double f : fastest) ceiling += best[1] / f;
                    if (fastest.empty())
                        std::printf("(%s %s: no side-by-side copies: %s)\n", m.name.c_str(),
                                    std::string(vnnx::sim::isa_name(isa)).c_str(), copies->message().c_str());
                }
            }
            for (unsigned t = 1; t <= max_threads; ++t) {
                const double gmacs = static_cast<double>(m.macs) / 1e9 / best[t];
                const double frac = peak > 0 ? gmacs / peak : 0, local_frac = local > 0 ? gmacs / local : 0;
                const double speedup = best[1] / best[t];
                const std::string isa_text(vnnx::sim::isa_name(isa));
                const bool with_copies = t == max_threads && t > 1 && ceiling > 0;
                std::printf("%-50s %-7s %7u %10.2f %8.2f %7.1f %8.1f %8.2f %10.2f", m.name.c_str(), isa_text.c_str(), t,
                            best[t] * 1e3, gmacs, 100 * frac, 100 * local_frac, speedup, best_cpu[t] * 1e3);
                if (with_copies) std::printf(" %7.2f %8.0f%%", ceiling, 100 * speedup / ceiling);
                if (with_copies && host_before.ok && host_after.ok)
                    std::printf(" %10s", (std::to_string(std::lround(host_before.round_trip_ns)) + "/" +
                                          std::to_string(std::lround(host_after.round_trip_ns))).c_str());
                std::printf("\n");
                std::fflush(stdout);
                json_runs.push_back("    {\"model\": \"" + m.name + "\", \"isa\": \"" + isa_text + "\", \"threads\": " +
                                    std::to_string(t) + ", \"ms\": " + std::to_string(best[t] * 1e3) + ", \"gmacs\": " +
                                    std::to_string(gmacs) + ", \"fraction_of_peak\": " + std::to_string(frac) +
                                    ", \"local_peak_gmacs\": " + std::to_string(local) +
                                    ", \"fraction_of_local_peak\": " + std::to_string(local_frac) +
                                    ", \"speedup_vs_1_thread\": " + std::to_string(speedup) +
                                    ", \"cpu_ms\": " + std::to_string(best_cpu[t] * 1e3) +
                                    (with_copies ? ", \"side_by_side_copies_speedup\": " + std::to_string(ceiling) +
                                                       ", \"cross_core_before\": " + host_before.json() +
                                                       ", \"cross_core_after\": " + host_after.json()
                                                 : std::string()) +
                                    "}");
            }
        }
    }
    std::string batch_json;
    if (max_threads >= 2) {
        // "% peak/job": GMAC/s against the single-core peak times the jobs; "line ns" as above.
        std::printf("\n%-50s %-7s %5s %8s %10s %10s %10s %8s %7s %8s %10s\n", "model (batch)", "isa", "jobs", "samples",
                    "ms", "ms/sample", "samples/s", "GMAC/s", "% peak", "speedup", "line ns");
        for (auto& m : models) {
            if (!m.ok) continue;
            const std::string rows = run_batches(vnnx::read_file(m.vnnx), m.name, m.macs, peak, max_threads, quick);
            batch_json += std::string(batch_json.empty() ? "\n" : ",\n") + rows;
        }
    }
    const std::string layer_json = with_layers ? run_layers(max_threads, quick) : "";
    const cross_core host_end = max_threads >= 2 ? probe_cross_core() : cross_core{};
    if (max_threads >= 2) std::printf("\ncross-core at end: %s", host_end.text().c_str());
    const std::string load_end = read_text("/proc/loadavg");
    const double wall = seconds_since(start);
    std::printf("\nload average at end: %s; benchmark wall time %.1f s\n", load_end.c_str(), wall);

    std::string json = "{\n  \"cpu\": \"" + json_escape(cpu) + "\",\n  \"online_cores\": " +
                       std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + ",\n  \"loadavg_start\": \"" + load_start +
                       "\",\n  \"loadavg_end\": \"" + load_end + "\",\n  \"wall_seconds\": " + std::to_string(wall) +
                       ",\n  \"peak_kernel\": \"" + peak_name(kind) + "\",\n  \"peak_gmacs\": " + std::to_string(peak) +
                       ",\n  \"avx2_peak_gmacs\": " + std::to_string(avx2_peak) + ",\n  \"parent_rss_mib\": " +
                       std::to_string(parent_rss) + ",\n  \"cross_core_start\": " + host_start.json() +
                       ",\n  \"cross_core_end\": " + host_end.json() + ",\n  \"models\": [" + json_models + "\n  ],\n  \"compiler_scaling\": " + scaling_json +
                       ",\n  \"simulator\": [\n";
    for (std::size_t i = 0; i < json_runs.size(); ++i) json += json_runs[i] + (i + 1 < json_runs.size() ? ",\n" : "\n");
    json += "  ],\n  \"batches\": [" + batch_json + "\n  ],\n  \"layers\": [" + layer_json + "\n  ]\n}\n";
    vnnx::write_file_atomic(json_path, json);
    std::printf("wrote %s\n", json_path.c_str());
    std::error_code ec;
    fs::remove_all(tmp, ec);
    return 0;
}
