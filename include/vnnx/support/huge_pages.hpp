#pragma once
// An allocator for the simulator's big buffers (the model's memory image): blocks of 2 MiB and
// more are 2 MiB-aligned and, on Linux, advised as transparent huge pages. Kernels that walk
// planes hundreds of KiB apart (a 513x513 resize, an arg-max over 21 planes) then miss the TLB
// far less, where the kernel only grants huge pages on request ("madvise" mode).
#include <cstddef>
#include <cstdlib>
#include <limits>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace vnnx {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

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
#if defined(__linux__) && defined(MADV_HUGEPAGE)
        // Advice only: a kernel without THP refuses it and the pages stay small.
        (void)::madvise(p, rounded, MADV_HUGEPAGE);
#endif
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
