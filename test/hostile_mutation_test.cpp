// Hostile input through the built tool (issue 8): several hundred mutated copies of real and
// builder-made .tflite models and of compiled .vnnx files go through `vnnx info`, `compile` and
// `infer`. Every run is bounded (timeout), must end with status 0 or 1 (never a signal, never a
// hang), print `vnnx: error: <file>: ...` on every failure and leave no file behind but a
// complete output on success.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "support/models.hpp"
#include "vnnx/support/atomic_file.hpp"
#include "vnnx/tflite/builder.hpp"

namespace {

namespace fs = std::filesystem;
using bytes = std::vector<std::byte>;

struct run_result {
    int status = -1;  // exit status, or -1 when killed by a signal / timed out
    bool timed_out = false;
    std::string err;
};

std::string quote(const std::string& s) { return "'" + s + "'"; }

std::string slurp(const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>()};
}

// One bounded run of the tool: `timeout` kills a hang (status 124/137 are reported as timed_out).
run_result run_tool(const fs::path& dir, const std::string& args) {
    const fs::path err = dir.parent_path() / (dir.filename().string() + ".stderr");
    const std::string cmd = "timeout -k 5 60 " + quote(VNNX_TOOL_PATH) + " " + args + " >/dev/null 2>" + quote(err.string());
    const int st = std::system(cmd.c_str());
    run_result r;
    r.err = slurp(err);
    fs::remove(err);
    if (WIFEXITED(st)) {
        r.status = WEXITSTATUS(st);
        // timeout's own statuses; a tool that exits with 124 or 137 would be a bug too.
        if (r.status == 124 || r.status == 137) r.timed_out = true;
        // The shell reports a child killed by a signal as 128 + signal.
        if (r.status > 128) r.status = -1;
    }
    return r;
}

bool command_exists(const std::string& name) {
    const std::string cmd = quote(VNNX_TOOL_PATH) + " " + name + " --help >/dev/null 2>&1";
    const int st = std::system(cmd.c_str());
    return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

struct temp_dir {
    fs::path path;
    explicit temp_dir(const std::string& tag) {
        path = fs::temp_directory_path() / ("vnnx_hostile_" + tag + "_" + std::to_string(::getpid()));
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

// The kinds of damage of the issue: byte flips, truncations, planted huge or negative integers,
// zeroed tails. Deterministic (seeded) so that a failure can be reproduced.
bytes mutate(const bytes& in, std::mt19937& gen, int kind) {
    bytes b = in;
    if (b.size() < 8) return b;
    auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(gen); };
    switch (kind % 4) {
        case 0: {  // flip 1..16 random bytes
            const std::size_t n = 1 + pick(16);
            for (std::size_t i = 0; i < n; ++i) b[pick(b.size())] ^= std::byte(static_cast<unsigned char>(1 + pick(255)));
            break;
        }
        case 1:  // truncate anywhere
            b.resize(pick(b.size()));
            break;
        case 2: {  // plant 1..4 huge or negative 32-bit integers at aligned offsets
            static const std::uint32_t planted[] = {0x7FFFFFFFu, 0xFFFFFFFFu, 0x80000000u, 0x40000000u,
                                                    0x00FFFFFFu, 0xFFFFFF00u, 0x10000u, 0xFFFF8000u};
            const std::size_t n = 1 + pick(4);
            for (std::size_t i = 0; i < n; ++i) {
                const std::size_t at = pick(b.size() / 4) * 4;
                const std::uint32_t v = planted[pick(std::size(planted))];
                for (int k = 0; k < 4; ++k) b[at + static_cast<std::size_t>(k)] = std::byte(static_cast<unsigned char>(v >> (8 * k)));
            }
            break;
        }
        default: {  // zero the tail from a random offset
            const std::size_t from = pick(b.size());
            for (std::size_t i = from; i < b.size(); ++i) b[i] = std::byte{0};
            break;
        }
    }
    return b;
}

// The files of `dir` (names only).
std::vector<std::string> listing(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir)) out.push_back(fs::relative(e.path(), dir).string());
    std::sort(out.begin(), out.end());
    return out;
}

