#pragma once
// An allocator for the simulator's big buffers (the model's memory image): blocks of 2 MiB and
// more are 2 MiB-aligned and, on Linux, advised as transparent huge pages. Kernels that walk
// planes hundreds of KiB apart (a 513x513 resize, an arg-max over 21 planes) then miss the TLB
// far less, where the kernel only grants huge pages on request ("madvise" mode).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <new>

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
