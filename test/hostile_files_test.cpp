// Nothing lost (issue 8): an output is written whole or not at all. A write that fails in the
// middle (file size limit reached), a missing folder or a target that is a folder leave no
// temporary file and keep an existing file of the same name byte for byte. Also the limits.
#include <algorithm>
#include <csignal>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/support/npy.hpp"

namespace {

namespace fs = std::filesystem;

struct temp_dir {
    fs::path path;
    explicit temp_dir(const std::string& tag) {
        path = fs::temp_directory_path() / ("vnnx_hostile_files_" + tag + "_" + std::to_string(::getpid()));
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

std::vector<std::string> names(const fs::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
}

// Lowers this process's file size limit for one scope: a write past it fails with EFBIG (as on
// a full disk) once SIGXFSZ, which would otherwise kill the process, is ignored.
struct file_size_limit {
    rlimit old{};
    void (*old_handler)(int) = nullptr;
    explicit file_size_limit(rlim_t bytes) {
        old_handler = std::signal(SIGXFSZ, SIG_IGN);
        ::getrlimit(RLIMIT_FSIZE, &old);
        rlimit l = old;
        l.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &l);
    }
    ~file_size_limit() {
        ::setrlimit(RLIMIT_FSIZE, &old);
        std::signal(SIGXFSZ, old_handler);
    }
    file_size_limit(const file_size_limit&) = delete;
    file_size_limit& operator=(const file_size_limit&) = delete;
};

}  // namespace

TEST_CASE("hostile files: a write that fails in the middle keeps the old file and leaves no temporary") {
    temp_dir tmp("midwrite");
    const fs::path target = tmp.path / "model.vnnx";
    vnnx::write_file_atomic(target, std::string_view("the old complete file"));
    const std::vector<std::byte> big(1 << 20, std::byte{0x5A});
    {
        file_size_limit limit(64 * 1024);  // 64 KiB of the 1 MiB get written, then EFBIG
        try {
            vnnx::write_file_atomic(target, big);
            FAIL("the write past the file size limit succeeded");
        } catch (const vnnx::error& e) {
            CHECK(e.kind() == vnnx::error_kind::io);
            CHECK(e.exit_code() == 1);
            const std::string what = e.what();
            CHECK(what.rfind(target.string() + ": ", 0) == 0);  // names the file first
            CHECK(what.find("write failed") != std::string::npos);
        }
    }
    CHECK(names(tmp.path) == std::vector<std::string>{"model.vnnx"});
    const auto kept = vnnx::read_file(target);
    CHECK(std::string(reinterpret_cast<const char*>(kept.data()), kept.size()) == "the old complete file");
    // The same file, written again without the limit, is whole.
    vnnx::write_file_atomic(target, big);
    CHECK(vnnx::read_file(target) == big);
    CHECK(names(tmp.path) == std::vector<std::string>{"model.vnnx"});
}

TEST_CASE("hostile files: an .npy output that fails in the middle keeps the old file") {
    temp_dir tmp("npy");
    const fs::path target = tmp.path / "output_0.npy";
    vnnx::ndarray small(vnnx::dtype::int8, {2, 3});
    vnnx::write_npy(target, small);
    const auto before = vnnx::read_file(target);
    vnnx::ndarray large(vnnx::dtype::int32, {256, 1024});
    {
        file_size_limit limit(4096);
        CHECK_THROWS_AS(vnnx::write_npy(target, large), vnnx::error);
    }
    CHECK(vnnx::read_file(target) == before);
    CHECK(names(tmp.path) == std::vector<std::string>{"output_0.npy"});
}

TEST_CASE("hostile files: a missing folder or a target that is a folder: an error naming it, nothing left") {
    temp_dir tmp("where");
    const fs::path missing = tmp.path / "no" / "such" / "out.vnnx";
    try {
        vnnx::write_file_atomic(missing, std::string_view("x"));
        FAIL("wrote into a missing folder");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::io);
        CHECK(std::string(e.what()).rfind(missing.string() + ": ", 0) == 0);
    }
    CHECK(names(tmp.path).empty());

    fs::create_directories(tmp.path / "out.vnnx" / "inner");
    CHECK_THROWS_AS(vnnx::write_file_atomic(tmp.path / "out.vnnx", std::string_view("x")), vnnx::error);
    CHECK(names(tmp.path) == std::vector<std::string>{"out.vnnx"});
    CHECK(fs::is_directory(tmp.path / "out.vnnx" / "inner"));
}

TEST_CASE("hostile files: read_file refuses a file above its size limit with a limit error naming it") {
    temp_dir tmp("read");
    const fs::path p = tmp.path / "big.tflite";
    vnnx::write_file_atomic(p, std::vector<std::byte>(100000));
    try {
        (void)vnnx::read_file(p, 65536);
        FAIL("read a file above the limit");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
        CHECK(std::string(e.what()).rfind(p.string() + ": ", 0) == 0);
    }
    CHECK(vnnx::read_file(p, 100000).size() == 100000);
    CHECK_THROWS_AS(vnnx::read_file(tmp.path / "absent.tflite"), vnnx::error);
}

