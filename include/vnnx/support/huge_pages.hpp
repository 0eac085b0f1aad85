#pragma once
// An allocator for the simulator's big buffers (the model's memory image): blocks of 2 MiB and
// more are 2 MiB-aligned and, on Linux, advised as transparent huge pages. Kernels that walk
// planes hundreds of KiB apart (a 513x513 resize, an arg-max over 21 planes) then miss the TLB
// far less, where the kernel only grants huge pages on request ("madvise" mode).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>
#include <utility>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace vnnx {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

/// Advises the whole 2 MiB pages inside [p, p + n) as transparent huge pages, for a big buffer
/// about to be written for the first time (a file read, the compiler's blob): a fresh 4 KiB page
/// costs a fault of 1.3-2 us on a VM, so filling 10 MiB costs 2,560 of them, a huge page one
/// fault per 512 pages. Memory that std::allocator handed out is fine: only advice, never a remap.
inline void advise_huge_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n < huge_page_bytes) return;
    const auto from = (reinterpret_cast<std::uintptr_t>(p) + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
    const auto to = (reinterpret_cast<std::uintptr_t>(p) + n) / huge_page_bytes * huge_page_bytes;
    if (to > from) (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
#endif
}

/// Faults in the pages of [p, p + n) with one call instead of one trap per 4 KiB page (about
/// 0.5 us a page instead of 1.3 us here), for a buffer that is written whole right after (a
/// file read into it). Only advice: a kernel without MADV_POPULATE_WRITE (before 5.14) refuses
/// it and the pages fault as usual.
inline void prefault_pages([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(__linux__)
#if !defined(MADV_POPULATE_WRITE)
    constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14; older C libraries lack the name
#endif
    constexpr std::size_t page = 4096;
    const auto from = reinterpret_cast<std::uintptr_t>(p) / page * page;
    const auto to = (reinterpret_cast<std::uintptr_t>(p) + n + page - 1) / page * page;
    if (n >= 16 * page) (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#endif
}

/// Advises a block that starts at `p` as huge pages, including its first and last 2 MiB pages when
/// only a few bytes of them lie outside it (an allocator's header, as for a block malloc maps on
/// its own; see reserve_huge). The first page was faulted in as small pages when the header was
/// written, so it is also collapsed into a huge page at once (Linux 6.1+; older kernels refuse
/// and it stays small). Contents never change.
inline void advise_huge_block([[maybe_unused]] void* p, [[maybe_unused]] std::size_t n) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
#if !defined(MADV_COLLAPSE)
    constexpr int MADV_COLLAPSE = 25;  // Linux 6.1; older C libraries lack the name
#endif
    constexpr std::uintptr_t slack = 4096;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    if (at < slack) return;
    const auto from = (at - slack + huge_page_bytes) / huge_page_bytes * huge_page_bytes;  // first page
    const auto to = (at + n + slack) / huge_page_bytes * huge_page_bytes;
    if (to <= from) return;
    (void)::madvise(reinterpret_cast<void*>(from), to - from, MADV_HUGEPAGE);
    if (from < at) (void)::madvise(reinterpret_cast<void*>(from), huge_page_bytes, MADV_COLLAPSE);
#endif
}

/// Reserves room for `n` elements of a vector of trivially copyable elements (its contents are
/// kept) such that a big block lies on whole huge pages: a 4 KiB page's first touch costs 1.3 us
/// on some VMs and 11 us on others, a 2 MiB page's about as much as 20 of them. glibc maps a big
/// block on its own with a 16-byte header, rounded to 4 KiB: a request of k * 2 MiB - 32 bytes
/// maps exactly k * 2 MiB, which Linux (6.7+) places on a 2 MiB boundary. Elsewhere this is a
/// slightly larger reserve with advice on its whole pages.
template <class V>
void reserve_huge(V& v, std::size_t n) {
    using T = typename V::value_type;
    if (n <= v.capacity()) return;
    // Small blocks gain nothing; absurd sizes get the vector's own length_error.
    if (n > (v.max_size() - huge_page_bytes) / sizeof(T) || n * sizeof(T) < huge_page_bytes / 8) {
        v.reserve(n);
        return;
    }
    const std::size_t bytes = (n * sizeof(T) + 32 + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes - 32;
    V fresh;
    fresh.reserve(bytes / sizeof(T));
    advise_huge_block(fresh.data(), fresh.capacity() * sizeof(T));  // before the copy touches a page
    fresh.insert(fresh.end(), v.begin(), v.end());
    v.swap(fresh);
}


/// n zero bytes on fresh anonymous pages, 2 MiB-aligned and advised as huge pages: the kernel
/// hands out zeroed pages, so unlike a vector's zero fill nothing writes the buffer before its
/// first use, and each page is faulted in only when it is first touched (or all at once by
/// prefault(), which another thread may call while this one works in the buffer).
class zeroed_pages {
public:
    zeroed_pages() noexcept = default;
    explicit zeroed_pages(std::size_t n) : size_(n) {
        if (n == 0) return;
#if defined(__linux__)
        if (n > std::numeric_limits<std::size_t>::max() - 2 * huge_page_bytes) throw std::bad_array_new_length();
        const std::size_t rounded = (n + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
        const std::size_t span = rounded + huge_page_bytes;  // room to align the start
        void* m = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) throw std::bad_alloc();
        const auto at = reinterpret_cast<std::uintptr_t>(m);
        const auto start = (at + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
        if (start > at) ::munmap(m, start - at);
        if (at + span > start + rounded) ::munmap(reinterpret_cast<void*>(start + rounded), at + span - (start + rounded));
        data_ = reinterpret_cast<std::byte*>(start);
        mapped_ = rounded;
#if defined(MADV_HUGEPAGE)
        (void)::madvise(data_, mapped_, MADV_HUGEPAGE);  // advice: without THP the pages stay small
#endif
#else
        data_ = static_cast<std::byte*>(std::calloc(n, 1));
        if (data_ == nullptr) throw std::bad_alloc();
#endif
    }
    zeroed_pages(zeroed_pages&& o) noexcept
        : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)), mapped_(std::exchange(o.mapped_, 0)) {}
    zeroed_pages& operator=(zeroed_pages&& o) noexcept {
        if (this != &o) {
            release();
            data_ = std::exchange(o.data_, nullptr);
            size_ = std::exchange(o.size_, 0);
            mapped_ = std::exchange(o.mapped_, 0);
        }
        return *this;
    }
    zeroed_pages(const zeroed_pages&) = delete;
    zeroed_pages& operator=(const zeroed_pages&) = delete;
    ~zeroed_pages() { release(); }

    [[nodiscard]] std::byte* data() noexcept { return data_; }
    [[nodiscard]] const std::byte* data() const noexcept { return data_; }
    [[nodiscard]] std::size_t size() const noexcept { return size_; }

    /// Faults in [from, from + n) of the buffer now (advice: contents never change).
    void prefault([[maybe_unused]] std::size_t from, [[maybe_unused]] std::size_t n) noexcept {
        if (from >= size_) return;
        prefault_pages(data_ + from, std::min(n, size_ - from));
    }

private:
    void release() noexcept {
        if (data_ == nullptr) return;
#if defined(__linux__)
        ::munmap(data_, mapped_);
#else
        std::free(data_);
#endif
        data_ = nullptr;
    }
    std::byte* data_ = nullptr;
    std::size_t size_ = 0, mapped_ = 0;
};

template <class T>
struct huge_page_allocator {
    using value_type = T;

    huge_page_allocator() noexcept = default;
    template <class U>
    huge_page_allocator(const huge_page_allocator<U>&) noexcept {}

    [[nodiscard]] T* allocate(std::size_t n) {
        // Bytes, rounded up to whole huge pages below, must not overflow.
        if (n > (std::numeric_limits<std::size_t>::max() - huge_page_bytes) / sizeof(T)) throw std::bad_array_new_length();
        const std::size_t bytes = n * sizeof(T);
        // Small blocks gain nothing from a huge page and would waste most of one.
        if (bytes < huge_page_bytes) return static_cast<T*>(::operator new(bytes, std::align_val_t{alignof(T)}));
        const std::size_t rounded = (bytes + huge_page_bytes - 1) / huge_page_bytes * huge_page_bytes;
        void* p = std::aligned_alloc(huge_page_bytes, rounded);
        if (p == nullptr) throw std::bad_alloc();
        // Advice only: a kernel without THP refuses it and the pages stay small.
        advise_huge_pages(p, rounded);
        return static_cast<T*>(p);
    }

    void deallocate(T* p, std::size_t n) noexcept {
        if (n * sizeof(T) < huge_page_bytes) ::operator delete(p, std::align_val_t{alignof(T)});
        else std::free(p);
    }

    template <class U>
    bool operator==(const huge_page_allocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace vnnx
