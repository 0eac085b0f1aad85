#pragma once
// A whole file as read-only bytes, mapped rather than read: a one-shot run of the simulator
// copies the model into its own memory once, so reading it into a buffer first (a zero fill, a
// copy out of the page cache, then that copy) doubles the work. The mapping is populated in one
// call. What cannot be mapped (a pipe, an empty file, a system without mmap) is read instead.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/limits.hpp"

namespace vnnx {

class mapped_file {
public:
    /// Refuses files larger than `max_bytes` as read_file does.
    explicit mapped_file(const std::filesystem::path& path, std::size_t max_bytes = active_limits().max_file_bytes) {
#if defined(__linux__)
        const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) fail_input(path.string() + ": cannot open: " + detail::errno_text(errno));
        struct ::stat st {};
        if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
            const auto n = static_cast<std::size_t>(st.st_size);
            if (n > max_bytes) {
                ::close(fd);
                fail(error_kind::limit, path.string() + ": file is larger than the limit of " + std::to_string(max_bytes) +
                                            " bytes (raise it with VNNX_MAX_FILE_BYTES)");
            }
            void* p = ::mmap(nullptr, n, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
            ::close(fd);
            if (p != MAP_FAILED) {
                map_ = static_cast<const std::byte*>(p);
                size_ = n;
                return;
            }
        } else {
            ::close(fd);
        }
#endif
        copy_ = read_file(path, max_bytes);
    }
    mapped_file(const mapped_file&) = delete;
    mapped_file& operator=(const mapped_file&) = delete;
    ~mapped_file() {
#if defined(__linux__)
        if (map_ != nullptr) ::munmap(const_cast<std::byte*>(map_), size_);
#endif
    }

    /// The file's bytes, valid while this object lives. A file that changes while mapped may
    /// show the change: the bytes are checked where they are used, as those of any file.
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept {
        return map_ != nullptr ? std::span<const std::byte>(map_, size_) : std::span<const std::byte>(copy_);
    }

private:
    const std::byte* map_ = nullptr;
    std::size_t size_ = 0;
    std::vector<std::byte> copy_;
};

}  // namespace vnnx
