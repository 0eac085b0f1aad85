#pragma once
// How far two integer arrays are apart: what `vnnx compare` and `vnnx demo` print, and the rule
// that decides whether the simulator agrees with the reference.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "vnnx/support/error.hpp"
#include "vnnx/support/npy.hpp"

namespace vnnx::report {

struct array_diff {
    std::size_t elements = 0;
    std::size_t exact = 0;     // equal elements
    std::size_t within1 = 0;   // |diff| <= 1
    std::int64_t max_diff = 0;
    std::size_t first_diff = 0;  // index of the first unequal element (valid when exact < elements)

    [[nodiscard]] double exact_rate() const noexcept { return elements ? static_cast<double>(exact) / static_cast<double>(elements) : 1.0; }
    [[nodiscard]] double within1_rate() const noexcept {
        return elements ? static_cast<double>(within1) / static_cast<double>(elements) : 1.0;
    }
    [[nodiscard]] bool identical() const noexcept { return exact == elements; }
    /// The agreement rule of `vnnx compare`: no element more than 1 LSB off and at least 99.5%
    /// of the elements within 1 LSB (the exact rate is reported beside it).
    [[nodiscard]] bool agree() const noexcept { return max_diff <= 1 && within1 * 1000 >= elements * 995; }
};

/// Element-wise comparison of two integer arrays of the same element count (dtypes may differ:
/// values are compared as integers, so an int8 and an int16 view of the same numbers agree).
[[nodiscard]] inline array_diff compare_arrays(const ndarray& got, const ndarray& want, const std::string& what) {
    if (got.element_count() != want.element_count())
        fail_input(what + ": " + std::to_string(got.element_count()) + " elements against " +
                   std::to_string(want.element_count()) + " in the reference");
    if (got.type == dtype::float32 || want.type == dtype::float32)
        fail_input(what + ": float arrays are not compared in LSBs");
    array_diff d;
    d.elements = got.element_count();
    for (std::size_t i = 0; i < d.elements; ++i) {
        const std::int64_t diff = std::llabs(got.get<std::int64_t>(i) - want.get<std::int64_t>(i));
        if (diff == 0) ++d.exact;
        else if (d.exact == i) d.first_diff = i;
        if (diff <= 1) ++d.within1;
        d.max_diff = std::max(d.max_diff, diff);
    }
    return d;
}

}  // namespace vnnx::report