struct tally {
    int runs = 0, ok = 0, refused = 0;
};

// Runs one command on one mutant in a folder of its own and checks the rules of the issue.
// `outputs` are the files (relative to the folder) a successful run may leave.
void check_run(const fs::path& dir, const std::string& file, const std::string& args,
               const std::vector<std::string>& outputs, tally& t) {
    const auto r = run_tool(dir, args);
    ++t.runs;
    INFO("vnnx " << args << "\nstderr: " << r.err);
    REQUIRE_FALSE(r.timed_out);
    REQUIRE(r.status >= 0);  // never a signal
    REQUIRE((r.status == 0 || r.status == 1));
    auto files = listing(dir);
    if (r.status == 0) {
        ++t.ok;
        for (const auto& f : files) {
            const bool expected = f == file || std::find(outputs.begin(), outputs.end(), f) != outputs.end();
            INFO("file left: " << f);
            CHECK(expected);
        }
    } else {
        ++t.refused;
        // Every failure: "vnnx: error: <file>: <reason>".
        CHECK(r.err.rfind("vnnx: error: ", 0) == 0);
        CHECK(r.err.find(file) != std::string::npos);
        // Nothing written, not even a temporary file; the input is untouched.
        CHECK(files == std::vector<std::string>{file});
    }
}

// Builder-made models the compiler and simulator take whole: a LUT chain and an element-wise add.
bytes requantize_model() {
    using vnnx::tflite::tensor_type;
    vnnx::tflite::builder b;
    const auto in = b.add_tensor("in", tensor_type::INT8, {1, 4, 5, 3}, vnnx::tflite::quant{0.5f, 0});
    const auto out = b.add_tensor("out", tensor_type::INT8, {1, 4, 5, 3}, vnnx::tflite::quant{0.25f, 3});
    b.add_operator(vnnx::builtin_operator::QUANTIZE, {in}, {out});
    b.set_inputs({in});
    b.set_outputs({out});
    return b.finish();
}

bytes add_model() {
    using vnnx::tflite::tensor_type;
    vnnx::tflite::builder b;
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 3, 4, 2}, vnnx::tflite::quant{0.05f, -3});
    const auto y = b.add_tensor("y", tensor_type::INT8, {1, 3, 4, 2}, vnnx::tflite::quant{0.04f, 5});
    const auto z = b.add_tensor("sum", tensor_type::INT8, {1, 3, 4, 2}, vnnx::tflite::quant{0.08f, 1});
    b.add_operator(vnnx::builtin_operator::ADD, {x, y}, {z},
                   vnnx::tflite::add_options{vnnx::tflite::activation_function::NONE, true});
    b.set_inputs({x, y});
    b.set_outputs({z});
    return b.finish();
}

struct seed_model {
    std::string name;
    bytes data;
};

std::vector<seed_model> tflite_seeds() {
    std::vector<seed_model> seeds{{"requantize", requantize_model()}, {"add", add_model()}};
    // Small real models (each run stays short); skipped with a warning when the folder is absent.
    for (const char* stem : {"tflite-micro__hello_world_int8", "coral-test-data__split_concat",
                             "tflite-micro__micro_speech_quantized"}) {
        if (auto p = vnnx::test::shared_model(stem)) seeds.push_back({stem, vnnx::read_file(*p)});
    }
    return seeds;
}

}  // namespace

