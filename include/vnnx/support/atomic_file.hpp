#pragma once
// Writes a whole file or nothing: data goes to a temporary file in the target folder, then takes
// the target's name (swapped with an existing file, else renamed; see exchange_into), so readers
// see the old file or the complete new one. On failure the
// temporary file is removed and an existing target is left untouched. Flushing to disk before the
// rename (durability across a power loss) is asked for with `sync`: it costs tens of milliseconds
// for a model-sized file, more than compiling it, and build outputs can be made again.
#include <cerrno>
#include <cstddef>
#include <cstdio>
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
#include "vnnx/support/huge_pages.hpp"
#include "vnnx/support/limits.hpp"

namespace vnnx {

namespace detail {
inline std::string errno_text(int e) { return std::strerror(e); }

/// Puts the finished temporary file in the place of an existing regular target by swapping the
/// two names, then deletes the old file under the temporary name; false where the target is
/// absent or not a regular file or the system cannot swap (the caller renames). Why not rename:
/// ext4 (auto_da_alloc) flushes a file that is renamed over another one before the rename
/// returns, 7-9 ms for a 10 MiB model, half a compile; after a swap the data is written back
/// later, as for a new file. Readers still see the old file or the whole new one; durability is
/// what file_sync::flush asks for.
inline bool exchange_into([[maybe_unused]] const std::string& tmp, [[maybe_unused]] const std::filesystem::path& target) {
#if defined(__linux__) && defined(RENAME_EXCHANGE)
    struct ::stat st {};
    if (::lstat(target.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, target.c_str(), RENAME_EXCHANGE) != 0) return false;
    // The new file is in place; the old one left under the temporary name is only litter.
    (void)::unlink(tmp.c_str());
    return true;
#else
    return false;
#endif
}
}  // namespace detail

enum class file_sync { none, flush };

inline void write_file_atomic(const std::filesystem::path& target, std::span<const std::byte> data,
                              file_sync sync = file_sync::none) {
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
    if (sync == file_sync::flush && ::fsync(fd) != 0) abandon("flush failed");
    if (::close(fd) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(error_kind::io, target.string() + ": close failed: " + detail::errno_text(e));
    }
    if (detail::exchange_into(tmp, target)) return;
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
        const int e = errno;
        ::unlink(tmp.c_str());
        fail(error_kind::io, target.string() + ": rename failed: " + detail::errno_text(e));
    }
}

inline void write_file_atomic(const std::filesystem::path& target, std::string_view text,
                              file_sync sync = file_sync::none) {
    write_file_atomic(target, std::as_bytes(std::span<const char>(text.data(), text.size())), sync);
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
        reserve_huge(out, static_cast<std::size_t>(st.st_size));
        prefault_pages(out.data(), out.capacity());
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
