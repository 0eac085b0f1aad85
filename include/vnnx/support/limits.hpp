#pragma once
// Limits on what untrusted input may make us allocate or walk (issue 8): a model from a stranger
// gets a clear error_kind::limit error instead of exhausting memory, time or the stack.
// The defaults fit every real model with a wide margin (the largest shared model is 4 MB, has
// under 200 operators, 1 subgraph and needs about 10 MB of activations); a host that needs more
// raises them in code (set_limits) or, for the tool, with environment variables:
//   VNNX_MAX_FILE_BYTES, VNNX_MAX_TENSOR_ELEMENTS, VNNX_MAX_ACTIVATION_BYTES,
//   VNNX_MAX_OPERATORS, VNNX_MAX_NODES, VNNX_MAX_SUBGRAPH_DEPTH.
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <string_view>

#include "vnnx/support/error.hpp"

namespace vnnx {

struct limits {
    std::uint64_t max_file_bytes = std::uint64_t{1} << 30;         // one input file (.tflite, .vnnx, .npy)
    std::uint64_t max_tensor_elements = std::uint64_t{1} << 28;    // one tensor
    std::uint64_t max_activation_bytes = std::uint64_t{1} << 30;   // a simulator's whole memory image
    std::uint64_t max_operators = 100'000;                         // TFLite operators in a model
    std::uint64_t max_nodes = 100'000;                             // VNNX nodes (and layers) in a file
    std::uint64_t max_subgraph_depth = 16;                         // nesting of subgraphs (control flow)
};

namespace detail {
inline limits& limits_storage() {
    static limits l;
    return l;
}

// One environment variable: a decimal count, else the default stays (a typo is not silently 0).
inline void limit_from_env(const char* name, std::uint64_t& value) {
    const char* text = std::getenv(name);
    if (text == nullptr || *text == '\0') return;
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || text[0] == '-' || v == 0)
        fail(error_kind::usage, std::string(name) + "=" + text + ": expected a positive decimal count");
    value = v;
}
}  // namespace detail

/// The limits in force (defaults until set_limits or limits_from_environment changes them).
[[nodiscard]] inline const limits& active_limits() noexcept { return detail::limits_storage(); }

/// Replaces the limits in force for the whole process (call before reading models).
inline void set_limits(const limits& l) noexcept { detail::limits_storage() = l; }

/// The defaults, each raised or lowered by its VNNX_MAX_* environment variable when set.
[[nodiscard]] inline limits limits_from_environment() {
    limits l;
    detail::limit_from_env("VNNX_MAX_FILE_BYTES", l.max_file_bytes);
    detail::limit_from_env("VNNX_MAX_TENSOR_ELEMENTS", l.max_tensor_elements);
    detail::limit_from_env("VNNX_MAX_ACTIVATION_BYTES", l.max_activation_bytes);
    detail::limit_from_env("VNNX_MAX_OPERATORS", l.max_operators);
    detail::limit_from_env("VNNX_MAX_NODES", l.max_nodes);
    detail::limit_from_env("VNNX_MAX_SUBGRAPH_DEPTH", l.max_subgraph_depth);
    return l;
}

/// Throws error_kind::limit when value > max: "<what>: <value> exceeds the limit of <max> (<how>)".
inline void check_limit(std::uint64_t value, std::uint64_t max, std::string_view what, std::string_view env_name) {
    if (value > max)
        fail(error_kind::limit, std::string(what) + ": " + std::to_string(value) + " exceeds the limit of " +
                                    std::to_string(max) + " (raise it with " + std::string(env_name) + ")");
}

/// a * b, or an error_kind::limit error naming `what` when the product does not fit 64 bits.
[[nodiscard]] inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, std::string_view what) {
    std::uint64_t r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        fail(error_kind::limit, std::string(what) + ": size " + std::to_string(a) + " x " + std::to_string(b) +
                                    " overflows 64 bits");
    return r;
}

/// a + b with the same check.
[[nodiscard]] inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, std::string_view what) {
    std::uint64_t r = 0;
    if (__builtin_add_overflow(a, b, &r))
        fail(error_kind::limit, std::string(what) + ": size " + std::to_string(a) + " + " + std::to_string(b) +
                                    " overflows 64 bits");
    return r;
}

/// The element count of a shape: every dimension must be >= 0, the product must not overflow and
/// must stay within max_tensor_elements.
template <class Range>
[[nodiscard]] std::uint64_t checked_element_count(const Range& shape, std::string_view what) {
    std::uint64_t n = 1;
    for (const auto d : shape) {
        if (d < 0) fail_input(std::string(what) + ": dimension " + std::to_string(d) + " is negative");
        n = checked_mul(n, static_cast<std::uint64_t>(d), what);
    }
    check_limit(n, active_limits().max_tensor_elements, std::string(what) + ": element count", "VNNX_MAX_TENSOR_ELEMENTS");
    return n;
}

}  // namespace vnnx