TEST_CASE("hostile: mutated .tflite models through info and compile: status 0/1, a message, nothing left") {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    const bool have_info = command_exists("info"), have_compile = command_exists("compile");
    if (!have_info) WARN("vnnx info is missing: not covered");
    if (!have_compile) WARN("vnnx compile is missing: not covered");
    temp_dir tmp("tflite");
    std::mt19937 gen(8);
    tally t;
    const auto seeds = tflite_seeds();
    // Without the shared models only the two builder-made seeds remain: more mutants of each.
    const int per_seed = seeds.size() > 2 ? 36 : 48;
    for (const auto& seed : seeds) {
        for (int i = 0; i < per_seed; ++i) {
            const auto mutant = mutate(seed.data, gen, i);
            const fs::path dir = tmp.path / (seed.name + "_" + std::to_string(i));
            fs::create_directories(dir);
            const std::string file = "m.tflite";
            vnnx::write_file_atomic(dir / file, mutant);
            const std::string in = quote((dir / file).string());
            if (have_info) check_run(dir, file, "info " + in, {}, t);
            if (have_info && i % 3 == 0) check_run(dir, file, "info --json " + in, {}, t);
            if (have_compile)
                check_run(dir, file, "compile -t " + in + " -s V1000 -o " + quote((dir / "out.vnnx").string()), {"out.vnnx"}, t);
            fs::remove_all(dir);
        }
    }
    INFO("runs " << t.runs << ", accepted " << t.ok << ", refused " << t.refused);
    CHECK(t.runs >= 200);
    CHECK(t.refused > 0);
}

TEST_CASE("hostile: mutated .vnnx files through info and infer: status 0/1, a message, nothing left") {
    if (std::string(VNNX_TOOL_PATH).empty()) {
        WARN("skipped: the vnnx tool is not built");
        return;
    }
    if (!command_exists("compile")) {
        WARN("skipped: vnnx compile is missing, so there is no .vnnx file to damage");
        return;
    }
    const bool have_info = command_exists("info"), have_infer = command_exists("infer");
    temp_dir tmp("vnnx");
    // The seeds: builder-made and small real models compiled by the tool itself (test vectors embedded).
    std::vector<seed_model> seeds;
    std::vector<seed_model> models{{"requantize", requantize_model()}, {"add", add_model()}};
    for (const char* stem : {"tflite-micro__hello_world_int8", "coral-test-data__split_concat"})
        if (auto p = vnnx::test::shared_model(stem)) models.push_back({stem, vnnx::read_file(*p)});
    for (auto& [name, model] : models) {
        const fs::path t = tmp.path / (name + ".tflite"), v = tmp.path / (name + ".vnnx");
        vnnx::write_file_atomic(t, model);
        const std::string cmd = quote(VNNX_TOOL_PATH) + " compile -t " + quote(t.string()) + " -s V1000 -o " + quote(v.string()) + " >/dev/null";
        REQUIRE(std::system(cmd.c_str()) == 0);
        seeds.push_back({name, vnnx::read_file(v)});
    }
    std::mt19937 gen(88);
    tally t;
    const int per_seed = seeds.size() > 2 ? 60 : 90;
    for (const auto& seed : seeds) {
        for (int i = 0; i < per_seed; ++i) {
            const auto mutant = mutate(seed.data, gen, i);
            const fs::path dir = tmp.path / (seed.name + "_" + std::to_string(i));
            fs::create_directories(dir);
            const std::string file = "m.vnnx";
            vnnx::write_file_atomic(dir / file, mutant);
            const std::string in = quote((dir / file).string());
            if (have_info) check_run(dir, file, "info " + in, {}, t);
            if (have_infer) {
                std::vector<std::string> outputs{"out"};  // one .npy per model output
                for (int k = 0; k < 16; ++k) outputs.push_back("out/output_" + std::to_string(k) + ".npy");
                check_run(dir, file, "infer " + in + " -o " + quote((dir / "out").string()), outputs, t);
            }
            fs::remove_all(dir);
        }
    }
    INFO("runs " << t.runs << ", accepted " << t.ok << ", refused " << t.refused);
    CHECK(t.runs >= 300);
    CHECK(t.refused > 0);
}

