#pragma once
// Writes a whole file or nothing: data goes to a temporary file in the target folder,
// is flushed to disk, then renamed over the target. On failure the temporary file is
// removed and an existing target is left untouched.
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <span>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vnnx/support/error.hpp"
#include "vnnx/support/limits.hpp"

namespace vnnx {

namespace detail {
inline std::string errno_text(int e) { return std::strerror(e); }
}  // namespace detail

inline void write_file_atomic(const std::filesystem::path& target, std::span<const std::byte> data) {
    namespace fs = std::filesystem;
    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string tmpl = (dir / ("." + target.filename().string() + ".tmp-XXXXXX")).string();
    std::vector<char> name(tmpl.begin(), tmpl.end());
    name.push_back('\0');
    const int fd = ::mkstemp(name.data());
    if (fd < 0) fail(error_kind::io, target.string() + ": cannot create a temporary file: " + detail::errno_text(errno));
    const std::string tmp(name.data());
    auto abandon = [&](const std::string& why) {
        const int e = errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        fail(error_kind::io, target.string() + ": " + why + ": " + detail::errno_text(e));
    };
    const std::byte* p = data.data();
    std::size_t left = data.size();
    while (left > 0) {
        const ::ssize_t n = ::write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            abandon("write failed");
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (::fchmod(fd, 0644) != 0) abandon("cannot set permissions");
    if (::fsync(fd) != 0) abandon("flush failed");
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(error_kind::io, target.string() + ": close failed: " + detail::errno_text(e));
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(error_kind::io, target.string() + ": rename failed: " + detail::errno_text(e));
    }
}

inline void write_file_atomic(const std::filesystem::path& target, std::string_view text) {
    write_file_atomic(target, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

/// Reads a whole file; refuses files larger than `max_bytes` (default: the limits in force).
inline std::vector<std::byte> read_file(const std::filesystem::path& path,
                                        std::size_t max_bytes = active_limits().max_file_bytes) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) fail_input(path.string() + ": cannot open: " + detail::errno_text(errno));
    std::vector<std::byte> out;
    // A regular file's size is known: read it straight into place (no chunked regrowth); the
    // loop below still handles files that grow or shrink meanwhile, pipes and the limit.
    struct ::stat st {};
    if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
        static_cast<std::size_t>(st.st_size) <= max_bytes) {
        out.resize(static_cast<std::size_t>(st.st_size));
        std::size_t got = 0;
        while (got < out.size()) {
            const ::ssize_t n = ::read(fd, out.data() + got, out.size() - got);
            if (n < 0) {
                if (errno == EINTR) continue;
                const int e = errno;
                ::close(fd);
                fail_input(path.string() + ": read failed: " + detail::errno_text(e));
            }
            if (n == 0) break;
            got += static_cast<std::size_t>(n);
        }
        out.resize(got);
    }
    std::byte buf[1 << 16];
    for (;;) {
        const ::ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            const int e = errno;
            ::close(fd);
            fail_input(path.string() + ": read failed: " + detail::errno_text(e));
        }
        if (n == 0) break;
        if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
            ::close(fd);
            fail(error_kind::limit, path.string() + ": file is larger than the limit of " +
                                        std::to_string(max_bytes) + " bytes (raise it with VNNX_MAX_FILE_BYTES)");
        }
        out.insert(out.end(), buf, buf + n);
    }
    ::close(fd);
    return out;
}

}  // namespace vnnx