TEST_CASE("hostile limits: defaults fit real models, overflow and limits give limit errors") {
    const vnnx::limits d;
    // The largest shared model is 4 MB with ~10 MB of activations and a few hundred operators.
    CHECK(d.max_file_bytes >= (std::uint64_t{64} << 20));
    CHECK(d.max_activation_bytes >= (std::uint64_t{256} << 20));
    CHECK(d.max_tensor_elements >= (std::uint64_t{1} << 26));
    CHECK(d.max_operators >= 10000);
    CHECK(d.max_subgraph_depth >= 4);

    CHECK(vnnx::checked_mul(1u << 20, 1u << 20, "t") == (std::uint64_t{1} << 40));
    try {
        (void)vnnx::checked_mul(std::uint64_t{1} << 40, std::uint64_t{1} << 30, "tensor 3 'x'");
        FAIL("no overflow reported");
    } catch (const vnnx::error& e) {
        CHECK(e.kind() == vnnx::error_kind::limit);
        CHECK(std::string(e.what()).rfind("tensor 3 'x': size ", 0) == 0);
    }
    CHECK_THROWS_AS(vnnx::checked_add(~std::uint64_t{0}, 1, "a"), vnnx::error);

    const std::vector<std::int64_t> ok{1, 224, 224, 3};
    CHECK(vnnx::checked_element_count(ok, "t") == 150528u);
    const std::vector<std::int64_t> negative{1, -2, 3};
    CHECK_THROWS_WITH(vnnx::checked_element_count(negative, "m.tflite: tensor 0"), Catch::Contains("is negative"));
    const std::vector<std::int64_t> huge{1 << 20, 1 << 20, 1 << 20, 1 << 20};
    CHECK_THROWS_AS(vnnx::checked_element_count(huge, "t"), vnnx::error);
    const std::vector<std::int64_t> big{1 << 15, 1 << 15};  // 2^30 > the default 2^28
    CHECK_THROWS_WITH(vnnx::checked_element_count(big, "m.tflite: tensor 7"),
                      Catch::Contains("exceeds the limit") && Catch::Contains("VNNX_MAX_TENSOR_ELEMENTS"));

    // Raised in code, the same shape passes; restored afterwards.
    vnnx::limits raised = d;
    raised.max_tensor_elements = std::uint64_t{1} << 31;
    vnnx::set_limits(raised);
    CHECK(vnnx::checked_element_count(big, "t") == (std::uint64_t{1} << 30));
    vnnx::set_limits(d);
    CHECK(vnnx::active_limits().max_tensor_elements == d.max_tensor_elements);

    // From the environment: a positive decimal count, else a usage error.
    ::setenv("VNNX_MAX_NODES", "123", 1);
    CHECK(vnnx::limits_from_environment().max_nodes == 123u);
    ::setenv("VNNX_MAX_NODES", "12x", 1);
    CHECK_THROWS_AS(vnnx::limits_from_environment(), vnnx::error);
    ::setenv("VNNX_MAX_NODES", "-5", 1);
    CHECK_THROWS_AS(vnnx::limits_from_environment(), vnnx::error);
    ::unsetenv("VNNX_MAX_NODES");
    CHECK(vnnx::limits_from_environment().max_nodes == d.max_nodes);
}

TEST_CASE("hostile files: a read-only folder: an error naming the file, the old file untouched") {
    temp_dir tmp("readonly");
    const fs::path target = tmp.path / "out.vnnx";
    vnnx::write_file_atomic(target, std::string_view("the old file"));
    if (::geteuid() == 0) {
        WARN("running as root, whom folder permissions do not stop: only the read-only /proc is tried");
    } else {
        fs::permissions(tmp.path, fs::perms::owner_read | fs::perms::owner_exec, fs::perm_options::replace);
        std::string what;
        try {
            vnnx::write_file_atomic(target, std::string_view("new"));
        } catch (const vnnx::error& e) {
            CHECK(e.kind() == vnnx::error_kind::io);
            what = e.what();
        }
        fs::permissions(tmp.path, fs::perms::owner_all, fs::perm_options::replace);
        CHECK_THAT(what, Catch::StartsWith(target.string() + ": cannot create a temporary file: "));
        const auto kept = vnnx::read_file(target);
        CHECK(std::string(reinterpret_cast<const char*>(kept.data()), kept.size()) == "the old file");
        CHECK(names(tmp.path) == std::vector<std::string>{"out.vnnx"});
    }
    // /proc takes no new file, not even from root.
    if (fs::is_directory("/proc/self")) {
        const fs::path proc_target = "/proc/self/vnnx_hostile_out.vnnx";
        CHECK_THROWS_WITH(vnnx::write_file_atomic(proc_target, std::string_view("x")),
                          Catch::StartsWith(proc_target.string() + ": cannot create a temporary file: "));
        CHECK_FALSE(fs::exists(proc_target));
    }
}