TEST_CASE("hostile: vnnx compile on a full disk (file size limit 0) keeps the old output, status 1") {
    if (std::string(VNNX_TOOL_PATH).empty() || !command_exists("compile")) {
        WARN("skipped: vnnx compile is not built");
        return;
    }
    temp_dir tmp("full");
    const fs::path model = tmp.path / "m.tflite", out = tmp.path / "m.vnnx";
    vnnx::write_file_atomic(model, requantize_model());
    vnnx::write_file_atomic(out, std::string_view("old output"));
    // ulimit -f 0: every write fails with EFBIG, as on a full disk; the tool must not die of SIGXFSZ.
    // stderr comes back through a pipe (a file could not grow under the same limit).
    const std::string cmd = "ulimit -f 0; exec " + quote(VNNX_TOOL_PATH) + " compile -t " + quote(model.string()) +
                            " -s V1000 -o " + quote(out.string()) + " 2>&1 >/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string text;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    const int st = ::pclose(p);
    INFO(text);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 1);
    CHECK(text.rfind("vnnx: error: " + out.string() + ": write failed", 0) == 0);
    CHECK(slurp(out) == "old output");
    CHECK(listing(tmp.path) == std::vector<std::string>{"m.tflite", "m.vnnx"});
}

TEST_CASE("hostile: vnnx info with its standard output on a full disk (/dev/full): status 1, a message") {
    if (std::string(VNNX_TOOL_PATH).empty() || !command_exists("info")) {
        WARN("skipped: vnnx info is not built");
        return;
    }
    if (!fs::exists("/dev/full")) {
        WARN("skipped: no /dev/full");
        return;
    }
    temp_dir tmp("devfull");
    const fs::path model = tmp.path / "m.tflite";
    vnnx::write_file_atomic(model, requantize_model());
    const std::string cmd = quote(VNNX_TOOL_PATH) + " info " + quote(model.string()) + " 2>&1 >/dev/full";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string text;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    const int st = ::pclose(p);
    INFO(text);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 1);
    CHECK(text == "vnnx: error: <standard output>: write failed: No space left on device\n");
    CHECK(listing(tmp.path) == std::vector<std::string>{"m.tflite"});
}

TEST_CASE("hostile: vnnx infer on a full disk keeps the existing outputs, status 1") {
    if (std::string(VNNX_TOOL_PATH).empty() || !command_exists("compile") || !command_exists("infer")) {
        WARN("skipped: vnnx compile or infer is not built");
        return;
    }
    temp_dir tmp("inferfull");
    const fs::path model = tmp.path / "m.tflite", compiled = tmp.path / "m.vnnx", out = tmp.path / "out";
    vnnx::write_file_atomic(model, add_model());
    const std::string compile = quote(VNNX_TOOL_PATH) + " compile -t " + quote(model.string()) + " -s V1000 -o " +
                                quote(compiled.string()) + " >/dev/null 2>&1";
    REQUIRE(std::system(compile.c_str()) == 0);
    fs::create_directories(out);
    const fs::path old_output = out / "output_0.npy";
    vnnx::write_file_atomic(old_output, std::string_view("an earlier result"));
    const std::string cmd = "ulimit -f 0; exec " + quote(VNNX_TOOL_PATH) + " infer " + quote(compiled.string()) +
                            " -o " + quote(out.string()) + " 2>&1 >/dev/null";
    FILE* p = ::popen(cmd.c_str(), "r");
    REQUIRE(p != nullptr);
    std::string text;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) text.append(buf, n);
    const int st = ::pclose(p);
    INFO(text);
    REQUIRE(WIFEXITED(st));
    CHECK(WEXITSTATUS(st) == 1);
    CHECK(text.rfind("vnnx: error: " + old_output.string() + ": write failed", 0) == 0);
    CHECK(slurp(old_output) == "an earlier result");
    CHECK(listing(tmp.path) == std::vector<std::string>{"m.tflite", "m.vnnx", "out", "out/output_0.npy"});
    // Without the limit the same run replaces it with a whole .npy file.
    const std::string again = quote(VNNX_TOOL_PATH) + " infer " + quote(compiled.string()) + " -o " +
                              quote(out.string()) + " >/dev/null 2>&1";
    REQUIRE(std::system(again.c_str()) == 0);
    CHECK(slurp(old_output).rfind("\x93NUMPY", 0) == 0);
}
