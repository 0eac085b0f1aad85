// vnnx single header, generated from include/ by scripts/gen_single_include.py. Do not edit.
#pragma once
// ---- begin vnnx.hpp
// vnnx: compile int8 TensorFlow Lite models to VectorBlox VNNX and simulate them.
// The umbrella header: everything the library offers.
// ---- begin vnnx/support/atomic_file.hpp
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

// ---- begin vnnx/support/error.hpp
// The one exception type of the library. It carries the kind of failure so that the
// command line can map it to an exit status (1: bad or unsupported input, 2: bad usage).
// No fmt here: the format layer uses it and must build on hosts without fmt.
#include <stdexcept>
#include <utility>

namespace vnnx {

enum class error_kind { bad_input, unsupported, usage, io, limit };

class error : public std::runtime_error {
public:
    error(error_kind kind, std::string what) : std::runtime_error(std::move(what)), kind_(kind) {}
    [[nodiscard]] error_kind kind() const noexcept { return kind_; }
    [[nodiscard]] int exit_code() const noexcept { return kind_ == error_kind::usage ? 2 : 1; }

private:
    error_kind kind_;
};

[[noreturn]] inline void fail(error_kind kind, std::string what) { throw error(kind, std::move(what)); }
[[noreturn]] inline void fail_input(std::string what) { throw error(error_kind::bad_input, std::move(what)); }

}  // namespace vnnx
// ---- end vnnx/support/error.hpp
// ---- begin vnnx/support/limits.hpp
// Limits on what untrusted input may make us allocate or walk (issue 8): a model from a stranger
// gets a clear error_kind::limit error instead of exhausting memory, time or the stack.
// The defaults fit every real model with a wide margin (the largest shared model is 4 MB, has
// under 200 operators, 1 subgraph and needs about 10 MB of activations); a host that needs more
// raises them in code (set_limits) or, for the tool, with environment variables:
//   VNNX_MAX_FILE_BYTES, VNNX_MAX_TENSOR_ELEMENTS, VNNX_MAX_ACTIVATION_BYTES,
//   VNNX_MAX_OPERATORS, VNNX_MAX_NODES, VNNX_MAX_SUBGRAPH_DEPTH.
#include <cstdint>
#include <cstdlib>
#include <limits>


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
// ---- end vnnx/support/limits.hpp

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
// ---- end vnnx/support/atomic_file.hpp
// ---- begin vnnx/support/bytes.hpp
// Little-endian loads and stores through memcpy: correct on any host, never an
// unaligned or type-punned access.
#include <bit>
#include <type_traits>

namespace vnnx {

template <class T>
concept le_scalar = std::is_arithmetic_v<T> || std::is_enum_v<T>;

template <le_scalar T>
inline void store_le(std::byte* dst, T value) noexcept {
    if constexpr (std::endian::native == std::endian::little || sizeof(T) == 1) {
        std::memcpy(dst, &value, sizeof(T));
    } else {
        unsigned char raw[sizeof(T)];
        std::memcpy(raw, &value, sizeof(T));
        for (std::size_t i = 0; i < sizeof(T); ++i) std::memcpy(dst + i, &raw[sizeof(T) - 1 - i], 1);
    }
}

template <le_scalar T>
[[nodiscard]] inline T load_le(const std::byte* src) noexcept {
    T value;
    if constexpr (std::endian::native == std::endian::little || sizeof(T) == 1) {
        std::memcpy(&value, src, sizeof(T));
    } else {
        unsigned char raw[sizeof(T)];
        for (std::size_t i = 0; i < sizeof(T); ++i) std::memcpy(&raw[i], src + sizeof(T) - 1 - i, 1);
        std::memcpy(&value, raw, sizeof(T));
    }
    return value;
}

[[nodiscard]] constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t m) noexcept {
    return (v + m - 1) / m * m;
}

}  // namespace vnnx
// ---- end vnnx/support/bytes.hpp
// ---- begin vnnx/support/npy.hpp
// NumPy .npy files (format versions 1.0, 2.0, 3.0), little-endian, C order, and a small
// n-dimensional array value type. The reader treats its bytes as untrusted: every length,
// the header dictionary and the data size are checked, and failures name the source.


namespace vnnx {

enum class dtype : std::uint8_t { int8, uint8, int16, int32, int64, float32, bool_ };

[[nodiscard]] constexpr std::size_t dtype_size(dtype t) noexcept {
    switch (t) {
        case dtype::int8:
        case dtype::uint8:
        case dtype::bool_: return 1;
        case dtype::int16: return 2;
        case dtype::int32:
        case dtype::float32: return 4;
        case dtype::int64: return 8;
    }
    return 0;
}

[[nodiscard]] constexpr std::string_view dtype_name(dtype t) noexcept {
    switch (t) {
        case dtype::int8: return "int8";
        case dtype::uint8: return "uint8";
        case dtype::int16: return "int16";
        case dtype::int32: return "int32";
        case dtype::int64: return "int64";
        case dtype::float32: return "float32";
        case dtype::bool_: return "bool";
    }
    return "?";
}

/// The dtype that stores C++ type T (bool is stored as one byte, 0 or 1).
template <class T>
constexpr dtype dtype_of() noexcept {
    if constexpr (std::is_same_v<T, std::int8_t>) return dtype::int8;
    else if constexpr (std::is_same_v<T, std::uint8_t>) return dtype::uint8;
    else if constexpr (std::is_same_v<T, std::int16_t>) return dtype::int16;
    else if constexpr (std::is_same_v<T, std::int32_t>) return dtype::int32;
    else if constexpr (std::is_same_v<T, std::int64_t>) return dtype::int64;
    else if constexpr (std::is_same_v<T, float>) return dtype::float32;
    else {
        static_assert(std::is_same_v<T, bool>, "no dtype for this type");
        return dtype::bool_;
    }
}

/// A dense C-order array: element type, shape and the raw little-endian bytes.
struct ndarray {
    vnnx::dtype type = dtype::int8;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> data;

    ndarray() = default;
    ndarray(vnnx::dtype t, std::vector<std::int64_t> s) : type(t), shape(std::move(s)) {
        data.resize(element_count() * dtype_size(type));
    }

    [[nodiscard]] std::size_t element_count() const noexcept {
        std::size_t n = 1;
        for (auto d : shape) n *= static_cast<std::size_t>(d);
        return n;
    }

    /// Element i converted to T (no range check of the conversion; index checked).
    template <class T>
    [[nodiscard]] T get(std::size_t i) const {
        if (i >= element_count()) fail(error_kind::limit, "ndarray: index " + std::to_string(i) + " out of range");
        const std::byte* p = data.data() + i * dtype_size(type);
        switch (type) {
            case dtype::int8: return static_cast<T>(load_le<std::int8_t>(p));
            case dtype::uint8: return static_cast<T>(load_le<std::uint8_t>(p));
            case dtype::bool_: return static_cast<T>(load_le<std::uint8_t>(p) != 0);
            case dtype::int16: return static_cast<T>(load_le<std::int16_t>(p));
            case dtype::int32: return static_cast<T>(load_le<std::int32_t>(p));
            case dtype::int64: return static_cast<T>(load_le<std::int64_t>(p));
            case dtype::float32: return static_cast<T>(load_le<float>(p));
        }
        return T{};
    }

    template <class T>
    void set(std::size_t i, T value) {
        if (i >= element_count()) fail(error_kind::limit, "ndarray: index " + std::to_string(i) + " out of range");
        std::byte* p = data.data() + i * dtype_size(type);
        switch (type) {
            case dtype::int8: store_le(p, static_cast<std::int8_t>(value)); break;
            case dtype::uint8: store_le(p, static_cast<std::uint8_t>(value)); break;
            case dtype::bool_: store_le(p, static_cast<std::uint8_t>(value != T{} ? 1 : 0)); break;
            case dtype::int16: store_le(p, static_cast<std::int16_t>(value)); break;
            case dtype::int32: store_le(p, static_cast<std::int32_t>(value)); break;
            case dtype::int64: store_le(p, static_cast<std::int64_t>(value)); break;
            case dtype::float32: store_le(p, static_cast<float>(value)); break;
        }
    }

    /// Builds an array from typed values (copied little-endian).
    template <class T>
    static ndarray from(std::vector<std::int64_t> shape, std::span<const T> values) {
        ndarray a(dtype_of<T>(), std::move(shape));
        if (values.size() != a.element_count())
            fail(error_kind::bad_input, "ndarray: " + std::to_string(values.size()) + " values for a shape of " +
                                            std::to_string(a.element_count()) + " elements");
        for (std::size_t i = 0; i < values.size(); ++i) a.set(i, values[i]);
        return a;
    }

    friend bool operator==(const ndarray&, const ndarray&) = default;
};

namespace detail::npy {

inline constexpr unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

struct parser {
    std::string_view text;
    std::size_t pos = 0;
    const std::string& source;

    [[noreturn]] void bad(const std::string& rule) const {
        fail_input(source + ": .npy header: " + rule + " (at character " + std::to_string(pos) + ")");
    }
    void skip_ws() {
        while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n' || text[pos] == '\r'))
            ++pos;
    }
    bool eat(char c) {
        skip_ws();
        if (pos < text.size() && text[pos] == c) {
            ++pos;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) bad(std::string("expected '") + c + "'");
    }
    std::string string_literal() {
        skip_ws();
        if (pos >= text.size() || (text[pos] != '\'' && text[pos] != '"')) bad("expected a quoted string");
        const char q = text[pos++];
        std::string out;
        while (pos < text.size() && text[pos] != q) {
            if (text[pos] == '\\') bad("escapes are not supported in strings");
            out.push_back(text[pos++]);
        }
        if (pos >= text.size()) bad("unterminated string");
        ++pos;
        return out;
    }
    bool boolean() {
        skip_ws();
        if (text.substr(pos, 4) == "True") {
            pos += 4;
            return true;
        }
        if (text.substr(pos, 5) == "False") {
            pos += 5;
            return false;
        }
        bad("expected True or False");
    }
    std::int64_t integer() {
        skip_ws();
        const std::size_t start = pos;
        std::uint64_t v = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
            const auto d = static_cast<std::uint64_t>(text[pos] - '0');
            if (v > (static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) - d) / 10)
                bad("shape dimension too large");
            v = v * 10 + d;
            ++pos;
        }
        if (pos == start) bad("expected a non-negative integer in the shape");
        if (pos < text.size() && text[pos] == 'L') ++pos;  // Python 2 long suffix
        return static_cast<std::int64_t>(v);
    }
    std::vector<std::int64_t> shape_tuple() {
        expect('(');
        std::vector<std::int64_t> dims;
        if (eat(')')) return dims;
        for (;;) {
            dims.push_back(integer());
            if (eat(')')) break;
            expect(',');
            if (eat(')')) break;
            if (dims.size() > 32) bad("more than 32 dimensions");
        }
        return dims;
    }
};

inline dtype parse_descr(const std::string& d, const std::string& source) {
    // One-byte types may carry any byte-order mark; wider ones must be little-endian.
    if (d.size() == 3) {
        const char order = d[0];
        const std::string_view kind = std::string_view(d).substr(1);
        const bool any = order == '|' || order == '<' || order == '>' || order == '=';
        const bool little = order == '<' || (order == '=' && std::endian::native == std::endian::little);
        if (any && kind == "i1") return dtype::int8;
        if (any && kind == "u1") return dtype::uint8;
        if (any && kind == "b1") return dtype::bool_;
        if (little && kind == "i2") return dtype::int16;
        if (little && kind == "i4") return dtype::int32;
        if (little && kind == "i8") return dtype::int64;
        if (little && kind == "f4") return dtype::float32;
    }
    fail(error_kind::unsupported, source + ": .npy dtype '" + d +
                                      "' is not supported (int8, uint8, int16, int32, int64, float32, bool; "
                                      "little-endian)");
}

inline std::string descr_of(dtype t) {
    switch (t) {
        case dtype::int8: return "|i1";
        case dtype::uint8: return "|u1";
        case dtype::bool_: return "|b1";
        case dtype::int16: return "<i2";
        case dtype::int32: return "<i4";
        case dtype::int64: return "<i8";
        case dtype::float32: return "<f4";
    }
    return "?";
}

}  // namespace detail::npy

/// Parses .npy bytes; `source` names them in error messages.
[[nodiscard]] inline ndarray parse_npy(std::span<const std::byte> bytes, const std::string& source) {
    using namespace detail::npy;
    if (bytes.size() < 10) fail_input(source + ": not a .npy file (shorter than the 10-byte preamble)");
    for (std::size_t i = 0; i < 6; ++i)
        if (std::to_integer<unsigned char>(bytes[i]) != magic[i])
            fail_input(source + ": not a .npy file (bad magic string)");
    const auto major = std::to_integer<unsigned>(bytes[6]);
    std::size_t header_len = 0;
    std::size_t header_start = 0;
    if (major == 1) {
        header_len = load_le<std::uint16_t>(bytes.data() + 8);
        header_start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) fail_input(source + ": .npy version 2/3 preamble truncated");
        header_len = load_le<std::uint32_t>(bytes.data() + 8);
        header_start = 12;
    } else {
        fail(error_kind::unsupported, source + ": .npy format version " + std::to_string(major) +
                                          " is not supported (1, 2 or 3)");
    }
    if (header_len > bytes.size() - header_start)
        fail_input(source + ": .npy header length " + std::to_string(header_len) + " exceeds the file size " +
                   std::to_string(bytes.size()));
    const std::string text(reinterpret_cast<const char*>(bytes.data() + header_start), header_len);
    parser p{text, 0, source};
    p.expect('{');
    bool have_descr = false, have_order = false, have_shape = false;
    std::string descr;
    bool fortran = false;
    std::vector<std::int64_t> shape;
    while (!p.eat('}')) {
        const std::string key = p.string_literal();
        p.expect(':');
        if (key == "descr") {
            if (have_descr) p.bad("duplicate key 'descr'");
            descr = p.string_literal();
            have_descr = true;
        } else if (key == "fortran_order") {
            if (have_order) p.bad("duplicate key 'fortran_order'");
            fortran = p.boolean();
            have_order = true;
        } else if (key == "shape") {
            if (have_shape) p.bad("duplicate key 'shape'");
            shape = p.shape_tuple();
            have_shape = true;
        } else {
            p.bad("unknown key '" + key + "'");
        }
        if (p.eat('}')) break;
        p.expect(',');
    }
    p.skip_ws();
    if (p.pos != text.size()) p.bad("unexpected text after the dictionary");
    if (!have_descr || !have_order || !have_shape)
        p.bad("the dictionary must hold 'descr', 'fortran_order' and 'shape'");
    const dtype type = parse_descr(descr, source);
    if (fortran) fail(error_kind::unsupported, source + ": .npy arrays in Fortran order are not supported");

    std::uint64_t count = 1;
    for (auto d : shape) {
        if (d != 0 && count > std::numeric_limits<std::uint64_t>::max() / static_cast<std::uint64_t>(d))
            fail_input(source + ": .npy shape element count overflows");
        count *= static_cast<std::uint64_t>(d);
    }
    const std::size_t data_start = header_start + header_len;
    const std::uint64_t have = bytes.size() - data_start;
    if (count > have / dtype_size(type) || count * dtype_size(type) != have)
        fail_input(source + ": .npy data holds " + std::to_string(have) + " bytes, the header's shape and dtype " +
                   std::string(dtype_name(type)) + " need " +
                   (count > have ? std::string("more") : std::to_string(count * dtype_size(type))));
    ndarray a;
    a.type = type;
    a.shape = std::move(shape);
    a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
    return a;
}

[[nodiscard]] inline ndarray read_npy(const std::filesystem::path& path) {
    const auto bytes = read_file(path);
    return parse_npy(bytes, path.string());
}

/// Serializes to .npy bytes: version 1.0 when the header fits, else 2.0; the header is
/// padded so that the data starts at a multiple of 64 bytes, as NumPy does.
[[nodiscard]] inline std::vector<std::byte> to_npy_bytes(const ndarray& a) {
    using namespace detail::npy;
    if (a.data.size() != a.element_count() * dtype_size(a.type))
        fail(error_kind::bad_input, "ndarray: " + std::to_string(a.data.size()) + " data bytes do not match its shape");
    std::string dict = "{'descr': '" + descr_of(a.type) + "', 'fortran_order': False, 'shape': (";
    for (std::size_t i = 0; i < a.shape.size(); ++i) {
        if (a.shape[i] < 0) fail(error_kind::bad_input, "ndarray: negative dimension");
        dict += std::to_string(a.shape[i]);
        if (a.shape.size() == 1 || i + 1 < a.shape.size()) dict += a.shape.size() == 1 ? "," : ", ";
    }
    dict += "), }";
    std::size_t preamble = 10;
    std::size_t total = preamble + dict.size() + 1;
    if (round_up(total, 64) - preamble > 0xFFFF) {
        preamble = 12;
        total = preamble + dict.size() + 1;
    }
    const std::size_t header_len = round_up(total, 64) - preamble;
    dict.append(header_len - dict.size() - 1, ' ');
    dict.push_back('\n');
    std::vector<std::byte> out(preamble + header_len + a.data.size());
    for (std::size_t i = 0; i < 6; ++i) out[i] = std::byte{magic[i]};
    out[6] = std::byte{static_cast<unsigned char>(preamble == 10 ? 1 : 2)};
    out[7] = std::byte{0};
    if (preamble == 10) store_le(out.data() + 8, static_cast<std::uint16_t>(header_len));
    else store_le(out.data() + 8, static_cast<std::uint32_t>(header_len));
    std::memcpy(out.data() + preamble, dict.data(), dict.size());
    if (!a.data.empty()) std::memcpy(out.data() + preamble + header_len, a.data.data(), a.data.size());
    return out;
}

inline void write_npy(const std::filesystem::path& path, const ndarray& a) {
    write_file_atomic(path, to_npy_bytes(a));
}

}  // namespace vnnx
// ---- end vnnx/support/npy.hpp
// ---- begin vnnx/meta/fixed_string.hpp
// A string usable as a template argument (C++20 class-type non-type parameter), so that a
// field can be named at compile time: offset_of_v<vnnx_tensor_t, "direct">.
#include <algorithm>

namespace vnnx::meta {

template <std::size_t N>
struct fixed_string {
    char data[N]{};  // includes the terminating NUL

    constexpr fixed_string(const char (&s)[N]) noexcept { std::copy_n(s, N, data); }

    [[nodiscard]] constexpr std::string_view view() const noexcept { return {data, N - 1}; }
    [[nodiscard]] constexpr std::size_t size() const noexcept { return N - 1; }
    constexpr operator std::string_view() const noexcept { return view(); }

    template <std::size_t M>
    constexpr bool operator==(const fixed_string<M>& o) const noexcept { return view() == o.view(); }
};

template <std::size_t N>
fixed_string(const char (&)[N]) -> fixed_string<N>;

}  // namespace vnnx::meta
// ---- end vnnx/meta/fixed_string.hpp
// ---- begin vnnx/meta/reflect.hpp
// Reflection over records whose fields are listed once with BOOST_HANA_DEFINE_STRUCT.
// From that list: the serialized size of a record (no padding anywhere, as in the VNNX
// format), every field's offset and size, and lookup by name at compile time.
//
// Serialized size of a field type:
//   arithmetic or enum         sizeof
//   std::array<E, N>           N * size(E)
//   a type with a static `serialized_size` member (offsets, union storage)
//   a reflected (Hana) struct  sum of its fields
#include <array>

#include <boost/hana/accessors.hpp>
#include <boost/hana/define_struct.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/length.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>


namespace vnnx::meta {

namespace hana = boost::hana;

template <class T>
struct is_std_array : std::false_type {};
template <class E, std::size_t N>
struct is_std_array<std::array<E, N>> : std::true_type {};

template <class T>
concept reflected = hana::Struct<T>::value;

template <class T>
concept has_serialized_size = requires { { T::serialized_size } -> std::convertible_to<std::size_t>; };

template <class T>
constexpr std::size_t serialized_size_of();

/// Calls f(name, member type tag, accessor) for every field of a reflected struct, in order.
template <reflected T, class F>
constexpr void for_each_field(F&& f) {
    hana::for_each(hana::accessors<T>(), [&](auto pair) {
        // The key is an empty hana::string: its type alone carries the name.
        using key_t = std::remove_cvref_t<decltype(hana::first(pair))>;
        constexpr std::string_view name = hana::to<const char*>(key_t{});
        using field_t = std::remove_cvref_t<decltype(hana::second(pair)(std::declval<T&>()))>;
        f(name, std::type_identity<field_t>{}, hana::second(pair));
    });
}

template <class T>
constexpr std::size_t serialized_size_of() {
    if constexpr (has_serialized_size<T>) {
        return T::serialized_size;
    } else if constexpr (std::is_arithmetic_v<T> || std::is_enum_v<T>) {
        return sizeof(T);
    } else if constexpr (is_std_array<T>::value) {
        return std::tuple_size_v<T> * serialized_size_of<typename T::value_type>();
    } else if constexpr (reflected<T>) {
        std::size_t total = 0;
        for_each_field<T>([&](std::string_view, auto tag, auto) {
            total += serialized_size_of<typename decltype(tag)::type>();
        });
        return total;
    } else {
        static_assert(sizeof(T) == 0, "meta::serialized_size_v: type has no serialized form");
        return 0;
    }
}

/// Bytes a value of T takes in the file.
template <class T>
inline constexpr std::size_t serialized_size_v = serialized_size_of<T>();

/// One field as it sits in the serialized record.
struct field_info {
    std::string_view name;
    std::size_t offset;
    std::size_t size;
};

template <reflected T>
inline constexpr std::size_t field_count_v = decltype(hana::length(hana::accessors<T>()))::value;

namespace detail {
template <reflected T>
constexpr auto make_fields() {
    std::array<field_info, field_count_v<T>> out{};
    std::size_t i = 0, offset = 0;
    for_each_field<T>([&](std::string_view name, auto tag, auto) {
        const std::size_t size = serialized_size_of<typename decltype(tag)::type>();
        out[i++] = field_info{name, offset, size};
        offset += size;
    });
    return out;
}

template <reflected T>
consteval std::size_t find_field(std::string_view name) {
    const auto fields = make_fields<T>();
    for (std::size_t i = 0; i < fields.size(); ++i)
        if (fields[i].name == name) return i;
    // Not a constant expression: naming a field that does not exist fails to compile here.
    throw "meta::offset_of_v: no field of that name";
}
}  // namespace detail

/// Every field of T with its serialized offset and size, in declaration order.
template <reflected T>
inline constexpr auto fields_v = detail::make_fields<T>();

/// Serialized offset of field `Name` of T; a misspelt name does not compile.
template <reflected T, fixed_string Name>
inline constexpr std::size_t offset_of_v = fields_v<T>[detail::find_field<T>(Name.view())].offset;

/// Serialized size of field `Name` of T.
template <reflected T, fixed_string Name>
inline constexpr std::size_t field_size_v = fields_v<T>[detail::find_field<T>(Name.view())].size;

}  // namespace vnnx::meta
// ---- end vnnx/meta/reflect.hpp
// ---- begin vnnx/meta/set.hpp
// Compile-time sets: operator traits state their constraints (allowed activations, paddings,
// axes, element types) as sets, and the check is a constant expression.

namespace vnnx::meta {

/// A set of values known at compile time. Duplicates are rejected so that size() is honest.
template <auto... Vs>
struct value_set {
    static constexpr std::size_t size = sizeof...(Vs);

    template <class V>
    [[nodiscard]] static constexpr bool contains(const V& v) noexcept {
        return ((Vs == v) || ... || false);
    }

    /// Calls f(v) for every element, in declaration order.
    template <class F>
    static constexpr void for_each(F&& f) { (f(Vs), ...); }

private:
    static constexpr bool unique() noexcept {
        constexpr std::size_t n = sizeof...(Vs);
        if constexpr (n < 2) {
            return true;
        } else {
            const std::common_type_t<decltype(Vs)...> a[n]{Vs...};
            for (std::size_t i = 0; i < n; ++i)
                for (std::size_t j = i + 1; j < n; ++j)
                    if (a[i] == a[j]) return false;
            return true;
        }
    }
    static_assert(unique(), "meta::value_set: duplicate value");
};

/// A set of types known at compile time.
template <class... Ts>
struct set {
    static constexpr std::size_t size = sizeof...(Ts);

    template <class T>
    static constexpr bool contains = (std::is_same_v<T, Ts> || ... || false);

    /// Position of T in the list (size when absent).
    template <class T>
    static constexpr std::size_t index_of = [] {
        std::size_t i = 0;
        ((std::is_same_v<T, Ts> ? false : (++i, true)) && ...);
        return i;
    }();

    template <class F>
    static constexpr void for_each(F&& f) { (f(std::type_identity<Ts>{}), ...); }
};

}  // namespace vnnx::meta
// ---- end vnnx/meta/set.hpp
// ---- begin vnnx/meta/struct.hpp
// VNNX_META_STRUCT(name, (type, field)...): declares the fields and makes the struct a
// Boost.Hana Struct, like BOOST_HANA_DEFINE_STRUCT but without its 40-field limit.
// A field type must not contain a top-level comma (use an alias: i32s<6>, chars<48>).
#include <boost/hana/pair.hpp>
#include <boost/hana/tuple.hpp>

// ---- begin vnnx/meta/pp.hpp
// Preprocessor iteration without a fixed argument limit (C++20 __VA_OPT__): the VNNX node
// record has 49 fields, more than BOOST_HANA_DEFINE_STRUCT's 40.

#define VNNX_PP_PARENS ()
// 4^4 = 256 rescans: enough for 256 list items.
#define VNNX_PP_EXPAND(...) VNNX_PP_EXPAND3(VNNX_PP_EXPAND3(VNNX_PP_EXPAND3(VNNX_PP_EXPAND3(__VA_ARGS__))))
#define VNNX_PP_EXPAND3(...) VNNX_PP_EXPAND2(VNNX_PP_EXPAND2(VNNX_PP_EXPAND2(VNNX_PP_EXPAND2(__VA_ARGS__))))
#define VNNX_PP_EXPAND2(...) VNNX_PP_EXPAND1(VNNX_PP_EXPAND1(VNNX_PP_EXPAND1(VNNX_PP_EXPAND1(__VA_ARGS__))))
#define VNNX_PP_EXPAND1(...) __VA_ARGS__

/// VNNX_PP_FOR_EACH(m, data, a, b, c) -> m(data, a) m(data, b) m(data, c)
#define VNNX_PP_FOR_EACH(macro, data, ...) \
    __VA_OPT__(VNNX_PP_EXPAND(VNNX_PP_FOR_EACH_STEP(macro, data, __VA_ARGS__)))
#define VNNX_PP_FOR_EACH_STEP(macro, data, first, ...) \
    macro(data, first) __VA_OPT__(VNNX_PP_FOR_EACH_AGAIN VNNX_PP_PARENS(macro, data, __VA_ARGS__))
#define VNNX_PP_FOR_EACH_AGAIN() VNNX_PP_FOR_EACH_STEP
// ---- end vnnx/meta/pp.hpp

namespace vnnx::meta::detail {
template <class... Pairs>
constexpr auto accessor_tuple(int, Pairs... pairs) {
    return boost::hana::make_tuple(pairs...);
}
}  // namespace vnnx::meta::detail

#define VNNX_META_DECLARE_I(type, name) type name;
#define VNNX_META_DECLARE(self, field) VNNX_META_DECLARE_I field
#define VNNX_META_ACCESSOR_I(self, type, name)                                         \
    , ::boost::hana::make_pair(BOOST_HANA_STRING(#name),                                \
                               [](auto&& s) -> decltype(auto) { return (static_cast<decltype(s)&&>(s).name); })
#define VNNX_META_ACCESSOR_J(...) VNNX_META_ACCESSOR_I(__VA_ARGS__)
#define VNNX_META_ACCESSOR(self, field) VNNX_META_ACCESSOR_J(self, VNNX_META_UNPAREN field)
#define VNNX_META_UNPAREN(...) __VA_ARGS__

#define VNNX_META_STRUCT(self, ...)                                                    \
    VNNX_PP_FOR_EACH(VNNX_META_DECLARE, self, __VA_ARGS__)                             \
    struct hana_accessors_impl {                                                       \
        static constexpr auto apply() {                                                \
            return ::vnnx::meta::detail::accessor_tuple(0 VNNX_PP_FOR_EACH(VNNX_META_ACCESSOR, self, __VA_ARGS__)); \
        }                                                                              \
    }
// ---- end vnnx/meta/struct.hpp
// ---- begin vnnx/meta/union.hpp
// A union described as a list of member types. Each member is a reflected struct that names
// itself (`member_name`); the union's size is the largest member's serialized size.


namespace vnnx::meta {

template <class T>
concept union_member = reflected<T> && requires { { T::member_name } -> std::convertible_to<std::string_view>; };

template <union_member... Members>
struct union_of {
    using members = set<Members...>;
    static constexpr std::size_t member_count = sizeof...(Members);
    static constexpr std::size_t size = std::max({serialized_size_v<Members>...});
    static constexpr std::array<std::string_view, member_count> names{Members::member_name...};

    template <class M>
    static constexpr bool holds = members::template contains<M>;

    /// Index of the member called `name`, or member_count.
    [[nodiscard]] static constexpr std::size_t index_of_name(std::string_view name) noexcept {
        for (std::size_t i = 0; i < member_count; ++i)
            if (names[i] == name) return i;
        return member_count;
    }

    template <class F>
    static constexpr void for_each_member(F&& f) { members::for_each(f); }
};

}  // namespace vnnx::meta
// ---- end vnnx/meta/union.hpp
// ---- begin vnnx/format/builtin_operator.hpp
// TensorFlow Lite's BuiltinOperator codes (0..205). The VNNX format stores them as the `type`
// of nodes and layers, next to its own codes 300..306 (vnnx/format/enums.hpp). One list,
// expanded into the enum and its name table.
#include <optional>

// X(name, code)
#define VNNX_BUILTIN_OPERATORS(X) \
    X(ADD, 0) X(AVERAGE_POOL_2D, 1) X(CONCATENATION, 2) X(CONV_2D, 3) \
    X(DEPTHWISE_CONV_2D, 4) X(DEPTH_TO_SPACE, 5) X(DEQUANTIZE, 6) X(EMBEDDING_LOOKUP, 7) \
    X(FLOOR, 8) X(FULLY_CONNECTED, 9) X(HASHTABLE_LOOKUP, 10) X(L2_NORMALIZATION, 11) \
    X(L2_POOL_2D, 12) X(LOCAL_RESPONSE_NORMALIZATION, 13) X(LOGISTIC, 14) X(LSH_PROJECTION, 15) \
    X(LSTM, 16) X(MAX_POOL_2D, 17) X(MUL, 18) X(RELU, 19) \
    X(RELU_N1_TO_1, 20) X(RELU6, 21) X(RESHAPE, 22) X(RESIZE_BILINEAR, 23) \
    X(RNN, 24) X(SOFTMAX, 25) X(SPACE_TO_DEPTH, 26) X(SVDF, 27) \
    X(TANH, 28) X(CONCAT_EMBEDDINGS, 29) X(SKIP_GRAM, 30) X(CALL, 31) \
    X(CUSTOM, 32) X(EMBEDDING_LOOKUP_SPARSE, 33) X(PAD, 34) X(UNIDIRECTIONAL_SEQUENCE_RNN, 35) \
    X(GATHER, 36) X(BATCH_TO_SPACE_ND, 37) X(SPACE_TO_BATCH_ND, 38) X(TRANSPOSE, 39) \
    X(MEAN, 40) X(SUB, 41) X(DIV, 42) X(SQUEEZE, 43) \
    X(UNIDIRECTIONAL_SEQUENCE_LSTM, 44) X(STRIDED_SLICE, 45) X(BIDIRECTIONAL_SEQUENCE_RNN, 46) X(EXP, 47) \
    X(TOPK_V2, 48) X(SPLIT, 49) X(LOG_SOFTMAX, 50) X(DELEGATE, 51) \
    X(BIDIRECTIONAL_SEQUENCE_LSTM, 52) X(CAST, 53) X(PRELU, 54) X(MAXIMUM, 55) \
    X(ARG_MAX, 56) X(MINIMUM, 57) X(LESS, 58) X(NEG, 59) \
    X(PADV2, 60) X(GREATER, 61) X(GREATER_EQUAL, 62) X(LESS_EQUAL, 63) \
    X(SELECT, 64) X(SLICE, 65) X(SIN, 66) X(TRANSPOSE_CONV, 67) \
    X(SPARSE_TO_DENSE, 68) X(TILE, 69) X(EXPAND_DIMS, 70) X(EQUAL, 71) \
    X(NOT_EQUAL, 72) X(LOG, 73) X(SUM, 74) X(SQRT, 75) \
    X(RSQRT, 76) X(SHAPE, 77) X(POW, 78) X(ARG_MIN, 79) \
    X(FAKE_QUANT, 80) X(REDUCE_PROD, 81) X(REDUCE_MAX, 82) X(PACK, 83) \
    X(LOGICAL_OR, 84) X(ONE_HOT, 85) X(LOGICAL_AND, 86) X(LOGICAL_NOT, 87) \
    X(UNPACK, 88) X(REDUCE_MIN, 89) X(FLOOR_DIV, 90) X(REDUCE_ANY, 91) \
    X(SQUARE, 92) X(ZEROS_LIKE, 93) X(FILL, 94) X(FLOOR_MOD, 95) \
    X(RANGE, 96) X(RESIZE_NEAREST_NEIGHBOR, 97) X(LEAKY_RELU, 98) X(SQUARED_DIFFERENCE, 99) \
    X(MIRROR_PAD, 100) X(ABS, 101) X(SPLIT_V, 102) X(UNIQUE, 103) \
    X(CEIL, 104) X(REVERSE_V2, 105) X(ADD_N, 106) X(GATHER_ND, 107) \
    X(COS, 108) X(WHERE, 109) X(RANK, 110) X(ELU, 111) \
    X(REVERSE_SEQUENCE, 112) X(MATRIX_DIAG, 113) X(QUANTIZE, 114) X(MATRIX_SET_DIAG, 115) \
    X(ROUND, 116) X(HARD_SWISH, 117) X(IF, 118) X(WHILE, 119) \
    X(NON_MAX_SUPPRESSION_V4, 120) X(NON_MAX_SUPPRESSION_V5, 121) X(SCATTER_ND, 122) X(SELECT_V2, 123) \
    X(DENSIFY, 124) X(SEGMENT_SUM, 125) X(BATCH_MATMUL, 126) X(PLACEHOLDER_FOR_GREATER_OP_CODES, 127) \
    X(CUMSUM, 128) X(CALL_ONCE, 129) X(BROADCAST_TO, 130) X(RFFT2D, 131) \
    X(CONV_3D, 132) X(IMAG, 133) X(REAL, 134) X(COMPLEX_ABS, 135) \
    X(HASHTABLE, 136) X(HASHTABLE_FIND, 137) X(HASHTABLE_IMPORT, 138) X(HASHTABLE_SIZE, 139) \
    X(REDUCE_ALL, 140) X(CONV_3D_TRANSPOSE, 141) X(VAR_HANDLE, 142) X(READ_VARIABLE, 143) \
    X(ASSIGN_VARIABLE, 144) X(BROADCAST_ARGS, 145) X(RANDOM_STANDARD_NORMAL, 146) X(BUCKETIZE, 147) \
    X(RANDOM_UNIFORM, 148) X(MULTINOMIAL, 149) X(GELU, 150) X(DYNAMIC_UPDATE_SLICE, 151) \
    X(RELU_0_TO_1, 152) X(UNSORTED_SEGMENT_PROD, 153) X(UNSORTED_SEGMENT_MAX, 154) X(UNSORTED_SEGMENT_SUM, 155) \
    X(ATAN2, 156) X(UNSORTED_SEGMENT_MIN, 157) X(SIGN, 158) X(BITCAST, 159) \
    X(BITWISE_XOR, 160) X(RIGHT_SHIFT, 161) X(STABLEHLO_LOGISTIC, 162) X(STABLEHLO_ADD, 163) \
    X(STABLEHLO_DIVIDE, 164) X(STABLEHLO_MULTIPLY, 165) X(STABLEHLO_MAXIMUM, 166) X(STABLEHLO_RESHAPE, 167) \
    X(STABLEHLO_CLAMP, 168) X(STABLEHLO_CONCATENATE, 169) X(STABLEHLO_BROADCAST_IN_DIM, 170) X(STABLEHLO_CONVOLUTION, 171) \
    X(STABLEHLO_SLICE, 172) X(STABLEHLO_CUSTOM_CALL, 173) X(STABLEHLO_REDUCE, 174) X(STABLEHLO_ABS, 175) \
    X(STABLEHLO_AND, 176) X(STABLEHLO_COSINE, 177) X(STABLEHLO_EXPONENTIAL, 178) X(STABLEHLO_FLOOR, 179) \
    X(STABLEHLO_LOG, 180) X(STABLEHLO_MINIMUM, 181) X(STABLEHLO_NEGATE, 182) X(STABLEHLO_OR, 183) \
    X(STABLEHLO_POWER, 184) X(STABLEHLO_REMAINDER, 185) X(STABLEHLO_RSQRT, 186) X(STABLEHLO_SELECT, 187) \
    X(STABLEHLO_SUBTRACT, 188) X(STABLEHLO_TANH, 189) X(STABLEHLO_SCATTER, 190) X(STABLEHLO_COMPARE, 191) \
    X(STABLEHLO_CONVERT, 192) X(STABLEHLO_DYNAMIC_SLICE, 193) X(STABLEHLO_DYNAMIC_UPDATE_SLICE, 194) X(STABLEHLO_PAD, 195) \
    X(STABLEHLO_IOTA, 196) X(STABLEHLO_DOT_GENERAL, 197) X(STABLEHLO_REDUCE_WINDOW, 198) X(STABLEHLO_SORT, 199) \
    X(STABLEHLO_WHILE, 200) X(STABLEHLO_GATHER, 201) X(STABLEHLO_TRANSPOSE, 202) X(DILATE, 203) \
    X(STABLEHLO_RNG_BIT_GENERATOR, 204) X(REDUCE_WINDOW, 205) \

namespace vnnx {

enum class builtin_operator : std::int32_t {
#define VNNX_X(name, code) name = code,
    VNNX_BUILTIN_OPERATORS(VNNX_X)
#undef VNNX_X
};

inline constexpr std::int32_t builtin_operator_count = 206;

namespace detail {
inline constexpr std::array<std::string_view, builtin_operator_count> builtin_operator_names{
#define VNNX_X(name, code) #name,
    VNNX_BUILTIN_OPERATORS(VNNX_X)
#undef VNNX_X
};
}  // namespace detail

/// The TFLite spelling of a builtin code ("CONV_2D"), or "" for a code outside 0..205.
[[nodiscard]] constexpr std::string_view builtin_name(std::int32_t code) noexcept {
    return code >= 0 && code < builtin_operator_count ? detail::builtin_operator_names[static_cast<std::size_t>(code)]
                                                      : std::string_view{};
}
[[nodiscard]] constexpr std::string_view builtin_name(builtin_operator op) noexcept {
    return builtin_name(static_cast<std::int32_t>(op));
}

[[nodiscard]] constexpr std::optional<builtin_operator> builtin_from_name(std::string_view name) noexcept {
    for (std::int32_t i = 0; i < builtin_operator_count; ++i)
        if (detail::builtin_operator_names[static_cast<std::size_t>(i)] == name) return static_cast<builtin_operator>(i);
    return std::nullopt;
}

static_assert(builtin_name(builtin_operator::GELU) == "GELU" && static_cast<int>(builtin_operator::GELU) == 150);
static_assert(static_cast<int>(builtin_operator::DILATE) == 203);

}  // namespace vnnx
// ---- end vnnx/format/builtin_operator.hpp
// ---- begin vnnx/format/c_check.hpp
// Firmware-host check: a firmware build that has its own copy of vnnx-types.h can prove,
// at compile time, that its structs have exactly our layout:
//
//   VNNX_CHECK_C_STRUCT(vnnx_tensor_t, vnnx::format::vnnx_tensor_t, type, shape, dims, ...);
//   VNNX_CHECK_C_UNION_MEMBER(vnnx_layer_t, vnnx::format::vnnx_layer_t, Conv2DOptions,
//                             vnnx::format::layer_options::Conv2DOptions, kernels, ...);
//
// Each named field's offsetof and size must equal ours, and sizeof the whole struct must equal
// our serialized size. Only the standard library and Boost.Hana are needed.


#define VNNX_CHECK_C_FIELD_(args, field) VNNX_CHECK_C_FIELD_I_(VNNX_CHECK_C_UNPAREN_ args, field)
#define VNNX_CHECK_C_UNPAREN_(...) __VA_ARGS__
#define VNNX_CHECK_C_FIELD_I_(...) VNNX_CHECK_C_FIELD_J_(__VA_ARGS__)
#define VNNX_CHECK_C_FIELD_J_(c_type, ours, field)                                                  \
    static_assert(offsetof(c_type, field) == ::vnnx::meta::offset_of_v<ours, #field>,               \
                  "offsetof(" #c_type ", " #field ") differs from the VNNX layout");                \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->field) == ::vnnx::meta::field_size_v<ours, #field>, \
                  "sizeof(" #c_type "::" #field ") differs from the VNNX layout");

/// Asserts sizeof(c_type) and the offset and size of every listed field against record `ours`.
#define VNNX_CHECK_C_STRUCT(c_type, ours, ...)                                                      \
    static_assert(sizeof(c_type) == ::vnnx::meta::serialized_size_v<ours>,                          \
                  "sizeof(" #c_type ") differs from the VNNX layout");                              \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_FIELD_, (c_type, ours), __VA_ARGS__)                               \
    static_assert(true)

#define VNNX_CHECK_C_MEMBER_FIELD_(args, field) VNNX_CHECK_C_MEMBER_FIELD_I_(VNNX_CHECK_C_UNPAREN_ args, field)
#define VNNX_CHECK_C_MEMBER_FIELD_I_(...) VNNX_CHECK_C_MEMBER_FIELD_J_(__VA_ARGS__)
#define VNNX_CHECK_C_MEMBER_FIELD_J_(c_type, member, ours_member, field)                            \
    static_assert(offsetof(c_type, member.field) - offsetof(c_type, member) ==                      \
                      ::vnnx::meta::offset_of_v<ours_member, #field>,                               \
                  "offset of " #c_type "::" #member "." #field " differs from the VNNX layout");     \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->member.field) ==                            \
                      ::vnnx::meta::field_size_v<ours_member, #field>,                              \
                  "sizeof(" #c_type "::" #member "." #field ") differs from the VNNX layout");

/// Asserts that union member `member` of c_type sits where record `ours` keeps its union
/// (field `options`), has the size of `ours_member`, and that every listed field matches.
#define VNNX_CHECK_C_UNION_MEMBER(c_type, ours, member, ours_member, ...)                           \
    static_assert(offsetof(c_type, member) == ::vnnx::meta::offset_of_v<ours, "options">,           \
                  "offsetof(" #c_type ", " #member ") differs from the VNNX union offset");         \
    static_assert(sizeof(static_cast<c_type*>(nullptr)->member) == ::vnnx::meta::serialized_size_v<ours_member>, \
                  "sizeof(" #c_type "::" #member ") differs from the VNNX layout");                 \
    VNNX_PP_FOR_EACH(VNNX_CHECK_C_MEMBER_FIELD_, (c_type, member, ours_member), __VA_ARGS__)        \
    static_assert(true)
// ---- end vnnx/format/c_check.hpp
// ---- begin vnnx/format/codec.hpp
// Little-endian serialization of reflected records: field after field, no padding, every
// scalar through store_le/load_le (memcpy), never by casting a packed struct.


namespace vnnx::format {

/// `obj_off_t`: a byte offset from the first byte of the graph header; all ones = absent.
/// A type of its own so that the reader can find and check every offset field.
struct obj_off_t {
    static constexpr std::uint64_t absent_value = ~std::uint64_t{0};
    static constexpr std::size_t serialized_size = 8;

    std::uint64_t value = absent_value;  // the SDK's default for an unset offset is -1

    [[nodiscard]] constexpr bool absent() const noexcept { return value == absent_value; }
    constexpr bool operator==(const obj_off_t&) const = default;

    void encode_to(std::byte* dst) const noexcept { store_le<std::uint64_t>(dst, value); }
    static obj_off_t decode_from(const std::byte* src) noexcept { return {load_le<std::uint64_t>(src)}; }
};

inline constexpr obj_off_t absent_offset{};
[[nodiscard]] constexpr obj_off_t offset_at(std::uint64_t v) noexcept { return obj_off_t{v}; }

template <class T>
concept custom_codec = requires(const T& v, std::byte* dst, const std::byte* src) {
    v.encode_to(dst);
    { T::decode_from(src) } -> std::same_as<T>;
};

/// Writes v's serialized form (meta::serialized_size_v<T> bytes) at dst.
template <class T>
void encode(std::byte* dst, const T& v) noexcept {
    if constexpr (custom_codec<T>) {
        v.encode_to(dst);
    } else if constexpr (le_scalar<T>) {
        store_le<T>(dst, v);
    } else if constexpr (meta::is_std_array<T>::value) {
        constexpr std::size_t step = meta::serialized_size_v<typename T::value_type>;
        for (std::size_t i = 0; i < v.size(); ++i) encode(dst + i * step, v[i]);
    } else {
        static_assert(meta::reflected<T>, "format::encode: type has no serialized form");
        constexpr auto fields = meta::fields_v<T>;
        std::size_t i = 0;
        meta::for_each_field<T>([&](std::string_view, auto, auto get) { encode(dst + fields[i++].offset, get(v)); });
    }
}

/// Reads a T from its serialized form at src (meta::serialized_size_v<T> bytes).
template <class T>
[[nodiscard]] T decode(const std::byte* src) noexcept {
    if constexpr (custom_codec<T>) {
        return T::decode_from(src);
    } else if constexpr (le_scalar<T>) {
        return load_le<T>(src);
    } else if constexpr (meta::is_std_array<T>::value) {
        constexpr std::size_t step = meta::serialized_size_v<typename T::value_type>;
        T out{};
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = decode<typename T::value_type>(src + i * step);
        return out;
    } else {
        static_assert(meta::reflected<T>, "format::decode: type has no serialized form");
        constexpr auto fields = meta::fields_v<T>;
        T out{};
        std::size_t i = 0;
        meta::for_each_field<T>([&](std::string_view, auto tag, auto get) {
            get(out) = decode<typename decltype(tag)::type>(src + fields[i++].offset);
        });
        return out;
    }
}

/// The serialized bytes of one record.
template <class T>
[[nodiscard]] std::array<std::byte, meta::serialized_size_v<T>> to_bytes(const T& v) noexcept {
    std::array<std::byte, meta::serialized_size_v<T>> out{};
    encode(out.data(), v);
    return out;
}

/// Emitter: writes record v into buf at byte `offset`. Throws when it does not fit.
template <class T>
void emit(std::span<std::byte> buf, std::size_t offset, const T& v) {
    constexpr std::size_t size = meta::serialized_size_v<T>;
    if (offset > buf.size() || buf.size() - offset < size)
        throw error(error_kind::limit, "emit: a record of " + std::to_string(size) + " bytes at offset " +
                                           std::to_string(offset) + " does not fit in a buffer of " +
                                           std::to_string(buf.size()) + " bytes");
    encode(buf.data() + offset, v);
}

/// Emitter: appends record v to the end of out.
template <class T>
void append(std::vector<std::byte>& out, const T& v) {
    const std::size_t at = out.size();
    out.resize(at + meta::serialized_size_v<T>);
    encode(out.data() + at, v);
}

/// Bounds-checked read of a record at `offset`; `source` and `what` name it in the error.
template <class T>
[[nodiscard]] T read_record(std::span<const std::byte> bytes, std::uint64_t offset, std::string_view source,
                            std::string_view what) {
    constexpr std::size_t size = meta::serialized_size_v<T>;
    if (offset > bytes.size() || bytes.size() - offset < size)
        fail_input(std::string(source) + ": " + std::string(what) + " at offset " + std::to_string(offset) +
                   " needs " + std::to_string(size) + " bytes but the file has " + std::to_string(bytes.size()));
    return decode<T>(bytes.data() + offset);
}

}  // namespace vnnx::format
// ---- end vnnx/format/codec.hpp
// ---- begin vnnx/format/enums.hpp
// Enumerations and constants of the VNNX format (vnnx-format.md §5, §8), with the numeric
// values of the firmware header. TFLite's BuiltinOperator codes are in builtin_operator.hpp.

namespace vnnx::format {

/// `magic` at header offset 76.
inline constexpr std::uint32_t magic = 0x1ABE11EDu;
/// First 8 hex digits of the MD5 of the firmware's vnnx-types.h: tied to this exact layout.
inline constexpr std::uint32_t graph_version = 0x2330B149u;

/// Element type of tensors and of node/layer inputs and outputs (`calc_type_e`).
enum class calc_type : std::int32_t {
    CALC_TYPE_UINT8 = 0,  // also TFLite BOOL
    CALC_TYPE_INT8 = 1,
    CALC_TYPE_INT16 = 2,
    CALC_TYPE_INT32 = 3,
    CALC_TYPE_UNKNOWN = 4,
};

/// Bytes per element, or 0 for CALC_TYPE_UNKNOWN and values outside the enum.
[[nodiscard]] constexpr std::uint32_t element_size(std::int32_t type) noexcept {
    switch (type) {
        case 0: case 1: return 1;
        case 2: return 2;
        case 3: return 4;
        default: return 0;
    }
}

/// VNNX-specific operator codes, disjoint from TFLite's 0..205 (`VNNXOperator`).
enum class vnnx_operator : std::int32_t {
    IDENTITY = 300,
    ELTWISE = 301,
    PREFETCH = 302,
    LUT = 303,
    PIXEL_SHUFFLE = 304,
    OUTPUT_SHAPER = 305,
    UNKNOWN_SUBGRAPH = 306,
};

/// Kind of an ELTWISE layer (`eltwise8.type`, `eltwise_type_e`).
enum class eltwise_type : std::int32_t {
    ELTWISE_ADD = 0,
    ELTWISE_MUL = 1,
    ELTWISE_SUB = 2,
    ELTWISE_DIV = 3,
    ELTWISE_GREATER = 4,
    ELTWISE_GREATER_EQUAL = 5,
    ELTWISE_LESS = 6,
    ELTWISE_LESS_EQUAL = 7,
    ELTWISE_EQUAL = 8,
    ELTWISE_NOT_EQUAL = 9,
    ELTWISE_MINIMUM = 10,
    ELTWISE_MAXIMUM = 11,
    ELTWISE_SQUARED_DIFFERENCE = 12,
};

/// `ResizeOptions.mode` (`resize_mode_e`).
enum class resize_mode : std::int32_t {
    RESIZE_NEAREST = 0,
    RESIZE_LINEAR = 1,
};

/// Header `sparsity`: the core's compression configuration (`vbx_cnn_comp_conf_e`).
enum class compression : std::int32_t {
    ncomp = 0,  // no compression
    comp = 1,   // structured (sparse weights)
    ucomp = 2,  // unstructured, external NX engine
};

/// Header `vbx_nn_preset`: the core size (`vbx_cnn_size_conf_e`).
enum class preset : std::uint32_t { V250 = 0, V500 = 1, V1000 = 2, V2000 = 3, V4000 = 4 };

/// What the compiler derives from a preset (lowering.md §2.6).
struct preset_params {
    preset id;
    std::string_view name;
    std::uint32_t vector_lanes;
    std::uint32_t filter_copies;
    std::uint32_t parallel_output_maps;
    std::uint32_t scratchpad_kb;
};

inline constexpr std::array<preset_params, 5> presets{{
    {preset::V250, "V250", 2, 8, 8, 32},
    {preset::V500, "V500", 4, 8, 16, 64},
    {preset::V1000, "V1000", 8, 16, 16, 128},
    {preset::V2000, "V2000", 16, 32, 32, 256},
    {preset::V4000, "V4000", 16, 32, 32, 256},
}};

[[nodiscard]] constexpr const preset_params& params(preset p) noexcept {
    return presets[static_cast<std::uint32_t>(p)];
}

[[nodiscard]] constexpr std::optional<preset> preset_from_name(std::string_view name) noexcept {
    for (const auto& p : presets)
        if (p.name == name) return p.id;
    return std::nullopt;
}

[[nodiscard]] constexpr std::optional<compression> compression_from_name(std::string_view name) noexcept {
    if (name == "ncomp") return compression::ncomp;
    if (name == "comp") return compression::comp;
    if (name == "ucomp") return compression::ucomp;
    return std::nullopt;
}

[[nodiscard]] constexpr std::string_view name_of(vnnx_operator op) noexcept {
    switch (op) {
        case vnnx_operator::IDENTITY: return "IDENTITY";
        case vnnx_operator::ELTWISE: return "ELTWISE";
        case vnnx_operator::PREFETCH: return "PREFETCH";
        case vnnx_operator::LUT: return "LUT";
        case vnnx_operator::PIXEL_SHUFFLE: return "PIXEL_SHUFFLE";
        case vnnx_operator::OUTPUT_SHAPER: return "OUTPUT_SHAPER";
        case vnnx_operator::UNKNOWN_SUBGRAPH: return "UNKNOWN_SUBGRAPH";
    }
    return {};
}

}  // namespace vnnx::format
// ---- end vnnx/format/enums.hpp
// ---- begin vnnx/format/layout_asserts.hpp
// The derived layout checked against the numbers measured on the firmware header
// (vnnx-format.md §3: offsetof/sizeof with GCC and Clang on several targets). A change to a
// field list that moves anything fails to compile here. Every field offset is asserted in
// test/format_offsets_test.cpp.
// ---- begin vnnx/format/records.hpp
// The records of the firmware header `vnnx-types.h` (SDK snapshot f5a428c), each field listed
// once and named as in the header. Sizes and offsets are derived from these lists
// (meta/reflect.hpp) and asserted against the measured numbers in layout_asserts.hpp.
//
// The header's anonymous unions become a field named `options` of type union_storage<U>:
// the raw union bytes plus typed set/get of one member. Each union member is a type of its
// own, in namespace node_options (14 members) or layer_options (28 members); the two
// `Conv2DOptions` differ (the layer one lacks first_fia, last_fia, fia_collision).


/// A record of the firmware header: a reflected struct that knows its firmware name.
#define VNNX_FORMAT_RECORD(NAME, ...)                                       \
    struct NAME {                                                           \
        static constexpr std::string_view record_name = #NAME;              \
        VNNX_META_STRUCT(NAME, __VA_ARGS__);                              \
        bool operator==(const NAME&) const = default;                       \
    }

/// A member of one of the header's unions: a reflected struct named as the union member.
#define VNNX_FORMAT_UNION_MEMBER(NAME, ...)                                 \
    struct NAME {                                                           \
        static constexpr std::string_view member_name = #NAME;              \
        VNNX_META_STRUCT(NAME, __VA_ARGS__);                              \
        bool operator==(const NAME&) const = default;                       \
    }

namespace vnnx::format {

using i32 = std::int32_t;
using u32 = std::uint32_t;
using f32 = float;
template <std::size_t N>
using i32s = std::array<std::int32_t, N>;
template <std::size_t N>
using f32s = std::array<float, N>;
template <std::size_t N>
using chars = std::array<char, N>;

/// Storage of an anonymous union: its bytes as they are in the file. set<M>() makes the
/// record hold member M (M's fields, then zeros up to the union size, as the SDK writes).
template <class U>
struct union_storage {
    using descriptor = U;
    static constexpr std::size_t serialized_size = U::size;

    std::array<std::byte, U::size> bytes{};

    template <class M>
    void set(const M& member) noexcept {
        static_assert(U::template holds<M>, "union_storage::set: not a member of this union");
        bytes.fill(std::byte{0});
        encode(bytes.data(), member);
    }

    template <class M>
    [[nodiscard]] M get() const noexcept {
        static_assert(U::template holds<M>, "union_storage::get: not a member of this union");
        return decode<M>(bytes.data());
    }

    [[nodiscard]] bool all_zero() const noexcept {
        return std::all_of(bytes.begin(), bytes.end(), [](std::byte b) { return b == std::byte{0}; });
    }

    bool operator==(const union_storage&) const = default;

    void encode_to(std::byte* dst) const noexcept { std::copy(bytes.begin(), bytes.end(), dst); }
    static union_storage decode_from(const std::byte* src) noexcept {
        union_storage out;
        std::copy(src, src + U::size, out.bytes.begin());
        return out;
    }
};

VNNX_FORMAT_RECORD(indirect_ptr_t,
    (u32, base_ptr_offset_from_sp_start),
    (u32, offset));

VNNX_FORMAT_RECORD(vnnx_tensor_t,
    (i32, type),
    (i32s<6>, shape),
    (i32, dims),
    (i32, external_producer),
    (i32, external_consumer),
    (f32, scale),
    (i32, scale_f16),
    (i32, zero),
    (i32, multiplier),
    (i32, shift),
    (indirect_ptr_t, indirect),
    (obj_off_t, direct));

namespace layer_options {
VNNX_FORMAT_UNION_MEMBER(Conv2DOptions,
    (i32, kernels), (i32, stride_width), (i32, stride_height),
    (i32, dilation_width_factor), (i32, dilation_height_factor),
    (i32, padding_width), (i32, padding_height), (i32s<4>, filter_shape_dims),
    (i32, group), (i32, imaps), (i32, conv_rows), (i32, use_vector), (i32, use_fia), (i32, use_db),
    (i32, use_depthwise), (i32, use_strided), (i32, fit_weights), (i32, split_weight_shaper_buffers),
    (i32, direct_dma), (i32, mxp_double_buffer), (i32, repeat), (i32, in_used), (i32, w_used),
    (i32, qt_used), (i32, out_used), (i32, sp_used), (i32, fia_preloaded), (i32, next_fia_node_id),
    (i32, preload_next_fia), (obj_off_t, filter_data), (obj_off_t, bias_data),
    (obj_off_t, quantization_records), (obj_off_t, nlf_data), (u32, tile_count));
VNNX_FORMAT_UNION_MEMBER(ConcatOptions, (i32, axis));
VNNX_FORMAT_UNION_MEMBER(eltwise8,
    (obj_off_t, input2_multiplier), (obj_off_t, input2_shift), (i32, input2_offset),
    (obj_off_t, bias_data), (i32, swap), (i32, optimized), (i32, isize), (i32, left_shift), (i32, type));
VNNX_FORMAT_UNION_MEMBER(reduce8, (i32, channels), (i32, rows), (i32, columns));
VNNX_FORMAT_UNION_MEMBER(broadcast8,
    (i32s<4>, filter_shape_dims), (obj_off_t, filter_multiplier), (obj_off_t, filter_shift),
    (i32, filter_offset), (obj_off_t, filter_data), (obj_off_t, bias_data), (f32, iscale), (f32, fscale),
    (f32, oscale), (i32, broadcast), (i32, optimized), (i32, isize), (i32, left_shift), (i32, sub),
    (i32, swap_inputs));
VNNX_FORMAT_UNION_MEMBER(PadOptions, (i32, value), (i32, transpose_dilate_w), (i32, transpose_dilate_h));
VNNX_FORMAT_UNION_MEMBER(clip, (f32, min), (f32, max));
VNNX_FORMAT_UNION_MEMBER(depthwise, (i32, unsigned_input), (i32, unsigned_output), (obj_off_t, weights));
VNNX_FORMAT_UNION_MEMBER(prelu,
    (obj_off_t, alpha_multiplier), (obj_off_t, alpha_shift), (i32, alpha_offset), (i32, optimized),
    (i32, maps_at_once), (f32, iscale), (f32, ascale), (f32, oscale), (obj_off_t, vci_int8),
    (obj_off_t, alpha_data), (i32s<4>, alpha_shape));
VNNX_FORMAT_UNION_MEMBER(leakyrelu, (obj_off_t, alpha_multiplier), (obj_off_t, alpha_shift));
VNNX_FORMAT_UNION_MEMBER(SoftmaxOptions,
    (i32, diff_min), (i32, axis), (i32, depth), (i32, count), (obj_off_t, vci_int8), (obj_off_t, lut_int32),
    (obj_off_t, idx_int8));
VNNX_FORMAT_UNION_MEMBER(ActivationOptions,
    (i32, input_range_radius), (i32, count), (i32, lut_count), (obj_off_t, vci_int8), (obj_off_t, lut_int8),
    (obj_off_t, idx_int8));
VNNX_FORMAT_UNION_MEMBER(LogSoftmaxOptions,
    (i32, diff_min), (i32, outer_size), (i32, depth), (i32, reverse_scaling_divisor),
    (i32, reverse_scaling_right_shift), (i32, axis));
VNNX_FORMAT_UNION_MEMBER(prefetch, (obj_off_t, memory_offset));
VNNX_FORMAT_UNION_MEMBER(SliceOptions, (i32s<4>, begin), (i32s<4>, end), (i32s<4>, stride));
VNNX_FORMAT_UNION_MEMBER(GatherOptions,
    (i32, axis), (i32, batch_dims), (obj_off_t, coord_data), (i32, batch_size), (i32, outer_size),
    (i32, axis_size), (i32, inner_size), (i32, coord_size), (i32, swap_input_order));
VNNX_FORMAT_UNION_MEMBER(SpaceToBatchNDOptions, (obj_off_t, block_shape_data), (obj_off_t, paddings_data));
VNNX_FORMAT_UNION_MEMBER(BatchToSpaceNDOptions, (obj_off_t, block_shape_data), (obj_off_t, crop_data));
VNNX_FORMAT_UNION_MEMBER(MirrorPadOptions, (i32, mode));
VNNX_FORMAT_UNION_MEMBER(ReshapeOptions, (i32, mode));
VNNX_FORMAT_UNION_MEMBER(PixelShuffleOptions, (i32, r));
VNNX_FORMAT_UNION_MEMBER(PackOptions, (i32, axis), (i32, count), (i32, dims));
VNNX_FORMAT_UNION_MEMBER(ResizeOptions,
    (f32s<2>, scale), (i32, mode), (i32, num_c_inc), (obj_off_t, c_inc), (i32, min_rows),
    (i32, min_cols), (i32, min_maps), (i32, rows_trips), (i32, cols_trips), (i32, maps_trips),
    (i32, in_scratchpad));
VNNX_FORMAT_UNION_MEMBER(TransposeOptions, (i32s<3>, permutation), (i32, out_maps_at_once), (i32, out_rows_at_once));
VNNX_FORMAT_UNION_MEMBER(SplitOptions, (i32, axis), (i32, max_split), (obj_off_t, splits));
VNNX_FORMAT_UNION_MEMBER(embedding, (i32s<2>, colar_map_dims), (obj_off_t, colar_map_data));
VNNX_FORMAT_UNION_MEMBER(MinMaxOptions,
    (i32, max), (i32s<4>, filter_shape_dims), (obj_off_t, filter_multiplier), (obj_off_t, filter_shift),
    (i32, filter_offset), (obj_off_t, filter_data));
VNNX_FORMAT_UNION_MEMBER(ShaperOptions,
    (i32, height), (i32, height_final), (i32, width), (i32, width_final), (i32, shaper_height),
    (i32, shaper_height_final), (i32, shaper_width), (i32, shaper_width_final), (i32, stride_height),
    (i32, use_strided));
}  // namespace layer_options

/// The layer union, members in header order.
using layer_union = meta::union_of<
    layer_options::Conv2DOptions, layer_options::ConcatOptions, layer_options::eltwise8, layer_options::reduce8,
    layer_options::broadcast8, layer_options::PadOptions, layer_options::clip, layer_options::depthwise,
    layer_options::prelu, layer_options::leakyrelu, layer_options::SoftmaxOptions,
    layer_options::ActivationOptions, layer_options::LogSoftmaxOptions, layer_options::prefetch,
    layer_options::SliceOptions, layer_options::GatherOptions, layer_options::SpaceToBatchNDOptions,
    layer_options::BatchToSpaceNDOptions, layer_options::MirrorPadOptions, layer_options::ReshapeOptions,
    layer_options::PixelShuffleOptions, layer_options::PackOptions, layer_options::ResizeOptions,
    layer_options::TransposeOptions, layer_options::SplitOptions, layer_options::embedding,
    layer_options::MinMaxOptions, layer_options::ShaperOptions>;

/// A layer (the SDK's "subnode"): a sub-operation fused into a node.
VNNX_FORMAT_RECORD(vnnx_layer_t,
    (i32, type),
    (i32, input_data_type),
    (i32, output_data_type),
    (i32s<2>, strides),
    (i32s<2>, kernel_shape),
    (i32s<2>, dilations),
    (i32s<6>, pads),
    (i32, maps),
    (i32, num_inputs),
    (i32, num_outputs),
    (i32, num_tensors),
    (i32, activation_min),
    (i32, activation_max),
    (obj_off_t, input_multiplier),
    (obj_off_t, input_shift),
    (i32, input_offset),
    (obj_off_t, output_multiplier),
    (obj_off_t, output_shift),
    (i32, output_offset),
    (i32, nop),
    (obj_off_t, tensors),
    (union_storage<layer_union>, options));

namespace node_options {
VNNX_FORMAT_UNION_MEMBER(Conv2DOptions,
    (i32, kernels), (i32, stride_width), (i32, stride_height),
    (i32, dilation_width_factor), (i32, dilation_height_factor),
    (i32, padding_width), (i32, padding_height), (i32s<4>, filter_shape_dims),
    (i32, group), (i32, imaps), (i32, conv_rows), (i32, use_vector), (i32, use_fia), (i32, use_db),
    (i32, use_depthwise), (i32, use_strided), (i32, fit_weights), (i32, split_weight_shaper_buffers),
    (i32, direct_dma), (i32, mxp_double_buffer), (i32, first_fia), (i32, last_fia), (i32, fia_collision),
    (i32, repeat), (i32, in_used), (i32, w_used), (i32, qt_used), (i32, out_used), (i32, sp_used),
    (i32, fia_preloaded), (i32, next_fia_node_id), (i32, preload_next_fia), (obj_off_t, filter_data),
    (obj_off_t, bias_data), (obj_off_t, quantization_records), (obj_off_t, nlf_data), (u32, tile_count));
VNNX_FORMAT_UNION_MEMBER(eltwise8,
    (obj_off_t, input2_multiplier), (obj_off_t, input2_shift), (i32, input2_offset),
    (obj_off_t, bias_data), (i32, swap), (i32, optimized), (i32, isize), (i32, left_shift), (i32, type));
VNNX_FORMAT_UNION_MEMBER(reduce8, (i32, channels), (i32, rows), (i32, columns));
VNNX_FORMAT_UNION_MEMBER(FullyConnectedOptions,
    (i32s<2>, filter_shape_dims), (i32, input_stride), (i32, use_fia), (i32, first_fia), (i32, last_fia),
    (i32, fia_collision), (i32, mxp_double_buffer), (obj_off_t, filter_data), (obj_off_t, bias_data),
    (obj_off_t, quantization_records), (obj_off_t, nlf_data));
VNNX_FORMAT_UNION_MEMBER(BatchMatMulOptions, (i32, adj_x), (i32, adj_y), (i32, asym));
VNNX_FORMAT_UNION_MEMBER(ConcatOptions, (i32, axis));
VNNX_FORMAT_UNION_MEMBER(PackOptions, (i32, axis), (i32, count), (i32, dims));
VNNX_FORMAT_UNION_MEMBER(argmax, (i32, pixels_per_loop));
VNNX_FORMAT_UNION_MEMBER(lrn, (f32, alpha), (f32, beta), (f32, bias), (f32, scale), (i32, size));
VNNX_FORMAT_UNION_MEMBER(TileOptions, (i32s<4>, tile));
VNNX_FORMAT_UNION_MEMBER(reorg, (i32, stride));
VNNX_FORMAT_UNION_MEMBER(ResizeOptions,
    (f32s<2>, scale), (i32, mode), (i32, num_c_inc), (obj_off_t, c_inc), (i32, min_rows),
    (i32, min_cols), (i32, min_maps), (i32, rows_trips), (i32, cols_trips), (i32, maps_trips),
    (i32, in_scratchpad));
VNNX_FORMAT_UNION_MEMBER(TransposeOptions, (i32s<3>, permutation), (i32, out_maps_at_once), (i32, out_rows_at_once));
VNNX_FORMAT_UNION_MEMBER(SplitOptions, (i32, axis), (i32, max_split), (obj_off_t, splits));
}  // namespace node_options

/// The node union, members in header order.
using node_union = meta::union_of<
    node_options::Conv2DOptions, node_options::eltwise8, node_options::reduce8,
    node_options::FullyConnectedOptions, node_options::BatchMatMulOptions, node_options::ConcatOptions,
    node_options::PackOptions, node_options::argmax, node_options::lrn, node_options::TileOptions,
    node_options::reorg, node_options::ResizeOptions, node_options::TransposeOptions,
    node_options::SplitOptions>;

/// A node (`vnnx_subgraph_node_t`): a major step, executed in order.
VNNX_FORMAT_RECORD(vnnx_subgraph_node_t,
    (i32, type),
    (i32, input_data_type),
    (i32, output_data_type),
    (i32, offloaded),
    (i32s<2>, input_strides),
    (i32s<2>, output_strides),
    (i32, channels),
    (i32, m),
    (i32, n),
    (i32, maps),
    (i32, rows),
    (i32, cols),
    (i32, skip),
    (i32, scratchpad_bytes),
    (chars<48>, input_description),
    (chars<48>, output_description),
    (obj_off_t, sublayers),
    (i32, num_sublayers),
    (i32, row_start),
    (i32, row_last),
    (i32, orow_last),
    (i32, row_inc),
    (i32, row_inc0),
    (i32, rows_0),
    (i32, rows_final),
    (i32, col_start),
    (i32, col_last),
    (i32, ocol_last),
    (i32, col_inc),
    (i32, col_inc0),
    (i32, cols_0),
    (i32, cols_final),
    (i32, prefetch_bytes_per_map),
    (i32, use_replay),
    (obj_off_t, replay_buffer),
    (i32, replay_buffer_size),
    (i32, num_inputs),
    (i32, num_outputs),
    (i32, num_tensors),
    (obj_off_t, tensors),
    (i32, activation_min),
    (i32, activation_max),
    (obj_off_t, input_multiplier),
    (obj_off_t, input_shift),
    (i32, input_offset),
    (obj_off_t, output_multiplier),
    (obj_off_t, output_shift),
    (i32, output_offset),
    (union_storage<node_union>, options));

/// The header's zero-length `subgraphs[0]`: it marks where the node table starts (offset 84)
/// and takes no bytes; nodes are read and written as records of their own.
using node_table = std::array<vnnx_subgraph_node_t, 0>;

/// The graph header (`vnnx_graph_t`); the node table follows it directly.
VNNX_FORMAT_RECORD(vnnx_graph_t,
    (u32, version),
    (u32, vbx_nn_preset),
    (u32, num_inputs),
    (u32, num_outputs),
    (u32, fixed_replay_buffer0),
    (u32, fixed_replay_buffer1),
    (u32, fixed_replay_buffer2),
    (u32, fixed_replay_buffer3),
    (u32, include_io_data),
    (u32, data_bytes),
    (u32, allocate_bytes),
    (obj_off_t, io_nodes),
    (obj_off_t, io_offsets),
    (i32, num_layers),
    (obj_off_t, replay_buffer),
    (i32, replay_buffer_size),
    (u32, magic),
    (i32, sparsity),
    (node_table, subgraphs));

/// Every record type, for code that walks them all (layout tables, tests).
using all_records = meta::set<vnnx_graph_t, vnnx_subgraph_node_t, vnnx_layer_t, vnnx_tensor_t, indirect_ptr_t>;

/// A record's `options` union descriptor, or void for records without a union.
template <class R>
struct union_of_record { using type = void; };
template <>
struct union_of_record<vnnx_subgraph_node_t> { using type = node_union; };
template <>
struct union_of_record<vnnx_layer_t> { using type = layer_union; };

}  // namespace vnnx::format
// ---- end vnnx/format/records.hpp

namespace vnnx::format {

template <class R>
inline constexpr std::size_t record_size_v = meta::serialized_size_v<R>;

static_assert(record_size_v<vnnx_graph_t> == 84);
static_assert(record_size_v<vnnx_subgraph_node_t> == 492);
static_assert(record_size_v<vnnx_layer_t> == 300);
static_assert(record_size_v<vnnx_tensor_t> == 76);
static_assert(record_size_v<indirect_ptr_t> == 8);

static_assert(meta::offset_of_v<vnnx_subgraph_node_t, "options"> == 316 && node_union::size == 176);
static_assert(meta::offset_of_v<vnnx_layer_t, "options"> == 136 && layer_union::size == 164);
static_assert(node_union::member_count == 14 && layer_union::member_count == 28);
static_assert(record_size_v<node_options::Conv2DOptions> == node_union::size);
static_assert(record_size_v<layer_options::Conv2DOptions> == layer_union::size);

// Fields the loader reads directly (vnnx-format.md §10.2).
static_assert(meta::offset_of_v<vnnx_graph_t, "magic"> == 76 && meta::offset_of_v<vnnx_graph_t, "sparsity"> == 80);
static_assert(meta::offset_of_v<vnnx_subgraph_node_t, "tensors"> == 260);
static_assert(meta::offset_of_v<vnnx_tensor_t, "indirect"> == 60 && meta::offset_of_v<vnnx_tensor_t, "direct"> == 68);

// Every record is a whole number of 4-byte words, so concatenated tables stay aligned.
static_assert(record_size_v<vnnx_graph_t> % 4 == 0 && record_size_v<vnnx_subgraph_node_t> % 4 == 0 &&
              record_size_v<vnnx_layer_t> % 4 == 0 && record_size_v<vnnx_tensor_t> % 4 == 0);

}  // namespace vnnx::format
// ---- end vnnx/format/layout_asserts.hpp
// ---- begin vnnx/format/layout_json.hpp
// The record layouts as data, computed by walking the compile-time field lists: every
// record's size, every field's offset and size, every union member with its fields (offsets
// relative to the member's start). `vnnx layout` prints it; std only (no fmt), so firmware
// hosts can use it too.


namespace vnnx::format {

struct member_layout {
    std::string_view name;
    std::size_t offset = 0;  // of the union inside the record
    std::size_t size = 0;    // of this member
    std::vector<meta::field_info> fields;
};

struct record_layout {
    std::string_view name;
    std::size_t size = 0;
    std::vector<meta::field_info> fields;  // the union itself is not a field: see unions
    std::vector<member_layout> unions;
};

namespace detail {
template <class R>
record_layout layout_of() {
    record_layout out;
    out.name = R::record_name;
    out.size = meta::serialized_size_v<R>;
    std::size_t i = 0;
    meta::for_each_field<R>([&](std::string_view, auto tag, auto) {
        using T = typename decltype(tag)::type;
        const meta::field_info f = meta::fields_v<R>[i++];
        if constexpr (requires { typename T::descriptor; }) {
            T::descriptor::for_each_member([&](auto member_tag) {
                using M = typename decltype(member_tag)::type;
                const auto& mf = meta::fields_v<M>;
                out.unions.push_back({M::member_name, f.offset, meta::serialized_size_v<M>, {mf.begin(), mf.end()}});
            });
        } else {
            out.fields.push_back(f);
        }
    });
    return out;
}
}  // namespace detail

/// The five records, in the order the firmware header is usually read.
[[nodiscard]] inline std::vector<record_layout> layouts() {
    return {detail::layout_of<vnnx_graph_t>(), detail::layout_of<vnnx_layer_t>(),
            detail::layout_of<vnnx_subgraph_node_t>(), detail::layout_of<vnnx_tensor_t>(),
            detail::layout_of<indirect_ptr_t>()};
}

/// The layouts as JSON: {"version": "0x2330b149", "structs": {name: {"size", "fields", "unions"}}}.
[[nodiscard]] inline std::string layout_json() {
    const auto field_list = [](const std::vector<meta::field_info>& fields, const std::string& indent) {
        std::string s = "{";
        for (std::size_t i = 0; i < fields.size(); ++i) {
            s += i == 0 ? "\n" : ",\n";
            s += indent + "\"" + std::string(fields[i].name) + "\": {\"offset\": " + std::to_string(fields[i].offset) +
                 ", \"size\": " + std::to_string(fields[i].size) + "}";
        }
        return s + "}";
    };
    static constexpr char digits[] = "0123456789abcdef";
    std::string version = "0x";
    for (int sh = 28; sh >= 0; sh -= 4) version += digits[(graph_version >> sh) & 0xF];

    std::string s = "{\"version\": \"" + version + "\",\n \"structs\": {";
    const auto all = layouts();
    for (std::size_t r = 0; r < all.size(); ++r) {
        const auto& rec = all[r];
        s += r == 0 ? "\n" : ",\n";
        s += "  \"" + std::string(rec.name) + "\": {\"size\": " + std::to_string(rec.size) +
             ",\n   \"fields\": " + field_list(rec.fields, "    ") + ",\n   \"unions\": {";
        for (std::size_t u = 0; u < rec.unions.size(); ++u) {
            const auto& m = rec.unions[u];
            s += u == 0 ? "\n" : ",\n";
            s += "    \"" + std::string(m.name) + "\": {\"offset\": " + std::to_string(m.offset) +
                 ", \"size\": " + std::to_string(m.size) + ", \"fields\": " + field_list(m.fields, "      ") + "}";
        }
        s += "}}";
    }
    return s + "}}\n";
}

}  // namespace vnnx::format
// ---- end vnnx/format/layout_json.hpp
// ---- begin vnnx/format/model_view.hpp
// The bounds-checked reader: a view over the bytes of a .vnnx file that validates everything
// it will later use (vnnx-format.md §2, §6, §10) before any record is handed out, so that a
// consumer (the simulator, `vnnx info`) never reads outside the file. All reads go through
// load_le; errors are vnnx::error(bad_input, "<source>: <what>").

// ---- begin vnnx/format/union_select.hpp
// Which union member a node or layer record holds, chosen by its `type` (the SDK's
// enum_to_union_name in vnnx_types.py; vnnx-format.md §4). The SDK's table is kept as it is,
// including names that exist in neither union (LSTMOptions, greater_broadcast, ...): records
// of those types have no member, their union is all zero.


namespace vnnx::format {

namespace detail {
using B = builtin_operator;
using V = vnnx_operator;
constexpr std::int32_t code(B b) noexcept { return static_cast<std::int32_t>(b); }
constexpr std::int32_t code(V v) noexcept { return static_cast<std::int32_t>(v); }

inline constexpr std::pair<std::int32_t, std::string_view> union_names[] = {
    {code(B::CONV_2D), "Conv2DOptions"}, {code(B::FULLY_CONNECTED), "FullyConnectedOptions"},
    {code(B::BATCH_MATMUL), "BatchMatMulOptions"}, {code(B::CONCATENATION), "ConcatOptions"},
    {code(V::ELTWISE), "eltwise8"}, {code(V::PIXEL_SHUFFLE), "PixelShuffleOptions"},
    {code(B::TRANSPOSE_CONV), "Conv2DOptions"}, {code(B::UNIDIRECTIONAL_SEQUENCE_LSTM), "LSTMOptions"},
    {code(B::TRANSPOSE), "TransposeOptions"}, {code(B::RESIZE_NEAREST_NEIGHBOR), "ResizeOptions"},
    {code(B::RESIZE_BILINEAR), "ResizeOptions"}, {code(B::SPACE_TO_DEPTH), ""},
    {code(B::ARG_MAX), "reduce8"}, {code(B::ARG_MIN), "reduce8"}, {code(B::TOPK_V2), "reduce8"},
    {code(B::REDUCE_MAX), "reduce8"}, {code(B::REDUCE_MIN), "reduce8"}, {code(B::REDUCE_PROD), "reduce8"},
    {code(B::SUM), "reduce8"}, {code(B::MEAN), "reduce8"}, {code(B::DEPTHWISE_CONV_2D), "Conv2DOptions"},
    {code(B::AVERAGE_POOL_2D), ""}, {code(B::MAX_POOL_2D), ""}, {code(B::LEAKY_RELU), "leakyrelu"},
    {code(B::PRELU), "prelu"}, {code(B::PAD), "PadOptions"}, {code(B::DILATE), "PadOptions"},
    {code(B::MUL), "broadcast8"}, {code(B::ADD), "broadcast8"}, {code(B::SUB), "broadcast8"},
    {code(B::SQUARED_DIFFERENCE), "broadcast8"}, {code(V::PREFETCH), "prefetch"},
    {code(B::SOFTMAX), "SoftmaxOptions"}, {code(B::TANH), "ActivationOptions"},
    {code(B::ELU), "ActivationOptions"}, {code(B::EXP), "ActivationOptions"}, {code(B::LOG), "ActivationOptions"},
    {code(B::GELU), "ActivationOptions"}, {code(V::LUT), "ActivationOptions"},
    {code(V::OUTPUT_SHAPER), "ShaperOptions"}, {code(B::LOGISTIC), "ActivationOptions"},
    {code(B::HARD_SWISH), "ActivationOptions"}, {code(B::RSQRT), "ActivationOptions"},
    {code(B::LOG_SOFTMAX), "LogSoftmaxOptions"}, {code(B::GREATER), "greater_broadcast"},
    {code(B::GREATER_EQUAL), "greater_equal_broadcast"}, {code(B::LESS), "less_broadcast"},
    {code(B::LESS_EQUAL), "less_equal_broadcast"}, {code(B::EQUAL), "equal_broadcast"},
    {code(B::NOT_EQUAL), "not_equal_broadcast"}, {code(B::SLICE), "SliceOptions"},
    {code(B::STRIDED_SLICE), "SliceOptions"}, {code(B::GATHER), "GatherOptions"},
    {code(B::MIRROR_PAD), "MirrorPadOptions"}, {code(B::RESHAPE), "ReshapeOptions"},
    {code(B::SPACE_TO_BATCH_ND), "SpaceToBatchNDOptions"}, {code(B::BATCH_TO_SPACE_ND), "BatchToSpaceNDOptions"},
    {code(B::PACK), "PackOptions"}, {code(B::UNPACK), "PackOptions"}, {code(B::TILE), "TileOptions"},
    {code(B::SPLIT), "SplitOptions"}, {code(B::SPLIT_V), "SplitOptions"},
    {code(B::EMBEDDING_LOOKUP), "embedding"}, {code(B::MAXIMUM), "MinMaxOptions"},
    {code(B::MINIMUM), "MinMaxOptions"},
};
}  // namespace detail

/// The member name the SDK's table gives to `type` ("" when none).
[[nodiscard]] constexpr std::string_view union_name_for_type(std::int32_t type) noexcept {
    for (const auto& [t, name] : detail::union_names)
        if (t == type) return name;
    return {};
}

/// Index of the member of union U that a record of `type` holds, or nullopt when it holds none.
template <class U>
[[nodiscard]] constexpr std::optional<std::size_t> member_index_for_type(std::int32_t type) noexcept {
    const std::string_view name = union_name_for_type(type);
    if (name.empty()) return std::nullopt;
    const std::size_t i = U::index_of_name(name);
    if (i == U::member_count) return std::nullopt;
    return i;
}

/// The display name of a node/layer `type`: a TFLite builtin or a VNNX operator.
[[nodiscard]] constexpr std::string_view operator_name(std::int32_t type) noexcept {
    if (type >= 300 && type <= 306) return name_of(static_cast<vnnx_operator>(type));
    return builtin_name(type);
}

static_assert(member_index_for_type<node_union>(3) == 0 && member_index_for_type<layer_union>(4) == 0);
static_assert(!member_index_for_type<layer_union>(69).has_value());  // TILE: node only
static_assert(!member_index_for_type<layer_union>(61).has_value());  // SDK names greater_broadcast

}  // namespace vnnx::format
// ---- end vnnx/format/union_select.hpp

namespace vnnx::format {

namespace detail {
template <class Tag, class R>
[[nodiscard]] constexpr auto record_type(const R& rec) noexcept { return rec.type; }
}  // namespace detail

/// Calls f(field name, offset) for every obj_off_t of a record: its own fields, fields of
/// nested records, and the fields of the union member its `type` selects.
template <class R, class F>
void for_each_offset(const R& rec, F&& f) {
    meta::for_each_field<R>([&](std::string_view name, auto tag, auto get) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, obj_off_t>) {
            f(name, get(rec));
        } else if constexpr (requires { typename T::descriptor; }) {
            using U = typename T::descriptor;
            // Through a T-dependent call: clang checks a non-dependent `rec.type` even in the
            // branches of records that have no union (and so no `type`).
            const auto index = member_index_for_type<U>(detail::record_type<T>(rec));
            if (!index) return;
            std::size_t i = 0;
            U::for_each_member([&](auto member_tag) {
                using M = typename decltype(member_tag)::type;
                if (i++ == *index) for_each_offset(get(rec).template get<M>(), f);
            });
        } else if constexpr (meta::reflected<T>) {
            for_each_offset(get(rec), f);
        }
    });
}

/// A graph input or output as the firmware accessors see it (vnnx-format.md §10.2).
struct io_tensor {
    std::size_t node = 0;   // owning node (io_nodes[j])
    std::size_t index = 0;  // tensor index inside that node (io_offsets[j])
    vnnx_tensor_t tensor{};
    std::vector<std::int32_t> shape;  // the first `dims` entries, channels-first
    std::int32_t type = 0;            // calc_type
    float scale = 0;
    std::int32_t scale_f16 = 0;
    std::int32_t zero_point = 0;
    std::uint32_t offset = 0;         // indirect.offset
    std::uint64_t direct = 0;
    std::uint64_t length = 0;         // element count, entries <= 0 skipped
    std::span<const std::byte> test_vector;  // length * element size bytes at `direct`
};

class model_view {
public:
    static constexpr std::uint64_t header_size = record_size_v<vnnx_graph_t>;
    static constexpr std::uint64_t node_size = record_size_v<vnnx_subgraph_node_t>;
    static constexpr std::uint64_t layer_size = record_size_v<vnnx_layer_t>;
    static constexpr std::uint64_t tensor_size = record_size_v<vnnx_tensor_t>;

    model_view(std::span<const std::byte> bytes, std::string source) : bytes_(bytes), source_(std::move(source)) {
        validate();
    }

    [[nodiscard]] const std::string& source() const noexcept { return source_; }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }
    [[nodiscard]] const vnnx_graph_t& header() const noexcept { return header_; }

    [[nodiscard]] std::size_t num_nodes() const noexcept { return nodes_.size(); }
    [[nodiscard]] std::size_t num_layers() const noexcept { return layers_.size(); }
    [[nodiscard]] std::size_t num_tensors() const noexcept { return tensors_.size(); }

    [[nodiscard]] const vnnx_subgraph_node_t& node(std::size_t i) const { return at(nodes_, i, "node"); }
    [[nodiscard]] const vnnx_layer_t& layer(std::size_t i) const { return at(layers_, i, "layer"); }
    [[nodiscard]] const vnnx_tensor_t& tensor(std::size_t i) const { return at(tensors_, i, "tensor"); }

    /// The layers of node i, in order.
    [[nodiscard]] std::span<const vnnx_layer_t> node_layers(std::size_t i) const {
        const auto& n = node(i);
        return {layers_.data() + (n.sublayers.value - layer_table_) / layer_size,
                static_cast<std::size_t>(n.num_sublayers)};
    }
    /// The tensor records of node i (§6.3 order: node inputs, node outputs, layer tensors).
    [[nodiscard]] std::span<const vnnx_tensor_t> node_tensors(std::size_t i) const {
        const auto& n = node(i);
        return {tensors_.data() + (n.tensors.value - tensor_table_) / tensor_size,
                static_cast<std::size_t>(n.num_tensors)};
    }

    /// Index, inside node i's tensor array, of the node's final output o (vnnx-format.md §6.3):
    /// the last layer's outputs when the node has layers, else the node's own outputs.
    [[nodiscard]] std::size_t node_output_index(std::size_t i, std::size_t o) const {
        const auto& n = node(i);
        const auto layers = node_layers(i);
        const std::int64_t outs = layers.empty() ? n.num_outputs : layers.back().num_outputs;
        const std::int64_t at = std::int64_t{n.num_tensors} - outs + static_cast<std::int64_t>(o);
        if (outs < 0 || static_cast<std::int64_t>(o) >= outs || at < 0 || at >= n.num_tensors)
            fail(describe("node", i, n.type) + ": it has no output " + std::to_string(o) + " (" + std::to_string(outs) +
                 " outputs, " + std::to_string(n.num_tensors) + " tensors)");
        return static_cast<std::size_t>(at);
    }

    [[nodiscard]] std::size_t num_inputs() const noexcept { return header_.num_inputs; }
    [[nodiscard]] std::size_t num_outputs() const noexcept { return header_.num_outputs; }
    [[nodiscard]] const io_tensor& input(std::size_t i) const { return at(inputs_, i, "input"); }
    [[nodiscard]] const io_tensor& output(std::size_t o) const { return at(outputs_, o, "output"); }

    /// Start of the replay region, its size, and W, the start of the data blob.
    [[nodiscard]] std::uint64_t replay_offset() const noexcept { return header_.replay_buffer.value; }
    [[nodiscard]] std::uint64_t replay_size() const noexcept { return static_cast<std::uint64_t>(header_.replay_buffer_size); }
    [[nodiscard]] std::uint64_t data_offset() const noexcept { return data_offset_; }

    /// `size` bytes of the file at graph-relative `offset` (multipliers, weights, LUTs...).
    /// `what` names the data in the error when the range is not inside the file.
    [[nodiscard]] std::span<const std::byte> range(std::uint64_t offset, std::uint64_t size, std::string_view what) const {
        if (offset > bytes_.size() || bytes_.size() - offset < size)
            fail(std::string(what) + ": " + std::to_string(size) + " bytes at offset " + std::to_string(offset) +
                 " are not inside the " + std::to_string(bytes_.size()) + "-byte file");
        return bytes_.subspan(static_cast<std::size_t>(offset), static_cast<std::size_t>(size));
    }
    /// `count` little-endian int32 values at `offset`.
    [[nodiscard]] std::vector<std::int32_t> int32s(std::uint64_t offset, std::uint64_t count, std::string_view what) const {
        if (count > bytes_.size() / 4) fail(std::string(what) + ": " + std::to_string(count) + " int32 values cannot fit in the file");
        const auto raw = range(offset, count * 4, what);
        std::vector<std::int32_t> out(static_cast<std::size_t>(count));
        for (std::size_t i = 0; i < out.size(); ++i) out[i] = load_le<std::int32_t>(raw.data() + 4 * i);
        return out;
    }

    /// "node 3 (CONV_2D)" style names for messages.
    [[nodiscard]] static std::string describe(std::string_view kind, std::size_t index, std::int32_t type) {
        std::string s = std::string(kind) + " " + std::to_string(index);
        const std::string_view name = operator_name(type);
        s += name.empty() ? " (type " + std::to_string(type) + ")" : " (" + std::string(name) + ")";
        return s;
    }

private:
    [[noreturn]] void fail(const std::string& what) const { fail_input(source_ + ": " + what); }

    template <class T>
    const T& at(const std::vector<T>& v, std::size_t i, std::string_view kind) const {
        if (i >= v.size())
            fail(std::string(kind) + " index " + std::to_string(i) + " is out of range (there are " +
                 std::to_string(v.size()) + ")");
        return v[i];
    }

    struct span_check {
        std::uint64_t begin, end;
        std::string owner;
    };

    // Table ranges owned by nodes must lie inside their table, start on a record boundary and
    // not overlap one another.
    void check_table(std::vector<span_check> ranges, std::uint64_t table, std::uint64_t table_end, std::uint64_t rec,
                     std::string_view what) const {
        for (const auto& r : ranges) {
            if (r.begin >= table && (r.begin - table) % rec != 0)
                fail(r.owner + ": " + std::string(what) + " offset " + std::to_string(r.begin) +
                     " is misaligned: not a whole number of " + std::to_string(rec) + "-byte records after the table start " +
                     std::to_string(table));
            if (r.begin < table || r.end > table_end)
                fail(r.owner + ": " + std::string(what) + " [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                     ") is outside the " + std::string(what) + " table [" + std::to_string(table) + ", " +
                     std::to_string(table_end) + ")");
        }
        std::stable_sort(ranges.begin(), ranges.end(), [](const auto& a, const auto& b) { return a.begin < b.begin; });
        const span_check* prev = nullptr;
        for (const auto& r : ranges) {
            if (r.begin == r.end) continue;
            if (prev != nullptr && r.begin < prev->end)
                fail(r.owner + ": " + std::string(what) + " [" + std::to_string(r.begin) + ", " + std::to_string(r.end) +
                     ") overlaps those of " + prev->owner + " [" + std::to_string(prev->begin) + ", " +
                     std::to_string(prev->end) + ")");
            prev = &r;
        }
    }

    template <class R>
    void check_offsets(const R& rec, const std::string& owner) const {
        for_each_offset(rec, [&](std::string_view field, obj_off_t off) {
            if (!off.absent() && off.value >= header_.allocate_bytes)
                fail(owner + ": " + std::string(field) + " = " + std::to_string(off.value) +
                     " is outside the model [0, allocate_bytes = " + std::to_string(header_.allocate_bytes) + ")");
        });
    }

    void validate() {
        const std::uint64_t size = bytes_.size();
        if (size < header_size)
            fail("file is " + std::to_string(size) + " bytes, shorter than the " + std::to_string(header_size) +
                 "-byte graph header (truncated?)");
        header_ = decode<vnnx_graph_t>(bytes_.data());
        const auto hex = [](std::uint32_t v) {
            static constexpr char digits[] = "0123456789abcdef";
            std::string s = "0x";
            for (int sh = 28; sh >= 0; sh -= 4) s += digits[(v >> sh) & 0xF];
            return s;
        };
        if (header_.magic != magic)
            fail("bad magic " + hex(header_.magic) + " at offset 76 (expected " + hex(magic) + "): not a VNNX file");
        if (header_.version != graph_version)
            fail("unsupported format version " + hex(header_.version) + " at offset 0 (this build reads " +
                 hex(graph_version) + ")");
        if (header_.data_bytes != size)
            fail("header data_bytes = " + std::to_string(header_.data_bytes) + " but the file is " + std::to_string(size) +
                 " bytes (truncated or padded file)");
        if (header_.allocate_bytes < header_.data_bytes)
            fail("header allocate_bytes = " + std::to_string(header_.allocate_bytes) + " is less than data_bytes = " +
                 std::to_string(header_.data_bytes));
        if (header_.num_layers < 1) fail("header num_layers = " + std::to_string(header_.num_layers) + ": a model needs at least one node");

        const std::uint64_t n = static_cast<std::uint64_t>(header_.num_layers);
        check_limit(n, active_limits().max_nodes, source_ + ": header num_layers", "VNNX_MAX_NODES");
        layer_table_ = header_size + node_size * n;
        if (layer_table_ > size)
            fail("node table of " + std::to_string(n) + " nodes ends at " + std::to_string(layer_table_) +
                 ", past the end of the " + std::to_string(size) + "-byte file");
        nodes_.reserve(static_cast<std::size_t>(n));
        std::uint64_t total_layers = 0, total_tensors = 0;
        for (std::uint64_t i = 0; i < n; ++i) {
            nodes_.push_back(decode<vnnx_subgraph_node_t>(bytes_.data() + header_size + node_size * i));
            const auto& nd = nodes_.back();
            const std::string who = describe("node", static_cast<std::size_t>(i), nd.type);
            if (nd.num_sublayers < 0 || nd.num_tensors < 0 || nd.num_inputs < 0 || nd.num_outputs < 0)
                fail(who + ": negative count (num_sublayers " + std::to_string(nd.num_sublayers) + ", num_tensors " +
                     std::to_string(nd.num_tensors) + ", num_inputs " + std::to_string(nd.num_inputs) + ", num_outputs " +
                     std::to_string(nd.num_outputs) + ")");
            total_layers += static_cast<std::uint64_t>(nd.num_sublayers);
            total_tensors += static_cast<std::uint64_t>(nd.num_tensors);
        }
        check_limit(total_layers, active_limits().max_nodes, source_ + ": the nodes' sublayer count", "VNNX_MAX_NODES");
        tensor_table_ = layer_table_ + layer_size * total_layers;
        const std::uint64_t tensors_end = tensor_table_ + tensor_size * total_tensors;
        if (tensors_end > size)
            fail("the nodes own " + std::to_string(total_layers) + " layers and " + std::to_string(total_tensors) +
                 " tensors; their tables would end at " + std::to_string(tensors_end) + ", past the end of the " +
                 std::to_string(size) + "-byte file");

        std::vector<span_check> layer_ranges, tensor_ranges;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            const auto& nd = nodes_[i];
            const std::string who = describe("node", i, nd.type);
            if (nd.sublayers.value > size || nd.tensors.value > size)
                fail(who + ": sublayers = " + std::to_string(nd.sublayers.value) + " / tensors = " +
                     std::to_string(nd.tensors.value) + " point past the end of the file");
            layer_ranges.push_back({nd.sublayers.value, nd.sublayers.value + layer_size * static_cast<std::uint64_t>(nd.num_sublayers), who});
            tensor_ranges.push_back({nd.tensors.value, nd.tensors.value + tensor_size * static_cast<std::uint64_t>(nd.num_tensors), who});
        }
        check_table(std::move(layer_ranges), layer_table_, tensor_table_, layer_size, "layer records");
        check_table(std::move(tensor_ranges), tensor_table_, tensors_end, tensor_size, "tensor records");

        layers_.reserve(static_cast<std::size_t>(total_layers));
        for (std::uint64_t i = 0; i < total_layers; ++i)
            layers_.push_back(decode<vnnx_layer_t>(bytes_.data() + layer_table_ + layer_size * i));
        tensors_.reserve(static_cast<std::size_t>(total_tensors));
        for (std::uint64_t i = 0; i < total_tensors; ++i)
            tensors_.push_back(decode<vnnx_tensor_t>(bytes_.data() + tensor_table_ + tensor_size * i));

        // Replay region and data blob: 16-byte aligned, after the tables, inside the file.
        const std::uint64_t replay = header_.replay_buffer.value;
        if (header_.replay_buffer_size < 0)
            fail("header replay_buffer_size = " + std::to_string(header_.replay_buffer_size) + " is negative");
        if (replay % 16 != 0) fail("replay region at offset " + std::to_string(replay) + " is not 16-byte aligned");
        if (replay < tensors_end)
            fail("replay region at offset " + std::to_string(replay) + " overlaps the record tables, which end at " +
                 std::to_string(tensors_end));
        data_offset_ = replay > size ? replay : replay + round_up(static_cast<std::uint64_t>(header_.replay_buffer_size), 16);
        if (replay > size || data_offset_ > size)
            fail("replay region [" + std::to_string(replay) + ", " + std::to_string(replay + static_cast<std::uint64_t>(header_.replay_buffer_size)) +
                 ") and the data blob after it do not fit in the " + std::to_string(size) + "-byte file");

        // Every offset anywhere: -1 or inside [0, allocate_bytes).
        check_offsets(header_, std::string("graph header"));
        for (std::size_t i = 0; i < nodes_.size(); ++i) check_offsets(nodes_[i], describe("node", i, nodes_[i].type));
        for (std::size_t i = 0; i < layers_.size(); ++i) check_offsets(layers_[i], describe("layer", i, layers_[i].type));
        for (std::size_t i = 0; i < tensors_.size(); ++i) {
            const std::string who = "tensor " + std::to_string(i);
            check_offsets(tensors_[i], who);
            const std::uint32_t ind = tensors_[i].indirect.offset;
            if (ind != 0xFFFFFFFFu && ind >= header_.allocate_bytes)
                fail(who + ": indirect.offset = " + std::to_string(ind) + " is outside the model [0, allocate_bytes = " +
                     std::to_string(header_.allocate_bytes) + ")");
            if (tensors_[i].dims < 0 || tensors_[i].dims > 6)
                fail(who + ": dims = " + std::to_string(tensors_[i].dims) + " is outside 0..6");
        }
        read_io();
    }

    void read_io() {
        const std::uint64_t count = std::uint64_t{header_.num_inputs} + header_.num_outputs;
        if (header_.io_nodes.absent() || header_.io_offsets.absent())
            fail("header io_nodes / io_offsets are absent (-1) but the model has " + std::to_string(count) + " inputs and outputs");
        const auto io_nodes = int32s(header_.io_nodes.value, count, "io_nodes table");
        const auto io_offsets = int32s(header_.io_offsets.value, count, "io_offsets table");
        for (std::uint64_t j = 0; j < count; ++j) {
            const bool is_input = j < header_.num_inputs;
            const std::uint64_t k = is_input ? j : j - header_.num_inputs;
            const std::string who = std::string(is_input ? "input " : "output ") + std::to_string(k);
            const std::int32_t nd = io_nodes[static_cast<std::size_t>(j)];
            const std::int32_t ix = io_offsets[static_cast<std::size_t>(j)];
            if (nd < 0 || static_cast<std::size_t>(nd) >= nodes_.size())
                fail(who + ": io_nodes entry " + std::to_string(nd) + " is not a node index (0.." +
                     std::to_string(nodes_.size() - 1) + ")");
            const auto owned = node_tensors(static_cast<std::size_t>(nd));
            if (ix < 0 || static_cast<std::size_t>(ix) >= owned.size())
                fail(who + ": io_offsets entry " + std::to_string(ix) + " is not a tensor index of node " +
                     std::to_string(nd) + " (it has " + std::to_string(owned.size()) + ")");
            io_tensor io;
            io.node = static_cast<std::size_t>(nd);
            io.index = static_cast<std::size_t>(ix);
            io.tensor = owned[io.index];
            const auto& t = io.tensor;
            io.shape.assign(t.shape.begin(), t.shape.begin() + t.dims);
            io.type = t.type;
            io.scale = t.scale;
            io.scale_f16 = t.scale_f16;
            io.zero_point = t.zero;
            io.offset = t.indirect.offset;
            io.direct = t.direct.value;
            io.length = 1;
            for (std::int32_t d : io.shape) {
                if (d <= 0) continue;  // as model_get_input_length: entries <= 0 are skipped
                if (io.length > bytes_.size() / static_cast<std::uint64_t>(d))
                    fail(who + ": shape has more elements than the file has bytes");
                io.length *= static_cast<std::uint64_t>(d);
            }
            const std::uint32_t esize = element_size(t.type);
            if (esize == 0) fail(who + ": tensor type " + std::to_string(t.type) + " is not a known calc_type");
            if (header_.include_io_data != 0) {
                if (t.direct.absent()) fail(who + ": tensor direct offset is absent but the file embeds test vectors");
                io.test_vector = range(t.direct.value, io.length * esize, who + " test vector");
            }
            (is_input ? inputs_ : outputs_).push_back(std::move(io));
        }
    }

    std::span<const std::byte> bytes_;
    std::string source_;
    vnnx_graph_t header_{};
    std::vector<vnnx_subgraph_node_t> nodes_;
    std::vector<vnnx_layer_t> layers_;
    std::vector<vnnx_tensor_t> tensors_;
    std::vector<io_tensor> inputs_, outputs_;
    std::uint64_t layer_table_ = 0, tensor_table_ = 0, data_offset_ = 0;
};

}  // namespace vnnx::format
// ---- end vnnx/format/model_view.hpp
// ---- begin vnnx/format/writer.hpp
// Producer side: where every region of a .vnnx file goes (vnnx-format.md §2, §7.2), computed
// from the compile-time record sizes, and a writer that assembles records, replay region and
// data blob into the file bytes.


namespace vnnx::format {

/// Graph-relative offsets of the regions of a file (vnnx-format.md §7.2).
struct region_layout {
    std::uint64_t node_table = 0;    // 84
    std::uint64_t layer_table = 0;   // 84 + 492 N
    std::uint64_t tensor_table = 0;  // + 300 S
    std::uint64_t tensors_end = 0;   // + 76 T
    std::uint64_t replay = 0;        // A = round_up(tensors_end, 16)
    std::uint64_t replay_size = 0;   // R
    std::uint64_t data = 0;          // W = A + round_up(R, 16): blob-relative offsets are relocated by W
    std::vector<std::uint64_t> node_sublayers;  // per node: its `sublayers`
    std::vector<std::uint64_t> node_tensors;    // per node: its `tensors`
};

/// The offset calculator: one walk over the nodes with their layer and tensor counts.
[[nodiscard]] inline region_layout compute_regions(std::span<const std::size_t> layers_per_node,
                                                   std::span<const std::size_t> tensors_per_node,
                                                   std::uint64_t replay_size) {
    if (layers_per_node.size() != tensors_per_node.size())
        throw error(error_kind::usage, "compute_regions: " + std::to_string(layers_per_node.size()) +
                                           " layer counts but " + std::to_string(tensors_per_node.size()) + " tensor counts");
    region_layout r;
    const std::uint64_t n = layers_per_node.size();
    std::uint64_t s = 0, t = 0;
    for (std::size_t c : layers_per_node) s += c;
    for (std::size_t c : tensors_per_node) t += c;
    r.node_table = record_size_v<vnnx_graph_t>;
    r.layer_table = r.node_table + record_size_v<vnnx_subgraph_node_t> * n;
    r.tensor_table = r.layer_table + record_size_v<vnnx_layer_t> * s;
    r.tensors_end = r.tensor_table + record_size_v<vnnx_tensor_t> * t;
    r.replay = round_up(r.tensors_end, 16);
    r.replay_size = replay_size;
    r.data = r.replay + round_up(replay_size, 16);
    std::uint64_t layer_at = r.layer_table, tensor_at = r.tensor_table;
    for (std::size_t i = 0; i < layers_per_node.size(); ++i) {
        r.node_sublayers.push_back(layer_at);
        r.node_tensors.push_back(tensor_at);
        layer_at += record_size_v<vnnx_layer_t> * layers_per_node[i];
        tensor_at += record_size_v<vnnx_tensor_t> * tensors_per_node[i];
    }
    return r;
}

namespace detail {
// Adds delta to every present obj_off_t of rec (and of its selected union member).
template <class R>
void relocate(R& rec, std::uint64_t delta) {
    meta::for_each_field<R>([&](std::string_view, auto tag, auto get) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_same_v<T, obj_off_t>) {
            if (!get(rec).absent()) get(rec).value += delta;
        } else if constexpr (requires { typename T::descriptor; }) {
            using U = typename T::descriptor;
            const auto index = member_index_for_type<U>(rec.type);
            if (!index) return;
            std::size_t i = 0;
            U::for_each_member([&](auto member_tag) {
                using M = typename decltype(member_tag)::type;
                if (i++ != *index) return;
                M m = get(rec).template get<M>();
                relocate(m, delta);
                get(rec).set(m);
            });
        }
    });
}
}  // namespace detail

/// Assembles a .vnnx file. Nodes are added with their layers and tensors; offsets inside the
/// records and the header's io_nodes / io_offsets are blob-relative (as the SDK builds them)
/// and are relocated by W when the file is written. The writer fills the structural fields:
/// version, magic, num_layers, node sublayers / num_sublayers / tensors / num_tensors,
/// replay_buffer(_size), data_bytes, allocate_bytes.
class writer {
public:
    void add_node(const vnnx_subgraph_node_t& node, std::vector<vnnx_layer_t> layers, std::vector<vnnx_tensor_t> tensors) {
        nodes_.push_back(node);
        layers_.push_back(std::move(layers));
        tensors_.push_back(std::move(tensors));
    }

    /// The regions the file will have with the nodes added so far.
    [[nodiscard]] region_layout regions(std::uint64_t replay_size) const {
        std::vector<std::size_t> l, t;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            l.push_back(layers_[i].size());
            t.push_back(tensors_[i].size());
        }
        return compute_regions(l, t, replay_size);
    }

    /// The file bytes. `blob` is the data blob (parameters, I/O tables, I/O buffers) that goes
    /// at W; `arena_bytes` more are reserved past the end of the file (allocate_bytes).
    [[nodiscard]] std::vector<std::byte> write(vnnx_graph_t header, std::span<const std::byte> blob,
                                               std::uint64_t replay_size, std::uint64_t arena_bytes) const {
        if (nodes_.empty()) throw error(error_kind::usage, "writer: a model needs at least one node");
        const region_layout r = regions(replay_size);
        const std::uint64_t data_bytes = r.data + blob.size();
        if (data_bytes + arena_bytes > 0xFFFFFFFFull)
            throw error(error_kind::limit, "writer: model of " + std::to_string(data_bytes + arena_bytes) +
                                               " bytes exceeds the format's 4 GiB limit");
        std::vector<std::byte> out(static_cast<std::size_t>(data_bytes));

        header.version = graph_version;
        header.magic = magic;
        header.num_layers = static_cast<std::int32_t>(nodes_.size());
        header.replay_buffer = obj_off_t{r.replay};
        header.replay_buffer_size = static_cast<std::int32_t>(replay_size);
        header.data_bytes = static_cast<std::uint32_t>(data_bytes);
        header.allocate_bytes = static_cast<std::uint32_t>(data_bytes + arena_bytes);
        if (!header.io_nodes.absent()) header.io_nodes.value += r.data;
        if (!header.io_offsets.absent()) header.io_offsets.value += r.data;
        emit(out, 0, header);

        std::uint64_t layer_at = r.layer_table, tensor_at = r.tensor_table;
        for (std::size_t i = 0; i < nodes_.size(); ++i) {
            vnnx_subgraph_node_t node = nodes_[i];
            const obj_off_t replay = node.replay_buffer;  // filled by a recording run, never relocated
            detail::relocate(node, r.data);
            node.replay_buffer = replay;
            node.sublayers = obj_off_t{r.node_sublayers[i]};
            node.num_sublayers = static_cast<std::int32_t>(layers_[i].size());
            node.tensors = obj_off_t{r.node_tensors[i]};
            node.num_tensors = static_cast<std::int32_t>(tensors_[i].size());
            emit(out, r.node_table + record_size_v<vnnx_subgraph_node_t> * i, node);
            for (vnnx_layer_t layer : layers_[i]) {
                detail::relocate(layer, r.data);
                emit(out, layer_at, layer);
                layer_at += record_size_v<vnnx_layer_t>;
            }
            for (vnnx_tensor_t tensor : tensors_[i]) {
                detail::relocate(tensor, r.data);
                // As the SDK does: unconditionally, so an unset offset (-1) would become W - 1.
                tensor.indirect.offset += static_cast<std::uint32_t>(r.data);
                emit(out, tensor_at, tensor);
                tensor_at += record_size_v<vnnx_tensor_t>;
            }
        }
        // Pads and the (unrecorded) replay region stay zero.
        std::copy(blob.begin(), blob.end(), out.begin() + static_cast<std::ptrdiff_t>(r.data));
        return out;
    }

private:
    std::vector<vnnx_subgraph_node_t> nodes_;
    std::vector<std::vector<vnnx_layer_t>> layers_;
    std::vector<std::vector<vnnx_tensor_t>> tensors_;
};

}  // namespace vnnx::format
// ---- end vnnx/format/writer.hpp
// ---- begin vnnx/tflite/schema.hpp
// The TFLite tables this project reads, described as trait types over the flatbuffers runtime.
// Each table lists its fields once (name, vtable slot, kind/type, default) in an X-list; the
// accessors (model_view), the verifier and the builder are all derived from that one list.
// Facts (slots, defaults, union numbers) follow TensorFlow Lite's schema version 3.

#include <flatbuffers/flatbuffers.h>

namespace vnnx::tflite {

// Vectors are read in place as spans: that needs the flatbuffers little-endian layout natively.
static_assert(std::endian::native == std::endian::little, "vnnx::tflite reads flatbuffer vectors in place");

// ---------------------------------------------------------------------------------------------
// Enums of the schema (values are the file's values).

enum class tensor_type : std::int8_t {
    FLOAT32 = 0, FLOAT16 = 1, INT32 = 2, UINT8 = 3, INT64 = 4, STRING = 5, BOOL = 6, INT16 = 7,
    COMPLEX64 = 8, INT8 = 9, FLOAT64 = 10, COMPLEX128 = 11, UINT64 = 12, RESOURCE = 13, VARIANT = 14,
    UINT32 = 15, UINT16 = 16, INT4 = 17,
};
inline constexpr int tensor_type_count = 18;

/// "int8", "float32", ...; "" for a value outside the schema.
[[nodiscard]] constexpr std::string_view type_name(tensor_type t) noexcept {
    constexpr std::string_view names[tensor_type_count] = {
        "float32", "float16", "int32", "uint8", "int64", "string", "bool", "int16", "complex64",
        "int8", "float64", "complex128", "uint64", "resource", "variant", "uint32", "uint16", "int4"};
    const int i = static_cast<int>(t);
    return i >= 0 && i < tensor_type_count ? names[i] : std::string_view{};
}

/// Bytes per element; 0 for types without a fixed element size (string, resource, variant, int4).
[[nodiscard]] constexpr std::size_t element_size(tensor_type t) noexcept {
    switch (t) {
        case tensor_type::FLOAT32: case tensor_type::INT32: case tensor_type::UINT32: return 4;
        case tensor_type::FLOAT16: case tensor_type::INT16: case tensor_type::UINT16: return 2;
        case tensor_type::UINT8: case tensor_type::INT8: case tensor_type::BOOL: return 1;
        case tensor_type::INT64: case tensor_type::UINT64: case tensor_type::FLOAT64:
        case tensor_type::COMPLEX64: return 8;
        case tensor_type::COMPLEX128: return 16;
        default: return 0;
    }
}

[[nodiscard]] constexpr bool is_valid(tensor_type t) noexcept {
    return static_cast<int>(t) >= 0 && static_cast<int>(t) < tensor_type_count;
}

enum class padding_mode : std::int8_t { SAME = 0, VALID = 1 };
enum class activation_function : std::int8_t { NONE = 0, RELU = 1, RELU_N1_TO_1 = 2, RELU6 = 3, TANH = 4, SIGN_BIT = 5 };
enum class mirror_pad_mode : std::int8_t { REFLECT = 0, SYMMETRIC = 1 };
enum class fc_weights_format : std::int8_t { DEFAULT = 0, SHUFFLED4x16INT8 = 1 };

[[nodiscard]] constexpr std::string_view activation_name(activation_function a) noexcept {
    constexpr std::string_view names[] = {"NONE", "RELU", "RELU_N1_TO_1", "RELU6", "TANH", "SIGN_BIT"};
    const int i = static_cast<int>(a);
    return i >= 0 && i < 6 ? names[i] : std::string_view{};
}

// ---------------------------------------------------------------------------------------------
// Field kinds: how a field is stored, read, verified and written.
namespace schema {

struct no_default {};

template <class T>
struct scalar {
    using value = T;
    using default_type = T;
    // bools travel as one byte; enums as their underlying type
    using storage = std::conditional_t<std::is_same_v<T, bool>, std::uint8_t,
                                       typename std::conditional_t<std::is_enum_v<T>, std::underlying_type<T>,
                                                                   std::type_identity<T>>::type>;
};
struct string {
    using value = std::string;
    using default_type = no_default;
};
template <class T>
struct vector {
    using element = T;
    using value = std::vector<T>;
    using default_type = no_default;
};
template <class Trait>
struct table {
    using trait = Trait;
    using default_type = no_default;
};
template <class Trait>
struct table_vector {
    using trait = Trait;
    using default_type = no_default;
};
/// A table we do not read (metadata, sparsity, union members we ignore): checked for bounds only.
struct opaque_table {
    using default_type = no_default;
};
struct opaque_table_vector {
    using default_type = no_default;
};

template <class Kind>
struct field {
    std::string_view name;
    flatbuffers::voffset_t slot;
    typename Kind::default_type def{};
    using kind = Kind;
    /// The vtable offset of slot n: the vtable starts with its own size and the table size.
    [[nodiscard]] constexpr flatbuffers::voffset_t voffset() const noexcept {
        return static_cast<flatbuffers::voffset_t>(4 + 2 * slot);
    }
};

}  // namespace schema

// ---------------------------------------------------------------------------------------------
// Table traits. X(name, slot, kind, default)

#define VNNX_TFLITE_FIELD_DESC(n, slot, kind, def) static constexpr ::vnnx::tflite::schema::field<kind> n{#n, slot, def};
#define VNNX_TFLITE_FIELD_CALL(n, slot, kind, def) f(n);
#define VNNX_TFLITE_FIELD_MEMBER(n, slot, kind, def) typename kind::value n = def;
#define VNNX_TFLITE_FIELD_PAIR(n, slot, kind, def) f(n, &value::n);

#define VNNX_TFLITE_TABLE(Trait, FIELDS)                                    \
    struct Trait {                                                          \
        static constexpr std::string_view table_name = #Trait;              \
        FIELDS(VNNX_TFLITE_FIELD_DESC)                                      \
        template <class F>                                                  \
        static constexpr void for_each_field([[maybe_unused]] F&& f) {      \
            FIELDS(VNNX_TFLITE_FIELD_CALL)                                  \
        }                                                                   \
    }

// An options table: also a value struct (defaults applied) and its BuiltinOptions union number.
#define VNNX_TFLITE_OPTIONS(Trait, snake, union_number, FIELDS)                     \
    struct Trait {                                                                  \
        static constexpr std::string_view table_name = #Trait;                      \
        static constexpr std::uint8_t union_type = union_number;                    \
        FIELDS(VNNX_TFLITE_FIELD_DESC)                                              \
        template <class F>                                                          \
        static constexpr void for_each_field([[maybe_unused]] F&& f) {              \
            FIELDS(VNNX_TFLITE_FIELD_CALL)                                          \
        }                                                                           \
        struct value {                                                              \
            using trait = Trait;                                                    \
            FIELDS(VNNX_TFLITE_FIELD_MEMBER)                                        \
        };                                                                          \
        template <class F>                                                          \
        static void for_each_member([[maybe_unused]] F&& f) {                       \
            FIELDS(VNNX_TFLITE_FIELD_PAIR)                                          \
        }                                                                           \
    };                                                                              \
    }                                                                               \
    using snake = opt::Trait::value;                                                \
    namespace opt {

namespace tbl {
using namespace schema;

#define VNNX_TFLITE_BUFFER_FIELDS(X) \
    X(data, 0, vector<std::uint8_t>, {}) X(offset, 1, scalar<std::uint64_t>, 0) X(size, 2, scalar<std::uint64_t>, 0)
VNNX_TFLITE_TABLE(Buffer, VNNX_TFLITE_BUFFER_FIELDS);

#define VNNX_TFLITE_OPERATOR_CODE_FIELDS(X)                                                     \
    X(deprecated_builtin_code, 0, scalar<std::int8_t>, 0) X(custom_code, 1, string, {})         \
    X(version, 2, scalar<std::int32_t>, 1) X(builtin_code, 3, scalar<std::int32_t>, 0)
VNNX_TFLITE_TABLE(OperatorCode, VNNX_TFLITE_OPERATOR_CODE_FIELDS);

// `details` is a union: its type byte takes slot 4, the table slot 5.
#define VNNX_TFLITE_QUANTIZATION_FIELDS(X)                                                      \
    X(min, 0, vector<float>, {}) X(max, 1, vector<float>, {}) X(scale, 2, vector<float>, {})    \
    X(zero_point, 3, vector<std::int64_t>, {}) X(details_type, 4, scalar<std::uint8_t>, 0)      \
    X(details, 5, opaque_table, {}) X(quantized_dimension, 6, scalar<std::int32_t>, 0)
VNNX_TFLITE_TABLE(QuantizationParameters, VNNX_TFLITE_QUANTIZATION_FIELDS);

#define VNNX_TFLITE_TENSOR_FIELDS(X)                                                              \
    X(shape, 0, vector<std::int32_t>, {}) X(type, 1, scalar<tensor_type>, tensor_type::FLOAT32)   \
    X(buffer, 2, scalar<std::uint32_t>, 0) X(name, 3, string, {})                                 \
    X(quantization, 4, table<QuantizationParameters>, {}) X(is_variable, 5, scalar<bool>, false)  \
    X(sparsity, 6, opaque_table, {}) X(shape_signature, 7, vector<std::int32_t>, {})              \
    X(has_rank, 8, scalar<bool>, false) X(variant_tensors, 9, opaque_table_vector, {})
VNNX_TFLITE_TABLE(Tensor, VNNX_TFLITE_TENSOR_FIELDS);

// builtin_options: union (type slot 3, table slot 4); builtin_options_2: slots 11, 12.
#define VNNX_TFLITE_OPERATOR_FIELDS(X)                                                             \
    X(opcode_index, 0, scalar<std::uint32_t>, 0) X(inputs, 1, vector<std::int32_t>, {})            \
    X(outputs, 2, vector<std::int32_t>, {}) X(builtin_options_type, 3, scalar<std::uint8_t>, 0)    \
    X(builtin_options, 4, opaque_table, {}) X(custom_options, 5, vector<std::uint8_t>, {})         \
    X(custom_options_format, 6, scalar<std::int8_t>, 0)                                            \
    X(mutating_variable_inputs, 7, vector<std::uint8_t>, {}) X(intermediates, 8, vector<std::int32_t>, {}) \
    X(large_custom_options_offset, 9, scalar<std::uint64_t>, 0)                                    \
    X(large_custom_options_size, 10, scalar<std::uint64_t>, 0)                                     \
    X(builtin_options_2_type, 11, scalar<std::uint8_t>, 0) X(builtin_options_2, 12, opaque_table, {}) \
    X(debug_metadata_index, 13, scalar<std::int32_t>, -1)
VNNX_TFLITE_TABLE(Operator, VNNX_TFLITE_OPERATOR_FIELDS);

#define VNNX_TFLITE_SUBGRAPH_FIELDS(X)                                                            \
    X(tensors, 0, table_vector<Tensor>, {}) X(inputs, 1, vector<std::int32_t>, {})                \
    X(outputs, 2, vector<std::int32_t>, {}) X(operators, 3, table_vector<Operator>, {})           \
    X(name, 4, string, {}) X(debug_metadata_index, 5, scalar<std::int32_t>, -1)
VNNX_TFLITE_TABLE(SubGraph, VNNX_TFLITE_SUBGRAPH_FIELDS);

#define VNNX_TFLITE_MODEL_FIELDS(X)                                                                  \
    X(version, 0, scalar<std::uint32_t>, 0) X(operator_codes, 1, table_vector<OperatorCode>, {})     \
    X(subgraphs, 2, table_vector<SubGraph>, {}) X(description, 3, string, {})                        \
    X(buffers, 4, table_vector<Buffer>, {}) X(metadata_buffer, 5, vector<std::int32_t>, {})          \
    X(metadata, 6, opaque_table_vector, {}) X(signature_defs, 7, opaque_table_vector, {})
VNNX_TFLITE_TABLE(Model, VNNX_TFLITE_MODEL_FIELDS);

}  // namespace tbl

// ---------------------------------------------------------------------------------------------
// Options tables of the operators in lowering.md §6 (and a few neighbours), with their
// BuiltinOptions union numbers. `opt::Conv2DOptions` is the trait, `conv2d_options` its value.
namespace opt {
using namespace schema;
#define VNNX_TFLITE_NO_FIELDS(X)

#define VNNX_F_CONV2D(X)                                                                                  \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0)                                                               \
    X(fused_activation_function, 3, scalar<activation_function>, activation_function::NONE)               \
    X(dilation_w_factor, 4, scalar<std::int32_t>, 1) X(dilation_h_factor, 5, scalar<std::int32_t>, 1)      \
    X(quantized_bias_type, 6, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(Conv2DOptions, conv2d_options, 1, VNNX_F_CONV2D)

#define VNNX_F_DWCONV(X)                                                                                  \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0) X(depth_multiplier, 3, scalar<std::int32_t>, 0)                \
    X(fused_activation_function, 4, scalar<activation_function>, activation_function::NONE)               \
    X(dilation_w_factor, 5, scalar<std::int32_t>, 1) X(dilation_h_factor, 6, scalar<std::int32_t>, 1)
VNNX_TFLITE_OPTIONS(DepthwiseConv2DOptions, depthwise_conv2d_options, 2, VNNX_F_DWCONV)

#define VNNX_F_POOL(X)                                                                                    \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0) X(filter_width, 3, scalar<std::int32_t>, 0)                    \
    X(filter_height, 4, scalar<std::int32_t>, 0)                                                          \
    X(fused_activation_function, 5, scalar<activation_function>, activation_function::NONE)
VNNX_TFLITE_OPTIONS(Pool2DOptions, pool2d_options, 5, VNNX_F_POOL)

#define VNNX_F_FC(X)                                                                                      \
    X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE)               \
    X(weights_format, 1, scalar<fc_weights_format>, fc_weights_format::DEFAULT)                           \
    X(keep_num_dims, 2, scalar<bool>, false) X(asymmetric_quantize_inputs, 3, scalar<bool>, false)         \
    X(quantized_bias_type, 4, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(FullyConnectedOptions, fully_connected_options, 8, VNNX_F_FC)

#define VNNX_F_SOFTMAX(X) X(beta, 0, scalar<float>, 0.0f)
VNNX_TFLITE_OPTIONS(SoftmaxOptions, softmax_options, 9, VNNX_F_SOFTMAX)

#define VNNX_F_CONCAT(X) \
    X(axis, 0, scalar<std::int32_t>, 0) X(fused_activation_function, 1, scalar<activation_function>, activation_function::NONE)
VNNX_TFLITE_OPTIONS(ConcatenationOptions, concatenation_options, 10, VNNX_F_CONCAT)

#define VNNX_F_ADDSUB(X) \
    X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE) X(pot_scale_int16, 1, scalar<bool>, true)
VNNX_TFLITE_OPTIONS(AddOptions, add_options, 11, VNNX_F_ADDSUB)
VNNX_TFLITE_OPTIONS(SubOptions, sub_options, 28, VNNX_F_ADDSUB)

#define VNNX_F_ACT_ONLY(X) X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE)
VNNX_TFLITE_OPTIONS(L2NormOptions, l2norm_options, 12, VNNX_F_ACT_ONLY)
VNNX_TFLITE_OPTIONS(MulOptions, mul_options, 21, VNNX_F_ACT_ONLY)
VNNX_TFLITE_OPTIONS(DivOptions, div_options, 29, VNNX_F_ACT_ONLY)

#define VNNX_F_RESIZE_BILINEAR(X)                                                                  \
    X(new_height, 0, scalar<std::int32_t>, 0) X(new_width, 1, scalar<std::int32_t>, 0)              \
    X(align_corners, 2, scalar<bool>, false) X(half_pixel_centers, 3, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(ResizeBilinearOptions, resize_bilinear_options, 15, VNNX_F_RESIZE_BILINEAR)

#define VNNX_F_RESHAPE(X) X(new_shape, 0, vector<std::int32_t>, {})
VNNX_TFLITE_OPTIONS(ReshapeOptions, reshape_options, 17, VNNX_F_RESHAPE)

#define VNNX_F_BLOCK(X) X(block_size, 0, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(SpaceToDepthOptions, space_to_depth_options, 19, VNNX_F_BLOCK)
VNNX_TFLITE_OPTIONS(DepthToSpaceOptions, depth_to_space_options, 94, VNNX_F_BLOCK)

VNNX_TFLITE_OPTIONS(PadOptions, pad_options, 22, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_GATHER(X) X(axis, 0, scalar<std::int32_t>, 0) X(batch_dims, 1, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(GatherOptions, gather_options, 23, VNNX_F_GATHER)

VNNX_TFLITE_OPTIONS(BatchToSpaceNDOptions, batch_to_space_nd_options, 24, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(SpaceToBatchNDOptions, space_to_batch_nd_options, 25, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(TransposeOptions, transpose_options, 26, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_REDUCER(X) X(keep_dims, 0, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(ReducerOptions, reducer_options, 27, VNNX_F_REDUCER)

#define VNNX_F_SQUEEZE(X) X(squeeze_dims, 0, vector<std::int32_t>, {})
VNNX_TFLITE_OPTIONS(SqueezeOptions, squeeze_options, 30, VNNX_F_SQUEEZE)

#define VNNX_F_STRIDED_SLICE(X)                                                                  \
    X(begin_mask, 0, scalar<std::int32_t>, 0) X(end_mask, 1, scalar<std::int32_t>, 0)             \
    X(ellipsis_mask, 2, scalar<std::int32_t>, 0) X(new_axis_mask, 3, scalar<std::int32_t>, 0)     \
    X(shrink_axis_mask, 4, scalar<std::int32_t>, 0) X(offset, 5, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(StridedSliceOptions, strided_slice_options, 32, VNNX_F_STRIDED_SLICE)

VNNX_TFLITE_OPTIONS(ExpOptions, exp_options, 33, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_SPLIT(X) X(num_splits, 0, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(SplitOptions, split_options, 35, VNNX_F_SPLIT)
VNNX_TFLITE_OPTIONS(SplitVOptions, split_v_options, 79, VNNX_F_SPLIT)

VNNX_TFLITE_OPTIONS(LogSoftmaxOptions, log_softmax_options, 36, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_CAST(X) \
    X(in_data_type, 0, scalar<tensor_type>, tensor_type::FLOAT32) X(out_data_type, 1, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(CastOptions, cast_options, 37, VNNX_F_CAST)

VNNX_TFLITE_OPTIONS(DequantizeOptions, dequantize_options, 38, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(MaximumMinimumOptions, maximum_minimum_options, 39, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_ARG(X) X(output_type, 0, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(ArgMaxOptions, arg_max_options, 40, VNNX_F_ARG)
VNNX_TFLITE_OPTIONS(ArgMinOptions, arg_min_options, 57, VNNX_F_ARG)

VNNX_TFLITE_OPTIONS(LessOptions, less_options, 41, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(NegOptions, neg_options, 42, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(PadV2Options, pad_v2_options, 43, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(GreaterOptions, greater_options, 44, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(GreaterEqualOptions, greater_equal_options, 45, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(LessEqualOptions, less_equal_options, 46, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(SliceOptions, slice_options, 48, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_TRANSPOSE_CONV(X)                                                                          \
    X(padding, 0, scalar<padding_mode>, padding_mode::SAME) X(stride_w, 1, scalar<std::int32_t>, 0)        \
    X(stride_h, 2, scalar<std::int32_t>, 0)                                                               \
    X(fused_activation_function, 3, scalar<activation_function>, activation_function::NONE)               \
    X(quantized_bias_type, 4, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(TransposeConvOptions, transpose_conv_options, 49, VNNX_F_TRANSPOSE_CONV)

VNNX_TFLITE_OPTIONS(TileOptions, tile_options, 51, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(ExpandDimsOptions, expand_dims_options, 52, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(EqualOptions, equal_options, 53, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(NotEqualOptions, not_equal_options, 54, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_SHAPE(X) X(out_type, 0, scalar<tensor_type>, tensor_type::FLOAT32)
VNNX_TFLITE_OPTIONS(ShapeOptions, shape_options, 55, VNNX_F_SHAPE)

VNNX_TFLITE_OPTIONS(PowOptions, pow_options, 56, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_PACK(X) X(values_count, 0, scalar<std::int32_t>, 0) X(axis, 1, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(PackOptions, pack_options, 59, VNNX_F_PACK)

#define VNNX_F_UNPACK(X) X(num, 0, scalar<std::int32_t>, 0) X(axis, 1, scalar<std::int32_t>, 0)
VNNX_TFLITE_OPTIONS(UnpackOptions, unpack_options, 64, VNNX_F_UNPACK)

#define VNNX_F_LSTM(X)                                                                                    \
    X(fused_activation_function, 0, scalar<activation_function>, activation_function::NONE)               \
    X(cell_clip, 1, scalar<float>, 0.0f) X(proj_clip, 2, scalar<float>, 0.0f)                             \
    X(time_major, 3, scalar<bool>, false) X(asymmetric_quantize_inputs, 4, scalar<bool>, false)            \
    X(diagonal_recurrent_tensors, 5, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(UnidirectionalSequenceLSTMOptions, unidirectional_sequence_lstm_options, 71, VNNX_F_LSTM)

#define VNNX_F_RESIZE_NN(X) X(align_corners, 0, scalar<bool>, false) X(half_pixel_centers, 1, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(ResizeNearestNeighborOptions, resize_nearest_neighbor_options, 74, VNNX_F_RESIZE_NN)

#define VNNX_F_LEAKY(X) X(alpha, 0, scalar<float>, 0.0f)
VNNX_TFLITE_OPTIONS(LeakyReluOptions, leaky_relu_options, 75, VNNX_F_LEAKY)

VNNX_TFLITE_OPTIONS(SquaredDifferenceOptions, squared_difference_options, 76, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_MIRROR(X) X(mode, 0, scalar<mirror_pad_mode>, mirror_pad_mode::REFLECT)
VNNX_TFLITE_OPTIONS(MirrorPadOptions, mirror_pad_options, 77, VNNX_F_MIRROR)

VNNX_TFLITE_OPTIONS(AbsOptions, abs_options, 78, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(QuantizeOptions, quantize_options, 89, VNNX_TFLITE_NO_FIELDS)
VNNX_TFLITE_OPTIONS(HardSwishOptions, hard_swish_options, 91, VNNX_TFLITE_NO_FIELDS)

#define VNNX_F_BMM(X) \
    X(adj_x, 0, scalar<bool>, false) X(adj_y, 1, scalar<bool>, false) X(asymmetric_quantize_inputs, 2, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(BatchMatMulOptions, batch_matmul_options, 101, VNNX_F_BMM)

#define VNNX_F_GELU(X) X(approximate, 0, scalar<bool>, false)
VNNX_TFLITE_OPTIONS(GeluOptions, gelu_options, 116, VNNX_F_GELU)

}  // namespace opt

// The per-table X-lists were only needed to expand the traits above.
#undef VNNX_F_ACT_ONLY
#undef VNNX_F_ADDSUB
#undef VNNX_F_ARG
#undef VNNX_F_BLOCK
#undef VNNX_F_BMM
#undef VNNX_F_CAST
#undef VNNX_F_CONCAT
#undef VNNX_F_CONV2D
#undef VNNX_F_DWCONV
#undef VNNX_F_FC
#undef VNNX_F_GATHER
#undef VNNX_F_GELU
#undef VNNX_F_LEAKY
#undef VNNX_F_LSTM
#undef VNNX_F_MIRROR
#undef VNNX_F_PACK
#undef VNNX_F_POOL
#undef VNNX_F_REDUCER
#undef VNNX_F_RESHAPE
#undef VNNX_F_RESIZE_BILINEAR
#undef VNNX_F_RESIZE_NN
#undef VNNX_F_SHAPE
#undef VNNX_F_SOFTMAX
#undef VNNX_F_SPLIT
#undef VNNX_F_SQUEEZE
#undef VNNX_F_STRIDED_SLICE
#undef VNNX_F_TRANSPOSE_CONV
#undef VNNX_F_UNPACK

/// Every options trait above, for dispatch by union number.
template <class... T>
struct type_list {};
using all_options = type_list<
    opt::Conv2DOptions, opt::DepthwiseConv2DOptions, opt::Pool2DOptions, opt::FullyConnectedOptions,
    opt::SoftmaxOptions, opt::ConcatenationOptions, opt::AddOptions, opt::SubOptions, opt::L2NormOptions,
    opt::MulOptions, opt::DivOptions, opt::ResizeBilinearOptions, opt::ReshapeOptions, opt::SpaceToDepthOptions,
    opt::DepthToSpaceOptions, opt::PadOptions, opt::GatherOptions, opt::BatchToSpaceNDOptions,
    opt::SpaceToBatchNDOptions, opt::TransposeOptions, opt::ReducerOptions, opt::SqueezeOptions,
    opt::StridedSliceOptions, opt::ExpOptions, opt::SplitOptions, opt::SplitVOptions, opt::LogSoftmaxOptions,
    opt::CastOptions, opt::DequantizeOptions, opt::MaximumMinimumOptions, opt::ArgMaxOptions, opt::ArgMinOptions,
    opt::LessOptions, opt::NegOptions, opt::PadV2Options, opt::GreaterOptions, opt::GreaterEqualOptions,
    opt::LessEqualOptions, opt::SliceOptions, opt::TransposeConvOptions, opt::TileOptions, opt::ExpandDimsOptions,
    opt::EqualOptions, opt::NotEqualOptions, opt::ShapeOptions, opt::PowOptions, opt::PackOptions,
    opt::UnpackOptions, opt::UnidirectionalSequenceLSTMOptions, opt::ResizeNearestNeighborOptions,
    opt::LeakyReluOptions, opt::SquaredDifferenceOptions, opt::MirrorPadOptions, opt::AbsOptions,
    opt::QuantizeOptions, opt::HardSwishOptions, opt::BatchMatMulOptions, opt::GeluOptions>;

/// Calls f(trait{}) for the trait with union number `type`; returns false when none matches.
template <class F, class... T>
constexpr bool visit_options(std::uint8_t type, F&& f, type_list<T...> = {}) {
    return ((T::union_type == type ? (f(T{}), true) : false) || ...);
}

/// The TFLite spelling of an options union member this project knows ("Conv2DOptions"), or "".
[[nodiscard]] inline std::string_view options_name(std::uint8_t type) {
    std::string_view out;
    visit_options(type, [&](auto t) { out = decltype(t)::table_name; }, all_options{});
    return out;
}

static_assert(opt::Conv2DOptions::dilation_h_factor.voffset() == 14);
static_assert(tbl::QuantizationParameters::quantized_dimension.voffset() == 16);
static_assert(opt::GeluOptions::union_type == 116 && opt::BatchMatMulOptions::union_type == 101);

}  // namespace vnnx::tflite
// ---- end vnnx/tflite/schema.hpp
// ---- begin vnnx/tflite/model_view.hpp
// tflite::model_view: a verified, read-only, zero-copy view of a TFLite model.
// parse() runs the flatbuffers verifier table by table (driven by the field lists of
// schema.hpp) and then our own rules (indices in range, shapes, buffer sizes, quantization,
// one producer per tensor, no cycles). After parse() every accessor is safe.
#include <cmath>
#include <memory>



namespace vnnx::tflite {

/// Largest element count of one tensor we accept (downstream code indexes with 32-bit math).
inline constexpr std::int64_t max_tensor_elements = std::int64_t{1} << 31;

/// The options union number an operator takes (0 when it takes none or we do not model it).
[[nodiscard]] constexpr std::uint8_t expected_options(builtin_operator op) noexcept {
    using B = builtin_operator;
    switch (op) {
        case B::CONV_2D: return 1;
        case B::DEPTHWISE_CONV_2D: return 2;
        case B::AVERAGE_POOL_2D: case B::MAX_POOL_2D: case B::L2_POOL_2D: return 5;
        case B::FULLY_CONNECTED: return 8;
        case B::SOFTMAX: return 9;
        case B::CONCATENATION: return 10;
        case B::ADD: return 11;
        case B::L2_NORMALIZATION: return 12;
        case B::RESIZE_BILINEAR: return 15;
        case B::RESHAPE: return 17;
        case B::SPACE_TO_DEPTH: return 19;
        case B::MUL: return 21;
        case B::PAD: return 22;
        case B::GATHER: return 23;
        case B::BATCH_TO_SPACE_ND: return 24;
        case B::SPACE_TO_BATCH_ND: return 25;
        case B::TRANSPOSE: return 26;
        case B::MEAN: case B::SUM: case B::REDUCE_PROD: case B::REDUCE_MAX: case B::REDUCE_MIN:
        case B::REDUCE_ANY: case B::REDUCE_ALL: return 27;
        case B::SUB: return 28;
        case B::DIV: return 29;
        case B::SQUEEZE: return 30;
        case B::STRIDED_SLICE: return 32;
        case B::EXP: return 33;
        case B::SPLIT: return 35;
        case B::LOG_SOFTMAX: return 36;
        case B::CAST: return 37;
        case B::DEQUANTIZE: return 38;
        case B::MAXIMUM: case B::MINIMUM: return 39;
        case B::ARG_MAX: return 40;
        case B::LESS: return 41;
        case B::NEG: return 42;
        case B::PADV2: return 43;
        case B::GREATER: return 44;
        case B::GREATER_EQUAL: return 45;
        case B::LESS_EQUAL: return 46;
        case B::SLICE: return 48;
        case B::TRANSPOSE_CONV: return 49;
        case B::TILE: return 51;
        case B::EXPAND_DIMS: return 52;
        case B::EQUAL: return 53;
        case B::NOT_EQUAL: return 54;
        case B::SHAPE: return 55;
        case B::POW: return 56;
        case B::ARG_MIN: return 57;
        case B::PACK: return 59;
        case B::UNPACK: return 64;
        case B::UNIDIRECTIONAL_SEQUENCE_LSTM: return 71;
        case B::RESIZE_NEAREST_NEIGHBOR: return 74;
        case B::LEAKY_RELU: return 75;
        case B::SQUARED_DIFFERENCE: return 76;
        case B::MIRROR_PAD: return 77;
        case B::ABS: return 78;
        case B::SPLIT_V: return 79;
        case B::QUANTIZE: return 89;
        case B::HARD_SWISH: return 91;
        case B::DEPTH_TO_SPACE: return 94;
        case B::BATCH_MATMUL: return 101;
        case B::GELU: return 116;
        default: return 0;
    }
}

namespace detail {

using fb_table = flatbuffers::Table;
using fb_table_vector = flatbuffers::Vector<flatbuffers::Offset<flatbuffers::Table>>;

// ---- typed field access, one overload per kind -------------------------------------------
template <class T>
[[nodiscard]] inline T read(const fb_table* t, const schema::field<schema::scalar<T>>& f) {
    using S = typename schema::scalar<T>::storage;
    return static_cast<T>(t->GetField<S>(f.voffset(), static_cast<S>(f.def)));
}
[[nodiscard]] inline std::string_view read(const fb_table* t, const schema::field<schema::string>& f) {
    const auto* s = t->GetPointer<const flatbuffers::String*>(f.voffset());
    return s == nullptr ? std::string_view{} : std::string_view(s->c_str(), s->size());
}
template <class T>
[[nodiscard]] inline std::span<const T> read(const fb_table* t, const schema::field<schema::vector<T>>& f) {
    const auto* v = t->GetPointer<const flatbuffers::Vector<T>*>(f.voffset());
    if (v == nullptr || v->size() == 0) return {};
    return {reinterpret_cast<const T*>(v->Data()), v->size()};
}
template <class Tr>
[[nodiscard]] inline const fb_table* read(const fb_table* t, const schema::field<schema::table<Tr>>& f) {
    return t->GetPointer<const fb_table*>(f.voffset());
}
[[nodiscard]] inline const fb_table* read(const fb_table* t, const schema::field<schema::opaque_table>& f) {
    return t->GetPointer<const fb_table*>(f.voffset());
}
template <class Tr>
[[nodiscard]] inline const fb_table_vector* read(const fb_table* t, const schema::field<schema::table_vector<Tr>>& f) {
    return t->GetPointer<const fb_table_vector*>(f.voffset());
}

/// Reads an options table into its value struct; absent fields take their defaults.
template <class Trait>
[[nodiscard]] typename Trait::value read_options(const fb_table* t) {
    typename Trait::value out{};
    if (t == nullptr) return out;
    Trait::for_each_member([&](const auto& desc, auto member) {
        auto v = read(t, desc);
        if constexpr (std::is_same_v<std::remove_cvref_t<decltype(out.*member)>, decltype(v)>)
            out.*member = v;
        else
            out.*member = std::remove_cvref_t<decltype(out.*member)>(v.begin(), v.end());
    });
    return out;
}

[[nodiscard]] inline std::size_t count(const fb_table_vector* v) { return v == nullptr ? 0 : v->size(); }

// ---- error paths, rendered only on failure ---------------------------------------------------
struct path {
    const path* parent = nullptr;
    std::string_view name;
    std::size_t index = npos;
    static constexpr std::size_t npos = static_cast<std::size_t>(-1);
};

[[nodiscard]] inline std::string render(const path* p) {
    if (p == nullptr || p->name.empty()) return "model";
    std::string head = p->parent != nullptr && !p->parent->name.empty() ? render(p->parent) + "." : "";
    head += std::string(p->name);
    if (p->index != path::npos) head += "[" + std::to_string(p->index) + "]";
    return head;
}

[[noreturn]] inline void fail_at(std::string_view source, const path* p, std::string_view table, const std::string& rule,
                                 error_kind kind = error_kind::bad_input) {
    std::string where = render(p);
    if (!table.empty()) where += " (" + std::string(table) + ")";
    fail(kind, std::string(source) + ": " + where + ": " + rule);
}

[[nodiscard]] constexpr bool valid_enum(tensor_type v) noexcept { return is_valid(v); }
[[nodiscard]] constexpr bool valid_enum(padding_mode v) noexcept { return v == padding_mode::SAME || v == padding_mode::VALID; }
[[nodiscard]] constexpr bool valid_enum(activation_function v) noexcept {
    return static_cast<int>(v) >= 0 && static_cast<int>(v) <= static_cast<int>(activation_function::SIGN_BIT);
}
[[nodiscard]] constexpr bool valid_enum(mirror_pad_mode v) noexcept {
    return v == mirror_pad_mode::REFLECT || v == mirror_pad_mode::SYMMETRIC;
}
[[nodiscard]] constexpr bool valid_enum(fc_weights_format v) noexcept {
    return v == fc_weights_format::DEFAULT || v == fc_weights_format::SHUFFLED4x16INT8;
}

// ---- structural verification (bounds, alignment) driven by the field lists ------------------
struct verify_context {
    flatbuffers::Verifier& v;
    std::string_view source;
};

template <class Trait>
void verify_table(verify_context& c, const fb_table* t, const path& p);

inline void verify_opaque(verify_context& c, const fb_table* t, const path& p, std::string_view what) {
    if (!c.v.VerifyTableStart(reinterpret_cast<const std::uint8_t*>(t)))
        fail_at(c.source, &p, {}, std::string(what) + ": table header or vtable lies outside the buffer");
    c.v.EndTable();
}

template <class Trait, class Kind>
void verify_field(verify_context& c, const fb_table* t, const schema::field<Kind>& f, const path& p) {
    auto bad = [&](const char* why) {
        fail_at(c.source, &p, Trait::table_name,
                "field '" + std::string(f.name) + "' (slot " + std::to_string(f.slot) + ") " + why);
    };
    if constexpr (requires { typename Kind::storage; }) {
        using S = typename Kind::storage;
        if (!t->template VerifyField<S>(c.v, f.voffset(), sizeof(S))) bad("lies outside the buffer or is misaligned");
        // Enum fields of options tables must hold a value of their enum (consumers switch on them).
        if constexpr (std::is_enum_v<typename Kind::value> && requires { Trait::union_type; }) {
            const auto v = read(t, f);
            if (!valid_enum(v))
                fail_at(c.source, &p, Trait::table_name,
                        "field '" + std::string(f.name) + "' (slot " + std::to_string(f.slot) + ") holds " +
                            std::to_string(static_cast<int>(v)) + ", which is not a value of its enum");
        }
    } else {
        if (!t->VerifyOffset(c.v, f.voffset())) bad("has an offset that points outside the buffer");
        if constexpr (std::is_same_v<Kind, schema::string>) {
            if (!c.v.VerifyString(t->GetPointer<const flatbuffers::String*>(f.voffset())))
                bad("is a string that runs past the end of the buffer or lacks its terminator");
        } else if constexpr (requires { typename Kind::element; }) {
            using E = typename Kind::element;
            const auto* vec = t->GetPointer<const flatbuffers::Vector<E>*>(f.voffset());
            if (!c.v.VerifyVector(vec)) bad("is a vector whose length runs past the end of the buffer");
            if (vec != nullptr && reinterpret_cast<std::uintptr_t>(vec->Data()) % alignof(E) != 0)
                bad("is a vector whose elements are misaligned");
        } else if constexpr (std::is_same_v<Kind, schema::opaque_table>) {
            if (const auto* sub = t->GetPointer<const fb_table*>(f.voffset()))
                verify_opaque(c, sub, path{&p, f.name, path::npos}, "table");
        } else if constexpr (std::is_same_v<Kind, schema::opaque_table_vector>) {
            const auto* vec = t->GetPointer<const fb_table_vector*>(f.voffset());
            if (!c.v.VerifyVector(vec)) bad("is a vector whose length runs past the end of the buffer");
            for (std::size_t i = 0; i < count(vec); ++i)
                verify_opaque(c, vec->Get(static_cast<flatbuffers::uoffset_t>(i)), path{&p, f.name, i}, "table");
        } else if constexpr (requires { typename Kind::trait; }) {
            using Sub = typename Kind::trait;
            if constexpr (std::is_same_v<Kind, schema::table<Sub>>) {
                if (const auto* sub = t->GetPointer<const fb_table*>(f.voffset()))
                    verify_table<Sub>(c, sub, path{&p, f.name, path::npos});
            } else {
                const auto* vec = t->GetPointer<const fb_table_vector*>(f.voffset());
                if (!c.v.VerifyVector(vec)) bad("is a vector whose length runs past the end of the buffer");
                for (std::size_t i = 0; i < count(vec); ++i)
                    verify_table<Sub>(c, vec->Get(static_cast<flatbuffers::uoffset_t>(i)), path{&p, f.name, i});
            }
        }
    }
}

template <class Trait>
void verify_table(verify_context& c, const fb_table* t, const path& p) {
    if (!c.v.VerifyTableStart(reinterpret_cast<const std::uint8_t*>(t)))
        fail_at(c.source, &p, Trait::table_name,
                "table header or vtable lies outside the buffer (or nesting/table count over the limit)");
    Trait::for_each_field([&](const auto& f) { verify_field<Trait>(c, t, f, p); });
    if constexpr (std::is_same_v<Trait, tbl::Operator>) {
        // The options union: check the member table against its own field list.
        const auto type = read(t, tbl::Operator::builtin_options_type);
        if (const auto* o = read(t, tbl::Operator::builtin_options); o != nullptr && type != 0) {
            visit_options(type, [&](auto tr) { verify_table<decltype(tr)>(c, o, path{&p, "builtin_options", path::npos}); },
                          all_options{});
        }
    }
    c.v.EndTable();
}

// ---- facts kept after verification ------------------------------------------------------------
struct op_code {
    builtin_operator op = builtin_operator::ADD;
    std::string_view custom_code;
    std::int32_t version = 1;
};

struct model_state {
    std::vector<std::byte> owned;  // an aligned copy, only when the caller's bytes were misaligned
    std::span<const std::byte> bytes;
    std::string source;
    const fb_table* model = nullptr;
    std::vector<op_code> codes;
};

}  // namespace detail

/// Quantization of one tensor. Empty when the tensor has no scale/zero point (as TFLite reads it).
struct quant_view {
    std::span<const float> scale;
    std::span<const std::int64_t> zero_point;
    std::int32_t quantized_dimension = 0;
    [[nodiscard]] bool empty() const noexcept { return scale.empty(); }
    [[nodiscard]] bool per_channel() const noexcept { return scale.size() > 1; }
};

class tensor_view {
public:
    tensor_view() = default;
    tensor_view(const detail::model_state* m, const detail::fb_table* t, std::size_t index)
        : m_(m), t_(t), index_(index) {}

    [[nodiscard]] std::size_t index() const noexcept { return index_; }
    [[nodiscard]] std::string_view name() const { return detail::read(t_, tbl::Tensor::name); }
    [[nodiscard]] tensor_type type() const { return detail::read(t_, tbl::Tensor::type); }
    [[nodiscard]] std::span<const std::int32_t> shape() const { return detail::read(t_, tbl::Tensor::shape); }
    [[nodiscard]] std::size_t rank() const { return shape().size(); }
    [[nodiscard]] std::int64_t element_count() const {
        std::int64_t n = 1;
        for (std::int32_t d : shape()) n *= d;  // verified: no overflow
        return n;
    }
    [[nodiscard]] std::uint32_t buffer_index() const { return detail::read(t_, tbl::Tensor::buffer); }
    [[nodiscard]] bool is_variable() const { return detail::read(t_, tbl::Tensor::is_variable); }
    /// The constant data (a buffer with bytes); empty for activations.
    [[nodiscard]] std::span<const std::byte> data() const;
    [[nodiscard]] bool is_constant() const { return !data().empty(); }
    [[nodiscard]] quant_view quant() const {
        quant_view q;
        const auto* qt = detail::read(t_, tbl::Tensor::quantization);
        if (qt == nullptr) return q;
        auto s = detail::read(qt, tbl::QuantizationParameters::scale);
        auto z = detail::read(qt, tbl::QuantizationParameters::zero_point);
        if (s.empty() || z.empty()) return q;
        q.scale = s;
        q.zero_point = z;
        q.quantized_dimension = detail::read(qt, tbl::QuantizationParameters::quantized_dimension);
        // Some converters copied the filter's dimension onto 1-D per-channel biases.
        if (s.size() > 1 && rank() == 1) q.quantized_dimension = 0;
        return q;
    }
    [[nodiscard]] const detail::fb_table* table() const noexcept { return t_; }

private:
    const detail::model_state* m_ = nullptr;
    const detail::fb_table* t_ = nullptr;
    std::size_t index_ = 0;
};

class operator_view {
public:
    operator_view() = default;
    operator_view(const detail::model_state* m, const detail::fb_table* t, std::size_t index)
        : m_(m), t_(t), index_(index) {}

    [[nodiscard]] std::size_t index() const noexcept { return index_; }
    [[nodiscard]] std::uint32_t opcode_index() const { return detail::read(t_, tbl::Operator::opcode_index); }
    /// max(builtin_code, deprecated_builtin_code), as TFLite reads it.
    [[nodiscard]] builtin_operator op() const { return m_->codes[opcode_index()].op; }
    [[nodiscard]] std::string_view custom_code() const { return m_->codes[opcode_index()].custom_code; }
    [[nodiscard]] std::int32_t version() const { return m_->codes[opcode_index()].version; }
    /// "CONV_2D", or "CUSTOM:<code>" for custom operators.
    [[nodiscard]] std::string name() const {
        if (op() == builtin_operator::CUSTOM) return "CUSTOM:" + std::string(custom_code());
        return std::string(builtin_name(op()));
    }
    /// Tensor indices; -1 marks an absent optional input.
    [[nodiscard]] std::span<const std::int32_t> inputs() const { return detail::read(t_, tbl::Operator::inputs); }
    [[nodiscard]] std::span<const std::int32_t> outputs() const { return detail::read(t_, tbl::Operator::outputs); }
    [[nodiscard]] std::span<const std::int32_t> intermediates() const {
        return detail::read(t_, tbl::Operator::intermediates);
    }
    [[nodiscard]] std::uint8_t options_type() const { return detail::read(t_, tbl::Operator::builtin_options_type); }
    [[nodiscard]] std::span<const std::uint8_t> custom_options() const {
        return detail::read(t_, tbl::Operator::custom_options);
    }
    /// The options of this operator with defaults applied; throws when it holds another table.
    template <class OptionsTrait>
    [[nodiscard]] typename OptionsTrait::value options() const {
        const auto type = options_type();
        const auto* o = detail::read(t_, tbl::Operator::builtin_options);
        if (o == nullptr || type == 0) return typename OptionsTrait::value{};
        if (type != OptionsTrait::union_type) {
            const auto held = options_name(type);
            fail_input(m_->source + ": operator " + std::to_string(index_) + " (" + name() + "): options are " +
                       (held.empty() ? "union member " + std::to_string(type) : std::string(held)) + ", not " +
                       std::string(OptionsTrait::table_name));
        }
        return detail::read_options<OptionsTrait>(o);
    }
    [[nodiscard]] const detail::fb_table* table() const noexcept { return t_; }

private:
    const detail::model_state* m_ = nullptr;
    const detail::fb_table* t_ = nullptr;
    std::size_t index_ = 0;
};

class subgraph_view {
public:
    subgraph_view() = default;
    subgraph_view(const detail::model_state* m, const detail::fb_table* t, std::size_t index)
        : m_(m), t_(t), index_(index) {}

    [[nodiscard]] std::size_t index() const noexcept { return index_; }
    [[nodiscard]] std::string_view name() const { return detail::read(t_, tbl::SubGraph::name); }
    [[nodiscard]] std::size_t tensor_count() const { return detail::count(detail::read(t_, tbl::SubGraph::tensors)); }
    [[nodiscard]] std::size_t operator_count() const {
        return detail::count(detail::read(t_, tbl::SubGraph::operators));
    }
    [[nodiscard]] tensor_view tensor(std::size_t i) const {
        if (i >= tensor_count())
            fail_input(m_->source + ": subgraph " + std::to_string(index_) + ": tensor index " + std::to_string(i) +
                       " out of range (" + std::to_string(tensor_count()) + " tensors)");
        return {m_, detail::read(t_, tbl::SubGraph::tensors)->Get(static_cast<flatbuffers::uoffset_t>(i)), i};
    }
    [[nodiscard]] operator_view op(std::size_t i) const {
        if (i >= operator_count())
            fail_input(m_->source + ": subgraph " + std::to_string(index_) + ": operator index " + std::to_string(i) +
                       " out of range (" + std::to_string(operator_count()) + " operators)");
        return {m_, detail::read(t_, tbl::SubGraph::operators)->Get(static_cast<flatbuffers::uoffset_t>(i)), i};
    }
    [[nodiscard]] std::span<const std::int32_t> inputs() const { return detail::read(t_, tbl::SubGraph::inputs); }
    [[nodiscard]] std::span<const std::int32_t> outputs() const { return detail::read(t_, tbl::SubGraph::outputs); }

private:
    const detail::model_state* m_ = nullptr;
    const detail::fb_table* t_ = nullptr;
    std::size_t index_ = 0;
};

class model_view {
public:
    model_view() = default;

    /// Verifies everything, then gives a zero-copy view; the caller keeps `bytes` alive
    /// (unless they were misaligned, then the view keeps an aligned copy).
    static model_view parse(std::span<const std::byte> bytes, std::string source);

    [[nodiscard]] std::string_view source() const { return state_->source; }
    [[nodiscard]] std::span<const std::byte> bytes() const { return state_->bytes; }
    [[nodiscard]] std::uint32_t version() const { return detail::read(state_->model, tbl::Model::version); }
    [[nodiscard]] std::string_view description() const {
        return detail::read(state_->model, tbl::Model::description);
    }
    [[nodiscard]] std::size_t subgraph_count() const {
        return detail::count(detail::read(state_->model, tbl::Model::subgraphs));
    }
    [[nodiscard]] subgraph_view subgraph(std::size_t i = 0) const {
        if (i >= subgraph_count())
            fail_input(state_->source + ": subgraph index " + std::to_string(i) + " out of range (" +
                       std::to_string(subgraph_count()) + " subgraphs)");
        return {state_.get(),
                detail::read(state_->model, tbl::Model::subgraphs)->Get(static_cast<flatbuffers::uoffset_t>(i)), i};
    }
    [[nodiscard]] std::size_t operator_code_count() const { return state_->codes.size(); }
    [[nodiscard]] const detail::op_code& operator_code(std::size_t i) const { return state_->codes.at(i); }
    [[nodiscard]] std::size_t buffer_count() const {
        return detail::count(detail::read(state_->model, tbl::Model::buffers));
    }
    [[nodiscard]] std::span<const std::byte> buffer_data(std::size_t i) const {
        return buffer_bytes(state_.get(), i);
    }

    static std::span<const std::byte> buffer_bytes(const detail::model_state* m, std::size_t i) {
        const auto* buffers = detail::read(m->model, tbl::Model::buffers);
        if (i == 0 || i >= detail::count(buffers)) return {};  // buffer 0 is the empty sentinel
        const auto* b = buffers->Get(static_cast<flatbuffers::uoffset_t>(i));
        auto d = detail::read(b, tbl::Buffer::data);
        if (!d.empty()) return std::as_bytes(d);
        const auto off = detail::read(b, tbl::Buffer::offset);
        const auto size = detail::read(b, tbl::Buffer::size);
        if (off > 1 && size > 0) return m->bytes.subspan(off, size);  // verified in range
        return {};
    }

private:
    std::shared_ptr<const detail::model_state> state_;
};

inline std::span<const std::byte> tensor_view::data() const { return model_view::buffer_bytes(m_, buffer_index()); }

// ---------------------------------------------------------------------------------------------
namespace detail {

inline bool mul_overflow_checked(std::int64_t a, std::int64_t b, std::int64_t& out) {
    return __builtin_mul_overflow(a, b, &out);
}

inline void check_semantics(const model_state& m) {
    const std::string_view src = m.source;
    const auto* model = m.model;
    const auto version = read(model, tbl::Model::version);
    if (version != 3)
        fail_at(src, nullptr, "Model", "schema version is " + std::to_string(version) + ", expected 3");

    const auto* buffers = read(model, tbl::Model::buffers);
    const std::size_t buffer_count = count(buffers);
    for (std::size_t b = 0; b < buffer_count; ++b) {
        const auto* bt = buffers->Get(static_cast<flatbuffers::uoffset_t>(b));
        const auto off = read(bt, tbl::Buffer::offset);
        const auto size = read(bt, tbl::Buffer::size);
        if (off > 1 && (off > m.bytes.size() || size > m.bytes.size() - off)) {
            path p{nullptr, "buffers", b};
            fail_at(src, &p, "Buffer",
                    "external data [" + std::to_string(off) + ", +" + std::to_string(size) + ") lies outside the file of " +
                        std::to_string(m.bytes.size()) + " bytes");
        }
    }

    const auto* subgraphs = read(model, tbl::Model::subgraphs);
    if (count(subgraphs) == 0) fail_at(src, nullptr, "Model", "has no subgraphs");

    for (std::size_t g = 0; g < count(subgraphs); ++g) {
        const auto* sg = subgraphs->Get(static_cast<flatbuffers::uoffset_t>(g));
        const path gp{nullptr, "subgraphs", g};
        const auto* tensors = read(sg, tbl::SubGraph::tensors);
        const std::size_t n_tensors = count(tensors);
        for (std::size_t i = 0; i < n_tensors; ++i) {
            const auto* t = tensors->Get(static_cast<flatbuffers::uoffset_t>(i));
            const path tp{&gp, "tensors", i};
            auto bad = [&](const std::string& rule, error_kind k = error_kind::bad_input) {
                std::string name(read(t, tbl::Tensor::name));
                fail_at(src, &tp, "Tensor" + (name.empty() ? std::string{} : " '" + name + "'"), rule, k);
            };
            const auto type = read(t, tbl::Tensor::type);
            if (!is_valid(type)) bad("type " + std::to_string(static_cast<int>(type)) + " is not a TFLite tensor type");
            const auto buf = read(t, tbl::Tensor::buffer);
            if (buf >= buffer_count && !(buf == 0 && buffer_count == 0))
                bad("buffer index " + std::to_string(buf) + " out of range (" + std::to_string(buffer_count) + " buffers)");
            std::int64_t elements = 1;
            const auto shape = read(t, tbl::Tensor::shape);
            for (std::size_t d = 0; d < shape.size(); ++d) {
                if (shape[d] < 0)
                    bad("shape[" + std::to_string(d) + "] is " + std::to_string(shape[d]) + "; dimensions must be >= 0");
                if (mul_overflow_checked(elements, shape[d], elements) || elements >= max_tensor_elements)
                    bad("element count overflows the limit of 2^31 elements", error_kind::limit);
            }
            // The configurable limit (support/limits.hpp) bounds what the compiler allocates per tensor.
            if (static_cast<std::uint64_t>(elements) > active_limits().max_tensor_elements)
                bad("element count " + std::to_string(elements) + " exceeds the limit of " +
                        std::to_string(active_limits().max_tensor_elements) + " (raise it with VNNX_MAX_TENSOR_ELEMENTS)",
                    error_kind::limit);
            std::span<const std::byte> data = model_view::buffer_bytes(&m, buf);
            if (!data.empty() && read(t, tbl::Tensor::sparsity) == nullptr) {
                const std::size_t es = element_size(type);
                std::uint64_t expect = 0;
                bool check = true;
                if (type == tensor_type::INT4) expect = (static_cast<std::uint64_t>(elements) + 1) / 2;
                else if (es != 0) expect = static_cast<std::uint64_t>(elements) * es;
                else check = false;  // strings and resources carry their own layout
                if (check && data.size() != expect)
                    bad("buffer " + std::to_string(buf) + " holds " + std::to_string(data.size()) + " bytes; shape x " +
                        std::string(type_name(type)) + " needs " + std::to_string(expect));
            }
            if (const auto* q = read(t, tbl::Tensor::quantization)) {
                auto s = read(q, tbl::QuantizationParameters::scale);
                auto z = read(q, tbl::QuantizationParameters::zero_point);
                if (!s.empty() && !z.empty()) {
                    if (s.size() != z.size())
                        bad("quantization has " + std::to_string(s.size()) + " scales but " + std::to_string(z.size()) +
                            " zero points");
                    for (std::size_t k = 0; k < s.size(); ++k)
                        if (!std::isfinite(s[k])) bad("quantization scale[" + std::to_string(k) + "] is not finite");
                    // A zero point is a value of the tensor's own type (the kernels add it in 32 bits).
                    std::int64_t zlo = 0, zhi = -1;
                    if (type == tensor_type::INT8) zlo = -128, zhi = 127;
                    if (type == tensor_type::UINT8) zlo = 0, zhi = 255;
                    if (type == tensor_type::INT16) zlo = -32768, zhi = 32767;
                    for (std::size_t k = 0; k < z.size() && zhi >= zlo; ++k)
                        if (z[k] < zlo || z[k] > zhi)
                            bad("quantization zero_point[" + std::to_string(k) + "] = " + std::to_string(z[k]) +
                                " is outside the range of " + std::string(type_name(type)));
                    if (s.size() > 1) {
                        const auto qd = read(q, tbl::QuantizationParameters::quantized_dimension);
                        const bool in_rank = qd >= 0 && static_cast<std::size_t>(qd) < shape.size();
                        if (in_rank && static_cast<std::size_t>(shape[static_cast<std::size_t>(qd)]) != s.size())
                            bad("per-channel quantization has " + std::to_string(s.size()) + " scales but dimension " +
                                std::to_string(qd) + " has size " + std::to_string(shape[static_cast<std::size_t>(qd)]));
                        // A 1-D tensor with a stale dimension (old converters) is read along dimension 0.
                        if (!in_rank && !(shape.size() == 1 && static_cast<std::size_t>(shape[0]) == s.size()))
                            bad("quantized_dimension " + std::to_string(qd) + " is outside the tensor's rank " +
                                std::to_string(shape.size()));
                    }
                }
            }
        }

        auto check_index_list = [&](std::span<const std::int32_t> list, const path& p, std::string_view table,
                                    std::string_view what, bool allow_absent) {
            for (std::size_t k = 0; k < list.size(); ++k) {
                const std::int32_t v = list[k];
                if (v == -1 && allow_absent) continue;
                if (v < 0 || static_cast<std::size_t>(v) >= n_tensors)
                    fail_at(src, &p, table,
                            std::string(what) + "[" + std::to_string(k) + "] = " + std::to_string(v) +
                                " is not a tensor index (" + std::to_string(n_tensors) + " tensors)");
            }
        };
        check_index_list(read(sg, tbl::SubGraph::inputs), gp, "SubGraph", "inputs", false);
        check_index_list(read(sg, tbl::SubGraph::outputs), gp, "SubGraph", "outputs", false);

        const auto* ops = read(sg, tbl::SubGraph::operators);
        const std::size_t n_ops = count(ops);
        if (n_ops > active_limits().max_operators)
            fail_at(src, &gp, "SubGraph",
                    "has " + std::to_string(n_ops) + " operators, more than the limit of " +
                        std::to_string(active_limits().max_operators) + " (raise it with VNNX_MAX_OPERATORS)",
                    error_kind::limit);
        std::vector<std::int64_t> producer(n_tensors, -1);
        for (std::size_t i = 0; i < n_ops; ++i) {
            const auto* o = ops->Get(static_cast<flatbuffers::uoffset_t>(i));
            const path op_p{&gp, "operators", i};
            const auto oc = read(o, tbl::Operator::opcode_index);
            if (oc >= m.codes.size())
                fail_at(src, &op_p, "Operator",
                        "opcode_index " + std::to_string(oc) + " out of range (" + std::to_string(m.codes.size()) +
                            " operator codes)");
            const builtin_operator op = m.codes[oc].op;
            const std::string table = "Operator " + std::string(builtin_name(op));
            check_index_list(read(o, tbl::Operator::inputs), op_p, table, "inputs", true);
            check_index_list(read(o, tbl::Operator::outputs), op_p, table, "outputs", false);
            check_index_list(read(o, tbl::Operator::intermediates), op_p, table, "intermediates", true);
            const auto type = read(o, tbl::Operator::builtin_options_type);
            const auto want = expected_options(op);
            if (type != 0 && want != 0 && type != want && read(o, tbl::Operator::builtin_options) != nullptr) {
                const auto held = options_name(type);
                fail_at(src, &op_p, table,
                        "builtin_options is " + (held.empty() ? "union member " + std::to_string(type) : std::string(held)) +
                            " but " + std::string(builtin_name(op)) + " takes " + std::string(options_name(want)));
            }
            for (std::int32_t out : read(o, tbl::Operator::outputs)) {
                auto& pr = producer[static_cast<std::size_t>(out)];
                if (pr >= 0)
                    fail_at(src, &op_p, table,
                            "output tensor " + std::to_string(out) + " is also written by operator " + std::to_string(pr));
                pr = static_cast<std::int64_t>(i);
            }
        }
        // No cycles: Kahn's algorithm over "operator reads a tensor another operator writes".
        std::vector<std::size_t> pending(n_ops, 0);
        std::vector<std::vector<std::size_t>> readers(n_ops);
        for (std::size_t i = 0; i < n_ops; ++i) {
            const auto* o = ops->Get(static_cast<flatbuffers::uoffset_t>(i));
            for (std::int32_t in : read(o, tbl::Operator::inputs)) {
                if (in < 0) continue;
                const auto pr = producer[static_cast<std::size_t>(in)];
                if (pr < 0) continue;
                readers[static_cast<std::size_t>(pr)].push_back(i);
                ++pending[i];
            }
        }
        std::vector<std::size_t> ready;
        for (std::size_t i = 0; i < n_ops; ++i)
            if (pending[i] == 0) ready.push_back(i);
        std::size_t done = 0;
        while (!ready.empty()) {
            const std::size_t i = ready.back();
            ready.pop_back();
            ++done;
            for (std::size_t r : readers[i])
                if (--pending[r] == 0) ready.push_back(r);
        }
        if (done != n_ops) {
            std::size_t first = 0;
            while (pending[first] == 0) ++first;
            const path op_p{&gp, "operators", first};
            fail_at(src, &op_p, "Operator", "is part of a cycle: the graph's operators depend on each other in a loop");
        }
    }
}

// Control flow (IF, WHILE, CALL_ONCE) names other subgraphs in its options. A reader or
// interpreter that follows them would recurse once per level, so the nesting reachable from
// subgraph 0 is bounded (max_subgraph_depth) and a subgraph that reaches itself is refused.
inline void check_subgraph_nesting(const model_state& m) {
    const std::string_view src = m.source;
    const auto* subgraphs = read(m.model, tbl::Model::subgraphs);
    const std::size_t n = count(subgraphs);
    // The options tables of these operators are only bounds-checked (opaque): verify each field read.
    flatbuffers::Verifier v(reinterpret_cast<const std::uint8_t*>(m.bytes.data()), m.bytes.size());
    std::vector<std::vector<std::size_t>> callees(n);
    for (std::size_t g = 0; g < n; ++g) {
        const path gp{nullptr, "subgraphs", g};
        const auto* ops = read(subgraphs->Get(static_cast<flatbuffers::uoffset_t>(g)), tbl::SubGraph::operators);
        for (std::size_t i = 0; i < count(ops); ++i) {
            const auto* o = ops->Get(static_cast<flatbuffers::uoffset_t>(i));
            const builtin_operator op = m.codes[read(o, tbl::Operator::opcode_index)].op;
            // BuiltinOptions union members: IfOptions 92, WhileOptions 93, CallOnceOptions 103;
            // each holds its subgraph indices as int32 fields 0 (and 1).
            int fields = 0;
            std::uint8_t want = 0;
            if (op == builtin_operator::IF) fields = 2, want = 92;
            if (op == builtin_operator::WHILE) fields = 2, want = 93;
            if (op == builtin_operator::CALL_ONCE) fields = 1, want = 103;
            const auto* opts = read(o, tbl::Operator::builtin_options);
            if (fields == 0 || opts == nullptr || read(o, tbl::Operator::builtin_options_type) != want) continue;
            const path op_p{&gp, "operators", i};
            for (int f = 0; f < fields; ++f) {
                const auto vo = static_cast<flatbuffers::voffset_t>(4 + 2 * f);
                if (!opts->VerifyField<std::int32_t>(v, vo, 4))
                    fail_at(src, &op_p, builtin_name(op), "a subgraph index of its options lies outside the buffer");
                const std::int32_t target = opts->GetField<std::int32_t>(vo, 0);
                if (target < 0 || static_cast<std::size_t>(target) >= n)
                    fail_at(src, &op_p, builtin_name(op),
                            "subgraph index " + std::to_string(target) + " out of range (" + std::to_string(n) +
                                " subgraphs)");
                callees[g].push_back(static_cast<std::size_t>(target));
            }
        }
    }
    // Iterative depth-first walk from subgraph 0 (no recursion here either): the path's length is
    // the nesting depth; meeting a subgraph already on the path is recursion. height[g] (the
    // levels from g down, once g is done) covers a subgraph reached again from another caller.
    const std::uint64_t max_depth = active_limits().max_subgraph_depth;
    const auto too_deep = [&](std::size_t g, std::uint64_t depth) {
        const path gp{nullptr, "subgraphs", g};
        fail_at(src, &gp, "SubGraph",
                "is nested " + std::to_string(depth) + " subgraphs deep, more than the limit of " +
                    std::to_string(max_depth) + " (raise it with VNNX_MAX_SUBGRAPH_DEPTH)",
                error_kind::limit);
    };
    std::vector<char> on_path(n, 0);
    std::vector<std::uint64_t> height(n, 0);  // 0: not done yet
    std::vector<std::pair<std::size_t, std::size_t>> stack{{0, 0}};  // subgraph, next callee
    on_path[0] = 1;
    while (!stack.empty()) {
        const std::size_t g = stack.back().first;
        const std::size_t k = stack.back().second++;
        if (k == callees[g].size()) {
            std::uint64_t below = 0;
            for (const std::size_t c : callees[g]) below = std::max(below, height[c]);
            height[g] = below + 1;
            on_path[g] = 0;
            stack.pop_back();
            continue;
        }
        const std::size_t c = callees[g][k];
        if (on_path[c]) {
            const path gp{nullptr, "subgraphs", g};
            fail_at(src, &gp, "SubGraph",
                    "calls subgraph " + std::to_string(c) + ", which is already being called: recursion");
        }
        if (height[c] != 0) {
            if (stack.size() + height[c] > max_depth) too_deep(c, stack.size() + height[c]);
            continue;
        }
        if (stack.size() + 1 > max_depth) too_deep(c, stack.size() + 1);
        on_path[c] = 1;
        stack.push_back({c, 0});
    }
}

}  // namespace detail

inline model_view model_view::parse(std::span<const std::byte> bytes, std::string source) {
    auto st = std::make_shared<detail::model_state>();
    st->source = std::move(source);
    const std::string& src = st->source;
    if (bytes.size() < 8)
        fail_input(src + ": not a TFLite model: " + std::to_string(bytes.size()) + " bytes is too short (needs at least 8)");
    if (bytes.size() >= FLATBUFFERS_MAX_BUFFER_SIZE)
        fail(error_kind::limit, src + ": " + std::to_string(bytes.size()) + " bytes is over the flatbuffers limit of 2 GiB");
    const char* id = reinterpret_cast<const char*>(bytes.data()) + 4;
    if (std::memcmp(id, "TFL3", 4) != 0) {
        std::string shown;
        for (int i = 0; i < 4; ++i) {
            const auto c = static_cast<unsigned char>(id[i]);
            shown += (c >= 32 && c < 127) ? std::string(1, static_cast<char>(c)) : "\\x" + std::to_string(c);
        }
        fail_input(src + ": not a TFLite model: file identifier is '" + shown + "', expected 'TFL3'");
    }
    // Flatbuffers alignment is relative to the buffer start; in-place spans need it absolute too.
    if (reinterpret_cast<std::uintptr_t>(bytes.data()) % 16 != 0) {
        st->owned.assign(bytes.begin(), bytes.end());
        st->bytes = st->owned;
    } else {
        st->bytes = bytes;
    }
    const auto* base = reinterpret_cast<const std::uint8_t*>(st->bytes.data());
    flatbuffers::Verifier v(base, st->bytes.size());
    const auto root = v.VerifyOffset(0);
    if (root == 0) fail_input(src + ": model: the root table offset points outside the buffer");
    st->model = reinterpret_cast<const flatbuffers::Table*>(base + root);
    detail::verify_context c{v, src};
    detail::verify_table<tbl::Model>(c, st->model, detail::path{});

    const auto* codes = detail::read(st->model, tbl::Model::operator_codes);
    for (std::size_t i = 0; i < detail::count(codes); ++i) {
        const auto* oc = codes->Get(static_cast<flatbuffers::uoffset_t>(i));
        const std::int32_t dep = detail::read(oc, tbl::OperatorCode::deprecated_builtin_code);
        const std::int32_t cur = detail::read(oc, tbl::OperatorCode::builtin_code);
        // Old files set only the deprecated byte and leave builtin_code at 0 (ADD).
        const std::int32_t code = std::max(dep, cur);
        if (code < 0 || code >= builtin_operator_count) {
            detail::path p{nullptr, "operator_codes", i};
            detail::fail_at(src, &p, "OperatorCode",
                            "builtin code " + std::to_string(code) + " is not known to this reader (0.." +
                                std::to_string(builtin_operator_count - 1) + ")",
                            error_kind::unsupported);
        }
        st->codes.push_back({static_cast<builtin_operator>(code), detail::read(oc, tbl::OperatorCode::custom_code),
                             detail::read(oc, tbl::OperatorCode::version)});
    }
    detail::check_semantics(*st);
    detail::check_subgraph_nesting(*st);
    model_view out;
    out.state_ = std::move(st);
    return out;
}

}  // namespace vnnx::tflite
// ---- end vnnx/tflite/model_view.hpp
// ---- begin vnnx/tflite/builder.hpp
// A small TFLite model builder over flatbuffers::FlatBufferBuilder, using the same field lists
// as the reader (schema.hpp). Tests and examples make single-op and small multi-op models with
// it; demo_model() is the built-in demo (a small int8 CNN).
#include <functional>



namespace vnnx::tflite {

/// Quantization of a tensor to build: per-tensor (one scale) or per-channel along `quantized_dimension`.
struct quant {
    std::vector<float> scale;
    std::vector<std::int64_t> zero_point;
    std::int32_t quantized_dimension = 0;

    quant() = default;
    quant(float s, std::int64_t zp) : scale{s}, zero_point{zp} {}
    quant(std::vector<float> s, std::vector<std::int64_t> zp, std::int32_t dim = 0)
        : scale(std::move(s)), zero_point(std::move(zp)), quantized_dimension(dim) {}
    [[nodiscard]] bool empty() const noexcept { return scale.empty(); }
};

/// Marker for operators built without an options table.
struct no_options {};

// ---- deterministic pseudo-random data (splitmix64: same numbers on every host) ---------------
class prng {
public:
    explicit prng(std::uint64_t seed) : s_(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    /// Uniform integer in [lo, hi].
    std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
        const auto span = static_cast<std::uint64_t>(hi - lo) + 1;
        return lo + static_cast<std::int64_t>(next() % span);
    }
    /// Uniform real in [lo, hi).
    double real(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
    std::uint64_t s_;
};

[[nodiscard]] inline std::vector<std::int8_t> random_int8(std::uint64_t seed, std::size_t n, std::int8_t lo = -127,
                                                          std::int8_t hi = 127) {
    prng r(seed);
    std::vector<std::int8_t> out(n);
    for (auto& v : out) v = static_cast<std::int8_t>(r.uniform(lo, hi));
    return out;
}
[[nodiscard]] inline std::vector<std::int32_t> random_int32(std::uint64_t seed, std::size_t n, std::int32_t lo,
                                                            std::int32_t hi) {
    prng r(seed);
    std::vector<std::int32_t> out(n);
    for (auto& v : out) v = static_cast<std::int32_t>(r.uniform(lo, hi));
    return out;
}
[[nodiscard]] inline std::vector<float> random_float(std::uint64_t seed, std::size_t n, float lo, float hi) {
    prng r(seed);
    std::vector<float> out(n);
    for (auto& v : out) v = static_cast<float>(r.real(lo, hi));
    return out;
}

/// Values as little-endian bytes.
template <class T>
[[nodiscard]] std::vector<std::byte> to_bytes(std::span<const T> values) {
    std::vector<std::byte> out(values.size() * sizeof(T));
    for (std::size_t i = 0; i < values.size(); ++i) store_le<T>(out.data() + i * sizeof(T), values[i]);
    return out;
}

namespace detail {
template <class T>
void put(flatbuffers::FlatBufferBuilder& b, const schema::field<schema::scalar<T>>& f, T v) {
    using S = typename schema::scalar<T>::storage;
    b.AddElement<S>(f.voffset(), static_cast<S>(v), static_cast<S>(f.def));
}
template <class K, class O>
void put(flatbuffers::FlatBufferBuilder& b, const schema::field<K>& f, flatbuffers::Offset<O> o) {
    if (!o.IsNull()) b.AddOffset(f.voffset(), o);
}

/// Writes an options value struct as its table, walking the trait's field list.
template <class Trait>
flatbuffers::Offset<void> write_options(flatbuffers::FlatBufferBuilder& b, const typename Trait::value& v) {
    std::vector<std::pair<flatbuffers::voffset_t, flatbuffers::uoffset_t>> vectors;
    Trait::for_each_member([&](const auto& desc, auto member) {
        using K = typename std::remove_cvref_t<decltype(desc)>::kind;
        if constexpr (requires { typename K::element; })
            if (!(v.*member).empty()) vectors.emplace_back(desc.voffset(), b.CreateVector(v.*member).o);
    });
    const auto start = b.StartTable();
    Trait::for_each_member([&](const auto& desc, auto member) {
        using K = typename std::remove_cvref_t<decltype(desc)>::kind;
        if constexpr (requires { typename K::storage; }) put(b, desc, v.*member);
    });
    for (auto [slot, off] : vectors) b.AddOffset(slot, flatbuffers::Offset<void>(off));
    return flatbuffers::Offset<void>(b.EndTable(start));
}
}  // namespace detail

class builder {
public:
    /// An activation (or graph input/output) tensor; returns its index.
    std::int32_t add_tensor(std::string name, tensor_type type, std::vector<std::int32_t> shape, quant q = {}) {
        tensors_.push_back({std::move(name), type, std::move(shape), std::move(q), 0});
        return static_cast<std::int32_t>(tensors_.size() - 1);
    }

    /// A constant tensor with its own buffer holding `data` (little-endian element bytes).
    std::int32_t add_constant(std::string name, tensor_type type, std::vector<std::int32_t> shape,
                              std::span<const std::byte> data, quant q = {}) {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        const std::size_t es = element_size(type);
        if (!allow_invalid_ && es != 0 && static_cast<std::size_t>(n) * es != data.size())
            fail(error_kind::usage, "builder: constant '" + name + "': " + std::to_string(data.size()) +
                                        " bytes given, shape needs " + std::to_string(static_cast<std::size_t>(n) * es));
        buffers_.emplace_back(data.begin(), data.end());
        tensors_.push_back({std::move(name), type, std::move(shape), std::move(q),
                            static_cast<std::uint32_t>(buffers_.size() - 1)});
        return static_cast<std::int32_t>(tensors_.size() - 1);
    }

    /// A constant from typed values; the element type must match the tensor type's size.
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int32_t add_constant(std::string name, tensor_type type, std::vector<std::int32_t> shape,
                              const std::vector<T>& values, quant q = {}) {
        if (element_size(type) != sizeof(T))
            fail(error_kind::usage, "builder: constant '" + name + "': values of " + std::to_string(sizeof(T)) +
                                        " bytes for a " + std::string(type_name(type)) + " tensor");
        const auto bytes = to_bytes<T>(values);
        return add_constant(std::move(name), type, std::move(shape), bytes, std::move(q));
    }

    /// A builtin operator; `opts` is an options value struct (conv2d_options{...}) or no_options.
    template <class Options = no_options>
    std::int32_t add_operator(builtin_operator op, std::vector<std::int32_t> inputs, std::vector<std::int32_t> outputs,
                              const Options& opts = {}) {
        op_entry e{code_index(op, {}), std::move(inputs), std::move(outputs), 0, {}, {}};
        if constexpr (!std::is_same_v<Options, no_options>) {
            using trait = typename Options::trait;
            if (!allow_invalid_ && expected_options(op) != trait::union_type)
                fail(error_kind::usage, "builder: " + std::string(builtin_name(op)) + " does not take " +
                                            std::string(trait::table_name));
            e.options_type = trait::union_type;
            e.write = [opts](flatbuffers::FlatBufferBuilder& b) { return detail::write_options<trait>(b, opts); };
        }
        ops_.push_back(std::move(e));
        return static_cast<std::int32_t>(ops_.size() - 1);
    }

    std::int32_t add_custom_operator(const std::string& custom_code, std::vector<std::int32_t> inputs,
                                     std::vector<std::int32_t> outputs, std::vector<std::uint8_t> custom_options = {}) {
        ops_.push_back({code_index(builtin_operator::CUSTOM, custom_code), std::move(inputs), std::move(outputs), 0, {},
                        std::move(custom_options)});
        return static_cast<std::int32_t>(ops_.size() - 1);
    }

    /// Turns off the builder's own checks so tests can write models the reader must reject.
    void allow_invalid(bool on = true) noexcept { allow_invalid_ = on; }

    void set_inputs(std::vector<std::int32_t> t) { inputs_ = std::move(t); }
    void set_outputs(std::vector<std::int32_t> t) { outputs_ = std::move(t); }
    void set_description(std::string d) { description_ = std::move(d); }
    void set_subgraph_name(std::string n) { subgraph_name_ = std::move(n); }

    [[nodiscard]] std::size_t tensor_count() const noexcept { return tensors_.size(); }
    [[nodiscard]] std::size_t operator_count() const noexcept { return ops_.size(); }

    /// The model's bytes (file identifier "TFL3", schema version 3).
    [[nodiscard]] std::vector<std::byte> finish() const {
        using namespace flatbuffers;
        FlatBufferBuilder b(1024);
        // operator codes
        std::vector<Offset<Table>> codes;
        for (const auto& c : codes_) {
            const auto custom = c.custom.empty() && c.op != builtin_operator::CUSTOM ? Offset<String>{} : b.CreateString(c.custom);
            const auto start = b.StartTable();
            const auto code = static_cast<std::int32_t>(c.op);
            // Old readers look only at the deprecated byte, which saturates at 127 (placeholder).
            detail::put(b, tbl::OperatorCode::deprecated_builtin_code, static_cast<std::int8_t>(std::min(code, 127)));
            detail::put(b, tbl::OperatorCode::custom_code, custom);
            detail::put(b, tbl::OperatorCode::version, std::int32_t{1});
            detail::put(b, tbl::OperatorCode::builtin_code, code);
            codes.push_back(Offset<Table>(b.EndTable(start)));
        }
        // buffers: 0 is the empty sentinel
        std::vector<Offset<Table>> buffers;
        {
            const auto start = b.StartTable();
            buffers.push_back(Offset<Table>(b.EndTable(start)));
        }
        for (std::size_t i = 1; i < buffers_.size(); ++i) {
            const auto& data = buffers_[i];
            b.ForceVectorAlignment(data.size(), 1, 16);  // lets readers view int32/int64 data in place
            const auto vec = b.CreateVector(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
            const auto start = b.StartTable();
            detail::put(b, tbl::Buffer::data, vec);
            buffers.push_back(Offset<Table>(b.EndTable(start)));
        }
        // tensors
        std::vector<Offset<Table>> tensors;
        for (const auto& t : tensors_) {
            const auto shape = b.CreateVector(t.shape);
            const auto name = b.CreateString(t.name);
            Offset<Table> q;
            if (!t.q.empty()) {
                const auto scale = b.CreateVector(t.q.scale);
                const auto zp = b.CreateVector(t.q.zero_point);
                const auto start = b.StartTable();
                detail::put(b, tbl::QuantizationParameters::scale, scale);
                detail::put(b, tbl::QuantizationParameters::zero_point, zp);
                detail::put(b, tbl::QuantizationParameters::quantized_dimension, t.q.quantized_dimension);
                q = Offset<Table>(b.EndTable(start));
            }
            const auto start = b.StartTable();
            detail::put(b, tbl::Tensor::shape, shape);
            detail::put(b, tbl::Tensor::type, t.type);
            detail::put(b, tbl::Tensor::buffer, t.buffer);
            detail::put(b, tbl::Tensor::name, name);
            detail::put(b, tbl::Tensor::quantization, q);
            tensors.push_back(Offset<Table>(b.EndTable(start)));
        }
        // operators
        std::vector<Offset<Table>> ops;
        for (const auto& o : ops_) {
            const auto in = b.CreateVector(o.inputs);
            const auto out = b.CreateVector(o.outputs);
            const auto options = o.write ? o.write(b) : Offset<void>{};
            const auto custom = o.custom_options.empty() ? Offset<Vector<std::uint8_t>>{} : b.CreateVector(o.custom_options);
            const auto start = b.StartTable();
            detail::put(b, tbl::Operator::opcode_index, o.code);
            detail::put(b, tbl::Operator::inputs, in);
            detail::put(b, tbl::Operator::outputs, out);
            detail::put(b, tbl::Operator::builtin_options_type, o.options_type);
            detail::put(b, tbl::Operator::builtin_options, options);
            detail::put(b, tbl::Operator::custom_options, custom);
            ops.push_back(Offset<Table>(b.EndTable(start)));
        }
        const auto tensors_v = b.CreateVector(tensors);
        const auto in_v = b.CreateVector(inputs_);
        const auto out_v = b.CreateVector(outputs_);
        const auto ops_v = b.CreateVector(ops);
        const auto sg_name = b.CreateString(subgraph_name_);
        Offset<Table> subgraph;
        {
            const auto start = b.StartTable();
            detail::put(b, tbl::SubGraph::tensors, tensors_v);
            detail::put(b, tbl::SubGraph::inputs, in_v);
            detail::put(b, tbl::SubGraph::outputs, out_v);
            detail::put(b, tbl::SubGraph::operators, ops_v);
            detail::put(b, tbl::SubGraph::name, sg_name);
            subgraph = Offset<Table>(b.EndTable(start));
        }
        const auto codes_v = b.CreateVector(codes);
        const auto subgraphs_v = b.CreateVector(&subgraph, 1);
        const auto desc = b.CreateString(description_);
        const auto buffers_v = b.CreateVector(buffers);
        const auto start = b.StartTable();
        detail::put(b, tbl::Model::version, std::uint32_t{3});
        detail::put(b, tbl::Model::operator_codes, codes_v);
        detail::put(b, tbl::Model::subgraphs, subgraphs_v);
        detail::put(b, tbl::Model::description, desc);
        detail::put(b, tbl::Model::buffers, buffers_v);
        b.Finish(Offset<Table>(b.EndTable(start)), "TFL3");
        const auto* p = reinterpret_cast<const std::byte*>(b.GetBufferPointer());
        return std::vector<std::byte>(p, p + b.GetSize());
    }

private:
    struct tensor_entry {
        std::string name;
        tensor_type type;
        std::vector<std::int32_t> shape;
        quant q;
        std::uint32_t buffer;
    };
    struct code_entry {
        builtin_operator op;
        std::string custom;
    };
    struct op_entry {
        std::uint32_t code;
        std::vector<std::int32_t> inputs, outputs;
        std::uint8_t options_type;
        std::function<flatbuffers::Offset<void>(flatbuffers::FlatBufferBuilder&)> write;
        std::vector<std::uint8_t> custom_options;
    };

    std::uint32_t code_index(builtin_operator op, const std::string& custom) {
        for (std::size_t i = 0; i < codes_.size(); ++i)
            if (codes_[i].op == op && codes_[i].custom == custom) return static_cast<std::uint32_t>(i);
        codes_.push_back({op, custom});
        return static_cast<std::uint32_t>(codes_.size() - 1);
    }

    std::vector<tensor_entry> tensors_;
    std::vector<std::vector<std::byte>> buffers_{std::vector<std::byte>{}};  // [0] = empty sentinel
    std::vector<code_entry> codes_;
    std::vector<op_entry> ops_;
    std::vector<std::int32_t> inputs_, outputs_;
    std::string description_ = "vnnx::tflite::builder";
    std::string subgraph_name_ = "main";
    bool allow_invalid_ = false;
};

// ---- the built-in demo model ----------------------------------------------------------------
namespace detail {
/// Per-channel int8 weights with symmetric scales in [lo, hi] and an int32 bias at in_scale * w_scale.
struct conv_params {
    std::int32_t weights, bias;
};
inline conv_params add_conv_weights(builder& b, const std::string& name, std::vector<std::int32_t> wshape,
                                    std::int32_t qdim, float in_scale, std::uint64_t seed, bool per_channel = true) {
    std::size_t n = 1;
    for (auto d : wshape) n *= static_cast<std::size_t>(d);
    const auto channels = static_cast<std::size_t>(wshape[static_cast<std::size_t>(qdim)]);
    std::vector<float> scales = per_channel ? random_float(seed + 1, channels, 0.004f, 0.01f)
                                            : std::vector<float>{0.006f};
    const auto w = random_int8(seed, n);
    std::vector<std::int64_t> zps(scales.size(), 0);
    std::vector<float> bias_scales;
    for (float s : scales) bias_scales.push_back(in_scale * s);
    const auto bias = random_int32(seed + 2, channels, -2000, 2000);
    std::vector<std::int64_t> bias_zps(bias_scales.size(), 0);
    const auto wi = b.add_constant(name + "/weights", tensor_type::INT8, wshape, w, quant{scales, zps, qdim});
    const auto bi = b.add_constant(name + "/bias", tensor_type::INT32, {static_cast<std::int32_t>(channels)}, bias,
                                   quant{bias_scales, bias_zps, 0});
    return {wi, bi};
}
}  // namespace detail

/// The built-in demo: a small int8 CNN (input 1x32x32x3) with conv, depthwise conv, add, max and
/// average pooling, reshape, fully connected and softmax; weights are deterministic.
[[nodiscard]] inline std::vector<std::byte> demo_model() {
    using B = builtin_operator;
    builder b;
    b.set_description("vnnx demo: small int8 CNN");
    const float s_in = 1.0f / 128;
    const auto in = b.add_tensor("input", tensor_type::INT8, {1, 32, 32, 3}, quant{s_in, 0});

    const float s1 = 0.05f;
    const auto c1 = detail::add_conv_weights(b, "conv1", {8, 3, 3, 3}, 0, s_in, 11);
    const auto t1 = b.add_tensor("conv1", tensor_type::INT8, {1, 16, 16, 8}, quant{s1, -128});
    b.add_operator(B::CONV_2D, {in, c1.weights, c1.bias}, {t1},
                   conv2d_options{padding_mode::SAME, 2, 2, activation_function::RELU6, 1, 1, tensor_type::FLOAT32});

    const auto dw = detail::add_conv_weights(b, "dwconv", {1, 3, 3, 8}, 3, s1, 21);
    const auto t2 = b.add_tensor("dwconv", tensor_type::INT8, {1, 16, 16, 8}, quant{s1, -128});
    b.add_operator(B::DEPTHWISE_CONV_2D, {t1, dw.weights, dw.bias}, {t2},
                   depthwise_conv2d_options{padding_mode::SAME, 1, 1, 1, activation_function::RELU, 1, 1});

    const float s3 = 0.08f;
    const auto t3 = b.add_tensor("add", tensor_type::INT8, {1, 16, 16, 8}, quant{s3, -128});
    b.add_operator(B::ADD, {t1, t2}, {t3}, add_options{activation_function::NONE, true});

    const auto t4 = b.add_tensor("maxpool", tensor_type::INT8, {1, 8, 8, 8}, quant{s3, -128});
    b.add_operator(B::MAX_POOL_2D, {t3}, {t4}, pool2d_options{padding_mode::VALID, 2, 2, 2, 2, activation_function::NONE});

    const float s5 = 0.06f;
    const auto c5 = detail::add_conv_weights(b, "conv2", {16, 1, 1, 8}, 0, s3, 31);
    const auto t5 = b.add_tensor("conv2", tensor_type::INT8, {1, 8, 8, 16}, quant{s5, -128});
    b.add_operator(B::CONV_2D, {t4, c5.weights, c5.bias}, {t5},
                   conv2d_options{padding_mode::VALID, 1, 1, activation_function::RELU, 1, 1, tensor_type::FLOAT32});

    const auto t6 = b.add_tensor("avgpool", tensor_type::INT8, {1, 1, 1, 16}, quant{s5, -128});
    b.add_operator(B::AVERAGE_POOL_2D, {t5}, {t6},
                   pool2d_options{padding_mode::VALID, 1, 1, 8, 8, activation_function::NONE});

    const auto shape = b.add_constant("flatten/shape", tensor_type::INT32, {2}, std::vector<std::int32_t>{1, 16});
    const auto t7 = b.add_tensor("flatten", tensor_type::INT8, {1, 16}, quant{s5, -128});
    b.add_operator(B::RESHAPE, {t6, shape}, {t7}, reshape_options{{1, 16}});

    const float s8 = 0.1f;
    const auto fc = detail::add_conv_weights(b, "fc", {10, 16}, 0, s5, 41, false);
    const auto t8 = b.add_tensor("logits", tensor_type::INT8, {1, 10}, quant{s8, 0});
    b.add_operator(B::FULLY_CONNECTED, {t7, fc.weights, fc.bias}, {t8}, fully_connected_options{});

    const auto t9 = b.add_tensor("probabilities", tensor_type::INT8, {1, 10}, quant{1.0f / 256, -128});
    b.add_operator(B::SOFTMAX, {t8}, {t9}, softmax_options{1.0f});

    b.set_inputs({in});
    b.set_outputs({t9});
    return b.finish();
}

}  // namespace vnnx::tflite
// ---- end vnnx/tflite/builder.hpp
// ---- begin vnnx/tflite/support_check.hpp
// Facts of a TFLite model judged from the file alone: float compute, multiply-accumulate
// counts and the per-model summary of `vnnx info`. Which operators the compiler cannot take is
// not judged here: compiler::find_problems() (compiler/verify.hpp) is the one place for that.
#include <map>


namespace vnnx::tflite {

[[nodiscard]] constexpr bool is_float(tensor_type t) noexcept {
    return t == tensor_type::FLOAT32 || t == tensor_type::FLOAT16 || t == tensor_type::FLOAT64;
}

namespace detail {
inline bool contains(std::span<const std::int32_t> list, std::int32_t v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

/// The first float tensor an operator computes with, ignoring float graph inputs of QUANTIZE and
/// float graph outputs of DEQUANTIZE (the compiler drops those at the boundary). -1 if none.
inline std::int32_t float_tensor(const subgraph_view& g, const operator_view& o) {
    const bool q_in = o.op() == builtin_operator::QUANTIZE;
    const bool dq_out = o.op() == builtin_operator::DEQUANTIZE;
    for (std::int32_t t : o.inputs())
        if (t >= 0 && is_float(g.tensor(static_cast<std::size_t>(t)).type()) && !(q_in && contains(g.inputs(), t)))
            return t;
    for (std::int32_t t : o.outputs())
        if (is_float(g.tensor(static_cast<std::size_t>(t)).type()) && !(dq_out && contains(g.outputs(), t))) return t;
    return -1;
}
}  // namespace detail

/// True when no operator of the main graph computes in float.
[[nodiscard]] inline bool is_integer(const model_view& m) {
    const auto g = m.subgraph(0);
    for (std::size_t i = 0; i < g.operator_count(); ++i)
        if (detail::float_tensor(g, g.op(i)) >= 0) return false;
    return true;
}

/// Multiply-accumulates of one operator (CONV_2D, DEPTHWISE_CONV_2D, FULLY_CONNECTED,
/// TRANSPOSE_CONV, BATCH_MATMUL; 0 for the rest), from tensor shapes.
[[nodiscard]] inline std::uint64_t operator_macs(const subgraph_view& g, const operator_view& o) {
    auto tensor_at = [&](std::size_t k, std::span<const std::int32_t> list) -> std::optional<tensor_view> {
        if (k >= list.size() || list[k] < 0) return std::nullopt;
        return g.tensor(static_cast<std::size_t>(list[k]));
    };
    auto elems = [](const tensor_view& t) { return static_cast<std::uint64_t>(t.element_count()); };
    const auto in = o.inputs();
    const auto outs = o.outputs();
    switch (o.op()) {
        case builtin_operator::CONV_2D: {  // out elements x (kh * kw * in channels)
            auto w = tensor_at(1, in);
            auto y = tensor_at(0, outs);
            if (!w || !y || w->rank() != 4 || w->shape()[0] == 0) return 0;
            return elems(*y) * (elems(*w) / static_cast<std::uint64_t>(w->shape()[0]));
        }
        case builtin_operator::DEPTHWISE_CONV_2D: {  // out elements x kh x kw
            auto w = tensor_at(1, in);
            auto y = tensor_at(0, outs);
            if (!w || !y || w->rank() != 4) return 0;
            return elems(*y) * static_cast<std::uint64_t>(w->shape()[1]) * static_cast<std::uint64_t>(w->shape()[2]);
        }
        case builtin_operator::FULLY_CONNECTED: {  // out elements x input depth
            auto w = tensor_at(1, in);
            auto y = tensor_at(0, outs);
            if (!w || !y || w->rank() != 2) return 0;
            return elems(*y) * static_cast<std::uint64_t>(w->shape()[1]);
        }
        case builtin_operator::TRANSPOSE_CONV: {  // inputs: output_shape, weights [oc,kh,kw,ic], input
            auto w = tensor_at(1, in);
            auto x = tensor_at(2, in);
            if (!w || !x || w->rank() != 4 || w->shape()[3] == 0) return 0;
            return elems(*x) * (elems(*w) / static_cast<std::uint64_t>(w->shape()[3]));
        }
        case builtin_operator::BATCH_MATMUL: {  // out elements x contracted depth
            auto a = tensor_at(0, in);
            auto y = tensor_at(0, outs);
            if (!a || !y || a->rank() < 2) return 0;
            const bool adj_x = o.options<opt::BatchMatMulOptions>().adj_x;
            const auto s = a->shape();
            return elems(*y) * static_cast<std::uint64_t>(adj_x ? s[s.size() - 2] : s[s.size() - 1]);
        }
        default: return 0;
    }
}

[[nodiscard]] inline std::uint64_t count_macs(const model_view& m) {
    const auto g = m.subgraph(0);
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < g.operator_count(); ++i) total += operator_macs(g, g.op(i));
    return total;
}

/// The facts `vnnx info` prints about a TFLite model.
struct model_summary {
    std::map<std::string, std::size_t> operators;  // name -> count
    std::vector<tensor_view> inputs, outputs;
    std::size_t tensors = 0;
    std::uint64_t macs = 0;
    bool integer = true;
};

[[nodiscard]] inline model_summary summarize(const model_view& m) {
    model_summary s;
    const auto g = m.subgraph(0);
    for (std::size_t i = 0; i < g.operator_count(); ++i) ++s.operators[g.op(i).name()];
    for (auto t : g.inputs()) s.inputs.push_back(g.tensor(static_cast<std::size_t>(t)));
    for (auto t : g.outputs()) s.outputs.push_back(g.tensor(static_cast<std::size_t>(t)));
    s.tensors = g.tensor_count();
    s.macs = count_macs(m);
    s.integer = is_integer(m);
    return s;
}

}  // namespace vnnx::tflite
// ---- end vnnx/tflite/support_check.hpp
// ---- begin vnnx/tflite/yolo_model.hpp
// A YOLOv8n-shaped int8 model made with the builder: the layer shapes and operator mix of
// YOLOv8n (width 0.25, depth 0.33, 80 classes) with deterministic random weights. Benchmarks
// time it at 640x640; tests run it at a small size. Every Conv is CONV_2D + LOGISTIC + MUL
// (SiLU as TFLite exports it), C2f blocks use SPLIT and CONCATENATION, SPPF chains three 5x5
// MAX_POOL_2D, the neck upsamples with RESIZE_NEAREST_NEIGHBOR, and each detection level ends
// in a box (64) and class (80) branch concatenated to 144 channels (three outputs).


namespace vnnx::tflite {

namespace detail {

class yolo_maker {
public:
    explicit yolo_maker(builder& b) : b_(b) {}

    // Activations share one quantization so CONCATENATION and SPLIT copy bytes unchanged.
    static quant act_q() { return quant{0.04f, -121}; }   // SiLU range [-0.28, 10]
    static quant pre_q() { return quant{0.08f, 0}; }      // conv output before SiLU
    static quant sig_q() { return quant{1.0f / 256, -128}; }

    struct tensor {
        std::int32_t id;
        std::int32_t h, w, c;
    };

    tensor input(std::int32_t size) {
        return {b_.add_tensor("images", tensor_type::INT8, {1, size, size, 3}, act_q()), size, size, 3};
    }

    // Conv2d (+ SiLU unless `plain`), SAME padding.
    tensor conv(const tensor& x, std::int32_t k_out, std::int32_t k, std::int32_t stride, bool plain = false) {
        const std::string name = "conv" + std::to_string(n_++);
        const std::int32_t oh = (x.h + stride - 1) / stride, ow = (x.w + stride - 1) / stride;
        const std::size_t fan_in = static_cast<std::size_t>(x.c) * k * k;
        // Scales that keep the accumulator near the output range (random weights, random inputs).
        const float s = 3.0f / (std::sqrt(static_cast<float>(fan_in)) * 73.0f * 5.0f);
        const auto seed = 1000 + 10 * static_cast<std::uint64_t>(n_);
        std::vector<float> ws = random_float(seed + 1, static_cast<std::size_t>(k_out), 0.7f * s, 1.3f * s);
        std::vector<float> bs;
        for (float v : ws) bs.push_back(v * act_q().scale[0]);
        const auto w = b_.add_constant(name + "/weights", tensor_type::INT8, {k_out, k, k, x.c},
                                       random_int8(seed, static_cast<std::size_t>(k_out) * fan_in),
                                       quant{ws, std::vector<std::int64_t>(ws.size(), 0), 0});
        const auto bias = b_.add_constant(name + "/bias", tensor_type::INT32, {k_out},
                                          random_int32(seed + 2, static_cast<std::size_t>(k_out), -3000, 3000),
                                          quant{bs, std::vector<std::int64_t>(bs.size(), 0), 0});
        const auto pre = b_.add_tensor(name, tensor_type::INT8, {1, oh, ow, k_out}, plain ? act_q() : pre_q());
        b_.add_operator(builtin_operator::CONV_2D, {x.id, w, bias}, {pre},
                        conv2d_options{padding_mode::SAME, stride, stride, activation_function::NONE, 1, 1,
                                       tensor_type::FLOAT32});
        if (plain) return {pre, oh, ow, k_out};
        const auto sig = b_.add_tensor(name + "/sigmoid", tensor_type::INT8, {1, oh, ow, k_out}, sig_q());
        b_.add_operator(builtin_operator::LOGISTIC, {pre}, {sig});
        const auto out = b_.add_tensor(name + "/silu", tensor_type::INT8, {1, oh, ow, k_out}, act_q());
        b_.add_operator(builtin_operator::MUL, {pre, sig}, {out}, mul_options{activation_function::NONE});
        return {out, oh, ow, k_out};
    }

    tensor add(const tensor& a, const tensor& c) {
        const auto out = b_.add_tensor("add" + std::to_string(n_++), tensor_type::INT8, {1, a.h, a.w, a.c}, act_q());
        b_.add_operator(builtin_operator::ADD, {a.id, c.id}, {out}, add_options{activation_function::NONE, true});
        return {out, a.h, a.w, a.c};
    }

    tensor concat(const std::vector<tensor>& xs) {
        std::vector<std::int32_t> ids;
        std::int32_t c = 0;
        for (const auto& x : xs) ids.push_back(x.id), c += x.c;
        const auto out = b_.add_tensor("concat" + std::to_string(n_++), tensor_type::INT8, {1, xs[0].h, xs[0].w, c}, act_q());
        b_.add_operator(builtin_operator::CONCATENATION, ids, {out}, concatenation_options{3, activation_function::NONE});
        return {out, xs[0].h, xs[0].w, c};
    }

    std::vector<tensor> split2(const tensor& x) {
        const std::string name = "split" + std::to_string(n_++);
        const auto axis = b_.add_constant(name + "/axis", tensor_type::INT32, {}, std::vector<std::int32_t>{3});
        const std::int32_t half = x.c / 2;
        const auto a = b_.add_tensor(name + "/0", tensor_type::INT8, {1, x.h, x.w, half}, act_q());
        const auto c = b_.add_tensor(name + "/1", tensor_type::INT8, {1, x.h, x.w, half}, act_q());
        b_.add_operator(builtin_operator::SPLIT, {axis, x.id}, {a, c}, split_options{2});
        return {{a, x.h, x.w, half}, {c, x.h, x.w, half}};
    }

    tensor maxpool5(const tensor& x) {
        const auto out = b_.add_tensor("maxpool" + std::to_string(n_++), tensor_type::INT8, {1, x.h, x.w, x.c}, act_q());
        b_.add_operator(builtin_operator::MAX_POOL_2D, {x.id}, {out},
                        pool2d_options{padding_mode::SAME, 1, 1, 5, 5, activation_function::NONE});
        return {out, x.h, x.w, x.c};
    }

    tensor upsample2(const tensor& x) {
        const std::string name = "upsample" + std::to_string(n_++);
        const auto size = b_.add_constant(name + "/size", tensor_type::INT32, {2},
                                          std::vector<std::int32_t>{2 * x.h, 2 * x.w});
        const auto out = b_.add_tensor(name, tensor_type::INT8, {1, 2 * x.h, 2 * x.w, x.c}, act_q());
        b_.add_operator(builtin_operator::RESIZE_NEAREST_NEIGHBOR, {x.id, size}, {out},
                        resize_nearest_neighbor_options{false, false});
        return {out, 2 * x.h, 2 * x.w, x.c};
    }

    // C2f: 1x1 conv to 2c, split, n bottlenecks (two 3x3 convs, optional residual), concat, 1x1 conv.
    tensor c2f(const tensor& x, std::int32_t c_out, int n, bool shortcut) {
        const std::int32_t c = c_out / 2;
        const auto parts = split2(conv(x, 2 * c, 1, 1));
        std::vector<tensor> ys = parts;
        tensor y = parts[1];
        for (int i = 0; i < n; ++i) {
            const tensor z = conv(conv(y, c, 3, 1), c, 3, 1);
            y = shortcut ? add(y, z) : z;
            ys.push_back(y);
        }
        return conv(concat(ys), c_out, 1, 1);
    }

    tensor sppf(const tensor& x, std::int32_t c_out) {
        const tensor a = conv(x, x.c / 2, 1, 1);
        const tensor p1 = maxpool5(a), p2 = maxpool5(p1), p3 = maxpool5(p2);
        return conv(concat({a, p1, p2, p3}), c_out, 1, 1);
    }

    // One detection level: box branch (4 x 16 bins) and class branch (80), concatenated.
    tensor detect(const tensor& x) {
        const tensor box = conv(conv(conv(x, 64, 3, 1), 64, 3, 1), 64, 1, 1, true);
        const tensor cls = conv(conv(conv(x, 80, 3, 1), 80, 3, 1), 80, 1, 1, true);
        return concat({box, cls});
    }

private:
    builder& b_;
    int n_ = 0;
};

}  // namespace detail

/// YOLOv8n-shaped model with a `size` x `size` x 3 int8 input (size a multiple of 32, >= 32).
/// At 640 it has YOLOv8n's 4.4 GMAC; outputs are 1 x size/8 x size/8 x 144, /16 and /32.
[[nodiscard]] inline std::vector<std::byte> yolov8n_model(std::int32_t size = 640) {
    if (size < 32 || size % 32 != 0 || size > 4096)
        fail(error_kind::usage, "yolov8n_model: size " + std::to_string(size) + " must be a multiple of 32 in 32..4096");
    builder b;
    b.set_description("vnnx: YOLOv8n-shaped int8 model, random weights");
    detail::yolo_maker m(b);
    const auto in = m.input(size);
    // backbone
    auto x = m.conv(in, 16, 3, 2);
    x = m.conv(x, 32, 3, 2);
    x = m.c2f(x, 32, 1, true);
    x = m.conv(x, 64, 3, 2);
    const auto p3 = m.c2f(x, 64, 2, true);
    x = m.conv(p3, 128, 3, 2);
    const auto p4 = m.c2f(x, 128, 2, true);
    x = m.conv(p4, 256, 3, 2);
    x = m.c2f(x, 256, 1, true);
    const auto p5 = m.sppf(x, 256);
    // neck
    const auto n4 = m.c2f(m.concat({m.upsample2(p5), p4}), 128, 1, false);
    const auto o3 = m.c2f(m.concat({m.upsample2(n4), p3}), 64, 1, false);
    const auto o4 = m.c2f(m.concat({m.conv(o3, 64, 3, 2), n4}), 128, 1, false);
    const auto o5 = m.c2f(m.concat({m.conv(o4, 128, 3, 2), p5}), 256, 1, false);
    // heads
    const auto d3 = m.detect(o3), d4 = m.detect(o4), d5 = m.detect(o5);
    b.set_inputs({in.id});
    b.set_outputs({d3.id, d4.id, d5.id});
    return b.finish();
}

}  // namespace vnnx::tflite
// ---- end vnnx/tflite/yolo_model.hpp
// ---- begin vnnx/compiler/preset.hpp
// What the tiler and the weight packer derive from a hardware size preset: usable scratchpad, FIA
// shaper buffer sizes, scratchpad alignment (lowering.md §2.6, §10.4.2; SDK vnnx_allocation.py shaper
// bank counts and bank sizes). The preset table itself is the format layer's (format/enums.hpp).
// Only ncomp (uncompressed weights) is modelled.


namespace vnnx::compiler {

using format::preset;

struct preset_info {
    std::string_view name;
    std::uint32_t id;  // header field vbx_nn_preset
    int vector_lanes;
    int filter_copies;
    int parallel_output_maps;  // P
    int scratchpad_kb;

    [[nodiscard]] static constexpr preset_info from(const format::preset_params& p) {
        return {p.name,
                static_cast<std::uint32_t>(p.id),
                static_cast<int>(p.vector_lanes),
                static_cast<int>(p.filter_copies),
                static_cast<int>(p.parallel_output_maps),
                static_cast<int>(p.scratchpad_kb)};
    }

    // The runtime keeps 256 bytes of the scratchpad for itself.
    [[nodiscard]] constexpr int usable_scratchpad() const { return scratchpad_kb * 1024 - 256; }
    // ncomp: input shaper = FILTER_COPIES x 2 banks x 2 KB, weight shaper = P x 2 banks x 1 KB.
    static constexpr int input_shaper_banks = 2;
    static constexpr int weight_shaper_banks = 2;
    [[nodiscard]] constexpr int input_shaper_bytes() const { return filter_copies * input_shaper_banks * 2048; }
    [[nodiscard]] constexpr int weight_shaper_bytes() const {
        return parallel_output_maps * weight_shaper_banks * 1024;
    }
    [[nodiscard]] constexpr int input_shaper_bank_bytes() const { return input_shaper_bytes() / input_shaper_banks; }
    [[nodiscard]] constexpr int weight_shaper_bank_bytes() const {
        return weight_shaper_bytes() / weight_shaper_banks;
    }
    // 1024 quantization records of 8 bytes.
    static constexpr int quantization_shaper_bytes = 8192;
    static constexpr int quantization_record_bytes = 8;
    // Scratchpad buffers are aligned to 4 bytes per vector lane.
    [[nodiscard]] constexpr int align_unit() const { return 4 * vector_lanes; }
    [[nodiscard]] constexpr long long align(long long bytes) const {
        const long long a = align_unit();
        return (bytes + a - 1) / a * a;
    }
};

inline constexpr std::array<preset_info, format::presets.size()> preset_table = [] {
    std::array<preset_info, format::presets.size()> t{};
    for (std::size_t i = 0; i < t.size(); ++i) t[i] = preset_info::from(format::presets[i]);
    return t;
}();

[[nodiscard]] constexpr const preset_info& info(preset p) { return preset_table[static_cast<std::size_t>(p)]; }

static_assert(info(preset::V250).usable_scratchpad() == 32512);
static_assert(info(preset::V500).usable_scratchpad() == 65280);
static_assert(info(preset::V1000).usable_scratchpad() == 130816);
static_assert(info(preset::V1000).input_shaper_bytes() / 2 == 32768);
static_assert(info(preset::V250).weight_shaper_bytes() / 2 == 8192);

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/preset.hpp
// ---- begin vnnx/compiler/tiling.hpp
// Tiling / scratchpad allocation (lowering.md §10): minimum tile, growth under the scratchpad and
// FIA shaper limits, the tile walk and every node field of §10.1, plus the OUTPUT_SHAPER numbers
// of §7.1.7. Follows the "recommended simple scheme" of §10.7: the SDK's order and formulas, each
// +1-step limit found by binary search (all tests are monotone), imaps doubling and P-steps for maps
// kept, the two alternative conv searches of §10.4.3 skipped. Only ncomp is modelled.
// A node that cannot be tiled gives a result with fits == false and a reason (the compiler then
// cuts the split, §4); a malformed description throws vnnx::error.
#include <tuple>

// ---- begin vnnx/compiler/tiling_model.hpp
// The tiler's model of a node (lowering.md §10.2, §10.4.1, §10.5; SDK vnnx_allocation.py
// min_output_tile, max_output_tile, max_sp_tile, adjust_tile, get_output_shapes, valid_fia).
// Plain structs: the compiler maps its nodes onto them. Std-only.


namespace vnnx::compiler {

// A tile in the node's input coordinates (§10.2). For convs maps = output maps per tile and
// imaps = input channels per tile; for native FC icols = accumulation columns, cols = outputs.
struct tile {
    long long batch = 1, imaps = 1, irows = 1, icols = 1, maps = 1, rows = 1, cols = 1;
    friend bool operator==(const tile&, const tile&) = default;
};

enum class op_kind {
    conv,             // CONV_2D with the FIA (ordinary or depthwise); node only
    fully_connected,  // native FULLY_CONNECTED with the FIA; node only
    identity,         // IDENTITY / CONCATENATION node: al(size * input bytes)
    copy,             // RESHAPE, SLICE, STRIDED_SLICE (stride 1), MAX_POOL-free movers: al(size), no temp
    cast,             // CAST: al(size)
    lut,              // LUT (303) and table activations: al(size * output bytes), table preloaded
    eltwise,          // ELTWISE (301) with two activation inputs
    relu,             // RELU, RELU_N1_TO_1, RELU_0_TO_1, LEAKY_RELU, ABS
    relu6,            // RELU6
    max_pool,         // MAX_POOL_2D, VALID
    average_pool,     // AVERAGE_POOL_2D, VALID; needs full columns
    pad,              // PAD / PADV2 without dilation
    softmax,          // SOFTMAX on one axis, which must be whole
    mean_sum,         // MEAN, SUM
    reduce_max_min,   // REDUCE_MAX, REDUCE_MIN
    resize_nearest,   // RESIZE_NEAREST_NEIGHBOR by integer factors
    split,            // SPLIT / SPLIT_V node, TRANSPOSE with the identity permutation: al(size) + al(size)
};

// Temporary of an ELTWISE subnode (§10.5): optimized 1 (int16 path), optimized 2-4, MIN/MAX, general.
enum class eltwise_mode { optimized1, optimized, min_max, general };

struct conv_params {
    int kernels = 1;   // K (depthwise: C)
    int channels = 1;  // C
    int kh = 1, kw = 1;  // depthwise with dh > 1: tile_node_for tiles the re-materialised kh' (§7.1.1)
    int sh = 1, sw = 1, dh = 1, dw = 1;
    bool depthwise = false;
    // use_strided = 1 iff stride_w != 1 and not depthwise (§7.1.1)
    [[nodiscard]] bool strided() const { return sw != 1 && !depthwise; }
    [[nodiscard]] int dkh() const { return (kh - 1) * dh + 1; }
    [[nodiscard]] int dkw() const { return (kw - 1) * dw + 1; }
};

struct layer {
    op_kind kind = op_kind::identity;
    // This op's input extents (channels-first: channels, rows, cols); full-extent rules compare to them.
    int channels = 1, m = 1, n = 1;
    int in_bytes = 1, out_bytes = 1;  // element sizes of input / output type
    conv_params conv{};
    int fc_outputs = 1, fc_accum = 1;  // native FC: O, A
    int pool_kh = 1, pool_kw = 1, pool_sh = 1, pool_sw = 1;
    std::array<int, 6> pads{};  // PAD: channels before, top, left, channels after, bottom, right
    int softmax_axis = -3;      // -3 maps, -2 rows, -1 cols
    bool reduce_maps = false, reduce_rows = false, reduce_cols = false;
    int resize_h = 1, resize_w = 1;
    eltwise_mode eltwise = eltwise_mode::general;
};

// A node for tiling: its first op, its subnode chain, its geometry (§2.1 / §7.10.2).
struct tile_node {
    layer op;
    std::vector<layer> subnodes;
    bool strided_output = false;  // output_strides != [1, 1]
};

namespace tiling_detail {
// Python's floor division (the SDK's formulas rely on it for negative numerators).
[[nodiscard]] constexpr long long fdiv(long long a, long long b) {
    const long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
[[nodiscard]] constexpr long long cdiv(long long a, long long b) { return (a + b - 1) / b; }
[[nodiscard]] inline long long size_of(const tile& t) { return t.batch * t.maps * t.rows * t.cols; }
}  // namespace tiling_detail

// FIA output and shaper grids for an input tile of rows x cols (§10.4.1; padding is 0).
struct conv_grid {
    long long oh, ow, osh, osw;
};
[[nodiscard]] inline conv_grid conv_output_shapes(const conv_params& c, long long rows, long long cols) {
    using tiling_detail::fdiv;
    conv_grid g{};
    g.oh = fdiv(rows - c.dkh(), c.sh) + 1;
    g.ow = fdiv(cols - c.dkw(), c.sw) + 1;
    if (c.depthwise) {
        g.osh = rows - c.dkh() + 1;
        g.oh = fdiv(g.osh - 1, c.sh) + 1;
        g.osw = g.ow = cols - c.dkw() + 1;
    } else if (!c.strided()) {
        g.osh = rows - c.dkh() + 1;
        g.osw = std::max<long long>(cols, c.dkw());
    } else {
        g.osh = tiling_detail::cdiv(rows, c.sh);
        g.osw = tiling_detail::cdiv(cols, c.sw);
    }
    return g;
}

// min-output (§10.2): the output extent an input tile produces; an entry < 1 marks the tile invalid.
[[nodiscard]] inline tile min_output(const layer& L, tile t) {
    using tiling_detail::fdiv;
    switch (L.kind) {
        case op_kind::conv:
            t.rows = fdiv(t.rows - L.conv.dkh(), L.conv.sh) + 1;
            t.cols = fdiv(t.cols - L.conv.dkw(), L.conv.sw) + 1;
            return t;
        case op_kind::fully_connected:
            t.cols = t.irows;  // the SDK's rule: only irows matters
            return t;
        case op_kind::max_pool:
            t.rows = fdiv(t.rows - L.pool_kh, L.pool_sh) + 1;
            t.cols = fdiv(t.cols - L.pool_kw, L.pool_sw) + 1;
            return t;
        case op_kind::average_pool: {
            const long long r = fdiv(t.rows - L.pool_kh, L.pool_sh) + 1;
            if (t.cols != L.n) {
                t.rows = r;
                t.cols = 0;
                return t;
            }
            t.rows = r;
            t.cols = fdiv(t.cols - L.pool_kw, L.pool_sw) + 1;
            return t;
        }
        case op_kind::pad:
            t.maps += L.pads[0] + L.pads[3];
            t.rows += L.pads[1] + L.pads[4];
            t.cols += L.pads[2] + L.pads[5];
            return t;
        case op_kind::softmax:
            if (L.softmax_axis == -3 && t.maps != L.channels) t.maps = 0;
            if (L.softmax_axis == -2 && t.rows != L.m) t.rows = 0;
            if (L.softmax_axis == -1 && t.cols != L.n) t.cols = 0;
            return t;
        case op_kind::mean_sum:
        case op_kind::reduce_max_min: {
            tile o = t;
            if (L.reduce_cols) o.cols = t.cols == L.n ? 1 : 0;
            if (L.reduce_rows) o.rows = t.rows == L.m ? 1 : 0;
            if (L.reduce_maps) o.maps = t.maps == L.channels ? 1 : 0;
            return o;
        }
        case op_kind::resize_nearest:
            t.rows *= L.resize_h;
            t.cols *= L.resize_w;
            return t;
        default:
            return t;
    }
}

// max-output (§10.2): the tile handed to the next subnode (FIA convs: the shaper grid).
[[nodiscard]] inline tile max_output(const layer& L, tile t) {
    if (L.kind == op_kind::conv) {
        const auto g = conv_output_shapes(L.conv, t.rows, t.cols);
        t.rows = g.osh;
        t.cols = g.osw;
        return t;
    }
    return min_output(L, t);
}

// Scratchpad (v_out, v_tmp) in bytes for the tile an op receives (§10.5).
[[nodiscard]] inline std::pair<long long, long long> scratchpad(const layer& L, const tile& t, const preset_info& p) {
    const auto al = [&](long long b) { return p.align(b); };
    const long long size = tiling_detail::size_of(t);
    switch (L.kind) {
        case op_kind::conv: {
            const auto g = conv_output_shapes(L.conv, t.rows, t.cols);
            const long long out = t.batch * t.maps * g.osh * g.osw;
            // depthwise writes past the shaper grid by P rows of osw
            return {L.conv.depthwise ? al(out + p.parallel_output_maps * g.osw) : al(out), 0};
        }
        case op_kind::fully_connected: return {al(t.batch * t.maps * t.icols * t.cols * t.rows), 0};
        case op_kind::identity: return {al(size * L.in_bytes), 0};
        case op_kind::lut: return {al(size * L.out_bytes), 0};
        case op_kind::copy:
        case op_kind::cast:
        case op_kind::max_pool: return {al(size), 0};
        case op_kind::eltwise: {
            long long tmp = 0;
            switch (L.eltwise) {
                case eltwise_mode::optimized1: tmp = 2 * al(2 * size); break;
                case eltwise_mode::optimized: tmp = al(2 * size); break;
                case eltwise_mode::min_max: tmp = al(size); break;
                case eltwise_mode::general: tmp = 2 * al(4 * size); break;
            }
            return {al(size), tmp + al(size)};  // plus the second input
        }
        case op_kind::relu: return {al(size), 2 * al(4 * size)};
        case op_kind::relu6: return {al(size), al(2 * size)};
        case op_kind::average_pool: {
            const long long oh = tiling_detail::fdiv(t.rows - L.pool_kh, L.pool_sh) + 1;
            const long long ow = tiling_detail::fdiv(t.cols - L.pool_kw, L.pool_sw) + 1;
            const long long ow1 = t.cols - L.pool_kw + 1;
            return {al(t.batch * t.maps * oh * ow), al(2 * t.batch * t.maps * oh * ow) + al(2 * t.batch * t.maps * oh * ow1)};
        }
        case op_kind::pad:
            return {al(t.batch * (t.maps + L.pads[0] + L.pads[3]) * (t.rows + L.pads[1] + L.pads[4]) *
                       (t.cols + L.pads[2] + L.pads[5])),
                    0};
        case op_kind::softmax: {
            const long long inner = L.softmax_axis == -3 ? t.rows * t.cols : L.softmax_axis == -2 ? t.cols : 1;
            const long long depth = L.softmax_axis == -3 ? L.channels : L.softmax_axis == -2 ? L.m : L.n;
            return {al(size), al(4 * inner * depth) + 3 * al(4 * inner)};
        }
        case op_kind::mean_sum: {
            const long long omaps = L.reduce_maps ? 1 : t.maps;
            return {al(omaps), al(4 * omaps)};
        }
        case op_kind::reduce_max_min: return {al(t.maps), 0};
        case op_kind::resize_nearest:
            if (L.resize_h == 2 && L.resize_w == 2) return {al(4 * size), 0};
            if (L.resize_h == 4 && L.resize_w == 4) return {al(16 * size), 0};
            return {al(size * L.resize_h * L.resize_w), al(t.rows * L.resize_w * t.cols)};
        case op_kind::split: return {al(size), al(size)};
    }
    return {al(size), 0};
}

// One axis window [start, start+len) of an axis of length S mapped through an op (§10.6).
struct window {
    long long start, len, extent;
};
enum class axis { rows, cols };
[[nodiscard]] inline window map_window(const layer& L, axis a, window w) {
    using tiling_detail::fdiv;
    const bool r = a == axis::rows;
    switch (L.kind) {
        case op_kind::conv: {
            const long long k = r ? L.conv.dkh() : L.conv.dkw();
            const long long s = r ? L.conv.sh : L.conv.sw;
            return {fdiv(w.start, s), fdiv(w.len - k, s) + 1, fdiv(w.extent - k, s) + 1};
        }
        case op_kind::max_pool:
        case op_kind::average_pool: {
            const long long k = r ? L.pool_kh : L.pool_kw;
            const long long s = r ? L.pool_sh : L.pool_sw;
            return {fdiv(w.start, s), fdiv(w.len - k, s) + 1, fdiv(w.extent - k, s) + 1};
        }
        case op_kind::pad: {
            const long long before = r ? L.pads[1] : L.pads[2];
            const long long after = r ? L.pads[4] : L.pads[5];
            const long long len = w.len + (w.start == 0 ? before : 0) + (w.start + w.len >= w.extent ? after : 0);
            return {w.start == 0 ? 0 : w.start + before, len, w.extent + before + after};
        }
        case op_kind::mean_sum:
        case op_kind::reduce_max_min:
            if (r ? L.reduce_rows : L.reduce_cols) return {0, 1, 1};
            return w;
        case op_kind::resize_nearest: {
            const long long f = r ? L.resize_h : L.resize_w;
            return {w.start * f, w.len * f, w.extent * f};
        }
        default: return w;  // element-wise and FC (columns are outputs on both sides)
    }
}

// Validation of a described node: clear errors instead of nonsense tiles.
inline void check_layer(const layer& L, bool is_first, const std::string& where) {
    const auto bad = [&](const std::string& rule) { fail(error_kind::bad_input, "tiling: " + where + ": " + rule); };
    if (L.channels < 1 || L.m < 1 || L.n < 1) bad("input extents (channels, m, n) must be >= 1");
    if (L.in_bytes < 1 || L.out_bytes < 1) bad("element sizes must be >= 1");
    if ((L.kind == op_kind::conv || L.kind == op_kind::fully_connected) && !is_first)
        bad("a FIA convolution or fully connected op can only be the node's first op");
    if (L.kind == op_kind::conv) {
        const auto& c = L.conv;
        if (c.kernels < 1 || c.channels < 1 || c.kh < 1 || c.kw < 1 || c.sh < 1 || c.sw < 1 || c.dh < 1 || c.dw < 1)
            bad("conv kernels, channels, kernel, stride and dilation must be >= 1");
        if (c.channels != L.channels) bad("conv channels must equal the node's input channels");
        if (c.depthwise && c.kernels != c.channels) bad("depthwise conv must have kernels == channels");
        if (c.depthwise && c.sw != 1) bad("depthwise conv with stride_w > 1 is rewritten before lowering");
    }
    if (L.kind == op_kind::fully_connected && (L.fc_outputs < 1 || L.fc_accum < 1))
        bad("fully connected outputs and accumulation depth must be >= 1");
    if ((L.kind == op_kind::max_pool || L.kind == op_kind::average_pool) &&
        (L.pool_kh < 1 || L.pool_kw < 1 || L.pool_sh < 1 || L.pool_sw < 1))
        bad("pool kernel and strides must be >= 1");
    if (L.kind == op_kind::pad && std::any_of(L.pads.begin(), L.pads.end(), [](int v) { return v < 0; }))
        bad("pads must be >= 0");
    if (L.kind == op_kind::softmax && (L.softmax_axis < -3 || L.softmax_axis > -1)) bad("softmax axis must be -3, -2 or -1");
    if (L.kind == op_kind::resize_nearest && (L.resize_h < 1 || L.resize_w < 1))
        bad("nearest resize factors must be integers >= 1");
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/tiling_model.hpp

namespace vnnx::compiler {

struct shaper_dims {
    long long height = 0, width = 0, shaper_height = 0, shaper_width = 0;
};
// ShaperOptions of an OUTPUT_SHAPER subnode (§7.1.7); needed iff height*width != shaper area.
struct output_shaper_info {
    bool needed = false;
    shaper_dims first, final;
    long long full_shaper_height = 0, full_shaper_width = 0;  // shape of the renamed conv output
    int stride_height = 1;
    bool use_strided = false;
};

struct tiling_result {
    bool fits = false;
    std::string reason;  // why it does not fit
    tile chosen{};
    // §10.1
    long long maps = 0, imaps = 0, rows = 0, cols = 0;
    long long rows_0 = 0, rows_final = 0, cols_0 = 0, cols_final = 0;
    long long row_start = 0, col_start = 0;
    long long row_inc0 = 0, row_inc = 0, col_inc0 = 0, col_inc = 0;
    long long row_last = 0, col_last = 0, orow_last = 0, ocol_last = 0;
    long long scratchpad_bytes = 0;  // v_out of the chosen tile
    long long sp_used = 0;           // combined usage of §10.5 (<= usable scratchpad)
    long long tile_count = 0;        // Conv2DOptions.tile_count for convs; row x col x map tiles otherwise
    long long input_stride = 0;      // FullyConnectedOptions.input_stride (native FC)
    std::optional<output_shaper_info> shaper;  // convs only
};

// One step of the walk of an axis: input start and length, output start.
struct axis_step {
    long long start, len, out_start;
    friend bool operator==(const axis_step&, const axis_step&) = default;
};

namespace tiling_detail {

inline long long& entry(tile& t, int i) {
    switch (i) {
        case 0: return t.batch;
        case 1: return t.imaps;
        case 2: return t.irows;
        case 3: return t.icols;
        case 4: return t.maps;
        case 5: return t.rows;
        default: return t.cols;
    }
}
inline long long value(const tile& t, int i) {
    tile c = t;
    return entry(c, i);
}
inline bool all_positive(const tile& t) {
    return t.batch >= 1 && t.imaps >= 1 && t.irows >= 1 && t.icols >= 1 && t.maps >= 1 && t.rows >= 1 && t.cols >= 1;
}

// Growth limits of the node's tile entries.
struct extents {
    long long maps, imaps, icols, irows, rows, cols;
};
inline extents extents_of(const tile_node& n) {
    const auto& L = n.op;
    if (L.kind == op_kind::conv) return {L.conv.kernels, L.conv.channels, 1, 1, L.m, L.n};
    if (L.kind == op_kind::fully_connected) return {1, 1, L.fc_accum, L.fc_outputs, L.m, L.fc_outputs};
    return {L.channels, 1, 1, 1, L.m, L.n};
}

}  // namespace tiling_detail

// The composed min-output of the node and its subnodes (the SDK's fx).
[[nodiscard]] inline tile chain_min_output(const tile_node& n, tile t) {
    t = min_output(n.op, t);
    for (const auto& s : n.subnodes) t = min_output(s, t);
    return t;
}

// Every op's min-output stays >= 1 while the tile flows through max-outputs (§10.2).
[[nodiscard]] inline bool chain_valid(const tile_node& n, tile t) {
    if (!tiling_detail::all_positive(min_output(n.op, t))) return false;
    t = max_output(n.op, t);
    for (const auto& s : n.subnodes) {
        if (!tiling_detail::all_positive(min_output(s, t))) return false;
        t = max_output(s, t);
    }
    return true;
}

struct scratchpad_usage {
    long long v_out = 0, v_tmp0 = 0, v_tmp = 0, used = 0;
};
// §10.5 with the D = 1 (conv nodes, mxp_double_buffer) / D = 0 combination rule.
[[nodiscard]] inline scratchpad_usage scratchpad_used(const tile_node& n, tile t, const preset_info& p) {
    scratchpad_usage u;
    std::tie(u.v_out, u.v_tmp0) = scratchpad(n.op, t, p);
    t = max_output(n.op, t);
    for (const auto& s : n.subnodes) {
        const auto [o, tmp] = scratchpad(s, t, p);
        u.v_out = std::max(u.v_out, o);
        u.v_tmp = std::max(u.v_tmp, tmp);
        t = max_output(s, t);
    }
    const bool simple = n.subnodes.empty() && !n.strided_output;
    if (n.op.kind == op_kind::conv)
        u.used = simple ? 2 * u.v_out + u.v_tmp0 : std::max(3 * u.v_out + u.v_tmp, 2 * u.v_out + u.v_tmp0 + u.v_tmp);
    else
        u.used = simple ? u.v_out + u.v_tmp0 : std::max(2 * u.v_out + u.v_tmp, u.v_out + u.v_tmp0 + u.v_tmp);
    return u;
}

[[nodiscard]] inline bool fits_scratchpad(const tile_node& n, const tile& t, const preset_info& p) {
    return scratchpad_used(n, t, p).used <= p.usable_scratchpad();
}

// FIA shaper capacity test, double buffering on, row buffering and split weights off (§10.4.2).
[[nodiscard]] inline bool valid_fia(const conv_params& c, long long maps, long long imaps, long long rows,
                                    long long cols, const preset_info& p) {
    const long long P = p.parallel_output_maps;
    const long long IS = p.input_shaper_bytes(), WS = p.weight_shaper_bytes();
    const long long records = maps * preset_info::quantization_record_bytes;
    if (records > preset_info::quantization_shaper_bytes) return false;
    if (c.depthwise) {
        // one bank each, half of it (double buffering)
        if (imaps * cols * rows * 2 > p.input_shaper_bank_bytes()) return false;
        if (imaps * c.kw * (c.kh + P - 1) * P * 2 > p.weight_shaper_bank_bytes()) return false;
        return true;
    }
    const long long banks = preset_info::input_shaper_banks;
    const long long in_imaps = tiling_detail::cdiv(imaps, banks) * banks;  // a possible extra channel per bank
    const long long in_elems = c.strided() ? tiling_detail::cdiv(rows, c.sh) * tiling_detail::cdiv(cols, c.sw) * c.sh * c.sw
                                           : rows * cols;
    if (in_imaps * in_elems * 2 > IS) return false;
    if ((in_imaps / banks) * in_elems * 2 > p.input_shaper_bank_bytes()) return false;
    const long long w_maps = tiling_detail::cdiv(maps, P) * P;
    const long long w_imaps = imaps + imaps % 2;
    if (w_maps * c.kh * c.kw * w_imaps * 2 > WS) return false;
    if (w_maps * c.kh * c.kw * (w_imaps / 2) * 2 > p.weight_shaper_bank_bytes()) return false;
    return true;
}

// Native FC shaper test (§10.4.5): single banks.
[[nodiscard]] inline bool valid_fia_fc(long long accum, long long rows, long long cols, const preset_info& p) {
    const long long P = p.parallel_output_maps;
    if (accum * rows > p.input_shaper_bank_bytes()) return false;
    if (tiling_detail::cdiv(accum * cols, P) * P > p.weight_shaper_bank_bytes()) return false;
    return cols * preset_info::quantization_record_bytes <= preset_info::quantization_shaper_bytes;
}

// The walk of one axis (§10.6): F maps an input window to an output window through the chain.
template <class F>
[[nodiscard]] std::vector<axis_step> walk_axis(F&& f, long long S, long long L, const std::string& where) {
    if (L >= S) return {{0, S, 0}};
    const auto fail_walk = [&](const std::string& rule) {
        fail(error_kind::bad_input, "tiling: " + where + ": walk of an axis of " + std::to_string(S) +
                                        " with tiles of " + std::to_string(L) + ": " + rule);
    };
    const long long T = std::max<long long>(1, f(window{0, S, S}).len);
    std::vector<axis_step> steps;
    long long i = 0;
    for (long long guard = 0; guard <= S + 1; ++guard) {
        long long len = std::min(L, S - i);
        auto w = f(window{i, len, S});
        if (w.len <= 0) fail_walk("a tile produces no output");
        long long out_len = w.len;
        if (w.start + out_len > T) {
            out_len = T - w.start;
            len = 0;
            while (f(window{i, len, S}).len < out_len && len < S - i) ++len;
        }
        // the smallest input length that still gives out_len outputs
        while (len > 1 && f(window{i, len - 1, S}).len >= out_len) --len;
        w = f(window{i, len, S});
        steps.push_back({i, len, w.start});
        if (w.start + out_len >= T) return steps;
        const long long next = w.start + out_len;
        long long j = i;
        while (j < S && f(window{j, len, S}).start < next) ++j;
        if (j == i || j >= S) fail_walk("no progress");
        i = j;
    }
    fail(error_kind::bad_input, "tiling: " + where + ": walk of an axis of " + std::to_string(S) + " did not end");
}

namespace tiling_detail {

// Largest v in [lo, hi] with ok(v), assuming ok is monotone (true then false); lo if none.
template <class Ok>
long long largest_valid(long long lo, long long hi, Ok&& ok) {
    if (hi <= lo) return lo;
    if (ok(hi)) return hi;
    long long good = lo, bad = hi;  // lo is the floor even when it fails (the SDK keeps it too)
    while (bad - good > 1) {
        const long long mid = good + (bad - good) / 2;
        (ok(mid) ? good : bad) = mid;
    }
    return good;
}

// "grow entry i to limit" (SDK increment_tile): the candidates v_k = min(next^k(start), limit) are
// tried in order while the scratchpad holds; binary search over k. Then shrink while invalid.
// nth(k) gives v_k directly and last is the first k with v_k == limit: the candidates are never
// listed, since a model's dimension (the limit) may be large (a listed search once took 1 GiB).
template <class Nth>
tile grow(const tile_node& n, const preset_info& p, tile t, int i, long long limit, long long last, Nth&& nth) {
    if (entry(t, i) < limit && fits_scratchpad(n, t, p)) {
        const auto k = largest_valid(0, last, [&](long long kk) {
            tile c = t;
            entry(c, i) = nth(kk);
            return fits_scratchpad(n, c, p);
        });
        entry(t, i) = nth(k);
    }
    while (!all_positive(chain_min_output(n, t)) && entry(t, i) > 1) --entry(t, i);
    return t;
}
// Candidates start, start + step, start + 2 step, ... up to limit.
inline tile grow_add(const tile_node& n, const preset_info& p, const tile& t, int i, long long limit, long long step) {
    const long long start = value(t, i);
    const long long last = start < limit ? cdiv(limit - start, step) : 0;
    return grow(n, p, t, i, limit, last, [&](long long k) { return std::min(limit, start + k * step); });
}
inline tile grow1(const tile_node& n, const preset_info& p, const tile& t, int i, long long limit) {
    return grow_add(n, p, t, i, limit, 1);
}
// Candidates start, 2 start, 4 start, ... up to limit (at most 63 of them).
inline tile grow_double(const tile_node& n, const preset_info& p, const tile& t, int i, long long limit) {
    const long long start = std::max<long long>(1, value(t, i));
    const auto nth = [&](long long k) {
        long long v = value(t, i);
        for (long long j = 0; j < k && v < limit; ++j) v = std::min(limit, std::max<long long>(1, v) * 2);
        return v;
    };
    long long last = 0;
    for (long long v = start; v < limit; v = std::min(limit, v * 2)) ++last;
    return grow(n, p, t, i, limit, last, nth);
}

constexpr int IMAPS = 1, ICOLS = 3, IROWS = 2, MAPS = 4, ROWS = 5, COLS = 6;

}  // namespace tiling_detail

// The minimum tile (§10.3 step 2); nullopt when an entry would exceed the node's extent.
[[nodiscard]] inline std::optional<tile> minimum_tile(const tile_node& n) {
    const auto e = tiling_detail::extents_of(n);
    const long long lim[7] = {1, e.imaps, e.irows, e.icols, e.maps, e.rows, e.cols};
    tile t;
    for (int guard = 0; guard < 1 << 20; ++guard) {
        const tile o = chain_min_output(n, t);
        if (tiling_detail::all_positive(o)) return t;
        for (int i = 0; i < 7; ++i)
            if (tiling_detail::value(o, i) < 1) {
                if (++tiling_detail::entry(t, i) > lim[i]) return std::nullopt;
            }
    }
    return std::nullopt;
}

namespace tiling_detail {

inline tile fit_conv(const tile_node& n, const preset_info& p, tile t) {
    const auto& c = n.op.conv;
    const long long P = p.parallel_output_maps;
    const auto v = [&](const tile& x) { return valid_fia(c, x.maps, x.imaps, x.rows, x.cols, p); };
    const auto with = [](tile x, int i, long long val) {
        entry(x, i) = val;
        return x;
    };
    t.maps = std::min<long long>(c.kernels, P);
    t.imaps = std::min<long long>(c.channels, 2);
    // 1. columns
    long long lim = largest_valid(t.cols, n.op.n, [&](long long x) { return v(with(t, COLS, x)); });
    t = grow1(n, p, t, COLS, lim);
    // 2. input maps: halve from all channels (even) until valid, round down to even, grow by doubling.
    // The SDK halves a float: once an invalid limit is odd, every later half is a fraction, which
    // its weight-bank test (imaps rounded up to even must be even) always rejects, so the limit
    // collapses to 0 and imaps stays at its start value. Reproduced on purpose (lowering.md §10.4.3
    // says "rounded down to even", which is what happens only when no odd limit is rejected).
    long long li = cdiv(c.channels, 2) * 2;
    while (li > 0 && !v(with(t, IMAPS, li))) li = (li % 2 != 0) ? 0 : li / 2;
    li -= li % 2;
    t = grow_double(n, p, t, IMAPS, li);
    t.imaps = std::min<long long>(t.imaps, c.channels);
    // 3. rows
    lim = largest_valid(t.rows, n.op.m, [&](long long x) { return v(with(t, ROWS, x)); });
    t = grow1(n, p, t, ROWS, lim);
    // 4. output maps in steps of P
    long long lm = largest_valid(t.maps, c.kernels, [&](long long x) { return v(with(t, MAPS, x)); });
    if (lm != c.kernels) lm = lm / P * P;
    t = grow_add(n, p, t, MAPS, lm, P);
    if (t.maps != c.kernels && t.maps % P != 0 && t.maps > P) t.maps = t.maps / P * P;
    return t;
}

inline tile fit_depthwise(const tile_node& n, const preset_info& p, tile t) {
    const auto& c = n.op.conv;
    const auto v = [&](const tile& x) { return valid_fia(c, x.maps, x.imaps, x.rows, x.cols, p); };
    const auto with = [](tile x, int i, long long val) {
        entry(x, i) = val;
        return x;
    };
    long long lim = largest_valid(t.cols, n.op.n, [&](long long x) { return v(with(t, COLS, x)); });
    t = grow1(n, p, t, COLS, lim);
    lim = largest_valid(t.rows, n.op.m, [&](long long x) { return v(with(t, ROWS, x)); });
    t = grow1(n, p, t, ROWS, lim);
    // maps, then imaps: +1 while both the FIA test and the scratchpad hold
    const auto both = [&](const tile& x) { return v(x) && fits_scratchpad(n, x, p); };
    t.maps = largest_valid(t.maps, c.channels, [&](long long x) { return both(with(t, MAPS, x)); });
    t.imaps = largest_valid(t.imaps, c.channels, [&](long long x) { return both(with(t, IMAPS, x)); });
    // an even split of the maps into DMA chunks of imaps
    const long long it = cdiv(t.maps, t.imaps);
    if (t.maps % it == 0) t.imaps = t.maps / it;
    return t;
}

inline tile fit_fc(const tile_node& n, const preset_info& p, tile t) {
    const auto& L = n.op;
    long long la = largest_valid(t.icols, L.fc_accum, [&](long long a) { return valid_fia_fc(a, t.rows, t.cols, p); });
    t = grow1(n, p, t, ICOLS, la);
    long long lo = largest_valid(t.cols, L.fc_outputs, [&](long long o) { return valid_fia_fc(t.icols, t.rows, o, p); });
    t = grow1(n, p, t, COLS, lo);
    long long lr = largest_valid(t.rows, L.m, [&](long long r) { return valid_fia_fc(t.icols, r, t.cols, p); });
    t = grow1(n, p, t, ROWS, lr);
    return t;
}

inline bool tile_less_anywhere(const tile& a, const tile& b) {
    for (int i = 0; i < 7; ++i)
        if (value(a, i) < value(b, i)) return true;
    return false;
}

}  // namespace tiling_detail

[[nodiscard]] inline window chain_window(const tile_node& n, axis a, window w) {
    w = map_window(n.op, a, w);
    for (const auto& s : n.subnodes) w = map_window(s, a, w);
    return w;
}

// Tile a node for a preset (§10.3), walk it (§10.6) and fill every field of §10.1.
[[nodiscard]] inline tiling_result tile_node_for(const tile_node& node, preset pr) {
    const preset_info& p = info(pr);
    // A height-dilated depthwise filter is tiled as its re-materialised kh' x kw filter (§7.1.1).
    tile_node n = node;
    if (n.op.kind == op_kind::conv && n.op.conv.depthwise && n.op.conv.dh > 1) {
        n.op.conv.kh = (n.op.conv.kh - 1) * n.op.conv.dh + 1;
        n.op.conv.dh = 1;
    }
    check_layer(n.op, true, "node");
    for (std::size_t i = 0; i < n.subnodes.size(); ++i) check_layer(n.subnodes[i], false, "subnode " + std::to_string(i));

    tiling_result r;
    const auto min = minimum_tile(n);
    if (!min) {
        r.reason = "no tile produces an output: the minimum tile exceeds the node's extents";
        return r;
    }
    tile t = *min;
    if (!fits_scratchpad(n, t, p)) {
        r.reason = "the minimum tile needs " + std::to_string(scratchpad_used(n, t, p).used) +
                   " bytes of scratchpad, " + std::string(p.name) + " has " + std::to_string(p.usable_scratchpad());
        return r;
    }
    const auto& L = n.op;
    using namespace tiling_detail;
    if (L.kind == op_kind::conv) {
        t = L.conv.depthwise ? fit_depthwise(n, p, t) : fit_conv(n, p, t);
        if (tile_less_anywhere(t, *min) || !valid_fia(L.conv, t.maps, t.imaps, t.rows, t.cols, p)) {
            r.reason = "no valid FIA tile (shaper buffers of " + std::string(p.name) + ")";
            return r;
        }
    } else if (L.kind == op_kind::fully_connected) {
        t = fit_fc(n, p, t);
        if (!valid_fia_fc(t.icols, t.rows, t.cols, p)) {
            r.reason = "no valid FIA tile for the fully connected node";
            return r;
        }
    } else {
        t = grow1(n, p, t, COLS, L.n);
        t = grow1(n, p, t, ROWS, L.m);
        t = grow1(n, p, t, MAPS, L.channels);
    }
    const auto use = scratchpad_used(n, t, p);
    if (use.used > p.usable_scratchpad()) {
        r.reason = "tile needs " + std::to_string(use.used) + " bytes of scratchpad, " + std::string(p.name) +
                   " has " + std::to_string(p.usable_scratchpad());
        return r;
    }
    if (!chain_valid(n, t)) {
        r.reason = "a subnode needs a larger or whole extent than fits the scratchpad";
        return r;
    }

    r.fits = true;
    r.chosen = t;
    r.sp_used = use.used;
    r.scratchpad_bytes = use.v_out;
    r.maps = t.maps;
    r.imaps = t.imaps;
    const long long m_stop = L.m;
    const long long n_stop = L.kind == op_kind::fully_connected ? L.fc_outputs : L.n;
    const auto ys = walk_axis([&](window w) { return chain_window(n, axis::rows, w); }, m_stop, t.rows, "rows");
    const auto xs = walk_axis([&](window w) { return chain_window(n, axis::cols, w); }, n_stop, t.cols, "columns");
    const auto fill = [](const std::vector<axis_step>& s, long long stop, long long& len, long long& len0,
                         long long& len_final, long long& inc0, long long& inc, long long& last, long long& olast) {
        len0 = len = len_final = s[0].len;
        if (s.size() > 1) {
            len = s[1].len;
            len_final = s.back().len;
        }
        inc0 = inc = stop;
        if (s.size() > 1) {
            inc0 = s[1].start - s[0].start;
            inc = s.back().start - s[s.size() - 2].start;
        }
        last = s.back().start;
        olast = s.back().out_start;
    };
    fill(ys, m_stop, r.rows, r.rows_0, r.rows_final, r.row_inc0, r.row_inc, r.row_last, r.orow_last);
    fill(xs, n_stop, r.cols, r.cols_0, r.cols_final, r.col_inc0, r.col_inc, r.col_last, r.ocol_last);
    const long long steps = static_cast<long long>(ys.size() * xs.size());
    if (L.kind == op_kind::conv) {
        r.tile_count = steps * cdiv(L.conv.kernels, t.maps) * cdiv(L.channels, t.imaps);
        output_shaper_info s;
        const auto g0 = conv_output_shapes(L.conv, r.rows_0, r.cols_0);
        const auto gf = conv_output_shapes(L.conv, r.rows_final, r.cols_final);
        const auto gfull = conv_output_shapes(L.conv, L.m, L.n);
        s.first = {g0.oh, g0.ow, g0.osh, g0.osw};
        s.final = {gf.oh, gf.ow, gf.osh, gf.osw};
        s.full_shaper_height = gfull.osh;
        s.full_shaper_width = gfull.osw;
        s.needed = g0.oh * g0.ow != g0.osh * g0.osw;
        s.stride_height = L.conv.sh;
        s.use_strided = L.conv.strided();
        r.shaper = s;
    } else {
        r.tile_count = steps * cdiv(L.channels, t.maps);
    }
    if (L.kind == op_kind::fully_connected) r.input_stride = t.icols;
    return r;
}

[[nodiscard]] inline tiling_result tile_node_for(const tile_node& n, const preset_info& p) {
    if (p.id >= preset_table.size())
        fail(error_kind::bad_input, "tiling: preset id " + std::to_string(p.id) + " is not a known size preset");
    return tile_node_for(n, static_cast<preset>(p.id));
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/tiling.hpp
// ---- begin vnnx/compiler/weight_packing.hpp
// FIA weight packing for ncomp models (lowering.md §7.1.3, §7.1.4, §7.10.2; SDK vnnx_tflite.py
// pad_weights_and_pack_2_1 / conv_pack_weights). The inverse lives in sim/weight_unpacking.hpp.
// Weights are int8 (a uint8 model's bytes have the same bit patterns), output is raw bytes.
#include <initializer_list>


namespace vnnx::compiler {

namespace packing_detail {
inline void check_positive(const char* what, std::initializer_list<long long> values, const char* names) {
    for (long long v : values)
        if (v < 1) fail(error_kind::bad_input, std::string(what) + ": dimensions (" + names + ") must all be >= 1");
}
inline void check_size(const char* what, std::size_t got, std::size_t want) {
    if (got != want)
        fail(error_kind::bad_input, std::string(what) + ": weight array holds " + std::to_string(got) +
                                        " values, the shape needs " + std::to_string(want));
}
}  // namespace packing_detail

// ---- ordinary convolution (§7.1.3) ----

// K' = K rounded up to P, C' = C rounded up to even.
[[nodiscard]] inline std::size_t conv_packed_size(int K, int C, int kh, int kw, int P) {
    const std::size_t kp = static_cast<std::size_t>((K + P - 1) / P) * static_cast<std::size_t>(P);
    const std::size_t cp = static_cast<std::size_t>(C + C % 2);
    return kp * cp * static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw);
}

// Block size of the packing: the tile's maps, or K' when one map tile covers all kernels.
[[nodiscard]] inline int conv_block_maps(int K, int P, int maps) {
    if (maps == K) return (K + P - 1) / P * P;
    if (maps < 1 || maps > K || maps % P != 0)
        fail(error_kind::bad_input, "conv weight packing: maps " + std::to_string(maps) +
                                        " must equal the kernel count " + std::to_string(K) +
                                        " or be a positive multiple of P = " + std::to_string(P));
    return maps;
}

// W is [K][C][kh][kw]. Blocks of M kernels; inside a block: channel, row, column, kernel (innermost).
[[nodiscard]] inline std::vector<std::uint8_t> pack_conv_weights(std::span<const std::int8_t> W, int K, int C, int kh,
                                                                 int kw, int P, int maps) {
    packing_detail::check_positive("conv weight packing", {K, C, kh, kw, P}, "K, C, kh, kw, P");
    packing_detail::check_size("conv weight packing", W.size(),
                       static_cast<std::size_t>(K) * static_cast<std::size_t>(C) * static_cast<std::size_t>(kh) *
                           static_cast<std::size_t>(kw));
    const int M = conv_block_maps(K, P, maps);
    const int kp = (K + P - 1) / P * P;
    const int cp = C + C % 2;
    const std::size_t plane = static_cast<std::size_t>(cp) * static_cast<std::size_t>(kh * kw);
    std::vector<std::uint8_t> out(conv_packed_size(K, C, kh, kw, P), 0);
    for (int k = 0; k < K; ++k) {
        const int b = k / M;
        const int mb = std::min(M, kp - b * M);
        const std::size_t base = static_cast<std::size_t>(b) * static_cast<std::size_t>(M) * plane;
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < kh; ++y)
                for (int x = 0; x < kw; ++x) {
                    const std::size_t src = ((static_cast<std::size_t>(k) * C + c) * kh + y) * kw + x;
                    const std::size_t pos = (static_cast<std::size_t>(c * kh + y) * kw + x) * mb + (k - b * M);
                    out[base + pos] = static_cast<std::uint8_t>(W[src]);
                }
    }
    return out;
}

// ---- depthwise (§7.1.4) ----

// Height-dilated depthwise filters are re-materialised with zero rows between taps (§7.1.1):
// kh' = (kh-1)*dh + 1 when dh > 1 and kh > 1. F is [C][kh][kw]; returns [C][kh'][kw].
struct dilated_filter {
    int kh = 0;  // kh'
    std::vector<std::int8_t> data;
};
[[nodiscard]] inline int dilated_kernel_height(int kh, int dh) { return (dh > 1 && kh > 1) ? (kh - 1) * dh + 1 : kh; }
[[nodiscard]] inline dilated_filter dilate_depthwise_height(std::span<const std::int8_t> F, int C, int kh, int kw,
                                                            int dh) {
    packing_detail::check_positive("depthwise height dilation", {C, kh, kw, dh}, "C, kh, kw, dilation_h");
    packing_detail::check_size("depthwise height dilation", F.size(),
                       static_cast<std::size_t>(C) * static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw));
    dilated_filter r;
    r.kh = dilated_kernel_height(kh, dh);
    const int step = r.kh == kh ? 1 : dh;
    r.data.assign(static_cast<std::size_t>(C) * static_cast<std::size_t>(r.kh) * static_cast<std::size_t>(kw), 0);
    for (int c = 0; c < C; ++c)
        for (int y = 0; y < kh; ++y)
            for (int x = 0; x < kw; ++x)
                r.data[(static_cast<std::size_t>(c) * r.kh + static_cast<std::size_t>(y * step)) * kw + x] =
                    F[(static_cast<std::size_t>(c) * kh + y) * kw + x];
    return r;
}

// One chunk is a (kh + P - 1) x P Toeplitz matrix for one kernel column.
[[nodiscard]] inline std::size_t depthwise_chunk_bytes(int kh, int P) {
    return static_cast<std::size_t>(kh + P - 1) * static_cast<std::size_t>(P);
}
// Chunk groups (kw chunks each): C + 2*I, or C + I when I = C (two / one zero fillers of I groups).
[[nodiscard]] inline std::size_t depthwise_group_count(int C, int imaps) {
    return static_cast<std::size_t>(C) + static_cast<std::size_t>(imaps == C ? imaps : 2 * imaps);
}
[[nodiscard]] inline std::size_t depthwise_packed_size(int C, int kh, int kw, int P, int imaps) {
    return depthwise_group_count(C, imaps) * static_cast<std::size_t>(kw) * depthwise_chunk_bytes(kh, P);
}
// Group index of channel c: fillers of I groups follow a channel whose 1-based count is a multiple of
// I or of maps, at most twice. Shared with the unpacker's logic (sim/weight_unpacking.hpp).
[[nodiscard]] inline std::vector<std::size_t> depthwise_group_of_channel(int C, int imaps, int maps) {
    std::vector<std::size_t> g(static_cast<std::size_t>(C));
    std::size_t slot = 0;
    int fillers = 0;
    for (int c = 0; c < C; ++c) {
        g[static_cast<std::size_t>(c)] = slot++;
        if (fillers < 2 && ((c + 1) % imaps == 0 || (c + 1) % maps == 0)) {
            slot += static_cast<std::size_t>(imaps);
            ++fillers;
        }
    }
    return g;
}

// F is [C][kh][kw] (kh already dilated). imaps/maps are the tile's Conv2DOptions.imaps and maps.
[[nodiscard]] inline std::vector<std::uint8_t> pack_depthwise_weights(std::span<const std::int8_t> F, int C, int kh,
                                                                      int kw, int P, int imaps, int maps) {
    packing_detail::check_positive("depthwise weight packing", {C, kh, kw, P, imaps, maps}, "C, kh, kw, P, imaps, maps");
    packing_detail::check_size("depthwise weight packing", F.size(),
                       static_cast<std::size_t>(C) * static_cast<std::size_t>(kh) * static_cast<std::size_t>(kw));
    if (imaps > C || maps > C)
        fail(error_kind::bad_input, "depthwise weight packing: imaps " + std::to_string(imaps) + " and maps " +
                                        std::to_string(maps) + " must not exceed the channel count " +
                                        std::to_string(C));
    const std::size_t chunk = depthwise_chunk_bytes(kh, P);
    std::vector<std::uint8_t> out(depthwise_packed_size(C, kh, kw, P, imaps), 0);
    const auto groups = depthwise_group_of_channel(C, imaps, maps);
    for (int c = 0; c < C; ++c)
        for (int x = 0; x < kw; ++x) {
            const std::size_t base = (groups[static_cast<std::size_t>(c)] * kw + static_cast<std::size_t>(x)) * chunk;
            // T[i][j] = F[c][i-j][x] for 0 <= i-j < kh.
            for (int i = 0; i < kh + P - 1; ++i)
                for (int j = 0; j < P; ++j) {
                    const int d = i - j;
                    if (d >= 0 && d < kh)
                        out[base + static_cast<std::size_t>(i) * P + j] =
                            static_cast<std::uint8_t>(F[(static_cast<std::size_t>(c) * kh + d) * kw + x]);
                }
        }
    return out;
}

// ---- native FULLY_CONNECTED (§7.10.2) ----

[[nodiscard]] inline std::size_t fc_packed_size(int O, int A, int cols) {
    return 2 * static_cast<std::size_t>((O + cols - 1) / cols) * static_cast<std::size_t>(cols) *
           static_cast<std::size_t>(A);
}

// W is [O][A]; cols = the node's `cols` field. Block i (b <= cols outputs) at 2*i*cols*A: the block
// transposed (A outer, output inner), then A*b zero bytes (the second weight bank).
// The SDK passes node.cols as written by the walk: the *second* column step's length when there are
// two or more steps (with exactly two steps that is the shorter final one), not the tile's cols.
// The simulator reads the same field back, so packing and unpacking agree either way.
[[nodiscard]] inline std::vector<std::uint8_t> pack_fc_weights(std::span<const std::int8_t> W, int O, int A, int cols) {
    packing_detail::check_positive("fully connected weight packing", {O, A, cols}, "outputs, accumulation depth, cols");
    packing_detail::check_size("fully connected weight packing", W.size(),
                       static_cast<std::size_t>(O) * static_cast<std::size_t>(A));
    std::vector<std::uint8_t> out(fc_packed_size(O, A, cols), 0);
    for (int o = 0; o < O; ++o) {
        const int i = o / cols;
        const int b = std::min(cols, O - i * cols);
        const std::size_t base = 2 * static_cast<std::size_t>(i) * cols * A;
        for (int a = 0; a < A; ++a)
            out[base + static_cast<std::size_t>(a) * b + (o - i * cols)] =
                static_cast<std::uint8_t>(W[static_cast<std::size_t>(o) * A + a]);
    }
    return out;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/weight_packing.hpp
// ---- begin vnnx/sim/weight_unpacking.hpp
// Recovering int8 weights from the packed FIA filter bytes of a VNNX file (inverse of
// compiler/weight_packing.hpp; lowering.md §7.1.3, §7.1.4, §7.10.2). Std-only on purpose: the
// simulator includes it without the compiler (only format/enums.hpp for the preset table).
//
// Node fields the simulator must pass in:
//   header    vbx_nn_preset                 -> P (parallel output maps) via parallel_output_maps()
//   CONV_2D   Conv2DOptions.filter_shape_dims = [K, C, kh, kw] (depthwise: [1, C, kh', kw]),
//             Conv2DOptions.use_depthwise (or group == C), node `maps`, Conv2DOptions.imaps (depthwise),
//             Conv2DOptions.kernels (K; depthwise: C), filter_data offset (the bytes)
//   FC        FullyConnectedOptions.filter_shape_dims = [O, A], node `cols`, filter_data offset
// The byte count to read at filter_data is packed_conv_bytes / packed_depthwise_bytes / packed_fc_bytes.
// Depthwise filters come back with kh' rows (height dilation already materialised, dilation_h = 1).


namespace vnnx::sim {

// P of the header's vbx_nn_preset.
[[nodiscard]] inline int parallel_output_maps(std::uint32_t vbx_nn_preset) {
    if (vbx_nn_preset >= format::presets.size())
        fail(error_kind::bad_input,
             "header: vbx_nn_preset " + std::to_string(vbx_nn_preset) + " is not a known size preset (0..4)");
    return static_cast<int>(format::presets[vbx_nn_preset].parallel_output_maps);
}

namespace unpacking_detail {
inline void need(bool ok, const std::string& what, const std::string& rule) {
    if (!ok) fail(error_kind::bad_input, what + ": " + rule);
}
inline std::size_t z(int v) { return static_cast<std::size_t>(v); }
}  // namespace unpacking_detail

[[nodiscard]] inline std::size_t packed_conv_bytes(int K, int C, int kh, int kw, int P) {
    return unpacking_detail::z((K + P - 1) / P * P) * unpacking_detail::z(C + C % 2) * unpacking_detail::z(kh) * unpacking_detail::z(kw);
}
[[nodiscard]] inline std::size_t packed_depthwise_bytes(int C, int kh, int kw, int P, int imaps) {
    return (unpacking_detail::z(C) + unpacking_detail::z(imaps == C ? imaps : 2 * imaps)) * unpacking_detail::z(kw) * unpacking_detail::z(kh + P - 1) *
           unpacking_detail::z(P);
}
[[nodiscard]] inline std::size_t packed_fc_bytes(int O, int A, int cols) {
    return 2 * unpacking_detail::z((O + cols - 1) / cols) * unpacking_detail::z(cols) * unpacking_detail::z(A);
}

// Returns W[K][C][kh][kw]. `what` names the node for messages (e.g. "model.vnnx: node 3").
[[nodiscard]] inline std::vector<std::int8_t> unpack_conv_weights(std::span<const std::uint8_t> bytes, int K, int C,
                                                                  int kh, int kw, int P, int maps,
                                                                  const std::string& what = "conv node") {
    using unpacking_detail::z;
    unpacking_detail::need(K >= 1 && C >= 1 && kh >= 1 && kw >= 1 && P >= 1, what,
                 "filter_shape_dims [" + std::to_string(K) + ", " + std::to_string(C) + ", " + std::to_string(kh) +
                     ", " + std::to_string(kw) + "] must be positive");
    unpacking_detail::need(maps == K || (maps >= 1 && maps < K && maps % P == 0), what,
                 "maps " + std::to_string(maps) + " must equal kernels " + std::to_string(K) +
                     " or be a multiple of P = " + std::to_string(P));
    const std::size_t want = packed_conv_bytes(K, C, kh, kw, P);
    unpacking_detail::need(bytes.size() == want, what,
                 "packed filter holds " + std::to_string(bytes.size()) + " bytes, [K, C, kh, kw] with P = " +
                     std::to_string(P) + " needs " + std::to_string(want));
    const int kp = (K + P - 1) / P * P;
    const int cp = C + C % 2;
    const int M = maps == K ? kp : maps;
    const std::size_t plane = z(cp) * z(kh) * z(kw);
    std::vector<std::int8_t> W(z(K) * z(C) * z(kh) * z(kw));
    for (int k = 0; k < K; ++k) {
        const int b = k / M;
        const int mb = std::min(M, kp - b * M);
        const std::size_t base = z(b) * z(M) * plane;
        for (int c = 0; c < C; ++c)
            for (int y = 0; y < kh; ++y)
                for (int x = 0; x < kw; ++x)
                    W[((z(k) * z(C) + z(c)) * z(kh) + z(y)) * z(kw) + z(x)] = static_cast<std::int8_t>(
                        bytes[base + ((z(c) * z(kh) + z(y)) * z(kw) + z(x)) * z(mb) + z(k - b * M)]);
    }
    return W;
}

// Returns F[C][kh][kw]. Checks that every chunk is the Toeplitz matrix of its column and that
// fillers are zero, so a wrong imaps/maps/P is reported instead of producing garbage.
[[nodiscard]] inline std::vector<std::int8_t> unpack_depthwise_weights(std::span<const std::uint8_t> bytes, int C,
                                                                       int kh, int kw, int P, int imaps, int maps,
                                                                       const std::string& what = "depthwise node") {
    using unpacking_detail::z;
    unpacking_detail::need(C >= 1 && kh >= 1 && kw >= 1 && P >= 1, what, "filter_shape_dims must be positive");
    unpacking_detail::need(imaps >= 1 && imaps <= C && maps >= 1 && maps <= C, what,
                 "imaps " + std::to_string(imaps) + " and maps " + std::to_string(maps) + " must lie in 1.." +
                     std::to_string(C));
    const std::size_t want = packed_depthwise_bytes(C, kh, kw, P, imaps);
    unpacking_detail::need(bytes.size() == want, what,
                 "packed depthwise filter holds " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(want));
    const std::size_t chunk = z(kh + P - 1) * z(P);
    const std::size_t groups = z(C) + z(imaps == C ? imaps : 2 * imaps);
    std::vector<bool> used(groups, false);
    std::vector<std::int8_t> F(z(C) * z(kh) * z(kw));
    std::size_t slot = 0;
    int fillers = 0;
    for (int c = 0; c < C; ++c) {
        used[slot] = true;
        for (int x = 0; x < kw; ++x) {
            const std::size_t base = (slot * z(kw) + z(x)) * chunk;
            for (int y = 0; y < kh; ++y)
                F[(z(c) * z(kh) + z(y)) * z(kw) + z(x)] = static_cast<std::int8_t>(bytes[base + z(y) * z(P)]);
            for (int i = 0; i < kh + P - 1; ++i)
                for (int j = 0; j < P; ++j) {
                    const int d = i - j;
                    const std::uint8_t expect = (d >= 0 && d < kh) ? bytes[base + z(d) * z(P)] : 0;
                    // The message is built only on failure: this check runs for every packed byte.
                    if (bytes[base + z(i) * z(P) + z(j)] != expect)
                        unpacking_detail::need(false, what,
                                 "channel " + std::to_string(c) + " column " + std::to_string(x) +
                                     ": chunk is not a Toeplitz matrix of the filter column (wrong P, imaps or maps?)");
                }
        }
        ++slot;
        if (fillers < 2 && ((c + 1) % imaps == 0 || (c + 1) % maps == 0)) {
            slot += z(imaps);
            ++fillers;
        }
    }
    for (std::size_t g = 0; g < groups; ++g) {
        if (used[g]) continue;
        for (std::size_t i = 0; i < z(kw) * chunk; ++i)
            if (bytes[g * z(kw) * chunk + i] != 0)
                unpacking_detail::need(false, what,
                         "filler chunk group " + std::to_string(g) + " must be zero");
    }
    return F;
}

// Returns W[O][A]; cols = the node's `cols` field used for packing.
[[nodiscard]] inline std::vector<std::int8_t> unpack_fc_weights(std::span<const std::uint8_t> bytes, int O, int A,
                                                                int cols, const std::string& what = "fc node") {
    using unpacking_detail::z;
    unpacking_detail::need(O >= 1 && A >= 1 && cols >= 1, what, "filter_shape_dims and cols must be positive");
    const std::size_t want = packed_fc_bytes(O, A, cols);
    unpacking_detail::need(bytes.size() == want, what,
                 "packed fully connected filter holds " + std::to_string(bytes.size()) + " bytes, expected " +
                     std::to_string(want));
    std::vector<std::int8_t> W(z(O) * z(A));
    for (int o = 0; o < O; ++o) {
        const int i = o / cols;
        const int b = std::min(cols, O - i * cols);
        const std::size_t base = 2 * z(i) * z(cols) * z(A);
        for (int a = 0; a < A; ++a)
            W[z(o) * z(A) + z(a)] = static_cast<std::int8_t>(bytes[base + z(a) * z(b) + z(o - i * cols)]);
    }
    return W;
}

}  // namespace vnnx::sim
// ---- end vnnx/sim/weight_unpacking.hpp
// ---- begin vnnx/compiler/passes/fuse_activation.hpp
// Folds a single-table int8 LUT that directly follows a convolution into the convolution's
// `nlf_data` (lowering.md §7.1.6): the conv writes the LUT's output, indexing the table by its own
// raw output byte. Runs after the LUT pass. Multi-table LUTs, non-int8 tables, LUTs after a conv
// whose output is also read elsewhere or is a graph output stay LUT layers.

// ---- begin vnnx/compiler/passes/helpers.hpp
// Small graph-editing helpers shared by the passes.

// ---- begin vnnx/compiler/graph.hpp
// The compiler's mutable graph. The TFLite model is read once through tflite::model_view and
// copied here (constants included) so that transforms can add, rewrite and drop operators and
// tensors freely; everything after the transforms reads only this graph.


namespace vnnx::compiler {

using tflite::tensor_type;

struct quantization {
    std::vector<float> scale;
    std::vector<std::int64_t> zero_point;
    std::int32_t quantized_dimension = 0;

    [[nodiscard]] bool empty() const noexcept { return scale.empty(); }
    [[nodiscard]] float scale0() const noexcept { return scale.empty() ? 0.0f : scale[0]; }
    [[nodiscard]] std::int32_t zero0() const noexcept {
        return zero_point.empty() ? 0 : static_cast<std::int32_t>(zero_point[0]);
    }
};

struct tensor {
    std::string name;
    tensor_type type = tensor_type::INT8;
    std::vector<std::int32_t> shape;  // TFLite order (NHWC)
    quantization quant;
    std::optional<std::vector<std::byte>> data;  // constants only

    [[nodiscard]] bool is_constant() const noexcept { return data.has_value(); }
    [[nodiscard]] std::size_t rank() const noexcept { return shape.size(); }
    [[nodiscard]] std::int64_t element_count() const noexcept {
        std::int64_t n = 1;
        for (auto d : shape) n *= d;
        return n;
    }
    template <class T>
    [[nodiscard]] std::vector<T> values() const {  // constant data as T (little-endian host assumed by the reader)
        std::vector<T> out;
        if (!data) return out;
        out.resize(data->size() / sizeof(T));
        if (!out.empty()) std::memcpy(out.data(), data->data(), out.size() * sizeof(T));
        return out;
    }
};

using activation = tflite::activation_function;
using padding = tflite::padding_mode;

/// The union of the TFLite options the lowering reads. Each operator uses its own subset;
/// the importer fills it from the options traits of vnnx/tflite.
struct op_options {
    padding pad = padding::VALID;
    std::int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    std::int32_t filter_h = 1, filter_w = 1, depth_multiplier = 1;
    activation fused = activation::NONE;
    std::int32_t axis = 0;
    std::int32_t num = 0;  // SPLIT num_splits, PACK values_count, UNPACK num
    bool keep_dims = false, keep_num_dims = false;
    bool align_corners = false, half_pixel_centers = false;
    bool pot_scale_int16 = true;
    bool adj_x = false, adj_y = false;
    bool approximate = false;  // GELU tanh form
    float alpha = 0.0f;        // LEAKY_RELU
    float beta = 1.0f;         // SOFTMAX
    std::int32_t begin_mask = 0, end_mask = 0, ellipsis_mask = 0, new_axis_mask = 0, shrink_axis_mask = 0;
    bool offset = false;        // STRIDED_SLICE
    std::int32_t batch_dims = 0;
    std::int32_t mirror_mode = 0;  // 0 REFLECT, 1 SYMMETRIC (TFLite numbering)
    std::int32_t block_size = 0;
    std::vector<std::int32_t> squeeze_dims;
    std::vector<std::int32_t> new_shape;
};

/// Operator codes: TFLite builtins plus the compiler's own fused kinds.
enum class op_type : std::int32_t {
    builtin = 0,  // `code` holds the TFLite operator
    lut = 1,      // a chain of element-wise ops replaced by 256-entry tables (lowering.md §3.4)
};

struct op {
    op_type kind = op_type::builtin;
    builtin_operator code = builtin_operator::ADD;
    std::vector<std::int32_t> inputs;   // tensor indices, -1 = optional input absent
    std::vector<std::int32_t> outputs;
    op_options options;
    std::int32_t source_index = -1;  // index of the operator in the TFLite file, -1 if made by a pass
    std::string custom_code;
    // LUT only: one 256-entry table per channel group (1..4); entry r is the output for input byte r.
    std::vector<std::vector<std::int32_t>> tables;
    // CONV_2D / DEPTHWISE_CONV_2D with a single-table int8 LUT folded in (passes/fuse_activation.hpp,
    // lowering.md §7.1.6): the table (entry r for the conv's raw output byte r) and the conv's own
    // output tensor before the table, whose quantization the requantization targets.
    std::vector<std::int32_t> nlf_table;
    std::optional<tensor> nlf_source;
};

struct graph {
    std::string source;  // file name for messages
    std::vector<tensor> tensors;
    std::vector<op> ops;
    std::vector<std::int32_t> inputs, outputs;

    [[nodiscard]] const tensor& t(std::int32_t i) const { return tensors.at(static_cast<std::size_t>(i)); }
    [[nodiscard]] tensor& t(std::int32_t i) { return tensors.at(static_cast<std::size_t>(i)); }

    std::int32_t add_tensor(tensor x) {
        tensors.push_back(std::move(x));
        return static_cast<std::int32_t>(tensors.size() - 1);
    }
    /// A name not yet used by any tensor: base, base.1, base.2, ...
    [[nodiscard]] std::string unique_name(const std::string& base) const {
        auto used = [&](const std::string& n) {
            for (const auto& x : tensors)
                if (x.name == n) return true;
            return false;
        };
        if (!used(base)) return base;
        for (int i = 1;; ++i)
            if (auto n = base + "." + std::to_string(i); !used(n)) return n;
    }
};

/// Where an operator came from, for messages: "operator 12 (CONV_2D)".
inline std::string describe(const op& o) {
    std::string name = o.kind == op_type::lut ? std::string("LUT") : std::string(builtin_name(o.code));
    if (o.source_index < 0) return "inserted " + name;
    return "operator " + std::to_string(o.source_index) + " (" + name + ")";
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/graph.hpp

namespace vnnx::compiler::passes {

/// Adds a constant int32 tensor.
inline std::int32_t add_i32_constant(graph& g, const std::string& name, std::vector<std::int32_t> shape,
                                     const std::vector<std::int32_t>& values) {
    tensor t;
    t.name = g.unique_name(name);
    t.type = tensor_type::INT32;
    t.shape = std::move(shape);
    std::vector<std::byte> bytes(values.size() * 4);
    if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
    t.data = std::move(bytes);
    return g.add_tensor(std::move(t));
}

/// Adds an activation tensor shaped like `like` with another shape.
inline std::int32_t add_activation_like(graph& g, std::int32_t like, const std::string& name,
                                        std::vector<std::int32_t> shape) {
    tensor t;
    t.name = g.unique_name(name);
    t.type = g.t(like).type;
    t.quant = g.t(like).quant;
    t.shape = std::move(shape);
    return g.add_tensor(std::move(t));
}

/// Operators reading tensor `t`, in order.
inline std::vector<std::size_t> readers_of(const graph& g, std::int32_t t) {
    std::vector<std::size_t> out;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        for (auto x : g.ops[i].inputs)
            if (x == t) {
                out.push_back(i);
                break;
            }
    return out;
}

inline bool is_graph_output(const graph& g, std::int32_t t) {
    for (auto o : g.outputs)
        if (o == t) return true;
    return false;
}

/// Replaces every read of tensor `from` by `to` (operators and graph outputs).
inline void replace_uses(graph& g, std::int32_t from, std::int32_t to) {
    for (auto& o : g.ops)
        for (auto& x : o.inputs)
            if (x == from) x = to;
    for (auto& x : g.outputs)
        if (x == from) x = to;
}

/// SAME padding of one spatial axis as TFLite computes it: (before, after).
inline std::pair<std::int32_t, std::int32_t> same_pads(std::int32_t in, std::int32_t out, std::int32_t stride,
                                                       std::int32_t kernel, std::int32_t dilation) {
    const std::int32_t k = (kernel - 1) * dilation + 1;
    const std::int32_t total = std::max(stride * (out - 1) - in + k, 0);
    return {total / 2, total - total / 2};
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/helpers.hpp

namespace vnnx::compiler::passes {

inline void fuse_activation(graph& g) {
    using B = builtin_operator;
    std::vector<bool> drop(g.ops.size(), false);
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        op& conv = g.ops[i];
        if (conv.kind != op_type::builtin || (conv.code != B::CONV_2D && conv.code != B::DEPTHWISE_CONV_2D) ||
            conv.outputs.size() != 1 || !conv.nlf_table.empty())
            continue;
        const std::int32_t out = conv.outputs[0];
        if (is_graph_output(g, out)) continue;
        const auto readers = readers_of(g, out);
        if (readers.size() != 1) continue;
        const op& lut = g.ops[readers[0]];
        if (lut.kind != op_type::lut || lut.tables.size() != 1 || lut.tables[0].size() != 256 || lut.inputs.size() != 1 ||
            lut.outputs.size() != 1 || drop[readers[0]])
            continue;
        if (g.t(lut.outputs[0]).type != tensor_type::INT8) continue;
        const auto own = g.t(out).type;
        if (own != tensor_type::INT8 && own != tensor_type::UINT8) continue;
        conv.nlf_table = lut.tables[0];
        conv.nlf_source = g.t(out);
        conv.outputs[0] = lut.outputs[0];
        drop[readers[0]] = true;
    }
    std::vector<op> kept;
    kept.reserve(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (!drop[i]) kept.push_back(std::move(g.ops[i]));
    g.ops = std::move(kept);
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/fuse_activation.hpp
// ---- begin vnnx/ops/conv.hpp
// CONV_2D and DEPTHWISE_CONV_2D → a CONV_2D (3) node with Conv2DOptions, computed on the FIA
// (lowering.md §7.1, §8.2, §8.3, §9). FULLY_CONNECTED reaches the lowering as RESHAPE → 1x1
// CONV_2D → RESHAPE (passes/fully_connected.hpp, §7.10.1); its trait only states the rules.
// After tiling, finish_conv_node() writes tile_count and inserts the OUTPUT_SHAPER layer
// (§7.1.7); after all nodes, set_fia_flags() writes first_fia / last_fia (§7.1.1) and
// set_fia_preload() the preload chain (§7.1.8).

// ---- begin vnnx/ops/trait.hpp
// An operator trait: everything the project knows about one TFLite operator, as compile-time
// facts plus its lowering. `op<Code>` is specialised once per supported operator (ops/*.hpp)
// and listed once in ops/registry.hpp; the registry folds the traits into constexpr tables.
//
// A trait provides:
//   code, summary                         the operator and one line for the OPS table
//   dtypes       meta::value_set<tensor_type...>  allowed types of the data input
//   activations  meta::value_set<activation...>   allowed fused activations (NONE when it has none)
//   node_type    VNNX node type when it starts a node, or identity_node (an IDENTITY node runs it as a layer)
//   layer_type   VNNX layer type when it is a layer, or no_layer
//   member       union member the record fills ("" when none)
//   check(g, o)  further rules; returns "" or the rule the operator breaks
//   lower_node(ctx, o) / lower_layer(ctx, o)
// Optional, shown by `vnnx ops` and enforced by ops::check() where they are sets:
//   ranks        rank_range{min, max} of the data input (absent: whatever check() allows)
//   paddings     meta::value_set<padding_mode...>  allowed paddings (operators with a padding option)
//   axes         the axes the operator works on, in words
//   notes        where the result deliberately differs from the SDK's (a [quirk] of lowering.md fixed)
#include <concepts>

// ---- begin vnnx/ops/lowering.hpp
// What an operator's lowering sees: the graph, the node being built, the data blob and the
// preset; plus the common rules of lowering.md §5 (channels-first shapes, tensor records,
// layer defaults) so that every operator trait applies them the same way.

// ---- begin vnnx/compiler/program.hpp
// The compiled model before it becomes bytes: nodes with their layers and tensor records,
// and the data blob. Offsets inside records are blob-relative until emit() relocates them.

// ---- begin vnnx/compiler/data_section.hpp
// The growing data blob of a VNNX file (the SDK calls it "weights"): parameters, I/O tables and
// I/O buffers. Every append is zero-padded to a multiple of 4 bytes (lowering.md §2.4); offsets
// returned are blob-relative and become model-relative at relocation (vnnx-format.md §7.2).


namespace vnnx::compiler {

class data_section {
public:
    /// Pads with zeros so that the next append starts at a multiple of `alignment`.
    void align(std::size_t alignment) { bytes_.resize(static_cast<std::size_t>(round_up(bytes_.size(), alignment))); }

    /// Appends raw bytes; returns their blob-relative offset.
    std::int64_t append_bytes(std::span<const std::byte> data) {
        const auto at = static_cast<std::int64_t>(bytes_.size());
        bytes_.insert(bytes_.end(), data.begin(), data.end());
        align(4);
        return at;
    }

    /// Appends integers or floats little-endian; returns their blob-relative offset.
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int64_t append(std::span<const T> values) {
        const auto at = static_cast<std::int64_t>(bytes_.size());
        const std::size_t base = bytes_.size();
        bytes_.resize(base + values.size() * sizeof(T));
        if constexpr (sizeof(T) == 1 || std::endian::native == std::endian::little) {
            // The host's bytes are already little-endian: one copy (weights are megabytes).
            if (!values.empty()) std::memcpy(bytes_.data() + base, values.data(), values.size() * sizeof(T));
        } else {
            for (std::size_t i = 0; i < values.size(); ++i) store_le<T>(bytes_.data() + base + i * sizeof(T), values[i]);
        }
        align(4);
        return at;
    }
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int64_t append(const std::vector<T>& values) {
        return append(std::span<const T>(values));
    }
    template <class T>
        requires std::is_arithmetic_v<T>
    std::int64_t append_one(T value) {
        return append(std::span<const T>(&value, 1));
    }

    /// Reserves `n` zero bytes (I/O buffers) and returns their offset.
    std::int64_t reserve(std::size_t n) {
        const auto at = static_cast<std::int64_t>(bytes_.size());
        bytes_.resize(bytes_.size() + n);
        align(4);
        return at;
    }

    [[nodiscard]] std::size_t size() const noexcept { return bytes_.size(); }
    [[nodiscard]] std::span<std::byte> bytes() noexcept { return bytes_; }
    [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return bytes_; }

private:
    std::vector<std::byte> bytes_;
};

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/data_section.hpp

namespace vnnx::compiler {

/// One tensor record before its buffer is placed. Records with the same name share a buffer.
struct tensor_desc {
    std::string name;
    std::int32_t type = static_cast<std::int32_t>(format::calc_type::CALC_TYPE_INT8);
    std::vector<std::int32_t> shape;  // channels-first
    float scale = 0.0f;
    std::int32_t zero = 0;
};

namespace detail {
/// Byte positions of the obj_off_t fields of union member M (relative to the union start).
template <class M>
std::vector<std::uint16_t> offset_fields() {
    std::vector<std::uint16_t> out;
    constexpr auto fields = meta::fields_v<M>;
    std::size_t i = 0;
    meta::for_each_field<M>([&](std::string_view, auto tag, auto) {
        if constexpr (std::is_same_v<typename decltype(tag)::type, format::obj_off_t>)
            out.push_back(static_cast<std::uint16_t>(fields[i].offset));
        ++i;
    });
    return out;
}
}  // namespace detail

/// A record plus the union offset fields that need relocation.
template <class Record>
struct record_build {
    Record rec{};
    std::vector<std::uint16_t> union_offsets;

    /// Makes the record hold union member M (its fields, zeros after).
    template <class M>
    void set(const M& member) {
        rec.options.set(member);
        union_offsets = detail::offset_fields<M>();
    }
    template <class M>
    [[nodiscard]] M get() const {
        return rec.options.template get<M>();
    }
};

struct layer_build : record_build<format::vnnx_layer_t> {
    std::vector<tensor_desc> tensors;  // inputs, then the output
};

struct node_build : record_build<format::vnnx_subgraph_node_t> {
    std::vector<tensor_desc> tensors;  // node inputs, then node outputs
    std::vector<layer_build> layers;
    std::string label;                 // for reports: the operators it came from
    std::int64_t macs = 0;
    std::int64_t weight_bytes = 0;
};

/// A graph input or output: its tensor name and the test vector embedded in its buffer.
struct io_desc {
    std::string name;
    std::vector<std::byte> test_data;  // channels-first, may be empty
};

struct program {
    format::preset preset = format::preset::V1000;
    format::compression compression = format::compression::ncomp;
    std::vector<node_build> nodes;
    data_section data;
    std::vector<io_desc> inputs, outputs;
};

/// Node and layer records with the SDK's defaults (lowering.md §2.3).
inline format::vnnx_subgraph_node_t default_node() {
    format::vnnx_subgraph_node_t n{};
    n.input_strides = {1, 1};
    n.output_strides = {1, 1};
    n.num_inputs = 1;
    n.num_outputs = 1;
    n.activation_min = -1;
    n.activation_max = -1;
    n.input_offset = -1;
    n.output_offset = -1;
    n.replay_buffer = format::obj_off_t{0};  // written by a recording run, never relocated
    return n;
}

inline format::vnnx_layer_t default_layer() {
    format::vnnx_layer_t l{};
    l.strides = {1, 1};
    l.kernel_shape = {1, 1};
    l.dilations = {1, 1};
    l.num_inputs = 1;
    l.num_outputs = 1;
    l.num_tensors = -1;
    l.activation_min = -128;
    l.activation_max = 127;
    l.input_offset = -1;
    l.output_offset = -1;
    return l;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/program.hpp

namespace vnnx::ops {

using compiler::graph;
using compiler::layer_build;
using compiler::node_build;
using compiler::tensor_desc;

/// TFLite shape → channels-first (lowering.md §2.1): the last axis moves to position -3.
inline std::vector<std::int32_t> channels_first(const std::vector<std::int32_t>& s) {
    if (s.size() < 3) return s;
    std::vector<std::int32_t> out(s.begin(), s.end() - 3);
    out.push_back(s.back());
    out.push_back(s[s.size() - 3]);
    out.push_back(s[s.size() - 2]);
    return out;
}

/// A TFLite axis → channels-first axis, non-negative form.
inline std::int32_t channels_first_axis(std::int32_t axis, std::int32_t rank) {
    if (axis < 0) axis += rank;
    if (rank >= 3) {
        if (axis == rank - 1) return rank - 3;
        if (axis == rank - 3 || axis == rank - 2) return axis + 1;
    }
    return axis;
}

inline std::int32_t calc_type_of(tflite::tensor_type t) {
    using T = tflite::tensor_type;
    using C = format::calc_type;
    switch (t) {
        case T::UINT8: case T::BOOL: return static_cast<std::int32_t>(C::CALC_TYPE_UINT8);
        case T::INT8: return static_cast<std::int32_t>(C::CALC_TYPE_INT8);
        case T::INT16: return static_cast<std::int32_t>(C::CALC_TYPE_INT16);
        case T::INT32: return static_cast<std::int32_t>(C::CALC_TYPE_INT32);
        default: return static_cast<std::int32_t>(C::CALC_TYPE_UNKNOWN);
    }
}

/// Channels-first geometry (channels, rows, cols) of a shape; missing dims are 1.
struct geometry {
    std::int32_t channels = 1, m = 1, n = 1;
};
inline geometry geometry_of(const std::vector<std::int32_t>& tflite_shape) {
    const auto cf = channels_first(tflite_shape);
    geometry g;
    const auto r = cf.size();
    if (r >= 1) g.n = cf[r - 1];
    if (r >= 2) g.m = cf[r - 2];
    if (r >= 3) g.channels = cf[r - 3];
    return g;
}

struct lowering {
    const graph& g;
    compiler::program& prog;
    const compiler::preset_info& preset;
    node_build& node;
    // The tile chosen for the node (lowering.md §10.1); convolutions pack weights with it.
    std::int32_t maps = 0, imaps = 0;
    // Names of node inputs renamed for an IDENTITY node's copy (lowering.md §5.3).
    std::vector<std::pair<std::string, std::string>> renames;

    [[nodiscard]] compiler::data_section& data() { return prog.data; }

    [[nodiscard]] std::string tensor_name(std::int32_t t) const {
        std::string n = g.t(t).name;
        for (const auto& [from, to] : renames)
            if (n == from) return to;
        return n;
    }

    /// The tensor record of graph tensor t (channels-first).
    [[nodiscard]] tensor_desc desc(std::int32_t t) const {
        const auto& x = g.t(t);
        tensor_desc d;
        d.name = tensor_name(t);
        d.type = calc_type_of(x.type);
        d.shape = channels_first(x.shape);
        for (auto& v : d.shape)
            if (v < 0) v = 1;  // an unknown batch is 1
        d.scale = x.quant.scale0();
        d.zero = x.quant.zero0();
        return d;
    }

    /// A new layer with the common fields of lowering.md §5.4 filled from operator `o`:
    /// types, zero points, tensors (activation inputs, then the output).
    layer_build& add_layer(std::int32_t type, const compiler::op& o, const std::vector<std::int32_t>& inputs) {
        layer_build l;
        l.rec = compiler::default_layer();
        l.rec.type = type;
        for (auto t : inputs) l.tensors.push_back(desc(t));
        l.tensors.push_back(desc(o.outputs.at(0)));
        l.rec.input_data_type = l.tensors.front().type;
        l.rec.output_data_type = l.tensors.back().type;
        l.rec.input_offset = l.tensors.front().zero;
        l.rec.output_offset = l.tensors.back().zero;
        l.rec.num_inputs = static_cast<std::int32_t>(inputs.size());
        l.rec.num_outputs = 1;
        l.rec.num_tensors = l.rec.num_inputs + 1;
        node.layers.push_back(std::move(l));
        return node.layers.back();
    }

    /// The activation (non-constant) inputs of an operator, in order.
    [[nodiscard]] std::vector<std::int32_t> activation_inputs(const compiler::op& o) const {
        std::vector<std::int32_t> out;
        for (auto t : o.inputs)
            if (t >= 0 && !g.t(t).is_constant()) out.push_back(t);
        return out;
    }

    [[noreturn]] void reject(const compiler::op& o, const std::string& rule) const {
        fail(error_kind::unsupported, g.source + ": " + compiler::describe(o) + ": " + rule);
    }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/lowering.hpp

namespace vnnx::ops {

using tflite::activation_function;
using tflite::tensor_type;

inline constexpr std::int32_t identity_node = -1;
inline constexpr std::int32_t no_layer = -1;

/// Specialised per supported operator; the primary template marks "unsupported".
template <builtin_operator Code>
struct op {
    static constexpr bool supported = false;
};

using int8_types = meta::value_set<tensor_type::INT8, tensor_type::UINT8>;
using no_activation = meta::value_set<activation_function::NONE>;
using tflite::padding_mode;
using any_padding = meta::value_set<padding_mode::SAME, padding_mode::VALID>;

/// Allowed ranks of the data input, both ends included.
struct rank_range {
    std::int32_t min = 0, max = 0;
};

template <class T>
concept operator_trait = requires(const graph& g, const compiler::op& o) {
    { T::code } -> std::convertible_to<builtin_operator>;
    { T::summary } -> std::convertible_to<std::string_view>;
    { T::node_type } -> std::convertible_to<std::int32_t>;
    { T::layer_type } -> std::convertible_to<std::int32_t>;
    { T::member } -> std::convertible_to<std::string_view>;
    T::dtypes;
    T::activations;
    { T::check(g, o) } -> std::convertible_to<std::string>;
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/trait.hpp
// ---- begin vnnx/quant/activation.hpp
// Output clamping bounds from a fused activation: TFLite's CalculateActivationRangeQuantized
// (used by the reference interpreter) and the VNNX node bounds of lowering.md §8.3.

// ---- begin vnnx/quant/multiplier.hpp
// Real multiplier -> (int32 multiplier, shift) as TFLite's QuantizeMultiplier (lowering.md
// §8.1), and the rounding helpers of lowering.md §2.2.


namespace vnnx::quant {

/// sign(x)·floor(|x| + 0.5): C's round(), TFLite's TfLiteRound.
[[nodiscard]] inline double round_away(double x) noexcept { return std::round(x); }
[[nodiscard]] inline float round_away(float x) noexcept { return std::round(x); }

/// Round half to even (Python's round()).
[[nodiscard]] inline double round_even(double x) noexcept {
    const double f = std::floor(x);
    const double diff = x - f;
    if (diff > 0.5) return f + 1.0;
    if (diff < 0.5) return f;
    return std::fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

struct quantized_multiplier {
    std::int32_t multiplier = 0;
    int shift = 0;  // positive: left shift
    friend constexpr bool operator==(const quantized_multiplier&, const quantized_multiplier&) = default;
};

/// QM(r) of lowering.md §8.1 = TFLite QuantizeMultiplier. Negative or non-finite r is an error.
[[nodiscard]] inline quantized_multiplier quantize_multiplier(double r) {
    if (!(r >= 0.0) || !std::isfinite(r))
        fail_input("quantize_multiplier: real multiplier " + std::to_string(r) + " must be finite and >= 0");
    if (r == 0.0) return {0, 0};
    int e = 0;
    const double q = std::frexp(r, &e);
    auto m = static_cast<std::int64_t>(std::round(q * static_cast<double>(std::int64_t{1} << 31)));
    if (m == (std::int64_t{1} << 31)) {
        m /= 2;
        ++e;
    }
    if (e < -31) {
        e = 0;
        m = 0;
    }
    return {static_cast<std::int32_t>(m), e};
}

/// TFLite QuantizeMultiplierSmallerThanOneExp: r in (0, 1), shift <= 0.
[[nodiscard]] inline quantized_multiplier quantize_multiplier_smaller_than_one(double r) {
    if (!(r > 0.0 && r < 1.0))
        fail_input("quantize_multiplier_smaller_than_one: " + std::to_string(r) + " must be in (0, 1)");
    return quantize_multiplier(r);
}

/// TFLite QuantizeMultiplierGreaterThanOne: r > 1, shift >= 0.
[[nodiscard]] inline quantized_multiplier quantize_multiplier_greater_than_one(double r) {
    if (!(r > 1.0)) fail_input("quantize_multiplier_greater_than_one: " + std::to_string(r) + " must be > 1");
    return quantize_multiplier(r);
}

/// TFLite DownScaleInt32ToInt16Multiplier (HARD_SWISH): round the Q31 multiplier to Q15.
[[nodiscard]] constexpr std::int16_t down_scale_int32_to_int16_multiplier(std::int32_t m) noexcept {
    constexpr std::int32_t offset = 1 << 15;
    if (m >= std::numeric_limits<std::int32_t>::max() - offset) return std::numeric_limits<std::int16_t>::max();
    return static_cast<std::int16_t>((m + offset) >> 16);
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/multiplier.hpp

namespace vnnx::quant {

/// TFLite ActivationFunctionType values.
enum class fused_activation : std::int8_t { none = 0, relu = 1, relu_n1_to_1 = 2, relu6 = 3, tanh = 4, sign_bit = 5 };

struct activation_range {
    std::int32_t min = 0;
    std::int32_t max = 0;
    friend constexpr bool operator==(const activation_range&, const activation_range&) = default;
};

/// TFLite CalculateActivationRangeQuantized for an output type range [qmin, qmax]:
/// bounds z + round(f / scale) computed in float, as TFLite does.
[[nodiscard]] inline activation_range tflite_activation_range(fused_activation act, float scale, std::int32_t zero_point,
                                                              std::int32_t qmin, std::int32_t qmax) {
    auto q = [&](float f) { return zero_point + static_cast<std::int32_t>(std::round(f / scale)); };
    switch (act) {
        case fused_activation::relu: return {std::max(qmin, q(0.0f)), qmax};
        case fused_activation::relu6: return {std::max(qmin, q(0.0f)), std::min(qmax, q(6.0f))};
        case fused_activation::relu_n1_to_1: return {std::max(qmin, q(-1.0f)), std::min(qmax, q(1.0f))};
        default: return {qmin, qmax};
    }
}

/// Which VNNX node kind the bounds are for (the rows of §8.3).
enum class bounds_site { conv, fully_connected, eltwise, broadcast_add_sub, other, comparison };

/// VNNX activation_min/max of §8.3. The maximum stays 127 even for UINT8 outputs (SDK quirk).
[[nodiscard]] inline activation_range vnnx_activation_bounds(bounds_site site, fused_activation act, double s_out,
                                                             std::int32_t z_out) {
    if (site == bounds_site::comparison) return {0, 1};
    if (site == bounds_site::other) return {-128, 127};
    if (act == fused_activation::relu) return {z_out, 127};
    if (act == fused_activation::relu6 && site == bounds_site::conv)
        return {z_out, std::min(static_cast<std::int32_t>(round_even(6.0 / s_out + z_out)), 127)};
    return {-128, 127};
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/activation.hpp
// ---- begin vnnx/quant/fia.hpp
// FIA convolution requantization records (lowering.md §8.2): a 16-bit multiplier, an index
// into the output shifts {8,16,24,32} and a 48-bit constant per output channel, packed in
// one 64-bit little-endian word.


namespace vnnx::quant {

inline constexpr std::array<int, 4> fia_output_shifts = {8, 16, 24, 32};
inline constexpr std::int64_t fia_max_multiplier = 65535;
inline constexpr std::int64_t fia_accumulator_bound = std::int64_t{1} << 29;
inline constexpr std::int64_t fia_c_min = -(std::int64_t{1} << 47);
inline constexpr std::int64_t fia_c_max = (std::int64_t{1} << 47) - 1;

struct fia_params {
    std::int32_t multiplier = 0;  // om, 0..65535
    int shift_index = 0;          // index into fia_output_shifts
    std::int64_t constant = 0;    // c, 48-bit signed (exact, before dropping low bits)
    friend constexpr bool operator==(const fia_params&, const fia_params&) = default;
};

/// Per-channel FIA parameters from the effective scale s, bias b (already holding −z_in·Σw),
/// output zero point and activation bounds, as §8.2 steps 1–4.
[[nodiscard]] inline fia_params fia_quantize(double s, std::int64_t bias, std::int32_t z_out, std::int32_t act_min,
                                             std::int32_t act_max) {
    if (!(s >= 0.0) || !std::isfinite(s))
        fail_input("fia_quantize: effective scale " + std::to_string(s) + " must be finite and >= 0");
    constexpr double A = static_cast<double>(fia_accumulator_bound);
    const double b = static_cast<double>(bias);
    const double hi = (A - 1 + b) * s + z_out;
    const double lo = (-A + b) * s + z_out;
    if ((hi < act_min && lo < act_min) || (hi > act_max && lo > act_max)) s = 1.0;  // dead channel
    int e_min = 0;
    if (s == 0.0) {
        e_min = -8;
    } else {
        double t = s;
        while (round_even(2 * t) <= static_cast<double>(fia_max_multiplier)) {
            t *= 2;
            --e_min;
        }
        while (round_even(t) > static_cast<double>(fia_max_multiplier)) {
            t /= 2;
            ++e_min;
        }
    }
    for (;;) {
        int j = 0;
        for (int k = 0; k < 4; ++k)
            if (fia_output_shifts[static_cast<std::size_t>(k)] <= -e_min) j = k;
        const int o = fia_output_shifts[static_cast<std::size_t>(j)];
        const double om_real = round_even(std::ldexp(s, o));
        const auto om = static_cast<std::int64_t>(std::clamp(om_real, 0.0, static_cast<double>(fia_max_multiplier)));
        // Exact integer arithmetic in 128 bits: b·om may exceed 2^63 for absurd biases.
        const __int128 c = static_cast<__int128>(bias) * om + static_cast<__int128>(z_out) * (__int128{1} << o) +
                           (__int128{1} << (o - 1));
        auto in48 = [](__int128 v) { return v >= fia_c_min && v <= fia_c_max; };
        if (in48(c + static_cast<__int128>(fia_accumulator_bound - 1) * om) &&
            in48(c - static_cast<__int128>(fia_accumulator_bound) * om) && in48(c))
            return {static_cast<std::int32_t>(om), j, static_cast<std::int64_t>(c)};
        if (e_min > 64) fail(error_kind::limit, "fia_quantize: no output shift keeps the constant within 48 bits");
        ++e_min;
    }
}

/// The 64-bit record of §8.2 step 5.
[[nodiscard]] constexpr std::uint64_t fia_record(const fia_params& p) noexcept {
    const std::int64_t c = p.constant;
    const std::int64_t L = ((c % 65536) + 65536) % 65536;
    const std::int64_t H = (c - L) / 65536;
    const std::uint64_t low = static_cast<std::uint64_t>(L >> 6) & 0x3FF;
    const std::uint64_t high = static_cast<std::uint64_t>(H) & 0xFFFFFFFFu;
    return low | (high << 10) | ((static_cast<std::uint64_t>(p.multiplier) & 0xFFFF) << 42) |
           ((static_cast<std::uint64_t>(p.shift_index) & 3) << 58);
}

/// Decodes a record: the constant comes back with its low 6 bits cleared.
[[nodiscard]] constexpr fia_params fia_decode(std::uint64_t r) noexcept {
    fia_params p;
    const std::int64_t low = static_cast<std::int64_t>(r & 0x3FF) << 6;
    const auto high = static_cast<std::int32_t>(static_cast<std::uint32_t>((r >> 10) & 0xFFFFFFFFu));
    p.constant = static_cast<std::int64_t>(high) * 65536 + low;
    p.multiplier = static_cast<std::int32_t>((r >> 42) & 0xFFFF);
    p.shift_index = static_cast<int>((r >> 58) & 3);
    return p;
}

/// What the accelerator computes from a record (derived, §8.2): (acc·om + c) >> o.
[[nodiscard]] constexpr std::int64_t fia_apply(std::int64_t acc, const fia_params& p) noexcept {
    const int o = fia_output_shifts[static_cast<std::size_t>(p.shift_index & 3)];
    return (acc * p.multiplier + p.constant) >> o;
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/fia.hpp

namespace vnnx::ops {

namespace conv_detail {

using B = builtin_operator;
using conv_activations = meta::value_set<activation_function::NONE, activation_function::RELU,
                                         activation_function::RELU6, activation_function::RELU_N1_TO_1>;

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// The convolution as the FIA sees it (channels-first, depthwise flag of §7.1).
struct conv_geometry {
    bool depthwise = false;
    std::int32_t K = 0, C = 0, kh = 0, kw = 0, sh = 1, sw = 1, dh = 1, dw = 1;
    std::int32_t N = 1, H = 0, W = 0, OH = 0, OW = 0;
};

inline conv_geometry geometry_of_conv(const graph& g, const compiler::op& o) {
    conv_geometry c;
    const auto& in = g.t(o.inputs.at(0)).shape;   // [N, H, W, C]
    const auto& w = g.t(o.inputs.at(1)).shape;    // [K, kh, kw, C] or [1, kh, kw, C]
    c.N = std::max(1, in[0]);
    c.H = in[1];
    c.W = in[2];
    c.C = in[3];
    c.kh = w[1];
    c.kw = w[2];
    // A depthwise conv over one channel is an ordinary one-kernel conv (§7.1).
    c.depthwise = o.code == B::DEPTHWISE_CONV_2D && w[0] == 1 && c.C > 1;
    c.K = o.code == B::DEPTHWISE_CONV_2D ? w[3] : w[0];
    c.sh = o.options.stride_h;
    c.sw = o.options.stride_w;
    c.dh = o.options.dilation_h;
    c.dw = o.options.dilation_w;
    c.OH = (c.H - ((c.kh - 1) * c.dh + 1)) / c.sh + 1;
    c.OW = (c.W - ((c.kw - 1) * c.dw + 1)) / c.sw + 1;
    return c;
}

inline std::string check_conv(const graph& g, const compiler::op& o) {
    const bool dw = o.code == B::DEPTHWISE_CONV_2D;
    if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.inputs[1] < 0) return "needs an input and a filter";
    if (o.outputs.size() != 1) return "must have one output";
    const auto& x = g.t(o.inputs[0]);
    const auto& w = g.t(o.inputs[1]);
    const auto& y = g.t(o.outputs[0]);
    if (!w.is_constant()) return "input 1 (filter) must be a constant";
    if (x.rank() != 4 || w.rank() != 4 || y.rank() != 4) return "input, filter and output must have rank 4";
    if (!is_8bit(w.type)) return "filter type " + std::string(tflite::type_name(w.type)) + " is not INT8 or UINT8";
    if (!is_8bit(y.type)) return "output type " + std::string(tflite::type_name(y.type)) + " is not INT8 or UINT8";
    for (auto d : w.shape)
        if (d < 1) return "filter dimensions must be positive";
    if (o.options.stride_h < 1 || o.options.stride_w < 1) return "strides must be >= 1";
    if (o.options.dilation_h < 1 || o.options.dilation_w < 1) return "dilation factors must be >= 1";
    const std::int32_t C = x.shape[3];
    if (dw) {
        if (w.shape[0] != 1) return "depthwise filter must have shape [1, kh, kw, C]";
        // Depth multiplier M > 1 needs K = M*C kernels over C inputs: the FIA's depthwise mode has
        // K = C. Over one input channel it is an ordinary conv with M kernels, which is supported.
        if (C > 1 && w.shape[3] != C)
            return "depth multiplier " + std::to_string(w.shape[3] / C) + " over " + std::to_string(C) +
                   " channels is not supported (the FIA's depthwise mode needs output channels = input channels; "
                   "a multiplier is only possible over one input channel)";
        if (C < 1 || w.shape[3] % C != 0) return "depthwise output channels must be a multiple of the input channels";
    } else if (w.shape[3] != C) {
        return "filter depth " + std::to_string(w.shape[3]) + " differs from the input's " + std::to_string(C) +
               " channels: grouped convolutions are not supported";
    }
    const std::int32_t K = dw ? w.shape[3] : w.shape[0];
    if (y.shape[3] != K) return "output channels " + std::to_string(y.shape[3]) + " differ from the filter's " + std::to_string(K);
    if (x.quant.empty() || y.quant.empty() || w.quant.empty()) return "input, filter and output must be quantized";
    if (!(x.quant.scale0() > 0) || !(y.quant.scale0() > 0)) return "input and output scales must be positive";
    const auto ns = w.quant.scale.size();
    if (ns != 1 && ns != static_cast<std::size_t>(K))
        return "filter has " + std::to_string(ns) + " scales; needs 1 or one per output channel (" + std::to_string(K) + ")";
    for (float s : w.quant.scale)
        if (!(s > 0) || !std::isfinite(s)) return "filter scales must be positive and finite";
    if (!w.quant.zero_point.empty() && w.quant.zero_point.size() != 1 && w.quant.zero_point.size() != ns)
        return "filter zero points must be one or one per scale";
    if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
        const auto& b = g.t(o.inputs[2]);
        if (!b.is_constant() || b.type != tensor_type::INT32) return "input 2 (bias) must be an INT32 constant";
        if (b.element_count() != K) return "bias has " + std::to_string(b.element_count()) + " elements; needs " + std::to_string(K);
    }
    if (o.options.pad == compiler::padding::VALID) {
        const std::int64_t dkh = std::int64_t(w.shape[1] - 1) * o.options.dilation_h + 1;
        const std::int64_t dkw = std::int64_t(w.shape[2] - 1) * o.options.dilation_w + 1;
        if (dkh > x.shape[1] || dkw > x.shape[2]) return "the dilated filter is larger than the unpadded input";
    }
    return {};
}

/// Bounds of §8.3 for the conv's own output, corrected where the SDK is not (quirks): uint8 outputs
/// use 0..255 (the SDK keeps 127 as maximum and -128 as minimum), RELU_N1_TO_1 is honoured (the
/// SDK drops it). For int8 outputs and NONE/RELU/RELU6 the values are exactly §8.3's.
inline quant::activation_range conv_bounds(activation_function act, const compiler::tensor& out) {
    const bool u8 = out.type == tensor_type::UINT8;
    const std::int32_t qmin = u8 ? 0 : -128, qmax = u8 ? 255 : 127;
    const std::int32_t z = out.quant.zero0();
    const double s = out.quant.scale0();
    auto at = [&](double real) { return static_cast<std::int32_t>(quant::round_even(real / s + z)); };
    switch (act) {
        case activation_function::RELU: return {std::max(qmin, z), qmax};
        case activation_function::RELU6: return {std::max(qmin, z), std::clamp(at(6.0), qmin, qmax)};
        case activation_function::RELU_N1_TO_1: return {std::clamp(at(-1.0), qmin, qmax), std::clamp(at(1.0), qmin, qmax)};
        default: return {qmin, qmax};
    }
}

/// Weights as the FIA multiplies them: int8 [K][C/g][kh][kw] with the weight zero point removed.
/// When some w - z_w of an output channel falls outside int8 (uint8 weights with z_w far from 128),
/// that channel is requantized to int8 with scale S_w / f (requantize_channel) and its bias
/// rescaled to the new scale: exact when every w - z_w fits (the usual z_w = 128 of uint8 models),
/// otherwise a weight rounding error of at most one new step per weight. (An exact scheme would
/// need two accumulators per output, e.g. (w - 128)·x plus (128 - z_w)·Σx, which depends on the
/// input: one FIA channel with int8 weights cannot hold it.)
struct fia_weights {
    std::vector<std::int8_t> w;
    std::vector<double> scale;     // per output channel
    std::vector<std::int64_t> bias;  // per output channel, in units of S_in * scale (no z_in term yet)
    std::int32_t requantized_channels = 0;
};

/// Maps one channel's weights d (some outside int8) to int8 codes q ≈ d·f in place and returns f.
/// f is the largest factor that fits the asymmetric range [-128, 127] (the larger side decides);
/// each code is rounded to nearest, then the codes whose rounding was closest to a tie are moved
/// the other way until Σ(q − d·f) is within ±0.5, so a common offset of the inputs (their mean
/// away from the zero point) adds almost no error.
inline double requantize_channel(std::vector<std::int32_t>& d) {
    std::int32_t hi = 0, lo = 0;
    for (auto v : d) {
        hi = std::max(hi, v);
        lo = std::min(lo, v);
    }
    double f = 1.0;
    if (hi > 127) f = std::min(f, 127.0 / hi);
    if (lo < -128) f = std::min(f, 128.0 / -lo);
    std::vector<double> err(d.size());
    double total = 0;
    for (std::size_t i = 0; i < d.size(); ++i) {
        const double t = d[i] * f;
        const double q = std::clamp(quant::round_away(t), -128.0, 127.0);
        err[i] = q - t;
        total += err[i];
        d[i] = static_cast<std::int32_t>(q);
    }
    // Largest-remainder correction: each step moves one code by one toward its other neighbour.
    std::vector<std::size_t> order(d.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        return total > 0 ? err[a] > err[b] : err[a] < err[b];
    });
    for (std::size_t j = 0; j < order.size() && std::abs(total) > 0.5; ++j) {
        const std::size_t i = order[j];
        const std::int32_t step = total > 0 ? -1 : 1;
        if ((step < 0 && (err[i] <= 0 || d[i] == -128)) || (step > 0 && (err[i] >= 0 || d[i] == 127))) break;
        d[i] += step;
        err[i] += step;
        total += step;
    }
    return f;
}

inline fia_weights prepare_weights(const graph& g, const compiler::op& o, const conv_geometry& c) {
    const auto& wt = g.t(o.inputs[1]);
    const std::size_t taps = static_cast<std::size_t>(c.kh) * c.kw;
    const std::size_t cg = c.depthwise ? 1 : static_cast<std::size_t>(c.C);
    const std::size_t per_k = cg * taps;
    const bool u8 = wt.type == tensor_type::UINT8;
    const bool dw_op = o.code == B::DEPTHWISE_CONV_2D;
    const auto& raw = *wt.data;
    auto code = [&](std::size_t i) -> std::int32_t {
        const auto b = static_cast<std::uint8_t>(raw.at(i));
        return u8 ? static_cast<std::int32_t>(b) : static_cast<std::int32_t>(static_cast<std::int8_t>(b));
    };
    std::vector<std::int64_t> bias(static_cast<std::size_t>(c.K), 0);
    if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
        const auto b = g.t(o.inputs[2]).values<std::int32_t>();
        for (std::size_t k = 0; k < bias.size(); ++k) bias[k] = b.at(k);
    }
    fia_weights r;
    r.w.resize(static_cast<std::size_t>(c.K) * per_k);
    r.scale.resize(static_cast<std::size_t>(c.K));
    r.bias = bias;
    if (!u8 && !dw_op && !c.depthwise && raw.size() >= r.w.size() &&
        std::all_of(wt.quant.zero_point.begin(), wt.quant.zero_point.end(), [](std::int64_t z) { return z == 0; })) {
        // int8 filters with zero point 0 (the usual case) fit as they are: only the transpose
        // [K][kh][kw][C] -> [K][C][kh][kw], read in file order.
        for (std::int32_t k = 0; k < c.K; ++k) {
            const auto ku = static_cast<std::size_t>(k);
            r.scale[ku] = wt.quant.scale[wt.quant.scale.size() == 1 ? 0 : ku];
            std::int8_t* dst = r.w.data() + ku * per_k;
            const std::byte* src = raw.data() + ku * per_k;
            for (std::size_t t = 0; t < taps; ++t)
                for (std::size_t cc = 0; cc < cg; ++cc) dst[cc * taps + t] = static_cast<std::int8_t>(src[t * cg + cc]);
        }
        return r;
    }
    std::vector<std::int32_t> d(per_k);
    for (std::int32_t k = 0; k < c.K; ++k) {
        const auto ku = static_cast<std::size_t>(k);
        const std::size_t qi = wt.quant.scale.size() == 1 ? 0 : ku;
        const std::int32_t zw = wt.quant.zero_point.empty()
                                    ? 0
                                    : static_cast<std::int32_t>(wt.quant.zero_point[wt.quant.zero_point.size() == 1 ? 0 : qi]);
        for (std::size_t cc = 0; cc < cg; ++cc)
            for (std::int32_t y = 0; y < c.kh; ++y)
                for (std::int32_t x = 0; x < c.kw; ++x) {
                    // TFLite filters: conv [K][kh][kw][C]; depthwise [1][kh][kw][K] (K = C, or the
                    // multiplier over one input channel, which runs as an ordinary conv: cc = 0).
                    const std::size_t src = dw_op ? (static_cast<std::size_t>(y) * c.kw + x) * static_cast<std::size_t>(c.K) + ku
                                                  : ((ku * c.kh + y) * c.kw + x) * c.C + cc;
                    const auto v = code(src) - zw;
                    d[(cc * c.kh + y) * c.kw + x] = v;
                }
        double s = wt.quant.scale[qi];
        // -128 fits int8: only values outside [-128, 127] force the requantization.
        if (std::any_of(d.begin(), d.end(), [](std::int32_t v) { return v < -128 || v > 127; })) {
            // No single FIA accumulator can hold these products exactly: requantize (see fia_weights).
            const double f = requantize_channel(d);
            r.bias[ku] = static_cast<std::int64_t>(quant::round_away(static_cast<double>(bias[ku]) * f));
            s = s / f;
            ++r.requantized_channels;
        }
        r.scale[ku] = s;
        for (std::size_t i = 0; i < per_k; ++i) r.w[ku * per_k + i] = static_cast<std::int8_t>(d[i]);
    }
    return r;
}

struct weight_gain_t {
    std::int32_t factor = 1;
    quant::fia_params params;  // the record for the scaled channel when factor > 1
};

/// The FIA multiplies int8 weights, so a channel whose weights use at most half of that range can
/// carry an integer factor m exactly: weights and bias times m, effective scale s/m. Where s/m
/// falls under a finer output shift the 16-bit multiplier gains up to 8 bits (per-tensor weight
/// scales leave most channels this headroom). Picks the m whose multiplier has the smallest
/// relative error; 1 unless a factor is strictly better. `bias` already holds -z_in·Σw and must
/// fit int32 after scaling.
inline weight_gain_t weight_gain(std::span<const std::int8_t> w, std::int64_t bias, double s, std::int32_t z_out,
                                 quant::activation_range bounds) {
    std::int32_t hi = 0, lo = 0;
    for (auto v : w) {
        hi = std::max<std::int32_t>(hi, v);
        lo = std::min<std::int32_t>(lo, v);
    }
    weight_gain_t best;
    if ((hi == 0 && lo == 0) || !(s > 0)) return best;
    auto rel_error = [](const quant::fia_params& p, double scale) {
        const double exact = std::ldexp(scale, quant::fia_output_shifts[static_cast<std::size_t>(p.shift_index)]);
        return std::abs(p.multiplier - exact) / exact;
    };
    double best_error = rel_error(quant::fia_quantize(s, bias, z_out, bounds.min, bounds.max), s);
    for (std::int32_t m = 2; m * hi <= 127 && m * lo >= -128; ++m) {
        const std::int64_t b = bias * m;
        if (b < std::numeric_limits<std::int32_t>::min() || b > std::numeric_limits<std::int32_t>::max()) break;
        quant::fia_params p;
        try {
            p = quant::fia_quantize(s / m, b, z_out, bounds.min, bounds.max);
        } catch (const vnnx::error&) {
            break;  // the constant no longer fits 48 bits: larger factors will not either
        }
        if (const double e = rel_error(p, s / m); e < best_error) {
            best_error = e;
            best.factor = m;
            best.params = p;
        }
    }
    return best;
}

inline std::int32_t clamp32(std::int64_t v) {
    return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, std::numeric_limits<std::int32_t>::min(),
                                                              std::numeric_limits<std::int32_t>::max()));
}

template <class T>
std::int64_t append_vector(compiler::data_section& d, const std::vector<T>& v) {
    return d.append(std::span<const T>(v));
}

inline void lower_conv(lowering& ctx, const compiler::op& o) {
    const graph& g = ctx.g;
    if (auto why = check_conv(g, o); !why.empty()) ctx.reject(o, why);
    const auto c = geometry_of_conv(g, o);
    if (c.depthwise && c.sw != 1)
        ctx.reject(o, "a depthwise convolution with stride_w > 1 must be rewritten first (STRIDED_DEPTHWISE pass)");
    if (o.options.pad != compiler::padding::VALID)
        ctx.reject(o, "SAME padding must be made explicit first (EXPLICIT_PAD pass)");
    const auto& in_t = g.t(o.inputs[0]);
    // With a folded LUT (§7.1.6) the requantization targets the conv's own output, kept in nlf_source.
    const compiler::tensor& own_out = o.nlf_source ? *o.nlf_source : g.t(o.outputs[0]);
    const std::int32_t z_in = in_t.quant.zero0(), z_out = own_out.quant.zero0();
    const auto bounds = conv_bounds(o.options.fused, own_out);

    auto& node = ctx.node;
    auto& r = node.rec;
    r.input_strides = {c.sh, c.sw};
    r.input_offset = z_in;
    r.output_offset = z_out;
    r.output_data_type = calc_type_of(own_out.type);
    r.activation_min = bounds.min;
    r.activation_max = bounds.max;
    r.input_multiplier = format::absent_offset;
    r.input_shift = format::absent_offset;
    node.tensors.push_back(ctx.desc(o.inputs[0]));
    node.tensors.push_back(ctx.desc(o.outputs[0]));
    r.num_inputs = 1;
    r.num_outputs = 1;

    // Weights, bias (with -z_in * sum(w)) and the FIA records (§7.1.2, §8.2).
    auto fw = prepare_weights(g, o, c);
    const std::size_t per_k = fw.w.size() / static_cast<std::size_t>(c.K);
    std::vector<std::int32_t> om(static_cast<std::size_t>(c.K)), sidx(om.size()), bias(om.size());
    std::vector<std::uint64_t> records(om.size());
    for (std::size_t k = 0; k < om.size(); ++k) {
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < per_k; ++i) sum += fw.w[k * per_k + i];
        bias[k] = clamp32(fw.bias[k] - static_cast<std::int64_t>(z_in) * sum);
        double s = static_cast<double>(in_t.quant.scale0()) * fw.scale[k] / static_cast<double>(own_out.quant.scale0());
        auto p = quant::fia_quantize(s, bias[k], z_out, bounds.min, bounds.max);
        const auto gain = weight_gain(std::span<const std::int8_t>(fw.w.data() + k * per_k, per_k),
                                      fw.bias[k] - static_cast<std::int64_t>(z_in) * sum, s, z_out, bounds);
        if (gain.factor > 1) {
            for (std::size_t i = 0; i < per_k; ++i)
                fw.w[k * per_k + i] = static_cast<std::int8_t>(fw.w[k * per_k + i] * gain.factor);
            bias[k] = static_cast<std::int32_t>((fw.bias[k] - static_cast<std::int64_t>(z_in) * sum) * gain.factor);
            s /= gain.factor;
            p = gain.params;
        }
        om[k] = p.multiplier;
        sidx[k] = p.shift_index;
        records[k] = quant::fia_record(p);
    }

    const std::int32_t P = ctx.preset.parallel_output_maps;
    auto& data = ctx.data();
    r.output_multiplier = format::obj_off_t{static_cast<std::uint64_t>(append_vector(data, om))};
    r.output_shift = format::obj_off_t{static_cast<std::uint64_t>(append_vector(data, sidx))};
    const auto bias_at = append_vector(data, bias);
    data.align(static_cast<std::size_t>(P));

    std::vector<std::uint8_t> packed;
    std::int32_t kh_eff = c.kh, dh_eff = c.dh;
    if (c.depthwise) {
        // Height dilation is materialised as zero rows (§7.1.1); the tiler used the same kh'.
        const auto dil = compiler::dilate_depthwise_height(fw.w, c.C, c.kh, c.kw, c.dh);
        if (dil.kh != c.kh) dh_eff = 1;
        kh_eff = dil.kh;
        packed = compiler::pack_depthwise_weights(dil.data, c.C, kh_eff, c.kw, P, ctx.imaps, ctx.maps);
    } else {
        packed = compiler::pack_conv_weights(fw.w, c.K, c.C, c.kh, c.kw, P, ctx.maps);
    }
    const auto filter_at = append_vector(data, packed);
    data.align(8);
    const auto records_at = append_vector(data, records);
    format::obj_off_t nlf = format::absent_offset;
    if (!o.nlf_table.empty()) {
        std::vector<std::int8_t> table(256);
        for (std::size_t i = 0; i < 256; ++i) table[i] = static_cast<std::int8_t>(o.nlf_table.at(i));
        nlf = format::obj_off_t{static_cast<std::uint64_t>(append_vector(data, table))};
    }

    format::node_options::Conv2DOptions u{};
    u.kernels = c.depthwise ? c.C : c.K;
    u.stride_width = c.sw;
    u.stride_height = c.sh;
    u.dilation_width_factor = c.dw;
    u.dilation_height_factor = dh_eff;
    u.padding_width = 0;
    u.padding_height = 0;
    u.filter_shape_dims = c.depthwise ? decltype(u.filter_shape_dims){1, c.C, kh_eff, c.kw}
                                      : decltype(u.filter_shape_dims){c.K, c.C, c.kh, c.kw};
    u.group = c.depthwise ? c.C : 1;
    u.imaps = ctx.imaps;
    u.conv_rows = 0;
    u.use_vector = 1;
    u.use_fia = 1;
    u.use_db = 1;
    u.use_depthwise = c.depthwise ? 1 : 0;
    u.use_strided = (c.sw != 1 && !c.depthwise) ? 1 : 0;
    u.fit_weights = 0;
    u.split_weight_shaper_buffers = 0;
    u.direct_dma = 0;
    u.mxp_double_buffer = 1;
    u.first_fia = 0;  // set_fia_flags()
    u.last_fia = 0;
    u.fia_collision = 1;
    u.repeat = -1;
    u.in_used = u.w_used = u.qt_used = u.out_used = u.sp_used = -1;
    u.fia_preloaded = 0;  // set_fia_preload()
    u.next_fia_node_id = -1;
    u.preload_next_fia = 0;
    u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(filter_at)};
    u.bias_data = format::obj_off_t{static_cast<std::uint64_t>(bias_at)};
    u.quantization_records = format::obj_off_t{static_cast<std::uint64_t>(records_at)};
    u.nlf_data = nlf;
    u.tile_count = 0;  // finish_conv_node()
    node.set(u);

    node.macs = static_cast<std::int64_t>(c.N) * c.K * c.OH * c.OW * (c.depthwise ? 1 : c.C) * c.kh * c.kw;
    node.weight_bytes = static_cast<std::int64_t>(packed.size() + records.size() * 8 + bias.size() * 4);
}

}  // namespace conv_detail

template <>
struct op<builtin_operator::CONV_2D> {
    static constexpr builtin_operator code = builtin_operator::CONV_2D;
    static constexpr std::string_view summary = "convolution on the FIA (any kernel, stride, dilation; int8/uint8)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = conv_detail::conv_activations{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONV_2D);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "Conv2DOptions";
    static constexpr rank_range ranks{4, 4};
    static constexpr auto paddings = any_padding{};
    static constexpr std::string_view notes =
        "uint8 outputs clamp to 0..255 and RELU_N1_TO_1 is applied (the SDK keeps -128..127 and drops it)";
    static std::string check(const graph& g, const compiler::op& o) { return conv_detail::check_conv(g, o); }
    static void lower_node(lowering& c, const compiler::op& o) { conv_detail::lower_conv(c, o); }
};

template <>
struct op<builtin_operator::DEPTHWISE_CONV_2D> {
    static constexpr builtin_operator code = builtin_operator::DEPTHWISE_CONV_2D;
    static constexpr std::string_view summary = "depthwise convolution on the FIA (depth multiplier 1)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = conv_detail::conv_activations{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONV_2D);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "Conv2DOptions";
    static constexpr rank_range ranks{4, 4};
    static constexpr auto paddings = any_padding{};
    static constexpr std::string_view notes =
        "uint8 outputs clamp to 0..255 and RELU_N1_TO_1 is applied (the SDK keeps -128..127 and drops it)";
    static std::string check(const graph& g, const compiler::op& o) { return conv_detail::check_conv(g, o); }
    static void lower_node(lowering& c, const compiler::op& o) { conv_detail::lower_conv(c, o); }
};

template <>
struct op<builtin_operator::FULLY_CONNECTED> {
    static constexpr builtin_operator code = builtin_operator::FULLY_CONNECTED;
    static constexpr std::string_view summary = "fully connected, run as a 1x1 CONV_2D between two RESHAPEs";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = conv_detail::conv_activations{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONV_2D);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "Conv2DOptions";
    static constexpr std::string_view axes = "contracts the last axis; every leading axis is a row";
    static constexpr std::string_view notes =
        "inputs with several rows (token-wise layers) and FCs without bias compile (the SDK fails on both)";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.inputs[1] < 0 || o.outputs.size() != 1)
            return "needs an input, weights and one output";
        const auto& w = g.t(o.inputs[1]);
        if (!w.is_constant()) return "input 1 (weights) must be a constant";
        if (w.rank() != 2) return "weights must have rank 2";
        if (!conv_detail::is_8bit(w.type)) return "weight type " + std::string(tflite::type_name(w.type)) + " is not INT8 or UINT8";
        if (!conv_detail::is_8bit(g.t(o.outputs[0]).type)) return "output must be INT8 or UINT8";
        if (g.t(o.outputs[0]).element_count() % std::max(1, w.shape[0]) != 0) return "output size is not a multiple of the output depth";
        if (o.inputs.size() > 2 && o.inputs[2] >= 0) {
            const auto& b = g.t(o.inputs[2]);
            if (!b.is_constant() || b.type != tensor_type::INT32) return "input 2 (bias) must be an INT32 constant";
        }
        return {};
    }
    static void lower_node(lowering& c, const compiler::op& o) {
        c.reject(o, "must be rewritten to a 1x1 CONV_2D before lowering (FC_CONV_2D pass)");
    }
};

/// A name for the FIA grid tensor: "<name>.<n>", n the first number no tensor uses yet.
inline std::string fresh_tensor_name(const graph& g, const compiler::program& prog, const node_build& nd,
                                     const std::string& base) {
    auto used = [&](const std::string& n) {
        for (const auto& t : g.tensors)
            if (t.name == n) return true;
        auto in_node = [&](const node_build& x) {
            for (const auto& t : x.tensors)
                if (t.name == n) return true;
            for (const auto& l : x.layers)
                for (const auto& t : l.tensors)
                    if (t.name == n) return true;
            return false;
        };
        if (in_node(nd)) return true;
        for (const auto& x : prog.nodes)
            if (in_node(x)) return true;
        return false;
    };
    for (int i = 1;; ++i)
        if (auto n = base + "." + std::to_string(i); !used(n)) return n;
}

/// After tiling a CONV_2D node: tile_count, and the OUTPUT_SHAPER layer (§7.1.7) in front of the
/// other layers when the FIA's grid differs from the true output.
inline void finish_conv_node(const graph& g, const compiler::program& prog, node_build& nd,
                             const compiler::tiling_result& t) {
    if (nd.rec.type != static_cast<std::int32_t>(builtin_operator::CONV_2D)) return;
    auto u = nd.get<format::node_options::Conv2DOptions>();
    u.tile_count = static_cast<std::uint32_t>(t.tile_count);
    nd.set(u);
    if (nd.tensors.size() < 2) return;
    // channels/m/n are the conv input's (§5.2), whatever a later layer of the node wrote there
    // (an ELTWISE layer widens an IDENTITY node's geometry over both of its inputs).
    const auto& in_shape = nd.tensors[0].shape;
    const auto dim = [&](std::size_t d) { return d <= in_shape.size() ? in_shape[in_shape.size() - d] : 1; };
    nd.rec.channels = dim(3);
    nd.rec.m = dim(2);
    nd.rec.n = dim(1);
    if (!t.shaper) return;
    const auto& s = *t.shaper;
    auto& out = nd.tensors[1];
    if (out.shape.size() != 4) return;
    // The first tile may need no shaper while the whole tensor does (a one-row tile of a stride-2
    // conv): then the grid of the whole tensor still differs and the shaper is added all the same.
    const bool grid_differs = out.shape[2] != s.full_shaper_height || out.shape[3] != s.full_shaper_width;
    if (!s.needed && !grid_differs) return;
    const compiler::tensor_desc original = out;
    out.name = fresh_tensor_name(g, prog, nd, original.name);
    out.shape = {original.shape[0], original.shape[1], static_cast<std::int32_t>(s.full_shaper_height),
                 static_cast<std::int32_t>(s.full_shaper_width)};

    compiler::layer_build l;
    l.rec = compiler::default_layer();
    l.rec.type = static_cast<std::int32_t>(format::vnnx_operator::OUTPUT_SHAPER);
    l.rec.input_data_type = out.type;
    l.rec.output_data_type = original.type;
    l.rec.input_offset = original.zero;
    l.rec.output_offset = original.zero;
    l.rec.activation_min = -128;
    l.rec.activation_max = 127;
    l.rec.num_inputs = 1;
    l.rec.num_outputs = 1;
    l.rec.num_tensors = 2;
    l.tensors = {out, original};
    format::layer_options::ShaperOptions so{};
    auto i32 = [](long long v) { return static_cast<std::int32_t>(v); };
    so.height = i32(s.first.height);
    so.width = i32(s.first.width);
    so.shaper_height = i32(s.first.shaper_height);
    so.shaper_width = i32(s.first.shaper_width);
    so.height_final = i32(s.final.height);
    so.width_final = i32(s.final.width);
    so.shaper_height_final = i32(s.final.shaper_height);
    so.shaper_width_final = i32(s.final.shaper_width);
    so.stride_height = s.stride_height;
    so.use_strided = s.use_strided ? 1 : 0;
    l.set(so);
    nd.layers.insert(nd.layers.begin(), std::move(l));
}

/// After all nodes (§7.1.1): first_fia on the first FIA node, last_fia on the last one.
inline void set_fia_flags(compiler::program& prog) {
    std::vector<std::size_t> fia;
    for (std::size_t k = 0; k < prog.nodes.size(); ++k)
        if (prog.nodes[k].rec.type == static_cast<std::int32_t>(builtin_operator::CONV_2D)) fia.push_back(k);
    for (std::size_t i = 0; i < fia.size(); ++i) {
        auto& nd = prog.nodes[fia[i]];
        auto u = nd.get<format::node_options::Conv2DOptions>();
        u.first_fia = i == 0 ? 1 : 0;
        u.last_fia = i + 1 == fia.size() ? 1 : 0;
        nd.set(u);
    }
}

/// FIA preload flags (lowering.md §7.1.8, the SDK's set_fia_preload): every conv node points at
/// the next conv node; the next one's input may be loaded while this one runs when the last
/// producer of that input ran before this node, or, when this node is that producer, when its
/// last map tile or its last rows come after what the next node's first input tile needs.
inline void set_fia_preload(compiler::program& prog) {
    using format::node_options::Conv2DOptions;
    std::vector<std::size_t> fia;
    for (std::size_t k = 0; k < prog.nodes.size(); ++k)
        if (prog.nodes[k].rec.type == static_cast<std::int32_t>(builtin_operator::CONV_2D)) fia.push_back(k);
    for (std::size_t i = 0; i < fia.size(); ++i) {
        auto& nd = prog.nodes[fia[i]];
        auto u = nd.get<Conv2DOptions>();
        u.fia_preloaded = 0;
        u.preload_next_fia = 0;
        u.next_fia_node_id = i + 1 < fia.size() ? static_cast<std::int32_t>(fia[i + 1]) : -1;
        nd.set(u);
    }
    // The highest index of a node writing one of node k's inputs (node outputs, as the SDK
    // compares them), or -1.
    auto last_producer = [&](std::size_t k) {
        const auto& nd = prog.nodes[k];
        const auto n_in = static_cast<std::size_t>(std::max(0, nd.rec.num_inputs));
        std::int64_t last = -1;
        for (std::size_t j = 0; j < prog.nodes.size(); ++j) {
            const auto& pj = prog.nodes[j];
            const auto pj_in = static_cast<std::size_t>(std::max(0, pj.rec.num_inputs));
            bool feeds = false;
            for (std::size_t o = pj_in; o < pj.tensors.size() && !feeds; ++o)
                for (std::size_t i = 0; i < n_in && i < nd.tensors.size(); ++i)
                    if (pj.tensors[o].name == nd.tensors[i].name) feeds = true;
            if (feeds) last = static_cast<std::int64_t>(j);
        }
        return last;
    };
    for (std::size_t i = 0; i + 1 < fia.size(); ++i) {
        const std::size_t n = fia[i], nn = fia[i + 1];
        auto& a = prog.nodes[n];
        auto& b = prog.nodes[nn];
        auto ua = a.get<Conv2DOptions>();
        auto ub = b.get<Conv2DOptions>();
        bool preload = false;
        const std::int64_t p = last_producer(nn);
        if (p >= 0 && p < static_cast<std::int64_t>(n)) {
            preload = true;
        } else if (p == static_cast<std::int64_t>(n)) {
            const std::int64_t K = ua.kernels, maps = a.rec.maps;
            const std::int64_t last = maps > 0 ? K - maps * ((K - 1) / maps) : K;  // maps of the final map tile
            if (K - (last + maps) > ub.imaps && K - last > std::min<std::int64_t>(2 * std::int64_t{ub.imaps}, b.rec.channels))
                preload = true;
            const std::int64_t first_rows = std::int64_t{b.rec.row_start} + b.rec.rows_0;
            if (std::int64_t{a.rec.orow_last} - a.rec.row_inc > first_rows &&
                a.rec.orow_last > std::min<std::int64_t>(first_rows + b.rec.rows, b.rec.m))
                preload = true;
        }
        if (!preload) continue;
        ua.preload_next_fia = 1;
        ub.fia_preloaded = 1;
        a.set(ua);
        b.set(ub);
    }
}

/// After all nodes (§7.1.5): a strided conv (use_strided) reads its input in the FIA's strided
/// layout, which its producer node writes when told by output_strides. Done when the input is a
/// node output read by this conv only; otherwise the SDK injects an IDENTITY copy node, which is
/// not done here (the firmware would then read a dense input; the simulator is unaffected).
inline void set_strided_producers(const graph& g, compiler::program& prog) {
    auto final_output = [](const node_build& nd) -> const std::string* {
        if (!nd.layers.empty() && !nd.layers.back().tensors.empty()) return &nd.layers.back().tensors.back().name;
        const auto own = static_cast<std::size_t>(std::max(0, nd.rec.num_inputs));
        return own < nd.tensors.size() ? &nd.tensors[own].name : nullptr;
    };
    auto is_io = [&](const std::string& n) {
        for (auto t : g.inputs)
            if (g.t(t).name == n) return true;
        for (auto t : g.outputs)
            if (g.t(t).name == n) return true;
        return false;
    };
    for (std::size_t k = 0; k < prog.nodes.size(); ++k) {
        auto& nd = prog.nodes[k];
        if (nd.rec.type != static_cast<std::int32_t>(builtin_operator::CONV_2D) || nd.tensors.empty()) continue;
        if (nd.get<format::node_options::Conv2DOptions>().use_strided != 1) continue;
        const std::string& in = nd.tensors[0].name;
        if (is_io(in)) continue;
        std::size_t readers = 0;
        for (const auto& other : prog.nodes)
            for (std::int32_t i = 0; i < other.rec.num_inputs && static_cast<std::size_t>(i) < other.tensors.size(); ++i)
                if (other.tensors[static_cast<std::size_t>(i)].name == in) ++readers;
        if (readers != 1) continue;
        for (std::size_t j = 0; j < k; ++j)
            if (const auto* out = final_output(prog.nodes[j]); out != nullptr && *out == in)
                prog.nodes[j].rec.output_strides = nd.rec.input_strides;
    }
}

/// Everything decided after all nodes exist: FIA flags and strided producers.
inline void finish_conv_graph(const graph& g, compiler::program& prog) {
    set_fia_flags(prog);
    set_fia_preload(prog);
    set_strided_producers(g, prog);
}

}  // namespace vnnx::ops
// ---- end vnnx/ops/conv.hpp
// ---- begin vnnx/sim/layers/output_shaper.hpp
// OUTPUT_SHAPER (305): crops the FIA's output grid to the true convolution output
// (lowering.md §7.1.7, §10.4.1). With use_strided the grid is already strided and the output is
// its top-left corner; otherwise output row y is grid row y*stride_height (the FIA computes every
// row offset) and the columns are the first ones of each grid row. Whole tensors are cropped at
// once; the per-tile sizes of ShaperOptions describe the firmware's tile walk and are only checked.

// ---- begin vnnx/sim/executors.hpp
// Executors by VNNX type code. `node_exec<T>` runs a node of type T on its own tensors,
// `layer_exec<T>` a layer of type T; each is specialised in the header of its family
// (sim/nodes/*.hpp, sim/layers/*.hpp) and sim/registry.hpp folds them into dispatch tables.

// ---- begin vnnx/sim/context.hpp
// What a node or layer executor sees while the simulator runs a VNNX file: the checked view of
// the file, the model's memory image (allocate_bytes, the file at its start), the records of
// its tensors resolved to memory, and the chosen ISA and threads. Executors read parameters
// only from the file (multipliers, shifts, tables, weights) and activations only from the
// memory image at the tensors' offsets, so every run also checks the file's memory plan.

// ---- begin vnnx/sim/isa.hpp
// Instruction-set tags for the simulator's kernels and their run-time choice.
// Kernels are templates over a tag; SIMD bodies carry function-level target attributes so the
// build needs no -m flags and the binary still runs (scalar) on CPUs without AVX2/AVX-512.


#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VNNX_SIM_X86 1
#define VNNX_TARGET_AVX2 __attribute__((target("avx2,fma")))
#define VNNX_TARGET_AVX512 __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vl,avx512vnni")))
#else
#define VNNX_SIM_X86 0
#define VNNX_TARGET_AVX2
#define VNNX_TARGET_AVX512
#endif

namespace vnnx::sim {

enum class isa_kind { scalar, avx2, avx512_vnni };

namespace isa {
struct scalar {
    static constexpr isa_kind kind = isa_kind::scalar;
    static constexpr std::string_view name = "scalar";
};
struct avx2 {
    static constexpr isa_kind kind = isa_kind::avx2;
    static constexpr std::string_view name = "avx2";
};
struct avx512_vnni {
    static constexpr isa_kind kind = isa_kind::avx512_vnni;
    static constexpr std::string_view name = "avx512";
};
}  // namespace isa

[[nodiscard]] constexpr std::string_view isa_name(isa_kind k) noexcept {
    switch (k) {
        case isa_kind::avx2: return isa::avx2::name;
        case isa_kind::avx512_vnni: return isa::avx512_vnni::name;
        default: return isa::scalar::name;
    }
}

// True when this CPU (and this build) can run kernels of that ISA.
[[nodiscard]] inline bool isa_supported(isa_kind k) noexcept {
#if VNNX_SIM_X86
    switch (k) {
        case isa_kind::scalar: return true;
        case isa_kind::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        case isa_kind::avx512_vnni:
            // vpdpbusd on zmm needs F; byte/word ops need BW; the 256-bit forms need VL.
            return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avx512f") &&
                   __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl") &&
                   __builtin_cpu_supports("avx512vnni");
    }
    return false;
#else
    return k == isa_kind::scalar;
#endif
}

// The fastest ISA this CPU supports.
[[nodiscard]] inline isa_kind best_isa() noexcept {
    if (isa_supported(isa_kind::avx512_vnni)) return isa_kind::avx512_vnni;
    if (isa_supported(isa_kind::avx2)) return isa_kind::avx2;
    return isa_kind::scalar;
}

// Parses an `--isa` value. Unknown names are usage errors; known names this CPU cannot run
// are `unsupported` errors, so a forced ISA never crashes with an illegal instruction.
[[nodiscard]] inline isa_kind isa_from_name(std::string_view name) {
    isa_kind k{};
    if (name == "scalar") k = isa_kind::scalar;
    else if (name == "avx2") k = isa_kind::avx2;
    else if (name == "avx512" || name == "avx512_vnni") k = isa_kind::avx512_vnni;
    else
        fail(error_kind::usage, "--isa: unknown instruction set '" + std::string(name) +
                                    "' (expected scalar, avx2 or avx512)");
    if (!isa_supported(k))
        fail(error_kind::unsupported, "--isa: instruction set '" + std::string(name) +
                                          "' is not supported by this CPU (it has " +
                                          std::string(isa_name(best_isa())) + " at best)");
    return k;
}

// Calls f(tag) with the tag type of k; every branch is instantiated, so the SIMD simulator is a
// set of template instantiations chosen here.
template <class F>
decltype(auto) dispatch(isa_kind k, F&& f) {
    switch (k) {
        case isa_kind::avx2: return std::forward<F>(f)(isa::avx2{});
        case isa_kind::avx512_vnni: return std::forward<F>(f)(isa::avx512_vnni{});
        default: return std::forward<F>(f)(isa::scalar{});
    }
}

}  // namespace vnnx::sim
// ---- end vnnx/sim/isa.hpp
// ---- begin vnnx/sim/thread_pool.hpp
// A small fixed pool for the simulator's kernels. parallel_for hands out indices through one
// atomic counter; the caller works too. Idle workers spin for a few tens of microseconds (a
// model's layers follow one another faster than a sleeping thread wakes up), then sleep on a
// condition variable.
// Kernels write disjoint outputs per index, so results never depend on the thread count.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace vnnx::sim {

class thread_pool {
public:
    // `threads` counts the calling thread: 1 means no workers at all.
    explicit thread_pool(unsigned threads = 1) {
        const unsigned n = std::max(1u, threads);
        workers_.reserve(n - 1);
        for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this] { worker_loop(); });
    }
    thread_pool(const thread_pool&) = delete;
    thread_pool& operator=(const thread_pool&) = delete;
    ~thread_pool() {
        {
            std::lock_guard lock(mutex_);
            stop_ = true;
        }
        wake_.notify_all();
        for (auto& t : workers_) t.join();
    }

    [[nodiscard]] unsigned size() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }

    // Runs f(i) for i in [0, n); returns when all calls are done. The first exception thrown by
    // any call is rethrown here (remaining indices are skipped).
    template <class F>
    void parallel_for(std::size_t n, F&& f) {
        if (n == 0) return;
        if (workers_.empty() || n == 1) {
            for (std::size_t i = 0; i < n; ++i) f(i);
            return;
        }
        job j;
        j.n = n;
        j.ctx = &f;
        j.call = [](void* ctx, std::size_t i) { (*static_cast<std::remove_reference_t<F>*>(ctx))(i); };
        {
            std::lock_guard lock(mutex_);
            job_ = &j;
            active_.store(static_cast<unsigned>(workers_.size()), std::memory_order_relaxed);
            generation_.store(generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
        }
        wake_.notify_all();
        run_job(j);
        spin_until([&] { return active_.load(std::memory_order_acquire) == 0; });
        {
            std::unique_lock lock(mutex_);
            done_.wait(lock, [this] { return active_.load(std::memory_order_relaxed) == 0; });
            job_ = nullptr;
        }
        if (j.error) std::rethrow_exception(j.error);
    }

private:
    struct job {
        std::size_t n = 0;
        void* ctx = nullptr;
        void (*call)(void*, std::size_t) = nullptr;
        std::atomic<std::size_t> next{0};
        std::atomic<bool> failed{false};
        std::exception_ptr error;
        std::mutex error_mutex;
    };

    static void run_job(job& j) {
        for (;;) {
            if (j.failed.load(std::memory_order_relaxed)) return;
            const std::size_t i = j.next.fetch_add(1, std::memory_order_relaxed);
            if (i >= j.n) return;
            try {
                j.call(j.ctx, i);
            } catch (...) {
                std::lock_guard lock(j.error_mutex);
                if (!j.error) j.error = std::current_exception();
                j.failed.store(true, std::memory_order_relaxed);
            }
        }
    }

    // Spins for up to about 50 microseconds or until ready() holds.
    template <class P>
    static void spin_until(P&& ready) {
        const auto start = std::chrono::steady_clock::now();
        for (unsigned i = 1; !ready(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
            if (i % 64 == 0 && std::chrono::steady_clock::now() - start > std::chrono::microseconds(50)) return;
        }
    }

    void worker_loop() {
        unsigned long long seen = 0;
        for (;;) {
            spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
            job* j = nullptr;
            {
                std::unique_lock lock(mutex_);
                wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
                if (stop_) return;
                seen = generation_.load(std::memory_order_relaxed);
                j = job_;
            }
            if (j) run_job(*j);
            {
                std::lock_guard lock(mutex_);
                if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
            }
        }
    }

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    std::condition_variable done_;
    job* job_ = nullptr;
    std::atomic<unsigned> active_{0};
    std::atomic<unsigned long long> generation_{0};
    bool stop_ = false;
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/thread_pool.hpp

namespace vnnx::sim {

/// A tensor record resolved to the memory image. Data is dense, channels-first.
struct tensor_ref {
    std::int32_t type = 1;  // calc_type
    std::vector<std::int32_t> shape;
    float scale = 0;
    std::int32_t zero = 0;
    std::byte* data = nullptr;
    std::uint64_t count = 0;  // elements
    std::uint32_t elem = 1;   // bytes per element

    [[nodiscard]] std::size_t rank() const noexcept { return shape.size(); }
    /// Dimension d counted from the end (1 = last); 1 when the rank is smaller.
    [[nodiscard]] std::int32_t dim_from_end(std::size_t d) const noexcept {
        return d <= shape.size() ? shape[shape.size() - d] : 1;
    }
    [[nodiscard]] std::int32_t channels() const noexcept { return dim_from_end(3); }
    [[nodiscard]] std::int32_t rows() const noexcept { return dim_from_end(2); }
    [[nodiscard]] std::int32_t cols() const noexcept { return dim_from_end(1); }
    /// Product of the dims before the last three.
    [[nodiscard]] std::int64_t outer() const noexcept {
        std::int64_t n = 1;
        for (std::size_t i = 0; i + 3 < shape.size(); ++i) n *= shape[i];
        return n;
    }
    [[nodiscard]] bool is_signed() const noexcept { return type == static_cast<std::int32_t>(format::calc_type::CALC_TYPE_INT8); }
    [[nodiscard]] std::uint8_t* u8() const noexcept { return reinterpret_cast<std::uint8_t*>(data); }
    [[nodiscard]] std::int8_t* i8() const noexcept { return reinterpret_cast<std::int8_t*>(data); }
    [[nodiscard]] std::int32_t* i32() const noexcept { return reinterpret_cast<std::int32_t*>(data); }
    /// Element i as an integer (8-bit types by their signedness, int16, int32).
    [[nodiscard]] std::int32_t get(std::uint64_t i) const noexcept {
        switch (type) {
            case 0: return u8()[i];
            case 1: return i8()[i];
            case 2: return load_le<std::int16_t>(data + 2 * i);
            default: return load_le<std::int32_t>(data + 4 * i);
        }
    }
    void set(std::uint64_t i, std::int32_t v) const noexcept {
        switch (type) {
            case 0: u8()[i] = static_cast<std::uint8_t>(v); break;
            case 1: i8()[i] = static_cast<std::int8_t>(v); break;
            case 2: store_le<std::int16_t>(data + 2 * i, static_cast<std::int16_t>(v)); break;
            default: store_le<std::int32_t>(data + 4 * i, v); break;
        }
    }
    /// The clamp range of the element type.
    [[nodiscard]] std::int32_t type_min() const noexcept {
        return type == 0 ? 0 : type == 1 ? -128 : type == 2 ? -32768 : INT32_MIN;
    }
    [[nodiscard]] std::int32_t type_max() const noexcept {
        return type == 0 ? 255 : type == 1 ? 127 : type == 2 ? 32767 : INT32_MAX;
    }
};

struct execution {
    isa_kind isa = isa_kind::scalar;
    thread_pool* pool = nullptr;  // null: one thread
};

/// One executor call: a node's own tensors or a layer's tensors (inputs, then the output).
template <class Record>
struct exec_context {
    const format::model_view& view;
    const Record& rec;
    std::span<tensor_ref> tensors;
    std::string where;  // "node 3 (CONV_2D)" / "node 3 layer 1 (LUT)"
    const execution& ex;
    std::size_t node_index = 0;
    std::shared_ptr<void>* cache = nullptr;  // per node/layer: data prepared once per model (packed weights)

    [[noreturn]] void reject(const std::string& what) const { fail_input(view.source() + ": " + where + ": " + what); }

    /// The int32 array at an offset field of the record.
    [[nodiscard]] std::vector<std::int32_t> int32s(format::obj_off_t at, std::uint64_t count, std::string_view what) const {
        if (at.absent()) reject(std::string(what) + " is absent");
        return view.int32s(at.value, count, where + ": " + std::string(what));
    }
    [[nodiscard]] std::span<const std::byte> bytes(format::obj_off_t at, std::uint64_t count, std::string_view what) const {
        if (at.absent()) reject(std::string(what) + " is absent");
        return view.range(at.value, count, where + ": " + std::string(what));
    }
    [[nodiscard]] tensor_ref& input(std::size_t i = 0) const {
        if (i >= tensors.size()) reject("missing input tensor " + std::to_string(i));
        return tensors[i];
    }
    [[nodiscard]] tensor_ref& output() const {
        if (tensors.empty()) reject("has no tensors");
        return tensors.back();
    }
    /// Requires every tensor to be one of the 8-bit types.
    void require_8bit() const {
        for (const auto& t : tensors)
            if (t.type != 0 && t.type != 1) reject("expects 8-bit tensors, found calc type " + std::to_string(t.type));
    }
    void require_same_count(const tensor_ref& a, const tensor_ref& b) const {
        if (a.count != b.count)
            reject("input has " + std::to_string(a.count) + " elements but the output has " + std::to_string(b.count));
    }
};

using node_context = exec_context<format::vnnx_subgraph_node_t>;
using layer_context = exec_context<format::vnnx_layer_t>;

using node_fn = void (*)(node_context&);
using layer_fn = void (*)(layer_context&);

}  // namespace vnnx::sim
// ---- end vnnx/sim/context.hpp

namespace vnnx::sim {

inline constexpr std::int32_t max_type_code = 306;

template <std::int32_t Type>
struct node_exec {
    static constexpr bool defined = false;
};

template <std::int32_t Type>
struct layer_exec {
    static constexpr bool defined = false;
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/executors.hpp

namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(format::vnnx_operator::OUTPUT_SHAPER)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem) c.reject("input and output element sizes differ");
        const auto o = c.rec.options.get<format::layer_options::ShaperOptions>();
        if (o.stride_height < 1) c.reject("stride_height " + std::to_string(o.stride_height) + " must be >= 1");
        if (o.height < 1 || o.width < 1 || o.shaper_height < 1 || o.shaper_width < 1 || o.height_final < 1 ||
            o.width_final < 1 || o.shaper_height_final < 1 || o.shaper_width_final < 1)
            c.reject("ShaperOptions sizes must be positive");
        if (in.outer() != out.outer() || in.channels() != out.channels())
            c.reject("input " + std::to_string(in.outer()) + "x" + std::to_string(in.channels()) + " and output " +
                     std::to_string(out.outer()) + "x" + std::to_string(out.channels()) +
                     " differ in batch or channels");
        const long long step = o.use_strided == 1 ? 1 : o.stride_height;
        const long long gh = in.rows(), gw = in.cols(), oh = out.rows(), ow = out.cols();
        if ((oh - 1) * step >= gh || ow > gw)
            c.reject("the " + std::to_string(oh) + "x" + std::to_string(ow) + " output does not fit the " +
                     std::to_string(gh) + "x" + std::to_string(gw) + " grid with row step " + std::to_string(step));
        const std::size_t e = in.elem;
        const auto planes = static_cast<std::size_t>(in.outer() * in.channels());
        for (std::size_t p = 0; p < planes; ++p)
            for (long long y = 0; y < oh; ++y)
                std::memmove(out.data + ((p * static_cast<std::size_t>(oh) + static_cast<std::size_t>(y)) * static_cast<std::size_t>(ow)) * e,
                             in.data + ((p * static_cast<std::size_t>(gh) + static_cast<std::size_t>(y * step)) * static_cast<std::size_t>(gw)) * e,
                             static_cast<std::size_t>(ow) * e);
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/output_shaper.hpp
// ---- begin vnnx/sim/nodes/conv.hpp
// CONV_2D (3) on the FIA, read from the record as a firmware would (lowering.md §7.1, §8.2):
// geometry from channels/m/n and Conv2DOptions, weights unpacked from filter_data with the node's
// maps/imaps and the header's preset, per-channel (om, shift, c) from quantization_records,
// bounds from activation_min/max, then nlf_data (a 256-byte table indexed by the raw output byte)
// when present. The output tensor is either the true output or the FIA's grid (§10.4.1) that an
// OUTPUT_SHAPER layer crops:
//   use_strided = 1: grid ceil(m/sh) x ceil(n/sw), output (y, x) at (y, x);
//   otherwise      : one grid row per input row offset and one column per input column, output
//                    (y, x) at (y*sh, x) (depthwise: grid width = true width).
// Grid positions the shaper discards (right-edge columns, rows between strides) hold the output
// zero point: the FIA writes values there that nothing reads.

// ---- begin vnnx/sim/kernels/conv.hpp
// The FIA convolution as the accelerator computes it, on channels-first data.
//
//   input  x[C][H][W]   raw int8 or uint8 codes (the input zero point is folded into c_k)
//   weight w[K][C/g][kh][kw] int8, g = 1 or depthwise g = C = K
//   output y[K][OH][OW] = requantize(sum x*w) (requant.hpp), no padding (the graph pads first)
//
// Layout choices of the SIMD paths (the scalar path reads the tensors as they are and defines
// the answer):
// - Vector lanes run over output pixels, so results are stored straight into channels-first rows.
// - The input is repacked once per call into "phase planes": plane (py,px) holds the pixels
//   (i*sh+py, j*sw+px) at i*Wp+j with Wp = ceil(W/sw). Every tap of every output pixel q =
//   oy*Wp+ox then reads plane(tap)[q + off(tap)]: stride and dilation become one constant offset
//   per tap and all loads are contiguous. Outputs with ox >= OW are computed and dropped.
// - groups = 1: planes interleave 4 input channels per pixel (one 32-bit word), the operand
//   layout of vpdpbusd (u8 x s8, 4 products per lane); weights are packed once per layer as
//   [k-block][c/4][tap][k in block][4]. int8 inputs are biased by +128 to make them unsigned
//   and corrected by -128*sum(w_k), exact because there is no padding. AVX2 widens to int16
//   and uses vpmaddwd (exact; vpmaddubsw would saturate).
// - depthwise: one plane set per channel. AVX-512 interleaves the bytes of four taps per pixel
//   in registers and uses vpdpbusd (int8 inputs biased by +128 as above); AVX2 forms the
//   products x*w in int16 (|x*w| <= 255*128 fits) and widens them to int32.
// - Exactness: every accumulator is a sum of at most 65536 products of magnitude <= 255*128,
//   so it fits in int32 (larger layers are rejected); partial sums may wrap, the result cannot.

// ---- begin vnnx/sim/kernels/requant.hpp
// The FIA requantization (lowering.md 8.2): per output channel k,
//   y = clamp((acc * om_k + c_k) >> o_k, act_min, act_max)
// with om_k a uint16, o_k in {8,16,24,32}, c_k a 48-bit signed constant, product and sum in
// int64 and >> an arithmetic (floor) shift. |acc| < 2^31 and om < 2^16 give |acc*om| < 2^47,
// plus |c| <= 2^47: the sum always fits in int64.


#if VNNX_SIM_X86
// GCC 12's AVX-512 headers self-initialise "undefined" vectors (__m512i __Y = __Y), which
// -Wuninitialized reports at -O2+ (GCC PR 105593); the warning is about the header, not us.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#endif

namespace vnnx::sim::kernels {

struct requant_params {
    std::vector<std::uint16_t> multiplier;  // om_k
    std::vector<std::uint8_t> shift;        // o_k: 8, 16, 24 or 32 (not the record's index)
    std::vector<std::int64_t> constant;     // c_k, within [-2^47, 2^47 - 1]
    int act_min = -128;                     // clamp bounds in the output's code domain
    int act_max = 127;
};

// The record stores the shift as an index 0..3 (lowering.md 8.2 step 4).
[[nodiscard]] constexpr int shift_from_index(int index) noexcept { return 8 * (index + 1); }

inline constexpr std::int64_t c_min = -(std::int64_t{1} << 47);
inline constexpr std::int64_t c_max = (std::int64_t{1} << 47) - 1;

// Checks rq against k output channels; `what` names the layer in messages.
inline void validate_requant(const requant_params& rq, std::size_t k, bool output_signed,
                             std::string_view what) {
    const std::string w(what);
    if (rq.multiplier.size() != k || rq.shift.size() != k || rq.constant.size() != k)
        fail_input(w + ": requantization needs one multiplier, shift and constant per output channel (" +
                   std::to_string(k) + "), got " + std::to_string(rq.multiplier.size()) + ", " +
                   std::to_string(rq.shift.size()) + ", " + std::to_string(rq.constant.size()));
    for (std::size_t i = 0; i < k; ++i) {
        const int o = rq.shift[i];
        if (o != 8 && o != 16 && o != 24 && o != 32)
            fail_input(w + ": output channel " + std::to_string(i) + ": shift " + std::to_string(o) +
                       " is not one of 8, 16, 24, 32");
        if (rq.constant[i] < c_min || rq.constant[i] > c_max)
            fail_input(w + ": output channel " + std::to_string(i) + ": constant " +
                       std::to_string(rq.constant[i]) + " is outside the 48-bit signed range");
    }
    const int lo = output_signed ? -128 : 0;
    const int hi = output_signed ? 127 : 255;
    if (rq.act_min > rq.act_max || rq.act_min < lo || rq.act_max > hi)
        fail_input(w + ": activation bounds [" + std::to_string(rq.act_min) + ", " +
                   std::to_string(rq.act_max) + "] must be ordered and within [" + std::to_string(lo) +
                   ", " + std::to_string(hi) + "] for a " + (output_signed ? "int8" : "uint8") +
                   " output");
}

// Adds in int32 with wrap-around: the SIMD paths accumulate modulo 2^32 and correct afterwards;
// the true sums fit in int32, so the wrapped result is exact.
[[nodiscard]] inline std::int32_t wrap_add(std::int32_t a, std::int32_t b) noexcept {
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(a) + static_cast<std::uint32_t>(b));
}

// The defining scalar arithmetic; the result is the output byte (int8 codes as two's complement).
[[nodiscard]] inline std::uint8_t requantize(std::int32_t acc, std::uint16_t om, std::int64_t c, int o,
                                             int act_min, int act_max) noexcept {
    std::int64_t v = (static_cast<std::int64_t>(acc) * om + c) >> o;  // C++20: arithmetic shift
    v = std::clamp<std::int64_t>(v, act_min, act_max);
    return static_cast<std::uint8_t>(static_cast<std::uint64_t>(v) & 0xFF);
}

namespace detail {

// One output channel's row of n accumulators (each corrected by `corr`) to bytes.
inline void requant_row(isa::scalar, const std::int32_t* acc, std::size_t n, std::int32_t corr,
                        std::uint16_t om, std::int64_t c, int o, int lo, int hi, std::uint8_t* out) {
    for (std::size_t i = 0; i < n; ++i) out[i] = requantize(wrap_add(acc[i], corr), om, c, o, lo, hi);
}

// AVX2 has no 64-bit arithmetic shift or min/max; requantization is a small share of the work.
inline void requant_row(isa::avx2, const std::int32_t* acc, std::size_t n, std::int32_t corr, std::uint16_t om,
                        std::int64_t c, int o, int lo, int hi, std::uint8_t* out) {
    requant_row(isa::scalar{}, acc, n, corr, om, c, o, lo, hi, out);
}

#if VNNX_SIM_X86
// n must be a multiple of 16.
VNNX_TARGET_AVX512 inline void requant_row_avx512(const std::int32_t* acc, std::size_t n, std::int32_t corr,
                                                  std::uint16_t om, std::int64_t c, int o, int lo, int hi,
                                                  std::uint8_t* out) {
    const __m512i vcorr = _mm512_set1_epi32(corr);
    const __m512i vom = _mm512_set1_epi64(om);
    const __m512i vc = _mm512_set1_epi64(c);
    const __m512i vlo = _mm512_set1_epi64(lo);
    const __m512i vhi = _mm512_set1_epi64(hi);
    const __m128i cnt = _mm_cvtsi32_si128(o);
    for (std::size_t i = 0; i < n; i += 16) {
        const __m512i a = _mm512_add_epi32(_mm512_loadu_si512(acc + i), vcorr);
        for (int h = 0; h < 2; ++h) {
            const __m256i half = h == 0 ? _mm512_castsi512_si256(a) : _mm512_extracti64x4_epi64(a, 1);
            // mul_epi32 multiplies the sign-extended low 32 bits of each 64-bit lane: exact.
            __m512i p = _mm512_add_epi64(_mm512_mul_epi32(_mm512_cvtepi32_epi64(half), vom), vc);
            p = _mm512_sra_epi64(p, cnt);
            p = _mm512_min_epi64(_mm512_max_epi64(p, vlo), vhi);
            _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i + 8 * h), _mm512_cvtepi64_epi8(p));
        }
    }
}
#endif

inline void requant_row(isa::avx512_vnni, const std::int32_t* acc, std::size_t n, std::int32_t corr,
                        std::uint16_t om, std::int64_t c, int o, int lo, int hi, std::uint8_t* out) {
#if VNNX_SIM_X86
    const std::size_t body = n / 16 * 16;
    requant_row_avx512(acc, body, corr, om, c, o, lo, hi, out);
    requant_row(isa::scalar{}, acc + body, n - body, corr, om, c, o, lo, hi, out + body);
#else
    requant_row(isa::scalar{}, acc, n, corr, om, c, o, lo, hi, out);
#endif
}

}  // namespace detail
}  // namespace vnnx::sim::kernels
// ---- end vnnx/sim/kernels/requant.hpp

namespace vnnx::sim::kernels {

struct conv_shape {
    int channels = 1, height = 1, width = 1;  // input C, H, W
    int kernels = 1;                          // K
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int dilation_h = 1, dilation_w = 1;
    int groups = 1;  // 1, or C (= K) for depthwise
    bool input_signed = true;
    bool output_signed = true;

    [[nodiscard]] bool depthwise() const noexcept { return groups != 1; }
    [[nodiscard]] int out_h() const noexcept { return (height - (kernel_h - 1) * dilation_h - 1) / stride_h + 1; }
    [[nodiscard]] int out_w() const noexcept { return (width - (kernel_w - 1) * dilation_w - 1) / stride_w + 1; }
    [[nodiscard]] std::size_t input_size() const noexcept {
        return static_cast<std::size_t>(channels) * height * width;
    }
    [[nodiscard]] std::size_t output_size() const noexcept {
        return static_cast<std::size_t>(kernels) * out_h() * out_w();
    }
    [[nodiscard]] std::size_t weight_size() const noexcept {
        return static_cast<std::size_t>(kernels) * (channels / groups) * kernel_h * kernel_w;
    }
    // Products summed per output.
    [[nodiscard]] std::int64_t reduction() const noexcept {
        return static_cast<std::int64_t>(channels / groups) * kernel_h * kernel_w;
    }
};

// The largest reduction whose int32 accumulator provably cannot overflow: 65536 * 255 * 128 < 2^31.
inline constexpr std::int64_t max_reduction = 65536;

inline void validate_conv_shape(const conv_shape& s, std::string_view what) {
    const std::string w(what);
    auto positive = [&](int v, const char* name, int limit) {
        if (v < 1 || v > limit)
            fail_input(w + ": " + name + " " + std::to_string(v) + " must be in [1, " + std::to_string(limit) + "]");
    };
    positive(s.channels, "channel count", 1 << 20);
    positive(s.height, "input height", 1 << 16);
    positive(s.width, "input width", 1 << 16);
    positive(s.kernels, "kernel count", 1 << 20);
    positive(s.kernel_h, "kernel height", 1 << 12);
    positive(s.kernel_w, "kernel width", 1 << 12);
    positive(s.stride_h, "stride height", 1 << 8);
    positive(s.stride_w, "stride width", 1 << 8);
    positive(s.dilation_h, "dilation height", 1 << 8);
    positive(s.dilation_w, "dilation width", 1 << 8);
    if (s.groups != 1 && !(s.groups == s.channels && s.kernels == s.channels))
        fail(error_kind::unsupported, w + ": groups " + std::to_string(s.groups) +
                                          " is unsupported (only 1, or depthwise with groups = channels = kernels = " +
                                          std::to_string(s.channels) + ")");
    if (static_cast<std::int64_t>(s.kernel_h - 1) * s.dilation_h + 1 > s.height ||
        static_cast<std::int64_t>(s.kernel_w - 1) * s.dilation_w + 1 > s.width)
        fail_input(w + ": the dilated " + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) +
                   " kernel does not fit the unpadded " + std::to_string(s.height) + "x" +
                   std::to_string(s.width) + " input");
    if (s.reduction() > max_reduction)
        fail(error_kind::limit, w + ": " + std::to_string(s.reduction()) +
                                    " products per output exceed the exact int32 accumulator limit of " +
                                    std::to_string(max_reduction));
    if (static_cast<double>(s.channels) * s.height * s.width > 1e9 ||
        static_cast<double>(s.kernels) * s.out_h() * s.out_w() > 1e9 ||
        static_cast<double>(s.weight_size()) > 1e9)
        fail(error_kind::limit, w + ": tensor sizes above 10^9 elements are not supported");
}

// Scratch memory reused across calls (and layers) so the kernels allocate nothing per call once
// the buffers have grown.
struct conv_workspace {
    std::vector<std::uint8_t> input;
    std::vector<std::uint8_t> extra;  // FC transposes
};

namespace detail {

// Register blocking per ISA: KB output channels x QT pixels per micro-tile.
template <class Isa> struct conv_tiling;
template <> struct conv_tiling<isa::scalar> { static constexpr int kb = 1, qt = 16, dw_qt = 16; };
template <> struct conv_tiling<isa::avx2> { static constexpr int kb = 4, qt = 8, dw_qt = 32; };
template <> struct conv_tiling<isa::avx512_vnni> { static constexpr int kb = 8, qt = 48, dw_qt = 64; };

inline std::int32_t load_i32(const void* p) noexcept {
    std::int32_t v;
    std::memcpy(&v, p, 4);
    return v;
}
inline std::int64_t load_i64(const void* p) noexcept {
    std::int64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

// d[4j + i] = s[i * plane + j * SW] ^ flip for the four channels i of a group.
template <int SW>
inline void interleave4(std::uint8_t* d, const std::uint8_t* s, std::size_t plane, int n, std::uint8_t flip) {
    const std::uint8_t* s0 = s;
    const std::uint8_t* s1 = s + plane;
    const std::uint8_t* s2 = s + 2 * plane;
    const std::uint8_t* s3 = s + 3 * plane;
    for (int j = 0; j < n; ++j) {
        d[4 * j] = s0[j * SW] ^ flip;
        d[4 * j + 1] = s1[j * SW] ^ flip;
        d[4 * j + 2] = s2[j * SW] ^ flip;
        d[4 * j + 3] = s3[j * SW] ^ flip;
    }
}

#if VNNX_SIM_X86
// groups = 1, AVX-512 VNNI: acc[KB][QT] for one k-block and QT = 48 pixels.
VNNX_TARGET_AVX512 inline void vnni_tile(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                         const std::int64_t* taps, int ntaps, const std::int8_t* w,
                                         std::int32_t* acc_out) {
    constexpr int KB = 8, NV = 3;
    __m512i acc[KB][NV];
#pragma GCC unroll 8
    for (int r = 0; r < KB; ++r)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_si512();
    for (int cq = 0; cq < cq_n; ++cq) {
        const std::uint8_t* xc = x + cq * cq_stride;
        for (int t = 0; t < ntaps; ++t) {
            const std::uint8_t* p = xc + taps[t] * 4;
            __m512i xv[NV];
#pragma GCC unroll 3
            for (int v = 0; v < NV; ++v) xv[v] = _mm512_loadu_si512(p + 64 * v);
#pragma GCC unroll 8
            for (int r = 0; r < KB; ++r) {
                const __m512i wv = _mm512_set1_epi32(load_i32(w + r * 4));
#pragma GCC unroll 3
                for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], xv[v], wv);
            }
            w += KB * 4;
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < KB; ++r)
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) _mm512_storeu_si512(acc_out + r * 48 + v * 16, acc[r][v]);
}

// groups = 1, AVX2: acc[KB][8]; weights are int16 quads, inputs widened to int16.
template <bool Signed>
VNNX_TARGET_AVX2 inline void avx2_tile(const std::uint8_t* x, std::size_t cq_stride, int cq_n,
                                       const std::int64_t* taps, int ntaps, const std::int16_t* w,
                                       std::int32_t* acc_out) {
    constexpr int KB = 4;
    __m256i acc[KB][2];
#pragma GCC unroll 4
    for (int r = 0; r < KB; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int cq = 0; cq < cq_n; ++cq) {
        const std::uint8_t* xc = x + cq * cq_stride;
        for (int t = 0; t < ntaps; ++t) {
            const std::uint8_t* p = xc + taps[t] * 4;
            const __m128i r0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
            const __m128i r1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16));
            const __m256i x0 = Signed ? _mm256_cvtepi8_epi16(r0) : _mm256_cvtepu8_epi16(r0);
            const __m256i x1 = Signed ? _mm256_cvtepi8_epi16(r1) : _mm256_cvtepu8_epi16(r1);
#pragma GCC unroll 4
            for (int r = 0; r < KB; ++r) {
                const __m256i wv = _mm256_set1_epi64x(load_i64(w + r * 4));
                acc[r][0] = _mm256_add_epi32(acc[r][0], _mm256_madd_epi16(x0, wv));
                acc[r][1] = _mm256_add_epi32(acc[r][1], _mm256_madd_epi16(x1, wv));
            }
            w += KB * 4;
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < KB; ++r) {
        // Each lane holds a pair sum (channels 0+1 or 2+3) of one pixel; hadd joins the pairs,
        // the permute restores pixel order 0..7.
        const __m256i s = _mm256_permute4x64_epi64(_mm256_hadd_epi32(acc[r][0], acc[r][1]), 0xD8);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + r * 8), s);
    }
}

// Depthwise, AVX-512 VNNI: 64 pixels of one channel, four taps per vpdpbusd. The bytes of taps
// 4g..4g+3 at each pixel are interleaved into one 32-bit lane with two rounds of unpacks; the
// unpacks work inside 128-bit blocks, so accumulator a holds pixels 16l+4a..16l+4a+3 in block l
// and a 4x4 transpose of blocks restores pixel order at the end. `taps` and `w4` come in groups of
// four (padding taps have weight 0); `flip` (0x80) makes int8 inputs unsigned, the caller
// subtracts 128*sum(w).
VNNX_TARGET_AVX512 inline void dw_tile_vnni(const std::uint8_t* x, const std::int64_t* taps, int groups,
                                            const std::int32_t* w4, std::uint8_t flip, std::int32_t* acc_out) {
    __m512i acc[4];
    for (auto& a : acc) a = _mm512_setzero_si512();
    const __m512i vflip = _mm512_set1_epi8(static_cast<char>(flip));
    for (int g = 0; g < groups; ++g) {
        const std::int64_t* t = taps + 4 * g;
        const __m512i a = _mm512_xor_si512(_mm512_loadu_si512(x + t[0]), vflip);
        const __m512i b = _mm512_xor_si512(_mm512_loadu_si512(x + t[1]), vflip);
        const __m512i c = _mm512_xor_si512(_mm512_loadu_si512(x + t[2]), vflip);
        const __m512i d = _mm512_xor_si512(_mm512_loadu_si512(x + t[3]), vflip);
        const __m512i ab_lo = _mm512_unpacklo_epi8(a, b), ab_hi = _mm512_unpackhi_epi8(a, b);
        const __m512i cd_lo = _mm512_unpacklo_epi8(c, d), cd_hi = _mm512_unpackhi_epi8(c, d);
        const __m512i wv = _mm512_set1_epi32(w4[g]);
        acc[0] = _mm512_dpbusd_epi32(acc[0], _mm512_unpacklo_epi16(ab_lo, cd_lo), wv);
        acc[1] = _mm512_dpbusd_epi32(acc[1], _mm512_unpackhi_epi16(ab_lo, cd_lo), wv);
        acc[2] = _mm512_dpbusd_epi32(acc[2], _mm512_unpacklo_epi16(ab_hi, cd_hi), wv);
        acc[3] = _mm512_dpbusd_epi32(acc[3], _mm512_unpackhi_epi16(ab_hi, cd_hi), wv);
    }
    const __m512i t0 = _mm512_shuffle_i32x4(acc[0], acc[1], 0x44), t1 = _mm512_shuffle_i32x4(acc[0], acc[1], 0xEE);
    const __m512i t2 = _mm512_shuffle_i32x4(acc[2], acc[3], 0x44), t3 = _mm512_shuffle_i32x4(acc[2], acc[3], 0xEE);
    _mm512_storeu_si512(acc_out, _mm512_shuffle_i32x4(t0, t2, 0x88));
    _mm512_storeu_si512(acc_out + 16, _mm512_shuffle_i32x4(t0, t2, 0xDD));
    _mm512_storeu_si512(acc_out + 32, _mm512_shuffle_i32x4(t1, t3, 0x88));
    _mm512_storeu_si512(acc_out + 48, _mm512_shuffle_i32x4(t1, t3, 0xDD));
}

// Depthwise, AVX2: 32 pixels of one channel.
template <bool Signed>
VNNX_TARGET_AVX2 inline void dw_tile_avx2(const std::uint8_t* x, const std::int64_t* taps, int ntaps,
                                          const std::int8_t* w, std::int32_t* acc_out) {
    __m256i acc[4];
    for (auto& a : acc) a = _mm256_setzero_si256();
    for (int t = 0; t < ntaps; ++t) {
        const std::uint8_t* p = x + taps[t];
        const __m256i wv = _mm256_set1_epi16(static_cast<short>(w[t]));
#pragma GCC unroll 2
        for (int v = 0; v < 2; ++v) {
            const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 16 * v));
            const __m256i xv = Signed ? _mm256_cvtepi8_epi16(raw) : _mm256_cvtepu8_epi16(raw);
            const __m256i prod = _mm256_mullo_epi16(xv, wv);
            acc[2 * v] = _mm256_add_epi32(acc[2 * v], _mm256_cvtepi16_epi32(_mm256_castsi256_si128(prod)));
            acc[2 * v + 1] = _mm256_add_epi32(acc[2 * v + 1], _mm256_cvtepi16_epi32(_mm256_extracti128_si256(prod, 1)));
        }
    }
    for (int i = 0; i < 4; ++i) _mm256_storeu_si256(reinterpret_cast<__m256i*>(acc_out + 8 * i), acc[i]);
}
#endif

}  // namespace detail

// A convolution layer prepared for one ISA: weights packed and corrections computed once.
class conv2d {
public:
    conv2d(const conv_shape& shape, std::span<const std::int8_t> weights, requant_params rq, isa_kind isa,
           std::string name = "conv")
        : s_(shape), rq_(std::move(rq)), isa_(isa), name_(std::move(name)) {
        validate_conv_shape(s_, name_);
        if (weights.size() != s_.weight_size())
            fail_input(name_ + ": expected " + std::to_string(s_.weight_size()) + " weights (K=" +
                       std::to_string(s_.kernels) + ", C/groups=" + std::to_string(s_.channels / s_.groups) +
                       ", " + std::to_string(s_.kernel_h) + "x" + std::to_string(s_.kernel_w) + "), got " +
                       std::to_string(weights.size()));
        validate_requant(rq_, static_cast<std::size_t>(s_.kernels), s_.output_signed, name_);
        if (!isa_supported(isa_))
            fail(error_kind::unsupported, name_ + ": instruction set " + std::string(isa_name(isa_)) +
                                              " is not supported by this CPU");
        w_.assign(weights.begin(), weights.end());
        oh_ = s_.out_h();
        ow_ = s_.out_w();
        dispatch(isa_, [&](auto tag) { prepare(tag); });
    }

    [[nodiscard]] const conv_shape& shape() const noexcept { return s_; }
    [[nodiscard]] isa_kind isa() const noexcept { return isa_; }
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    [[nodiscard]] const requant_params& requant() const noexcept { return rq_; }
    [[nodiscard]] std::int64_t macs() const noexcept {
        return static_cast<std::int64_t>(s_.output_size()) * s_.reduction();
    }

    // input: C*H*W raw codes; output: K*OH*OW codes. pool may be null (single thread).
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, conv_workspace& ws,
             thread_pool* pool = nullptr) const {
        if (input.size() != s_.input_size())
            fail_input(name_ + ": input has " + std::to_string(input.size()) + " bytes, expected " +
                       std::to_string(s_.input_size()));
        if (output.size() != s_.output_size())
            fail_input(name_ + ": output has " + std::to_string(output.size()) + " bytes, expected " +
                       std::to_string(s_.output_size()));
        dispatch(isa_, [&](auto tag) { execute(tag, input.data(), output.data(), ws, pool); });
    }
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output,
             thread_pool* pool = nullptr) const {
        conv_workspace ws;
        run(input, output, ws, pool);
    }

private:
    template <class F>
    static void for_each(thread_pool* pool, std::size_t n, F&& f) {
        if (pool) pool->parallel_for(n, f);
        else
            for (std::size_t i = 0; i < n; ++i) f(i);
    }

    // ---- preparation -------------------------------------------------------------------
    void prepare(isa::scalar) {}

    template <class Isa>
    void prepare(Isa) {
        using T = detail::conv_tiling<Isa>;
        const int sh = s_.stride_h, sw = s_.stride_w;
        hp_ = (s_.height + sh - 1) / sh;
        wp_ = (s_.width + sw - 1) / sw;
        planes_ = sh * sw;
        const int qt = s_.depthwise() ? T::dw_qt : T::qt;
        q_total_ = static_cast<std::size_t>(oh_) * wp_;
        q_pad_ = (q_total_ + qt - 1) / qt * qt;
        const std::size_t amax = static_cast<std::size_t>((s_.kernel_h - 1) * s_.dilation_h / sh);
        const std::size_t bmax = static_cast<std::size_t>((s_.kernel_w - 1) * s_.dilation_w / sw);
        plane_elems_ = std::max(static_cast<std::size_t>(hp_) * wp_, q_pad_ + amax * wp_ + bmax);
        taps_.clear();
        for (int ky = 0; ky < s_.kernel_h; ++ky)
            for (int kx = 0; kx < s_.kernel_w; ++kx) {
                const int dy = ky * s_.dilation_h, dx = kx * s_.dilation_w;
                const std::size_t plane = static_cast<std::size_t>(dy % sh) * sw + dx % sw;
                taps_.push_back(static_cast<std::int64_t>(plane * plane_elems_ +
                                                          static_cast<std::size_t>(dy / sh) * wp_ + dx / sw));
            }
        if (s_.depthwise()) {
            // AVX-512: taps in groups of four (padding taps repeat tap 0 with weight 0), the four
            // weights of a group in one int32, and the correction of the +128 input bias.
            if constexpr (std::is_same_v<Isa, isa::avx512_vnni>) {
                const int nt = s_.kernel_h * s_.kernel_w;
                dw_groups_ = (nt + 3) / 4;
                dw_taps_.assign(taps_.begin(), taps_.end());
                dw_taps_.resize(static_cast<std::size_t>(dw_groups_) * 4, taps_[0]);
                dw_w4_.assign(static_cast<std::size_t>(s_.channels) * dw_groups_, 0);
                corr_.assign(static_cast<std::size_t>(s_.channels), 0);
                for (int c = 0; c < s_.channels; ++c) {
                    std::int64_t sum = 0;
                    for (int t = 0; t < nt; ++t) {
                        const std::int8_t v = w_[static_cast<std::size_t>(c) * nt + t];
                        sum += v;
                        auto& word = dw_w4_[static_cast<std::size_t>(c) * dw_groups_ + t / 4];
                        word = static_cast<std::int32_t>(static_cast<std::uint32_t>(word) |
                                                         (static_cast<std::uint32_t>(static_cast<std::uint8_t>(v)) << (8 * (t % 4))));
                    }
                    if (s_.input_signed) corr_[static_cast<std::size_t>(c)] = static_cast<std::int32_t>(-128 * sum);
                }
            }
            return;  // the other paths use w_ as is: [c][tap]
        }

        const int kb = T::kb;
        const int k = s_.kernels, c = s_.channels, nt = s_.kernel_h * s_.kernel_w;
        cq_ = (c + 3) / 4;
        kblocks_ = (k + kb - 1) / kb;
        const std::size_t packed = static_cast<std::size_t>(kblocks_) * cq_ * nt * kb * 4;
        auto weight = [&](int kk, int cc, int t) -> int {
            if (kk >= k || cc >= c) return 0;  // padding kernels and channels
            return w_[(static_cast<std::size_t>(kk) * c + cc) * nt + t];
        };
        auto pack = [&](auto* dst) {
            for (int b = 0; b < kblocks_; ++b)
                for (int q = 0; q < cq_; ++q)
                    for (int t = 0; t < nt; ++t)
                        for (int r = 0; r < kb; ++r)
                            for (int i = 0; i < 4; ++i)
                                *dst++ = static_cast<std::remove_reference_t<decltype(*dst)>>(
                                    weight(b * kb + r, q * 4 + i, t));
        };
        if constexpr (std::is_same_v<Isa, isa::avx2>) {
            packed16_.resize(packed);
            pack(packed16_.data());
        } else {
            packed8_.resize(packed);
            pack(packed8_.data());
        }
        corr_.assign(static_cast<std::size_t>(k), 0);
        if (std::is_same_v<Isa, isa::avx512_vnni> && s_.input_signed) {
            // vpdpbusd wants unsigned inputs: x+128 is fed, so subtract 128*sum(w_k).
            for (int kk = 0; kk < k; ++kk) {
                std::int64_t sum = 0;
                for (std::size_t i = 0; i < static_cast<std::size_t>(c) * nt; ++i)
                    sum += w_[static_cast<std::size_t>(kk) * c * nt + i];
                corr_[static_cast<std::size_t>(kk)] = static_cast<std::int32_t>(-128 * sum);
            }
        }
        // The packed copy is all this path reads: release the original (simulator memory).
        std::vector<std::int8_t>().swap(w_);
    }

    // ---- scalar: the definition ----------------------------------------------------------
    void execute(isa::scalar, const std::uint8_t* in, std::uint8_t* out, conv_workspace&, thread_pool* pool) const {
        const int cg = s_.channels / s_.groups;
        const std::size_t hw = static_cast<std::size_t>(s_.height) * s_.width;
        const bool sgn = s_.input_signed;
        for_each(pool, static_cast<std::size_t>(s_.kernels), [&](std::size_t k) {
            const int c0 = s_.depthwise() ? static_cast<int>(k) : 0;
            const std::int8_t* wk = w_.data() + k * cg * s_.kernel_h * s_.kernel_w;
            for (int oy = 0; oy < oh_; ++oy)
                for (int ox = 0; ox < ow_; ++ox) {
                    std::int32_t acc = 0;
                    for (int c = 0; c < cg; ++c) {
                        const std::uint8_t* xc = in + static_cast<std::size_t>(c0 + c) * hw;
                        for (int ky = 0; ky < s_.kernel_h; ++ky) {
                            const int iy = oy * s_.stride_h + ky * s_.dilation_h;
                            for (int kx = 0; kx < s_.kernel_w; ++kx) {
                                const int ix = ox * s_.stride_w + kx * s_.dilation_w;
                                const std::uint8_t b = xc[static_cast<std::size_t>(iy) * s_.width + ix];
                                const int xv = sgn ? static_cast<int>(static_cast<std::int8_t>(b)) : static_cast<int>(b);
                                acc += xv * wk[(c * s_.kernel_h + ky) * s_.kernel_w + kx];
                            }
                        }
                    }
                    out[(k * oh_ + oy) * ow_ + ox] =
                        requantize(acc, rq_.multiplier[k], rq_.constant[k], rq_.shift[k], rq_.act_min, rq_.act_max);
                }
        });
    }

    // ---- SIMD ----------------------------------------------------------------------------
    // Scatters one requantized tile row (pixels q0..q0+n of the Wp-pitched grid) into y[k].
    void scatter(const std::uint8_t* row, std::size_t q0, std::size_t n, std::uint8_t* yk) const {
        std::size_t q = q0;
        const std::size_t end = std::min(q0 + n, q_total_);
        while (q < end) {
            const std::size_t oy = q / wp_, ox = q % wp_;
            const std::size_t run = std::min(end - q, static_cast<std::size_t>(wp_) - ox);
            if (ox < static_cast<std::size_t>(ow_)) {
                const std::size_t valid = std::min(run, static_cast<std::size_t>(ow_) - ox);
                std::memcpy(yk + oy * ow_ + ox, row + (q - q0), valid);
            }
            q += run;
        }
    }

    // Repacks the input into phase planes; `group4` interleaves 4 channels per pixel.
    void pack_input(const std::uint8_t* in, std::uint8_t* dst, bool group4, bool bias, thread_pool* pool) const {
        const int sh = s_.stride_h, sw = s_.stride_w;
        const std::size_t hw = static_cast<std::size_t>(s_.height) * s_.width;
        const std::size_t unit = group4 ? 4 : 1;
        const std::size_t cstride = static_cast<std::size_t>(planes_) * plane_elems_ * unit;
        const std::uint8_t flip = bias ? 0x80 : 0;
        const std::size_t groups = group4 ? static_cast<std::size_t>(cq_) : static_cast<std::size_t>(s_.channels);
        for_each(pool, groups, [&](std::size_t g) {
            // No clearing: bytes not written here (plane slack, padded channels) only reach
            // dropped output lanes or meet zero weights, and the vector is always initialised.
            std::uint8_t* d = dst + g * cstride;
            const std::size_t cn = group4 ? 4 : 1;
            if (group4 && (g + 1) * 4 <= static_cast<std::size_t>(s_.channels) && (sw == 1 || sw == 2)) {
                // Four whole channels: interleave them a row at a time with constant strides
                // (the compiler vectorizes these loops); the same bytes as the loop below.
                const std::uint8_t* x0 = in + g * 4 * hw;
                for (int iy = 0; iy < s_.height; ++iy) {
                    const std::size_t prow = static_cast<std::size_t>(iy % sh) * sw;
                    const std::size_t i = static_cast<std::size_t>(iy / sh);
                    const std::uint8_t* src = x0 + static_cast<std::size_t>(iy) * s_.width;
                    for (int px = 0; px < sw && px < s_.width; ++px) {
                        std::uint8_t* row = d + ((prow + px) * plane_elems_ + i * wp_) * 4;
                        const int n = (s_.width - px + sw - 1) / sw;
                        if (sw == 1) detail::interleave4<1>(row, src + px, hw, n, flip);
                        else detail::interleave4<2>(row, src + px, hw, n, flip);
                    }
                }
                return;
            }
            for (std::size_t ci = 0; ci < cn; ++ci) {
                const std::size_t c = g * cn + ci;
                if (c >= static_cast<std::size_t>(s_.channels)) break;
                const std::uint8_t* xc = in + c * hw;
                for (int iy = 0; iy < s_.height; ++iy) {
                    const std::size_t prow = static_cast<std::size_t>(iy % sh) * sw;
                    const std::size_t i = static_cast<std::size_t>(iy / sh);
                    const std::uint8_t* src = xc + static_cast<std::size_t>(iy) * s_.width;
                    // one pass per column phase: no division per pixel
                    for (int px = 0; px < sw && px < s_.width; ++px) {
                        std::uint8_t* row = d + ((prow + px) * plane_elems_ + i * wp_) * unit + ci;
                        const int n = (s_.width - px + sw - 1) / sw;
                        const std::uint8_t* sp = src + px;
                        if (unit == 1 && sw == 1 && flip == 0) {
                            std::memcpy(row, sp, static_cast<std::size_t>(n));
                        } else {
                            for (int j = 0; j < n; ++j) row[static_cast<std::size_t>(j) * unit] = sp[j * sw] ^ flip;
                        }
                    }
                }
            }
        });
    }

    template <class Isa>
    void execute(Isa, const std::uint8_t* in, std::uint8_t* out, conv_workspace& ws, thread_pool* pool) const {
#if VNNX_SIM_X86
        using T = detail::conv_tiling<Isa>;
        constexpr bool vnni = std::is_same_v<Isa, isa::avx512_vnni>;
        const bool dw = s_.depthwise();
        const std::size_t unit = dw ? 1 : 4;
        const std::size_t groups = dw ? static_cast<std::size_t>(s_.channels) : static_cast<std::size_t>(cq_);
        const std::size_t cstride = static_cast<std::size_t>(planes_) * plane_elems_ * unit;
        // Slack so the widest vector load past the last tap stays inside the buffer.
        const std::size_t need = groups * cstride + 256;
        if (ws.input.size() < need) ws.input.resize(need);
        pack_input(in, ws.input.data(), !dw, vnni && !dw && s_.input_signed, pool);
        const std::uint8_t* xp = ws.input.data();
        const int ntaps = static_cast<int>(taps_.size());
        const std::size_t ohw = static_cast<std::size_t>(oh_) * ow_;

        if (dw) {
            constexpr int qt = T::dw_qt;
            const std::size_t qtiles = q_pad_ / qt;
            const std::size_t tiles_per_item = std::max<std::size_t>(1, 1024 / qt);
            const std::size_t qitems = (qtiles + tiles_per_item - 1) / tiles_per_item;
            for_each(pool, qitems * static_cast<std::size_t>(s_.channels), [&](std::size_t item) {
                const std::size_t c = item / qitems, qi = item % qitems;
                alignas(64) std::int32_t acc[qt];
                alignas(64) std::uint8_t row[qt];
                const std::int8_t* wc = w_.data() + c * ntaps;
                const std::size_t t_end = std::min(qtiles, (qi + 1) * tiles_per_item);
                for (std::size_t tile = qi * tiles_per_item; tile < t_end; ++tile) {
                    const std::size_t q0 = tile * qt;
                    const std::uint8_t* xc = xp + c * cstride + q0;
                    if constexpr (vnni) {
                        detail::dw_tile_vnni(xc, dw_taps_.data(), dw_groups_, dw_w4_.data() + c * dw_groups_,
                                             s_.input_signed ? 0x80 : 0, acc);
                    } else {
                        if (s_.input_signed) detail::dw_tile_avx2<true>(xc, taps_.data(), ntaps, wc, acc);
                        else detail::dw_tile_avx2<false>(xc, taps_.data(), ntaps, wc, acc);
                    }
                    detail::requant_row(Isa{}, acc, qt, vnni ? corr_[c] : 0, rq_.multiplier[c], rq_.constant[c], rq_.shift[c],
                                        rq_.act_min, rq_.act_max, row);
                    scatter(row, q0, qt, out + c * ohw);
                }
            });
            return;
        }

        constexpr int kb = T::kb, qt = T::qt;
        const std::size_t qtiles = q_pad_ / qt;
        // Work item: up to 64 output channels x up to ~768 pixels; inside, pixels outer so the
        // input tile stays in L1 while the k-blocks sweep over it.
        const std::size_t kb_per_item = std::max(1, 64 / kb);
        const std::size_t tiles_per_item = std::max<std::size_t>(1, 768 / qt);
        const std::size_t kitems = (static_cast<std::size_t>(kblocks_) + kb_per_item - 1) / kb_per_item;
        const std::size_t qitems = (qtiles + tiles_per_item - 1) / tiles_per_item;
        const std::size_t wblock = static_cast<std::size_t>(cq_) * ntaps * kb * 4;
        for_each(pool, kitems * qitems, [&](std::size_t item) {
            const std::size_t ki = item % kitems, qi = item / kitems;
            alignas(64) std::int32_t acc[kb * qt];
            alignas(64) std::uint8_t row[qt];
            const std::size_t b_end = std::min(static_cast<std::size_t>(kblocks_), (ki + 1) * kb_per_item);
            const std::size_t t_end = std::min(qtiles, (qi + 1) * tiles_per_item);
            for (std::size_t tile = qi * tiles_per_item; tile < t_end; ++tile) {
                const std::size_t q0 = tile * qt;
                const std::uint8_t* xq = xp + q0 * 4;
                for (std::size_t b = ki * kb_per_item; b < b_end; ++b) {
                    if constexpr (vnni) {
                        detail::vnni_tile(xq, cstride, cq_, taps_.data(), ntaps, packed8_.data() + b * wblock, acc);
                    } else {
                        if (s_.input_signed)
                            detail::avx2_tile<true>(xq, cstride, cq_, taps_.data(), ntaps,
                                                    packed16_.data() + b * wblock, acc);
                        else
                            detail::avx2_tile<false>(xq, cstride, cq_, taps_.data(), ntaps,
                                                     packed16_.data() + b * wblock, acc);
                    }
                    for (int r = 0; r < kb; ++r) {
                        const std::size_t k = b * kb + r;
                        if (k >= static_cast<std::size_t>(s_.kernels)) break;
                        detail::requant_row(Isa{}, acc + r * qt, qt, corr_[k], rq_.multiplier[k], rq_.constant[k],
                                            rq_.shift[k], rq_.act_min, rq_.act_max, row);
                        scatter(row, q0, qt, out + k * ohw);
                    }
                }
            }
        });
#else
        (void)in, (void)out, (void)ws, (void)pool;
        fail(error_kind::unsupported, name_ + ": SIMD kernels need an x86-64 build");
#endif
    }

    conv_shape s_;
    requant_params rq_;
    isa_kind isa_;
    std::string name_;
    std::vector<std::int8_t> w_;  // as given: [K][C/g][kh][kw]
    int oh_ = 0, ow_ = 0;
    // SIMD geometry (see the header comment)
    int hp_ = 0, wp_ = 0, planes_ = 1, cq_ = 0, kblocks_ = 0;
    std::size_t q_total_ = 0, q_pad_ = 0, plane_elems_ = 0;
    std::vector<std::int64_t> taps_;       // per tap: offset in plane elements
    std::vector<std::int8_t> packed8_;     // AVX-512 VNNI weights
    std::vector<std::int16_t> packed16_;   // AVX2 weights
    std::vector<std::int32_t> corr_;       // per k: added to the accumulator before requantizing
    int dw_groups_ = 0;                    // AVX-512 depthwise: tap groups of four
    std::vector<std::int64_t> dw_taps_;    // taps_ padded to dw_groups_ * 4
    std::vector<std::int32_t> dw_w4_;      // [c][group]: four weights per int32
};

}  // namespace vnnx::sim::kernels
// ---- end vnnx/sim/kernels/conv.hpp

namespace vnnx::sim {

namespace conv_node_detail {

struct prepared {
    std::unique_ptr<kernels::conv2d> kernel;
    std::vector<std::uint8_t> nlf;  // empty, or 256 bytes
    int oh = 0, ow = 0;             // true output
    int row_step = 1;               // grid row of output row y is y * row_step
    bool grid = false;
    mutable std::vector<std::uint8_t> y;  // the true output when it is not written in place
};

// One input-packing workspace per simulator thread, shared by every conv node: nodes run one
// after another, and per-node buffers would keep a copy of every conv input alive.
inline kernels::conv_workspace& shared_workspace() {
    thread_local kernels::conv_workspace ws;
    return ws;
}

inline const prepared& prepare(node_context& c) {
    if (*c.cache) return *static_cast<const prepared*>(c.cache->get());
    const auto& r = c.rec;
    const auto u = r.options.get<format::node_options::Conv2DOptions>();
    if (c.tensors.size() != 2) c.reject("expects one input and one output tensor, found " + std::to_string(c.tensors.size()));
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    c.require_8bit();
    if (u.use_fia != 1) c.reject("only FIA convolutions (use_fia = 1) are simulated, found use_fia " + std::to_string(u.use_fia));
    const bool dw = u.use_depthwise == 1;
    const int C = in.channels(), H = in.rows(), W = in.cols();
    if (r.channels != C || r.m != H || r.n != W)
        c.reject("node geometry " + std::to_string(r.channels) + "x" + std::to_string(r.m) + "x" + std::to_string(r.n) +
                 " differs from its input tensor " + std::to_string(C) + "x" + std::to_string(H) + "x" + std::to_string(W));
    const auto& f = u.filter_shape_dims;
    const int K = u.kernels;
    if (dw) {
        if (f[0] != 1 || f[1] != C || K != C || u.group != C)
            c.reject("depthwise needs filter_shape_dims [1, C, kh, kw], kernels = group = C = " + std::to_string(C) +
                     "; found [" + std::to_string(f[0]) + ", " + std::to_string(f[1]) + ", ...], kernels " +
                     std::to_string(K) + ", group " + std::to_string(u.group));
    } else if (f[0] != K || f[1] != C || u.group != 1) {
        c.reject("filter_shape_dims [" + std::to_string(f[0]) + ", " + std::to_string(f[1]) + ", ...] must be [kernels " +
                 std::to_string(K) + ", input channels " + std::to_string(C) + ", kh, kw] with group 1");
    }
    const int kh = f[2], kw = f[3];
    if (K < 1 || kh < 1 || kw < 1) c.reject("filter dimensions must be positive");
    if (out.channels() != K || out.outer() != in.outer())
        c.reject("output tensor has " + std::to_string(out.channels()) + " channels and batch " +
                 std::to_string(out.outer()) + "; needs " + std::to_string(K) + " and " + std::to_string(in.outer()));

    kernels::conv_shape s;
    s.channels = C;
    s.height = H;
    s.width = W;
    s.kernels = K;
    s.kernel_h = kh;
    s.kernel_w = kw;
    s.stride_h = u.stride_height;
    s.stride_w = u.stride_width;
    s.dilation_h = u.dilation_height_factor;
    s.dilation_w = u.dilation_width_factor;
    s.groups = dw ? C : 1;
    s.input_signed = in.type == 1;
    if (r.output_data_type != 0 && r.output_data_type != 1)
        c.reject("output_data_type " + std::to_string(r.output_data_type) + " is not an 8-bit type");
    s.output_signed = r.output_data_type == 1;
    kernels::validate_conv_shape(s, c.view.source() + ": " + c.where);

    // Weights.
    const int P = parallel_output_maps(c.view.header().vbx_nn_preset);
    const std::string what = c.view.source() + ": " + c.where;
    std::vector<std::int8_t> w;
    if (dw) {
        if (u.imaps < 1 || r.maps < 1) c.reject("depthwise needs positive imaps and maps");
        const auto bytes = c.bytes(u.filter_data, packed_depthwise_bytes(C, kh, kw, P, u.imaps), "filter_data");
        w = unpack_depthwise_weights({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, C, kh, kw, P,
                                     u.imaps, r.maps, what);
    } else {
        const auto bytes = c.bytes(u.filter_data, packed_conv_bytes(K, C, kh, kw, P), "filter_data");
        w = unpack_conv_weights({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()}, K, C, kh, kw, P,
                                r.maps, what);
    }

    // Requantization: the records are what the FIA loads; the multiplier/shift arrays must agree.
    const auto ku = static_cast<std::uint64_t>(K);
    const auto rec_bytes = c.bytes(u.quantization_records, 8 * ku, "quantization_records");
    const auto om = c.int32s(r.output_multiplier, ku, "output_multiplier");
    const auto sh = c.int32s(r.output_shift, ku, "output_shift");
    kernels::requant_params rq;
    rq.act_min = r.activation_min;
    rq.act_max = r.activation_max;
    for (std::size_t k = 0; k < ku; ++k) {
        const auto p = quant::fia_decode(load_le<std::uint64_t>(rec_bytes.data() + 8 * k));
        if (om[k] != p.multiplier || sh[k] != p.shift_index)
            c.reject("output channel " + std::to_string(k) + ": output_multiplier/output_shift (" + std::to_string(om[k]) +
                     ", " + std::to_string(sh[k]) + ") differ from its quantization record (" +
                     std::to_string(p.multiplier) + ", " + std::to_string(p.shift_index) + ")");
        rq.multiplier.push_back(static_cast<std::uint16_t>(p.multiplier));
        rq.shift.push_back(static_cast<std::uint8_t>(kernels::shift_from_index(p.shift_index)));
        rq.constant.push_back(p.constant);
    }

    auto st = std::make_shared<prepared>();
    st->kernel = std::make_unique<kernels::conv2d>(s, w, std::move(rq), c.ex.isa, what);
    st->oh = s.out_h();
    st->ow = s.out_w();
    if (!u.nlf_data.absent()) {
        const auto t = c.bytes(u.nlf_data, 256, "nlf_data");
        st->nlf.resize(256);
        std::memcpy(st->nlf.data(), t.data(), 256);
    } else if (out.type != r.output_data_type) {
        c.reject("output tensor type " + std::to_string(out.type) + " differs from output_data_type " +
                 std::to_string(r.output_data_type) + " and there is no nlf_data table");
    }

    // True output or FIA grid.
    if (out.rows() != st->oh || out.cols() != st->ow) {
        st->grid = true;
        if (u.use_strided == 1) {
            st->row_step = 1;
        } else {
            if (s.stride_w != 1)
                c.reject("stride_width " + std::to_string(s.stride_w) + " without use_strided has no FIA grid");
            st->row_step = s.stride_h;
        }
        if (static_cast<long long>(st->oh - 1) * st->row_step >= out.rows() || st->ow > out.cols())
            c.reject("output grid " + std::to_string(out.rows()) + "x" + std::to_string(out.cols()) +
                     " cannot hold the " + std::to_string(st->oh) + "x" + std::to_string(st->ow) + " output");
    }
    *c.cache = st;
    return *st;
}

}  // namespace conv_node_detail

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::CONV_2D)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto& st = conv_node_detail::prepare(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto& s = st.kernel->shape();
        const std::size_t in_plane = s.input_size();
        const std::size_t k_count = static_cast<std::size_t>(s.kernels);
        const std::size_t true_plane = static_cast<std::size_t>(st.oh) * static_cast<std::size_t>(st.ow);
        const std::size_t out_rows = static_cast<std::size_t>(out.rows()), out_cols = static_cast<std::size_t>(out.cols());
        const std::size_t out_plane = k_count * out_rows * out_cols;
        const auto fill = static_cast<std::uint8_t>(out.zero);
        for (std::int64_t b = 0; b < in.outer(); ++b) {
            const auto bu = static_cast<std::size_t>(b);
            std::uint8_t* dst = out.u8() + bu * out_plane;
            // Without a grid the kernel writes the output tensor itself (no copy, no allocation),
            // unless the output overlaps the input the kernel still reads.
            const std::uint8_t* src = in.u8() + bu * in_plane;
            const bool overlap = dst < src + in_plane && src < dst + s.output_size();
            std::uint8_t* y = dst;
            if (st.grid || overlap) {
                st.y.resize(s.output_size());
                y = st.y.data();
            }
            st.kernel->run({src, in_plane}, {y, s.output_size()}, conv_node_detail::shared_workspace(), c.ex.pool);
            if (!st.nlf.empty())
                for (std::size_t i = 0; i < s.output_size(); ++i) y[i] = st.nlf[y[i]];
            if (!st.grid) {
                if (y != dst) std::memcpy(dst, y, s.output_size());
                continue;
            }
            std::memset(dst, fill, out_plane);
            for (std::size_t k = 0; k < k_count; ++k)
                for (int oy = 0; oy < st.oh; ++oy)
                    std::memcpy(dst + (k * out_rows + static_cast<std::size_t>(oy * st.row_step)) * out_cols,
                                y + k * true_plane + static_cast<std::size_t>(oy) * static_cast<std::size_t>(st.ow),
                                static_cast<std::size_t>(st.ow));
        }
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/nodes/conv.hpp
// ---- begin vnnx/sim/kernels/fc.hpp
// Fully connected with the FIA arithmetic: y[t][k] = requantize(sum_c x[t][c] * w[k][c]).
// It is a 1x1 convolution over a 1 x T "image" with C channels, so it reuses conv2d (and its
// packed weights); the row-major [T][C] input and [T][K] output are transposed around it
// (O(T*(C+K)) work against O(T*C*K) multiplies). T = 1 needs no transpose at all.


namespace vnnx::sim::kernels {

struct fc_shape {
    int in_features = 1;   // C
    int out_features = 1;  // K
    int rows = 1;          // T (token-wise FC); 1 for a plain vector
    bool input_signed = true;
    bool output_signed = true;
};

class fully_connected {
public:
    fully_connected(const fc_shape& s, std::span<const std::int8_t> weights, requant_params rq, isa_kind isa,
                    std::string name = "fully_connected")
        : s_(s), conv_(as_conv(s, name), weights, std::move(rq), isa, name) {}

    [[nodiscard]] const fc_shape& shape() const noexcept { return s_; }
    [[nodiscard]] isa_kind isa() const noexcept { return conv_.isa(); }

    // input [T][C], output [T][K]
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output, conv_workspace& ws,
             thread_pool* pool = nullptr) const {
        const std::size_t t = static_cast<std::size_t>(s_.rows), c = static_cast<std::size_t>(s_.in_features),
                          k = static_cast<std::size_t>(s_.out_features);
        if (input.size() != t * c)
            fail_input(conv_.name() + ": input has " + std::to_string(input.size()) + " bytes, expected " +
                       std::to_string(t * c) + " (" + std::to_string(t) + " rows of " + std::to_string(c) + ")");
        if (output.size() != t * k)
            fail_input(conv_.name() + ": output has " + std::to_string(output.size()) + " bytes, expected " +
                       std::to_string(t * k));
        if (t == 1) {
            conv_.run(input, output, ws, pool);
            return;
        }
        ws.extra.resize(t * c + t * k);
        std::uint8_t* xt = ws.extra.data();  // [C][T]
        std::uint8_t* yt = xt + t * c;       // [K][T]
        for (std::size_t r = 0; r < t; ++r)
            for (std::size_t i = 0; i < c; ++i) xt[i * t + r] = input[r * c + i];
        conv_.run({xt, t * c}, {yt, t * k}, ws, pool);
        for (std::size_t i = 0; i < k; ++i)
            for (std::size_t r = 0; r < t; ++r) output[r * k + i] = yt[i * t + r];
    }
    void run(std::span<const std::uint8_t> input, std::span<std::uint8_t> output,
             thread_pool* pool = nullptr) const {
        conv_workspace ws;
        run(input, output, ws, pool);
    }

private:
    static conv_shape as_conv(const fc_shape& s, const std::string& name) {
        if (s.rows < 1 || s.in_features < 1 || s.out_features < 1)
            fail_input(name + ": rows, input and output features must be positive (got " + std::to_string(s.rows) +
                       ", " + std::to_string(s.in_features) + ", " + std::to_string(s.out_features) + ")");
        conv_shape c;
        c.channels = s.in_features;
        c.height = 1;
        c.width = s.rows;
        c.kernels = s.out_features;
        c.input_signed = s.input_signed;
        c.output_signed = s.output_signed;
        return c;
    }

    fc_shape s_;
    conv2d conv_;
};

}  // namespace vnnx::sim::kernels
// ---- end vnnx/sim/kernels/fc.hpp
// ---- begin vnnx/sim/kernels/eltwise.hpp
// Element-wise kernels over raw 8-bit codes: 256-entry table lookup and TFLite's int8/uint8 ADD.
// Scalar versions define the answer; the SIMD versions are bit-identical to them.

// ---- begin vnnx/quant/fixed_point.hpp
// TFLite's (gemmlowp's) fixed-point primitives and the two requantization variants that
// the TFLite interpreter uses: double rounding (element-wise ops, depthwise conv) and ruy's
// single rounding (CONV_2D and FULLY_CONNECTED GEMMs). Pure integer code, no float.

namespace vnnx::quant {

/// round((a * b * 2) / 2^32) with ties away from zero; saturates the one overflow case
/// (both operands INT32_MIN). gemmlowp's SaturatingRoundingDoublingHighMul.
[[nodiscard]] constexpr std::int32_t saturating_rounding_doubling_high_mul(std::int32_t a, std::int32_t b) noexcept {
    if (a == b && a == std::numeric_limits<std::int32_t>::min()) return std::numeric_limits<std::int32_t>::max();
    const std::int64_t ab = static_cast<std::int64_t>(a) * static_cast<std::int64_t>(b);
    const std::int64_t nudge = ab >= 0 ? (std::int64_t{1} << 30) : (1 - (std::int64_t{1} << 30));
    // C++ division truncates toward zero, as gemmlowp relies on.
    return static_cast<std::int32_t>((ab + nudge) / (std::int64_t{1} << 31));
}

/// The int16 form (used by HARD_SWISH).
[[nodiscard]] constexpr std::int16_t saturating_rounding_doubling_high_mul(std::int16_t a, std::int16_t b) noexcept {
    if (a == b && a == std::numeric_limits<std::int16_t>::min()) return std::numeric_limits<std::int16_t>::max();
    const std::int32_t ab = static_cast<std::int32_t>(a) * static_cast<std::int32_t>(b);
    const std::int32_t nudge = ab >= 0 ? (1 << 14) : (1 - (1 << 14));
    return static_cast<std::int16_t>((ab + nudge) / (1 << 15));
}

/// TFLite's non-rounding int16 doubling high multiply (truncates toward zero).
[[nodiscard]] constexpr std::int16_t saturating_doubling_high_mul(std::int16_t a, std::int16_t b) noexcept {
    if (a == b && a == std::numeric_limits<std::int16_t>::min()) return std::numeric_limits<std::int16_t>::max();
    const std::int32_t ab = static_cast<std::int32_t>(a) * static_cast<std::int32_t>(b);
    return static_cast<std::int16_t>(ab / (1 << 15));
}

/// x / 2^exponent rounded to nearest, ties away from zero (gemmlowp RoundingDivideByPOT).
/// Exponents a hostile model's scales can ask for are defined too: <= 0 divides by 1, and one
/// past the width is computed in 64 bits (a shift by the width or more is undefined in C++).
template <class T>
[[nodiscard]] constexpr T rounding_divide_by_pot(T x, int exponent) noexcept {
    using wide = std::conditional_t<(sizeof(T) < 4), std::int32_t, T>;
    if (exponent <= 0) return x;
    if (exponent >= static_cast<int>(8 * sizeof(wide)) - 1) {
        if (exponent >= 62) return 0;  // what every 32-bit x rounds to
        if constexpr (sizeof(wide) < 8) return static_cast<T>(rounding_divide_by_pot<std::int64_t>(x, exponent));
    }
    const wide mask = static_cast<wide>((std::int64_t{1} << exponent) - 1);
    const wide remainder = static_cast<wide>(x) & mask;
    const wide threshold = (mask >> 1) + (x < 0 ? 1 : 0);
    return static_cast<T>((static_cast<wide>(x) >> exponent) + (remainder > threshold ? 1 : 0));
}

/// Saturating left shift of an int16 (gemmlowp SaturatingLeftShift on int16).
[[nodiscard]] constexpr std::int16_t saturating_left_shift(std::int16_t x, int shift) noexcept {
    const std::int32_t wide = static_cast<std::int32_t>(x) * (std::int32_t{1} << shift);
    return static_cast<std::int16_t>(std::clamp<std::int32_t>(wide, std::numeric_limits<std::int16_t>::min(),
                                                               std::numeric_limits<std::int16_t>::max()));
}

/// TFLite MultiplyByQuantizedMultiplier: left shift (if shift > 0), doubling high multiply,
/// then rounding right shift (double rounding). `shift` is positive for a left shift.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier(std::int32_t x, std::int32_t multiplier,
                                                                      int shift) noexcept {
    const int left = shift > 0 ? shift : 0;
    const int right = shift > 0 ? 0 : -shift;
    // x * 2^left wraps in TFLite only for out-of-range inputs; do it in 32 bits like TFLite
    // (2^32 and more wrap to 0: a shift that wide is undefined in C++).
    const auto shifted = left >= 32 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << left);
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(shifted, multiplier), right);
}

/// MultiplyByQuantizedMultiplierSmallerThanOneExp: shift <= 0, no left shift.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_smaller_than_one_exp(
    std::int32_t x, std::int32_t multiplier, int shift) noexcept {
    return rounding_divide_by_pot(saturating_rounding_doubling_high_mul(x, multiplier), -shift);
}

/// MultiplyByQuantizedMultiplierGreaterThanOne: shift >= 0.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_greater_than_one(
    std::int32_t x, std::int32_t multiplier, int shift) noexcept {
    const auto shifted = shift >= 32 ? 0 : static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << std::max(shift, 0));
    return saturating_rounding_doubling_high_mul(shifted, multiplier);
}

/// ruy's single-rounding requantization (TFLite's CONV_2D / FULLY_CONNECTED through ruy):
/// (x*m + 2^(30-shift)) >> (31-shift), arithmetic shift (ties toward +infinity), saturated.
[[nodiscard]] constexpr std::int32_t multiply_by_quantized_multiplier_single_round(std::int32_t x,
                                                                                   std::int32_t multiplier,
                                                                                   int shift) noexcept {
    const int total = 31 - shift;
    const std::int64_t prod = static_cast<std::int64_t>(x) * static_cast<std::int64_t>(multiplier);
    if (total <= 0) {
        // Would need a left shift; only reachable with multipliers >= 2^31, which QM never makes.
        const std::int64_t r = prod * (std::int64_t{1} << std::min(-total, 31));
        return static_cast<std::int32_t>(std::clamp<std::int64_t>(r, std::numeric_limits<std::int32_t>::min(),
                                                                    std::numeric_limits<std::int32_t>::max()));
    }
    if (total >= 63) return 0;
    const std::int64_t r = (prod + (std::int64_t{1} << (total - 1))) >> total;
    return static_cast<std::int32_t>(
        std::clamp<std::int64_t>(r, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/fixed_point.hpp

namespace vnnx::sim::kernels {

// ---- LUT -------------------------------------------------------------------------------------
// out[i] = table[in[i]]: the table is indexed by the input byte (int8 code v at v & 0xFF).
using table8 = std::array<std::uint8_t, 256>;

namespace detail {

inline void lut8(isa::scalar, const table8& t, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = t[in[i]];
}
inline void lut8(isa::avx2, const table8& t, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
    // AVX2 has no byte permute wide enough for 256 entries; a table walk is as fast as the
    // 16-way vpshufb cascade would be.
    lut8(isa::scalar{}, t, in, out, n);
}

#if VNNX_SIM_X86
// vpermi2b looks up 128 entries at once; bit 7 of the index picks the upper half.
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline void lut8_vbmi(const table8& t, const std::uint8_t* in,
                                                                             std::uint8_t* out, std::size_t n) {
    const __m512i t0 = _mm512_loadu_si512(t.data());
    const __m512i t1 = _mm512_loadu_si512(t.data() + 64);
    const __m512i t2 = _mm512_loadu_si512(t.data() + 128);
    const __m512i t3 = _mm512_loadu_si512(t.data() + 192);
    std::size_t i = 0;
    for (; i + 64 <= n; i += 64) {
        const __m512i idx = _mm512_loadu_si512(in + i);
        const __m512i lo = _mm512_permutex2var_epi8(t0, idx, t1);
        const __m512i hi = _mm512_permutex2var_epi8(t2, idx, t3);
        _mm512_storeu_si512(out + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(idx), lo, hi));
    }
    for (; i < n; ++i) out[i] = t[in[i]];
}
#endif

inline void lut8(isa::avx512_vnni, const table8& t, const std::uint8_t* in, std::uint8_t* out, std::size_t n) {
#if VNNX_SIM_X86
    static const bool vbmi = __builtin_cpu_supports("avx512vbmi");
    if (vbmi) {
        lut8_vbmi(t, in, out, n);
        return;
    }
#endif
    lut8(isa::scalar{}, t, in, out, n);
}

}  // namespace detail

// Applies one table per channel group: `tables` holds 1 table (all elements) or one per
// channel of x[C][plane]. Channels are split over the pool.
inline void apply_lut(isa_kind isa, std::span<const table8> tables, std::span<const std::uint8_t> in,
                      std::span<std::uint8_t> out, std::size_t channels, thread_pool* pool = nullptr,
                      std::string_view what = "lut") {
    const std::string w(what);
    if (in.size() != out.size())
        fail_input(w + ": input has " + std::to_string(in.size()) + " elements but output has " +
                   std::to_string(out.size()));
    if (channels == 0 || in.size() % channels != 0)
        fail_input(w + ": " + std::to_string(in.size()) + " elements do not split into " + std::to_string(channels) +
                   " channels");
    if (tables.size() != 1 && tables.size() != channels)
        fail_input(w + ": " + std::to_string(tables.size()) + " tables for " + std::to_string(channels) +
                   " channels (need 1 or one per channel)");
    const std::size_t plane = in.size() / channels;
    auto body = [&](std::size_t c) {
        const table8& t = tables[tables.size() == 1 ? 0 : c];
        dispatch(isa, [&](auto tag) { detail::lut8(tag, t, in.data() + c * plane, out.data() + c * plane, plane); });
    };
    if (pool) pool->parallel_for(channels, body);
    else
        for (std::size_t c = 0; c < channels; ++c) body(c);
}

// ---- ADD ---------------------------------------------------------------------------------------
// TFLite's integer ADD (reference_ops / integer_ops add):
//   s_i = MBQMSmallerThanOneExp((x_i + input_i_offset) << left_shift, m_i, shift_i)
//   y   = clamp(MBQMSmallerThanOneExp(s_1 + s_2, m_out, shift_out) + output_offset, act_min, act_max)
// with MBQMSmallerThanOneExp = RoundingDivideByPOT(SaturatingRoundingDoublingHighMul(x, m), -shift).
struct add_params {
    std::int32_t input1_offset = 0;  // -z1
    std::int32_t input2_offset = 0;  // -z2
    int left_shift = 20;
    std::int32_t input1_multiplier = 0;
    int input1_shift = 0;  // <= 0
    std::int32_t input2_multiplier = 0;
    int input2_shift = 0;
    std::int32_t output_multiplier = 0;
    int output_shift = 0;
    std::int32_t output_offset = 0;  // z_out
    int act_min = -128;
    int act_max = 127;
    bool input_signed = true;  // both inputs share the type
    bool output_signed = true;
};

inline void validate_add(const add_params& p, std::string_view what) {
    const std::string w(what);
    auto range = [&](std::int64_t v, std::int64_t lo, std::int64_t hi, const char* name) {
        if (v < lo || v > hi)
            fail_input(w + ": " + name + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    };
    range(p.input1_offset, -255, 255, "input1 offset");
    range(p.input2_offset, -255, 255, "input2 offset");
    // (x + offset) << left_shift must fit in int32: |x + offset| <= 510 < 2^9
    range(p.left_shift, 0, 21, "left shift");
    range(p.input1_multiplier, 0, INT32_MAX, "input1 multiplier");
    range(p.input2_multiplier, 0, INT32_MAX, "input2 multiplier");
    range(p.output_multiplier, 0, INT32_MAX, "output multiplier");
    range(p.input1_shift, -31, 0, "input1 shift");
    range(p.input2_shift, -31, 0, "input2 shift");
    range(p.output_shift, -31, 0, "output shift");
    const int lo = p.output_signed ? -128 : 0, hi = p.output_signed ? 127 : 255;
    range(p.output_offset, lo, hi, "output offset");
    if (p.act_min > p.act_max || p.act_min < lo || p.act_max > hi)
        fail_input(w + ": activation bounds [" + std::to_string(p.act_min) + ", " + std::to_string(p.act_max) +
                   "] must be ordered and within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// The defining scalar arithmetic for one element pair.
[[nodiscard]] inline std::uint8_t add_one(const add_params& p, std::uint8_t a, std::uint8_t b) noexcept {
    const std::int32_t xa = p.input_signed ? static_cast<std::int8_t>(a) : a;
    const std::int32_t xb = p.input_signed ? static_cast<std::int8_t>(b) : b;
    const std::int32_t s1 = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
        (xa + p.input1_offset) * (1 << p.left_shift), p.input1_multiplier, p.input1_shift);
    const std::int32_t s2 = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(
        (xb + p.input2_offset) * (1 << p.left_shift), p.input2_multiplier, p.input2_shift);
    const std::int32_t raw =
        quant::multiply_by_quantized_multiplier_smaller_than_one_exp(s1 + s2, p.output_multiplier, p.output_shift) +
        p.output_offset;
    return static_cast<std::uint8_t>(std::clamp(raw, p.act_min, p.act_max) & 0xFF);
}

namespace detail {

inline void add_row(isa::scalar, const add_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = add_one(p, a[i], b[i]);
}

#if VNNX_SIM_X86
// SaturatingRoundingDoublingHighMul with m >= 0 (so the saturating case cannot occur):
// ab = x*m in 64 bits, add the nudge (2^30, or 1 - 2^30 when ab < 0), divide by 2^31
// truncating toward zero.
VNNX_TARGET_AVX512 inline __m512i srdhm_avx512(__m512i x, __m512i m64) {
    const __m512i pos_nudge = _mm512_set1_epi64(std::int64_t{1} << 30);
    const __m512i neg_nudge = _mm512_set1_epi64(1 - (std::int64_t{1} << 30));
    const __m512i trunc_fix = _mm512_set1_epi64((std::int64_t{1} << 31) - 1);
    __m512i r[2];
    for (int h = 0; h < 2; ++h) {
        const __m512i xs = h == 0 ? x : _mm512_srli_epi64(x, 32);
        const __m512i ab = _mm512_mul_epi32(xs, m64);
        const __mmask8 neg = _mm512_cmplt_epi64_mask(ab, _mm512_setzero_si512());
        __m512i q = _mm512_add_epi64(ab, _mm512_mask_blend_epi64(neg, pos_nudge, neg_nudge));
        q = _mm512_mask_add_epi64(q, _mm512_cmplt_epi64_mask(q, _mm512_setzero_si512()), q, trunc_fix);
        r[h] = _mm512_srai_epi64(q, 31);
    }
    return _mm512_mask_blend_epi32(0xAAAA, r[0], _mm512_slli_epi64(r[1], 32));
}

// RoundingDivideByPOT with a uniform exponent e in [0, 31].
VNNX_TARGET_AVX512 inline __m512i rdbpot_avx512(__m512i x, int e) {
    const __m512i mask = _mm512_set1_epi32(static_cast<std::int32_t>((std::int64_t{1} << e) - 1));
    const __m512i rem = _mm512_and_si512(x, mask);
    __m512i thr = _mm512_srai_epi32(mask, 1);
    thr = _mm512_mask_add_epi32(thr, _mm512_cmplt_epi32_mask(x, _mm512_setzero_si512()), thr, _mm512_set1_epi32(1));
    const __m512i q = _mm512_sra_epi32(x, _mm_cvtsi32_si128(e));
    return _mm512_mask_add_epi32(q, _mm512_cmpgt_epi32_mask(rem, thr), q, _mm512_set1_epi32(1));
}

template <bool Signed>
VNNX_TARGET_AVX512 inline void add_avx512(const add_params& p, const std::uint8_t* a, const std::uint8_t* b,
                                          std::uint8_t* out, std::size_t n) {
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset), off2 = _mm512_set1_epi32(p.input2_offset);
    const __m128i ls = _mm_cvtsi32_si128(p.left_shift);
    const __m512i m1 = _mm512_set1_epi64(p.input1_multiplier), m2 = _mm512_set1_epi64(p.input2_multiplier);
    const __m512i mo = _mm512_set1_epi64(p.output_multiplier);
    const __m512i zo = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
    for (std::size_t i = 0; i < n; i += 16) {
        const __m128i ra = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
        const __m128i rb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
        const __m512i xa = Signed ? _mm512_cvtepi8_epi32(ra) : _mm512_cvtepu8_epi32(ra);
        const __m512i xb = Signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb);
        const __m512i s1 = rdbpot_avx512(srdhm_avx512(_mm512_sll_epi32(_mm512_add_epi32(xa, off1), ls), m1), -p.input1_shift);
        const __m512i s2 = rdbpot_avx512(srdhm_avx512(_mm512_sll_epi32(_mm512_add_epi32(xb, off2), ls), m2), -p.input2_shift);
        __m512i y = _mm512_add_epi32(rdbpot_avx512(srdhm_avx512(_mm512_add_epi32(s1, s2), mo), -p.output_shift), zo);
        y = _mm512_min_epi32(_mm512_max_epi32(y, lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(y));
    }
}

// AVX2 forms: no 64-bit arithmetic shift, but the low 32 bits of q >> 31 are the same for a
// logical shift, and those are all the result keeps.
VNNX_TARGET_AVX2 inline __m256i srdhm_avx2(__m256i x, __m256i m64) {
    const __m256i pos_nudge = _mm256_set1_epi64x(std::int64_t{1} << 30);
    const __m256i neg_nudge = _mm256_set1_epi64x(1 - (std::int64_t{1} << 30));
    const __m256i trunc_fix = _mm256_set1_epi64x((std::int64_t{1} << 31) - 1);
    const __m256i zero = _mm256_setzero_si256();
    __m256i r[2];
    for (int h = 0; h < 2; ++h) {
        const __m256i xs = h == 0 ? x : _mm256_srli_epi64(x, 32);
        const __m256i ab = _mm256_mul_epi32(xs, m64);
        const __m256i neg = _mm256_cmpgt_epi64(zero, ab);
        __m256i q = _mm256_add_epi64(ab, _mm256_blendv_epi8(pos_nudge, neg_nudge, neg));
        q = _mm256_add_epi64(q, _mm256_and_si256(_mm256_cmpgt_epi64(zero, q), trunc_fix));
        r[h] = _mm256_srli_epi64(q, 31);
    }
    return _mm256_blend_epi32(r[0], _mm256_slli_epi64(r[1], 32), 0xAA);
}

VNNX_TARGET_AVX2 inline __m256i rdbpot_avx2(__m256i x, int e) {
    const __m256i one = _mm256_set1_epi32(1);
    const __m256i mask = _mm256_set1_epi32(static_cast<std::int32_t>((std::int64_t{1} << e) - 1));
    const __m256i rem = _mm256_and_si256(x, mask);
    const __m256i thr = _mm256_add_epi32(_mm256_srai_epi32(mask, 1),
                                         _mm256_and_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), x), one));
    const __m256i q = _mm256_sra_epi32(x, _mm_cvtsi32_si128(e));
    return _mm256_add_epi32(q, _mm256_and_si256(_mm256_cmpgt_epi32(rem, thr), one));
}

template <bool Signed>
VNNX_TARGET_AVX2 inline void add_avx2(const add_params& p, const std::uint8_t* a, const std::uint8_t* b,
                                      std::uint8_t* out, std::size_t n) {
    const __m256i off1 = _mm256_set1_epi32(p.input1_offset), off2 = _mm256_set1_epi32(p.input2_offset);
    const __m128i ls = _mm_cvtsi32_si128(p.left_shift);
    const __m256i m1 = _mm256_set1_epi64x(p.input1_multiplier), m2 = _mm256_set1_epi64x(p.input2_multiplier);
    const __m256i mo = _mm256_set1_epi64x(p.output_multiplier);
    const __m256i zo = _mm256_set1_epi32(p.output_offset);
    const __m256i lo = _mm256_set1_epi32(p.act_min), hi = _mm256_set1_epi32(p.act_max);
    // low byte of each 32-bit lane to the front of each 128-bit half, then both halves together
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    for (std::size_t i = 0; i < n; i += 8) {
        const __m128i ra = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(a + i));
        const __m128i rb = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b + i));
        const __m256i xa = Signed ? _mm256_cvtepi8_epi32(ra) : _mm256_cvtepu8_epi32(ra);
        const __m256i xb = Signed ? _mm256_cvtepi8_epi32(rb) : _mm256_cvtepu8_epi32(rb);
        const __m256i s1 = rdbpot_avx2(srdhm_avx2(_mm256_sll_epi32(_mm256_add_epi32(xa, off1), ls), m1), -p.input1_shift);
        const __m256i s2 = rdbpot_avx2(srdhm_avx2(_mm256_sll_epi32(_mm256_add_epi32(xb, off2), ls), m2), -p.input2_shift);
        __m256i y = _mm256_add_epi32(rdbpot_avx2(srdhm_avx2(_mm256_add_epi32(s1, s2), mo), -p.output_shift), zo);
        y = _mm256_min_epi32(_mm256_max_epi32(y, lo), hi);
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(y, pick), join);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(bytes));
    }
}
#endif

inline void add_row(isa::avx2, const add_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    body = n / 8 * 8;
    if (p.input_signed) add_avx2<true>(p, a, b, out, body);
    else add_avx2<false>(p, a, b, out, body);
#endif
    add_row(isa::scalar{}, p, a + body, b + body, out + body, n - body);
}

inline void add_row(isa::avx512_vnni, const add_params& p, const std::uint8_t* a, const std::uint8_t* b,
                    std::uint8_t* out, std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    body = n / 16 * 16;
    if (p.input_signed) add_avx512<true>(p, a, b, out, body);
    else add_avx512<false>(p, a, b, out, body);
#endif
    add_row(isa::scalar{}, p, a + body, b + body, out + body, n - body);
}

}  // namespace detail

// out = a + b element-wise (same element count; broadcasting is the caller's business).
inline void add(isa_kind isa, const add_params& p, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "add") {
    validate_add(p, what);
    if (a.size() != b.size() || a.size() != out.size())
        fail_input(std::string(what) + ": element counts differ (" + std::to_string(a.size()) + ", " +
                   std::to_string(b.size()) + ", output " + std::to_string(out.size()) + ")");
    constexpr std::size_t chunk = 16384;
    const std::size_t chunks = (a.size() + chunk - 1) / chunk;
    auto body = [&](std::size_t c) {
        const std::size_t i = c * chunk, n = std::min(chunk, a.size() - i);
        dispatch(isa, [&](auto tag) { detail::add_row(tag, p, a.data() + i, b.data() + i, out.data() + i, n); });
    };
    if (pool) pool->parallel_for(chunks, body);
    else
        for (std::size_t c = 0; c < chunks; ++c) body(c);
}

}  // namespace vnnx::sim::kernels
// ---- end vnnx/sim/kernels/eltwise.hpp
// ---- begin vnnx/sim/kernels/pool.hpp
// Max and average pooling on channels-first 8-bit codes, with TFLite's semantics: padded
// positions are skipped (max ignores them, the average divides by the count of real elements),
// the average rounds half away from zero, (sum +- count/2) / count in C integer division, and
// the result is clamped to the activation range. Vector lanes run over output columns; the
// SIMD paths handle the interior columns of stride-1 rows and leave borders to the scalar code.


namespace vnnx::sim::kernels {

enum class pool_kind { max, average };

struct pool_shape {
    int channels = 1, height = 1, width = 1;
    int kernel_h = 1, kernel_w = 1;
    int stride_h = 1, stride_w = 1;
    int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
    bool is_signed = true;  // input and output share the type (and quantization)
    int act_min = -128;
    int act_max = 127;

    [[nodiscard]] int out_h() const noexcept { return (height + pad_top + pad_bottom - kernel_h) / stride_h + 1; }
    [[nodiscard]] int out_w() const noexcept { return (width + pad_left + pad_right - kernel_w) / stride_w + 1; }
    [[nodiscard]] std::size_t input_size() const noexcept {
        return static_cast<std::size_t>(channels) * height * width;
    }
    [[nodiscard]] std::size_t output_size() const noexcept {
        return static_cast<std::size_t>(channels) * out_h() * out_w();
    }
};

inline void validate_pool(const pool_shape& s, std::string_view what) {
    const std::string w(what);
    auto range = [&](int v, int lo, int hi, const char* name) {
        if (v < lo || v > hi)
            fail_input(w + ": " + name + " " + std::to_string(v) + " is outside [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "]");
    };
    range(s.channels, 1, 1 << 20, "channel count");
    range(s.height, 1, 1 << 16, "input height");
    range(s.width, 1, 1 << 16, "input width");
    range(s.kernel_h, 1, 1 << 12, "kernel height");
    range(s.kernel_w, 1, 1 << 12, "kernel width");
    range(s.stride_h, 1, 1 << 12, "stride height");
    range(s.stride_w, 1, 1 << 12, "stride width");
    // pads smaller than the window keep at least one real element in every window
    range(s.pad_top, 0, s.kernel_h - 1, "top padding");
    range(s.pad_bottom, 0, s.kernel_h - 1, "bottom padding");
    range(s.pad_left, 0, s.kernel_w - 1, "left padding");
    range(s.pad_right, 0, s.kernel_w - 1, "right padding");
    if (s.kernel_h > s.height + s.pad_top + s.pad_bottom || s.kernel_w > s.width + s.pad_left + s.pad_right)
        fail_input(w + ": the " + std::to_string(s.kernel_h) + "x" + std::to_string(s.kernel_w) +
                   " window is larger than the padded input");
    const int lo = s.is_signed ? -128 : 0, hi = s.is_signed ? 127 : 255;
    if (s.act_min > s.act_max || s.act_min < lo || s.act_max > hi)
        fail_input(w + ": activation bounds [" + std::to_string(s.act_min) + ", " + std::to_string(s.act_max) +
                   "] must be ordered and within [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

// TFLite's average rounding: half away from zero with truncating division.
[[nodiscard]] constexpr std::int32_t rounded_average(std::int32_t sum, std::int32_t count) noexcept {
    return sum > 0 ? (sum + count / 2) / count : (sum - count / 2) / count;
}

namespace detail {

struct pool_row_args {
    const pool_shape* s;
    pool_kind kind;
    const std::uint8_t* plane;  // one channel, H x W
    int y0, y1;                 // clipped input rows of this output row
    std::uint8_t* out;          // one output row
};

inline int code(const pool_shape& s, std::uint8_t b) noexcept {
    return s.is_signed ? static_cast<int>(static_cast<std::int8_t>(b)) : static_cast<int>(b);
}

// Output columns [x_begin, x_end) of one row, the defining arithmetic.
inline void pool_cols_scalar(const pool_row_args& a, int x_begin, int x_end) {
    const pool_shape& s = *a.s;
    for (int ox = x_begin; ox < x_end; ++ox) {
        const int xs = ox * s.stride_w - s.pad_left;
        const int x0 = std::max(0, xs), x1 = std::min(s.width, xs + s.kernel_w);
        std::int32_t acc = a.kind == pool_kind::max ? -1000 : 0;
        for (int y = a.y0; y < a.y1; ++y)
            for (int x = x0; x < x1; ++x) {
                const int v = code(s, a.plane[static_cast<std::size_t>(y) * s.width + x]);
                acc = a.kind == pool_kind::max ? std::max(acc, v) : acc + v;
            }
        if (a.kind == pool_kind::average) acc = rounded_average(acc, (a.y1 - a.y0) * (x1 - x0));
        a.out[ox] = static_cast<std::uint8_t>(std::clamp(acc, s.act_min, s.act_max) & 0xFF);
    }
}

// Columns whose window lies inside the row: [lo, hi).
inline void interior_cols(const pool_shape& s, int& lo, int& hi) {
    lo = (s.pad_left + s.stride_w - 1) / s.stride_w;
    hi = s.width + s.pad_left - s.kernel_w < 0 ? 0 : (s.width + s.pad_left - s.kernel_w) / s.stride_w + 1;
    hi = std::min(hi, s.out_w());
    if (hi < lo) hi = lo;
}

inline void pool_row(isa::scalar, const pool_row_args& a) { pool_cols_scalar(a, 0, a.s->out_w()); }

// Float division is exact enough here: for |n| + count < 2^24 the float quotient cannot cross an
// integer, so truncating it equals C integer division. Windows are limited to 4096 elements.
inline constexpr int simd_avg_max_window = 4096;

#if VNNX_SIM_X86
template <bool Signed>
VNNX_TARGET_AVX512 inline int pool_interior_avx512(const pool_row_args& a, int lo, int hi) {
    const pool_shape& s = *a.s;
    const std::size_t w = static_cast<std::size_t>(s.width);
    int ox = lo;
    if (a.kind == pool_kind::max) {
        const __m512i vlo = _mm512_set1_epi8(static_cast<char>(s.act_min)), vhi = _mm512_set1_epi8(static_cast<char>(s.act_max));
        for (; ox + 64 <= hi; ox += 64) {
            const std::uint8_t* base = a.plane + (ox - s.pad_left);
            __m512i m = _mm512_loadu_si512(base + a.y0 * w);
            for (int y = a.y0; y < a.y1; ++y)
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                    const __m512i v = _mm512_loadu_si512(base + y * w + kx);
                    m = Signed ? _mm512_max_epi8(m, v) : _mm512_max_epu8(m, v);
                }
            m = Signed ? _mm512_min_epi8(_mm512_max_epi8(m, vlo), vhi) : _mm512_min_epu8(_mm512_max_epu8(m, vlo), vhi);
            _mm512_storeu_si512(a.out + ox, m);
        }
        return ox;
    }
    const int count = (a.y1 - a.y0) * s.kernel_w;
    if (count > simd_avg_max_window) return ox;
    const __m512i half = _mm512_set1_epi32(count / 2);
    const __m512 fcount = _mm512_set1_ps(static_cast<float>(count));
    const __m512i vlo = _mm512_set1_epi32(s.act_min), vhi = _mm512_set1_epi32(s.act_max);
    for (; ox + 16 <= hi; ox += 16) {
        const std::uint8_t* base = a.plane + (ox - s.pad_left);
        __m512i sum = _mm512_setzero_si512();
        for (int y = a.y0; y < a.y1; ++y)
            for (int kx = 0; kx < s.kernel_w; ++kx) {
                const __m128i r = _mm_loadu_si128(reinterpret_cast<const __m128i*>(base + y * w + kx));
                sum = _mm512_add_epi32(sum, Signed ? _mm512_cvtepi8_epi32(r) : _mm512_cvtepu8_epi32(r));
            }
        const __mmask16 pos = _mm512_cmpgt_epi32_mask(sum, _mm512_setzero_si512());
        const __m512i n = _mm512_mask_blend_epi32(pos, _mm512_sub_epi32(sum, half), _mm512_add_epi32(sum, half));
        __m512i q = _mm512_cvttps_epi32(_mm512_div_ps(_mm512_cvtepi32_ps(n), fcount));
        q = _mm512_min_epi32(_mm512_max_epi32(q, vlo), vhi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(a.out + ox), _mm512_cvtepi32_epi8(q));
    }
    return ox;
}

template <bool Signed>
VNNX_TARGET_AVX2 inline int pool_interior_avx2(const pool_row_args& a, int lo, int hi) {
    const pool_shape& s = *a.s;
    const std::size_t w = static_cast<std::size_t>(s.width);
    int ox = lo;
    if (a.kind == pool_kind::max) {
        const __m256i vlo = _mm256_set1_epi8(static_cast<char>(s.act_min)), vhi = _mm256_set1_epi8(static_cast<char>(s.act_max));
        for (; ox + 32 <= hi; ox += 32) {
            const std::uint8_t* base = a.plane + (ox - s.pad_left);
            __m256i m = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + a.y0 * w));
            for (int y = a.y0; y < a.y1; ++y)
                for (int kx = 0; kx < s.kernel_w; ++kx) {
                    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(base + y * w + kx));
                    m = Signed ? _mm256_max_epi8(m, v) : _mm256_max_epu8(m, v);
                }
            m = Signed ? _mm256_min_epi8(_mm256_max_epi8(m, vlo), vhi) : _mm256_min_epu8(_mm256_max_epu8(m, vlo), vhi);
            _mm256_storeu_si256(reinterpret_cast<__m256i*>(a.out + ox), m);
        }
        return ox;
    }
    const int count = (a.y1 - a.y0) * s.kernel_w;
    if (count > simd_avg_max_window) return ox;
    const __m256i half = _mm256_set1_epi32(count / 2);
    const __m256 fcount = _mm256_set1_ps(static_cast<float>(count));
    const __m256i vlo = _mm256_set1_epi32(s.act_min), vhi = _mm256_set1_epi32(s.act_max);
    const __m256i pick = _mm256_setr_epi8(0, 4, 8, 12, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 0, 4, 8, 12, -1,
                                          -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
    const __m256i join = _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1);
    for (; ox + 8 <= hi; ox += 8) {
        const std::uint8_t* base = a.plane + (ox - s.pad_left);
        __m256i sum = _mm256_setzero_si256();
        for (int y = a.y0; y < a.y1; ++y)
            for (int kx = 0; kx < s.kernel_w; ++kx) {
                const __m128i r = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(base + y * w + kx));
                sum = _mm256_add_epi32(sum, Signed ? _mm256_cvtepi8_epi32(r) : _mm256_cvtepu8_epi32(r));
            }
        const __m256i pos = _mm256_cmpgt_epi32(sum, _mm256_setzero_si256());
        const __m256i n = _mm256_blendv_epi8(_mm256_sub_epi32(sum, half), _mm256_add_epi32(sum, half), pos);
        __m256i q = _mm256_cvttps_epi32(_mm256_div_ps(_mm256_cvtepi32_ps(n), fcount));
        q = _mm256_min_epi32(_mm256_max_epi32(q, vlo), vhi);
        const __m256i bytes = _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(q, pick), join);
        _mm_storel_epi64(reinterpret_cast<__m128i*>(a.out + ox), _mm256_castsi256_si128(bytes));
    }
    return ox;
}
#endif

template <class Isa>
inline void pool_row(Isa, const pool_row_args& a) {
    const pool_shape& s = *a.s;
    int lo = 0, hi = 0;
    interior_cols(s, lo, hi);
    int done = lo;
#if VNNX_SIM_X86
    if (s.stride_w == 1 && hi > lo) {
        if constexpr (std::is_same_v<Isa, isa::avx512_vnni>)
            done = s.is_signed ? pool_interior_avx512<true>(a, lo, hi) : pool_interior_avx512<false>(a, lo, hi);
        else
            done = s.is_signed ? pool_interior_avx2<true>(a, lo, hi) : pool_interior_avx2<false>(a, lo, hi);
    }
#endif
    pool_cols_scalar(a, 0, lo);
    pool_cols_scalar(a, done, s.out_w());
}

}  // namespace detail

// in: C*H*W codes; out: C*OH*OW codes. Work is split over (channel, output row).
inline void pool2d(isa_kind isa, pool_kind kind, const pool_shape& s, std::span<const std::uint8_t> in,
                   std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "pool") {
    validate_pool(s, what);
    if (in.size() != s.input_size() || out.size() != s.output_size())
        fail_input(std::string(what) + ": input/output have " + std::to_string(in.size()) + "/" +
                   std::to_string(out.size()) + " bytes, expected " + std::to_string(s.input_size()) + "/" +
                   std::to_string(s.output_size()));
    const int oh = s.out_h(), ow = s.out_w();
    const std::size_t rows = static_cast<std::size_t>(s.channels) * oh;
    const std::size_t hw = static_cast<std::size_t>(s.height) * s.width;
    auto body = [&](std::size_t r) {
        const std::size_t c = r / oh;
        const int oy = static_cast<int>(r % oh);
        const int ys = oy * s.stride_h - s.pad_top;
        const detail::pool_row_args a{&s, kind, in.data() + c * hw, std::max(0, ys), std::min(s.height, ys + s.kernel_h),
                                      out.data() + r * ow};
        dispatch(isa, [&](auto tag) { detail::pool_row(tag, a); });
    };
    if (pool) pool->parallel_for(rows, body);
    else
        for (std::size_t r = 0; r < rows; ++r) body(r);
}

}  // namespace vnnx::sim::kernels
// ---- end vnnx/sim/kernels/pool.hpp
// ---- begin vnnx/sim/kernels/mul.hpp
// TFLite's int8/uint8 MUL over raw 8-bit codes of equal shape (SiLU = x * sigmoid(x) runs it on
// every activation of YOLO-style models):
//   y = clamp(MultiplyByQuantizedMultiplier((a + off1) * (b + off2), m, shift) + z_out, lo, hi)
// The scalar form defines the answer; the AVX-512 form is bit-identical (AVX2 uses the scalar).


namespace vnnx::sim::kernels {

struct mul_params {
    std::int32_t input1_offset = 0;  // -z1
    std::int32_t input2_offset = 0;  // -z2
    std::int32_t output_multiplier = 0;
    int output_shift = 0;  // TFLite convention: > 0 shifts left first
    std::int32_t output_offset = 0;
    int act_min = -128;  // already within the output type's range
    int act_max = 127;
    bool input_signed = true;  // both inputs share the type
};

// Whether the parameters keep every intermediate inside int32 (what the kernels assume).
// |(a - za)(b - zb)| <= 510^2 < 2^18: a left shift of at most 12 keeps the scaled product and the
// output offset inside int32; larger shifts take the layer's saturating 64-bit element loop.
[[nodiscard]] inline bool mul_params_in_range(const mul_params& p, bool output_signed) noexcept {
    const int lo = output_signed ? -128 : 0, hi = output_signed ? 127 : 255;
    return p.input1_offset >= -255 && p.input1_offset <= 255 && p.input2_offset >= -255 && p.input2_offset <= 255 &&
           p.output_multiplier >= 0 && p.output_shift >= -31 && p.output_shift <= 12 && p.output_offset >= lo &&
           p.output_offset <= hi && p.act_min <= p.act_max && p.act_min >= lo && p.act_max <= hi;
}

[[nodiscard]] inline std::uint8_t mul_one(const mul_params& p, std::uint8_t a, std::uint8_t b) noexcept {
    const std::int32_t xa = (p.input_signed ? static_cast<std::int8_t>(a) : a) + p.input1_offset;
    const std::int32_t xb = (p.input_signed ? static_cast<std::int8_t>(b) : b) + p.input2_offset;
    const std::int32_t raw =
        quant::multiply_by_quantized_multiplier(xa * xb, p.output_multiplier, p.output_shift) + p.output_offset;
    return static_cast<std::uint8_t>(std::clamp(raw, p.act_min, p.act_max) & 0xFF);
}

namespace detail {

inline void mul_row(isa::scalar, const mul_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) out[i] = mul_one(p, a[i], b[i]);
}

inline void mul_row(isa::avx2, const mul_params& p, const std::uint8_t* a, const std::uint8_t* b, std::uint8_t* out,
                    std::size_t n) {
    mul_row(isa::scalar{}, p, a, b, out, n);
}

#if VNNX_SIM_X86
template <bool Signed>
VNNX_TARGET_AVX512 inline void mul_avx512(const mul_params& p, const std::uint8_t* a, const std::uint8_t* b,
                                          std::uint8_t* out, std::size_t n) {
    const __m512i off1 = _mm512_set1_epi32(p.input1_offset), off2 = _mm512_set1_epi32(p.input2_offset);
    const __m128i left = _mm_cvtsi32_si128(p.output_shift > 0 ? p.output_shift : 0);
    const int right = p.output_shift > 0 ? 0 : -p.output_shift;
    const __m512i m = _mm512_set1_epi64(p.output_multiplier);
    const __m512i zo = _mm512_set1_epi32(p.output_offset);
    const __m512i lo = _mm512_set1_epi32(p.act_min), hi = _mm512_set1_epi32(p.act_max);
    for (std::size_t i = 0; i < n; i += 16) {
        const __m128i ra = _mm_loadu_si128(reinterpret_cast<const __m128i*>(a + i));
        const __m128i rb = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i));
        const __m512i xa = _mm512_add_epi32(Signed ? _mm512_cvtepi8_epi32(ra) : _mm512_cvtepu8_epi32(ra), off1);
        const __m512i xb = _mm512_add_epi32(Signed ? _mm512_cvtepi8_epi32(rb) : _mm512_cvtepu8_epi32(rb), off2);
        // The left shift wraps in 32 bits, as the scalar form does.
        const __m512i prod = _mm512_sll_epi32(_mm512_mullo_epi32(xa, xb), left);
        __m512i y = _mm512_add_epi32(rdbpot_avx512(srdhm_avx512(prod, m), right), zo);
        y = _mm512_min_epi32(_mm512_max_epi32(y, lo), hi);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm512_cvtepi32_epi8(y));
    }
}
#endif

inline void mul_row(isa::avx512_vnni, const mul_params& p, const std::uint8_t* a, const std::uint8_t* b,
                    std::uint8_t* out, std::size_t n) {
    std::size_t body = 0;
#if VNNX_SIM_X86
    body = n / 16 * 16;
    if (p.input_signed) mul_avx512<true>(p, a, b, out, body);
    else mul_avx512<false>(p, a, b, out, body);
#endif
    mul_row(isa::scalar{}, p, a + body, b + body, out + body, n - body);
}

}  // namespace detail

// out = a * b element-wise (same element count). The parameters must pass mul_params_in_range.
inline void mul(isa_kind isa, const mul_params& p, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                std::span<std::uint8_t> out, thread_pool* pool = nullptr, std::string_view what = "mul") {
    if (a.size() != b.size() || a.size() != out.size())
        fail_input(std::string(what) + ": element counts differ (" + std::to_string(a.size()) + ", " +
                   std::to_string(b.size()) + ", output " + std::to_string(out.size()) + ")");
    constexpr std::size_t chunk = 16384;
    const std::size_t chunks = (a.size() + chunk - 1) / chunk;
    auto body = [&](std::size_t c) {
        const std::size_t i = c * chunk, n = std::min(chunk, a.size() - i);
        dispatch(isa, [&](auto tag) { detail::mul_row(tag, p, a.data() + i, b.data() + i, out.data() + i, n); });
    };
    if (pool) pool->parallel_for(chunks, body);
    else
        for (std::size_t c = 0; c < chunks; ++c) body(c);
}

}  // namespace vnnx::sim::kernels
// ---- end vnnx/sim/kernels/mul.hpp
// ---- begin vnnx/compiler/compile.hpp
// vnnx::compile: TFLite bytes in, VNNX bytes and a per-node report out, in one call.
// Pipeline (lowering.md §1.2): verify → transforms (§3) → split (§4) → tile (§10) →
// lower (§5–§9) → memory plan and emit (§11, vnnx-format.md §7).

#include <fmt/format.h>

// ---- begin vnnx/compiler/build.hpp
// Builds one VNNX node from one split (lowering.md §5): the node type comes from the first
// operator; an IDENTITY node runs every operator, the first included, as a layer; other nodes
// lower their first operator themselves and run the rest as layers.

// ---- begin vnnx/compiler/split.hpp
// Cutting the ordered operator list into splits; each split becomes one VNNX node whose first
// operator decides the node type and whose other operators become its subnodes
// (lowering.md §4). LUT chains are single operators of kind `lut` in this graph, so the
// "LUT pattern" of the SDK is one operator here.


namespace vnnx::compiler {

using split = std::vector<std::int32_t>;  // operator indices, in order

namespace detail {

using B = builtin_operator;

inline bool is(const op& o, B code) { return o.kind == op_type::builtin && o.code == code; }

inline bool is_any(const op& o, std::initializer_list<B> codes) {
    return o.kind == op_type::builtin && std::find(codes.begin(), codes.end(), o.code) != codes.end();
}

struct graph_index {
    std::vector<std::vector<std::int32_t>> consumers;  // per tensor: operators reading it
    std::vector<std::int32_t> producer;                // per tensor: operator writing it, -1

    explicit graph_index(const graph& g) : consumers(g.tensors.size()), producer(g.tensors.size(), -1) {
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            for (auto t : g.ops[i].inputs)
                if (t >= 0) {
                    auto& c = consumers[static_cast<std::size_t>(t)];
                    if (c.empty() || c.back() != static_cast<std::int32_t>(i)) c.push_back(static_cast<std::int32_t>(i));
                }
            for (auto t : g.ops[i].outputs)
                if (t >= 0) producer[static_cast<std::size_t>(t)] = static_cast<std::int32_t>(i);
        }
    }
};

/// Channels-first H and W of a TFLite shape are its dims -3 and -2 (rank >= 3) or the two dims (rank 2).
inline bool spatial_singleton(const tensor& t) {
    const auto r = t.shape.size();
    if (r < 2) return false;
    const std::int32_t h = r >= 3 ? t.shape[r - 3] : t.shape[0];
    const std::int32_t w = r >= 3 ? t.shape[r - 2] : t.shape[1];
    return h == 1 && w == 1;
}

inline std::vector<std::int32_t> non_one_dims(const std::vector<std::int32_t>& s) {
    std::vector<std::int32_t> out;
    for (auto d : s)
        if (d != 1) out.push_back(d);
    return out;
}

}  // namespace detail

/// Operators that always start a node of their own (rule 5). TILE is added: it has a node
/// type but no layer form, so it must never land inside another operator's split.
inline bool starts_own_node(const op& o) {
    using B = builtin_operator;
    return detail::is_any(o, {B::CONV_2D, B::DEPTHWISE_CONV_2D, B::TRANSPOSE_CONV, B::BATCH_MATMUL, B::FULLY_CONNECTED,
                              B::UNIDIRECTIONAL_SEQUENCE_LSTM, B::SPLIT, B::SPLIT_V, B::PACK, B::UNPACK, B::TRANSPOSE,
                              B::SOFTMAX, B::ARG_MAX, B::CONCATENATION, B::TILE});
}

inline std::vector<split> split_graph(const graph& g) {
    using B = builtin_operator;
    using namespace detail;
    const graph_index idx(g);
    auto is_graph_output = [&](std::int32_t t) {
        return std::find(g.outputs.begin(), g.outputs.end(), t) != g.outputs.end();
    };
    auto is_const = [&](std::int32_t t) { return t >= 0 && g.t(t).is_constant(); };
    auto is_conv = [&](const op& o) { return is_any(o, {B::CONV_2D, B::DEPTHWISE_CONV_2D, B::TRANSPOSE_CONV}); };

    std::vector<split> out;
    split cur;
    bool cur_has_lut = false;
    auto close = [&] {
        if (!cur.empty()) out.push_back(std::move(cur));
        cur.clear();
        cur_has_lut = false;
    };
    auto append = [&](std::int32_t i) {
        cur.push_back(i);
        if (g.ops[static_cast<std::size_t>(i)].kind == op_type::lut) cur_has_lut = true;
    };

    for (std::size_t ii = 0; ii < g.ops.size(); ++ii) {
        const auto i = static_cast<std::int32_t>(ii);
        const op& o = g.ops[ii];
        if (ii == 0) {
            append(i);
            continue;
        }
        const op& prev = g.ops[ii - 1];
        bool connected = false;
        for (auto t : o.inputs)
            if (t >= 0 && std::find(prev.outputs.begin(), prev.outputs.end(), t) != prev.outputs.end()) connected = true;
        bool forked = prev.outputs.size() > 1;
        for (auto t : prev.outputs)
            if (t >= 0 && idx.consumers[static_cast<std::size_t>(t)].size() > 1) forked = true;
        bool feeds_output = false;
        for (auto t : o.inputs)
            if (t >= 0 && is_graph_output(t)) feeds_output = true;
        std::size_t n_act_inputs = 0;
        bool any_const = false;
        for (auto t : o.inputs) {
            if (t < 0) continue;
            if (is_const(t)) any_const = true;
            else ++n_act_inputs;
        }
        const bool multi_input = n_act_inputs > 1 && !any_const;
        bool singleton = false;
        for (auto t : o.inputs)
            if (t >= 0 && spatial_singleton(g.t(t))) singleton = true;

        // Rule 1: after a PAD that pads channels, or that feeds a pool, start anew.
        if (is_any(prev, {B::PAD, B::PADV2})) {
            bool pads_channels = false;
            if (prev.inputs.size() > 1 && is_const(prev.inputs[1])) {
                auto pads = g.t(prev.inputs[1]).values<std::int32_t>();
                if (pads.size() >= 2 && pads[pads.size() - 2] + pads[pads.size() - 1] > 0) pads_channels = true;
            }
            bool feeds_pool = false;
            if (!prev.outputs.empty() && prev.outputs[0] >= 0) {
                const auto& cons = idx.consumers[static_cast<std::size_t>(prev.outputs[0])];
                if (!cons.empty())
                    feeds_pool = is_any(g.ops[static_cast<std::size_t>(cons[0])], {B::MAX_POOL_2D, B::AVERAGE_POOL_2D});
            }
            if (pads_channels || feeds_pool) close();
        }
        // Rule 2: a concatenation or strided slice always ends its split.
        if (is_any(prev, {B::CONCATENATION, B::STRIDED_SLICE})) close();

        // Rule 3: a LUT chain joins the current split unless one is already there.
        if (o.kind == op_type::lut) {
            const bool partial = forked;  // the chain takes one consumer of a forked tensor
            if (cur_has_lut || partial || !connected) close();
            append(i);
            continue;
        }
        // Rule 4.
        if (forked || feeds_output || !connected) {
            close();
            append(i);
            continue;
        }
        // Rule 5.
        if (starts_own_node(o)) {
            close();
            append(i);
            continue;
        }
        const op* first = cur.empty() ? nullptr : &g.ops[static_cast<std::size_t>(cur.front())];
        const bool after_conv = is_conv(prev);
        // Rules 6-7: activations and pools following a conv stay in its node.
        if (after_conv && is_any(o, {B::RELU, B::RELU6, B::RELU_N1_TO_1, B::LEAKY_RELU, B::PRELU, B::HARD_SWISH,
                                     B::LOGISTIC, B::TANH, B::ELU, B::GELU})) {
            append(i);
            continue;
        }
        if (is_any(o, {B::MAX_POOL_2D, B::AVERAGE_POOL_2D}) && first != nullptr && is_conv(*first) && cur.size() >= 2 &&
            (prev.kind == op_type::lut || is_any(prev, {B::RELU, B::RELU6, B::LEAKY_RELU}))) {
            append(i);
            continue;
        }
        // Rule 8: ADD or MUL right after a conv.
        if (after_conv && is_any(o, {B::ADD, B::MUL})) {
            bool per_channel_const = false;
            if (o.inputs.size() > 1 && is_const(o.inputs[1])) {
                const auto& s = g.t(o.inputs[1]).shape;
                per_channel_const = s.size() <= 1;
                if (!per_channel_const) {
                    per_channel_const = true;
                    for (std::size_t d = 0; d + 1 < s.size(); ++d)
                        if (s[d] != 1) per_channel_const = false;
                }
            }
            if (!per_channel_const && multi_input && singleton) close();
            append(i);
            continue;
        }
        // Rule 9.
        if (is(o, B::RESIZE_BILINEAR)) {
            close();
            append(i);
            continue;
        }
        // Rule 10: a reshape that moves data starts a node.
        if (is(o, B::RESHAPE) && !o.inputs.empty() && !o.outputs.empty() &&
            non_one_dims(g.t(o.inputs[0]).shape) != non_one_dims(g.t(o.outputs[0]).shape)) {
            close();
            append(i);
            continue;
        }
        // Rule 11.
        if (is_any(o, {B::ADD, B::SUB, B::MUL, B::DIV, B::SQUARED_DIFFERENCE, B::GREATER, B::GREATER_EQUAL, B::LESS,
                       B::LESS_EQUAL, B::EQUAL, B::NOT_EQUAL}) &&
            multi_input && singleton) {
            close();
            append(i);
            continue;
        }
        append(i);  // Rule 12.
    }
    close();
    return out;
}

/// Cuts a split that could not be tiled (lowering.md §4, "re-splitting on allocation
/// failure"): before the second operator, or before the third when the first two are a conv
/// and its fused activation table. Returns false for a single operator (nothing to cut).
inline bool cut_split(const graph& g, std::vector<split>& splits, std::size_t which) {
    auto& s = splits.at(which);
    if (s.size() < 2) return false;
    std::size_t at = 1;
    const op& first = g.ops[static_cast<std::size_t>(s[0])];
    const op& second = g.ops[static_cast<std::size_t>(s[1])];
    const bool conv_first = detail::is_any(first, {builtin_operator::CONV_2D, builtin_operator::DEPTHWISE_CONV_2D,
                                                   builtin_operator::TRANSPOSE_CONV});
    if (conv_first && second.kind == op_type::lut && s.size() > 2) at = 2;
    split tail(s.begin() + static_cast<std::ptrdiff_t>(at), s.end());
    s.resize(at);
    splits.insert(splits.begin() + static_cast<std::ptrdiff_t>(which) + 1, std::move(tail));
    return true;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/split.hpp
// ---- begin vnnx/ops/registry.hpp
// The list of supported operators, folded at compile time into a table indexed by the TFLite
// builtin code: lookup is one array access, and an unsupported operator is known before any
// work starts. The same table drives `vnnx ops`, `vnnx info`'s diagnostics and the lowering.

// ---- begin vnnx/ops/all.hpp
// Every operator trait. To add an operator: write its trait in the header of its family and
// include that header here; ops/registry.hpp picks it up.
// ---- begin vnnx/ops/lut.hpp
// LUT (303): a chain of element-wise 8-bit operators replaced by 256-entry tables
// (lowering.md §3.4, §7.6.1, §8.6). One table per channel of a small per-channel constant
// (1..4). The serialized table is in byte order: entry r is the output for the input whose
// byte value is r.


namespace vnnx::ops {

struct lut_op {
    static constexpr builtin_operator code = builtin_operator::CUSTOM;  // not a TFLite operator
    static constexpr std::string_view summary = "chain of element-wise operators as 256-entry tables";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::LUT);
    static constexpr std::string_view member = "ActivationOptions";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.tables.empty() || o.tables.size() > 4) return "a LUT needs 1 to 4 tables";
        for (const auto& t : o.tables)
            if (t.size() != 256) return "a LUT table needs 256 entries";
        if (o.tables.size() > 1) {
            const auto& s = g.t(o.inputs.at(0)).shape;
            if (s.empty() || s.back() != static_cast<std::int32_t>(o.tables.size()))
                return "per-channel tables need as many channels as tables";
        }
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const bool wide = c.g.t(o.outputs.at(0)).type == tflite::tensor_type::INT32;
        std::vector<std::uint8_t> bytes;
        for (const auto& table : o.tables) {
            if (wide) {
                for (int plane = 0; plane < 4; ++plane)
                    for (auto v : table) bytes.push_back(static_cast<std::uint8_t>(static_cast<std::uint32_t>(v) >> (8 * plane)));
            } else {
                for (auto v : table) bytes.push_back(static_cast<std::uint8_t>(v));
            }
        }
        format::layer_options::ActivationOptions a{};
        a.input_range_radius = -1;
        a.count = -1;
        a.lut_count = static_cast<std::int32_t>(o.tables.size());
        a.vci_int8 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(bytes))};
        a.lut_int8 = format::absent_offset;
        a.idx_int8 = format::absent_offset;
        l.set(a);
    }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/lut.hpp
// ---- begin vnnx/ops/activations.hpp
// Single-input element-wise operators (lowering.md §7.6). In the default flow the LUT pass
// (§3.4) turns every one of them into a LUT layer; when an operator reaches lowering on its
// own (the LUT pass did not run or did not take it) it becomes:
//   - RELU, RELU6, RELU_N1_TO_1, RELU_0_TO_1: their own layer with clamp bounds (§7.6.7);
//   - LEAKY_RELU: the leakyrelu layer (§7.6.6);
//   - ABS: the ABS layer (§7.6.7; not a LUT member in §3.4);
//   - QUANTIZE between 8-bit types: the DEQUANTIZE requantization layer (§7.6.4);
//   - the others (tables only): a one-operator LUT computed by compiler/lut_tables.hpp.

// ---- begin vnnx/compiler/lut_tables.hpp
// The default LUT table evaluator (lowering.md §3.4, §8.6.2): like the SDK, a chain of
// element-wise operators is saved as a tiny TFLite model whose activation tensors all have
// shape [1, 1, 256, L], fed with the 256 input codes (cast to the input type, so an int8
// input sees 0..127, -128..-1, which puts code v at row v & 0xFF) in every channel, and run
// with the reference interpreter. Row r, column c of the output is entry r of table c. The
// tables are thus exactly the interpreter's own integer kernels, never a second formula.

// ---- begin vnnx/compiler/passes/lut.hpp
// The LUT pass (lowering.md §3.4): chains of element-wise single-input operators on 8-bit
// data become one table lookup. Here a chain becomes one operator of kind `lut` holding the
// tables (1..4, one per channel of a small per-channel constant); the tables are computed by
// running the chain's reference kernels on all 256 input codes (`evaluate`), so they are
// exactly TFLite's integer results.


namespace vnnx::compiler::passes {

/// Computes the tables of a chain: for the chain's operators (in order) applied to a tensor
/// of shape [1, 1, 256, L] holding the codes 0..255 in every channel (cast to the input type),
/// returns L tables of 256 entries (entry r = output for input byte r).
using lut_evaluator =
    std::function<std::vector<std::vector<std::int32_t>>(const graph&, const std::vector<std::int32_t>& chain, int tables)>;

namespace detail {

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// Number of tables an operator needs inside a chain (1), 2..4 for a small per-channel
/// constant, or 0 when the operator cannot join a chain.
inline int lut_tables(const graph& g, const op& o, std::int32_t chain_input) {
    using B = builtin_operator;
    if (o.kind != op_type::builtin || o.outputs.size() != 1 || o.inputs.empty()) return 0;
    const tensor& out = g.t(o.outputs[0]);
    switch (o.code) {
        case B::HARD_SWISH: case B::LOGISTIC: case B::TANH: case B::LEAKY_RELU: case B::RELU: case B::RELU6:
        case B::RELU_N1_TO_1: case B::RELU_0_TO_1: case B::RSQRT: case B::SQRT: case B::EXP: case B::LOG:
        case B::ELU: case B::GELU: case B::NEG:  // not ABS: §3.4 leaves it to its own layer (§7.6.7)
            return is_8bit(out.type) && is_8bit(g.t(o.inputs[0]).type) && o.inputs.size() == 1 ? 1 : 0;
        case B::QUANTIZE:
            return is_8bit(out.type) && is_8bit(g.t(o.inputs[0]).type) ? 1 : 0;
        case B::ADD: case B::SUB: case B::MUL: case B::DIV: case B::SQUARED_DIFFERENCE: case B::MAXIMUM:
        case B::MINIMUM: case B::PRELU: {
            if (o.inputs.size() != 2 || !is_8bit(out.type)) return 0;
            const std::int32_t a = o.inputs[0], b = o.inputs[1];
            if (a == b) return (o.code == B::ADD || o.code == B::MUL) && a == chain_input ? 1 : 0;  // x+x, x·x
            const std::int32_t c = g.t(a).is_constant() ? a : (g.t(b).is_constant() ? b : -1);
            if (c < 0) {
                return 0;
            }
            const tensor& k = g.t(c);
            if (!is_8bit(k.type) || k.element_count() > 4) return 0;
            if (!is_8bit(g.t(c == a ? b : a).type)) return 0;
            if (g.t(c == a ? b : a).shape != out.shape) return 0;  // the constant must not widen the tensor
            if (k.element_count() > 1) {
                // Per-channel constants only: every dim but the last is 1.
                for (std::size_t d = 0; d + 1 < k.shape.size(); ++d)
                    if (k.shape[d] != 1) return 0;
                return k.shape.empty() ? 1 : k.shape.back();
            }
            return 1;
        }
        default:
            return 0;
    }
}

}  // namespace detail

inline void lut_pass(graph& g, const lut_evaluator& evaluate) {
    using B = builtin_operator;
    auto readers = [&](std::int32_t t) { return readers_of(g, t); };
    std::vector<std::uint8_t> consumed(g.ops.size(), 0);
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (std::size_t i = 0; i < g.ops.size(); ++i) {
        if (consumed[i]) continue;
        const op& first = g.ops[i];
        // The chain's one activation input: SUB(constant, x) reads it as input 1.
        std::int32_t chain_in = -1;
        for (auto x : first.inputs)
            if (x >= 0 && !g.t(x).is_constant()) {
                chain_in = x;
                break;
            }
        if (chain_in < 0 || g.t(chain_in).is_constant() || detail::lut_tables(g, first, chain_in) == 0) {
            out.push_back(g.ops[i]);
            continue;
        }
        std::vector<std::int32_t> chain{static_cast<std::int32_t>(i)};
        int tables = detail::lut_tables(g, first, chain_in);
        std::int32_t cur_out = first.outputs[0];
        for (;;) {
            if (is_graph_output(g, cur_out)) break;
            const auto rs = readers(cur_out);
            std::size_t next = 0;
            bool ok = false;
            if (rs.size() == 1) {
                next = rs[0];
                ok = true;
            }
            // SiLU: LOGISTIC followed by a MUL with the LOGISTIC's own input.
            const op& last = g.ops[static_cast<std::size_t>(chain.back())];
            if (!ok || consumed[next] || next <= static_cast<std::size_t>(chain.back())) break;
            const op& cand = g.ops[next];
            int t = detail::lut_tables(g, cand, cur_out);
            if (t == 0 && last.code == B::LOGISTIC && cand.kind == op_type::builtin && cand.code == B::MUL &&
                cand.inputs.size() == 2 && last.inputs[0] == chain_in &&
                ((cand.inputs[0] == cur_out && cand.inputs[1] == chain_in) ||
                 (cand.inputs[1] == cur_out && cand.inputs[0] == chain_in)))
                t = 1;
            if (t == 0) break;
            // Every input of the candidate is the chain value, the chain input (SiLU) or a constant.
            bool inputs_ok = true;
            for (auto x : cand.inputs)
                if (x != cur_out && x != chain_in && !g.t(x).is_constant()) inputs_ok = false;
            if (!inputs_ok) break;
            if (std::max(tables, t) > 4) break;
            tables = std::max(tables, t);
            chain.push_back(static_cast<std::int32_t>(next));
            cur_out = cand.outputs[0];
        }
        // A lone QUANTIZE between 8-bit types is a requantization: a table as well.
        op lut;
        lut.kind = op_type::lut;
        lut.inputs = {chain_in};
        lut.outputs = {cur_out};
        lut.source_index = first.source_index;
        lut.tables = evaluate(g, chain, tables);
        for (auto c : chain) consumed[static_cast<std::size_t>(c)] = 1;
        out.push_back(std::move(lut));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/lut.hpp
// ---- begin vnnx/ref/interpreter.hpp
// The reference interpreter: runs subgraph 0 of a TFLite model operator by operator with
// TFLite's 8-bit integer semantics (see the kernel headers beside this one). It defines the
// answer the simulator is compared with, so it stays scalar and simple.

// ---- begin vnnx/ref/activations.hpp
// Single-input 8-bit kernels with TFLite's interpreter semantics: RELU family, LEAKY_RELU,
// HARD_SWISH (int16 fixed point), LOGISTIC/TANH (float-built 256-entry tables), QUANTIZE
// (requantize or from float) and DEQUANTIZE.

// ---- begin vnnx/quant/lut.hpp
// 256-entry lookup tables over 8-bit codes (lowering.md §8.6). A table is indexed by the
// code's byte value r = code & 0xFF (int8: order 0..127, −128..−1; uint8: r = code).

namespace vnnx::quant {

template <class T>
concept byte_code = std::is_same_v<T, std::int8_t> || std::is_same_v<T, std::uint8_t>;

/// The table slot of a code: its byte value.
template <byte_code T>
[[nodiscard]] constexpr std::size_t lut_index(T code) noexcept {
    return static_cast<std::uint8_t>(code);
}

/// Runs `kernel(code) -> Out` over every code of T; entry r holds the result for the code
/// whose byte value is r.
template <byte_code T, class Out, class Kernel>
[[nodiscard]] std::array<Out, 256> build_lut(Kernel&& kernel) {
    std::array<Out, 256> table{};
    for (int v = std::numeric_limits<T>::min(); v <= std::numeric_limits<T>::max(); ++v)
        table[lut_index(static_cast<T>(v))] = static_cast<Out>(kernel(static_cast<T>(v)));
    return table;
}

/// TFLite's float-LUT recipe (LOGISTIC, TANH, ELU, EXP, ... in its optimized kernels):
/// dequantize in float32, apply f in float32, q = round(f · (1/S_out)) + z_out, clamp.
/// A NaN result maps to the type minimum (the SDK's choice; TFLite leaves it undefined).
template <byte_code T, class F>
[[nodiscard]] std::array<T, 256> float_lut(float s_in, std::int32_t z_in, float s_out, std::int32_t z_out, F&& f) {
    const float inverse_scale = 1.0f / s_out;
    constexpr std::int32_t lo = std::numeric_limits<T>::min();
    constexpr std::int32_t hi = std::numeric_limits<T>::max();
    return build_lut<T, T>([&](T v) {
        const float dequantized = s_in * static_cast<float>(static_cast<std::int32_t>(v) - z_in);
        const float transformed = f(dequantized);
        const float rescaled = std::round(transformed * inverse_scale);
        const float shifted = rescaled + static_cast<float>(z_out);
        if (std::isnan(shifted)) return static_cast<T>(lo);
        const float clamped = std::clamp(shifted, static_cast<float>(lo), static_cast<float>(hi));
        return static_cast<T>(static_cast<std::int32_t>(clamped));
    });
}

/// Applies a table to one code.
template <byte_code T, class Out>
[[nodiscard]] constexpr Out lut_lookup(const std::array<Out, 256>& table, T code) noexcept {
    return table[lut_index(code)];
}

/// The SDK's intermediate GATHER tables hold the entry for int8 code v at v + 128; the
/// serialized table is in byte order. Converts the former into the latter.
template <class Out>
[[nodiscard]] constexpr std::array<Out, 256> rotate_from_offset_order(const std::array<Out, 256>& offset_order) noexcept {
    std::array<Out, 256> out{};
    for (int v = -128; v <= 127; ++v) out[static_cast<std::uint8_t>(v)] = offset_order[static_cast<std::size_t>(v + 128)];
    return out;
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/lut.hpp
// ---- begin vnnx/ref/eltwise.hpp
// Two-input element-wise ops with broadcasting, TFLite int8/uint8 semantics: ADD/SUB rescale
// both inputs to a common scale after a left shift of 20, MUL requantizes the product,
// MINIMUM/MAXIMUM compare raw codes. All use double rounding.

// ---- begin vnnx/ref/shape.hpp
// Shape helpers shared by the reference kernels: NHWC indexing, TFLite's padding rule and
// NumPy-style broadcasting of two operands.


namespace vnnx::ref {

using shape_t = std::vector<std::int32_t>;

[[nodiscard]] inline std::int64_t flat_size(std::span<const std::int32_t> s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// Pads a shape with leading 1s up to `rank` (TFLite's RuntimeShape::ExtendedShape).
[[nodiscard]] inline shape_t extend_shape(std::span<const std::int32_t> s, std::size_t rank) {
    if (s.size() > rank) fail(error_kind::unsupported, "shape of rank " + std::to_string(s.size()) + " exceeds " + std::to_string(rank));
    shape_t out(rank - s.size(), 1);
    out.insert(out.end(), s.begin(), s.end());
    return out;
}

struct nhwc {
    std::int32_t n = 1, h = 1, w = 1, c = 1;
    [[nodiscard]] std::int64_t at(std::int32_t b, std::int32_t y, std::int32_t x, std::int32_t ch) const noexcept {
        return ((static_cast<std::int64_t>(b) * h + y) * w + x) * c + ch;
    }
    [[nodiscard]] std::int64_t size() const noexcept { return static_cast<std::int64_t>(n) * h * w * c; }
};

[[nodiscard]] inline nhwc as_nhwc(std::span<const std::int32_t> s) {
    const auto e = extend_shape(s, 4);
    return {e[0], e[1], e[2], e[3]};
}

enum class padding { same, valid };

/// TFLite ComputePaddingHeightWidth for one axis: the padding before the first element.
[[nodiscard]] constexpr std::int32_t compute_padding(std::int32_t stride, std::int32_t dilation, std::int32_t in_size,
                                                     std::int32_t filter_size, std::int32_t out_size) noexcept {
    const std::int32_t effective = (filter_size - 1) * dilation + 1;
    const std::int32_t total = std::max((out_size - 1) * stride + effective - in_size, 0);
    return total / 2;
}

/// TFLite ComputeOutSize.
[[nodiscard]] constexpr std::int32_t compute_out_size(padding p, std::int32_t in_size, std::int32_t filter_size,
                                                      std::int32_t stride, std::int32_t dilation = 1) noexcept {
    const std::int32_t effective = (filter_size - 1) * dilation + 1;
    if (stride == 0) return 0;
    return p == padding::same ? (in_size + stride - 1) / stride : (in_size + stride - effective) / stride;
}

/// NumPy broadcast of two shapes; throws naming `what` when they do not broadcast.
[[nodiscard]] inline shape_t broadcast_shape(std::span<const std::int32_t> a, std::span<const std::int32_t> b,
                                             const std::string& what) {
    const std::size_t r = std::max(a.size(), b.size());
    const auto ea = extend_shape(a, r), eb = extend_shape(b, r);
    shape_t out(r);
    for (std::size_t i = 0; i < r; ++i) {
        if (ea[i] != eb[i] && ea[i] != 1 && eb[i] != 1)
            fail_input(what + ": shapes do not broadcast (axis " + std::to_string(i) + ": " + std::to_string(ea[i]) +
                       " vs " + std::to_string(eb[i]) + ")");
        out[i] = ea[i] == 1 ? eb[i] : ea[i];
    }
    return out;
}

/// Calls f(index_a, index_b, index_out) for every output element of a broadcast.
template <class F>
void for_each_broadcast(std::span<const std::int32_t> a, std::span<const std::int32_t> b, const shape_t& out, F&& f) {
    const std::size_t r = out.size();
    const auto ea = extend_shape(a, r), eb = extend_shape(b, r);
    std::vector<std::int64_t> sa(r), sb(r);
    std::int64_t ma = 1, mb = 1;
    for (std::size_t i = r; i-- > 0;) {
        sa[i] = ea[i] == 1 ? 0 : ma;
        sb[i] = eb[i] == 1 ? 0 : mb;
        ma *= ea[i];
        mb *= eb[i];
    }
    const std::int64_t total = flat_size(out);
    std::vector<std::int32_t> idx(r, 0);
    std::int64_t ia = 0, ib = 0;
    for (std::int64_t o = 0; o < total; ++o) {
        f(ia, ib, o);
        for (std::size_t d = r; d-- > 0;) {
            ++idx[d];
            ia += sa[d];
            ib += sb[d];
            if (idx[d] < out[d]) break;
            ia -= sa[d] * idx[d];
            ib -= sb[d] * idx[d];
            idx[d] = 0;
        }
    }
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/shape.hpp

namespace vnnx::ref {

struct operand_quant {
    float scale = 1.0f;
    std::int32_t zero_point = 0;
};

struct add_params {
    int left_shift = 20;
    std::int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
    quant::quantized_multiplier input1, input2, output;
    quant::activation_range act{-128, 127};
};

/// TFLite's PrepareGeneralSubOp / add Prepare for 8-bit types.
[[nodiscard]] inline add_params make_add_params(operand_quant a, operand_quant b, operand_quant out,
                                                quant::activation_range act) {
    add_params p;
    p.input1_offset = -a.zero_point;
    p.input2_offset = -b.zero_point;
    p.output_offset = out.zero_point;
    const double twice_max = 2 * static_cast<double>(std::max(a.scale, b.scale));
    p.input1 = quant::quantize_multiplier(static_cast<double>(a.scale) / twice_max);
    p.input2 = quant::quantize_multiplier(static_cast<double>(b.scale) / twice_max);
    // (1 << 20) * scale is a float product in TFLite; a power of two keeps it exact.
    p.output = quant::quantize_multiplier(twice_max / static_cast<double>(static_cast<float>(1 << p.left_shift) * out.scale));
    p.act = act;
    return p;
}

namespace detail {
inline std::int32_t scale_input(std::int32_t x, std::int32_t offset, int left_shift, quant::quantized_multiplier m) {
    const std::int32_t shifted = (x + offset) * (1 << left_shift);
    return quant::multiply_by_quantized_multiplier_smaller_than_one_exp(shifted, m.multiplier, m.shift);
}
}  // namespace detail

template <class T>
void add(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b, std::span<const std::int32_t> sb,
         std::span<T> out, const add_params& p, bool subtract = false) {
    const auto os = broadcast_shape(sa, sb, subtract ? "SUB" : "ADD");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int32_t x = detail::scale_input(a[static_cast<std::size_t>(ia)], p.input1_offset, p.left_shift, p.input1);
        const std::int32_t y = detail::scale_input(b[static_cast<std::size_t>(ib)], p.input2_offset, p.left_shift, p.input2);
        const std::int32_t raw = subtract ? x - y : x + y;
        const std::int32_t r = quant::multiply_by_quantized_multiplier_smaller_than_one_exp(raw, p.output.multiplier,
                                                                                            p.output.shift) +
                               p.output_offset;
        out[static_cast<std::size_t>(io)] = static_cast<T>(std::clamp(r, p.act.min, p.act.max));
    });
}

struct mul_params {
    std::int32_t input1_offset = 0, input2_offset = 0, output_offset = 0;
    quant::quantized_multiplier output;
    quant::activation_range act{-128, 127};
};

[[nodiscard]] inline mul_params make_mul_params(operand_quant a, operand_quant b, operand_quant out,
                                                quant::activation_range act) {
    mul_params p;
    p.input1_offset = -a.zero_point;
    p.input2_offset = -b.zero_point;
    p.output_offset = out.zero_point;
    // TFLite computes this product and quotient in float before widening.
    const float real = a.scale * b.scale / out.scale;
    p.output = quant::quantize_multiplier(static_cast<double>(real));
    p.act = act;
    return p;
}

template <class T>
void mul(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b, std::span<const std::int32_t> sb,
         std::span<T> out, const mul_params& p) {
    const auto os = broadcast_shape(sa, sb, "MUL");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int32_t prod = (static_cast<std::int32_t>(a[static_cast<std::size_t>(ia)]) + p.input1_offset) *
                                  (static_cast<std::int32_t>(b[static_cast<std::size_t>(ib)]) + p.input2_offset);
        const std::int32_t r =
            quant::multiply_by_quantized_multiplier(prod, p.output.multiplier, p.output.shift) + p.output_offset;
        out[static_cast<std::size_t>(io)] = static_cast<T>(std::clamp(r, p.act.min, p.act.max));
    });
}

/// MAXIMUM / MINIMUM compare the raw codes (TFLite requires equal quantization).
template <class T>
void min_max(std::span<const T> a, std::span<const std::int32_t> sa, std::span<const T> b,
             std::span<const std::int32_t> sb, std::span<T> out, bool maximum) {
    const auto os = broadcast_shape(sa, sb, maximum ? "MAXIMUM" : "MINIMUM");
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const T x = a[static_cast<std::size_t>(ia)], y = b[static_cast<std::size_t>(ib)];
        out[static_cast<std::size_t>(io)] = maximum ? std::max(x, y) : std::min(x, y);
    });
}

/// Integer arithmetic on unquantized int32 tensors (shape computations): ADD, SUB, MUL wrap as
/// two's complement; DIV truncates, FLOOR_DIV floors, as TFLite's int32 kernels. `op` is one of
/// '+', '-', '*', '/', 'f' (floor division). A zero divisor is an error.
inline void int_arithmetic(std::span<const std::int32_t> a, std::span<const std::int32_t> sa,
                           std::span<const std::int32_t> b, std::span<const std::int32_t> sb, std::span<std::int32_t> out,
                           char op, const std::string& where) {
    const auto os = broadcast_shape(sa, sb, where);
    for_each_broadcast(sa, sb, os, [&](std::int64_t ia, std::int64_t ib, std::int64_t io) {
        const std::int64_t x = a[static_cast<std::size_t>(ia)], y = b[static_cast<std::size_t>(ib)];
        std::int64_t r = 0;
        switch (op) {
            case '+': r = x + y; break;
            case '-': r = x - y; break;
            case '*': r = x * y; break;
            default:
                if (y == 0) fail(error_kind::bad_input, where + ": integer division by zero");
                r = x / y;
                if (op == 'f' && x % y != 0 && ((x < 0) != (y < 0))) --r;
        }
        out[static_cast<std::size_t>(io)] = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(r)));
    });
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/eltwise.hpp

namespace vnnx::ref {

/// RELU (lo 0, hi +inf), RELU6 (0, 6), RELU_N1_TO_1 (−1, 1), RELU_0_TO_1 (0, 1).
template <class T>
void relu_x(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo, float lo, float hi) {
    // TFLite divides the float scales in float, then widens.
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale / qo.scale));
    constexpr std::int32_t tmin = std::numeric_limits<T>::min(), tmax = std::numeric_limits<T>::max();
    const std::int32_t amin = std::max(tmin, qo.zero_point + static_cast<std::int32_t>(std::round(lo / qo.scale)));
    const std::int32_t amax = std::isinf(hi) ? tmax
                                             : std::min(tmax, qo.zero_point + static_cast<std::int32_t>(std::round(hi / qo.scale)));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v =
            qo.zero_point + quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(in[i]) - qi.zero_point,
                                                                    m.multiplier, m.shift);
        out[i] = static_cast<T>(std::clamp(v, amin, amax));
    }
}

template <class T>
void leaky_relu(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo, float alpha) {
    const auto m_alpha = quant::quantize_multiplier(static_cast<double>(qi.scale * alpha / qo.scale));
    const auto m_id = quant::quantize_multiplier(static_cast<double>(qi.scale / qo.scale));
    constexpr std::int32_t tmin = std::numeric_limits<T>::min(), tmax = std::numeric_limits<T>::max();
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t x = static_cast<std::int32_t>(in[i]) - qi.zero_point;
        const auto& m = x >= 0 ? m_id : m_alpha;
        const std::int32_t v = qo.zero_point + quant::multiply_by_quantized_multiplier(x, m.multiplier, m.shift);
        out[i] = static_cast<T>(std::clamp(v, tmin, tmax));
    }
}

struct hard_swish_params {
    std::int16_t input_zero_point = 0, output_zero_point = 0;
    std::int16_t reluish_multiplier = 0, output_multiplier = 0;
    int reluish_exponent = 0, output_exponent = 0;
};

/// TFLite HardSwishPrepare: everything on a "hires" input scale of S_in/128.
[[nodiscard]] inline hard_swish_params make_hard_swish_params(operand_quant qi, operand_quant qo) {
    hard_swish_params p;
    p.input_zero_point = static_cast<std::int16_t>(qi.zero_point);
    p.output_zero_point = static_cast<std::int16_t>(qo.zero_point);
    const float hires = (1.0f / 128.0f) * qi.scale;
    const float reluish_scale = 3.0f / 32768.0f;
    const auto om = quant::quantize_multiplier(static_cast<double>(hires / qo.scale));
    p.output_multiplier = quant::down_scale_int32_to_int16_multiplier(om.multiplier);
    p.output_exponent = om.shift;
    const auto rm = quant::quantize_multiplier(static_cast<double>(hires / reluish_scale));
    p.reluish_multiplier = quant::down_scale_int32_to_int16_multiplier(rm.multiplier);
    p.reluish_exponent = rm.shift;
    if (p.output_exponent > 0) fail(error_kind::unsupported, "HARD_SWISH: output multiplier exponent must be <= 0");
    return p;
}

template <class T>
[[nodiscard]] T hard_swish_one(T v, const hard_swish_params& p) {
    using quant::rounding_divide_by_pot;
    const auto input = static_cast<std::int16_t>(static_cast<std::int32_t>(v) - p.input_zero_point);
    const auto hires = static_cast<std::int16_t>(input * (1 << 7));
    const std::int16_t preshift_out = quant::saturating_rounding_doubling_high_mul(hires, p.output_multiplier);
    std::int16_t reluish = hires;
    if (p.reluish_exponent > 0) reluish = quant::saturating_left_shift(reluish, p.reluish_exponent - 1);
    reluish = quant::saturating_rounding_doubling_high_mul(reluish, p.reluish_multiplier);
    if (p.reluish_exponent > 0) reluish = quant::saturating_left_shift(reluish, 1);
    if (p.reluish_exponent < 0) reluish = rounding_divide_by_pot<std::int16_t>(reluish, -p.reluish_exponent);
    // Map [-32768, 32767] to [0, 32767]: the "relu6(x+3)/6" factor as a Q15 fraction.
    reluish = static_cast<std::int16_t>((static_cast<std::int32_t>(reluish) + (1 << 15)) >> 1);
    const std::int16_t preshift = quant::saturating_doubling_high_mul(reluish, preshift_out);
    std::int32_t o = rounding_divide_by_pot<std::int16_t>(preshift, -p.output_exponent);
    o += p.output_zero_point;
    return static_cast<T>(std::clamp<std::int32_t>(o, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
}

template <class T>
void hard_swish(std::span<const T> in, std::span<T> out, operand_quant qi, operand_quant qo) {
    const auto p = make_hard_swish_params(qi, qo);
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = hard_swish_one(in[i], p);
}

/// TFLite's LOGISTIC table (optimized kernel).
template <class T>
[[nodiscard]] std::array<T, 256> logistic_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point,
                               [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
}

template <class T>
[[nodiscard]] std::array<T, 256> tanh_table(operand_quant qi, operand_quant qo) {
    return quant::float_lut<T>(qi.scale, qi.zero_point, qo.scale, qo.zero_point, [](float x) { return std::tanh(x); });
}

template <class T>
void apply_table(std::span<const T> in, std::span<T> out, const std::array<T, 256>& table) {
    for (std::size_t i = 0; i < in.size(); ++i) out[i] = quant::lut_lookup(table, in[i]);
}

/// QUANTIZE between 8-bit types: requantize with QM(S_in / S_out), double rounding.
template <class In, class Out>
void requantize(std::span<const In> in, std::span<Out> out, operand_quant qi, operand_quant qo) {
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale) / static_cast<double>(qo.scale));
    for (std::size_t i = 0; i < in.size(); ++i) {
        const std::int32_t v =
            quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(in[i]) - qi.zero_point, m.multiplier, m.shift) +
            qo.zero_point;
        out[i] = static_cast<Out>(
            std::clamp<std::int32_t>(v, std::numeric_limits<Out>::min(), std::numeric_limits<Out>::max()));
    }
}

/// QUANTIZE from float: round(x / S) + z in double, clamped.
template <class Out>
void quantize(std::span<const float> in, std::span<Out> out, operand_quant qo) {
    const double s = qo.scale;
    for (std::size_t i = 0; i < in.size(); ++i) {
        const double r = std::round(static_cast<double>(in[i]) / s);
        const double c = std::clamp(r + qo.zero_point, static_cast<double>(std::numeric_limits<Out>::min()),
                                    static_cast<double>(std::numeric_limits<Out>::max()));
        out[i] = static_cast<Out>(static_cast<std::int32_t>(c));
    }
}

/// DEQUANTIZE: S · (x − z), computed in double and rounded to float.
template <class In>
void dequantize(std::span<const In> in, std::span<float> out, operand_quant qi) {
    const double s = qi.scale;
    for (std::size_t i = 0; i < in.size(); ++i)
        out[i] = static_cast<float>(s * (static_cast<std::int32_t>(in[i]) - qi.zero_point));
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/activations.hpp
// ---- begin vnnx/ref/conv.hpp
// CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED over NHWC int8/uint8 data with TFLite's
// interpreter numerics: int8 CONV_2D and FULLY_CONNECTED requantize once (ruy), uint8 ones
// (gemmlowp) and DEPTHWISE_CONV_2D with the double-rounding MultiplyByQuantizedMultiplier.
// The caller picks the rounding in requant_params.


namespace vnnx::ref {

enum class rounding { single, double_ };

/// Requantization shared by the three kernels: one multiplier per output channel (or one
/// for all), zero points, clamping range.
struct requant_params {
    std::int32_t input_zero_point = 0;
    std::int32_t filter_zero_point = 0;  // uint8 weights only; int8 weights are symmetric
    std::int32_t output_zero_point = 0;
    std::vector<quant::quantized_multiplier> multipliers;
    quant::activation_range act{-128, 127};
    rounding round = rounding::single;

    [[nodiscard]] std::int32_t apply(std::int32_t acc, std::size_t channel) const {
        const auto& m = multipliers.size() == 1 ? multipliers[0] : multipliers[channel];
        const std::int32_t scaled = round == rounding::single
                                        ? quant::multiply_by_quantized_multiplier_single_round(acc, m.multiplier, m.shift)
                                        : quant::multiply_by_quantized_multiplier(acc, m.multiplier, m.shift);
        return std::clamp(scaled + output_zero_point, act.min, act.max);
    }
};

struct conv_geometry {
    std::int32_t stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
    padding pad = padding::same;
};

namespace detail {
inline void check_multipliers(const requant_params& q, std::int32_t channels, const char* op) {
    if (q.multipliers.size() != 1 && q.multipliers.size() != static_cast<std::size_t>(channels))
        fail_input(std::string(op) + ": " + std::to_string(q.multipliers.size()) + " multipliers for " +
                   std::to_string(channels) + " output channels");
}
}  // namespace detail

/// input [N,H,W,C], filter [O,KH,KW,C/groups], bias [O] or empty, output [N,OH,OW,O].
template <class T, class W>
void conv2d(std::span<const T> input, nhwc in, std::span<const W> filter, nhwc f, std::span<const std::int32_t> bias,
            std::span<T> output, nhwc out, const conv_geometry& g, const requant_params& q) {
    detail::check_multipliers(q, out.c, "CONV_2D");
    if (f.c <= 0 || in.c % f.c != 0) fail_input("CONV_2D: input channels not a multiple of the filter depth");
    const std::int32_t groups = in.c / f.c;
    if (out.c % groups != 0) fail_input("CONV_2D: output channels not a multiple of the group count");
    const std::int32_t per_group = out.c / groups;
    const std::int32_t pad_h = compute_padding(g.stride_h, g.dilation_h, in.h, f.h, out.h);
    const std::int32_t pad_w = compute_padding(g.stride_w, g.dilation_w, in.w, f.w, out.w);
    for (std::int32_t b = 0; b < out.n; ++b)
        for (std::int32_t oy = 0; oy < out.h; ++oy)
            for (std::int32_t ox = 0; ox < out.w; ++ox)
                for (std::int32_t oc = 0; oc < out.c; ++oc) {
                    const std::int32_t group = oc / per_group;
                    std::int32_t acc = 0;
                    for (std::int32_t ky = 0; ky < f.h; ++ky) {
                        const std::int32_t iy = oy * g.stride_h - pad_h + ky * g.dilation_h;
                        if (iy < 0 || iy >= in.h) continue;
                        for (std::int32_t kx = 0; kx < f.w; ++kx) {
                            const std::int32_t ix = ox * g.stride_w - pad_w + kx * g.dilation_w;
                            if (ix < 0 || ix >= in.w) continue;
                            const T* px = input.data() + in.at(b, iy, ix, group * f.c);
                            const W* pw = filter.data() + f.at(oc, ky, kx, 0);
                            for (std::int32_t ic = 0; ic < f.c; ++ic)
                                acc += (static_cast<std::int32_t>(px[ic]) - q.input_zero_point) *
                                       (static_cast<std::int32_t>(pw[ic]) - q.filter_zero_point);
                        }
                    }
                    if (!bias.empty()) acc += bias[static_cast<std::size_t>(oc)];
                    output[static_cast<std::size_t>(out.at(b, oy, ox, oc))] =
                        static_cast<T>(q.apply(acc, static_cast<std::size_t>(oc)));
                }
}

/// input [N,H,W,C], filter [1,KH,KW,C·M], output channel oc = ic·M + m.
template <class T, class W>
void depthwise_conv2d(std::span<const T> input, nhwc in, std::span<const W> filter, nhwc f,
                      std::span<const std::int32_t> bias, std::span<T> output, nhwc out, const conv_geometry& g,
                      std::int32_t depth_multiplier, const requant_params& q) {
    detail::check_multipliers(q, out.c, "DEPTHWISE_CONV_2D");
    if (depth_multiplier <= 0 || out.c != in.c * depth_multiplier || f.c != out.c)
        fail_input("DEPTHWISE_CONV_2D: channel counts do not match the depth multiplier");
    const std::int32_t pad_h = compute_padding(g.stride_h, g.dilation_h, in.h, f.h, out.h);
    const std::int32_t pad_w = compute_padding(g.stride_w, g.dilation_w, in.w, f.w, out.w);
    for (std::int32_t b = 0; b < out.n; ++b)
        for (std::int32_t oy = 0; oy < out.h; ++oy)
            for (std::int32_t ox = 0; ox < out.w; ++ox)
                for (std::int32_t oc = 0; oc < out.c; ++oc) {
                    const std::int32_t ic = oc / depth_multiplier;
                    std::int32_t acc = 0;
                    for (std::int32_t ky = 0; ky < f.h; ++ky) {
                        const std::int32_t iy = oy * g.stride_h - pad_h + ky * g.dilation_h;
                        if (iy < 0 || iy >= in.h) continue;
                        for (std::int32_t kx = 0; kx < f.w; ++kx) {
                            const std::int32_t ix = ox * g.stride_w - pad_w + kx * g.dilation_w;
                            if (ix < 0 || ix >= in.w) continue;
                            acc += (static_cast<std::int32_t>(input[static_cast<std::size_t>(in.at(b, iy, ix, ic))]) -
                                    q.input_zero_point) *
                                   (static_cast<std::int32_t>(filter[static_cast<std::size_t>(f.at(0, ky, kx, oc))]) -
                                    q.filter_zero_point);
                        }
                    }
                    if (!bias.empty()) acc += bias[static_cast<std::size_t>(oc)];
                    output[static_cast<std::size_t>(out.at(b, oy, ox, oc))] =
                        static_cast<T>(q.apply(acc, static_cast<std::size_t>(oc)));
                }
}

/// input [batches, depth] (any shape of that size), weights [units, depth], output [batches, units].
template <class T, class W>
void fully_connected(std::span<const T> input, std::span<const W> weights, std::span<const std::int32_t> bias,
                     std::span<T> output, std::int32_t batches, std::int32_t depth, std::int32_t units,
                     const requant_params& q) {
    detail::check_multipliers(q, units, "FULLY_CONNECTED");
    for (std::int32_t b = 0; b < batches; ++b)
        for (std::int32_t u = 0; u < units; ++u) {
            std::int32_t acc = 0;
            const T* px = input.data() + static_cast<std::int64_t>(b) * depth;
            const W* pw = weights.data() + static_cast<std::int64_t>(u) * depth;
            for (std::int32_t d = 0; d < depth; ++d)
                acc += (static_cast<std::int32_t>(px[d]) - q.input_zero_point) *
                       (static_cast<std::int32_t>(pw[d]) - q.filter_zero_point);
            if (!bias.empty()) acc += bias[static_cast<std::size_t>(u)];
            output[static_cast<std::size_t>(static_cast<std::int64_t>(b) * units + u)] =
                static_cast<T>(q.apply(acc, static_cast<std::size_t>(u)));
        }
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/conv.hpp
// ---- begin vnnx/ref/layout.hpp
// Data-movement kernels on ndarrays of any element type: concatenation, split, pad,
// strided slice, transpose, gather, pack/unpack. They copy whole elements as bytes.


namespace vnnx::ref {

namespace detail {
/// outer = product of dims before axis, inner = product of dims after it (in elements).
inline void split_at(const std::vector<std::int64_t>& s, std::size_t axis, std::int64_t& outer, std::int64_t& inner) {
    outer = 1;
    inner = 1;
    for (std::size_t i = 0; i < axis; ++i) outer *= s[i];
    for (std::size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
}
}  // namespace detail

/// Concatenates along `axis` (non-negative) into `out`, whose shape is already set.
inline void concatenate(const std::vector<const ndarray*>& parts, std::size_t axis, ndarray& out) {
    std::int64_t outer, inner;
    detail::split_at(out.shape, axis, outer, inner);
    const std::size_t es = dtype_size(out.type);
    std::size_t pos = 0;
    for (std::int64_t o = 0; o < outer; ++o)
        for (const ndarray* p : parts) {
            const std::size_t chunk = static_cast<std::size_t>(p->shape[axis] * inner) * es;
            std::memcpy(out.data.data() + pos, p->data.data() + static_cast<std::size_t>(o) * chunk, chunk);
            pos += chunk;
        }
}

/// Splits `in` along `axis` into the given outputs (their shapes already set).
inline void split(const ndarray& in, std::size_t axis, std::vector<ndarray*>& outs) {
    std::int64_t outer, inner;
    detail::split_at(in.shape, axis, outer, inner);
    const std::size_t es = dtype_size(in.type);
    std::size_t pos = 0;
    for (std::int64_t o = 0; o < outer; ++o)
        for (ndarray* p : outs) {
            const std::size_t chunk = static_cast<std::size_t>(p->shape[axis] * inner) * es;
            std::memcpy(p->data.data() + static_cast<std::size_t>(o) * chunk, in.data.data() + pos, chunk);
            pos += chunk;
        }
}

/// Constant padding: pads[i] = {before, after}; `fill` is one element's bytes.
inline void pad(const ndarray& in, const std::vector<std::pair<std::int64_t, std::int64_t>>& pads,
                std::span<const std::byte> fill, ndarray& out) {
    const std::size_t es = dtype_size(in.type);
    const std::size_t r = in.shape.size();
    for (std::size_t i = 0; i < out.element_count(); ++i) std::memcpy(out.data.data() + i * es, fill.data(), es);
    std::vector<std::int64_t> ostride(r, 1);
    for (std::size_t i = r; i-- > 1;) ostride[i - 1] = ostride[i] * out.shape[i];
    std::vector<std::int64_t> idx(r, 0);
    const std::size_t n = in.element_count();
    for (std::size_t e = 0; e < n; ++e) {
        std::int64_t o = 0;
        for (std::size_t d = 0; d < r; ++d) o += (idx[d] + pads[d].first) * ostride[d];
        std::memcpy(out.data.data() + static_cast<std::size_t>(o) * es, in.data.data() + e * es, es);
        for (std::size_t d = r; d-- > 0;) {
            if (++idx[d] < in.shape[d]) break;
            idx[d] = 0;
        }
    }
}

/// Copies elements `in[start + k·stride]` per axis; counts[i] elements on axis i (out is
/// contiguous in that order; its shape may drop shrunk axes).
inline void strided_copy(const ndarray& in, const std::vector<std::int64_t>& start,
                         const std::vector<std::int64_t>& stride, const std::vector<std::int64_t>& counts, ndarray& out) {
    const std::size_t es = dtype_size(in.type);
    const std::size_t r = in.shape.size();
    std::vector<std::int64_t> istride(r, 1);
    for (std::size_t i = r; i-- > 1;) istride[i - 1] = istride[i] * in.shape[i];
    std::int64_t total = 1;
    for (auto c : counts) total *= c;
    std::vector<std::int64_t> idx(r, 0);
    for (std::int64_t e = 0; e < total; ++e) {
        std::int64_t src = 0;
        for (std::size_t d = 0; d < r; ++d) src += (start[d] + idx[d] * stride[d]) * istride[d];
        std::memcpy(out.data.data() + static_cast<std::size_t>(e) * es, in.data.data() + static_cast<std::size_t>(src) * es, es);
        for (std::size_t d = r; d-- > 0;) {
            if (++idx[d] < counts[d]) break;
            idx[d] = 0;
        }
    }
}

/// out axis i = in axis perm[i].
inline void transpose(const ndarray& in, const std::vector<std::int32_t>& perm, ndarray& out) {
    const std::size_t r = in.shape.size();
    const std::size_t es = dtype_size(in.type);
    std::vector<std::int64_t> istride(r, 1);
    for (std::size_t i = r; i-- > 1;) istride[i - 1] = istride[i] * in.shape[i];
    std::vector<std::int64_t> idx(r, 0);
    const std::size_t n = out.element_count();
    for (std::size_t e = 0; e < n; ++e) {
        std::int64_t src = 0;
        for (std::size_t d = 0; d < r; ++d) src += idx[d] * istride[static_cast<std::size_t>(perm[d])];
        std::memcpy(out.data.data() + e * es, in.data.data() + static_cast<std::size_t>(src) * es, es);
        for (std::size_t d = r; d-- > 0;) {
            if (++idx[d] < out.shape[d]) break;
            idx[d] = 0;
        }
    }
}

/// GATHER along `axis` (batch_dims 0): out = in[..., indices[...], ...].
inline void gather(const ndarray& in, std::size_t axis, const std::vector<std::int64_t>& indices, ndarray& out,
                   const std::string& what) {
    std::int64_t outer, inner;
    detail::split_at(in.shape, axis, outer, inner);
    const std::int64_t n = in.shape[axis];
    const std::size_t es = dtype_size(in.type);
    const std::size_t chunk = static_cast<std::size_t>(inner) * es;
    std::size_t pos = 0;
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t k : indices) {
            if (k < 0 || k >= n)
                fail_input(what + ": index " + std::to_string(k) + " out of range [0, " + std::to_string(n) + ")");
            std::memcpy(out.data.data() + pos, in.data.data() + static_cast<std::size_t>(o * n + k) * chunk, chunk);
            pos += chunk;
        }
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/layout.hpp
// ---- begin vnnx/ref/pool.hpp
// AVERAGE_POOL_2D and MAX_POOL_2D on raw 8-bit codes (input and output share quantization).
// The average divides by the number of in-bounds taps and rounds half away from zero.


namespace vnnx::ref {

struct pool_params {
    std::int32_t filter_h = 1, filter_w = 1, stride_h = 1, stride_w = 1;
    padding pad = padding::same;
    quant::activation_range act{-128, 127};
};

namespace detail {
template <class T, class Reduce>
void pool(nhwc in, std::span<T> output, nhwc out, const pool_params& p, Reduce&& reduce) {
    const std::int32_t pad_h = compute_padding(p.stride_h, 1, in.h, p.filter_h, out.h);
    const std::int32_t pad_w = compute_padding(p.stride_w, 1, in.w, p.filter_w, out.w);
    for (std::int32_t b = 0; b < out.n; ++b)
        for (std::int32_t oy = 0; oy < out.h; ++oy)
            for (std::int32_t ox = 0; ox < out.w; ++ox) {
                const std::int32_t y0 = oy * p.stride_h - pad_h, x0 = ox * p.stride_w - pad_w;
                const std::int32_t ky0 = std::max(0, -y0), ky1 = std::min(p.filter_h, in.h - y0);
                const std::int32_t kx0 = std::max(0, -x0), kx1 = std::min(p.filter_w, in.w - x0);
                for (std::int32_t c = 0; c < out.c; ++c) {
                    const std::int32_t v = reduce(b, y0, x0, ky0, ky1, kx0, kx1, c);
                    output[static_cast<std::size_t>(out.at(b, oy, ox, c))] =
                        static_cast<T>(std::clamp(v, p.act.min, p.act.max));
                }
            }
}
}  // namespace detail

template <class T>
void average_pool(std::span<const T> input, nhwc in, std::span<T> output, nhwc out, const pool_params& p) {
    detail::pool(in, output, out, p,
                 [&](std::int32_t b, std::int32_t y0, std::int32_t x0, std::int32_t ky0, std::int32_t ky1,
                     std::int32_t kx0, std::int32_t kx1, std::int32_t c) {
                     std::int32_t acc = 0;
                     for (std::int32_t ky = ky0; ky < ky1; ++ky)
                         for (std::int32_t kx = kx0; kx < kx1; ++kx)
                             acc += input[static_cast<std::size_t>(in.at(b, y0 + ky, x0 + kx, c))];
                     const std::int32_t count = (ky1 - ky0) * (kx1 - kx0);
                     if (count <= 0) return std::int32_t{0};
                     return acc > 0 ? (acc + count / 2) / count : (acc - count / 2) / count;
                 });
}

template <class T>
void max_pool(std::span<const T> input, nhwc in, std::span<T> output, nhwc out, const pool_params& p) {
    detail::pool(in, output, out, p,
                 [&](std::int32_t b, std::int32_t y0, std::int32_t x0, std::int32_t ky0, std::int32_t ky1,
                     std::int32_t kx0, std::int32_t kx1, std::int32_t c) {
                     std::int32_t m = std::numeric_limits<T>::lowest();
                     for (std::int32_t ky = ky0; ky < ky1; ++ky)
                         for (std::int32_t kx = kx0; kx < kx1; ++kx)
                             m = std::max<std::int32_t>(m, input[static_cast<std::size_t>(in.at(b, y0 + ky, x0 + kx, c))]);
                     return m;
                 });
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/pool.hpp
// ---- begin vnnx/ref/reduce.hpp
// 8-bit MEAN over any axes (sum, then one requantization) and ARG_MAX/ARG_MIN.


namespace vnnx::ref {

/// MEAN over axes {1, 2} of [N,H,W,C] → [N,1,1,C], TFLite's 4-D kernel (keep_dims, H and W):
/// the raw codes are summed, scaled by QM(S_in / (n·S_out)) (computed in float, double
/// rounding) and shifted by z_out − round_away(z_in·S_in/S_out) (float). Measured bit-exact
/// against the TFLite build of the shared reference vectors.
template <class T>
void mean_hw(std::span<const T> in, nhwc s, std::span<T> out, operand_quant qi, operand_quant qo) {
    const float count = static_cast<float>(s.w * s.h);
    float temp = static_cast<float>(qi.zero_point) * qi.scale / qo.scale;
    temp = temp > 0 ? temp + 0.5f : temp - 0.5f;
    const std::int32_t bias = qo.zero_point - static_cast<std::int32_t>(temp);
    const auto m = quant::quantize_multiplier(static_cast<double>(qi.scale / (count * qo.scale)));
    for (std::int32_t b = 0; b < s.n; ++b)
        for (std::int32_t c = 0; c < s.c; ++c) {
            std::int32_t acc = 0;
            for (std::int32_t y = 0; y < s.h; ++y)
                for (std::int32_t x = 0; x < s.w; ++x) acc += in[static_cast<std::size_t>(s.at(b, y, x, c))];
            acc = quant::multiply_by_quantized_multiplier(acc, m.multiplier, m.shift) + bias;
            out[static_cast<std::size_t>(static_cast<std::int64_t>(b) * s.c + c)] = static_cast<T>(
                std::clamp<std::int32_t>(acc, std::numeric_limits<T>::min(), std::numeric_limits<T>::max()));
        }
}

/// Other 8-bit MEANs: TFLite's QuantizedMeanOrSum of this build, in float: the mean of the
/// raw codes, then round(mean·S_in/S_out − z_in·S_in/S_out) + z_out, clamped. Matches the
/// golden vectors (test/data/ref/mean_last_axis_int8); an integer-only variant did not.
template <class T>
void mean_requantize(std::span<const std::int64_t> sums, std::int64_t count, std::span<T> out, operand_quant qi,
                     operand_quant qo) {
    const float scale = qi.scale / qo.scale;
    const float bias = static_cast<float>(-qi.zero_point) * scale;
    constexpr float lo = std::numeric_limits<T>::min(), hi = std::numeric_limits<T>::max();
    for (std::size_t i = 0; i < sums.size(); ++i) {
        const float mean = static_cast<float>(sums[i]) / static_cast<float>(count);
        float r = std::min(std::round(mean * scale + bias) + static_cast<float>(qo.zero_point), hi);
        r = std::max(r, lo);
        out[i] = static_cast<T>(r);
    }
}

/// Sums over the axes in `reduce` (flags per input axis); output in row-major order of the kept axes.
template <class T>
std::vector<std::int64_t> reduce_sum(std::span<const T> in, const shape_t& shape, const std::vector<bool>& reduce,
                                     std::int64_t& count) {
    std::vector<std::int64_t> out_strides(shape.size(), 0);
    std::int64_t n_out = 1;
    count = 1;
    for (std::size_t i = shape.size(); i-- > 0;) {
        if (reduce[i]) {
            count *= shape[i];
        } else {
            out_strides[i] = n_out;
            n_out *= shape[i];
        }
    }
    std::vector<std::int64_t> sums(static_cast<std::size_t>(n_out), 0);
    std::vector<std::int32_t> idx(shape.size(), 0);
    std::int64_t o = 0;
    for (std::size_t i = 0; i < in.size(); ++i) {
        sums[static_cast<std::size_t>(o)] += in[i];
        for (std::size_t d = shape.size(); d-- > 0;) {
            ++idx[d];
            o += out_strides[d];
            if (idx[d] < shape[d]) break;
            o -= out_strides[d] * idx[d];
            idx[d] = 0;
        }
    }
    return sums;
}

/// Index of the first maximum (or minimum) along `axis`; output shape drops the axis.
template <class T, class Index>
void arg_max(std::span<const T> in, const shape_t& shape, std::int32_t axis, std::span<Index> out, bool minimum = false) {
    std::int64_t outer = 1, inner = 1;
    for (std::int32_t i = 0; i < axis; ++i) outer *= shape[static_cast<std::size_t>(i)];
    for (std::size_t i = static_cast<std::size_t>(axis) + 1; i < shape.size(); ++i) inner *= shape[i];
    const std::int64_t n = shape[static_cast<std::size_t>(axis)];
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t k = 0; k < inner; ++k) {
            const T* base = in.data() + o * n * inner + k;
            T best = base[0];
            std::int64_t bi = 0;
            for (std::int64_t j = 1; j < n; ++j) {
                const T v = base[j * inner];
                if (minimum ? v < best : v > best) {
                    best = v;
                    bi = j;
                }
            }
            out[static_cast<std::size_t>(o * inner + k)] = static_cast<Index>(bi);
        }
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/reduce.hpp
// ---- begin vnnx/ref/resize.hpp
// RESIZE_NEAREST_NEIGHBOR and RESIZE_BILINEAR over NHWC 8-bit data as TFLite's optimized
// kernels do: nearest with a 10-bit fixed-point ratio (reference float rule when
// align_corners/half_pixel_centers is set), int8 bilinear with 10-bit integer weights,
// uint8 bilinear in float with +0.5 and truncation.


namespace vnnx::ref {

namespace detail {
inline std::int32_t nearest_source(std::int32_t v, std::int32_t in_size, std::int32_t out_size, bool align_corners,
                                   bool half_pixel) {
    if (!align_corners && !half_pixel) {
        const std::int32_t scale_10 = ((1 << 10) * in_size + out_size / 2) / out_size;
        return std::min((v * scale_10) >> 10, in_size - 1);
    }
    const float scale = (align_corners && out_size > 1) ? static_cast<float>(in_size - 1) / static_cast<float>(out_size - 1)
                                                        : static_cast<float>(in_size) / static_cast<float>(out_size);
    const float offset = half_pixel ? 0.5f : 0.0f;
    std::int32_t r = std::min(align_corners ? static_cast<std::int32_t>(std::round((static_cast<float>(v) + offset) * scale))
                                            : static_cast<std::int32_t>(std::floor((static_cast<float>(v) + offset) * scale)),
                              in_size - 1);
    if (half_pixel) r = std::max(0, r);
    return r;
}
}  // namespace detail

template <class T>
void resize_nearest(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners, bool half_pixel) {
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            const std::int32_t iy = detail::nearest_source(y, is.h, os.h, align_corners, half_pixel);
            for (std::int32_t x = 0; x < os.w; ++x) {
                const std::int32_t ix = detail::nearest_source(x, is.w, os.w, align_corners, half_pixel);
                for (std::int32_t c = 0; c < os.c; ++c)
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = in[static_cast<std::size_t>(is.at(b, iy, ix, c))];
            }
        }
}

/// int8 (and reference) integer bilinear: positions and weights in 1/1024 units.
template <class T>
void resize_bilinear_integer(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners,
                             bool half_pixel) {
    std::int32_t hs = ((1 << 10) * is.h + os.h / 2) / os.h;
    std::int32_t ws = ((1 << 10) * is.w + os.w / 2) / os.w;
    if (align_corners && os.h > 1) hs = ((1 << 10) * (is.h - 1) + (os.h - 1) / 2) / (os.h - 1);
    if (align_corners && os.w > 1) ws = ((1 << 10) * (is.w - 1) + (os.w - 1) / 2) / (os.w - 1);
    auto interp = [&](std::int32_t v, std::int32_t scale, std::int32_t size, std::int32_t& pos, std::int32_t& lo,
                      std::int32_t& hi) {
        pos = half_pixel ? v * scale + scale / 2 - (1 << 9) : v * scale;
        lo = std::max(pos / (1 << 10), 0);
        hi = std::min((pos + (1 << 10) - 1) / (1 << 10), size - 1);
    };
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            std::int32_t py, y0, y1;
            interp(y, hs, is.h, py, y0, y1);
            const std::int64_t fy = py - (1 << 10) * y0;
            for (std::int32_t x = 0; x < os.w; ++x) {
                std::int32_t px, x0, x1;
                interp(x, ws, is.w, px, x0, x1);
                const std::int64_t fx = px - (1 << 10) * x0;
                for (std::int32_t c = 0; c < os.c; ++c) {
                    auto v = [&](std::int32_t yy, std::int32_t xx) {
                        return static_cast<std::int64_t>(in[static_cast<std::size_t>(is.at(b, yy, xx, c))]);
                    };
                    const std::int64_t acc = v(y0, x0) * ((1 << 10) - fy) * ((1 << 10) - fx) +
                                             v(y1, x0) * fy * ((1 << 10) - fx) + v(y0, x1) * ((1 << 10) - fy) * fx +
                                             v(y1, x1) * fy * fx;
                    const std::int64_t round = acc > 0 ? (1 << 19) : -(1 << 19);
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = static_cast<T>((acc + round) / (1 << 20));
                }
            }
        }
}

/// uint8 bilinear of TFLite's optimized kernel: float weights, +0.5, truncation.
template <class T>
void resize_bilinear_float(std::span<const T> in, nhwc is, std::span<T> out, nhwc os, bool align_corners,
                           bool half_pixel) {
    const float hs = (align_corners && os.h > 1) ? static_cast<float>(is.h - 1) / static_cast<float>(os.h - 1)
                                                 : static_cast<float>(is.h) / static_cast<float>(os.h);
    const float ws = (align_corners && os.w > 1) ? static_cast<float>(is.w - 1) / static_cast<float>(os.w - 1)
                                                 : static_cast<float>(is.w) / static_cast<float>(os.w);
    auto interp = [&](std::int32_t v, float scale, std::int32_t size, float& pos, std::int32_t& lo, std::int32_t& hi) {
        pos = half_pixel ? (static_cast<float>(v) + 0.5f) * scale - 0.5f : static_cast<float>(v) * scale;
        lo = std::max(static_cast<std::int32_t>(std::floor(pos)), 0);
        hi = std::min(static_cast<std::int32_t>(std::ceil(pos)), size - 1);
    };
    for (std::int32_t b = 0; b < os.n; ++b)
        for (std::int32_t y = 0; y < os.h; ++y) {
            float iy;
            std::int32_t y0, y1;
            interp(y, hs, is.h, iy, y0, y1);
            for (std::int32_t x = 0; x < os.w; ++x) {
                float ix;
                std::int32_t x0, x1;
                interp(x, ws, is.w, ix, x0, x1);
                const float dy = iy - static_cast<float>(y0), dx = ix - static_cast<float>(x0);
                const float w[4] = {(1 - dy) * (1 - dx), (1 - dy) * dx, dy * (1 - dx), dy * dx};
                for (std::int32_t c = 0; c < os.c; ++c) {
                    auto v = [&](std::int32_t yy, std::int32_t xx) {
                        return static_cast<float>(in[static_cast<std::size_t>(is.at(b, yy, xx, c))]);
                    };
                    const float r = v(y0, x0) * w[0] + v(y0, x1) * w[1] + v(y1, x0) * w[2] + v(y1, x1) * w[3] + 0.5f;
                    out[static_cast<std::size_t>(os.at(b, y, x, c))] = static_cast<T>(r);
                }
            }
        }
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/resize.hpp
// ---- begin vnnx/ref/softmax.hpp
// SOFTMAX over the last axis with TFLite's optimized 8-bit recipe: a 256-entry float table
// of exp(−S_in·β·d), a float sum, and rounding of p/S_out (uint8 outputs add 0.5 and truncate,
// as TFLite does off ARM64; int8 outputs round half away and add the zero point).

// ---- begin vnnx/quant/softmax_tables.hpp
// SOFTMAX tables: the VNNX exponential table and step list of lowering.md §8.7, and TFLite's
// own float table used by its optimized int8/uint8 kernel.


namespace vnnx::quant {

struct softmax_vnnx_tables {
    double lut_scale = 0;
    std::array<std::uint32_t, 256> exp_table{};  // indexed by byte r, code v = (int8)r
    std::vector<std::uint32_t> step_values;      // lut_int32
    std::vector<std::int8_t> step_codes;         // idx_int8
    quantized_multiplier input;                  // QM(1 / (S_out · 2^16))
};

/// §8.7 for a softmax axis of `depth` elements.
[[nodiscard]] inline softmax_vnnx_tables softmax_tables(std::int64_t depth, double s_in, double s_out) {
    softmax_vnnx_tables t;
    t.lut_scale = std::min(std::ldexp(1.0, 24), std::ldexp(1.0, 31) / static_cast<double>(std::max<std::int64_t>(depth, 1)));
    for (int v = -128; v <= 127; ++v) {
        double e = round_away(std::exp(static_cast<double>(v - 127) * s_in) * t.lut_scale);
        e = std::clamp(e, -2147483648.0, 2147483647.0);
        t.exp_table[static_cast<std::uint8_t>(v)] = static_cast<std::uint32_t>(static_cast<std::int32_t>(e));
    }
    for (int v = -128; v <= 127; ++v) {
        const std::uint32_t e = t.exp_table[static_cast<std::uint8_t>(v)];
        if (t.step_values.empty() || t.step_values.back() != e) {
            t.step_values.push_back(e);
            t.step_codes.push_back(static_cast<std::int8_t>(v));
        }
    }
    t.input = quantize_multiplier(1.0 / (s_out * 65536.0));
    return t;
}

/// TFLite PopulateSoftmaxLookupTable: table[255 − d] = expf(−S_in·β·d) for d = 0..255.
[[nodiscard]] inline std::array<float, 256> tflite_softmax_float_table(float s_in, float beta) {
    std::array<float, 256> table{};
    const float scale = -s_in * beta;
    for (int d = 0; d <= 255; ++d) table[static_cast<std::size_t>(255 - d)] = std::exp(scale * static_cast<float>(d));
    return table;
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/softmax_tables.hpp

namespace vnnx::ref {

template <class In, class Out>
void softmax(std::span<const In> in, std::span<Out> out, std::int64_t last_dim, float input_scale, float beta,
             float output_scale, std::int32_t output_zero_point) {
    const auto table = quant::tflite_softmax_float_table(input_scale, beta);
    const std::int64_t rows = last_dim > 0 ? static_cast<std::int64_t>(in.size()) / last_dim : 0;
    constexpr std::int32_t omin = std::numeric_limits<Out>::min(), omax = std::numeric_limits<Out>::max();
    for (std::int64_t r = 0; r < rows; ++r) {
        const In* x = in.data() + r * last_dim;
        Out* y = out.data() + r * last_dim;
        std::int32_t max_val = std::numeric_limits<In>::min();
        for (std::int64_t j = 0; j < last_dim; ++j) max_val = std::max<std::int32_t>(max_val, x[j]);
        // table[255 − max + x] = exp(−S·β·(max − x))
        auto e = [&](std::int64_t j) { return table[static_cast<std::size_t>(255 - max_val + x[j])]; };
        float sum = 0.0f;
        for (std::int64_t j = 0; j < last_dim; ++j) sum += e(j);
        const float inv = 1.0f / (sum * output_scale);
        for (std::int64_t j = 0; j < last_dim; ++j) {
            const float p = e(j) * inv;
            std::int32_t q;
            if constexpr (std::is_same_v<Out, std::uint8_t>) q = static_cast<std::int32_t>(p + 0.5f);
            else q = static_cast<std::int32_t>(std::round(p)) + output_zero_point;
            y[j] = static_cast<Out>(std::clamp(q, omin, omax));
        }
    }
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/softmax.hpp

namespace vnnx::ref {

/// Called after each operator with its index and the interpreter's tensor table.
using node_observer = std::function<void(std::size_t op_index, const std::vector<std::optional<ndarray>>& tensors)>;

/// Everything a run computed: graph outputs (graph-output order) and every tensor by index
/// (constants that were read and all activations; nullopt for tensors never touched).
struct run_trace {
    std::vector<ndarray> outputs;
    std::vector<std::optional<ndarray>> tensors;
};

namespace detail {

using tflite::tensor_type;
using bop = builtin_operator;

[[nodiscard]] inline std::optional<dtype> to_dtype(tensor_type t) {
    switch (t) {
        case tensor_type::INT8: return dtype::int8;
        case tensor_type::UINT8: return dtype::uint8;
        case tensor_type::INT16: return dtype::int16;
        case tensor_type::INT32: return dtype::int32;
        case tensor_type::INT64: return dtype::int64;
        case tensor_type::FLOAT32: return dtype::float32;
        case tensor_type::BOOL: return dtype::bool_;
        default: return std::nullopt;
    }
}

template <class T>
std::span<T> view(ndarray& a) {
    return {reinterpret_cast<T*>(a.data.data()), a.element_count()};
}
template <class T>
std::span<const T> view(const ndarray& a) {
    return {reinterpret_cast<const T*>(a.data.data()), a.element_count()};
}

inline shape_t shape32(const ndarray& a) { return shape_t(a.shape.begin(), a.shape.end()); }

class interpreter {
public:
    interpreter(const tflite::model_view& m, const node_observer& obs)
        : m_(m), g_(m.subgraph(0)), obs_(obs), values_(g_.tensor_count()) {}

    run_trace run(std::vector<ndarray> inputs) {
        const auto gin = g_.inputs();
        if (inputs.size() != gin.size())
            fail_input(src() + ": the model has " + std::to_string(gin.size()) + " inputs, " +
                       std::to_string(inputs.size()) + " were given");
        for (std::size_t i = 0; i < gin.size(); ++i) {
            const auto t = g_.tensor(static_cast<std::size_t>(gin[i]));
            const auto want = to_dtype(t.type());
            if (!want || inputs[i].type != *want)
                fail_input(src() + ": input " + std::to_string(i) + " (" + std::string(t.name()) + ") must be " +
                           std::string(tflite::type_name(t.type())) + ", got " + std::string(dtype_name(inputs[i].type)));
            if (static_cast<std::int64_t>(inputs[i].element_count()) != t.element_count())
                fail_input(src() + ": input " + std::to_string(i) + " (" + std::string(t.name()) + ") needs " +
                           std::to_string(t.element_count()) + " elements, got " +
                           std::to_string(inputs[i].element_count()));
            inputs[i].shape.assign(t.shape().begin(), t.shape().end());
            values_[static_cast<std::size_t>(gin[i])] = std::move(inputs[i]);
        }
        for (std::size_t k = 0; k < g_.operator_count(); ++k) {
            op_ = g_.op(k);
            execute();
            if (obs_) obs_(k, values_);
        }
        run_trace tr;
        for (auto o : g_.outputs()) tr.outputs.push_back(value(o));
        tr.tensors = std::move(values_);
        return tr;
    }

private:
    const tflite::model_view& m_;
    tflite::subgraph_view g_;
    const node_observer& obs_;
    std::vector<std::optional<ndarray>> values_;
    tflite::operator_view op_;

    std::string src() const { return std::string(m_.source()); }
    std::string where() const { return src() + ": operator " + std::to_string(op_.index()) + " (" + op_.name() + ")"; }
    [[noreturn]] void bad(const std::string& rule) const { fail_input(where() + ": " + rule); }
    [[noreturn]] void unsupported(const std::string& rule) const { fail(error_kind::unsupported, where() + ": " + rule); }

    tflite::tensor_view tensor_at(std::int32_t index) const { return g_.tensor(static_cast<std::size_t>(index)); }

    /// The value of tensor `index`: computed earlier, or a constant read from the model.
    const ndarray& value(std::int32_t index) {
        if (index < 0 || static_cast<std::size_t>(index) >= values_.size())
            bad("tensor index " + std::to_string(index) + " out of range");
        auto& slot = values_[static_cast<std::size_t>(index)];
        if (!slot) {
            const auto t = tensor_at(index);
            const auto dt = to_dtype(t.type());
            if (!t.is_constant())
                bad("tensor " + std::to_string(index) + " (" + std::string(t.name()) + ") is read before it is written");
            if (!dt) unsupported("tensor " + std::to_string(index) + " has unsupported type " + std::string(tflite::type_name(t.type())));
            ndarray a(*dt, std::vector<std::int64_t>(t.shape().begin(), t.shape().end()));
            const auto bytes = t.data();
            if (bytes.size() != a.data.size())
                bad("constant tensor " + std::to_string(index) + " holds " + std::to_string(bytes.size()) + " bytes, its shape needs " +
                    std::to_string(a.data.size()));
            if (!bytes.empty()) std::memcpy(a.data.data(), bytes.data(), bytes.size());
            slot = std::move(a);
        }
        return *slot;
    }

    std::int32_t in_index(std::size_t i) const {
        const auto ins = op_.inputs();
        if (i >= ins.size() || ins[i] < 0) bad("input " + std::to_string(i) + " is missing");
        return ins[i];
    }
    bool has_input(std::size_t i) const { return i < op_.inputs().size() && op_.inputs()[i] >= 0; }
    const ndarray& in(std::size_t i) { return value(in_index(i)); }
    tflite::tensor_view in_tensor(std::size_t i) const { return tensor_at(in_index(i)); }
    tflite::tensor_view out_tensor(std::size_t i = 0) const {
        const auto outs = op_.outputs();
        if (i >= outs.size() || outs[i] < 0) bad("output " + std::to_string(i) + " is missing");
        return tensor_at(outs[i]);
    }

    /// Allocates output i with the model's shape and type.
    ndarray& out(std::size_t i = 0) {
        const auto t = out_tensor(i);
        const auto dt = to_dtype(t.type());
        if (!dt) unsupported("output type " + std::string(tflite::type_name(t.type())) + " is not supported");
        auto& slot = values_[t.index()];
        slot = ndarray(*dt, std::vector<std::int64_t>(t.shape().begin(), t.shape().end()));
        return *slot;
    }

    operand_quant q_of(const tflite::tensor_view& t) const {
        const auto q = t.quant();
        if (q.empty()) bad("tensor " + std::to_string(t.index()) + " (" + std::string(t.name()) + ") has no quantization");
        return {q.scale[0], static_cast<std::int32_t>(q.zero_point[0])};
    }

    quant::activation_range act_range(tflite::activation_function f, const tflite::tensor_view& o) const {
        const auto q = q_of(o);
        const bool u8 = o.type() == tensor_type::UINT8;
        const auto r = quant::tflite_activation_range(static_cast<quant::fused_activation>(f), q.scale, q.zero_point,
                                                      u8 ? 0 : -128, u8 ? 255 : 127);
        if (f != tflite::activation_function::NONE && f != tflite::activation_function::RELU &&
            f != tflite::activation_function::RELU6 && f != tflite::activation_function::RELU_N1_TO_1)
            unsupported("fused activation " + std::to_string(static_cast<int>(f)) + " on a quantized output");
        return r;
    }

    void require_8bit(const tflite::tensor_view& t, const char* role) const {
        if (t.type() != tensor_type::INT8 && t.type() != tensor_type::UINT8)
            unsupported(std::string(role) + " tensor " + std::to_string(t.index()) + " is " +
                        std::string(tflite::type_name(t.type())) + "; only int8/uint8 compute is implemented");
    }

    /// Calls f(T{}) with T the 8-bit C++ type of tensor t.
    template <class F>
    void dispatch8(const tflite::tensor_view& t, F&& f) const {
        require_8bit(t, "data");
        if (t.type() == tensor_type::INT8) f(std::int8_t{});
        else f(std::uint8_t{});
    }

    std::vector<std::int64_t> int_values(const ndarray& a) const {
        std::vector<std::int64_t> v(a.element_count());
        if (a.type != dtype::int32 && a.type != dtype::int64) bad("index tensor must be int32 or int64");
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = a.get<std::int64_t>(i);
        return v;
    }

    std::size_t norm_axis(std::int64_t axis, std::size_t rank) const {
        const std::int64_t r = static_cast<std::int64_t>(rank);
        if (axis < -r || axis >= r) bad("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(rank));
        return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
    }

    void execute();
    void conv_like(bop kind);
    void binary(bop kind);
    void unary(bop kind);
    void layout(bop kind);
};

inline void interpreter::conv_like(bop kind) {
    const auto ti = in_tensor(0), tw = in_tensor(1), to = out_tensor();
    require_8bit(ti, "input");
    require_8bit(tw, "filter");
    const auto& x = in(0);
    const auto& w = in(1);
    std::span<const std::int32_t> bias;
    if (has_input(2)) {
        const auto& b = in(2);
        if (b.type != dtype::int32) unsupported("only int32 biases are implemented");
        bias = view<std::int32_t>(b);
    }
    auto& y = out();
    const auto qi = q_of(ti), qo = q_of(to);
    const auto qw = tw.quant();
    if (qw.empty()) bad("filter has no quantization");
    requant_params q;
    q.input_zero_point = qi.zero_point;
    q.filter_zero_point = tw.type() == tensor_type::UINT8 ? static_cast<std::int32_t>(qw.zero_point[0]) : 0;
    q.output_zero_point = qo.zero_point;
    for (float sw : qw.scale)
        q.multipliers.push_back(quant::quantize_multiplier(static_cast<double>(qi.scale) * static_cast<double>(sw) /
                                                           static_cast<double>(qo.scale)));
    tflite::activation_function act{};
    conv_geometry g;
    std::int32_t depth_multiplier = 1;
    if (kind == bop::CONV_2D) {
        const auto o = op_.options<tflite::opt::Conv2DOptions>();
        act = o.fused_activation_function;
        g = {o.stride_h, o.stride_w, o.dilation_h_factor, o.dilation_w_factor,
             o.padding == tflite::padding_mode::SAME ? padding::same : padding::valid};
        q.round = rounding::single;
    } else if (kind == bop::DEPTHWISE_CONV_2D) {
        const auto o = op_.options<tflite::opt::DepthwiseConv2DOptions>();
        act = o.fused_activation_function;
        g = {o.stride_h, o.stride_w, o.dilation_h_factor, o.dilation_w_factor,
             o.padding == tflite::padding_mode::SAME ? padding::same : padding::valid};
        depth_multiplier = o.depth_multiplier;
        q.round = rounding::double_;
    } else {
        const auto o = op_.options<tflite::opt::FullyConnectedOptions>();
        act = o.fused_activation_function;
        if (o.weights_format != tflite::fc_weights_format::DEFAULT) unsupported("shuffled FC weights are not supported");
        q.round = rounding::single;
    }
    q.act = act_range(act, to);
    // uint8 GEMMs of this TFLite build run through gemmlowp (double rounding), int8 through
    // ruy (single rounding); measured on the shared models (mobilenet_v1 uint8, ad01 int8).
    if (kind != bop::DEPTHWISE_CONV_2D && tw.type() == tensor_type::UINT8) q.round = rounding::double_;
    if (g.stride_h <= 0 || g.stride_w <= 0 || g.dilation_h <= 0 || g.dilation_w <= 0) bad("strides and dilations must be positive");
    if (ti.type() != tw.type() || ti.type() != to.type()) unsupported("mixed input/filter/output types");
    dispatch8(ti, [&]<class T>(T) {
        if (kind == bop::FULLY_CONNECTED) {
            if (w.shape.size() != 2) bad("weights must be 2-D");
            const auto depth = static_cast<std::int32_t>(w.shape[1]);
            const auto units = static_cast<std::int32_t>(w.shape[0]);
            if (depth <= 0 || x.element_count() % static_cast<std::size_t>(depth) != 0)
                bad("input size is not a multiple of the weights' depth");
            const auto batches = static_cast<std::int32_t>(x.element_count() / static_cast<std::size_t>(depth));
            if (y.element_count() != static_cast<std::size_t>(batches) * static_cast<std::size_t>(units))
                bad("output size does not match batches x units");
            if (!bias.empty() && bias.size() != static_cast<std::size_t>(units)) bad("bias size does not match units");
            fully_connected<T, T>(view<T>(x), view<T>(w), bias, view<T>(y), batches, depth, units, q);
            return;
        }
        if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) bad("input, filter and output must be 4-D");
        const auto is = as_nhwc(shape32(x)), fs = as_nhwc(shape32(w)), os = as_nhwc(shape32(y));
        if (!bias.empty() && bias.size() != static_cast<std::size_t>(os.c)) bad("bias size does not match output channels");
        if (os.n != is.n) bad("batch sizes differ");
        if (kind == bop::CONV_2D) {
            if (fs.n != os.c) bad("filter count does not match output channels");
            conv2d<T, T>(view<T>(x), is, view<T>(w), fs, bias, view<T>(y), os, g, q);
        } else {
            depthwise_conv2d<T, T>(view<T>(x), is, view<T>(w), fs, bias, view<T>(y), os, g, depth_multiplier, q);
        }
    });
}

inline void interpreter::binary(bop kind) {
    const auto ta = in_tensor(0), tb = in_tensor(1), to = out_tensor();
    const auto& a = in(0);
    const auto& b = in(1);
    auto& y = out();
    if (ta.type() != tb.type() || ta.type() != to.type()) unsupported("inputs and output must have one type");
    const auto sa = shape32(a), sb = shape32(b);
    if (static_cast<std::int64_t>(y.element_count()) != flat_size(broadcast_shape(sa, sb, where())))
        bad("output size does not match the broadcast of the inputs");
    if (a.type == dtype::int32 && kind != bop::MAXIMUM && kind != bop::MINIMUM) {
        if (!ta.quant().empty() || !tb.quant().empty()) unsupported("quantized int32 arithmetic is not implemented");
        const char op = kind == bop::ADD ? '+' : kind == bop::SUB ? '-' : kind == bop::MUL ? '*' : kind == bop::DIV ? '/' : 'f';
        int_arithmetic(view<std::int32_t>(a), sa, view<std::int32_t>(b), sb, view<std::int32_t>(y), op, where());
        return;
    }
    if (kind == bop::DIV || kind == bop::FLOOR_DIV) unsupported("only int32 division is implemented");
    if (kind == bop::MAXIMUM || kind == bop::MINIMUM) {
        const bool mx = kind == bop::MAXIMUM;
        switch (a.type) {
            case dtype::int8: min_max<std::int8_t>(view<std::int8_t>(a), sa, view<std::int8_t>(b), sb, view<std::int8_t>(y), mx); break;
            case dtype::uint8: min_max<std::uint8_t>(view<std::uint8_t>(a), sa, view<std::uint8_t>(b), sb, view<std::uint8_t>(y), mx); break;
            case dtype::int32: min_max<std::int32_t>(view<std::int32_t>(a), sa, view<std::int32_t>(b), sb, view<std::int32_t>(y), mx); break;
            default: unsupported("type " + std::string(dtype_name(a.type)));
        }
        return;
    }
    dispatch8(ta, [&]<class T>(T) {
        const auto qa = q_of(ta), qb = q_of(tb), qo = q_of(to);
        if (kind == bop::MUL) {
            const auto o = op_.options<tflite::opt::MulOptions>();
            mul<T>(view<T>(a), sa, view<T>(b), sb, view<T>(y), make_mul_params(qa, qb, qo, act_range(o.fused_activation_function, to)));
        } else {
            const bool sub = kind == bop::SUB;
            const auto f = sub ? op_.options<tflite::opt::SubOptions>().fused_activation_function
                               : op_.options<tflite::opt::AddOptions>().fused_activation_function;
            add<T>(view<T>(a), sa, view<T>(b), sb, view<T>(y), make_add_params(qa, qb, qo, act_range(f, to)), sub);
        }
    });
}

inline void interpreter::unary(bop kind) {
    const auto ti = in_tensor(0), to = out_tensor();
    const auto& x = in(0);
    auto& y = out();
    if (x.element_count() != y.element_count()) bad("input and output sizes differ");
    if (kind == bop::DEQUANTIZE) {
        if (y.type != dtype::float32) unsupported("DEQUANTIZE to a non-float32 output");
        const auto q = q_of(ti);
        switch (x.type) {
            case dtype::int8: dequantize<std::int8_t>(view<std::int8_t>(x), view<float>(y), q); break;
            case dtype::uint8: dequantize<std::uint8_t>(view<std::uint8_t>(x), view<float>(y), q); break;
            case dtype::int16: dequantize<std::int16_t>(view<std::int16_t>(x), view<float>(y), q); break;
            default: unsupported("DEQUANTIZE of " + std::string(dtype_name(x.type)));
        }
        return;
    }
    if (kind == bop::QUANTIZE) {
        const auto qo = q_of(to);
        if (x.type == dtype::float32) {
            if (y.type == dtype::int8) quantize<std::int8_t>(view<float>(x), view<std::int8_t>(y), qo);
            else if (y.type == dtype::uint8) quantize<std::uint8_t>(view<float>(x), view<std::uint8_t>(y), qo);
            else unsupported("QUANTIZE to " + std::string(dtype_name(y.type)));
            return;
        }
        const auto qi = q_of(ti);
        dispatch8(ti, [&]<class In>(In) {
            dispatch8(to, [&]<class Out>(Out) { requantize<In, Out>(view<In>(x), view<Out>(y), qi, qo); });
        });
        return;
    }
    if (ti.type() != to.type()) unsupported("input and output types differ");
    dispatch8(ti, [&]<class T>(T) {
        const auto qi = q_of(ti), qo = q_of(to);
        const auto xi = view<T>(x);
        const auto yo = view<T>(y);
        constexpr float inf = std::numeric_limits<float>::infinity();
        switch (kind) {
            case bop::RELU: relu_x<T>(xi, yo, qi, qo, 0.0f, inf); break;
            case bop::RELU6: relu_x<T>(xi, yo, qi, qo, 0.0f, 6.0f); break;
            case bop::RELU_N1_TO_1: relu_x<T>(xi, yo, qi, qo, -1.0f, 1.0f); break;
            case bop::RELU_0_TO_1: relu_x<T>(xi, yo, qi, qo, 0.0f, 1.0f); break;
            case bop::LEAKY_RELU: leaky_relu<T>(xi, yo, qi, qo, op_.options<tflite::opt::LeakyReluOptions>().alpha); break;
            case bop::HARD_SWISH: hard_swish<T>(xi, yo, qi, qo); break;
            case bop::LOGISTIC: apply_table<T>(xi, yo, logistic_table<T>(qi, qo)); break;
            case bop::TANH: apply_table<T>(xi, yo, tanh_table<T>(qi, qo)); break;
            case bop::SOFTMAX: {
                if (x.shape.empty()) bad("SOFTMAX needs rank >= 1");
                softmax<T, T>(xi, yo, x.shape.back(), qi.scale, op_.options<tflite::opt::SoftmaxOptions>().beta, qo.scale,
                              qo.zero_point);
                break;
            }
            default: unsupported("not implemented");
        }
    });
}

inline void interpreter::layout(bop kind) {
    switch (kind) {
        case bop::RESHAPE:
        case bop::SQUEEZE:
        case bop::EXPAND_DIMS: {
            const auto& x = in(0);
            auto& y = out();
            if (x.element_count() != y.element_count() || x.type != y.type) bad("output must hold the input's elements");
            y.data = x.data;
            return;
        }
        case bop::CONCATENATION: {
            const auto o = op_.options<tflite::opt::ConcatenationOptions>();
            auto& y = out();
            const std::size_t axis = norm_axis(o.axis, y.shape.size());
            std::vector<ndarray> rescaled;  // uint8 inputs with other quantization are rescaled first
            std::vector<const ndarray*> parts;
            const auto to = out_tensor();
            rescaled.reserve(op_.inputs().size());
            for (std::size_t i = 0; i < op_.inputs().size(); ++i) {
                const auto& x = in(i);
                if (x.type != y.type || x.shape.size() != y.shape.size()) bad("inputs must match the output's type and rank");
                const auto ti = in_tensor(i);
                if ((x.type == dtype::int8 || x.type == dtype::uint8) && !ti.quant().empty() && !to.quant().empty()) {
                    const auto qi = q_of(ti), qo = q_of(to);
                    if (qi.scale != qo.scale || qi.zero_point != qo.zero_point) {
                        // TFLite's ConcatenationWithScaling: round(x·s + bias) + z_out in float.
                        const float inv = 1.0f / qo.scale;
                        const float scale = qi.scale * inv;
                        const float bias = static_cast<float>(-qi.zero_point) * scale;
                        ndarray r = x;
                        const std::int32_t lo = x.type == dtype::int8 ? -128 : 0, hi = x.type == dtype::int8 ? 127 : 255;
                        for (std::size_t k = 0; k < r.element_count(); ++k) {
                            const auto v = static_cast<std::int32_t>(std::round(x.get<float>(k) * scale + bias)) + qo.zero_point;
                            r.set<std::int32_t>(k, std::clamp(v, lo, hi));
                        }
                        rescaled.push_back(std::move(r));
                        parts.push_back(&rescaled.back());
                        continue;
                    }
                }
                parts.push_back(&x);
            }
            std::int64_t sum = 0;
            for (const auto* p : parts) sum += p->shape[axis];
            if (sum != y.shape[axis]) bad("input sizes along the axis do not add up to the output's");
            concatenate(parts, axis, y);
            return;
        }
        case bop::SPLIT:
        case bop::SPLIT_V: {
            const bool v = kind == bop::SPLIT_V;
            const auto& x = in(v ? 0 : 1);
            const auto axis_vals = int_values(in(v ? 2 : 0));
            if (axis_vals.size() != 1) bad("axis must be a scalar");
            const std::size_t axis = norm_axis(axis_vals[0], x.shape.size());
            std::vector<ndarray*> outs;
            std::int64_t sum = 0;
            for (std::size_t i = 0; i < op_.outputs().size(); ++i) {
                auto& y = out(i);
                if (y.type != x.type) bad("outputs must have the input's type");
                sum += y.shape[axis];
                outs.push_back(&y);
            }
            if (sum != x.shape[axis]) bad("output sizes along the axis do not add up to the input's");
            split(x, axis, outs);
            return;
        }
        case bop::PACK: {
            const auto o = op_.options<tflite::opt::PackOptions>();
            auto& y = out();
            const std::size_t axis = norm_axis(o.axis, y.shape.size());
            std::vector<ndarray> parts;
            std::vector<const ndarray*> ptrs;
            parts.reserve(op_.inputs().size());
            for (std::size_t i = 0; i < op_.inputs().size(); ++i) {
                ndarray p = in(i);
                if (p.type != y.type) bad("inputs must have the output's type");
                p.shape.insert(p.shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
                parts.push_back(std::move(p));
                ptrs.push_back(&parts.back());
            }
            if (static_cast<std::int64_t>(parts.size()) != y.shape[axis]) bad("input count does not match the output");
            concatenate(ptrs, axis, y);
            return;
        }
        case bop::UNPACK: {
            const auto o = op_.options<tflite::opt::UnpackOptions>();
            const auto& x = in(0);
            const std::size_t axis = norm_axis(o.axis, x.shape.size());
            if (static_cast<std::int64_t>(op_.outputs().size()) != x.shape[axis]) bad("output count does not match the axis size");
            std::vector<ndarray*> outs;
            std::vector<std::int64_t> keep;
            for (std::size_t i = 0; i < op_.outputs().size(); ++i) outs.push_back(&out(i));
            for (auto* p : outs) p->shape.insert(p->shape.begin() + static_cast<std::ptrdiff_t>(axis), 1);
            split(x, axis, outs);
            for (auto* p : outs) p->shape.erase(p->shape.begin() + static_cast<std::ptrdiff_t>(axis));
            return;
        }
        case bop::PAD:
        case bop::PADV2: {
            const auto& x = in(0);
            const auto pv = int_values(in(1));
            auto& y = out();
            const std::size_t r = x.shape.size();
            if (pv.size() != 2 * r) bad("paddings must be [rank, 2]");
            std::vector<std::pair<std::int64_t, std::int64_t>> pads(r);
            for (std::size_t i = 0; i < r; ++i) {
                pads[i] = {pv[2 * i], pv[2 * i + 1]};
                if (pads[i].first < 0 || pads[i].second < 0) bad("paddings must be non-negative");
                if (x.shape[i] + pads[i].first + pads[i].second != y.shape[i]) bad("output shape does not match the paddings");
            }
            ndarray fill(x.type, {});
            if (kind == bop::PADV2 && has_input(2)) {
                const auto& c = in(2);
                if (c.type != x.type || c.element_count() != 1) bad("the constant value must be one element of the input type");
                fill = c;
            } else if ((x.type == dtype::int8 || x.type == dtype::uint8) && !out_tensor().quant().empty()) {
                fill.set<std::int32_t>(0, q_of(out_tensor()).zero_point);  // quantized zero
            }
            pad(x, pads, fill.data, y);
            return;
        }
        case bop::STRIDED_SLICE: {
            const auto o = op_.options<tflite::opt::StridedSliceOptions>();
            const auto& x = in(0);
            const auto begin = int_values(in(1)), end = int_values(in(2)), strides = int_values(in(3));
            const std::size_t r = x.shape.size();
            if (o.ellipsis_mask != 0 || o.new_axis_mask != 0) unsupported("ellipsis and new-axis masks are not implemented");
            if (begin.size() > r || end.size() != begin.size() || strides.size() != begin.size())
                bad("begin, end and strides must have one entry per sliced axis");
            std::vector<std::int64_t> start(r, 0), step(r, 1), count(r);
            for (std::size_t i = 0; i < r; ++i) {
                const std::int64_t dim = x.shape[i];
                if (i >= begin.size()) {
                    count[i] = dim;
                    continue;
                }
                const std::int64_t s = strides[i];
                if (s == 0) bad("stride must not be 0");
                const bool shrink = (o.shrink_axis_mask >> i) & 1;
                std::int64_t b = begin[i];
                if ((o.begin_mask >> i) & 1 && !shrink) b = s > 0 ? 0 : dim - 1;
                else {
                    if (b < 0) b += dim;
                    b = s > 0 ? std::clamp<std::int64_t>(b, 0, dim) : std::clamp<std::int64_t>(b, -1, dim - 1);
                }
                std::int64_t e;
                if (shrink) e = b + 1;
                else if ((o.end_mask >> i) & 1) e = s > 0 ? dim : -1;
                else {
                    e = end[i];
                    if (o.offset) e += begin[i];
                    if (e < 0) e += dim;
                    e = s > 0 ? std::clamp<std::int64_t>(e, 0, dim) : std::clamp<std::int64_t>(e, -1, dim - 1);
                }
                if (shrink && (b < 0 || b >= dim)) bad("shrunk axis index out of range");
                start[i] = b;
                step[i] = shrink ? 1 : s;
                const std::int64_t span = s > 0 ? e - b : b - e;
                const std::int64_t as = s > 0 ? s : -s;
                count[i] = span <= 0 ? 0 : (span + as - 1) / as;
            }
            auto& y = out();
            std::int64_t total = 1;
            for (auto c : count) total *= c;
            if (static_cast<std::int64_t>(y.element_count()) != total || y.type != x.type) bad("output shape does not match the slice");
            strided_copy(x, start, step, count, y);
            return;
        }
        case bop::TRANSPOSE: {
            const auto& x = in(0);
            const auto pv = int_values(in(1));
            auto& y = out();
            if (pv.size() != x.shape.size()) bad("permutation length must equal the rank");
            std::vector<std::int32_t> perm(pv.size());
            std::vector<bool> seen(pv.size(), false);
            for (std::size_t i = 0; i < pv.size(); ++i) {
                perm[i] = static_cast<std::int32_t>(norm_axis(pv[i], pv.size()));
                if (seen[static_cast<std::size_t>(perm[i])]) bad("permutation repeats an axis");
                seen[static_cast<std::size_t>(perm[i])] = true;
                if (y.shape[i] != x.shape[static_cast<std::size_t>(perm[i])]) bad("output shape does not match the permutation");
            }
            transpose(x, perm, y);
            return;
        }
        case bop::GATHER: {
            const auto o = op_.options<tflite::opt::GatherOptions>();
            if (o.batch_dims != 0) unsupported("batch_dims other than 0");
            const auto& x = in(0);
            const auto idx = int_values(in(1));
            auto& y = out();
            const std::size_t axis = norm_axis(o.axis, x.shape.size());
            std::int64_t outer, inner;
            split_at(x.shape, axis, outer, inner);
            if (static_cast<std::int64_t>(y.element_count()) != outer * inner * static_cast<std::int64_t>(idx.size()) || y.type != x.type)
                bad("output shape does not match the gather");
            gather(x, axis, idx, y, where());
            return;
        }
        case bop::MIRROR_PAD: {
            // TFLite's mirror_pad.cc: REFLECT mirrors without the edge element, SYMMETRIC with it.
            const bool reflect = static_cast<std::int32_t>(op_.options<tflite::opt::MirrorPadOptions>().mode) == 0;
            const auto& x = in(0);
            const auto p = int_values(in(1));
            auto& y = out();
            const std::size_t r = x.shape.size();
            if (p.size() != 2 * r || y.shape.size() != r || y.type != x.type) bad("paddings must have shape [rank, 2]");
            for (std::size_t a = 0; a < r; ++a) {
                const std::int64_t limit = x.shape[a] - (reflect ? 1 : 0);
                if (p[2 * a] < 0 || p[2 * a + 1] < 0 || p[2 * a] > limit || p[2 * a + 1] > limit ||
                    y.shape[a] != x.shape[a] + p[2 * a] + p[2 * a + 1])
                    bad("paddings do not fit axis " + std::to_string(a));
            }
            const std::size_t es = dtype_size(x.type);
            std::vector<std::int64_t> idx(r, 0);
            for (std::size_t e = 0; e < y.element_count(); ++e) {
                std::int64_t src = 0;
                for (std::size_t a = 0; a < r; ++a) {
                    const std::int64_t n = x.shape[a];
                    std::int64_t i = idx[a] - p[2 * a];
                    if (i < 0) i = reflect ? -i : -i - 1;
                    else if (i >= n) i = reflect ? 2 * n - 2 - i : 2 * n - 1 - i;
                    src = src * n + i;
                }
                std::memcpy(y.data.data() + e * es, x.data.data() + static_cast<std::size_t>(src) * es, es);
                for (std::size_t a = r; a-- > 0;) {
                    if (++idx[a] < y.shape[a]) break;
                    idx[a] = 0;
                }
            }
            return;
        }
        case bop::DEPTH_TO_SPACE:
        case bop::SPACE_TO_DEPTH: {
            const bool to_space = kind == bop::DEPTH_TO_SPACE;
            const std::int64_t bs = to_space ? op_.options<tflite::opt::DepthToSpaceOptions>().block_size
                                             : op_.options<tflite::opt::SpaceToDepthOptions>().block_size;
            const auto& x = in(0);
            auto& y = out();
            if (bs < 1 || x.shape.size() != 4 || y.shape.size() != 4 || x.type != y.type || x.element_count() != y.element_count())
                bad("input and output must be 4-D of one type and size, block_size >= 1");
            // Index space of the spatial side [N, H, i, W, j, C] against the depth side [N, H, W, (i, j, C)].
            const auto& space = to_space ? y.shape : x.shape;
            const std::int64_t N = space[0], H = space[1] / bs, W = space[2] / bs, C = space[3];
            if (H * bs != space[1] || W * bs != space[2]) bad("spatial dims are not multiples of block_size");
            const std::size_t es = dtype_size(x.type);
            for (std::int64_t n = 0; n < N; ++n)
                for (std::int64_t h = 0; h < H; ++h)
                    for (std::int64_t i = 0; i < bs; ++i)
                        for (std::int64_t w = 0; w < W; ++w)
                            for (std::int64_t j = 0; j < bs; ++j)
                                for (std::int64_t c = 0; c < C; ++c) {
                                    const auto sp = static_cast<std::size_t>(((n * H * bs + h * bs + i) * W * bs + w * bs + j) * C + c);
                                    const auto dp = static_cast<std::size_t>(((n * H + h) * W + w) * bs * bs * C + (i * bs + j) * C + c);
                                    const auto from = to_space ? dp : sp, to = to_space ? sp : dp;
                                    std::memcpy(y.data.data() + to * es, x.data.data() + from * es, es);
                                }
            return;
        }
        case bop::SHAPE: {
            const auto& x = in(0);
            auto& y = out();
            if (y.element_count() != x.shape.size()) bad("output must have one element per input axis");
            for (std::size_t i = 0; i < x.shape.size(); ++i) y.set<std::int64_t>(i, x.shape[i]);
            return;
        }
        case bop::CAST: {
            const auto& x = in(0);
            auto& y = out();
            if (x.element_count() != y.element_count()) bad("input and output sizes differ");
            const bool floaty = x.type == dtype::float32 || y.type == dtype::float32;
            for (std::size_t i = 0; i < x.element_count(); ++i) {
                if (floaty) y.set<double>(i, x.get<double>(i));
                else y.set<std::int64_t>(i, x.get<std::int64_t>(i));
            }
            return;
        }
        default: unsupported("not implemented");
    }
}

inline void interpreter::execute() {
    const bop kind = op_.op();
    switch (kind) {
        case bop::CONV_2D:
        case bop::DEPTHWISE_CONV_2D:
        case bop::FULLY_CONNECTED: conv_like(kind); return;
        case bop::ADD:
        case bop::SUB:
        case bop::MUL:
        case bop::MAXIMUM:
        case bop::MINIMUM:
        case bop::DIV:
        case bop::FLOOR_DIV: binary(kind); return;
        case bop::DEQUANTIZE:
        case bop::QUANTIZE:
        case bop::RELU:
        case bop::RELU6:
        case bop::RELU_N1_TO_1:
        case bop::RELU_0_TO_1:
        case bop::LEAKY_RELU:
        case bop::HARD_SWISH:
        case bop::LOGISTIC:
        case bop::TANH:
        case bop::SOFTMAX: unary(kind); return;
        case bop::AVERAGE_POOL_2D:
        case bop::MAX_POOL_2D: {
            const auto ti = in_tensor(0), to = out_tensor();
            const auto o = op_.options<tflite::opt::Pool2DOptions>();
            const auto& x = in(0);
            auto& y = out();
            if (x.shape.size() != 4 || y.shape.size() != 4) bad("input and output must be 4-D");
            if (o.stride_h <= 0 || o.stride_w <= 0 || o.filter_height <= 0 || o.filter_width <= 0) bad("filter and strides must be positive");
            pool_params p{o.filter_height, o.filter_width, o.stride_h, o.stride_w,
                          o.padding == tflite::padding_mode::SAME ? padding::same : padding::valid,
                          act_range(o.fused_activation_function, to)};
            dispatch8(ti, [&]<class T>(T) {
                if (kind == bop::AVERAGE_POOL_2D) average_pool<T>(view<T>(x), as_nhwc(shape32(x)), view<T>(y), as_nhwc(shape32(y)), p);
                else max_pool<T>(view<T>(x), as_nhwc(shape32(x)), view<T>(y), as_nhwc(shape32(y)), p);
            });
            return;
        }
        case bop::MEAN: {
            const auto ti = in_tensor(0), to = out_tensor();
            const auto& x = in(0);
            const auto axes = int_values(in(1));
            const bool keep = op_.options<tflite::opt::ReducerOptions>().keep_dims;
            auto& y = out();
            std::vector<bool> red(x.shape.size(), false);
            for (auto a : axes) red[norm_axis(a, x.shape.size())] = true;
            std::int64_t kept = 1;
            for (std::size_t i = 0; i < x.shape.size(); ++i)
                if (!red[i]) kept *= x.shape[i];
            if (static_cast<std::int64_t>(y.element_count()) != kept) bad("output size does not match the kept axes");
            const bool hw = keep && x.shape.size() == 4 && red[1] && red[2] && !red[0] && !red[3];
            dispatch8(ti, [&]<class T>(T) {
                if (hw) {
                    mean_hw<T>(view<T>(x), as_nhwc(shape32(x)), view<T>(y), q_of(ti), q_of(to));
                    return;
                }
                std::int64_t count = 0;
                const auto sums = reduce_sum<T>(view<T>(x), shape32(x), red, count);
                mean_requantize<T>(sums, count, view<T>(y), q_of(ti), q_of(to));
            });
            return;
        }
        case bop::ARG_MAX:
        case bop::ARG_MIN: {
            const auto& x = in(0);
            const auto av = int_values(in(1));
            auto& y = out();
            if (av.size() != 1) bad("axis must be a scalar");
            const auto axis = static_cast<std::int32_t>(norm_axis(av[0], x.shape.size()));
            const bool mn = kind == bop::ARG_MIN;
            const auto s = shape32(x);
            auto run_as = [&]<class T>(T) {
                if (y.type == dtype::int32) arg_max<T, std::int32_t>(view<T>(x), s, axis, view<std::int32_t>(y), mn);
                else if (y.type == dtype::int64) arg_max<T, std::int64_t>(view<T>(x), s, axis, view<std::int64_t>(y), mn);
                else bad("output must be int32 or int64");
            };
            switch (x.type) {
                case dtype::int8: run_as(std::int8_t{}); break;
                case dtype::uint8: run_as(std::uint8_t{}); break;
                case dtype::int32: run_as(std::int32_t{}); break;
                case dtype::float32: run_as(float{}); break;
                default: unsupported("ARG_MAX of " + std::string(dtype_name(x.type)));
            }
            return;
        }
        case bop::RESIZE_NEAREST_NEIGHBOR:
        case bop::RESIZE_BILINEAR: {
            const auto ti = in_tensor(0);
            const auto& x = in(0);
            auto& y = out();
            if (x.shape.size() != 4 || y.shape.size() != 4) bad("input and output must be 4-D");
            const auto is = as_nhwc(shape32(x)), os = as_nhwc(shape32(y));
            if (is.n != os.n || is.c != os.c || os.h <= 0 || os.w <= 0) bad("output shape does not match the input");
            dispatch8(ti, [&]<class T>(T) {
                if (kind == bop::RESIZE_NEAREST_NEIGHBOR) {
                    const auto o = op_.options<tflite::opt::ResizeNearestNeighborOptions>();
                    resize_nearest<T>(view<T>(x), is, view<T>(y), os, o.align_corners, o.half_pixel_centers);
                } else {
                    const auto o = op_.options<tflite::opt::ResizeBilinearOptions>();
                    if (o.align_corners && o.half_pixel_centers) bad("align_corners and half_pixel_centers are exclusive");
                    if constexpr (std::is_same_v<T, std::uint8_t>) {
                        if (o.half_pixel_centers && is.c % 8 == 0 && os.h == 8 * is.h && os.w == 8 * is.w && os.h >= 8)
                            unsupported("uint8 x8 half-pixel bilinear uses TFLite's special 8x8 kernel, not implemented");
                        resize_bilinear_float<T>(view<T>(x), is, view<T>(y), os, o.align_corners, o.half_pixel_centers);
                    } else {
                        resize_bilinear_integer<T>(view<T>(x), is, view<T>(y), os, o.align_corners, o.half_pixel_centers);
                    }
                }
            });
            return;
        }
        default: layout(kind); return;
    }
}

}  // namespace detail

/// Runs the model on `inputs` (graph-input order) and returns every tensor it computed.
[[nodiscard]] inline run_trace run_traced(const tflite::model_view& model, std::vector<ndarray> inputs,
                                          const node_observer& observer = {}) {
    detail::interpreter it(model, observer);
    return it.run(std::move(inputs));
}

/// Runs the model and returns its outputs in graph-output order.
[[nodiscard]] inline std::vector<ndarray> run(const tflite::model_view& model, std::vector<ndarray> inputs) {
    return run_traced(model, std::move(inputs)).outputs;
}

}  // namespace vnnx::ref
// ---- end vnnx/ref/interpreter.hpp

namespace vnnx::compiler {

namespace detail {

inline std::optional<dtype> lut_dtype_of(tensor_type t) {
    switch (t) {
        case tensor_type::INT8: return dtype::int8;
        case tensor_type::UINT8: return dtype::uint8;
        case tensor_type::INT32: return dtype::int32;
        default: return std::nullopt;
    }
}

inline tflite::quant lut_quant_of(const quantization& q) {
    return tflite::quant(q.scale, q.zero_point, q.quantized_dimension);
}

/// Adds operator `o` to the builder with the TFLite options the reference kernels read.
inline void add_chain_operator(tflite::builder& b, const op& o, std::vector<std::int32_t> ins,
                               std::vector<std::int32_t> outs) {
    using B = builtin_operator;
    const auto& x = o.options;
    switch (o.code) {
        case B::ADD: b.add_operator(o.code, ins, outs, tflite::add_options{x.fused, x.pot_scale_int16}); break;
        case B::SUB: b.add_operator(o.code, ins, outs, tflite::sub_options{x.fused, x.pot_scale_int16}); break;
        case B::MUL: b.add_operator(o.code, ins, outs, tflite::mul_options{x.fused}); break;
        case B::DIV: b.add_operator(o.code, ins, outs, tflite::div_options{x.fused}); break;
        case B::LEAKY_RELU: b.add_operator(o.code, ins, outs, tflite::leaky_relu_options{x.alpha}); break;
        case B::GELU: b.add_operator(o.code, ins, outs, tflite::gelu_options{x.approximate}); break;
        default: b.add_operator(o.code, ins, outs); break;
    }
}

}  // namespace detail

/// The chain's tables: `tables` tables of 256 entries, entry r = output for input byte r.
inline std::vector<std::vector<std::int32_t>> evaluate_lut_chain(const graph& g, const std::vector<std::int32_t>& chain,
                                                                 int tables) {
    if (chain.empty()) fail(error_kind::bad_input, g.source + ": an empty LUT chain");
    if (tables < 1 || tables > 4)
        fail(error_kind::unsupported, g.source + ": a LUT chain needs 1 to 4 tables, not " + std::to_string(tables));
    const op& first = g.ops.at(static_cast<std::size_t>(chain.front()));
    const std::string where = g.source + ": " + describe(first);
    std::int32_t chain_in = -1;
    for (auto t : first.inputs)
        if (t >= 0 && !g.t(t).is_constant()) {
            chain_in = t;
            break;
        }
    if (chain_in < 0) fail(error_kind::bad_input, where + ": a LUT chain needs one activation input");

    const std::int32_t L = tables;
    const std::vector<std::int32_t> act_shape{1, 1, 256, L};
    tflite::builder b;
    std::map<std::int32_t, std::int32_t> mapped;  // graph tensor -> builder tensor
    auto map_tensor = [&](std::int32_t t) {
        if (auto it = mapped.find(t); it != mapped.end()) return it->second;
        const tensor& x = g.t(t);
        std::int32_t k = 0;
        if (x.is_constant()) {
            k = b.add_constant(x.name, x.type, x.shape, std::span<const std::byte>(*x.data), detail::lut_quant_of(x.quant));
        } else {
            k = b.add_tensor(x.name, x.type, act_shape, detail::lut_quant_of(x.quant));
        }
        mapped.emplace(t, k);
        return k;
    };
    const std::int32_t in_k = map_tensor(chain_in);
    std::int32_t last_out = -1;
    for (auto i : chain) {
        const op& o = g.ops.at(static_cast<std::size_t>(i));
        if (o.kind != op_type::builtin || o.outputs.size() != 1)
            fail(error_kind::unsupported, g.source + ": " + describe(o) + ": cannot be part of a LUT chain");
        std::vector<std::int32_t> ins, outs;
        for (auto t : o.inputs) ins.push_back(map_tensor(t));
        outs.push_back(map_tensor(o.outputs[0]));
        detail::add_chain_operator(b, o, std::move(ins), std::move(outs));
        last_out = o.outputs[0];
    }
    b.set_inputs({in_k});
    b.set_outputs({mapped.at(last_out)});
    const auto bytes = b.finish();

    const auto in_type = detail::lut_dtype_of(g.t(chain_in).type);
    const auto out_type = detail::lut_dtype_of(g.t(last_out).type);
    if (!in_type || *in_type == dtype::int32)
        fail(error_kind::unsupported, where + ": a LUT chain input must be int8 or uint8, not " +
                                          std::string(tflite::type_name(g.t(chain_in).type)));
    if (!out_type)
        fail(error_kind::unsupported, where + ": a LUT chain output must be int8, uint8 or int32, not " +
                                          std::string(tflite::type_name(g.t(last_out).type)));
    ndarray ramp(*in_type, {1, 1, 256, L});
    for (std::int32_t r = 0; r < 256; ++r)
        for (std::int32_t c = 0; c < L; ++c) {
            // The byte r read as the input type: int8 sees 0..127 then -128..-1.
            const std::int32_t v = *in_type == dtype::int8 ? static_cast<std::int8_t>(r) : r;
            ramp.set<std::int32_t>(static_cast<std::size_t>(r * L + c), v);
        }
    std::vector<ndarray> outputs;
    try {
        const auto model = tflite::model_view::parse(bytes, g.source + " (LUT chain)");
        std::vector<ndarray> inputs;
        inputs.push_back(std::move(ramp));
        outputs = ref::run(model, std::move(inputs));
    } catch (const error& e) {
        fail(error_kind::unsupported, where + ": the lookup table of its element-wise chain cannot be computed: " + e.what());
    }
    if (outputs.size() != 1 || outputs[0].element_count() != static_cast<std::size_t>(256 * L))
        fail(error_kind::bad_input, where + ": the LUT chain did not produce 256 x " + std::to_string(L) + " values");
    std::vector<std::vector<std::int32_t>> out(static_cast<std::size_t>(L), std::vector<std::int32_t>(256));
    for (std::int32_t r = 0; r < 256; ++r)
        for (std::int32_t c = 0; c < L; ++c)
            out[static_cast<std::size_t>(c)][static_cast<std::size_t>(r)] =
                outputs[0].get<std::int32_t>(static_cast<std::size_t>(r * L + c));
    return out;
}

/// The evaluator `vnnx::compile` uses when compile_options::lut is empty.
[[nodiscard]] inline passes::lut_evaluator default_lut_evaluator() { return &evaluate_lut_chain; }

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/lut_tables.hpp

namespace vnnx::ops {

namespace detail {

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// Rules shared by the single-input operators: one activation input, one output, 8-bit, one
/// type, per-tensor quantization on both.
inline std::string check_unary(const graph& g, const compiler::op& o, bool same_type = true) {
    if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
    const auto& in = g.t(o.inputs[0]);
    const auto& out = g.t(o.outputs[0]);
    if (in.is_constant()) return "input 0 must be an activation, not a constant";
    if (!is_8bit(in.type)) return "input must be INT8 or UINT8";
    if (!is_8bit(out.type)) return "output must be INT8 or UINT8";
    if (same_type && in.type != out.type) return "input and output types must be equal";
    if (in.quant.empty() || out.quant.empty()) return "input and output need quantization parameters";
    if (in.quant.scale.size() > 1 || out.quant.scale.size() > 1) return "per-channel activation quantization is not supported";
    if (in.element_count() != out.element_count()) return "input and output must have the same number of elements";
    return {};
}

/// A lone operator lowered as a one-operator LUT (the table from the reference kernels).
inline void lower_as_lut(lowering& c, const compiler::op& o) {
    const auto* base = c.g.ops.data();
    const std::ptrdiff_t at = &o - base;
    if (at < 0 || static_cast<std::size_t>(at) >= c.g.ops.size())
        c.reject(o, "is not an operator of the graph being lowered");
    compiler::op lut;
    lut.kind = compiler::op_type::lut;
    lut.inputs = {o.inputs.at(0)};
    lut.outputs = {o.outputs.at(0)};
    lut.source_index = o.source_index;
    lut.tables = compiler::evaluate_lut_chain(c.g, {static_cast<std::int32_t>(at)}, 1);
    lut_op::lower_layer(c, lut);
}

/// The multiplier QM(a / b) computed as TFLite does: the quotient in float, then widened.
inline quant::quantized_multiplier qm_float_ratio(float a, float b) {
    return quant::quantize_multiplier(static_cast<double>(a / b));
}

inline format::obj_off_t append_i32(lowering& c, std::int32_t v) {
    return format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(v))};
}

/// output_multiplier / output_shift arrays of one element each.
inline void set_output_multiplier(lowering& c, compiler::layer_build& l, quant::quantized_multiplier m) {
    l.rec.output_multiplier = append_i32(c, m.multiplier);
    l.rec.output_shift = append_i32(c, m.shift);
}

}  // namespace detail

/// Operators that only ever become tables.
template <builtin_operator Code>
struct lut_only_op {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary = "element-wise, as a 256-entry lookup table (LUT 303)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::LUT);
    static constexpr std::string_view member = "ActivationOptions";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o);
    }
    static void lower_layer(lowering& c, const compiler::op& o) { detail::lower_as_lut(c, o); }
};

template <> struct op<builtin_operator::LOGISTIC> : lut_only_op<builtin_operator::LOGISTIC> {};
template <> struct op<builtin_operator::TANH> : lut_only_op<builtin_operator::TANH> {};
template <> struct op<builtin_operator::HARD_SWISH> : lut_only_op<builtin_operator::HARD_SWISH> {};
template <> struct op<builtin_operator::ELU> : lut_only_op<builtin_operator::ELU> {};
template <> struct op<builtin_operator::GELU> : lut_only_op<builtin_operator::GELU> {};
template <> struct op<builtin_operator::EXP> : lut_only_op<builtin_operator::EXP> {};
template <> struct op<builtin_operator::LOG> : lut_only_op<builtin_operator::LOG> {};
template <> struct op<builtin_operator::RSQRT> : lut_only_op<builtin_operator::RSQRT> {};
template <> struct op<builtin_operator::SQRT> : lut_only_op<builtin_operator::SQRT> {};
template <> struct op<builtin_operator::NEG> : lut_only_op<builtin_operator::NEG> {};

/// RELU (19), RELU6 (21), RELU_N1_TO_1 (20), RELU_0_TO_1 (152): requantize, then clamp (§7.6.7).
template <builtin_operator Code>
struct relu_family_op {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary = "clamp; a LUT, or its own layer when no table forms";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "";
    static constexpr std::string_view notes = "uint8 outputs clamp in 0..255 (the SDK keeps -128..127)";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o);
    }
    /// The real bounds (lo, hi) of the operator; hi = +inf for RELU.
    static constexpr std::pair<float, float> range() {
        using B = builtin_operator;
        if constexpr (Code == B::RELU6) return {0.0f, 6.0f};
        else if constexpr (Code == B::RELU_N1_TO_1) return {-1.0f, 1.0f};
        else if constexpr (Code == B::RELU_0_TO_1) return {0.0f, 1.0f};
        else return {0.0f, std::numeric_limits<float>::infinity()};
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& in = c.g.t(o.inputs[0]);
        const auto& out = c.g.t(o.outputs[0]);
        const float s_out = out.quant.scale0();
        const std::int32_t z_out = out.quant.zero0();
        // Bounds in the output type's range: the SDK keeps [-128, 127] even for UINT8 outputs
        // [quirk], which would clamp every uint8 code above 127; the TFLite bounds are used here
        // (z + roundf(bound / S) in float, as TFLite's CalculateActivationRangeQuantized).
        const bool u8 = out.type == tensor_type::UINT8;
        const std::int32_t tmin = u8 ? 0 : -128, tmax = u8 ? 255 : 127;
        const auto [lo, hi] = range();
        l.rec.activation_min = std::max(tmin, z_out + static_cast<std::int32_t>(std::round(lo / s_out)));
        l.rec.activation_max =
            std::isinf(hi) ? tmax : std::min(tmax, z_out + static_cast<std::int32_t>(std::round(hi / s_out)));
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(in.quant.scale0(), s_out));
    }
};

template <> struct op<builtin_operator::RELU> : relu_family_op<builtin_operator::RELU> {};
template <> struct op<builtin_operator::RELU6> : relu_family_op<builtin_operator::RELU6> {};
template <> struct op<builtin_operator::RELU_N1_TO_1> : relu_family_op<builtin_operator::RELU_N1_TO_1> {};
template <> struct op<builtin_operator::RELU_0_TO_1> : relu_family_op<builtin_operator::RELU_0_TO_1> {};

/// LEAKY_RELU (98), union leakyrelu (§7.6.6).
template <>
struct op<builtin_operator::LEAKY_RELU> {
    static constexpr builtin_operator code = builtin_operator::LEAKY_RELU;
    static constexpr std::string_view summary = "leaky ReLU; a LUT, or the leakyrelu layer when no table forms";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::LEAKY_RELU);
    static constexpr std::string_view member = "leakyrelu";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        if (auto r = detail::check_unary(g, o); !r.empty()) return r;
        if (!(o.options.alpha >= 0.0f) || !std::isfinite(o.options.alpha))
            return "alpha must be finite and >= 0 (a negative slope has no VNNX multiplier)";
        return {};
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const float s_in = c.g.t(o.inputs[0]).quant.scale0();
        const float s_out = c.g.t(o.outputs[0]).quant.scale0();
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(s_in, s_out));
        // TFLite forms alpha·S_in / S_out in float.
        const auto ma = quant::quantize_multiplier(static_cast<double>(s_in * o.options.alpha / s_out));
        format::layer_options::leakyrelu u{};
        u.alpha_multiplier = detail::append_i32(c, ma.multiplier);
        u.alpha_shift = detail::append_i32(c, ma.shift);
        l.set(u);
    }
};

/// ABS (101): |x − z_in| requantized with QM(S_in/S_out) (§7.6.7).
template <>
struct op<builtin_operator::ABS> {
    static constexpr builtin_operator code = builtin_operator::ABS;
    static constexpr std::string_view summary = "absolute value, its own layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::ABS);
    static constexpr std::string_view member = "";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o);
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const float s_in = c.g.t(o.inputs[0]).quant.scale0();
        const float s_out = c.g.t(o.outputs[0]).quant.scale0();
        detail::set_output_multiplier(c, l, detail::qm_float_ratio(s_in, s_out));
        const bool u8 = c.g.t(o.outputs[0]).type == tensor_type::UINT8;
        l.rec.activation_min = u8 ? 0 : -128;
        l.rec.activation_max = u8 ? 255 : 127;
    }
};

/// QUANTIZE between 8-bit types: a LUT in the default flow, else the DEQUANTIZE (6)
/// requantization layer of §7.6.4.
template <>
struct op<builtin_operator::QUANTIZE> {
    static constexpr builtin_operator code = builtin_operator::QUANTIZE;
    static constexpr std::string_view summary = "8-bit requantization; a LUT, or a DEQUANTIZE (6) layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::DEQUANTIZE);
    static constexpr std::string_view member = "";
    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1) return "takes exactly one input";
        return detail::check_unary(g, o, false);
    }
    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& in = c.g.t(o.inputs[0]);
        const auto& out = c.g.t(o.outputs[0]);
        // TFLite's requantize divides in double.
        const auto m = quant::quantize_multiplier(static_cast<double>(in.quant.scale0()) / out.quant.scale0());
        detail::set_output_multiplier(c, l, m);
        const std::int32_t dz = in.quant.zero0() - out.quant.zero0();
        const bool flip = m.multiplier == (1 << 30) && m.shift == 1 &&
                          ((in.type == tensor_type::INT8 && out.type == tensor_type::UINT8 && dz == -128) ||
                           (in.type == tensor_type::UINT8 && out.type == tensor_type::INT8 && dz == 128));
        if (flip) {  // the SDK's "flip the sign bit" marker
            l.rec.activation_min = 0;
            l.rec.activation_max = 0;
        }
    }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/activations.hpp
// ---- begin vnnx/ops/eltwise.hpp
// Two-input element-wise operators and comparisons (lowering.md §7.3, §8.4, §8.5).
// Constants of <= 4 elements were already turned into tables by the LUT pass (§3.4); what
// reaches lowering is either
//   - two activation inputs: an ELTWISE (301) layer, union eltwise8 (§7.3.1), or
//   - one constant of > 4 elements: a broadcast8 layer ADD (0) / SUB (41) /
//     SQUARED_DIFFERENCE (99) / MUL (18) (§7.3.2–7.3.3), or MAXIMUM (55) / MINIMUM (57) with
//     MinMaxOptions (§7.3.4).
// Broadcasting: TFLite broadcasts right-aligned shapes; the VNNX tensor records are
// channels-first, so the broadcast is exact only when both operands have the output's rank
// (activations) or are right-aligned to it before the channels-first move (constants). Shapes
// that would make the output larger than the activation operand are rejected with the rule.

// ---- begin vnnx/quant/eltwise.hpp
// Parameters of two-input element-wise ops (lowering.md §8.4, §8.5). ADD/SUB/SQUARED_DIFFERENCE
// and comparisons are TFLite's own int8 parameterisation; the same numbers drive the reference
// kernels.


namespace vnnx::quant {

enum class eltwise_kind { add, sub, mul, div, squared_difference, minimum, maximum, comparison };

struct eltwise_params {
    int left_shift = 0;  // −1 where the op has none (MUL, DIV)
    std::vector<quantized_multiplier> input1;  // empty where the op has none
    std::vector<quantized_multiplier> input2;
    quantized_multiplier output;
};

/// §8.4. `pot_scale_int16_false` selects ℓ = 15 for ADD/SUB (only when the option is explicitly false).
[[nodiscard]] inline eltwise_params eltwise_parameters(eltwise_kind k, double s_in, double s_in2, double s_out,
                                                       bool pot_scale_int16_false = false) {
    const double T = 2 * std::max(s_in, s_in2);
    eltwise_params p;
    switch (k) {
        case eltwise_kind::add:
        case eltwise_kind::sub:
            p.left_shift = pot_scale_int16_false ? 15 : 20;
            p.input1 = {quantize_multiplier(s_in / T)};
            p.input2 = {quantize_multiplier(s_in2 / T)};
            p.output = quantize_multiplier(T / (std::ldexp(1.0, p.left_shift) * s_out));
            break;
        case eltwise_kind::squared_difference:
            p.left_shift = 7;
            p.input1 = {quantize_multiplier(s_in / T)};
            p.input2 = {quantize_multiplier(s_in2 / T)};
            p.output = quantize_multiplier(T * T / (std::ldexp(1.0, 14) * s_out));
            break;
        case eltwise_kind::mul:
        case eltwise_kind::div:  // SDK quirk: DIV uses the MUL multiplier
            p.left_shift = -1;
            p.output = quantize_multiplier(s_in * s_in2 / s_out);
            break;
        case eltwise_kind::minimum:
        case eltwise_kind::maximum:
            p.left_shift = 0;
            p.input1 = {quantize_multiplier(s_in)};
            p.input2 = {quantize_multiplier(s_in2)};
            p.output = quantize_multiplier(s_out);
            break;
        case eltwise_kind::comparison:
            p.left_shift = 8;
            p.input1 = {quantize_multiplier(s_in)};
            p.input2 = {quantize_multiplier(s_in2)};
            p.output = quantize_multiplier(1.0);
            break;
    }
    return p;
}

/// §8.5 broadcast MUL bias per row: −z_in·Σ(f − z_f) + round_away(z_out / M) (0 when M = 0).
[[nodiscard]] inline std::int32_t broadcast_mul_bias(std::int32_t z_in, std::int64_t sum_f_minus_zf, std::int32_t z_out,
                                                     double M) {
    const double second = M == 0.0 ? 0.0 : round_away(static_cast<double>(z_out) / M);
    return static_cast<std::int32_t>(-static_cast<std::int64_t>(z_in) * sum_f_minus_zf +
                                     static_cast<std::int64_t>(second));
}

}  // namespace vnnx::quant
// ---- end vnnx/quant/eltwise.hpp

namespace vnnx::ops {

namespace eltwise_detail {

using B = builtin_operator;

constexpr bool is_comparison(B c) {
    return c == B::GREATER || c == B::GREATER_EQUAL || c == B::LESS || c == B::LESS_EQUAL || c == B::EQUAL ||
           c == B::NOT_EQUAL;
}

/// What the OPS table says about the SDK's quirks this operator fixes.
constexpr std::string_view notes_of(B c) {
    switch (c) {
        case B::ADD:
        case B::SUB: return "fused RELU6 / RELU_N1_TO_1 applied, uint8 bounds 0..255 (the SDK drops RELU6, keeps 127)";
        case B::MUL: return "fused activations applied, also with a constant operand (the SDK ignores them there)";
        case B::DIV: return "multiplier S_in / (S_in2 S_out) as TFLite (the SDK stores MUL's)";
        default: return "";
    }
}

/// eltwise8.type of §2.5.
inline std::int32_t eltwise_subtype(B c) {
    switch (c) {
        case B::ADD: return 0;
        case B::MUL: return 1;
        case B::SUB: return 2;
        case B::DIV: return 3;
        case B::GREATER: return 4;
        case B::GREATER_EQUAL: return 5;
        case B::LESS: return 6;
        case B::LESS_EQUAL: return 7;
        case B::EQUAL: return 8;
        case B::NOT_EQUAL: return 9;
        case B::MINIMUM: return 10;
        case B::MAXIMUM: return 11;
        case B::SQUARED_DIFFERENCE: return 12;
        default: return -1;
    }
}

inline bool is_8bit(tensor_type t) { return t == tensor_type::INT8 || t == tensor_type::UINT8; }

/// The TFLite shape `s` right-aligned to `rank` dims (leading 1s).
inline std::vector<std::int32_t> right_align(const std::vector<std::int32_t>& s, std::size_t rank) {
    std::vector<std::int32_t> out(rank > s.size() ? rank - s.size() : 0, 1);
    out.insert(out.end(), s.begin(), s.end());
    return out;
}

/// "" when `b` broadcasts onto `a` without growing it (each dim 1 or equal), else the rule.
inline std::string broadcasts_onto(const std::vector<std::int32_t>& b, const std::vector<std::int32_t>& a,
                                   const std::string& what) {
    if (b.size() != a.size()) return what + " has rank " + std::to_string(b.size()) + ", needs " + std::to_string(a.size());
    for (std::size_t d = 0; d < a.size(); ++d)
        if (b[d] != 1 && b[d] != a[d])
            return what + " dim " + std::to_string(d) + " is " + std::to_string(b[d]) + ", must be 1 or " +
                   std::to_string(a[d]);
    return {};
}

/// The constant's channels-first shape as [k, c, h, w] after right-aligning it to the
/// activation's rank (rank 5 and 6 only with leading 1s).
inline std::vector<std::int32_t> filter_dims(const std::vector<std::int32_t>& konst, std::size_t act_rank) {
    const auto cf = channels_first(right_align(konst, std::max<std::size_t>(act_rank, konst.size())));
    std::vector<std::int32_t> out(4, 1);
    const std::size_t n = std::min<std::size_t>(4, cf.size());
    for (std::size_t i = 0; i < n; ++i) out[4 - n + i] = cf[cf.size() - n + i];
    return out;
}

inline quant::fused_activation fused_of(const compiler::op& o) {
    return static_cast<quant::fused_activation>(o.options.fused);
}

/// Output bounds of a fused activation in the output type's range. The SDK drops RELU6 and
/// keeps the maximum at 127 for UINT8 outputs [quirks]; here the TFLite bounds are used.
inline quant::activation_range output_bounds(const graph& g, const compiler::op& o) {
    const auto& out = g.t(o.outputs.at(0));
    const bool u8 = out.type == tensor_type::UINT8;
    return quant::tflite_activation_range(fused_of(o), out.quant.scale0(), out.quant.zero0(), u8 ? 0 : -128,
                                          u8 ? 255 : 127);
}

inline format::obj_off_t append_i32(lowering& c, std::int32_t v) {
    return format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(v))};
}
inline format::obj_off_t here(lowering& c) {  // an empty array: the current end of the data
    return format::obj_off_t{static_cast<std::uint64_t>(c.data().size())};
}

/// The ELTWISE / broadcast multipliers, computed as TFLite's kernels do (float where TFLite
/// forms the ratio in float) so that the simulator matches TFLite bit for bit.
inline quant::eltwise_params params_for(B code, float s_in, float s_in2, float s_out, bool pot_scale_int16) {
    using quant::eltwise_kind;
    switch (code) {
        case B::ADD: return quant::eltwise_parameters(eltwise_kind::add, s_in, s_in2, s_out, !pot_scale_int16);
        case B::SUB: return quant::eltwise_parameters(eltwise_kind::sub, s_in, s_in2, s_out, !pot_scale_int16);
        case B::SQUARED_DIFFERENCE: return quant::eltwise_parameters(eltwise_kind::squared_difference, s_in, s_in2, s_out);
        case B::MAXIMUM: return quant::eltwise_parameters(eltwise_kind::maximum, s_in, s_in2, s_out);
        case B::MINIMUM: return quant::eltwise_parameters(eltwise_kind::minimum, s_in, s_in2, s_out);
        case B::MUL: {
            quant::eltwise_params p;
            p.left_shift = -1;
            p.output = quant::quantize_multiplier(static_cast<double>(s_in * s_in2 / s_out));
            return p;
        }
        case B::DIV: {
            // TFLite's S_in / (S_in2·S_out); the SDK stores the MUL multiplier [quirk].
            quant::eltwise_params p;
            p.left_shift = -1;
            p.output = quant::quantize_multiplier(static_cast<double>(s_in / (s_in2 * s_out)));
            return p;
        }
        default: return quant::eltwise_parameters(eltwise_kind::comparison, s_in, s_in2, s_out);
    }
}

}  // namespace eltwise_detail

/// The trait of one binary operator; `lower_layer` picks ELTWISE or the constant form.
template <builtin_operator Code, class Activations>
struct binary_op {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        eltwise_detail::is_comparison(Code) ? "comparison of two activations: ELTWISE (301), 0/1 output"
        : Code == builtin_operator::DIV     ? "two activations: ELTWISE (301); a constant of <= 4 elements: a LUT"
                                            : "two activations: ELTWISE (301); a constant of > 4 elements: its broadcast layer";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = Activations{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(format::vnnx_operator::ELTWISE);
    static constexpr std::string_view member = "eltwise8";
    static constexpr std::string_view axes = "TFLite broadcasting of right-aligned shapes, rank <= 6";
    static constexpr std::string_view notes = eltwise_detail::notes_of(Code);

    static constexpr bool comparison = eltwise_detail::is_comparison(Code);
    static constexpr bool has_constant_form = Code == builtin_operator::ADD || Code == builtin_operator::SUB ||
                                              Code == builtin_operator::MUL ||
                                              Code == builtin_operator::SQUARED_DIFFERENCE ||
                                              Code == builtin_operator::MAXIMUM || Code == builtin_operator::MINIMUM;

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace eltwise_detail;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.inputs[1] < 0 || o.outputs.size() != 1)
            return "needs two inputs and one output";
        const auto& a = g.t(o.inputs[0]);
        const auto& b = g.t(o.inputs[1]);
        const auto& out = g.t(o.outputs[0]);
        if (!is_8bit(a.type) || !is_8bit(b.type)) return "inputs must be INT8 or UINT8";
        if (a.type != b.type) return "both inputs must have one type";
        if (comparison) {
            if (out.type != tensor_type::BOOL && !is_8bit(out.type)) return "output must be BOOL";
        } else if (out.type != a.type) {
            return "output type must equal the input type";
        }
        if (a.quant.empty() || b.quant.empty()) return "inputs need quantization parameters";
        if (!comparison && out.quant.empty()) return "output needs quantization parameters";
        if (a.quant.scale.size() > 1 || b.quant.scale.size() > 1 || out.quant.scale.size() > 1)
            return "per-channel quantization of an operand is not supported";
        if (a.is_constant() && b.is_constant()) return "both inputs are constants";
        if (!a.is_constant() && !b.is_constant()) {
            if (a.shape.size() != out.shape.size() || b.shape.size() != out.shape.size())
                return "two activation inputs must have the output's rank (" + std::to_string(out.shape.size()) +
                       ") to broadcast channels-first; reshape the smaller one first";
            if (auto r = broadcasts_onto(a.shape, out.shape, "input 0"); !r.empty()) return r;
            if (auto r = broadcasts_onto(b.shape, out.shape, "input 1"); !r.empty()) return r;
            if (out.shape.size() > 6) return "rank above 6";
            return {};
        }
        // One constant.
        const auto& k = a.is_constant() ? a : b;
        const auto& x = a.is_constant() ? b : a;
        if (comparison) return "comparison with a constant: VNNX has no serializable layer for it";
        if (!has_constant_form) {
            // Only the LUT pass can take it: at most 4 elements, one per channel (§3.4).
            bool per_channel = k.element_count() <= 4;
            for (std::size_t d = 0; d + 1 < k.shape.size(); ++d)
                if (k.shape[d] != 1) per_channel = false;
            if (k.element_count() > 1 && (k.shape.empty() || x.shape.empty() || k.shape.back() != x.shape.back()))
                per_channel = false;
            if (!per_channel || x.shape != out.shape)
                return "a constant operand must have at most 4 elements, one per channel (it becomes a lookup table)";
            return {};
        }
        if (x.shape != out.shape) return "the constant must not broadcast the activation to a larger output";
        if (k.shape.size() > x.shape.size())
            return "the constant has rank " + std::to_string(k.shape.size()) + ", above the activation's " +
                   std::to_string(x.shape.size());
        if (auto r = broadcasts_onto(right_align(k.shape, x.shape.size()), x.shape, "the constant"); !r.empty())
            return r;
        // Dims before the last four of the channels-first shape are not in filter_shape_dims.
        const auto cf = channels_first(right_align(k.shape, x.shape.size()));
        for (std::size_t d = 0; d + 4 < cf.size(); ++d)
            if (cf[d] != 1) return "the constant may vary only in the last four channels-first dims";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const bool konst = c.g.t(o.inputs[0]).is_constant() || c.g.t(o.inputs[1]).is_constant();
        if (konst) lower_constant(c, o);
        else lower_eltwise(c, o);
    }

    /// §7.3.1: ELTWISE (301), union eltwise8.
    static void lower_eltwise(lowering& c, const compiler::op& o) {
        using namespace eltwise_detail;
        const std::int32_t a = o.inputs[0], b = o.inputs[1];
        // swap: input 0 comes from an earlier layer of this node (read before add_layer).
        const std::string a_name = c.tensor_name(a);
        bool swap = false;
        for (const auto& l : c.node.layers)
            if (!l.tensors.empty() && l.tensors.back().name == a_name) swap = true;
        auto& l = c.add_layer(layer_type, o, {a, b});
        const auto& ta = c.g.t(a);
        const auto& tb = c.g.t(b);
        const auto& to = c.g.t(o.outputs[0]);
        const float s_in = ta.quant.scale0(), s_in2 = tb.quant.scale0();
        const float s_out = comparison ? 1.0f : to.quant.scale0();
        const auto p = params_for(Code, s_in, s_in2, s_out, o.options.pot_scale_int16);

        format::layer_options::eltwise8 u{};
        u.type = eltwise_subtype(Code);
        u.input2_offset = tb.quant.zero0();
        u.left_shift = p.left_shift;
        u.swap = swap ? 1 : 0;
        u.bias_data = format::absent_offset;
        u.isize = 0;  // the element count of the final tile, written with the tile (§10.5)
        u.optimized = 0;
        if (Code == builtin_operator::ADD && 2.0 * s_in / s_out < 256.0 && 2.0 * s_in2 / s_out < 256.0) {
            u.optimized = ta.shape.size() > 3 ? 1 : 0;
            const bool m0 = s_in == s_out && ta.quant.zero0() == to.quant.zero0();
            const bool m1 = s_in2 == s_out && tb.quant.zero0() == to.quant.zero0();
            if (m0 && m1) u.optimized = 2;
            else if (m0 && ta.quant.zero0() != tb.quant.zero0()) u.optimized = 3;
            else if (m1 && ta.quant.zero0() != tb.quant.zero0()) u.optimized = 4;
        }
        if (comparison) {
            l.rec.output_offset = 0;
            l.tensors.back().zero = 0;
            l.tensors.back().scale = 1.0f;
            l.rec.activation_min = 0;
            l.rec.activation_max = 1;
        } else {
            const auto r = output_bounds(c.g, o);
            l.rec.activation_min = r.min;
            l.rec.activation_max = r.max;
        }
        // Data order of §7.3.1: output, input, input2 (one int32 each; MUL/DIV: inputs empty).
        l.rec.output_multiplier = append_i32(c, p.output.multiplier);
        l.rec.output_shift = append_i32(c, p.output.shift);
        if (p.input1.empty()) {
            l.rec.input_multiplier = here(c);
            l.rec.input_shift = here(c);
            u.input2_multiplier = here(c);
            u.input2_shift = here(c);
        } else {
            l.rec.input_multiplier = append_i32(c, p.input1[0].multiplier);
            l.rec.input_shift = append_i32(c, p.input1[0].shift);
            u.input2_multiplier = append_i32(c, p.input2[0].multiplier);
            u.input2_shift = append_i32(c, p.input2[0].shift);
        }
        l.set(u);
        // The first layer of an IDENTITY node: raise the node geometry over both inputs (§7.3.1).
        if (c.node.layers.size() == 1) {
            const auto ga = geometry_of(ta.shape), gb = geometry_of(tb.shape);
            c.node.rec.m = std::max(ga.m, gb.m);
            c.node.rec.n = std::max(ga.n, gb.n);
            if (tb.shape.size() > 3) c.node.rec.channels = std::max(ga.channels, gb.channels);
        }
    }

    /// §7.3.2–7.3.4: a constant of more than 4 elements.
    static void lower_constant(lowering& c, const compiler::op& o) {
        using namespace eltwise_detail;
        const bool swap = c.g.t(o.inputs[0]).is_constant();
        const std::int32_t x = swap ? o.inputs[1] : o.inputs[0];
        const std::int32_t f = swap ? o.inputs[0] : o.inputs[1];
        const auto& tx = c.g.t(x);
        const auto& tf = c.g.t(f);
        const auto& to = c.g.t(o.outputs[0]);
        const float s_in = tx.quant.scale0(), s_f = tf.quant.scale0(), s_out = to.quant.scale0();
        const std::int32_t z_in = tx.quant.zero0(), z_f = tf.quant.zero0(), z_out = to.quant.zero0();

        using B = builtin_operator;
        if (!has_constant_form)
            c.reject(o, "a constant operand is supported only as part of a lookup table (at most 4 elements)");
        const bool minmax = Code == B::MAXIMUM || Code == B::MINIMUM;
        std::int32_t type = static_cast<std::int32_t>(Code);  // ADD 0, MUL 18, SQUARED_DIFFERENCE 99, MAXIMUM 55, MINIMUM 57
        if (Code == B::SUB) type = 41;
        auto& l = c.add_layer(type, o, {x});
        const auto dims = filter_dims(tf.shape, tx.shape.size());
        // Filter bytes channels-first, broadcast dims kept at their stored size.
        const auto cf_shape = channels_first(right_align(tf.shape, std::max(tx.shape.size(), tf.shape.size())));
        std::vector<std::uint8_t> raw(tf.data->size());
        std::memcpy(raw.data(), tf.data->data(), raw.size());
        std::vector<std::uint8_t> filter = to_channels_first(raw, right_align(tf.shape, cf_shape.size()));
        const auto gx = geometry_of(tx.shape);

        if (minmax) {
            format::layer_options::MinMaxOptions u{};
            u.max = Code == B::MAXIMUM ? 1 : 0;
            for (std::size_t i = 0; i < 4; ++i) u.filter_shape_dims[i] = dims[i];
            u.filter_offset = z_f;
            const auto qi = quant::quantize_multiplier(s_in), qo = quant::quantize_multiplier(s_out),
                       qf = quant::quantize_multiplier(s_f);
            l.rec.input_multiplier = append_i32(c, qi.multiplier);
            l.rec.input_shift = append_i32(c, qi.shift);
            l.rec.output_multiplier = append_i32(c, qo.multiplier);
            l.rec.output_shift = append_i32(c, qo.shift);
            u.filter_multiplier = append_i32(c, qf.multiplier);
            u.filter_shift = append_i32(c, qf.shift);
            u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(filter))};
            l.set(u);
            // MAXIMUM/MINIMUM take the operand codes as they are (TFLite compares raw codes).
            return;
        }

        format::layer_options::broadcast8 u{};
        for (std::size_t i = 0; i < 4; ++i) u.filter_shape_dims[i] = dims[i];
        const std::int32_t fh = dims[2], fw = dims[3];
        if (fh == 1 && fw == 1) u.broadcast = 1;
        else if (fh == 1 && fw == gx.n) u.broadcast = 2;
        else if (fh == gx.m && fw == gx.n) u.broadcast = 3;
        else u.broadcast = 0;
        u.filter_offset = z_f;
        u.swap_inputs = swap ? 1 : 0;
        u.isize = 0;  // rows·cols of the final tile when optimized, written with the tile (§10.5)
        const auto r = output_bounds(c.g, o);
        l.rec.activation_min = r.min;
        l.rec.activation_max = r.max;
        if (Code == B::MUL) {
            // §7.3.3: sqrt(S_in·S_f) as both input scales; fused activations are honoured here
            // (the SDK ignores them [quirk]).
            const float root = static_cast<float>(std::sqrt(static_cast<double>(s_in) * s_f));
            u.iscale = root;
            u.fscale = root;
            u.oscale = s_out;
            u.sub = 0;
            u.left_shift = -1;
            const double M = static_cast<double>(s_in * s_f / s_out);
            bool small = u.broadcast == 1;
            for (auto v : filter) {
                const std::int32_t fv = tf.type == tensor_type::INT8 ? static_cast<std::int8_t>(v) : v;
                if (M * (fv - z_f) >= 256.0) small = false;
            }
            u.optimized = small ? 1 : 0;
            const auto m = quant::quantize_multiplier(M);
            l.rec.output_multiplier = append_i32(c, m.multiplier);
            l.rec.output_shift = append_i32(c, m.shift);
            u.filter_multiplier = format::absent_offset;
            u.filter_shift = format::absent_offset;
            u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(filter))};
            // Bias per index of the first CF axis after a leading axis of size 1 (§8.5).
            std::vector<std::int32_t> cf_dims = cf_shape;
            while (cf_dims.size() > 1 && cf_dims.front() == 1) cf_dims.erase(cf_dims.begin());
            const std::size_t rows = cf_dims.empty() ? 1 : static_cast<std::size_t>(cf_dims.front());
            const std::size_t per_row = rows == 0 ? 0 : filter.size() / rows;
            std::vector<std::int32_t> bias(rows);
            for (std::size_t i = 0; i < rows; ++i) {
                std::int64_t sum = 0;
                for (std::size_t j = 0; j < per_row; ++j) {
                    const auto v = filter[i * per_row + j];
                    sum += (tf.type == tensor_type::INT8 ? static_cast<std::int8_t>(v) : v) - z_f;
                }
                bias[i] = quant::broadcast_mul_bias(z_in, sum, z_out, M);
            }
            u.bias_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(bias))};
            l.set(u);
            return;
        }
        const auto p = params_for(Code, s_in, s_f, s_out, o.options.pot_scale_int16);
        u.iscale = s_in;
        u.fscale = s_f;
        u.oscale = s_out;
        u.sub = Code == B::SUB ? 1 : 0;
        u.left_shift = p.left_shift;
        u.optimized = u.broadcast == 1 && 2.0 * s_in / s_out < 256.0 && 2.0 * s_f / s_out < 256.0 ? 1 : 0;
        u.bias_data = format::absent_offset;
        // Data order of §7.3.2: input, output, filter pairs, then the filter bytes.
        l.rec.input_multiplier = append_i32(c, p.input1[0].multiplier);
        l.rec.input_shift = append_i32(c, p.input1[0].shift);
        l.rec.output_multiplier = append_i32(c, p.output.multiplier);
        l.rec.output_shift = append_i32(c, p.output.shift);
        u.filter_multiplier = append_i32(c, p.input2[0].multiplier);
        u.filter_shift = append_i32(c, p.input2[0].shift);
        u.filter_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(filter))};
        l.set(u);
    }

    /// Bytes of a TFLite-ordered tensor of shape `s` in channels-first order.
    static std::vector<std::uint8_t> to_channels_first(const std::vector<std::uint8_t>& v, const std::vector<std::int32_t>& s) {
        if (s.size() < 3) return v;
        const std::size_t r = s.size();
        std::size_t outer = 1;
        for (std::size_t i = 0; i + 3 < r; ++i) outer *= static_cast<std::size_t>(s[i]);
        const auto H = static_cast<std::size_t>(s[r - 3]), W = static_cast<std::size_t>(s[r - 2]),
                   C = static_cast<std::size_t>(s[r - 1]);
        std::vector<std::uint8_t> out(v.size());
        for (std::size_t o = 0; o < outer; ++o)
            for (std::size_t h = 0; h < H; ++h)
                for (std::size_t w = 0; w < W; ++w)
                    for (std::size_t ch = 0; ch < C; ++ch)
                        out[((o * C + ch) * H + h) * W + w] = v[((o * H + h) * W + w) * C + ch];
        return out;
    }
};

namespace eltwise_detail {
using act_relu = meta::value_set<activation_function::NONE, activation_function::RELU, activation_function::RELU6,
                                 activation_function::RELU_N1_TO_1>;
}  // namespace eltwise_detail

template <> struct op<builtin_operator::ADD> : binary_op<builtin_operator::ADD, eltwise_detail::act_relu> {};
template <> struct op<builtin_operator::SUB> : binary_op<builtin_operator::SUB, eltwise_detail::act_relu> {};
template <> struct op<builtin_operator::MUL> : binary_op<builtin_operator::MUL, eltwise_detail::act_relu> {};
template <> struct op<builtin_operator::DIV> : binary_op<builtin_operator::DIV, eltwise_detail::act_relu> {};
template <> struct op<builtin_operator::SQUARED_DIFFERENCE> : binary_op<builtin_operator::SQUARED_DIFFERENCE, no_activation> {};
template <> struct op<builtin_operator::MAXIMUM> : binary_op<builtin_operator::MAXIMUM, no_activation> {};
template <> struct op<builtin_operator::MINIMUM> : binary_op<builtin_operator::MINIMUM, no_activation> {};
template <> struct op<builtin_operator::GREATER> : binary_op<builtin_operator::GREATER, no_activation> {};
template <> struct op<builtin_operator::GREATER_EQUAL> : binary_op<builtin_operator::GREATER_EQUAL, no_activation> {};
template <> struct op<builtin_operator::LESS> : binary_op<builtin_operator::LESS, no_activation> {};
template <> struct op<builtin_operator::LESS_EQUAL> : binary_op<builtin_operator::LESS_EQUAL, no_activation> {};
template <> struct op<builtin_operator::EQUAL> : binary_op<builtin_operator::EQUAL, no_activation> {};
template <> struct op<builtin_operator::NOT_EQUAL> : binary_op<builtin_operator::NOT_EQUAL, no_activation> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/eltwise.hpp
// ---- begin vnnx/ops/reshape.hpp
// RESHAPE (22), SQUEEZE (43), EXPAND_DIMS (70) → RESHAPE layer with ReshapeOptions
// (lowering.md §7.4.1). All three are a reshape to the TFLite output shape: the SDK routes
// SQUEEZE and EXPAND_DIMS through the same code but reads their input 1 as a shape and fails
// [quirk]; here they become RESHAPE layers like RESHAPE itself. `mode` is the SDK's
// classification of the move; the simulator can perform any reshape (it re-reads the data in
// TFLite order), so the modes the SDK rejects (-1) are compiled too, with mode -1 recorded.

// ---- begin vnnx/ops/movement.hpp
// Shared helpers of the data-movement operators (ops/reshape.hpp, ops/concat_split.hpp,
// ops/slice.hpp, ops/pad.hpp): constant integer operands, channels-first axis forms, and the
// element maps that decide whether a TFLite layout change can be expressed by a VNNX record.


namespace vnnx::ops::movement {

/// Data types a data-movement layer copies (whole elements, no arithmetic).
using any_int_types = meta::value_set<tensor_type::INT8, tensor_type::UINT8, tensor_type::INT16, tensor_type::INT32>;

/// The values of a constant INT32 or INT64 tensor, or nullopt when `t` is absent, not a
/// constant or of another type.
inline std::optional<std::vector<std::int64_t>> const_ints(const graph& g, std::int32_t t) {
    if (t < 0 || static_cast<std::size_t>(t) >= g.tensors.size()) return std::nullopt;
    const auto& x = g.t(t);
    if (!x.is_constant()) return std::nullopt;
    std::vector<std::int64_t> out;
    if (x.type == tensor_type::INT32) {
        for (auto v : x.values<std::int32_t>()) out.push_back(v);
    } else if (x.type == tensor_type::INT64) {
        for (auto v : x.values<std::int64_t>()) out.push_back(v);
    } else {
        return std::nullopt;
    }
    return out;
}

/// Operand i of o, or -1.
inline std::int32_t input_at(const compiler::op& o, std::size_t i) { return i < o.inputs.size() ? o.inputs[i] : -1; }

/// Channels-first axis in the negative form most options store (lowering.md §2.1).
inline std::int32_t cf_axis_negative(std::int32_t axis, std::int32_t rank) {
    return channels_first_axis(axis, rank) - rank;
}

/// A TFLite axis made non-negative, or -1 when it is outside [-rank, rank).
inline std::int32_t normalize_axis(std::int64_t axis, std::int64_t rank) {
    if (axis < -rank || axis >= rank) return -1;
    return static_cast<std::int32_t>(axis < 0 ? axis + rank : axis);
}

inline std::string shape_text(const std::vector<std::int32_t>& s) {
    std::string out = "[";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
    return out + "]";
}

inline std::int64_t element_count(const std::vector<std::int32_t>& s) {
    std::int64_t n = 1;
    for (auto d : s) n *= d;
    return n;
}

/// Rules every data-movement tensor must satisfy: static positive dims, rank <= 6 (the
/// tensor record holds six).
inline std::string check_static(const graph& g, std::int32_t t, const char* role) {
    const auto& x = g.t(t);
    if (x.shape.size() > 6) return std::string(role) + " '" + x.name + "' has rank " + std::to_string(x.shape.size()) + ", more than 6";
    for (std::size_t i = 0; i < x.shape.size(); ++i)
        if (x.shape[i] <= 0)
            return std::string(role) + " '" + x.name + "' has no static shape " + shape_text(x.shape);
    return {};
}

/// For a rank-r channels-first array, the channels-first axis of each TFLite axis.
inline std::vector<std::int32_t> cf_axis_of_tflite(std::int32_t rank) {
    std::vector<std::int32_t> out(static_cast<std::size_t>(rank));
    for (std::int32_t i = 0; i < rank; ++i) out[static_cast<std::size_t>(i)] = channels_first_axis(i, rank);
    return out;
}

/// Dense row-major strides of a shape.
inline std::vector<std::int64_t> dense_strides(const std::vector<std::int32_t>& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// For every element of the channels-first output of a TFLite TRANSPOSE (in output memory
/// order), the channels-first input element it takes.
inline std::vector<std::int64_t> transpose_element_map(const std::vector<std::int32_t>& in_tfl,
                                                       const std::vector<std::int32_t>& perm) {
    const auto r = static_cast<std::int32_t>(in_tfl.size());
    std::vector<std::int32_t> out_tfl(in_tfl.size());
    for (std::size_t i = 0; i < perm.size(); ++i) out_tfl[i] = in_tfl[static_cast<std::size_t>(perm[i])];
    const auto in_cf = channels_first(in_tfl);
    const auto out_cf = channels_first(out_tfl);
    const auto cf_of = cf_axis_of_tflite(r);
    const auto in_st = dense_strides(in_cf);
    const std::int64_t n = element_count(out_cf);
    std::vector<std::int64_t> map(static_cast<std::size_t>(n));
    std::vector<std::int32_t> idx(out_cf.size(), 0);  // channels-first output index
    for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t src = 0;
        for (std::int32_t i = 0; i < r; ++i) {
            // TFLite output axis i = TFLite input axis perm[i].
            const auto out_axis = static_cast<std::size_t>(cf_of[static_cast<std::size_t>(i)]);
            const auto in_axis = static_cast<std::size_t>(cf_of[static_cast<std::size_t>(perm[static_cast<std::size_t>(i)])]);
            src += idx[out_axis] * in_st[in_axis];
        }
        map[static_cast<std::size_t>(e)] = src;
        for (std::size_t d = idx.size(); d-- > 0;) {
            if (++idx[d] < out_cf[d]) break;
            idx[d] = 0;
        }
    }
    return map;
}

/// The element map of the VNNX TRANSPOSE layer: the channels-first input seen as
/// [outer, d0, d1, d2] (missing dims 1); output axis j of the last three takes input axis p[j].
inline std::vector<std::int64_t> cf_permutation_element_map(const std::vector<std::int32_t>& in_cf,
                                                            const std::array<std::int32_t, 3>& p) {
    std::int64_t outer = 1;
    std::array<std::int64_t, 3> d{1, 1, 1};
    const std::size_t r = in_cf.size();
    for (std::size_t i = 0; i < r; ++i) {
        if (i + 3 < r) outer *= in_cf[i];
        else d[i + 3 - r] = in_cf[i];
    }
    const std::array<std::int64_t, 3> st{d[1] * d[2], d[2], 1};
    const std::int64_t plane = d[0] * d[1] * d[2];
    std::vector<std::int64_t> map;
    map.reserve(static_cast<std::size_t>(outer * plane));
    const auto a = static_cast<std::size_t>(p[0]), b = static_cast<std::size_t>(p[1]), c = static_cast<std::size_t>(p[2]);
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t i = 0; i < d[a]; ++i)
            for (std::int64_t j = 0; j < d[b]; ++j)
                for (std::int64_t k = 0; k < d[c]; ++k) map.push_back(o * plane + i * st[a] + j * st[b] + k * st[c]);
    return map;
}

}  // namespace vnnx::ops::movement
// ---- end vnnx/ops/movement.hpp

namespace vnnx::ops {

namespace movement {

/// The SDK's ReshapeOptions.mode for TFLite shapes `is` → `os` (lowering.md §7.4.1, checks in
/// the SDK's order). Cases where the SDK stops (assertion, index error, "not supported") give -1.
inline std::int32_t reshape_mode(const std::vector<std::int32_t>& is, const std::vector<std::int32_t>& os) {
    if (is == os) return 0;
    const auto idims = static_cast<std::int32_t>(is.size());
    const auto odims = static_cast<std::int32_t>(os.size());
    auto ones = [](const std::vector<std::int32_t>& s) {
        std::int32_t n = 0;
        for (auto d : s) n += d == 1;
        return n;
    };
    auto at = [](const std::vector<std::int32_t>& s, std::int32_t neg) {  // s[neg], neg < 0
        return s[static_cast<std::size_t>(static_cast<std::int32_t>(s.size()) + neg)];
    };
    auto without = [](const std::vector<std::int32_t>& s, std::int32_t neg) {
        std::vector<std::int32_t> out;
        const auto skip = static_cast<std::int32_t>(s.size()) + neg;
        for (std::int32_t i = 0; i < static_cast<std::int32_t>(s.size()); ++i)
            if (i != skip) out.push_back(s[static_cast<std::size_t>(i)]);
        return out;
    };
    // Squeeze: one dim of 1 removed.
    if (ones(is) - 1 == ones(os) && idims - 1 == odims && idims > 3) {
        std::int32_t axis = 0;
        for (std::int32_t i = -1; i >= -idims; --i)
            if (without(is, i) == os) {
                axis = i;
                break;
            }
        switch (axis) {
            case -1: return 5;
            case -2: return 6;
            case -3: return 7;
            case -4: return 4;
            default: return -1;
        }
    }
    // Expand: one dim of 1 inserted.
    if (ones(is) + 1 == ones(os) && idims > 2) {
        std::int32_t axis = 0;
        for (std::int32_t i = -1; i >= -odims; --i)
            if (without(os, i) == is) {
                axis = i;
                break;
            }
        if (axis == -1) return idims == 3 ? 8 : 9;
        if (axis == -2) return 10;
        if (axis == -3) return 11;
        return -1;
    }
    // Join: two adjacent dims multiplied.
    if (idims - 1 == odims && idims > 3) {
        std::int32_t axis = 0;
        for (std::int32_t i = 1; i < idims; ++i)
            if (static_cast<std::int64_t>(at(is, -i)) * at(is, -i - 1) == at(os, -i)) {
                axis = -i;
                break;
            }
        if (axis == -1) return 13;
        if (axis == -2) return 14;
        if (axis == -3) return 15;
        return -1;
    }
    // Separate: one dim split in two.
    if (idims + 1 == odims) {
        std::int32_t axis = 0;
        for (std::int32_t i = 1; i < odims; ++i)
            if (static_cast<std::int64_t>(at(os, -i)) * at(os, -i - 1) == at(is, -i)) {
                axis = -i;
                break;
            }
        if (axis == -1) return 17;
        if (axis == -2) return 18;
        if (axis == -3) return 19;
        return -1;
    }
    if (idims == odims) {
        // Same rank: only the "channels first to last" swap is known; rank < 3 stops the SDK.
        if (idims >= 3 && at(os, -3) == at(is, -1) && at(os, -2) == at(is, -3) && at(os, -1) == at(is, -2)) return 2;
        return -1;
    }
    // Flatten to channels, or its inverse.
    auto flatten_n = [](const std::vector<std::int32_t>& a, const std::vector<std::int32_t>& b) {
        const auto da = static_cast<std::int32_t>(a.size()), db = static_cast<std::int32_t>(b.size());
        if (da - db <= 0 || db == 0) return false;
        const std::int32_t n = 1 + da - db;
        std::int64_t p = 1;
        for (std::int32_t i = da - n; i < da; ++i) p *= a[static_cast<std::size_t>(i)];
        return b.back() == p;
    };
    if (flatten_n(is, os) || flatten_n(os, is)) return 0;
    return -1;
}

/// Shared trait of the three reshape operators.
template <builtin_operator Code>
struct reshape_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::RESHAPE     ? "reshape (any shape change; data re-laid out channels-first)"
        : Code == builtin_operator::SQUEEZE ? "squeeze, lowered as a reshape to the output shape"
                                            : "expand_dims, lowered as a reshape to the output shape";
    static constexpr auto dtypes = any_int_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::RESHAPE);
    static constexpr std::string_view member = "ReshapeOptions";
    static constexpr std::string_view notes =
        Code == builtin_operator::RESHAPE ? "reshapes changing several axes at once compile (the SDK stops on them)"
                                          : "lowered as RESHAPE (the SDK does not serialize its mode and fails)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one data input and one output";
        // A second operand (shape / axis) must be a constant so the node has one activation input.
        if (const auto s = input_at(o, 1); s >= 0 && !g.t(s).is_constant())
            return "input 1 (" + std::string(Code == builtin_operator::EXPAND_DIMS ? "axis" : "shape") + ") must be a constant";
        const auto& in = g.t(o.inputs[0]);
        const auto& out = g.t(o.outputs[0]);
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        if (in.type != out.type) return "output type must equal the input type";
        if (in.element_count() != out.element_count())
            return "output " + shape_text(out.shape) + " does not hold the elements of input " + shape_text(in.shape);
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& is = c.g.t(o.inputs[0]).shape;
        const auto& os = c.g.t(o.outputs[0]).shape;
        format::layer_options::ReshapeOptions r{};
        r.mode = reshape_mode(is, os);
        // The SDK's flag (lowering.md §7.4.1); the simulator always moves the data itself.
        l.rec.nop = ((r.mode == 0 || r.mode == 4 || r.mode == 8) && is.size() <= os.size()) ? 1 : 0;
        l.set(r);
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::RESHAPE> : movement::reshape_trait<builtin_operator::RESHAPE> {};
template <>
struct op<builtin_operator::SQUEEZE> : movement::reshape_trait<builtin_operator::SQUEEZE> {};
template <>
struct op<builtin_operator::EXPAND_DIMS> : movement::reshape_trait<builtin_operator::EXPAND_DIMS> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/reshape.hpp
// ---- begin vnnx/ops/concat_split.hpp
// CONCATENATION (2), SPLIT (49), SPLIT_V (102), PACK (83), TILE (69) nodes and the UNPACK (88)
// layer (lowering.md §7.2). The nodes list every activation input first, then every output
// (lowering.md §5.3), so multi-output SPLITs describe all their outputs.


namespace vnnx::ops {

namespace movement {

/// Every operand in `o.inputs` must be an activation (a VNNX node reads its inputs from buffers
/// other nodes wrote; constants have no producer).
inline std::string check_activation_inputs(const graph& g, const compiler::op& o) {
    for (std::size_t i = 0; i < o.inputs.size(); ++i) {
        if (o.inputs[i] < 0) return "input " + std::to_string(i) + " is missing";
        if (g.t(o.inputs[i]).is_constant()) return "input " + std::to_string(i) + " is a constant; only activations are supported";
    }
    return {};
}

/// The axis operand of SPLIT / SPLIT_V as a TFLite axis of `rank`, or -1.
inline std::int32_t split_axis(const graph& g, std::int32_t axis_tensor, std::int32_t rank) {
    const auto v = const_ints(g, axis_tensor);
    if (!v || v->size() != 1) return -1;
    return normalize_axis((*v)[0], rank);
}

}  // namespace movement

template <>
struct op<builtin_operator::CONCATENATION> {
    static constexpr builtin_operator code = builtin_operator::CONCATENATION;
    static constexpr std::string_view summary = "concatenation along any axis (inputs share the output's quantization)";
    static constexpr auto dtypes = int8_types{};
    // TFLite itself accepts only NONE for a concatenation.
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::CONCATENATION);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "ConcatOptions";
    static constexpr std::string_view axes = "any axis";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.empty() || o.outputs.size() != 1) return "needs inputs and one output";
        if (auto r = check_activation_inputs(g, o); !r.empty()) return r;
        const auto& out = g.t(o.outputs[0]);
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        const auto rank = static_cast<std::int32_t>(out.rank());
        const auto axis = normalize_axis(o.options.axis, rank);
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the output rank " + std::to_string(rank);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < o.inputs.size(); ++i) {
            const auto& x = g.t(o.inputs[i]);
            if (x.type != out.type) return "input " + std::to_string(i) + " type differs from the output type";
            if (x.rank() != out.rank()) return "input " + std::to_string(i) + " rank differs from the output rank";
            for (std::int32_t d = 0; d < rank; ++d)
                if (d != axis && x.shape[static_cast<std::size_t>(d)] != out.shape[static_cast<std::size_t>(d)])
                    return "input " + std::to_string(i) + " " + shape_text(x.shape) + " does not match the output " +
                           shape_text(out.shape) + " off the axis";
            // VNNX concatenation copies bytes; it cannot requantize like TFLite's uint8 kernel.
            if (x.quant.scale0() != out.quant.scale0() || x.quant.zero0() != out.quant.zero0())
                return "input " + std::to_string(i) + " quantization differs from the output's (no requantization)";
            sum += x.shape[static_cast<std::size_t>(axis)];
        }
        if (sum != out.shape[static_cast<std::size_t>(axis)]) return "input sizes along the axis do not add up to the output's";
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        for (auto t : o.inputs) n.tensors.push_back(c.desc(t));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = static_cast<std::int32_t>(o.inputs.size());
        n.rec.num_outputs = 1;
        const auto& os = c.g.t(o.outputs[0]).shape;
        const auto geo = geometry_of(os);  // from the output (lowering.md §7.2)
        n.rec.channels = geo.channels;
        n.rec.m = geo.m;
        n.rec.n = geo.n;
        const auto rank = static_cast<std::int32_t>(os.size());
        format::node_options::ConcatOptions co{};
        co.axis = channels_first_axis(movement::normalize_axis(o.options.axis, rank), rank);  // non-negative form
        n.set(co);
    }
};

namespace movement {

template <builtin_operator Code>
struct split_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool is_v = Code == builtin_operator::SPLIT_V;
    static constexpr std::string_view summary =
        is_v ? "split into given sizes along a constant axis" : "split into equal parts along a constant axis";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(Code);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "SplitOptions";
    static constexpr std::string_view axes = "one constant axis";

    static std::int32_t data(const compiler::op& o) { return input_at(o, is_v ? 0 : 1); }
    static std::int32_t axis_tensor(const compiler::op& o) { return input_at(o, is_v ? 2 : 0); }

    static std::string check(const graph& g, const compiler::op& o) {
        const auto in = data(o);
        if (in < 0 || o.outputs.empty()) return "needs a data input and outputs";
        if (g.t(in).is_constant()) return "the data input is a constant; only activations are supported";
        if (auto r = check_static(g, in, "input"); !r.empty()) return r;
        const auto& x = g.t(in);
        const auto rank = static_cast<std::int32_t>(x.rank());
        const auto axis = split_axis(g, axis_tensor(o), rank);
        if (axis < 0) return "the axis must be a constant scalar inside the input rank";
        std::int64_t sum = 0;
        for (std::size_t k = 0; k < o.outputs.size(); ++k) {
            const auto& y = g.t(o.outputs[k]);
            if (y.type != x.type || y.rank() != x.rank()) return "output " + std::to_string(k) + " type or rank differs from the input";
            for (std::int32_t d = 0; d < rank; ++d)
                if (d != axis && y.shape[static_cast<std::size_t>(d)] != x.shape[static_cast<std::size_t>(d)])
                    return "output " + std::to_string(k) + " " + shape_text(y.shape) + " does not match the input " +
                           shape_text(x.shape) + " off the axis";
            if (y.shape[static_cast<std::size_t>(axis)] <= 0) return "output " + std::to_string(k) + " is empty";
            sum += y.shape[static_cast<std::size_t>(axis)];
        }
        if (sum != x.shape[static_cast<std::size_t>(axis)]) return "output sizes along the axis do not add up to the input's";
        if constexpr (is_v) {
            const auto sizes = const_ints(g, input_at(o, 1));
            if (!sizes) return "size_splits must be a constant";
            if (sizes->size() != o.outputs.size()) return "size_splits has " + std::to_string(sizes->size()) + " entries for " + std::to_string(o.outputs.size()) + " outputs";
            for (std::size_t k = 0; k < sizes->size(); ++k)
                if ((*sizes)[k] != -1 && (*sizes)[k] != g.t(o.outputs[k]).shape[static_cast<std::size_t>(axis)])
                    return "size_splits entry " + std::to_string(k) + " does not match output " + std::to_string(k);
        } else {
            if (x.shape[static_cast<std::size_t>(axis)] % static_cast<std::int32_t>(o.outputs.size()) != 0)
                return "the axis size is not divisible by num_splits";
        }
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        const auto in = data(o);
        const auto& x = c.g.t(in);
        const auto rank = static_cast<std::int32_t>(x.rank());
        const auto axis = split_axis(c.g, axis_tensor(o), rank);
        n.tensors.push_back(c.desc(in));
        std::vector<std::int32_t> sizes;
        for (auto t : o.outputs) {
            n.tensors.push_back(c.desc(t));
            sizes.push_back(c.g.t(t).shape[static_cast<std::size_t>(axis)]);  // resolves SPLIT_V's -1
        }
        n.rec.num_inputs = 1;
        n.rec.num_outputs = static_cast<std::int32_t>(o.outputs.size());
        format::node_options::SplitOptions so{};
        so.axis = cf_axis_negative(axis, rank);
        so.max_split = *std::max_element(sizes.begin(), sizes.end());
        so.splits = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(sizes))};
        n.set(so);
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::SPLIT> : movement::split_trait<builtin_operator::SPLIT> {};
template <>
struct op<builtin_operator::SPLIT_V> : movement::split_trait<builtin_operator::SPLIT_V> {};

template <>
struct op<builtin_operator::PACK> {
    static constexpr builtin_operator code = builtin_operator::PACK;
    static constexpr std::string_view summary = "pack (stack) along any axis";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::PACK);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "PackOptions";
    static constexpr std::string_view axes = "any axis";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.empty() || o.outputs.size() != 1) return "needs inputs and one output";
        if (auto r = check_activation_inputs(g, o); !r.empty()) return r;
        if (o.options.num != static_cast<std::int32_t>(o.inputs.size()))
            return "values_count " + std::to_string(o.options.num) + " differs from the " + std::to_string(o.inputs.size()) + " inputs";
        const auto& x0 = g.t(o.inputs[0]);
        const auto& out = g.t(o.outputs[0]);
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        if (out.rank() != x0.rank() + 1) return "output rank must be the input rank + 1";
        const auto axis = normalize_axis(o.options.axis, static_cast<std::int64_t>(out.rank()));
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the output rank";
        for (std::size_t i = 0; i < o.inputs.size(); ++i) {
            const auto& x = g.t(o.inputs[i]);
            if (x.shape != x0.shape || x.type != out.type) return "input " + std::to_string(i) + " shape or type differs";
        }
        auto expect = x0.shape;
        expect.insert(expect.begin() + axis, static_cast<std::int32_t>(o.inputs.size()));
        if (expect != out.shape) return "output " + shape_text(out.shape) + " is not the inputs stacked on axis " + std::to_string(axis);
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        for (auto t : o.inputs) n.tensors.push_back(c.desc(t));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = static_cast<std::int32_t>(o.inputs.size());
        n.rec.num_outputs = 1;
        const auto idims = static_cast<std::int32_t>(c.g.t(o.inputs[0]).rank());
        const auto odims = idims + 1;
        // Every axis is accepted: the simulator stacks in TFLite order, so the SDK's
        // representability check (lowering.md §7.2) is not needed.
        format::node_options::PackOptions p{};
        p.axis = movement::cf_axis_negative(movement::normalize_axis(o.options.axis, odims), odims);
        p.count = o.options.num;
        p.dims = idims;
        n.set(p);
    }
};

template <>
struct op<builtin_operator::UNPACK> {
    static constexpr builtin_operator code = builtin_operator::UNPACK;
    static constexpr std::string_view summary = "unpack (unstack) along any axis, every output described";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::UNPACK);
    static constexpr std::string_view member = "PackOptions";
    static constexpr std::string_view axes = "any axis";
    static constexpr std::string_view notes = "every output is described (the SDK describes only the first)";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 1 || o.inputs[0] < 0 || o.outputs.empty()) return "needs one input and outputs";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto axis = normalize_axis(o.options.axis, static_cast<std::int64_t>(x.rank()));
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the input rank";
        if (x.shape[static_cast<std::size_t>(axis)] != static_cast<std::int32_t>(o.outputs.size()) ||
            o.options.num != static_cast<std::int32_t>(o.outputs.size()))
            return "num and the output count must equal the axis size " + std::to_string(x.shape[static_cast<std::size_t>(axis)]);
        auto expect = x.shape;
        expect.erase(expect.begin() + axis);
        for (std::size_t k = 0; k < o.outputs.size(); ++k)
            if (g.t(o.outputs[k]).shape != expect || g.t(o.outputs[k]).type != x.type)
                return "output " + std::to_string(k) + " is not the input without axis " + std::to_string(axis);
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        // The SDK describes only the first output [quirk]; every output is listed here so
        // the layer writes all of them.
        for (std::size_t k = 1; k < o.outputs.size(); ++k) l.tensors.push_back(c.desc(o.outputs[k]));
        l.rec.num_outputs = static_cast<std::int32_t>(o.outputs.size());
        l.rec.num_tensors = 1 + l.rec.num_outputs;
        const auto idims = static_cast<std::int32_t>(c.g.t(o.inputs[0]).rank());
        format::layer_options::PackOptions p{};
        p.axis = movement::cf_axis_negative(movement::normalize_axis(o.options.axis, idims), idims);
        p.count = o.options.num;
        p.dims = idims;
        l.set(p);
    }
};

template <>
struct op<builtin_operator::TILE> {
    static constexpr builtin_operator code = builtin_operator::TILE;
    static constexpr std::string_view summary = "tile with constant multiples, rank <= 4";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = static_cast<std::int32_t>(builtin_operator::TILE);
    static constexpr std::int32_t layer_type = no_layer;
    static constexpr std::string_view member = "TileOptions";
    static constexpr rank_range ranks{1, 4};
    static constexpr std::string_view notes = "the multiples constant is not listed as a node input (an SDK artefact)";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, multiples and one output";
        if (g.t(o.inputs[0]).is_constant()) return "the data input is a constant; only activations are supported";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        if (x.rank() < 1 || x.rank() > 4) return "input rank " + std::to_string(x.rank()) + " is outside 1..4 (TileOptions holds 4 multiples)";
        const auto m = const_ints(g, o.inputs[1]);
        if (!m) return "multiples must be a constant int32/int64 tensor";
        if (m->size() != x.rank()) return "multiples needs one entry per input axis";
        auto expect = x.shape;
        for (std::size_t i = 0; i < m->size(); ++i) {
            if ((*m)[i] < 1) return "multiple " + std::to_string(i) + " must be at least 1";
            expect[i] = static_cast<std::int32_t>(expect[i] * (*m)[i]);
        }
        if (expect != g.t(o.outputs[0]).shape || g.t(o.outputs[0]).type != x.type) return "output shape or type does not match the tiling";
        return {};
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        auto& n = c.node;
        // The SDK also lists the multiples constant as a node input [quirk]; it has no
        // producer and nothing reads it, so only the data input is listed here.
        n.tensors.push_back(c.desc(o.inputs[0]));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = 1;
        n.rec.num_outputs = 1;
        const auto m = *movement::const_ints(c.g, o.inputs[1]);
        auto v = [&](std::size_t i) { return static_cast<std::int32_t>(m[i]); };
        format::node_options::TileOptions t{};
        switch (m.size()) {  // channels-first [n, c, h, w] (lowering.md §7.2)
            case 1: t.tile = {1, 1, 1, v(0)}; break;
            case 2: t.tile = {1, 1, v(0), v(1)}; break;
            case 3: t.tile = {1, v(2), v(0), v(1)}; break;
            default: t.tile = {v(0), v(3), v(1), v(2)}; break;
        }
        n.set(t);
    }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/concat_split.hpp
// ---- begin vnnx/ops/slice.hpp
// SLICE (65), STRIDED_SLICE (45) → SliceOptions; TRANSPOSE (39) → TransposeOptions;
// GATHER (36) → GatherOptions; CAST (53) (lowering.md §7.4.3, §7.4.4, §7.7.3, §7.7.4).
// Slices are canonicalised here to explicit begin / end / stride per channels-first axis
// (masks, negative indices, shrink_axis and negative strides resolved with TFLite's rules),
// so the simulator never needs the TFLite options.


namespace vnnx::ops {

namespace movement {

/// A slice in TFLite axis order: element k of axis i is start[i] + k·stride[i], k < count[i];
/// `end` is the exclusive bound stored in SliceOptions (-1 allowed for negative strides).
struct canonical_slice {
    std::vector<std::int64_t> start, end, stride, count;
    std::string error;  // the rule broken, empty when valid
};

inline canonical_slice slice_of(const graph& g, const compiler::op& o) {
    canonical_slice s;
    const auto& x = g.t(o.inputs.at(0));
    const auto r = x.rank();
    s.start.assign(r, 0);
    s.stride.assign(r, 1);
    s.end.resize(r);
    s.count.resize(r);
    for (std::size_t i = 0; i < r; ++i) s.end[i] = s.count[i] = x.shape[i];
    const auto begin = const_ints(g, input_at(o, 1));
    if (!begin) {
        s.error = "begin must be a constant int32/int64 tensor";
        return s;
    }
    if (o.code == builtin_operator::SLICE) {
        const auto size = const_ints(g, input_at(o, 2));
        if (!size) {
            s.error = "size must be a constant int32/int64 tensor";
            return s;
        }
        if (begin->size() != r || size->size() != r) {
            s.error = "begin and size need one entry per input axis";
            return s;
        }
        for (std::size_t i = 0; i < r; ++i) {
            const std::int64_t dim = x.shape[i], b = (*begin)[i];
            const std::int64_t n = (*size)[i] == -1 ? dim - b : (*size)[i];
            if (b < 0 || n < 0 || b + n > dim) {
                s.error = "axis " + std::to_string(i) + ": begin " + std::to_string(b) + " size " + std::to_string((*size)[i]) +
                          " leave the input dim " + std::to_string(dim);
                return s;
            }
            s.start[i] = b;
            s.end[i] = b + n;
            s.count[i] = n;
        }
        return s;
    }
    // STRIDED_SLICE with TFLite's rules (strided_slice.cc / StartForAxis, StopForAxis).
    const auto end = const_ints(g, input_at(o, 2));
    const auto strides = const_ints(g, input_at(o, 3));
    if (!end || !strides) {
        s.error = "end and strides must be constant int32/int64 tensors";
        return s;
    }
    const auto& opt = o.options;
    if (opt.ellipsis_mask != 0 || opt.new_axis_mask != 0) {
        s.error = "ellipsis_mask and new_axis_mask are not supported";
        return s;
    }
    if (begin->size() > r || end->size() != begin->size() || strides->size() != begin->size()) {
        s.error = "begin, end and strides need the same length, at most the input rank";
        return s;
    }
    for (std::size_t i = 0; i < begin->size(); ++i) {
        const std::int64_t dim = x.shape[i], st = (*strides)[i];
        if (st == 0) {
            s.error = "axis " + std::to_string(i) + ": stride 0";
            return s;
        }
        const bool shrink = (opt.shrink_axis_mask >> i) & 1;
        std::int64_t b = (*begin)[i];
        if (((opt.begin_mask >> i) & 1) && !shrink) {
            b = st > 0 ? 0 : dim - 1;
        } else {
            if (b < 0) b += dim;
            b = st > 0 ? std::clamp<std::int64_t>(b, 0, dim) : std::clamp<std::int64_t>(b, -1, dim - 1);
        }
        std::int64_t e;
        if (shrink) {
            e = b + 1;
        } else if ((opt.end_mask >> i) & 1) {
            e = st > 0 ? dim : -1;
        } else {
            e = (*end)[i];
            if (opt.offset) e += (*begin)[i];
            if (e < 0) e += dim;
            e = st > 0 ? std::clamp<std::int64_t>(e, 0, dim) : std::clamp<std::int64_t>(e, -1, dim - 1);
        }
        if (shrink && (b < 0 || b >= dim)) {
            s.error = "axis " + std::to_string(i) + ": shrunk index out of range";
            return s;
        }
        const std::int64_t step = shrink ? 1 : st;
        const std::int64_t span = step > 0 ? e - b : b - e;
        const std::int64_t as = step > 0 ? step : -step;
        s.start[i] = b;
        s.end[i] = e;
        s.stride[i] = step;
        s.count[i] = span <= 0 ? 0 : (span + as - 1) / as;
    }
    return s;
}

/// SliceOptions from a canonical slice: channels-first order, left-padded to 4 axes. Input
/// ranks above 4 are accepted when the extra leading dims are 1.
inline std::string slice_options(const std::vector<std::int32_t>& in_shape, const canonical_slice& s,
                                 format::layer_options::SliceOptions& out) {
    const auto r = in_shape.size();
    auto cf = [&](const std::vector<std::int64_t>& v) {
        if (v.size() < 3) return v;
        std::vector<std::int64_t> o(v.begin(), v.end() - 3);
        o.push_back(v.back());
        o.push_back(v[v.size() - 3]);
        o.push_back(v[v.size() - 2]);
        return o;
    };
    const auto b = cf(s.start), e = cf(s.end), st = cf(s.stride);
    const auto dims = channels_first(in_shape);
    for (std::size_t i = 0; i + 4 < r; ++i)
        if (dims[i] != 1)
            return "input rank " + std::to_string(r) + " with a leading dim " + std::to_string(dims[i]) +
                   " != 1: SliceOptions holds 4 axes";
    for (std::size_t j = 0; j < 4; ++j) {
        // Axis j of the 4 stored is channels-first axis r - 4 + j (absent axes: the full size-1 range).
        const auto k = static_cast<std::int64_t>(r) - 4 + static_cast<std::int64_t>(j);
        if (k < 0) {
            out.begin[j] = 0;
            out.end[j] = 1;
            out.stride[j] = 1;
            continue;
        }
        const auto u = static_cast<std::size_t>(k);
        out.begin[j] = static_cast<std::int32_t>(b[u]);
        out.end[j] = static_cast<std::int32_t>(e[u]);
        out.stride[j] = static_cast<std::int32_t>(st[u]);
    }
    return {};
}

template <builtin_operator Code>
struct slice_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::SLICE ? "slice with constant begin/size"
                                        : "strided slice: masks, negative indices and strides, shrink_axis";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "SliceOptions";
    static constexpr std::string_view notes =
        Code == builtin_operator::STRIDED_SLICE
            ? "masks, negative indices and strides, shrink_axis are honoured (the SDK ignores masks, rejects negatives)"
            : "";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs a data input and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        const auto s = slice_of(g, o);
        if (!s.error.empty()) return s.error;
        std::int64_t n = 1;
        for (auto c : s.count) n *= c;
        const auto& y = g.t(o.outputs[0]);
        if (n == 0) return "the slice is empty";
        if (n != y.element_count() || y.type != g.t(o.inputs[0]).type)
            return "output " + shape_text(y.shape) + " does not match the slice (" + std::to_string(n) + " elements)";
        format::layer_options::SliceOptions so{};
        return slice_options(g.t(o.inputs[0]).shape, s, so);
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        format::layer_options::SliceOptions so{};
        if (auto r = slice_options(c.g.t(o.inputs[0]).shape, slice_of(c.g, o), so); !r.empty()) c.reject(o, r);
        l.set(so);
    }
};

/// The TransposeOptions.permutation of a TFLite permutation, or nullopt.
/// Rank >= 3 with the leading axes in place: lowering.md §7.4.4. Other permutations (rank 2,
/// moves of leading axes) are accepted when, on the channels-first data, they equal one of the
/// six permutations of the last three axes; this is checked element by element.
inline std::optional<std::array<std::int32_t, 3>> transpose_permutation(const std::vector<std::int32_t>& in_tfl,
                                                                        const std::vector<std::int32_t>& perm) {
    const auto r = static_cast<std::int32_t>(perm.size());
    const auto want = transpose_element_map(in_tfl, perm);
    const auto in_cf = channels_first(in_tfl);
    if (r >= 3) {
        bool leading_fixed = true;
        for (std::int32_t i = 0; i + 3 < r; ++i) leading_fixed &= perm[static_cast<std::size_t>(i)] == i;
        if (leading_fixed) {
            std::array<std::int32_t, 3> q{};
            for (std::size_t i = 0; i < 3; ++i) q[i] = perm[static_cast<std::size_t>(r - 3) + i] - (r - 3);
            const std::array<std::int32_t, 3> p{(q[2] + 1) % 3, (q[0] + 1) % 3, (q[1] + 1) % 3};
            if (cf_permutation_element_map(in_cf, p) == want) return p;
        }
    }
    std::array<std::int32_t, 3> p{0, 1, 2};
    do {
        if (cf_permutation_element_map(in_cf, p) == want) return p;
    } while (std::next_permutation(p.begin(), p.end()));
    return std::nullopt;
}

}  // namespace movement

template <>
struct op<builtin_operator::SLICE> : movement::slice_trait<builtin_operator::SLICE> {};
template <>
struct op<builtin_operator::STRIDED_SLICE> : movement::slice_trait<builtin_operator::STRIDED_SLICE> {};

template <>
struct op<builtin_operator::TRANSPOSE> {
    static constexpr builtin_operator code = builtin_operator::TRANSPOSE;
    static constexpr std::string_view summary = "transpose expressible as a channels-first permutation of the last three axes";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::TRANSPOSE);
    static constexpr std::string_view member = "TransposeOptions";
    static constexpr std::string_view axes = "a permutation of the last three axes; leading axes stay";

    static std::optional<std::vector<std::int32_t>> perm_of(const graph& g, const compiler::op& o) {
        const auto v = movement::const_ints(g, movement::input_at(o, 1));
        if (!v) return std::nullopt;
        const auto r = static_cast<std::int64_t>(g.t(o.inputs[0]).rank());
        if (static_cast<std::int64_t>(v->size()) != r) return std::nullopt;
        std::vector<std::int32_t> p;
        std::vector<bool> seen(v->size(), false);
        for (auto a : *v) {
            const auto n = movement::normalize_axis(a, r);
            if (n < 0 || seen[static_cast<std::size_t>(n)]) return std::nullopt;
            seen[static_cast<std::size_t>(n)] = true;
            p.push_back(n);
        }
        return p;
    }

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, a permutation and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto p = perm_of(g, o);
        if (!p) return "the permutation must be a constant holding each input axis once";
        const auto& in = g.t(o.inputs[0]);
        std::vector<std::int32_t> expect;
        for (auto a : *p) expect.push_back(in.shape[static_cast<std::size_t>(a)]);
        if (expect != g.t(o.outputs[0]).shape || g.t(o.outputs[0]).type != in.type)
            return "output shape or type does not match the permutation";
        if (!transpose_permutation(in.shape, *p)) {
            std::string ps = "[";
            for (std::size_t i = 0; i < p->size(); ++i) ps += (i ? "," : "") + std::to_string((*p)[i]);
            return "permutation " + ps + "] of " + shape_text(in.shape) +
                   " is not a permutation of the last three channels-first axes (TransposeOptions holds 3)";
        }
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto p = movement::transpose_permutation(c.g.t(o.inputs[0]).shape, *perm_of(c.g, o));
        if (!p) c.reject(o, "the permutation cannot be expressed");
        format::layer_options::TransposeOptions t{};
        t.permutation = *p;
        t.out_maps_at_once = 1;
        t.out_rows_at_once = 1;
        l.set(t);
    }
};

template <>
struct op<builtin_operator::GATHER> {
    static constexpr builtin_operator code = builtin_operator::GATHER;
    static constexpr std::string_view summary = "gather with constant indices (batch_dims 0)";
    static constexpr auto dtypes = movement::any_int_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::GATHER);
    static constexpr std::string_view member = "GatherOptions";
    static constexpr std::string_view axes = "any one axis of the params";
    static constexpr std::string_view notes = "the input is always the layer's first tensor (the SDK derives it from tensor numbering)";

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs params, indices and one output";
        if (g.t(o.inputs[0]).is_constant()) return "params is a constant; only activation params are supported";
        if (auto r = check_static(g, o.inputs[0], "params"); !r.empty()) return r;
        if (o.options.batch_dims != 0) return "batch_dims " + std::to_string(o.options.batch_dims) + " is not supported (only 0)";
        const auto idx = const_ints(g, o.inputs[1]);
        if (!idx) return "indices must be a constant int32/int64 tensor";
        const auto& x = g.t(o.inputs[0]);
        const auto axis = normalize_axis(o.options.axis, static_cast<std::int64_t>(x.rank()));
        if (axis < 0) return "axis " + std::to_string(o.options.axis) + " is outside the params rank";
        const auto dim = x.shape[static_cast<std::size_t>(axis)];
        for (std::size_t k = 0; k < idx->size(); ++k)
            if ((*idx)[k] < 0 || (*idx)[k] >= dim)
                return "index " + std::to_string(k) + " (" + std::to_string((*idx)[k]) + ") is outside [0, " + std::to_string(dim) + ")";
        if (idx->empty()) return "indices are empty";
        std::vector<std::int32_t> expect(x.shape.begin(), x.shape.begin() + axis);
        for (auto d : g.t(o.inputs[1]).shape) expect.push_back(d);
        expect.insert(expect.end(), x.shape.begin() + axis + 1, x.shape.end());
        if (expect != g.t(o.outputs[0]).shape || g.t(o.outputs[0]).type != x.type) return "output shape or type does not match the gather";
        return check_static(g, o.outputs[0], "output");
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& x = c.g.t(o.inputs[0]);
        const auto rank = static_cast<std::int32_t>(x.rank());
        const auto cf = channels_first(x.shape);
        const auto axis = channels_first_axis(movement::normalize_axis(o.options.axis, rank), rank);
        const auto idx = *movement::const_ints(c.g, o.inputs[1]);
        format::layer_options::GatherOptions go{};
        go.axis = axis;  // non-negative form (lowering.md §7.7.3)
        go.batch_dims = 0;
        go.batch_size = 1;
        go.axis_size = cf[static_cast<std::size_t>(axis)];
        go.outer_size = 1;
        go.inner_size = 1;
        for (std::int32_t i = 0; i < axis; ++i) go.outer_size *= cf[static_cast<std::size_t>(i)];
        for (std::int32_t i = axis + 1; i < rank; ++i) go.inner_size *= cf[static_cast<std::size_t>(i)];
        // All indices in order (shape[0] for the usual 1-D indices; the simulator lays any
        // index shape out through the output's TFLite order).
        go.coord_size = static_cast<std::int32_t>(idx.size());
        // The SDK sets this from tensor numbering [quirk]; the layer's one input is always
        // the params, so it is 0.
        go.swap_input_order = 0;
        std::vector<std::int32_t> coords(idx.begin(), idx.end());
        go.coord_data = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(coords))};
        l.set(go);
    }
};

template <>
struct op<builtin_operator::CAST> {
    static constexpr builtin_operator code = builtin_operator::CAST;
    static constexpr std::string_view summary = "integer cast (int8/uint8/int16/int32, two's complement wrap)";
    static constexpr auto dtypes =
        meta::value_set<tensor_type::INT8, tensor_type::UINT8, tensor_type::INT16, tensor_type::INT32, tensor_type::BOOL>{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::CAST);
    static constexpr std::string_view member = "";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        if (auto r = movement::check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        const auto t = g.t(o.outputs[0]).type;
        if (t != tensor_type::INT8 && t != tensor_type::UINT8 && t != tensor_type::INT16 && t != tensor_type::INT32)
            return "output type " + std::string(tflite::type_name(t)) + " is not supported (int8, uint8, int16, int32)";
        if (g.t(o.outputs[0]).shape != g.t(o.inputs[0]).shape) return "output shape differs from the input shape";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) { c.add_layer(layer_type, o, {o.inputs.at(0)}); }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/slice.hpp
// ---- begin vnnx/ops/pad.hpp
// PAD (34) and PADV2 (60) → PAD layer with PadOptions (lowering.md §7.5): `pads` holds
// [c_before, h_before, w_before, c_after, h_after, w_after] on the channels-first axes and
// `value` the fill (the input zero point for PAD, the constant for PADV2). The SDK ignores
// padding of leading (batch) axes [quirk]; here it is rejected instead of dropped.
// MIRROR_PAD (100) → MIRROR_PAD layer with the same `pads` and MirrorPadOptions.


namespace vnnx::ops {

namespace movement {

/// The six channels-first pads of a TFLite [rank, 2] pad constant, or the rule broken.
inline std::string pad_fields(const graph& g, const compiler::op& o, std::array<std::int32_t, 6>& pads) {
    const auto& x = g.t(o.inputs.at(0));
    const auto r = x.rank();
    const auto p = const_ints(g, input_at(o, 1));
    if (!p) return "paddings must be a constant int32/int64 tensor";
    if (p->size() != 2 * r) return "paddings must have shape [" + std::to_string(r) + ", 2]";
    if (r < 1) return "the input must have rank >= 1";
    for (auto v : *p)
        if (v < 0) return "paddings must be non-negative";
    auto before = [&](std::size_t a) { return static_cast<std::int32_t>((*p)[2 * a]); };
    auto after = [&](std::size_t a) { return static_cast<std::int32_t>((*p)[2 * a + 1]); };
    pads.fill(0);
    if (r >= 3) {
        for (std::size_t a = 0; a + 3 < r; ++a)
            if (before(a) != 0 || after(a) != 0)
                return "padding of leading axis " + std::to_string(a) + " is not supported (only the last three axes)";
        pads = {before(r - 1), before(r - 3), before(r - 2), after(r - 1), after(r - 3), after(r - 2)};
    } else if (r == 2) {
        pads = {0, before(0), before(1), 0, after(0), after(1)};
    } else {
        pads = {0, 0, before(0), 0, 0, after(0)};
    }
    return {};
}

/// The fill value: PAD → input zero point; PADV2 → its constant (one element of the input type).
inline std::string pad_value(const graph& g, const compiler::op& o, std::int32_t& value) {
    const auto& x = g.t(o.inputs.at(0));
    if (o.code == builtin_operator::PADV2 && input_at(o, 2) >= 0) {
        const auto& c = g.t(o.inputs[2]);
        if (!c.is_constant() || c.type != x.type || !c.data || c.data->size() != 1)
            return "constant_values must be one constant element of the input type";
        const auto b = static_cast<std::uint8_t>((*c.data)[0]);
        value = x.type == tensor_type::INT8 ? static_cast<std::int8_t>(b) : b;
        return {};
    }
    value = x.quant.zero0();
    return {};
}

template <builtin_operator Code>
struct pad_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::PAD ? "constant padding with the zero point, last three axes"
                                      : "constant padding with a given value, last three axes";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::PAD);
    static constexpr std::string_view member = "PadOptions";
    static constexpr std::string_view axes = "the last three axes (padding of leading axes is rejected)";
    static constexpr std::string_view notes = "leading-axis padding is rejected (the SDK silently drops it)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, paddings and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        std::array<std::int32_t, 6> pads{};
        if (auto r = pad_fields(g, o, pads); !r.empty()) return r;
        std::int32_t value = 0;
        if (auto r = pad_value(g, o, value); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        // TFLite fills PAD with the output zero point, the VNNX layer with the input's.
        if (Code == builtin_operator::PAD && x.quant.zero0() != y.quant.zero0())
            return "input and output zero points differ";
        const auto p = const_ints(g, o.inputs[1]);
        auto expect = x.shape;
        for (std::size_t a = 0; a < expect.size(); ++a)
            expect[a] += static_cast<std::int32_t>((*p)[2 * a] + (*p)[2 * a + 1]);
        if (expect != y.shape || y.type != x.type) return "output " + shape_text(y.shape) + " does not match the paddings";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        std::array<std::int32_t, 6> pads{};
        if (auto r = pad_fields(c.g, o, pads); !r.empty()) c.reject(o, r);
        format::layer_options::PadOptions po{};
        if (auto r = pad_value(c.g, o, po.value); !r.empty()) c.reject(o, r);
        po.transpose_dilate_w = 1;
        po.transpose_dilate_h = 1;
        l.rec.pads = pads;
        l.set(po);
    }
};

}  // namespace movement

template <>
struct op<builtin_operator::PAD> : movement::pad_trait<builtin_operator::PAD> {};
template <>
struct op<builtin_operator::PADV2> : movement::pad_trait<builtin_operator::PADV2> {};

/// MIRROR_PAD (100) → MIRROR_PAD layer: `pads` as PAD, MirrorPadOptions.mode 1 for REFLECT, 0
/// for SYMMETRIC (lowering.md §7.5). REFLECT mirrors without the edge element, SYMMETRIC with it.
template <>
struct op<builtin_operator::MIRROR_PAD> {
    static constexpr builtin_operator code = builtin_operator::MIRROR_PAD;
    static constexpr std::string_view summary = "REFLECT or SYMMETRIC mirror padding, last three axes";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::MIRROR_PAD);
    static constexpr std::string_view member = "MirrorPadOptions";
    static constexpr std::string_view axes = "the last three axes (padding of leading axes is rejected)";

    static bool reflect(const compiler::op& o) { return o.options.mirror_mode == 0; }

    static std::string check(const graph& g, const compiler::op& o) {
        using namespace movement;
        if (o.inputs.size() != 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, paddings and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (o.options.mirror_mode != 0 && o.options.mirror_mode != 1) return "mode must be REFLECT or SYMMETRIC";
        std::array<std::int32_t, 6> pads{};
        if (auto r = pad_fields(g, o, pads); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        const auto p = const_ints(g, o.inputs[1]);
        auto expect = x.shape;
        for (std::size_t a = 0; a < expect.size(); ++a) {
            const auto limit = x.shape[a] - (reflect(o) ? 1 : 0);
            if ((*p)[2 * a] > limit || (*p)[2 * a + 1] > limit)
                return "axis " + std::to_string(a) + ": pads above " + std::to_string(limit) + " (" +
                       (reflect(o) ? "REFLECT" : "SYMMETRIC") + " over " + std::to_string(x.shape[a]) + " elements)";
            expect[a] += static_cast<std::int32_t>((*p)[2 * a] + (*p)[2 * a + 1]);
        }
        if (expect != y.shape || y.type != x.type) return "output " + shape_text(y.shape) + " does not match the paddings";
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output must share the quantization";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        std::array<std::int32_t, 6> pads{};
        if (auto r = movement::pad_fields(c.g, o, pads); !r.empty()) c.reject(o, r);
        l.rec.pads = pads;
        format::layer_options::MirrorPadOptions mo{};
        mo.mode = reflect(o) ? 1 : 0;
        l.set(mo);
    }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/pad.hpp
// ---- begin vnnx/ops/pool.hpp
// MAX_POOL_2D (17) and AVERAGE_POOL_2D (1) → pool layers (lowering.md §7.5): `kernel_shape` =
// [fh, fw], `strides` = [sh, sw], `pads` = [0, top, left, 0, bottom, right]. SAME max pools
// arrive as PADV2(lowest) + VALID pool (passes/explicit_pad.hpp). A SAME average pool keeps its
// TFLite pads in the layer and the simulator divides by the in-bounds taps only, as TFLite does
// (the SDK leaves SAME average pools unsupported). Fused activations are honoured through
// activation_min/max (the SDK ignores them [quirk]); the kernel is not clipped to the input
// because with SAME padding clipping would move the windows (the SDK clips it [quirk]).
// Both pools work on raw codes, so TFLite requires equal input and output quantization.



namespace vnnx::ops {

namespace pool_detail {

/// Every dim of a tensor static and positive, rank at most 6 (the tensor record holds six).
inline std::string check_static_shape(const compiler::tensor& x, const char* role) {
    if (x.rank() > 6) return std::string(role) + " '" + x.name + "' has rank " + std::to_string(x.rank()) + ", more than 6";
    for (auto d : x.shape)
        if (d <= 0) return std::string(role) + " '" + x.name + "' has no static shape";
    return {};
}

/// TFLite's clamp range of the fused activation in the output type (not the SDK's §8.3 bounds,
/// which drop RELU6 and keep 127 for UINT8 outputs [quirk]).
inline quant::activation_range output_range(const graph& g, const compiler::op& o) {
    const auto& out = g.t(o.outputs.at(0));
    const bool u8 = out.type == tensor_type::UINT8;
    return quant::tflite_activation_range(static_cast<quant::fused_activation>(o.options.fused), out.quant.scale0(),
                                          out.quant.zero0(), u8 ? 0 : -128, u8 ? 255 : 127);
}

/// TFLite's SAME padding of one axis: total = max((out−1)·s + k − in, 0), before = total/2.
inline std::pair<std::int32_t, std::int32_t> same_pads(std::int32_t in, std::int32_t out, std::int32_t k, std::int32_t s) {
    const std::int32_t total = std::max((out - 1) * s + k - in, 0);
    return {total / 2, total - total / 2};
}

inline std::int32_t valid_out(std::int32_t in, std::int32_t k, std::int32_t s) { return (in - k) / s + 1; }
inline std::int32_t same_out(std::int32_t in, std::int32_t s) { return (in + s - 1) / s; }

template <builtin_operator Code>
struct pool_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool is_max = Code == builtin_operator::MAX_POOL_2D;
    static constexpr std::string_view summary =
        is_max ? "max pool over fh x fw windows (SAME via an explicit pad)"
               : "average pool over fh x fw windows, SAME counts in-bounds taps only";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations =
        meta::value_set<activation_function::NONE, activation_function::RELU, activation_function::RELU_N1_TO_1,
                        activation_function::RELU6>{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "";
    static constexpr rank_range ranks{4, 4};
    static constexpr auto paddings = any_padding{};
    static constexpr std::string_view axes = "H and W of [N,H,W,C]";
    static constexpr std::string_view notes =
        "fused activations are applied and the kernel is not clipped to the input (the SDK ignores the first "
        "and clips, which moves SAME windows)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        if (auto r = check_static_shape(x, "input"); !r.empty()) return r;
        if (y.type != x.type) return "output type must equal the input type";
        const auto& op = o.options;
        if (op.filter_h <= 0 || op.filter_w <= 0 || op.stride_h <= 0 || op.stride_w <= 0)
            return "filter and strides must be positive";
        std::int32_t oh = 0, ow = 0;
        if (op.pad == compiler::padding::SAME) {
            oh = same_out(x.shape[1], op.stride_h);
            ow = same_out(x.shape[2], op.stride_w);
        } else {
            if (op.filter_h > x.shape[1] || op.filter_w > x.shape[2]) return "VALID filter is larger than the input";
            oh = valid_out(x.shape[1], op.filter_h, op.stride_h);
            ow = valid_out(x.shape[2], op.filter_w, op.stride_w);
        }
        if (y.shape[0] != x.shape[0] || y.shape[1] != oh || y.shape[2] != ow || y.shape[3] != x.shape[3])
            return "output shape does not follow from the filter, strides and padding";
        // Pools compare and average raw codes (TFLite checks the same).
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output quantization must be equal";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto& x = c.g.t(o.inputs[0]);
        const auto& y = c.g.t(o.outputs[0]);
        const auto& op = o.options;
        l.rec.kernel_shape = {op.filter_h, op.filter_w};
        l.rec.strides = {op.stride_h, op.stride_w};
        l.rec.pads = {0, 0, 0, 0, 0, 0};
        if (op.pad == compiler::padding::SAME) {
            const auto [t, b] = same_pads(x.shape[1], y.shape[1], op.filter_h, op.stride_h);
            const auto [lf, r] = same_pads(x.shape[2], y.shape[2], op.filter_w, op.stride_w);
            l.rec.pads = {0, t, lf, 0, b, r};
        }
        const auto range = output_range(c.g, o);
        l.rec.activation_min = range.min;
        l.rec.activation_max = range.max;
    }
};

}  // namespace pool_detail

template <>
struct op<builtin_operator::MAX_POOL_2D> : pool_detail::pool_trait<builtin_operator::MAX_POOL_2D> {};
template <>
struct op<builtin_operator::AVERAGE_POOL_2D> : pool_detail::pool_trait<builtin_operator::AVERAGE_POOL_2D> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/pool.hpp
// ---- begin vnnx/ops/reduce.hpp
// MEAN (40), SUM (74), REDUCE_MAX (82), REDUCE_MIN (89), REDUCE_PROD (81) → reduce8 (lowering.md §7.7.1, §8.8).
// MEAN as the first operator of a split is a node of type MEAN with the node union reduce8;
// everywhere else these are layers.
//
// reduce8 holds one flag per channels-first axis (channels, rows, columns). The SDK accepts only
// the axis lists [1,2] and [1,2,3] [quirk]; here any set of the last three TFLite axes works
// (MEAN/SUM over the channel axis for LayerNorm, over [1] or [2], ...), and leading axes may be
// listed when their size is 1. keep_dims only changes the output record's shape.
//
// Data: output_multiplier / output_shift (one int32 each): MEAN QM(S_in / (n·S_out)) with the
// argument computed in float as TFLite's kernel does (n = reduced element count); SUM,
// REDUCE_MAX, REDUCE_MIN QM(S_in / S_out). REDUCE_PROD (81, INT8 as in TFLite) stores TFLite's
// per-step scaling QM(S_in / S_out^(1/n)), applied after every multiplication and once more at
// the end; the SDK stores QM(S_out) and leaves the rest to a runtime it does not describe
// [unverified]. activation_min/max span the output type (the SDK's fixed −128/127 would clip
// UINT8 outputs [quirk]).


namespace vnnx::ops {

namespace reduce_detail {

struct axes_info {
    format::layer_options::reduce8 flags{};
    std::int64_t count = 1;  // reduced elements
    std::string error;
};

/// The reduced axes of a reduction (operand 1: constant int32/int64 list or scalar).
inline axes_info reduce_axes(const graph& g, const compiler::op& o) {
    axes_info r;
    if (o.inputs.size() < 2 || o.inputs[1] < 0) {
        r.error = "needs a constant axis operand";
        return r;
    }
    const auto& x = g.t(o.inputs[0]);
    const auto& a = g.t(o.inputs[1]);
    if (!a.is_constant() || (a.type != tensor_type::INT32 && a.type != tensor_type::INT64)) {
        r.error = "the axis operand must be a constant int32/int64 tensor";
        return r;
    }
    std::vector<std::int64_t> axes;
    if (a.type == tensor_type::INT32)
        for (auto v : a.values<std::int32_t>()) axes.push_back(v);
    else
        for (auto v : a.values<std::int64_t>()) axes.push_back(v);
    const auto rank = static_cast<std::int64_t>(x.rank());
    if (rank < 1) {
        r.error = "the input must have rank >= 1";
        return r;
    }
    std::vector<bool> seen(static_cast<std::size_t>(rank), false);
    for (auto v : axes) {
        if (v < -rank || v >= rank) {
            r.error = "axis " + std::to_string(v) + " is outside the input rank " + std::to_string(rank);
            return r;
        }
        const auto ax = static_cast<std::int32_t>(v < 0 ? v + rank : v);
        if (seen[static_cast<std::size_t>(ax)]) continue;  // TFLite ignores repeated axes
        seen[static_cast<std::size_t>(ax)] = true;
        const auto from_end = static_cast<std::int32_t>(rank) - channels_first_axis(ax, static_cast<std::int32_t>(rank));
        const auto dim = x.shape[static_cast<std::size_t>(ax)];
        if (from_end == 1) r.flags.columns = 1;
        else if (from_end == 2) r.flags.rows = 1;
        else if (from_end == 3) r.flags.channels = 1;
        else if (dim != 1) {
            r.error = "reduction over leading axis " + std::to_string(ax) + " of size " + std::to_string(dim) +
                      " is not supported (only the last three axes)";
            return r;
        }
        r.count *= dim;
    }
    if (axes.empty()) r.error = "the axis list is empty";
    return r;
}

/// The output shape TFLite gives for the reduced axes.
inline std::vector<std::int32_t> reduced_shape(const graph& g, const compiler::op& o, bool keep) {
    const auto& x = g.t(o.inputs[0]);
    const auto rank = static_cast<std::int64_t>(x.rank());
    std::vector<bool> red(x.shape.size(), false);
    const auto& a = g.t(o.inputs[1]);
    std::vector<std::int64_t> axes;
    if (a.type == tensor_type::INT32)
        for (auto v : a.values<std::int32_t>()) axes.push_back(v);
    else
        for (auto v : a.values<std::int64_t>()) axes.push_back(v);
    for (auto v : axes) red[static_cast<std::size_t>(v < 0 ? v + rank : v)] = true;
    std::vector<std::int32_t> out;
    for (std::size_t i = 0; i < x.shape.size(); ++i) {
        if (!red[i]) out.push_back(x.shape[i]);
        else if (keep) out.push_back(1);
    }
    return out;
}

inline std::string check_reduction(const graph& g, const compiler::op& o) {
    if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, axes and one output";
    const auto& x = g.t(o.inputs[0]);
    const auto& y = g.t(o.outputs[0]);
    if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
    const auto ax = reduce_axes(g, o);
    if (!ax.error.empty()) return ax.error;
    if (y.type != x.type) return "output type must equal the input type";
    auto expect = reduced_shape(g, o, o.options.keep_dims);
    auto got = y.shape;
    // A scalar result may be written as [] or [1].
    if (expect.empty()) expect = {1};
    if (got.empty()) got = {1};
    if (got != expect) return "output shape does not match the reduced axes and keep_dims";
    if (x.quant.empty() || y.quant.empty() || !(x.quant.scale0() > 0) || !(y.quant.scale0() > 0))
        return "input and output must be quantized with positive scales";
    return {};
}

/// QM of the reduction (see the header comment).
inline quant::quantized_multiplier multiplier_of(const graph& g, const compiler::op& o, std::int64_t count) {
    const float si = g.t(o.inputs[0]).quant.scale0();
    const float so = g.t(o.outputs[0]).quant.scale0();
    if (o.code == builtin_operator::MEAN) {
        // float arithmetic as TFLite's Mean kernel, then QuantizeMultiplier in double
        const float r = si / (static_cast<float>(count) * so);
        return quant::quantize_multiplier(static_cast<double>(r));
    }
    if (o.code == builtin_operator::REDUCE_PROD)
        return quant::quantize_multiplier(static_cast<double>(si) / std::pow(static_cast<double>(so), 1.0 / static_cast<double>(count)));
    return quant::quantize_multiplier(static_cast<double>(si) / static_cast<double>(so));
}

inline std::pair<std::int32_t, std::int32_t> type_range(const graph& g, std::int32_t t) {
    return g.t(t).type == tensor_type::UINT8 ? std::pair{0, 255} : std::pair{-128, 127};
}

template <builtin_operator Code>
struct reduce_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary =
        Code == builtin_operator::MEAN        ? "mean over any of the last three axes (MEAN node when first)"
        : Code == builtin_operator::SUM       ? "sum over any of the last three axes"
        : Code == builtin_operator::REDUCE_MAX ? "maximum over any of the last three axes"
        : Code == builtin_operator::REDUCE_MIN ? "minimum over any of the last three axes"
                                               : "product over any of the last three axes, TFLite's per-step rescaling";
    static constexpr auto dtypes = [] {
        if constexpr (Code == builtin_operator::REDUCE_PROD) return meta::value_set<tensor_type::INT8>{};
        else return int8_types{};
    }();
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type =
        Code == builtin_operator::MEAN ? static_cast<std::int32_t>(builtin_operator::MEAN) : identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "reduce8";
    static constexpr std::string_view axes = "any set of the last three axes; leading axes of size 1";
    static constexpr std::string_view notes =
        "channel-axis and single-axis reductions (LayerNorm) compile; uint8 outputs span 0..255 (the SDK: axes "
        "[1,2] or [1,2,3] only, -128..127)";

    static std::string check(const graph& g, const compiler::op& o) {
        auto r = check_reduction(g, o);
        if (r.empty() && Code == builtin_operator::REDUCE_PROD) {
            const auto m = multiplier_of(g, o, reduce_axes(g, o).count);
            if (m.shift < -31 || m.shift > 7) return "per-step scaling S_in / S_out^(1/n) is out of TFLite's range";
        }
        return r;
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto ax = reduce_axes(c.g, o);
        if (!ax.error.empty()) c.reject(o, ax.error);
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto m = multiplier_of(c.g, o, ax.count);
        l.rec.output_multiplier = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(m.multiplier))};
        l.rec.output_shift = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(static_cast<std::int32_t>(m.shift)))};
        const auto [lo, hi] = type_range(c.g, o.outputs[0]);
        l.rec.activation_min = lo;
        l.rec.activation_max = hi;
        l.set(ax.flags);
    }

    static void lower_node(lowering& c, const compiler::op& o) {
        const auto ax = reduce_axes(c.g, o);
        if (!ax.error.empty()) c.reject(o, ax.error);
        auto& n = c.node;
        n.tensors.push_back(c.desc(o.inputs.at(0)));
        n.tensors.push_back(c.desc(o.outputs.at(0)));
        n.rec.num_inputs = 1;
        n.rec.num_outputs = 1;
        const auto m = multiplier_of(c.g, o, ax.count);
        n.rec.output_multiplier = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(m.multiplier))};
        n.rec.output_shift = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(static_cast<std::int32_t>(m.shift)))};
        const auto [lo, hi] = type_range(c.g, o.outputs[0]);
        n.rec.activation_min = lo;
        n.rec.activation_max = hi;
        format::node_options::reduce8 r{};
        r.channels = ax.flags.channels;
        r.rows = ax.flags.rows;
        r.columns = ax.flags.columns;
        n.set(r);
    }
};

}  // namespace reduce_detail

template <>
struct op<builtin_operator::MEAN> : reduce_detail::reduce_trait<builtin_operator::MEAN> {};
template <>
struct op<builtin_operator::SUM> : reduce_detail::reduce_trait<builtin_operator::SUM> {};
template <>
struct op<builtin_operator::REDUCE_MAX> : reduce_detail::reduce_trait<builtin_operator::REDUCE_MAX> {};
template <>
struct op<builtin_operator::REDUCE_MIN> : reduce_detail::reduce_trait<builtin_operator::REDUCE_MIN> {};
template <>
struct op<builtin_operator::REDUCE_PROD> : reduce_detail::reduce_trait<builtin_operator::REDUCE_PROD> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/reduce.hpp
// ---- begin vnnx/ops/argmax.hpp
// ARG_MAX (56) / ARG_MIN (79) → layer with reduce8 (lowering.md §7.7.2): one flag for the
// reduced channels-first axis, the output holds the int32 index of the first extreme code.
// The SDK accepts only the TFLite last axis and packs a 0..C−1 signed-byte table that no field
// references, which breaks above 128 classes [quirk]; here any one of the last three axes
// works, the unreferenced table is omitted (lowering.md §13) and class counts are unlimited.
// Offsets are 0 and 0 as in the SDK: indices do not depend on the quantization.
// An INT64 output (TFLite's default output_type) is accepted: VNNX has no 64-bit calc type, so
// the NARROW_INDICES pass makes the tensor INT32, which holds every index a shape can have. The
// SDK maps INT64 to calc type UNKNOWN and cannot size its buffer; it only builds INT32 ARG_MAX.


namespace vnnx::ops {

namespace argmax_detail {

template <builtin_operator Code>
struct argmax_trait {
    static constexpr builtin_operator code = Code;
    static constexpr std::string_view summary = Code == builtin_operator::ARG_MAX
                                                    ? "index of the maximum along one of the last three axes, int32 (int64 narrowed)"
                                                    : "index of the minimum along one of the last three axes, int32 (int64 narrowed)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "reduce8";
    static constexpr std::string_view axes = "one of the last three axes";
    static constexpr std::string_view notes =
        "any class count and any of the last three axes (the SDK: last axis only, breaks above 128 classes)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() < 2 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input, an axis and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
        const auto& a = g.t(o.inputs[1]);
        if (!a.is_constant() || a.element_count() != 1) return "the axis must be one constant value";
        const auto ax = reduce_detail::reduce_axes(g, o);
        if (!ax.error.empty()) return ax.error;
        if (y.type != tensor_type::INT32 && y.type != tensor_type::INT64) return "output_type must be INT32 or INT64";
        if (y.rank() + 1 != x.rank()) return "the output rank must be the input rank - 1";
        const auto expect = reduce_detail::reduced_shape(g, o, false);
        if (y.shape != expect) return "output shape does not match the input without the axis";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto ax = reduce_detail::reduce_axes(c.g, o);
        if (!ax.error.empty()) c.reject(o, ax.error);
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        l.rec.input_offset = 0;
        l.rec.output_offset = 0;
        // The output record describes plain indices.
        l.tensors.back().scale = 1.0f;
        l.tensors.back().zero = 0;
        l.set(ax.flags);
    }
};

}  // namespace argmax_detail

template <>
struct op<builtin_operator::ARG_MAX> : argmax_detail::argmax_trait<builtin_operator::ARG_MAX> {};
template <>
struct op<builtin_operator::ARG_MIN> : argmax_detail::argmax_trait<builtin_operator::ARG_MIN> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/argmax.hpp
// ---- begin vnnx/ops/resize.hpp
// RESIZE_NEAREST_NEIGHBOR (97) and RESIZE_BILINEAR (23) → layer with ResizeOptions
// (lowering.md §7.5, §8.8): `scale` = [H_out/H_in, W_out/W_in] (float32), `mode` 0 nearest /
// 1 linear, `c_inc` the per-input-column counts of output columns (nearest only when both
// scales > 1), min_* 0, *_trips 1, `in_scratchpad` 1 for bilinear.
//
// The SDK ignores align_corners and half_pixel_centers [quirk]. Here they are honoured: the
// column map behind `c_inc` follows them, and they are stored in `mode` as bit 8
// (align_corners) and bit 9 (half_pixel_centers); with neither set `mode` is exactly the SDK's
// 0/1, and a firmware that only knows 0/1 rejects the other values rather than computing the
// wrong picture. A bilinear resize of a 1×1 input is a nearest one (mode 0), as in the SDK.


namespace vnnx::ops {

namespace resize_detail {

inline constexpr std::int32_t align_corners_bit = 1 << 8;
inline constexpr std::int32_t half_pixel_bit = 1 << 9;

/// Source column of output column j for nearest, as TFLite computes it.
inline std::int32_t nearest_source(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    if (!align && !half) return std::min(static_cast<std::int32_t>(std::floor(static_cast<double>(v) * in / out)), in - 1);
    const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                           : static_cast<float>(in) / static_cast<float>(out);
    const float off = half ? 0.5f : 0.0f;
    std::int32_t r = align ? static_cast<std::int32_t>(std::round((static_cast<float>(v) + off) * scale))
                           : static_cast<std::int32_t>(std::floor((static_cast<float>(v) + off) * scale));
    r = std::min(r, in - 1);
    return half ? std::max(r, 0) : r;
}

/// Lower source column of output column j for bilinear in 1/1024 units (§8.8 without flags).
inline std::int32_t bilinear_source(std::int32_t j, std::int32_t in, std::int32_t out, bool align, bool half) {
    if (!align && !half) {
        const auto ratio = std::trunc((1024.0 * in + out / 2.0) / out);
        const double pos = std::min(ratio * j / 1024.0, static_cast<double>(in - 1));
        return static_cast<std::int32_t>(std::trunc(pos));
    }
    std::int32_t s = ((1 << 10) * in + out / 2) / out;
    if (align && out > 1) s = ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    const std::int32_t pos = half ? j * s + s / 2 - (1 << 9) : j * s;
    return std::min(std::max(pos / (1 << 10), 0), in - 1);
}

template <builtin_operator Code>
struct resize_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool bilinear = Code == builtin_operator::RESIZE_BILINEAR;
    static constexpr std::string_view summary =
        bilinear ? "bilinear resize, align_corners / half_pixel_centers honoured"
                 : "nearest-neighbour resize, align_corners / half_pixel_centers honoured";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "ResizeOptions";
    static constexpr rank_range ranks{4, 4};
    static constexpr std::string_view axes = "H and W of [N,H,W,C]";
    static constexpr std::string_view notes = "align_corners and half_pixel_centers are honoured (the SDK ignores them)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs an input and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
        if (auto r = pool_detail::check_static_shape(y, "output"); !r.empty()) return r;
        if (y.shape[0] != x.shape[0] || y.shape[3] != x.shape[3] || y.type != x.type)
            return "output batch, channels and type must equal the input's";
        if (o.inputs.size() > 1 && o.inputs[1] >= 0) {
            const auto& s = g.t(o.inputs[1]);
            if (!s.is_constant() || s.type != tensor_type::INT32 || s.element_count() != 2) return "size must be a constant int32 [2]";
            const auto v = s.values<std::int32_t>();
            if (v[0] != y.shape[1] || v[1] != y.shape[2]) return "size does not match the output shape";
        }
        if (o.options.align_corners && o.options.half_pixel_centers)
            return "align_corners and half_pixel_centers cannot both be set";
        // Resizing moves codes (nearest) or mixes them linearly (bilinear) without requantizing.
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output quantization must be equal";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto& x = c.g.t(o.inputs[0]);
        const auto& y = c.g.t(o.outputs[0]);
        const std::int32_t ih = x.shape[1], iw = x.shape[2], oh = y.shape[1], ow = y.shape[2];
        const bool as_nearest = !bilinear || (ih == 1 && iw == 1);
        const bool align = o.options.align_corners, half = o.options.half_pixel_centers;
        auto& l = c.add_layer(as_nearest ? static_cast<std::int32_t>(builtin_operator::RESIZE_NEAREST_NEIGHBOR) : layer_type,
                              o, {o.inputs.at(0)});
        format::layer_options::ResizeOptions r{};
        r.scale = {static_cast<float>(oh) / static_cast<float>(ih), static_cast<float>(ow) / static_cast<float>(iw)};
        r.mode = (as_nearest ? 0 : 1) | (align ? align_corners_bit : 0) | (half ? half_pixel_bit : 0);
        r.rows_trips = r.cols_trips = r.maps_trips = 1;
        r.in_scratchpad = as_nearest ? 0 : 1;
        std::vector<std::int32_t> src;
        for (std::int32_t j = 0; j < ow; ++j)
            src.push_back(as_nearest ? nearest_source(j, iw, ow, align, half) : bilinear_source(j, iw, ow, align, half));
        std::vector<std::uint8_t> counts;  // one byte per entry (§8.8)
        if (as_nearest) {
            if (r.scale[0] > 1.0f && r.scale[1] > 1.0f) {
                counts.assign(static_cast<std::size_t>(iw), 0);
                for (auto s : src) ++counts[static_cast<std::size_t>(s)];
            }
        } else {
            // counts of the indices that occur, ascending
            for (std::size_t j = 0; j < src.size(); ++j) {
                if (j == 0 || src[j] != src[j - 1]) counts.push_back(0);
                ++counts.back();
            }
        }
        for (auto s : src)
            if (std::count(src.begin(), src.end(), s) > 255) c.reject(o, "more than 255 output columns share one input column (c_inc is one byte)");
        r.num_c_inc = static_cast<std::int32_t>(counts.size());
        if (!counts.empty())
            r.c_inc = format::obj_off_t{static_cast<std::uint64_t>(
                c.data().append_bytes(std::as_bytes(std::span<const std::uint8_t>(counts))))};
        l.set(r);
    }
};

}  // namespace resize_detail

template <>
struct op<builtin_operator::RESIZE_NEAREST_NEIGHBOR> : resize_detail::resize_trait<builtin_operator::RESIZE_NEAREST_NEIGHBOR> {};
template <>
struct op<builtin_operator::RESIZE_BILINEAR> : resize_detail::resize_trait<builtin_operator::RESIZE_BILINEAR> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/resize.hpp
// ---- begin vnnx/ops/softmax.hpp
// SOFTMAX (25) → layer with SoftmaxOptions (lowering.md §7.6.2, §8.7). TFLite normalises over
// its last axis: the channels-first axis −3 for rank ≥ 3 (channels), −1 for rank ≤ 2; `depth`
// is that dim. Data: `vci_int8` the 256-entry uint32 exponential table as four byte planes,
// `lut_int32` / `idx_int8` its step list (`count` entries), `input_multiplier/shift` =
// QM(1 / (S_out·2^16)); `diff_min` −1.
// The SDK ignores `beta` [quirk]; here it is folded into the table, which is built from
// S_in·β (the table is all the runtime knows of the input scale), so any beta is honoured.


namespace vnnx::ops {

template <>
struct op<builtin_operator::SOFTMAX> {
    static constexpr builtin_operator code = builtin_operator::SOFTMAX;
    static constexpr std::string_view summary = "softmax over the last axis (beta folded into the table)";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(builtin_operator::SOFTMAX);
    static constexpr std::string_view member = "SoftmaxOptions";
    static constexpr std::string_view axes = "the TFLite last axis";
    static constexpr std::string_view notes = "beta is honoured, folded into the table (the SDK ignores it)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.empty() || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        if (auto r = pool_detail::check_static_shape(x, "input"); !r.empty()) return r;
        if (x.rank() < 1) return "the input must have rank >= 1";
        if (y.shape != x.shape || y.type != x.type) return "output shape and type must equal the input's";
        if (!(o.options.beta > 0.0f) || !std::isfinite(o.options.beta)) return "beta must be positive and finite";
        if (!(x.quant.scale0() > 0) || !(y.quant.scale0() > 0)) return "input and output must be quantized";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) {
        const auto& x = c.g.t(o.inputs[0]);
        const auto& y = c.g.t(o.outputs[0]);
        auto& l = c.add_layer(layer_type, o, {o.inputs.at(0)});
        const auto rank = static_cast<std::int32_t>(x.rank());
        format::layer_options::SoftmaxOptions so{};
        so.diff_min = -1;
        so.axis = rank >= 3 ? -3 : -1;
        so.depth = x.shape.back();
        // beta folded: S_in·β in float, as TFLite multiplies them before its exponentials.
        const float s_beta = x.quant.scale0() * o.options.beta;
        const auto t = quant::softmax_tables(so.depth, static_cast<double>(s_beta), static_cast<double>(y.quant.scale0()));
        l.rec.input_multiplier = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(t.input.multiplier))};
        l.rec.input_shift =
            format::obj_off_t{static_cast<std::uint64_t>(c.data().append_one(static_cast<std::int32_t>(t.input.shift)))};
        std::array<std::uint8_t, 1024> planes{};
        for (std::size_t r = 0; r < 256; ++r)
            for (std::size_t b = 0; b < 4; ++b) planes[b * 256 + r] = static_cast<std::uint8_t>(t.exp_table[r] >> (8 * b));
        so.vci_int8 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append_bytes(std::as_bytes(std::span(planes))))};
        so.count = static_cast<std::int32_t>(t.step_values.size());
        so.lut_int32 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(t.step_values))};
        so.idx_int8 = format::obj_off_t{static_cast<std::uint64_t>(c.data().append(t.step_codes))};
        l.set(so);
    }
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/softmax.hpp
// ---- begin vnnx/ops/space_depth.hpp
// DEPTH_TO_SPACE (5) and SPACE_TO_DEPTH (26) → layers of the same type, no union (lowering.md
// §7.7). The SDK stores no block size [quirk], so its runtime cannot know it; here the layer's
// input and output tensor records carry it (block = output rows / input rows, or the inverse),
// and the simulator reads it from there. Pure data movement: input and output share the
// quantization, as TFLite requires.


namespace vnnx::ops {

namespace movement {

template <builtin_operator Code>
struct space_depth_trait {
    static constexpr builtin_operator code = Code;
    static constexpr bool to_space = Code == builtin_operator::DEPTH_TO_SPACE;
    static constexpr std::string_view summary =
        to_space ? "channel blocks moved to bs x bs spatial blocks (TFLite DCR order)"
                 : "bs x bs spatial blocks moved into the channels";
    static constexpr auto dtypes = int8_types{};
    static constexpr auto activations = no_activation{};
    static constexpr std::int32_t node_type = identity_node;
    static constexpr std::int32_t layer_type = static_cast<std::int32_t>(Code);
    static constexpr std::string_view member = "";
    static constexpr rank_range ranks{4, 4};
    static constexpr std::string_view axes = "H, W and C of [N,H,W,C]";
    static constexpr std::string_view notes =
        "the block size is carried by the tensor records (the SDK stores none, so its layer cannot run)";

    static std::string check(const graph& g, const compiler::op& o) {
        if (o.inputs.size() != 1 || o.inputs[0] < 0 || o.outputs.size() != 1) return "needs one input and one output";
        if (auto r = check_static(g, o.inputs[0], "input"); !r.empty()) return r;
        if (auto r = check_static(g, o.outputs[0], "output"); !r.empty()) return r;
        const auto& x = g.t(o.inputs[0]);
        const auto& y = g.t(o.outputs[0]);
        const std::int32_t bs = o.options.block_size;
        if (bs < 1) return "block_size " + std::to_string(bs) + " must be >= 1";
        if (x.rank() != 4 || y.rank() != 4) return "input and output must be 4-D [N,H,W,C]";
        const auto& s = x.shape;
        std::vector<std::int32_t> want;
        if (to_space) {
            if (s[3] % (bs * bs) != 0) return "input channels " + std::to_string(s[3]) + " are not a multiple of block_size^2";
            want = {s[0], s[1] * bs, s[2] * bs, s[3] / (bs * bs)};
        } else {
            if (s[1] % bs != 0 || s[2] % bs != 0) return "input height and width must be multiples of block_size";
            want = {s[0], s[1] / bs, s[2] / bs, s[3] * bs * bs};
        }
        if (y.shape != want) return "output shape " + shape_text(y.shape) + " should be " + shape_text(want);
        if (y.type != x.type) return "output type must equal the input type";
        if (x.quant.scale0() != y.quant.scale0() || x.quant.zero0() != y.quant.zero0())
            return "input and output must share the quantization";
        return {};
    }

    static void lower_layer(lowering& c, const compiler::op& o) { c.add_layer(layer_type, o, {o.inputs.at(0)}); }
};

}  // namespace movement

template <>
struct op<builtin_operator::DEPTH_TO_SPACE> : movement::space_depth_trait<builtin_operator::DEPTH_TO_SPACE> {};
template <>
struct op<builtin_operator::SPACE_TO_DEPTH> : movement::space_depth_trait<builtin_operator::SPACE_TO_DEPTH> {};

}  // namespace vnnx::ops
// ---- end vnnx/ops/space_depth.hpp
// ---- end vnnx/ops/all.hpp

namespace vnnx::ops {

struct entry {
    bool supported = false;
    builtin_operator code{};
    std::string_view summary;
    std::int32_t node_type = identity_node;
    std::int32_t layer_type = no_layer;
    std::string_view member;
    std::uint32_t dtype_mask = 0;       // bit per tflite::tensor_type of the data input
    std::uint32_t activation_mask = 0;  // bit per fused activation_function
    std::uint32_t padding_mask = 0;     // bit per padding_mode; 0: the operator has no padding option
    rank_range ranks{};                 // {0, 0}: not stated by the trait
    std::string_view axes;
    std::string_view notes;
    std::string (*check)(const graph&, const compiler::op&) = nullptr;
    void (*lower_node)(lowering&, const compiler::op&) = nullptr;
    void (*lower_layer)(lowering&, const compiler::op&) = nullptr;
};

namespace detail {

template <class Set>
constexpr std::uint32_t mask_of() {
    std::uint32_t m = 0;
    Set::for_each([&](auto v) { m |= 1u << static_cast<unsigned>(v); });
    return m;
}

template <class T>
constexpr entry make_entry() {
    static_assert(operator_trait<T>, "an operator trait misses a required member");
    entry e;
    e.supported = true;
    e.code = T::code;
    e.summary = T::summary;
    e.node_type = T::node_type;
    e.layer_type = T::layer_type;
    e.member = T::member;
    e.dtype_mask = mask_of<decltype(T::dtypes)>();
    e.activation_mask = mask_of<decltype(T::activations)>();
    if constexpr (requires { T::paddings; }) e.padding_mask = mask_of<decltype(T::paddings)>();
    if constexpr (requires { T::ranks; }) e.ranks = T::ranks;
    if constexpr (requires { T::axes; }) e.axes = T::axes;
    if constexpr (requires { T::notes; }) e.notes = T::notes;
    e.check = &T::check;
    if constexpr (requires(lowering& c, const compiler::op& o) { T::lower_node(c, o); }) e.lower_node = &T::lower_node;
    if constexpr (requires(lowering& c, const compiler::op& o) { T::lower_layer(c, o); }) e.lower_layer = &T::lower_layer;
    return e;
}

template <std::size_t... I>
constexpr std::array<entry, sizeof...(I)> make_table(std::index_sequence<I...>) {
    return {{[] {
        constexpr auto code = static_cast<builtin_operator>(I);
        if constexpr (requires { op<code>::summary; }) return make_entry<op<code>>();
        else {
            entry e;
            e.code = code;
            return e;
        }
    }()...}};
}

}  // namespace detail

inline constexpr auto table = detail::make_table(std::make_index_sequence<builtin_operator_count>{});
inline constexpr entry lut_entry = detail::make_entry<lut_op>();

[[nodiscard]] constexpr const entry& entry_for(builtin_operator code) noexcept {
    return table[static_cast<std::size_t>(code)];
}
[[nodiscard]] inline const entry& entry_for(const compiler::op& o) noexcept {
    return o.kind == compiler::op_type::lut ? lut_entry : entry_for(o.code);
}

/// The data input of an operator (lowering.md §1.3): input 1 for SPLIT, 2 for TRANSPOSE_CONV.
[[nodiscard]] inline std::int32_t data_input(const compiler::op& o) {
    std::size_t i = 0;
    if (o.kind == compiler::op_type::builtin) {
        if (o.code == builtin_operator::SPLIT) i = 1;
        if (o.code == builtin_operator::TRANSPOSE_CONV) i = 2;
    }
    return i < o.inputs.size() ? o.inputs[i] : -1;
}

/// Why the operator cannot be compiled, or "" when it can: the registry's constraints
/// (supported code, data type, fused activation) and then the trait's own rules.
[[nodiscard]] inline std::string check(const graph& g, const compiler::op& o) {
    const entry& e = entry_for(o);
    if (o.kind == compiler::op_type::builtin && o.code == builtin_operator::CUSTOM)
        return "custom operator '" + o.custom_code + "' is not supported";
    if (!e.supported) return "operator is not supported";
    const std::int32_t in = data_input(o);
    if (in < 0) return "has no data input";
    const auto type = g.t(in).type;
    if ((e.dtype_mask & (1u << static_cast<unsigned>(type))) == 0)
        return "data input type " + std::string(tflite::type_name(type)) + " is not supported";
    if ((e.activation_mask & (1u << static_cast<unsigned>(o.options.fused))) == 0)
        return "fused activation " + std::string(tflite::activation_name(o.options.fused)) + " is not supported";
    if (e.padding_mask != 0 && (e.padding_mask & (1u << static_cast<unsigned>(o.options.pad))) == 0)
        return "padding " + std::string(o.options.pad == padding_mode::SAME ? "SAME" : "VALID") + " is not supported";
    if (e.ranks.max > 0) {
        const auto r = static_cast<std::int32_t>(g.t(in).rank());
        if (r < e.ranks.min || r > e.ranks.max)
            return "data input rank " + std::to_string(r) + " is outside " + std::to_string(e.ranks.min) + ".." +
                   std::to_string(e.ranks.max);
    }
    return e.check(g, o);
}

}  // namespace vnnx::ops
// ---- end vnnx/ops/registry.hpp

namespace vnnx::compiler {

namespace detail {
inline void set_description(format::chars<48>& dst, const std::string& name) {
    dst.fill('\0');
    std::memcpy(dst.data(), name.data(), std::min<std::size_t>(name.size(), dst.size()));
}
}  // namespace detail

/// Tile of a node as the lowering sees it (lowering.md §10.1).
struct node_tile {
    std::int32_t maps = 0, imaps = 0;
};

inline node_build build_node(const graph& g, program& prog, const preset_info& preset, const split& s,
                             const node_tile& tile) {
    node_build node;
    node.rec = default_node();
    ops::lowering ctx{g, prog, preset, node, tile.maps, tile.imaps, {}};
    const op& first = g.ops.at(static_cast<std::size_t>(s.front()));
    const ops::entry& e = ops::entry_for(first);
    for (auto i : s) {
        if (!node.label.empty()) node.label += " + ";
        const op& o = g.ops[static_cast<std::size_t>(i)];
        node.label += o.kind == op_type::lut ? std::string("LUT") : std::string(builtin_name(o.code));
    }

    // Common fields (lowering.md §5.2) from the first operator's data input and first output.
    const std::int32_t data_in = ops::data_input(first);
    const auto in_desc = ctx.desc(data_in);
    const auto out_desc = ctx.desc(first.outputs.at(0));
    node.rec.input_data_type = in_desc.type;
    node.rec.output_data_type = out_desc.type;
    node.rec.input_offset = in_desc.zero;
    node.rec.output_offset = out_desc.zero;
    const auto geo = ops::geometry_of(g.t(data_in).shape);
    node.rec.channels = geo.channels;
    node.rec.m = geo.m;
    node.rec.n = geo.n;
    detail::set_description(node.rec.input_description, in_desc.name);

    std::size_t layers_from = 1;
    if (e.node_type == ops::identity_node) {
        node.rec.type = static_cast<std::int32_t>(format::vnnx_operator::IDENTITY);
        const auto acts = ctx.activation_inputs(first);
        if (acts.size() == 1) {
            // The node copies its input into "<input>.id", which feeds the first layer.
            node.tensors.push_back(in_desc);
            auto copy = in_desc;
            copy.name = in_desc.name + ".id";
            node.tensors.push_back(copy);
            ctx.renames.emplace_back(in_desc.name, copy.name);
        } else {
            for (auto t : acts) node.tensors.push_back(ctx.desc(t));
            for (auto t : first.outputs) node.tensors.push_back(ctx.desc(t));
        }
        node.rec.num_inputs = static_cast<std::int32_t>(acts.size() == 1 ? 1 : acts.size());
        node.rec.num_outputs = acts.size() == 1 ? 1 : static_cast<std::int32_t>(first.outputs.size());
        layers_from = 0;
    } else {
        node.rec.type = e.node_type;
        e.lower_node(ctx, first);
    }
    for (std::size_t k = layers_from; k < s.size(); ++k) {
        const op& o = g.ops[static_cast<std::size_t>(s[k])];
        const ops::entry& le = ops::entry_for(o);
        if (le.lower_layer == nullptr)
            fail(error_kind::unsupported, g.source + ": " + describe(o) + ": cannot run as a layer of a node");
        le.lower_layer(ctx, o);
    }
    // The node's result is the last layer's output (or its own output).
    const std::string& last = node.layers.empty() ? node.tensors.back().name : node.layers.back().tensors.back().name;
    detail::set_description(node.rec.output_description, last);
    // Every operator of the split is vectorised except a few (lowering.md §5.2).
    node.rec.use_replay = 1;
    for (auto i : s) {
        const op& o = g.ops[static_cast<std::size_t>(i)];
        using B = builtin_operator;
        if (o.kind == op_type::builtin &&
            (o.code == B::BATCH_MATMUL || o.code == B::BATCH_TO_SPACE_ND || o.code == B::DEPTH_TO_SPACE ||
             o.code == B::L2_NORMALIZATION || o.code == B::LOG_SOFTMAX || o.code == B::SPACE_TO_BATCH_ND ||
             o.code == B::SPACE_TO_DEPTH))
            node.rec.use_replay = 0;
    }
    return node;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/build.hpp
// ---- begin vnnx/compiler/emit.hpp
// Lays out a compiled program and writes its bytes (vnnx-format.md §2, §6, §7):
// header, node table, layer table, tensor table, pad, replay region, pad, data blob; then the
// I/O tables (twice, as the SDK writes them), I/O buffers with the test vectors and the
// activation arena, which is reserved by the loader and not part of the file. Every
// blob-relative offset is relocated by W, the blob's start.

// ---- begin vnnx/compiler/arena.hpp
// Activation memory planning: one shared arena, first-fit over the node sequence
// (vnnx-format.md §7.1, lowering.md §11.4). A buffer lives from the node that first touches
// it to the node that last touches it; buffers whose lifetimes do not overlap may share bytes.


namespace vnnx::compiler {

struct buffer_request {
    std::uint64_t bytes = 0;
    std::int32_t first_use = 0;  // node index
    std::int32_t last_use = 0;   // node index, inclusive
};

struct arena_plan {
    std::vector<std::uint64_t> offsets;  // one per request, arena-relative, 16-byte aligned
    std::uint64_t size = 0;
};

/// First-fit placement in request order (callers pass requests in order of first use).
inline arena_plan plan_arena(const std::vector<buffer_request>& requests, std::uint64_t alignment = 16) {
    struct placed {
        std::uint64_t begin, end;
        std::int32_t first, last;
    };
    arena_plan plan;
    plan.offsets.resize(requests.size());
    std::vector<placed> live;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        if (r.last_use < r.first_use) fail(error_kind::bad_input, "arena: a buffer's last use precedes its first use");
        const std::uint64_t need = round_up(std::max<std::uint64_t>(r.bytes, 1), alignment);
        // Buffers that overlap this one in time, sorted by address.
        std::vector<placed> busy;
        for (const auto& p : live)
            if (!(p.last < r.first_use || r.last_use < p.first)) busy.push_back(p);
        std::sort(busy.begin(), busy.end(), [](const placed& a, const placed& b) { return a.begin < b.begin; });
        std::uint64_t at = 0;
        for (const auto& p : busy) {
            if (at + need <= p.begin) break;
            at = std::max(at, p.end);
        }
        plan.offsets[i] = at;
        live.push_back({at, at + need, r.first_use, r.last_use});
        plan.size = std::max(plan.size, at + need);
    }
    return plan;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/arena.hpp
// ---- begin vnnx/compiler/zero_copy.hpp
// Zero-copy channel splits and concatenations (lowering.md §11.2, vnnx-format.md §7.1): a
// CONCATENATION or SPLIT node on the channels-first channel axis, whose parts are contiguous
// slices of the whole, is marked skip = 1 and does no work: its parts are placed at offsets of
// one buffer instead (offset = bytes of the preceding parts).
// Rules as the SDK applies them (set_skip_channel_split, then set_skip_concat), with two extra
// conditions of ours: no graph input may take part (the host passes its own input buffers, so
// an alias into the embedded one would not see the data) and a tensor is aliased at most once.
// The SDK's channel-slice rule (an IDENTITY node starting with SLICE) is not applied: the SDK
// marks such nodes but never aliases their buffers, and this compiler emits no SLICE subnode.
#include <set>


namespace vnnx::compiler {

/// Where a tensor of a skipped node lives: `offset` bytes into the buffer of `root`.
struct alias {
    std::string root;
    std::uint64_t offset = 0;
};

namespace zero_copy_detail {

inline bool is_type(const node_build& nd, builtin_operator b) { return nd.rec.type == static_cast<std::int32_t>(b); }

inline std::size_t n_in(const node_build& nd) { return static_cast<std::size_t>(std::max(0, nd.rec.num_inputs)); }
inline std::size_t n_out(const node_build& nd) { return static_cast<std::size_t>(std::max(0, nd.rec.num_outputs)); }

/// Names a node writes: its own outputs and each layer's output (its last record).
inline std::set<std::string> writes(const node_build& nd) {
    std::set<std::string> w;
    for (std::size_t i = n_in(nd); i < n_in(nd) + n_out(nd) && i < nd.tensors.size(); ++i) w.insert(nd.tensors[i].name);
    for (const auto& l : nd.layers)
        if (!l.tensors.empty()) w.insert(l.tensors.back().name);
    return w;
}

/// Names a node reads: every tensor record it has that it does not write.
inline std::set<std::string> reads(const node_build& nd) {
    const auto w = writes(nd);
    std::set<std::string> r;
    for (const auto& t : nd.tensors)
        if (!w.count(t.name)) r.insert(t.name);
    for (const auto& l : nd.layers)
        for (const auto& t : l.tensors)
            if (!w.count(t.name)) r.insert(t.name);
    return r;
}

/// Bytes of a dense channels-first tensor.
inline std::uint64_t dense_bytes(const tensor_desc& t) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= static_cast<std::uint64_t>(std::max(d, 1));
    return n * std::max<std::uint32_t>(format::element_size(t.type), 1);
}

/// The parts are contiguous slices of the whole when every dim before the channel axis
/// (rank − 3) is 1 and the parts agree with the whole off that axis.
inline bool channel_slices(const tensor_desc& whole, const std::vector<const tensor_desc*>& parts) {
    const std::size_t r = whole.shape.size();
    if (r < 3) return false;
    for (std::size_t d = 0; d + 3 < r; ++d)
        if (whole.shape[d] != 1) return false;
    std::int64_t sum = 0;
    for (const auto* p : parts) {
        if (p->shape.size() != r || p->type != whole.type) return false;
        for (std::size_t d = 0; d < r; ++d)
            if (d != r - 3 && p->shape[d] != whole.shape[d]) return false;
        sum += p->shape[r - 3];
    }
    return sum == whole.shape[r - 3];
}

}  // namespace zero_copy_detail

/// Sets `skip` on the channel SPLIT and CONCATENATION nodes that can be done by aliasing
/// (splits first, then concatenations, as the SDK does).
inline void mark_zero_copy(program& p) {
    using namespace zero_copy_detail;
    using B = builtin_operator;
    std::set<std::string> io;
    for (const auto& x : p.inputs) io.insert(x.name);
    for (const auto& x : p.outputs) io.insert(x.name);
    std::vector<std::set<std::string>> w, r;
    for (const auto& nd : p.nodes) {
        w.push_back(writes(nd));
        r.push_back(reads(nd));
    }
    auto touches_io = [&](const node_build& nd) {
        for (const auto& t : nd.tensors)
            if (io.count(t.name)) return true;
        return false;
    };
    // Nodes that read one of node k's outputs.
    auto consumers = [&](std::size_t k) {
        std::vector<std::size_t> out;
        for (std::size_t j = 0; j < p.nodes.size(); ++j) {
            if (j == k) continue;
            for (const auto& name : w[k])
                if (r[j].count(name)) {
                    out.push_back(j);
                    break;
                }
        }
        return out;
    };
    auto producers = [&](std::size_t k) {
        std::vector<std::size_t> out;
        for (std::size_t j = 0; j < p.nodes.size(); ++j) {
            if (j == k) continue;
            for (const auto& name : r[k])
                if (w[j].count(name)) {
                    out.push_back(j);
                    break;
                }
        }
        return out;
    };
    std::set<std::string> aliased;  // tensors already placed inside another buffer
    auto distinct_fresh = [&](const std::vector<const tensor_desc*>& parts) {
        std::set<std::string> seen;
        for (const auto* t : parts)
            if (!seen.insert(t->name).second || aliased.count(t->name)) return false;
        return true;
    };
    auto plain = [](const node_build& nd) {
        return nd.layers.empty() && nd.rec.output_strides == decltype(nd.rec.output_strides){1, 1} &&
               nd.tensors.size() == n_in(nd) + n_out(nd);
    };

    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        if (!is_type(nd, B::SPLIT) || !plain(nd) || n_in(nd) != 1 || touches_io(nd)) continue;
        if (nd.get<format::node_options::SplitOptions>().axis != -3) continue;
        std::vector<const tensor_desc*> parts;
        for (std::size_t i = 1; i < nd.tensors.size(); ++i) parts.push_back(&nd.tensors[i]);
        if (!channel_slices(nd.tensors[0], parts) || !distinct_fresh(parts)) continue;
        bool concat_reader = false;
        for (auto j : consumers(k)) concat_reader |= is_type(p.nodes[j], B::CONCATENATION);
        if (concat_reader) continue;
        nd.rec.skip = 1;
        for (const auto* t : parts) aliased.insert(t->name);
    }
    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        if (!is_type(nd, B::CONCATENATION) || !plain(nd) || n_out(nd) != 1 || touches_io(nd)) continue;
        const auto& whole = nd.tensors.back();
        const auto axis = nd.get<format::node_options::ConcatOptions>().axis;
        if (axis != static_cast<std::int32_t>(whole.shape.size()) - 3) continue;
        std::vector<const tensor_desc*> parts;
        for (std::size_t i = 0; i + 1 < nd.tensors.size(); ++i) parts.push_back(&nd.tensors[i]);
        if (!channel_slices(whole, parts) || !distinct_fresh(parts)) continue;
        // A producer whose other reader is already skipped keeps this one a copy (SDK rule).
        bool shared = false;
        for (auto j : producers(k))
            for (auto c : consumers(j)) shared |= c != k && p.nodes[c].rec.skip == 1;
        if (shared) continue;
        nd.rec.skip = 1;
        for (const auto* t : parts) aliased.insert(t->name);
    }
}

/// The placement of every tensor of a skipped node relative to the buffer it lives in, chains
/// (a part of a part) resolved to the outermost buffer.
inline std::map<std::string, alias> zero_copy_aliases(const program& p) {
    using namespace zero_copy_detail;
    using B = builtin_operator;
    std::map<std::string, alias> direct;  // one level: part -> whole
    for (const auto& nd : p.nodes) {
        if (nd.rec.skip != 1) continue;
        std::uint64_t at = 0;
        if (is_type(nd, B::CONCATENATION)) {
            for (std::size_t i = 0; i + 1 < nd.tensors.size(); ++i) {
                direct[nd.tensors[i].name] = {nd.tensors.back().name, at};
                at += dense_bytes(nd.tensors[i]);
            }
        } else if (is_type(nd, B::SPLIT)) {
            for (std::size_t i = 1; i < nd.tensors.size(); ++i) {
                direct[nd.tensors[i].name] = {nd.tensors[0].name, at};
                at += dense_bytes(nd.tensors[i]);
            }
        }
    }
    std::map<std::string, alias> out;
    for (const auto& [name, a] : direct) {
        alias r = a;
        for (std::size_t depth = 0; depth <= direct.size(); ++depth) {
            const auto it = direct.find(r.root);
            if (it == direct.end()) break;
            r.offset += it->second.offset;
            r.root = it->second.root;
        }
        out[name] = r;
    }
    return out;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/zero_copy.hpp

namespace vnnx::compiler {

/// Bytes of a tensor buffer: the channels-first shape with its last two dims rounded up to
/// multiples of 4 (rank >= 2), times the element size (vnnx-format.md §7.1).
inline std::uint64_t buffer_bytes(const tensor_desc& t) {
    std::uint64_t n = 1;
    const std::size_t r = t.shape.size();
    for (std::size_t i = 0; i < r; ++i) {
        auto d = static_cast<std::uint64_t>(std::max(t.shape[i], 1));
        if (r >= 2 && i + 2 >= r) d = round_up(d, 4);
        n *= d;
    }
    return n * std::max<std::uint32_t>(format::element_size(t.type), 1);
}

/// The replay region is reserved empty: the SDK's recorded size plus its slack of 128 bytes,
/// with nothing recorded (vnnx-format.md §7.4).
inline constexpr std::uint32_t replay_bytes = 128;

struct emit_result {
    std::vector<std::byte> bytes;
    std::uint32_t allocate_bytes = 0;
};

/// `laid_out`, if set, is called when every offset is known and the writing begins (the
/// compiler's -v timings tell layout and writing apart).
inline emit_result emit(program& p, const std::function<void()>& laid_out = {}) {
    using format::obj_off_t;
    constexpr std::uint64_t header_size = meta::serialized_size_v<format::vnnx_graph_t>;
    constexpr std::uint64_t node_size = meta::serialized_size_v<format::vnnx_subgraph_node_t>;
    constexpr std::uint64_t layer_size = meta::serialized_size_v<format::vnnx_layer_t>;
    constexpr std::uint64_t tensor_size = meta::serialized_size_v<format::vnnx_tensor_t>;

    if (p.nodes.empty()) fail(error_kind::unsupported, "the model has no operator left to compile");
    mark_zero_copy(p);
    const auto aliases = zero_copy_aliases(p);
    auto root_of = [&](const std::string& name) -> const std::string& {
        const auto it = aliases.find(name);
        return it == aliases.end() ? name : it->second.root;
    };
    const std::uint64_t n_nodes = p.nodes.size();
    std::uint64_t n_layers = 0, n_tensors = 0;
    // Every node's full tensor array: node tensors, then each layer's.
    std::vector<std::vector<const tensor_desc*>> node_tensors(p.nodes.size());
    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        for (const auto& t : nd.tensors) node_tensors[k].push_back(&t);
        for (const auto& l : nd.layers)
            for (const auto& t : l.tensors) node_tensors[k].push_back(&t);
        n_layers += nd.layers.size();
        n_tensors += node_tensors[k].size();
    }
    const std::uint64_t tensors_end = header_size + node_size * n_nodes + layer_size * n_layers + tensor_size * n_tensors;
    const std::uint64_t A = round_up(tensors_end, 16);
    const std::uint64_t W = A + round_up(replay_bytes, 16);

    // I/O tables: the first tensor record carrying each graph I/O name, in node then tensor order.
    const std::size_t n_in = p.inputs.size(), n_out = p.outputs.size();
    std::vector<std::int32_t> io_nodes, io_offsets;
    auto locate = [&](const std::string& name, bool input) {
        for (std::size_t k = 0; k < node_tensors.size(); ++k)
            for (std::size_t i = 0; i < node_tensors[k].size(); ++i)
                if (node_tensors[k][i]->name == name) {
                    io_nodes.push_back(static_cast<std::int32_t>(k));
                    io_offsets.push_back(static_cast<std::int32_t>(i));
                    return;
                }
        fail(error_kind::bad_input, std::string("graph ") + (input ? "input" : "output") + " '" + name +
                                        "' is not used by any compiled node");
    };
    for (const auto& io : p.inputs) locate(io.name, true);
    for (const auto& io : p.outputs) locate(io.name, false);
    auto& data = p.data;
    data.append(io_nodes);  // the SDK writes both tables twice and points at the second copy
    data.append(io_offsets);
    const std::int64_t io_nodes_at = data.append(io_nodes);
    const std::int64_t io_offsets_at = data.append(io_offsets);

    // Buffers: one per distinct name. Graph I/O get dedicated buffers holding the test vectors.
    std::map<std::string, std::uint64_t> buffer_at;  // blob-relative
    auto find_desc = [&](const std::string& name) -> const tensor_desc* {
        for (const auto& list : node_tensors)
            for (const auto* t : list)
                if (t->name == name) return t;
        return nullptr;
    };
    auto place_io = [&](const io_desc& io) {
        if (buffer_at.count(io.name)) return;
        const tensor_desc* t = find_desc(io.name);
        data.align(16);
        const std::uint64_t size = buffer_bytes(*t);
        if (io.test_data.size() > size)
            fail(error_kind::bad_input, "test vector of '" + io.name + "' is larger than its buffer");
        const std::int64_t at = data.reserve(size);
        if (!io.test_data.empty()) std::memcpy(data.bytes().data() + at, io.test_data.data(), io.test_data.size());
        buffer_at[io.name] = static_cast<std::uint64_t>(at);
    };
    for (const auto& io : p.inputs) place_io(io);
    for (const auto& io : p.outputs) place_io(io);
    data.align(16);
    const std::uint64_t data_blob_bytes = data.size();

    // Activation arena: first fit over node lifetimes. The parts of a skipped split or
    // concatenation request their whole's buffer, which lives as long as any of them.
    std::vector<std::string> names;
    std::vector<buffer_request> requests;
    std::map<std::string, std::size_t> request_of;
    for (std::size_t k = 0; k < node_tensors.size(); ++k)
        for (const auto* t : node_tensors[k]) {
            const std::string& root = root_of(t->name);
            if (buffer_at.count(root)) continue;
            const auto a = aliases.find(t->name);
            const std::uint64_t bytes = (a == aliases.end() ? 0 : a->second.offset) + buffer_bytes(*t);
            auto it = request_of.find(root);
            if (it == request_of.end()) {
                request_of[root] = requests.size();
                names.push_back(root);
                requests.push_back({bytes, static_cast<std::int32_t>(k), static_cast<std::int32_t>(k)});
            } else {
                auto& r = requests[it->second];
                r.bytes = std::max(r.bytes, bytes);
                r.last_use = static_cast<std::int32_t>(k);
            }
        }
    const arena_plan arena = plan_arena(requests);
    for (std::size_t i = 0; i < names.size(); ++i) buffer_at[names[i]] = data_blob_bytes + arena.offsets[i];
    for (const auto& [name, a] : aliases) buffer_at[name] = buffer_at.at(a.root) + a.offset;

    const std::uint64_t data_bytes = W + data_blob_bytes;
    const std::uint64_t allocate = data_bytes + arena.size;
    if (allocate > 0xFFFFFFFFull)
        fail(error_kind::limit, "the model needs " + std::to_string(allocate) +
                                    " bytes of memory, more than the format's 32-bit sizes can describe");
    if (laid_out) laid_out();

    auto reloc = [&](obj_off_t& o) {
        if (!o.absent()) o.value += W;
    };
    auto reloc_union = [&](auto& rb) {
        for (auto at : rb.union_offsets) {
            std::byte* p8 = rb.rec.options.bytes.data() + at;
            const auto v = load_le<std::uint64_t>(p8);
            if (v != obj_off_t::absent_value) store_le<std::uint64_t>(p8, v + W);
        }
    };
    auto tensor_record = [&](const tensor_desc& t, bool io) {
        format::vnnx_tensor_t r{};
        r.type = t.type;
        for (std::size_t i = 0; i < t.shape.size() && i < 6; ++i) r.shape[i] = t.shape[i];
        r.dims = static_cast<std::int32_t>(t.shape.size());
        r.scale = t.scale;
        // 16.16 fixed point; saturated, since a hostile scale of 2^15 or more does not fit.
        const double f16 = std::clamp(static_cast<double>(t.scale) * 65536.0, -2147483648.0, 2147483647.0);
        r.scale_f16 = io ? static_cast<std::int32_t>(f16) : -1;
        r.zero = t.zero;
        r.multiplier = -1;
        r.shift = -1;
        const std::uint64_t at = W + buffer_at.at(t.name);
        r.indirect.base_ptr_offset_from_sp_start = 0;
        r.indirect.offset = static_cast<std::uint32_t>(at);
        r.direct = obj_off_t{at};
        return r;
    };
    auto is_io = [&](const std::string& name) {
        for (const auto& io : p.inputs)
            if (io.name == name) return true;
        for (const auto& io : p.outputs)
            if (io.name == name) return true;
        return false;
    };

    std::vector<std::byte> out(data_bytes);
    format::vnnx_graph_t h{};
    h.version = format::graph_version;
    h.vbx_nn_preset = static_cast<std::uint32_t>(p.preset);
    h.num_inputs = static_cast<std::uint32_t>(n_in);
    h.num_outputs = static_cast<std::uint32_t>(n_out);
    h.include_io_data = 1;
    h.data_bytes = static_cast<std::uint32_t>(data_bytes);
    h.allocate_bytes = static_cast<std::uint32_t>(allocate);
    h.io_nodes = obj_off_t{W + static_cast<std::uint64_t>(io_nodes_at)};
    h.io_offsets = obj_off_t{W + static_cast<std::uint64_t>(io_offsets_at)};
    h.num_layers = static_cast<std::int32_t>(n_nodes);
    h.replay_buffer = obj_off_t{A};
    h.replay_buffer_size = static_cast<std::int32_t>(replay_bytes);
    h.magic = format::magic;
    h.sparsity = static_cast<std::int32_t>(p.compression);
    format::emit(out, 0, h);

    std::uint64_t layer_at = header_size + node_size * n_nodes;
    std::uint64_t tensor_at = layer_at + layer_size * n_layers;
    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        auto rec = nd.rec;
        rec.sublayers = obj_off_t{layer_at};
        rec.num_sublayers = static_cast<std::int32_t>(nd.layers.size());
        rec.tensors = obj_off_t{tensor_at};
        rec.num_tensors = static_cast<std::int32_t>(node_tensors[k].size());
        reloc(rec.input_multiplier);
        reloc(rec.input_shift);
        reloc(rec.output_multiplier);
        reloc(rec.output_shift);
        record_build<format::vnnx_subgraph_node_t> tmp{rec, nd.union_offsets};
        reloc_union(tmp);
        format::emit(out, header_size + node_size * k, tmp.rec);
        for (auto& l : nd.layers) {
            auto lrec = l.rec;
            reloc(lrec.input_multiplier);
            reloc(lrec.input_shift);
            reloc(lrec.output_multiplier);
            reloc(lrec.output_shift);
            lrec.tensors = format::absent_offset;
            record_build<format::vnnx_layer_t> ltmp{lrec, l.union_offsets};
            reloc_union(ltmp);
            format::emit(out, layer_at, ltmp.rec);
            layer_at += layer_size;
        }
        for (const auto* t : node_tensors[k]) {
            format::emit(out, tensor_at, tensor_record(*t, is_io(t->name)));
            tensor_at += tensor_size;
        }
    }
    std::memcpy(out.data() + W, data.bytes().data(), data_blob_bytes);
    return {std::move(out), static_cast<std::uint32_t>(allocate)};
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/emit.hpp
// ---- begin vnnx/compiler/import.hpp
// Copies the main subgraph of a verified TFLite model into the compiler's graph, reading each
// operator's options through the options traits of vnnx/tflite.
#include <unordered_set>


namespace vnnx::compiler {

namespace detail {

inline void read_options(const tflite::operator_view& v, op_options& o) {
    using B = builtin_operator;
    namespace opt = tflite::opt;
    switch (v.op()) {
        case B::CONV_2D: {
            const auto x = v.options<opt::Conv2DOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.dilation_w = x.dilation_w_factor;
            o.dilation_h = x.dilation_h_factor;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::DEPTHWISE_CONV_2D: {
            const auto x = v.options<opt::DepthwiseConv2DOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.dilation_w = x.dilation_w_factor;
            o.dilation_h = x.dilation_h_factor;
            o.depth_multiplier = x.depth_multiplier;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::AVERAGE_POOL_2D:
        case B::MAX_POOL_2D:
        case B::L2_POOL_2D: {
            const auto x = v.options<opt::Pool2DOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.filter_w = x.filter_width;
            o.filter_h = x.filter_height;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::FULLY_CONNECTED: {
            const auto x = v.options<opt::FullyConnectedOptions>();
            o.fused = x.fused_activation_function;
            o.keep_num_dims = x.keep_num_dims;
            break;
        }
        case B::SOFTMAX: o.beta = v.options<opt::SoftmaxOptions>().beta; break;
        case B::CONCATENATION: {
            const auto x = v.options<opt::ConcatenationOptions>();
            o.axis = x.axis;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::ADD: {
            const auto x = v.options<opt::AddOptions>();
            o.fused = x.fused_activation_function;
            o.pot_scale_int16 = x.pot_scale_int16;
            break;
        }
        case B::SUB: {
            const auto x = v.options<opt::SubOptions>();
            o.fused = x.fused_activation_function;
            o.pot_scale_int16 = x.pot_scale_int16;
            break;
        }
        case B::MUL: o.fused = v.options<opt::MulOptions>().fused_activation_function; break;
        case B::DIV: o.fused = v.options<opt::DivOptions>().fused_activation_function; break;
        case B::L2_NORMALIZATION: o.fused = v.options<opt::L2NormOptions>().fused_activation_function; break;
        case B::RESIZE_BILINEAR: {
            const auto x = v.options<opt::ResizeBilinearOptions>();
            o.align_corners = x.align_corners;
            o.half_pixel_centers = x.half_pixel_centers;
            break;
        }
        case B::RESIZE_NEAREST_NEIGHBOR: {
            const auto x = v.options<opt::ResizeNearestNeighborOptions>();
            o.align_corners = x.align_corners;
            o.half_pixel_centers = x.half_pixel_centers;
            break;
        }
        case B::RESHAPE: o.new_shape = v.options<opt::ReshapeOptions>().new_shape; break;
        case B::SPACE_TO_DEPTH: o.block_size = v.options<opt::SpaceToDepthOptions>().block_size; break;
        case B::DEPTH_TO_SPACE: o.block_size = v.options<opt::DepthToSpaceOptions>().block_size; break;
        case B::GATHER: {
            const auto x = v.options<opt::GatherOptions>();
            o.axis = x.axis;
            o.batch_dims = x.batch_dims;
            break;
        }
        case B::MEAN: case B::SUM: case B::REDUCE_MAX: case B::REDUCE_MIN: case B::REDUCE_PROD:
            o.keep_dims = v.options<opt::ReducerOptions>().keep_dims;
            break;
        case B::SQUEEZE: o.squeeze_dims = v.options<opt::SqueezeOptions>().squeeze_dims; break;
        case B::STRIDED_SLICE: {
            const auto x = v.options<opt::StridedSliceOptions>();
            o.begin_mask = x.begin_mask;
            o.end_mask = x.end_mask;
            o.ellipsis_mask = x.ellipsis_mask;
            o.new_axis_mask = x.new_axis_mask;
            o.shrink_axis_mask = x.shrink_axis_mask;
            o.offset = x.offset;
            break;
        }
        case B::SPLIT: o.num = v.options<opt::SplitOptions>().num_splits; break;
        case B::SPLIT_V: o.num = v.options<opt::SplitVOptions>().num_splits; break;
        case B::TRANSPOSE_CONV: {
            const auto x = v.options<opt::TransposeConvOptions>();
            o.pad = x.padding;
            o.stride_w = x.stride_w;
            o.stride_h = x.stride_h;
            o.fused = x.fused_activation_function;
            break;
        }
        case B::PACK: {
            const auto x = v.options<opt::PackOptions>();
            o.num = x.values_count;
            o.axis = x.axis;
            break;
        }
        case B::UNPACK: {
            const auto x = v.options<opt::UnpackOptions>();
            o.num = x.num;
            o.axis = x.axis;
            break;
        }
        case B::LEAKY_RELU: o.alpha = v.options<opt::LeakyReluOptions>().alpha; break;
        case B::MIRROR_PAD:
            o.mirror_mode = static_cast<std::int32_t>(v.options<opt::MirrorPadOptions>().mode);
            break;
        case B::BATCH_MATMUL: {
            const auto x = v.options<opt::BatchMatMulOptions>();
            o.adj_x = x.adj_x;
            o.adj_y = x.adj_y;
            break;
        }
        case B::GELU: o.approximate = v.options<opt::GeluOptions>().approximate; break;
        default: break;
    }
}

}  // namespace detail

/// The main subgraph as a compiler graph.
inline graph import_graph(const tflite::model_view& m) {
    graph g;
    g.source = std::string(m.source());
    const auto sg = m.subgraph(0);
    g.tensors.reserve(sg.tensor_count());
    for (std::size_t i = 0; i < sg.tensor_count(); ++i) {
        const auto tv = sg.tensor(i);
        tensor t;
        t.name = std::string(tv.name());
        if (t.name.empty()) t.name = "tensor" + std::to_string(i);
        t.type = tv.type();
        t.shape.assign(tv.shape().begin(), tv.shape().end());
        const auto q = tv.quant();
        t.quant.scale.assign(q.scale.begin(), q.scale.end());
        t.quant.zero_point.assign(q.zero_point.begin(), q.zero_point.end());
        t.quant.quantized_dimension = q.quantized_dimension;
        if (tv.is_constant()) {
            const auto d = tv.data();
            t.data = std::vector<std::byte>(d.begin(), d.end());
        }
        g.tensors.push_back(std::move(t));
    }
    // Names identify buffers in a VNNX file: make them unique (a set: a model may have very many).
    std::unordered_set<std::string> seen;
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (!seen.insert(g.tensors[i].name).second) {
            g.tensors[i].name += "#" + std::to_string(i);
            seen.insert(g.tensors[i].name);
        }
    for (std::size_t i = 0; i < sg.operator_count(); ++i) {
        const auto v = sg.op(i);
        op o;
        o.code = v.op();
        o.inputs.assign(v.inputs().begin(), v.inputs().end());
        o.outputs.assign(v.outputs().begin(), v.outputs().end());
        o.source_index = static_cast<std::int32_t>(i);
        o.custom_code = std::string(v.custom_code());
        detail::read_options(v, o.options);
        g.ops.push_back(std::move(o));
    }
    g.inputs.assign(sg.inputs().begin(), sg.inputs().end());
    g.outputs.assign(sg.outputs().begin(), sg.outputs().end());
    // An activation with no element, yet other dimensions that would size every tiling walk and
    // buffer (operator intermediates, which are never lowered, may be empty; so may an int32
    // shape vector such as the empty RESHAPE target of a scalar, which shape folding consumes).
    const auto check_not_empty = [&](std::int32_t i) {
        if (i < 0) return;
        const auto& t = g.t(i);
        if (t.is_constant() || (t.shape.size() <= 1 && t.type == tensor_type::INT32) || std::find(t.shape.begin(), t.shape.end(), 0) == t.shape.end()) return;
        std::string dims;
        for (std::size_t d = 0; d < t.shape.size(); ++d) dims += (d ? "x" : "") + std::to_string(t.shape[d]);
        fail(error_kind::unsupported, g.source + ": tensor " + std::to_string(i) + " '" + t.name + "': shape " + dims +
                                          " has no elements (empty activations are not supported)");
    };
    for (const auto& o : g.ops) {
        for (const auto i : o.inputs) check_not_empty(i);
        for (const auto i : o.outputs) check_not_empty(i);
    }
    return g;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/import.hpp
// ---- begin vnnx/compiler/passes/explicit_pad.hpp
// EXPLICIT_PAD (lowering.md §3.2): convolutions and max pools with SAME padding get an
// explicit PADV2 in front (constant = input zero point; max pool: the type's minimum) and
// become VALID, so no conv or pool reaches lowering with implicit padding. Consumers of the
// same tensor that need identical pads share one PADV2 (SHARED_PAD).


namespace vnnx::compiler::passes {

inline void explicit_pad(graph& g) {
    using B = builtin_operator;
    std::map<std::tuple<std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t, std::int32_t>, std::int32_t>
        shared;  // (input, top, bottom, left, right, value) -> padded tensor
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (auto& o : g.ops) {
        const bool conv = o.kind == op_type::builtin && (o.code == B::CONV_2D || o.code == B::DEPTHWISE_CONV_2D);
        const bool maxpool = o.kind == op_type::builtin && o.code == B::MAX_POOL_2D;
        if ((!conv && !maxpool) || o.options.pad != padding::SAME || o.inputs.empty() || o.outputs.empty()) {
            out.push_back(std::move(o));
            continue;
        }
        const std::int32_t in = o.inputs[0];
        const auto ishape = g.t(in).shape;
        const auto oshape = g.t(o.outputs[0]).shape;
        if (ishape.size() != 4 || oshape.size() != 4) {
            out.push_back(std::move(o));
            continue;
        }
        std::int32_t kh = o.options.filter_h, kw = o.options.filter_w;
        if (conv) {
            const auto& w = g.t(o.inputs[1]).shape;  // [K, kh, kw, C] or [1, kh, kw, C]
            kh = w.size() == 4 ? w[1] : 1;
            kw = w.size() == 4 ? w[2] : 1;
        }
        const auto [top, bottom] = same_pads(ishape[1], oshape[1], o.options.stride_h, kh, conv ? o.options.dilation_h : 1);
        const auto [left, right] = same_pads(ishape[2], oshape[2], o.options.stride_w, kw, conv ? o.options.dilation_w : 1);
        o.options.pad = padding::VALID;
        if (top + bottom + left + right == 0) {
            out.push_back(std::move(o));
            continue;
        }
        const tensor& src = g.t(in);
        std::int32_t value = src.quant.zero0();
        if (maxpool) value = src.type == tensor_type::UINT8 ? 0 : -128;
        const auto key = std::make_tuple(in, top, bottom, left, right, value);
        auto it = shared.find(key);
        std::int32_t padded;
        if (it != shared.end()) {
            padded = it->second;
        } else {
            const auto pads = add_i32_constant(g, g.t(in).name + "/pads", {4, 2},
                                               {0, 0, top, bottom, left, right, 0, 0});
            tensor cv;
            cv.name = g.unique_name(g.t(in).name + "/pad_value");
            cv.type = g.t(in).type;
            cv.quant = g.t(in).quant;
            cv.shape = {};
            cv.data = std::vector<std::byte>{static_cast<std::byte>(static_cast<std::uint8_t>(value))};
            const auto value_t = g.add_tensor(std::move(cv));
            padded = add_activation_like(g, in, g.t(in).name + "/padded",
                                         {ishape[0], ishape[1] + top + bottom, ishape[2] + left + right, ishape[3]});
            op pad;
            pad.code = B::PADV2;
            pad.inputs = {in, pads, value_t};
            pad.outputs = {padded};
            out.push_back(std::move(pad));
            shared.emplace(key, padded);
        }
        o.inputs[0] = padded;
        out.push_back(std::move(o));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/explicit_pad.hpp
// ---- begin vnnx/compiler/passes/fully_connected.hpp
// FC_CONV_2D (lowering.md §3.2, §7.10.1): every FULLY_CONNECTED becomes RESHAPE → 1×1 CONV_2D →
// RESHAPE, so it runs on the convolution engine. Unlike the SDK, inputs with several rows
// (token-wise layers of transformers, [T, C] or [1, T, C]) are kept correct: the rows become
// the conv's spatial rows ([1, T, 1, C]) and the final reshape restores the FC's own output shape.


namespace vnnx::compiler::passes {

inline void fully_connected_to_conv(graph& g) {
    using B = builtin_operator;
    std::vector<op> out;
    out.reserve(g.ops.size());
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::FULLY_CONNECTED || o.inputs.size() < 2 || o.outputs.empty() ||
            !g.t(o.inputs[1]).is_constant()) {
            out.push_back(std::move(o));
            continue;
        }
        const std::int32_t in = o.inputs[0], w = o.inputs[1];
        const std::int32_t bias = o.inputs.size() > 2 ? o.inputs[2] : -1;
        const auto& wshape = g.t(w).shape;  // [K, C]
        if (wshape.size() != 2) fail_input(g.source + ": " + describe(o) + ": weights must have rank 2");
        const std::int32_t k = wshape[0], c = wshape[1];
        const std::int64_t total = g.t(in).element_count();
        if (c <= 0 || total % c != 0)
            fail_input(g.source + ": " + describe(o) + ": input element count is not a multiple of the weights' depth");
        const auto rows = static_cast<std::int32_t>(total / c);

        // Weights [K, C] become a [K, 1, 1, C] filter with the same bytes and quantization.
        tensor filt = g.t(w);
        filt.name = g.unique_name(g.t(w).name + "/conv_filter");
        filt.shape = {k, 1, 1, c};
        if (filt.quant.scale.size() > 1) filt.quant.quantized_dimension = 0;
        const auto filt_t = g.add_tensor(std::move(filt));

        const auto in4 = add_activation_like(g, in, g.t(in).name + "/rows", {1, rows, 1, c});
        const auto out_t = o.outputs[0];
        const auto conv_out = add_activation_like(g, out_t, g.t(out_t).name + "/conv", {1, rows, 1, k});

        op r1;
        r1.code = B::RESHAPE;
        r1.inputs = {in, add_i32_constant(g, g.t(in4).name + "/shape", {4}, {1, rows, 1, c})};
        r1.outputs = {in4};
        r1.options.new_shape = {1, rows, 1, c};
        r1.source_index = o.source_index;

        op conv;
        conv.code = B::CONV_2D;
        conv.inputs = {in4, filt_t, bias};
        conv.outputs = {conv_out};
        conv.options.pad = padding::VALID;
        conv.options.fused = o.options.fused;
        conv.source_index = o.source_index;

        op r2;
        r2.code = B::RESHAPE;
        r2.inputs = {conv_out, add_i32_constant(g, g.t(out_t).name + "/shape", {static_cast<std::int32_t>(g.t(out_t).shape.size())},
                                                g.t(out_t).shape)};
        r2.outputs = {out_t};
        r2.options.new_shape = g.t(out_t).shape;
        r2.source_index = o.source_index;

        out.push_back(std::move(r1));
        out.push_back(std::move(conv));
        out.push_back(std::move(r2));
    }
    g.ops = std::move(out);
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/fully_connected.hpp
// ---- begin vnnx/compiler/passes/simplify.hpp
// Small rewrites of lowering.md §3.2: REMOVE_FP32_IO, QUANTIZE-of-constant folding
// (REMOVE_CONSTANTS a), POOL_AS_MEAN, STRIDED_DEPTHWISE and REMOVE_NOPS; NARROW_INDICES (ours).


namespace vnnx::compiler::passes {

/// A QUANTIZE at a float graph input or a DEQUANTIZE at a float graph output is dropped: the
/// model's I/O become the 8-bit tensors.
inline void remove_float_io(graph& g) {
    using B = builtin_operator;
    std::vector<op> kept;
    for (auto& o : g.ops) {
        if (o.kind == op_type::builtin && o.code == B::QUANTIZE && o.inputs.size() == 1 && o.outputs.size() == 1 &&
            g.t(o.inputs[0]).type == tensor_type::FLOAT32) {
            bool at_input = false;
            for (auto& x : g.inputs)
                if (x == o.inputs[0]) at_input = true;
            if (at_input && readers_of(g, o.inputs[0]).size() == 1) {
                for (auto& x : g.inputs)
                    if (x == o.inputs[0]) x = o.outputs[0];
                continue;
            }
        }
        if (o.kind == op_type::builtin && o.code == B::DEQUANTIZE && o.inputs.size() == 1 && o.outputs.size() == 1 &&
            g.t(o.outputs[0]).type == tensor_type::FLOAT32 && is_graph_output(g, o.outputs[0])) {
            for (auto& x : g.outputs)
                if (x == o.outputs[0]) x = o.inputs[0];
            continue;
        }
        kept.push_back(std::move(o));
    }
    g.ops = std::move(kept);
}

/// POOL_AS_MEAN: an average pool covering the whole input with a 1×1 output is a spatial MEAN.
inline void pool_as_mean(graph& g) {
    using B = builtin_operator;
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::AVERAGE_POOL_2D || o.inputs.empty() || o.outputs.empty()) continue;
        const auto& is = g.t(o.inputs[0]).shape;
        const auto& os = g.t(o.outputs[0]).shape;
        if (is.size() != 4 || os.size() != 4 || os[1] != 1 || os[2] != 1) continue;
        if (o.options.filter_h < is[1] || o.options.filter_w < is[2]) continue;
        const auto axes = add_i32_constant(g, g.t(o.outputs[0]).name + "/axes", {2}, {1, 2});
        o.code = B::MEAN;
        o.inputs = {o.inputs[0], axes};
        o.options.keep_dims = true;
    }
}

/// STRIDED_DEPTHWISE: the FIA runs depthwise convs with unit column stride; the column
/// stride becomes a STRIDED_SLICE after the conv.
inline void strided_depthwise(graph& g) {
    using B = builtin_operator;
    std::vector<op> out;
    for (auto& o : g.ops) {
        if (o.kind != op_type::builtin || o.code != B::DEPTHWISE_CONV_2D || o.options.stride_w <= 1 ||
            o.options.pad != padding::VALID) {
            out.push_back(std::move(o));
            continue;
        }
        const auto& is = g.t(o.inputs[0]).shape;
        const auto& ws = g.t(o.inputs[1]).shape;
        const auto final_out = o.outputs[0];
        const auto fs = g.t(final_out).shape;
        const std::int32_t kw_eff = (ws[2] - 1) * o.options.dilation_w + 1;
        const std::int32_t wide = is[2] - kw_eff + 1;
        const std::int32_t sw = o.options.stride_w;
        const auto mid = add_activation_like(g, final_out, g.t(final_out).name + "/unstrided", {fs[0], fs[1], wide, fs[3]});
        o.options.stride_w = 1;
        o.outputs[0] = mid;
        op slice;
        slice.code = B::STRIDED_SLICE;
        slice.source_index = o.source_index;
        const std::string base = g.t(final_out).name;
        slice.inputs = {mid, add_i32_constant(g, base + "/begin", {4}, {0, 0, 0, 0}),
                        add_i32_constant(g, base + "/end", {4}, {fs[0], fs[1], wide, fs[3]}),
                        add_i32_constant(g, base + "/strides", {4}, {1, 1, sw, 1})};
        slice.outputs = {final_out};
        out.push_back(std::move(o));
        out.push_back(std::move(slice));
    }
    g.ops = std::move(out);
}

/// REMOVE_NOPS: a RESHAPE (or SQUEEZE / EXPAND_DIMS) whose input and output shapes are equal.
inline void remove_nops(graph& g) {
    using B = builtin_operator;
    std::vector<op> kept;
    for (auto& o : g.ops) {
        const bool reshape_like = o.kind == op_type::builtin &&
                                  (o.code == B::RESHAPE || o.code == B::SQUEEZE || o.code == B::EXPAND_DIMS);
        if (reshape_like && !o.inputs.empty() && !o.outputs.empty() && g.t(o.inputs[0]).shape == g.t(o.outputs[0]).shape &&
            !is_graph_output(g, o.outputs[0])) {
            replace_uses(g, o.outputs[0], o.inputs[0]);
            continue;
        }
        kept.push_back(std::move(o));
    }
    g.ops = std::move(kept);
}

/// NARROW_INDICES: the INT64 output of ARG_MAX / ARG_MIN becomes INT32 (VNNX has no 64-bit calc
/// type; an index is below 2^24 by the shape limits). A graph output keeps TFLite's values, in
/// 32 bits: the io tensor of the VNNX file is INT32.
inline void narrow_indices(graph& g) {
    using B = builtin_operator;
    for (const auto& o : g.ops)
        if (o.kind == op_type::builtin && (o.code == B::ARG_MAX || o.code == B::ARG_MIN) && o.outputs.size() == 1 &&
            o.outputs[0] >= 0 && g.t(o.outputs[0]).type == tensor_type::INT64)
            g.t(o.outputs[0]).type = tensor_type::INT32;
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/simplify.hpp
// ---- begin vnnx/compiler/passes/sort_dfs.hpp
// Topological order by depth-first search and clean-up (lowering.md §3.3). Splitting depends
// on this exact order: repeatedly take the lowest-index unfinished operator and visit it;
// visiting first visits, in operator-index order, every consumer of its outputs, then
// prepends the operator. Unreferenced tensors are dropped and indices renumbered.


namespace vnnx::compiler::passes {

inline void sort_dfs(graph& g) {
    const std::size_t n = g.ops.size();
    std::vector<std::vector<std::int32_t>> readers(g.tensors.size());
    for (std::size_t i = 0; i < n; ++i)
        for (auto t : g.ops[i].inputs)
            if (t >= 0) readers[static_cast<std::size_t>(t)].push_back(static_cast<std::int32_t>(i));
    // Per operator: every operator consuming one of its outputs, in operator-index order.
    std::vector<std::vector<std::int32_t>> next(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (auto t : g.ops[i].outputs)
            if (t >= 0) next[i].insert(next[i].end(), readers[static_cast<std::size_t>(t)].begin(),
                                       readers[static_cast<std::size_t>(t)].end());
        std::sort(next[i].begin(), next[i].end());
        next[i].erase(std::unique(next[i].begin(), next[i].end()), next[i].end());
    }

    std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::int32_t> order;        // post-order; reversed below
    order.reserve(n);
    // Iterative DFS: real graphs chain hundreds of operators.
    struct frame {
        std::int32_t op;
        std::size_t k = 0;
    };
    for (std::size_t root = 0; root < n; ++root) {
        if (state[root] != 0) continue;
        std::vector<frame> stack{{static_cast<std::int32_t>(root)}};
        state[root] = 1;
        while (!stack.empty()) {
            frame& f = stack.back();
            const auto& succ = next[static_cast<std::size_t>(f.op)];
            if (f.k < succ.size()) {
                const auto c = succ[f.k++];
                if (state[static_cast<std::size_t>(c)] == 1)
                    fail_input(g.source + ": the operator graph has a cycle through " +
                               describe(g.ops[static_cast<std::size_t>(c)]));
                if (state[static_cast<std::size_t>(c)] == 0) {
                    state[static_cast<std::size_t>(c)] = 1;
                    stack.push_back({c});
                }
                continue;
            }
            state[static_cast<std::size_t>(f.op)] = 2;
            order.push_back(f.op);
            stack.pop_back();
        }
    }
    std::reverse(order.begin(), order.end());
    std::vector<op> sorted;
    sorted.reserve(n);
    for (auto i : order) sorted.push_back(std::move(g.ops[static_cast<std::size_t>(i)]));
    g.ops = std::move(sorted);
}

/// Drops tensors no operator and no graph input/output references; renumbers the rest in order.
inline void drop_unused_tensors(graph& g) {
    std::vector<std::uint8_t> used(g.tensors.size(), 0);
    auto mark = [&](std::int32_t t) {
        if (t >= 0) used[static_cast<std::size_t>(t)] = 1;
    };
    for (const auto& o : g.ops) {
        for (auto t : o.inputs) mark(t);
        for (auto t : o.outputs) mark(t);
    }
    for (auto t : g.inputs) mark(t);
    for (auto t : g.outputs) mark(t);
    std::vector<std::int32_t> remap(g.tensors.size(), -1);
    std::vector<tensor> kept;
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (used[i]) {
            remap[i] = static_cast<std::int32_t>(kept.size());
            kept.push_back(std::move(g.tensors[i]));
        }
    auto fix = [&](std::vector<std::int32_t>& v) {
        for (auto& t : v)
            if (t >= 0) t = remap[static_cast<std::size_t>(t)];
    };
    for (auto& o : g.ops) {
        fix(o.inputs);
        fix(o.outputs);
    }
    fix(g.inputs);
    fix(g.outputs);
    g.tensors = std::move(kept);
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/sort_dfs.hpp
// ---- begin vnnx/compiler/tile_split.hpp
// Describes a split to the tiler (compiler/tiling.hpp) and writes the chosen tile into the
// node record (lowering.md §10.1). Operators the tiler has no exact rule for are modelled by
// their closest kind (an element-wise copy), which keeps every tile inside the scratchpad.


namespace vnnx::compiler {

namespace detail {

inline int bytes_of(tensor_type t) {
    const auto s = tflite::element_size(t);
    return s == 0 ? 1 : static_cast<int>(s);
}

inline layer tile_layer_of(const graph& g, const op& o, bool first) {
    using B = builtin_operator;
    layer L;
    std::int32_t in = -1;
    for (auto t : o.inputs)
        if (t >= 0 && !g.t(t).is_constant()) {
            in = t;
            break;
        }
    if (in < 0 && !o.inputs.empty()) in = o.inputs[0];
    if (in < 0 || o.outputs.empty() || o.outputs[0] < 0)
        fail(error_kind::bad_input, g.source + ": " + describe(o) + ": needs an input and an output tensor to be tiled");
    const auto geo = ops::geometry_of(g.t(in).shape);
    L.channels = std::max(1, geo.channels);
    L.m = std::max(1, geo.m);
    L.n = std::max(1, geo.n);
    L.in_bytes = bytes_of(g.t(in).type);
    L.out_bytes = bytes_of(g.t(o.outputs.at(0)).type);
    if (o.kind == op_type::lut) {
        L.kind = op_kind::lut;
        return L;
    }
    switch (o.code) {
        case B::CONV_2D:
        case B::DEPTHWISE_CONV_2D: {
            if (!first) break;
            const auto& w = g.t(o.inputs.at(1)).shape;  // [K, kh, kw, C] or [1, kh, kw, C]
            L.kind = op_kind::conv;
            auto& c = L.conv;
            c.depthwise = o.code == B::DEPTHWISE_CONV_2D && L.channels > 1;
            c.channels = L.channels;
            // A depthwise filter [1, kh, kw, M] over one channel is an ordinary conv with M kernels.
            c.kernels = c.depthwise ? L.channels : (o.code == B::DEPTHWISE_CONV_2D ? w[3] : w[0]);
            c.kh = w[1];
            c.kw = w[2];
            c.sh = o.options.stride_h;
            c.sw = o.options.stride_w;
            c.dh = o.options.dilation_h;
            c.dw = o.options.dilation_w;
            if (c.depthwise && c.dh > 1 && c.kh > 1) {  // height dilation is materialised in the filter
                c.kh = (c.kh - 1) * c.dh + 1;
                c.dh = 1;
            }
            return L;
        }
        case B::ADD: case B::SUB: case B::MUL: case B::DIV: case B::SQUARED_DIFFERENCE: case B::MAXIMUM:
        case B::MINIMUM: case B::GREATER: case B::GREATER_EQUAL: case B::LESS: case B::LESS_EQUAL: case B::EQUAL:
        case B::NOT_EQUAL:
            L.kind = op_kind::eltwise;
            return L;
        case B::PAD:
        case B::PADV2: {
            L.kind = op_kind::pad;
            if (o.inputs.size() > 1 && g.t(o.inputs[1]).is_constant()) {
                const auto p = g.t(o.inputs[1]).values<std::int32_t>();
                const auto r = p.size() / 2;
                if (r >= 3) {  // [.., H, W, C]
                    L.pads = {p[2 * (r - 1)], p[2 * (r - 3)], p[2 * (r - 2)], p[2 * (r - 1) + 1], p[2 * (r - 3) + 1],
                              p[2 * (r - 2) + 1]};
                }
            }
            return L;
        }
        case B::MAX_POOL_2D:
        case B::AVERAGE_POOL_2D:
            L.kind = o.code == B::MAX_POOL_2D ? op_kind::max_pool : op_kind::average_pool;
            L.pool_kh = o.options.filter_h;
            L.pool_kw = o.options.filter_w;
            L.pool_sh = o.options.stride_h;
            L.pool_sw = o.options.stride_w;
            return L;
        case B::SOFTMAX:
            L.kind = op_kind::softmax;
            L.softmax_axis = g.t(in).shape.size() >= 3 ? -3 : -1;
            return L;
        case B::MEAN:
        case B::SUM:
            L.kind = op_kind::mean_sum;
            L.reduce_rows = L.reduce_cols = true;
            return L;
        case B::SPLIT:
        case B::SPLIT_V:
            L.kind = op_kind::split;
            return L;
        default: break;
    }
    L.kind = first ? op_kind::identity : op_kind::copy;
    return L;
}

}  // namespace detail

/// The tile of a split, or `fits == false` with the reason.
inline tiling_result tile_split(const graph& g, const split& s, const preset_info& p) {
    tile_node n;
    n.op = detail::tile_layer_of(g, g.ops.at(static_cast<std::size_t>(s.front())), true);
    for (std::size_t i = 1; i < s.size(); ++i)
        n.subnodes.push_back(detail::tile_layer_of(g, g.ops.at(static_cast<std::size_t>(s[i])), false));
    return tile_node_for(n, p);
}

/// Writes the tile walk into the node record (lowering.md §10.1).
inline void apply_tile(node_build& nd, const tiling_result& t) {
    auto& r = nd.rec;
    auto i32 = [](long long v) { return static_cast<std::int32_t>(v); };
    r.maps = i32(t.maps);
    r.rows = i32(t.rows);
    r.cols = i32(t.cols);
    r.rows_0 = i32(t.rows_0);
    r.rows_final = i32(t.rows_final);
    r.cols_0 = i32(t.cols_0);
    r.cols_final = i32(t.cols_final);
    r.row_start = i32(t.row_start);
    r.col_start = i32(t.col_start);
    r.row_inc0 = i32(t.row_inc0);
    r.row_inc = i32(t.row_inc);
    r.col_inc0 = i32(t.col_inc0);
    r.col_inc = i32(t.col_inc);
    r.row_last = i32(t.row_last);
    r.col_last = i32(t.col_last);
    r.orow_last = i32(t.orow_last);
    r.ocol_last = i32(t.ocol_last);
    r.scratchpad_bytes = i32(t.scratchpad_bytes);
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/tile_split.hpp
// ---- begin vnnx/compiler/verify.hpp
// Which operators of a model cannot be compiled, all of them at once, each with the rule it
// breaks: the one place that judges this. `vnnx compile` fails with every problem in one error,
// `vnnx info` lists the same problems.

// ---- begin vnnx/compiler/passes/fold_shapes.hpp
// FOLD_SHAPES: shape arithmetic on constants is evaluated at compile time (lowering.md §3.2,
// REMOVE_CONSTANTS c, generalised). Exported graphs compute RESHAPE targets at run time from
// SHAPE of an activation, STRIDED_SLICE / GATHER / PACK / CONCATENATION on the int32 result and
// integer ADD / SUB / MUL / DIV; shapes are static here, so each such operator whose operands are
// all known becomes a constant and disappears. Runs right after the import, before the checks, so
// `vnnx compile` and `vnnx info` judge the folded graph.
//
// Only INT32 / INT64 tensors without quantization are folded: quantized arithmetic on constants
// is the LUT pass's business, not shape arithmetic.


namespace vnnx::compiler::passes {

namespace fold_detail {

using B = builtin_operator;
using ints = std::vector<std::int64_t>;

inline bool is_shape_tensor(const tensor& t) {
    return (t.type == tensor_type::INT32 || t.type == tensor_type::INT64) && t.quant.empty();
}

inline std::int64_t product(const std::vector<std::int32_t>& s, std::size_t from, std::size_t to) {
    std::int64_t n = 1;
    for (std::size_t i = from; i < to && i < s.size(); ++i) n *= s[i];
    return n;
}

/// Stores `v` as the constant data of `t` in t's own type.
inline void set_values(tensor& t, const ints& v) {
    std::vector<std::byte> bytes;
    if (t.type == tensor_type::INT32) {
        bytes.resize(v.size() * 4);
        for (std::size_t i = 0; i < v.size(); ++i) {
            const auto x = static_cast<std::int32_t>(v[i]);
            std::memcpy(bytes.data() + 4 * i, &x, 4);
        }
    } else {
        bytes.resize(v.size() * 8);
        if (!v.empty()) std::memcpy(bytes.data(), v.data(), bytes.size());
    }
    t.data = std::move(bytes);
}

/// Elements of a strided window of `x` (TFLite order): start + k*stride per axis, k < count.
inline ints gather_window(const ints& x, const std::vector<std::int32_t>& shape, const ops::movement::canonical_slice& s) {
    const std::size_t r = shape.size();
    ints out;
    std::int64_t n = 1;
    for (auto c : s.count) n *= c;
    if (n <= 0) return out;
    std::vector<std::int64_t> k(r, 0);
    for (std::int64_t e = 0; e < n; ++e) {
        std::int64_t at = 0;
        for (std::size_t i = 0; i < r; ++i) at = at * shape[i] + s.start[i] + k[i] * s.stride[i];
        out.push_back(x.at(static_cast<std::size_t>(at)));
        for (std::size_t i = r; i-- > 0;) {
            if (++k[i] < s.count[i]) break;
            k[i] = 0;
        }
    }
    return out;
}

/// Values of TFLite integer arithmetic on two operands of equal size or one scalar.
inline std::optional<ints> arithmetic(B code, const ints& a, const ints& b) {
    if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
    const std::size_t n = std::max(a.size(), b.size());
    ints out(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::int64_t x = a[a.size() == 1 ? 0 : i], y = b[b.size() == 1 ? 0 : i];
        switch (code) {
            case B::ADD: out[i] = x + y; break;
            case B::SUB: out[i] = x - y; break;
            case B::MUL: out[i] = x * y; break;
            case B::MAXIMUM: out[i] = std::max(x, y); break;
            case B::MINIMUM: out[i] = std::min(x, y); break;
            case B::DIV:  // TFLite's integer DIV truncates
                if (y == 0) return std::nullopt;
                out[i] = x / y;
                break;
            case B::FLOOR_DIV:
                if (y == 0) return std::nullopt;
                out[i] = x / y - ((x % y != 0 && ((x < 0) != (y < 0))) ? 1 : 0);
                break;
            default: return std::nullopt;
        }
    }
    return out;
}

/// The values of a constant int32/int64 tensor whose data holds exactly its shape's elements.
inline std::optional<ints> const_ints(const graph& g, std::int32_t t) {
    auto v = ops::movement::const_ints(g, t);
    if (v && static_cast<std::int64_t>(v->size()) != g.t(t).element_count()) return std::nullopt;
    return v;
}

/// The output values of `o`, when it is shape arithmetic whose operands are all known.
inline std::optional<ints> evaluate(const graph& g, const op& o) {
    if (o.kind != op_type::builtin || o.outputs.size() != 1 || o.outputs[0] < 0) return std::nullopt;
    const auto& y = g.t(o.outputs[0]);
    if (!is_shape_tensor(y)) return std::nullopt;
    auto in = [&](std::size_t i) { return ops::movement::input_at(o, i); };
    switch (o.code) {
        case B::SHAPE: {
            if (in(0) < 0) return std::nullopt;
            const auto& x = g.t(in(0));
            ints v(x.shape.begin(), x.shape.end());
            for (auto d : v)
                if (d < 0) return std::nullopt;  // a dynamic dim: nothing to fold
            return v;
        }
        case B::RESHAPE:
        case B::SQUEEZE:
        case B::EXPAND_DIMS:
        case B::CAST: return const_ints(g, in(0));
        case B::PACK:
        case B::CONCATENATION: {
            if (o.inputs.empty()) return std::nullopt;
            const auto yr = static_cast<std::int64_t>(y.rank());
            const std::int64_t axis = o.options.axis < 0 ? o.options.axis + yr : o.options.axis;
            if (axis < 0 || axis >= std::max<std::int64_t>(yr, 1)) return std::nullopt;
            // Every input is `outer` blocks of `inner_k` elements, interleaved block by block.
            const auto outer = product(y.shape, 0, static_cast<std::size_t>(axis));
            std::vector<ints> parts;
            for (auto t : o.inputs) {
                auto v = const_ints(g, t);
                if (!v) return std::nullopt;
                parts.push_back(std::move(*v));
            }
            ints out;
            for (std::int64_t b = 0; b < outer; ++b)
                for (const auto& p : parts) {
                    const auto inner = static_cast<std::int64_t>(p.size()) / std::max<std::int64_t>(outer, 1);
                    for (std::int64_t i = 0; i < inner; ++i) out.push_back(p[static_cast<std::size_t>(b * inner + i)]);
                }
            if (static_cast<std::int64_t>(out.size()) != y.element_count()) return std::nullopt;
            return out;
        }
        case B::SLICE:
        case B::STRIDED_SLICE: {
            const auto x = const_ints(g, in(0));
            if (!x) return std::nullopt;
            const auto s = ops::movement::slice_of(g, o);
            if (!s.error.empty()) return std::nullopt;
            auto out = gather_window(*x, g.t(in(0)).shape, s);
            if (static_cast<std::int64_t>(out.size()) != y.element_count()) return std::nullopt;
            return out;
        }
        case B::GATHER: {
            const auto x = const_ints(g, in(0));
            const auto idx = const_ints(g, in(1));
            if (!x || !idx || o.options.batch_dims != 0) return std::nullopt;
            const auto& xs = g.t(in(0)).shape;
            const auto r = static_cast<std::int64_t>(xs.size());
            const std::int64_t axis = o.options.axis < 0 ? o.options.axis + r : o.options.axis;
            if (axis < 0 || axis >= r) return std::nullopt;
            const auto a = static_cast<std::size_t>(axis);
            const auto outer = product(xs, 0, a), inner = product(xs, a + 1, xs.size());
            ints out;
            for (std::int64_t b = 0; b < outer; ++b)
                for (auto k : *idx) {
                    if (k < 0 || k >= xs[a]) return std::nullopt;
                    for (std::int64_t i = 0; i < inner; ++i)
                        out.push_back((*x)[static_cast<std::size_t>((b * xs[a] + k) * inner + i)]);
                }
            if (static_cast<std::int64_t>(out.size()) != y.element_count()) return std::nullopt;
            return out;
        }
        case B::ADD:
        case B::SUB:
        case B::MUL:
        case B::DIV:
        case B::FLOOR_DIV:
        case B::MAXIMUM:
        case B::MINIMUM: {
            const auto a = const_ints(g, in(0));
            const auto b = const_ints(g, in(1));
            if (!a || !b || o.options.fused != activation::NONE) return std::nullopt;
            auto out = arithmetic(o.code, *a, *b);
            if (!out || static_cast<std::int64_t>(out->size()) != y.element_count()) return std::nullopt;
            return out;
        }
        default: return std::nullopt;
    }
}

}  // namespace fold_detail

/// Folds every operator of shape arithmetic whose operands are known; returns how many. Graph
/// outputs are never folded (the model would lose an output tensor's producer).
inline std::size_t fold_shapes(graph& g) {
    std::size_t folded = 0;
    std::vector<bool> gone(g.ops.size(), false);
    for (bool again = true; again;) {
        again = false;
        for (std::size_t i = 0; i < g.ops.size(); ++i) {
            if (gone[i]) continue;
            const auto& o = g.ops[i];
            if (o.outputs.size() != 1 || o.outputs[0] < 0) continue;
            if (std::find(g.outputs.begin(), g.outputs.end(), o.outputs[0]) != g.outputs.end()) continue;
            auto v = fold_detail::evaluate(g, o);
            if (!v) continue;
            fold_detail::set_values(g.t(o.outputs[0]), *v);
            gone[i] = true;
            ++folded;
            again = true;
        }
    }
    if (folded == 0) return 0;
    std::vector<op> kept;
    for (std::size_t i = 0; i < g.ops.size(); ++i)
        if (!gone[i]) kept.push_back(std::move(g.ops[i]));
    g.ops = std::move(kept);
    return folded;
}

}  // namespace vnnx::compiler::passes
// ---- end vnnx/compiler/passes/fold_shapes.hpp

namespace vnnx::compiler {

struct problem {
    std::int32_t index = -1;  // operator index in the TFLite file
    std::string op;           // "CONV_2D", "CUSTOM:name"
    std::string reason;
};

namespace detail {
inline bool reads_or_writes_float(const graph& g, const op& o) {
    auto is_float = [&](std::int32_t t) {
        if (t < 0) return false;
        const auto ty = g.t(t).type;
        return !g.t(t).is_constant() && (ty == tensor_type::FLOAT32 || ty == tensor_type::FLOAT16);
    };
    for (auto t : o.inputs)
        if (is_float(t)) return true;
    for (auto t : o.outputs)
        if (is_float(t)) return true;
    return false;
}
inline bool is_one_of(const std::vector<std::int32_t>& v, std::int32_t t) {
    for (auto x : v)
        if (x == t) return true;
    return false;
}
}  // namespace detail

/// Problems of the imported graph (before transforms), in operator order.
inline std::vector<problem> find_problems(const graph& g) {
    using B = builtin_operator;
    std::vector<problem> out;
    for (const auto& o : g.ops) {
        problem p;
        p.index = o.source_index;
        p.op = o.code == B::CUSTOM ? "CUSTOM:" + o.custom_code : std::string(builtin_name(o.code));
        // Float at the graph boundary is removed (REMOVE_FP32_IO); float anywhere else is not integer compute.
        const bool boundary_quantize = o.code == B::QUANTIZE && !o.inputs.empty() && detail::is_one_of(g.inputs, o.inputs[0]);
        const bool boundary_dequantize =
            o.code == B::DEQUANTIZE && !o.outputs.empty() && detail::is_one_of(g.outputs, o.outputs[0]);
        if (o.code == B::CUSTOM) {
            p.reason = "custom operator '" + o.custom_code + "' is not supported";
        } else if (!boundary_quantize && !boundary_dequantize && detail::reads_or_writes_float(g, o)) {
            p.reason = "computes in floating point; only integer (int8/uint8) models are supported";
        } else if (!boundary_quantize && !boundary_dequantize) {
            p.reason = ops::check(g, o);
        }
        if (!p.reason.empty()) out.push_back(std::move(p));
    }
    return out;
}

/// The graph the checks judge: imported, shape arithmetic on constants folded.
inline graph checked_graph(const tflite::model_view& m) {
    graph g = import_graph(m);
    passes::fold_shapes(g);
    return g;
}

/// Problems of a TFLite model exactly as `vnnx compile` meets them: checked_graph(), then the
/// checks above. A model the import refuses is one problem with index -1 and the import's message.
inline std::vector<problem> find_problems(const tflite::model_view& m) {
    graph g;
    try {
        g = checked_graph(m);
    } catch (const vnnx::error& e) {
        return {problem{-1, "", e.what()}};
    }
    return find_problems(g);
}

inline std::string format_problems(const std::string& source, const std::vector<problem>& ps) {
    std::string s = source + ": " + std::to_string(ps.size()) + " operator" + (ps.size() == 1 ? "" : "s") +
                    " cannot be compiled:";
    for (const auto& p : ps)
        s += p.index < 0 ? "\n  " + p.reason : "\n  operator " + std::to_string(p.index) + " (" + p.op + "): " + p.reason;
    return s;
}

}  // namespace vnnx::compiler
// ---- end vnnx/compiler/verify.hpp

namespace vnnx {

struct compile_options {
    format::preset preset = format::preset::V1000;
    format::compression compression = format::compression::ncomp;
    /// Computes LUT tables for chains of element-wise operators; empty: compiler/lut_tables.hpp.
    compiler::passes::lut_evaluator lut;
    /// Test vectors to embed (channels-first bytes per graph input / output); empty: zeros.
    std::vector<std::vector<std::byte>> test_inputs, test_outputs;
    /// Progress and pass timings, one line each (the CLI's -v); may be empty.
    std::function<void(const std::string&)> log;
};

struct node_report {
    std::size_t index = 0;
    std::string type;    // node type name
    std::string ops;     // the TFLite operators it came from
    std::vector<std::string> layers;
    std::vector<std::int32_t> input_shape, output_shape;  // channels-first
    std::int64_t weight_bytes = 0;
    std::int64_t macs = 0;
    std::int32_t scratchpad_bytes = 0;
    std::int32_t tiles = 1;
    std::string output_name;                // buffer name of the node's final tensor
    std::vector<std::string> tensor_names;  // every tensor record's buffer name, in file order (node's, then layers')
};

struct compile_result {
    std::vector<std::byte> bytes;
    std::vector<node_report> nodes;
    std::uint32_t allocate_bytes = 0;
    std::int64_t macs = 0;
};

namespace compiler {

/// The graph after the transforms of lowering.md §3, ready to split.
inline graph transform(graph g, const passes::lut_evaluator& lut) {
    passes::sort_dfs(g);
    passes::remove_float_io(g);
    passes::narrow_indices(g);
    passes::explicit_pad(g);
    passes::strided_depthwise(g);
    passes::fully_connected_to_conv(g);
    passes::pool_as_mean(g);
    if (lut) passes::lut_pass(g, lut);
    passes::fuse_activation(g);
    passes::remove_nops(g);
    passes::sort_dfs(g);
    passes::drop_unused_tensors(g);
    return g;
}

}  // namespace compiler

inline compile_result compile(std::span<const std::byte> tflite_bytes, const compile_options& options,
                              const std::string& source = "model.tflite") {
    using clock = std::chrono::steady_clock;
    auto t0 = clock::now();
    auto lap = [&](const char* what) {
        if (!options.log) return;
        const auto t1 = clock::now();
        options.log(fmt::format("{}: {:.1f} ms", what, std::chrono::duration<double, std::milli>(t1 - t0).count()));
        t0 = t1;
    };
    if (options.compression != format::compression::ncomp)
        fail(error_kind::unsupported, source + ": only ncomp (uncompressed weights) is supported");
    const auto model = tflite::model_view::parse(tflite_bytes, source);
    compiler::graph g = compiler::checked_graph(model);
    lap("read");
    if (options.log)
        options.log(std::to_string(g.ops.size()) + " operators, " + std::to_string(g.tensors.size()) + " tensors");
    if (auto problems = compiler::find_problems(g); !problems.empty())
        fail(error_kind::unsupported, compiler::format_problems(source, problems));
    // Without an evaluator of its own the LUT pass runs the reference kernels (lut_tables.hpp).
    g = compiler::transform(std::move(g), options.lut ? options.lut : compiler::passes::lut_evaluator(compiler::default_lut_evaluator()));
    lap("transforms");

    compiler::program prog;
    prog.preset = options.preset;
    prog.compression = options.compression;
    const auto& preset = compiler::info(options.preset);
    auto splits = compiler::split_graph(g);
    for (std::size_t k = 0; k < splits.size(); ++k) {
        auto tile = compiler::tile_split(g, splits[k], preset);
        if (!tile.fits) {
            if (compiler::cut_split(g, splits, k)) {
                --k;  // retry the shortened split
                continue;
            }
            fail(error_kind::unsupported, source + ": " + compiler::describe(g.ops[static_cast<std::size_t>(splits[k][0])]) +
                                              ": layer cannot fit in the scratchpad: " + tile.reason);
        }
        auto node = compiler::build_node(g, prog, preset, splits[k], {static_cast<std::int32_t>(tile.maps), static_cast<std::int32_t>(tile.imaps)});
        compiler::apply_tile(node, tile);
        ops::finish_conv_node(g, prog, node, tile);
        prog.nodes.push_back(std::move(node));
    }
    ops::finish_conv_graph(g, prog);
    if (options.log) options.log(std::to_string(g.ops.size()) + " operators after the transforms, " +
                                 std::to_string(prog.nodes.size()) + " nodes");
    lap("lowering");

    // Every model input and output must have a VNNX element type (the file's reader insists).
    for (const auto* list : {&g.inputs, &g.outputs})
        for (std::size_t i = 0; i < list->size(); ++i) {
            const auto& t = g.t((*list)[i]);
            if (ops::calc_type_of(t.type) == static_cast<std::int32_t>(format::calc_type::CALC_TYPE_UNKNOWN))
                fail(error_kind::unsupported, source + ": " + (list == &g.inputs ? "input " : "output ") + std::to_string(i) +
                                                  " '" + t.name + "': type " + std::string(tflite::type_name(t.type)) +
                                                  " has no VNNX element type");
        }
    for (std::size_t i = 0; i < g.inputs.size(); ++i) {
        compiler::io_desc io;
        io.name = g.t(g.inputs[i]).name;
        if (i < options.test_inputs.size()) io.test_data = options.test_inputs[i];
        prog.inputs.push_back(std::move(io));
    }
    for (std::size_t i = 0; i < g.outputs.size(); ++i) {
        compiler::io_desc io;
        io.name = g.t(g.outputs[i]).name;
        if (i < options.test_outputs.size()) io.test_data = options.test_outputs[i];
        prog.outputs.push_back(std::move(io));
    }
    compile_result result;
    for (std::size_t k = 0; k < prog.nodes.size(); ++k) {
        const auto& nd = prog.nodes[k];
        node_report r;
        r.index = k;
        r.type = std::string(format::operator_name(nd.rec.type));
        r.ops = nd.label;
        for (const auto& l : nd.layers) r.layers.emplace_back(format::operator_name(l.rec.type));
        if (!nd.tensors.empty()) r.input_shape = nd.tensors.front().shape;
        for (const auto& t : nd.tensors) r.tensor_names.push_back(t.name);
        for (const auto& l : nd.layers)
            for (const auto& t : l.tensors) r.tensor_names.push_back(t.name);
        r.output_shape = nd.layers.empty() ? nd.tensors.back().shape : nd.layers.back().tensors.back().shape;
        if (!r.tensor_names.empty()) r.output_name = r.tensor_names.back();
        r.weight_bytes = nd.weight_bytes;
        r.macs = nd.macs;
        r.scratchpad_bytes = nd.rec.scratchpad_bytes;
        result.macs += nd.macs;
        result.nodes.push_back(std::move(r));
    }
    // Checked here, where the file name is known (emit's own check cannot name it).
    if (prog.nodes.empty()) fail(error_kind::unsupported, source + ": the model has no operator left to compile");
    auto emitted = compiler::emit(prog, [&] { lap("layout"); });
    // The simulator refuses a memory image above this limit; do not write a file it would refuse.
    check_limit(emitted.allocate_bytes, active_limits().max_activation_bytes, source + ": memory image (allocate_bytes)",
                "VNNX_MAX_ACTIVATION_BYTES");
    lap("emit");
    result.bytes = std::move(emitted.bytes);
    result.allocate_bytes = emitted.allocate_bytes;
    return result;
}

}  // namespace vnnx
// ---- end vnnx/compiler/compile.hpp
// ---- begin vnnx/sim/machine.hpp
// The simulator: runs the bytes of a VNNX file node by node, layer by layer, in the model's
// own memory image (allocate_bytes long, the file copied to its start), exactly where the
// file's tensor records place every activation.

// ---- begin vnnx/sim/registry.hpp
// Folds every node_exec / layer_exec specialisation into dispatch tables indexed by the
// VNNX type code, at compile time: the simulator's dispatch is one array access.

// ---- begin vnnx/sim/layers/all.hpp
// Every layer executor; sim/registry.hpp builds its table from these.
// ---- begin vnnx/sim/layers/lut.hpp
// LUT (303): out = table[c][byte(in)], table c chosen by the element's channel when the layer
// holds one table per channel (lut_count > 1), else table 0. 1-byte outputs store 256 bytes
// per table; 4-byte (INT32) outputs store four byte planes of 256 bytes.


namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(format::vnnx_operator::LUT)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.type != 0 && in.type != 1) c.reject("input must be 8-bit");
        c.require_same_count(in, out);
        const auto opt = c.rec.options.get<format::layer_options::ActivationOptions>();
        const std::int32_t n = opt.lut_count;
        if (n < 1 || n > 4) c.reject("lut_count " + std::to_string(n) + " is outside 1..4");
        const bool wide = out.elem == 4;
        if (!wide && out.elem != 1) c.reject("output must be 8-bit or 32-bit");
        const std::uint64_t per_table = wide ? 1024 : 256;
        const auto raw = c.bytes(opt.vci_int8, per_table * static_cast<std::uint64_t>(n), "vci_int8 tables");
        std::vector<std::array<std::int32_t, 256>> tables(static_cast<std::size_t>(n));
        for (std::size_t t = 0; t < tables.size(); ++t)
            for (std::size_t r = 0; r < 256; ++r) {
                const std::byte* p = raw.data() + t * per_table;
                if (wide) {
                    std::uint32_t v = 0;
                    for (std::size_t plane = 0; plane < 4; ++plane)
                        v |= static_cast<std::uint32_t>(p[plane * 256 + r]) << (8 * plane);
                    tables[t][r] = static_cast<std::int32_t>(v);
                } else {
                    const auto b = static_cast<std::uint8_t>(p[r]);
                    tables[t][r] = out.type == 1 ? static_cast<std::int8_t>(b) : b;
                }
            }
        const std::uint64_t plane = static_cast<std::uint64_t>(in.rows()) * static_cast<std::uint64_t>(in.cols());
        const std::uint64_t channels = static_cast<std::uint64_t>(in.channels());
        if (n > 1 && channels != static_cast<std::uint64_t>(n))
            c.reject(std::to_string(n) + " tables for " + std::to_string(channels) + " channels");
        const std::uint8_t* src = in.u8();
        if (n == 1 && !wide) {
            std::uint8_t* dst = out.u8();
            std::array<std::uint8_t, 256> t8{};
            for (std::size_t r = 0; r < 256; ++r) t8[r] = static_cast<std::uint8_t>(tables[0][r]);
            for (std::uint64_t i = 0; i < in.count; ++i) dst[i] = t8[src[i]];
            return;
        }
        for (std::uint64_t i = 0; i < in.count; ++i) {
            const std::size_t t = n == 1 ? 0 : static_cast<std::size_t>((i / plane) % channels);
            out.set(i, tables[t][src[i]]);
        }
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/lut.hpp
// ---- begin vnnx/sim/layers/activations.hpp
// Single-input layers reached when no lookup table formed (lowering.md §7.6.4–§7.6.7):
// RELU (19), RELU_N1_TO_1 (20), RELU6 (21), RELU_0_TO_1 (152): requantize with the stored
// output multiplier, clamp to [activation_min, activation_max]; LEAKY_RELU (98): the output
// multiplier for x >= z_in, leakyrelu.alpha_* below; ABS (101): |x − z_in| requantized;
// DEQUANTIZE (6): an 8-bit requantization (activation_min = activation_max = 0 marks a pure
// sign-bit flip, which the same arithmetic reproduces).

// ---- begin vnnx/sim/layers/eltwise.hpp
// ELTWISE (301), union eltwise8: two activation inputs (lowering.md §7.3.1, §8.4). The
// arithmetic is TFLite's integer recipe driven only by the record: offsets, left_shift, the
// multiplier/shift arrays and the activation bounds. Operands broadcast per channels-first
// dim (right-aligned; a dim of 1 repeats), so x − mean with a [.., 1] mean works.


namespace vnnx::sim {

namespace eltwise_detail {

struct qm {
    std::int32_t multiplier = 0;
    int shift = 0;
};

/// One (multiplier, shift) pair from two one-element arrays of the record.
inline qm read_qm(const layer_context& c, format::obj_off_t m, format::obj_off_t s, const std::string& what) {
    const auto mv = c.int32s(m, 1, what + "_multiplier");
    const auto sv = c.int32s(s, 1, what + "_shift");
    if (sv[0] < -31 || sv[0] > 30) c.reject(what + "_shift " + std::to_string(sv[0]) + " is outside -31..30");
    if (mv[0] < 0) c.reject(what + "_multiplier " + std::to_string(mv[0]) + " is negative");
    return {mv[0], sv[0]};
}

/// TFLite MultiplyByQuantizedMultiplier with a record pair.
inline std::int32_t scale(std::int32_t x, const qm& m) {
    return quant::multiply_by_quantized_multiplier(x, m.multiplier, m.shift);
}

/// Per-element source offsets of operand `a` broadcast to `out` (right-aligned dims).
struct broadcast_walk {
    std::vector<std::int64_t> out_dims, a_stride, b_stride;

    static std::vector<std::int64_t> strides_for(const std::vector<std::int32_t>& s, const std::vector<std::int64_t>& out) {
        std::vector<std::int64_t> dims(out.size(), 1);
        for (std::size_t i = 0; i < s.size(); ++i) dims[out.size() - s.size() + i] = s[i];
        std::vector<std::int64_t> st(out.size(), 0);
        std::int64_t acc = 1;
        for (std::size_t d = out.size(); d-- > 0;) {
            st[d] = dims[d] == 1 ? 0 : acc;
            acc *= dims[d];
        }
        return st;
    }

    /// Checks that a and b broadcast onto out; rejects with the dim that does not.
    broadcast_walk(const layer_context& c, const tensor_ref& a, const tensor_ref& b, const tensor_ref& out) {
        const std::size_t r = out.rank();
        if (a.rank() > r || b.rank() > r) c.reject("an input has a higher rank than the output");
        out_dims.assign(out.shape.begin(), out.shape.end());
        auto check = [&](const tensor_ref& t, const char* which) {
            for (std::size_t i = 0; i < t.rank(); ++i) {
                const auto d = t.shape[i];
                const auto o = out.shape[r - t.rank() + i];
                if (d != 1 && d != o)
                    c.reject(std::string(which) + " dim " + std::to_string(i) + " is " + std::to_string(d) +
                             ", it must be 1 or the output's " + std::to_string(o));
            }
        };
        check(a, "input 0");
        check(b, "input 1");
        a_stride = strides_for(a.shape, out_dims);
        b_stride = strides_for(b.shape, out_dims);
    }

    /// Calls f(ia, ib, io) for every output element in order.
    template <class F>
    void for_each(std::uint64_t count, F&& f) const {
        const std::size_t r = out_dims.size();
        std::vector<std::int64_t> idx(r, 0);
        std::int64_t ia = 0, ib = 0;
        for (std::uint64_t io = 0; io < count; ++io) {
            f(static_cast<std::uint64_t>(ia), static_cast<std::uint64_t>(ib), io);
            for (std::size_t d = r; d-- > 0;) {
                ++idx[d];
                ia += a_stride[d];
                ib += b_stride[d];
                if (idx[d] < out_dims[d]) break;
                ia -= a_stride[d] * idx[d];
                ib -= b_stride[d] * idx[d];
                idx[d] = 0;
            }
        }
    }
};

// ---- TFLite's DIV recipe (GetReciprocal over gemmlowp's one_over_one_plus_x) ----------------
inline int count_leading_zeros(std::uint32_t x) { return x == 0 ? 32 : std::countl_zero(x); }

inline int count_leading_sign_bits(std::int32_t x) {
    if (x >= 0) return count_leading_zeros(static_cast<std::uint32_t>(x)) - 1;
    if (x == std::numeric_limits<std::int32_t>::min()) return 0;
    return count_leading_zeros(2 * static_cast<std::uint32_t>(-x) - 1);
}

/// x · 2^e with saturation (gemmlowp SaturatingRoundingMultiplyByPOT for e > 0).
inline std::int32_t saturating_shift_left(std::int32_t x, int e) {
    const std::int32_t threshold = (1 << (31 - e)) - 1;
    if (x > threshold) return std::numeric_limits<std::int32_t>::max();
    if (x < -threshold) return std::numeric_limits<std::int32_t>::min();
    return static_cast<std::int32_t>(static_cast<std::uint32_t>(x) << e);
}

/// gemmlowp one_over_one_plus_x_for_x_in_0_1 on raw Q0.31 / Q2.29 values.
inline std::int32_t one_over_one_plus_x(std::int32_t a_raw) {
    using quant::saturating_rounding_doubling_high_mul;
    const std::int64_t sum = static_cast<std::int64_t>(a_raw) + std::numeric_limits<std::int32_t>::max();
    const auto half_denominator = static_cast<std::int32_t>((sum + (sum >= 0 ? 1 : -1)) / 2);  // RoundingHalfSum
    constexpr std::int32_t c48_17 = 1515870810, cneg32_17 = -1010580540, one_q2 = 1 << 29;
    std::int32_t x = c48_17 + saturating_rounding_doubling_high_mul(half_denominator, cneg32_17);
    for (int i = 0; i < 3; ++i) {
        const std::int32_t hx = saturating_rounding_doubling_high_mul(half_denominator, x);
        const std::int32_t one_minus = one_q2 - hx;
        x = x + saturating_shift_left(saturating_rounding_doubling_high_mul(x, one_minus), 2);
    }
    return saturating_shift_left(x >> 1, 2);
}

inline std::int32_t reciprocal(std::int32_t x, int integer_digits, int* bits_over_unit) {
    const int headroom_plus_one = count_leading_zeros(static_cast<std::uint32_t>(x));
    *bits_over_unit = integer_digits - headroom_plus_one;
    const auto shifted_minus_one =
        static_cast<std::int32_t>((static_cast<std::uint32_t>(x) << headroom_plus_one) - (std::uint32_t{1} << 31));
    return one_over_one_plus_x(shifted_minus_one);
}

/// TFLite's quantized DIV of two zero-point-corrected values; the divisor must not be 0.
inline std::int32_t divide(std::int32_t a, std::int32_t b, const qm& out) {
    if (b < 0) {
        a = -a;
        b = -b;
    }
    int recip_shift = 0;
    const std::int32_t inv = reciprocal(b, 31, &recip_shift);
    const int headroom = count_leading_sign_bits(a);
    const std::int32_t unscaled = quant::multiply_by_quantized_multiplier_greater_than_one(a, inv, headroom);
    const int total_shift = out.shift - recip_shift - headroom;
    if (total_shift > 0) return scale(unscaled, {out.multiplier, total_shift});
    // A tiny dividend (large headroom) asks for a right shift of 32 or more, undefined in the
    // 32-bit recipe; the exact rounded value is 0 since |high_mul| < 2^31.
    if (total_shift < -31) return 0;
    return quant::multiply_by_quantized_multiplier_smaller_than_one_exp(unscaled, out.multiplier, total_shift);
}

/// ADD and MUL of equal-shape 8-bit operands whose record values keep every intermediate in
/// int32 run through the vector kernels (bit-identical to the element loop below, which handles
/// broadcasts, the other operators and out-of-range records). Returns false when it does not apply.
inline bool fast_path(layer_context& c, const tensor_ref& a, const tensor_ref& b, const tensor_ref& out,
                      const format::layer_options::eltwise8& u, std::int32_t lo, std::int32_t hi) {
    if ((u.type != 0 && u.type != 1) || a.type != b.type || a.elem != 1 || out.elem != 1 || a.count != out.count ||
        b.count != out.count || a.shape != out.shape || b.shape != out.shape)
        return false;
    const std::size_t n = static_cast<std::size_t>(out.count);
    // Vectors read 16 elements before writing them: the output may be an input, not overlap one.
    auto apart = [&](const tensor_ref& t) { return t.data == out.data || t.data + n <= out.data || out.data + n <= t.data; };
    if (!apart(a) || !apart(b)) return false;
    const bool in_signed = a.type == 1, out_signed = out.type == 1;
    const std::span<const std::uint8_t> sa(a.u8(), n), sb(b.u8(), n);
    const std::span<std::uint8_t> so(out.u8(), n);
    if (u.type == 1) {
        kernels::mul_params p;
        p.input1_offset = -c.rec.input_offset;
        p.input2_offset = -u.input2_offset;
        const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        p.output_multiplier = mo.multiplier;
        p.output_shift = mo.shift;
        p.output_offset = c.rec.output_offset;
        p.act_min = lo;
        p.act_max = hi;
        p.input_signed = in_signed;
        if (!kernels::mul_params_in_range(p, out_signed)) return false;
        kernels::mul(c.ex.isa, p, sa, sb, so, c.ex.pool, c.where);
        return true;
    }
    kernels::add_params p;
    p.input1_offset = -c.rec.input_offset;
    p.input2_offset = -u.input2_offset;
    p.left_shift = u.left_shift;
    const qm m1 = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
    const qm m2 = read_qm(c, u.input2_multiplier, u.input2_shift, "input2");
    const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
    p.input1_multiplier = m1.multiplier;
    p.input1_shift = m1.shift;
    p.input2_multiplier = m2.multiplier;
    p.input2_shift = m2.shift;
    p.output_multiplier = mo.multiplier;
    p.output_shift = mo.shift;
    p.output_offset = c.rec.output_offset;
    p.act_min = lo;
    p.act_max = hi;
    p.input_signed = in_signed;
    p.output_signed = out_signed;
    const int ob_lo = out_signed ? -128 : 0, ob_hi = out_signed ? 127 : 255;
    auto in = [](std::int64_t v, std::int64_t l, std::int64_t h) { return v >= l && v <= h; };
    if (!in(p.input1_offset, -255, 255) || !in(p.input2_offset, -255, 255) || !in(p.left_shift, 0, 20) ||
        !in(p.input1_shift, -31, 0) || !in(p.input2_shift, -31, 0) || !in(p.output_shift, -31, 0) ||
        !in(p.output_offset, ob_lo, ob_hi) || !in(lo, ob_lo, ob_hi) || !in(hi, ob_lo, ob_hi))
        return false;
    kernels::add(c.ex.isa, p, sa, sb, so, c.ex.pool, c.where);
    return true;
}

}  // namespace eltwise_detail

template <>
struct layer_exec<static_cast<std::int32_t>(format::vnnx_operator::ELTWISE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        using namespace eltwise_detail;
        if (c.tensors.size() != 3) c.reject("expects two input tensors and one output tensor");
        c.require_8bit();
        const tensor_ref& a = c.tensors[0];
        const tensor_ref& b = c.tensors[1];
        const tensor_ref& out = c.tensors[2];
        const auto u = c.rec.options.get<format::layer_options::eltwise8>();
        const broadcast_walk walk(c, a, b, out);
        const std::int32_t za = c.rec.input_offset, zb = u.input2_offset, zo = c.rec.output_offset;
        const std::int32_t lo = std::max(c.rec.activation_min, out.type_min());
        const std::int32_t hi = std::min(c.rec.activation_max, out.type_max());
        if (lo > hi) c.reject("activation_min " + std::to_string(c.rec.activation_min) + " exceeds activation_max " +
                              std::to_string(c.rec.activation_max));
        auto emit = [&](std::uint64_t io, std::int32_t v) { out.set(io, std::clamp(v, lo, hi)); };
        const int type = u.type;
        if (fast_path(c, a, b, out, u, lo, hi)) return;
        // 64-bit, saturated to int32: offsets and multipliers come from the file, and hostile
        // ones must not overflow (valid records never reach the saturation). DIV negates its
        // operands, so they stay off INT32_MIN.
        auto sat = [](std::int64_t v) {
            return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, INT32_MIN, INT32_MAX));
        };
        auto sat_sym = [](std::int64_t v) {
            return static_cast<std::int32_t>(std::clamp<std::int64_t>(v, -INT32_MAX, INT32_MAX));
        };
        switch (type) {
            case 0:    // ADD
            case 2:    // SUB
            case 12: { // SQUARED_DIFFERENCE
                const int ls = u.left_shift;
                if (ls < 0 || ls > 20) c.reject("left_shift " + std::to_string(ls) + " is outside 0..20");
                const qm m1 = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
                const qm m2 = read_qm(c, u.input2_multiplier, u.input2_shift, "input2");
                const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
                walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                    const std::int32_t x = scale(sat((std::int64_t{a.get(ia)} - za) * (std::int64_t{1} << ls)), m1);
                    const std::int32_t y = scale(sat((std::int64_t{b.get(ib)} - zb) * (std::int64_t{1} << ls)), m2);
                    const std::int64_t d = sat(std::int64_t{x} - y);
                    const std::int64_t raw = type == 0 ? std::int64_t{x} + y : type == 2 ? d : d * d;
                    emit(io, sat(std::int64_t{scale(sat(raw), mo)} + zo));
                });
                return;
            }
            case 1:    // MUL
            case 3: {  // DIV
                const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
                walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                    const std::int32_t x = sat_sym(std::int64_t{a.get(ia)} - za), y = sat_sym(std::int64_t{b.get(ib)} - zb);
                    if (type == 1) {
                        emit(io, sat(std::int64_t{scale(sat(std::int64_t{x} * y), mo)} + zo));
                    } else {
                        if (y == 0) c.reject("division by zero at output element " + std::to_string(io));
                        emit(io, sat(std::int64_t{divide(x, y, mo)} + zo));
                    }
                });
                return;
            }
            case 4: case 5: case 6: case 7: case 8: case 9: {  // comparisons
                const int ls = u.left_shift;
                if (ls < 0 || ls > 20) c.reject("left_shift " + std::to_string(ls) + " is outside 0..20");
                const qm m1 = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
                const qm m2 = read_qm(c, u.input2_multiplier, u.input2_shift, "input2");
                walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                    const std::int32_t x = scale(sat((std::int64_t{a.get(ia)} - za) * (std::int64_t{1} << ls)), m1);
                    const std::int32_t y = scale(sat((std::int64_t{b.get(ib)} - zb) * (std::int64_t{1} << ls)), m2);
                    bool r = false;
                    switch (type) {
                        case 4: r = x > y; break;
                        case 5: r = x >= y; break;
                        case 6: r = x < y; break;
                        case 7: r = x <= y; break;
                        case 8: r = x == y; break;
                        default: r = x != y; break;
                    }
                    out.set(io, r ? 1 : 0);
                });
                return;
            }
            case 10:    // MINIMUM
            case 11: {  // MAXIMUM: the raw codes, as TFLite compares them
                walk.for_each(out.count, [&](std::uint64_t ia, std::uint64_t ib, std::uint64_t io) {
                    const std::int32_t x = a.get(ia), y = b.get(ib);
                    out.set(io, type == 11 ? std::max(x, y) : std::min(x, y));
                });
                return;
            }
            default: c.reject("eltwise8.type " + std::to_string(type) + " is not one of 0..12");
        }
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/eltwise.hpp

namespace vnnx::sim {

namespace activation_detail {

inline void unary_tensors(const layer_context& c) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    c.require_same_count(c.tensors[0], c.tensors[1]);
}

/// Clamp bounds from the record, limited to the output type.
inline std::pair<std::int32_t, std::int32_t> bounds(const layer_context& c, const tensor_ref& out) {
    const std::int32_t lo = std::max(c.rec.activation_min, out.type_min());
    const std::int32_t hi = std::min(c.rec.activation_max, out.type_max());
    if (lo > hi)
        c.reject("activation_min " + std::to_string(c.rec.activation_min) + " exceeds activation_max " +
                 std::to_string(c.rec.activation_max));
    return {lo, hi};
}

}  // namespace activation_detail

template <std::int32_t Type>
struct relu_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::unary_tensors(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        const auto [lo, hi] = activation_detail::bounds(c, out);
        const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset;
        for (std::uint64_t i = 0; i < in.count; ++i)
            out.set(i, std::clamp(zo + eltwise_detail::scale(in.get(i) - zi, m), lo, hi));
    }
};
template <> struct layer_exec<19> : relu_exec<19> {};    // RELU
template <> struct layer_exec<20> : relu_exec<20> {};    // RELU_N1_TO_1
template <> struct layer_exec<21> : relu_exec<21> {};    // RELU6
template <> struct layer_exec<152> : relu_exec<152> {};  // RELU_0_TO_1

template <>
struct layer_exec<98> {  // LEAKY_RELU
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::unary_tensors(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto u = c.rec.options.get<format::layer_options::leakyrelu>();
        const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        const auto ma = eltwise_detail::read_qm(c, u.alpha_multiplier, u.alpha_shift, "alpha");
        const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset;
        for (std::uint64_t i = 0; i < in.count; ++i) {
            const std::int32_t x = in.get(i) - zi;
            out.set(i, std::clamp(zo + eltwise_detail::scale(x, x >= 0 ? m : ma), out.type_min(), out.type_max()));
        }
    }
};

template <>
struct layer_exec<101> {  // ABS
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::unary_tensors(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        const auto [lo, hi] = activation_detail::bounds(c, out);
        const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset;
        for (std::uint64_t i = 0; i < in.count; ++i)
            out.set(i, std::clamp(zo + eltwise_detail::scale(std::abs(in.get(i) - zi), m), lo, hi));
    }
};

template <>
struct layer_exec<6> {  // DEQUANTIZE used as an 8-bit requantization
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        activation_detail::unary_tensors(c);
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto m = eltwise_detail::read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
        const std::int32_t zi = c.rec.input_offset, zo = c.rec.output_offset;
        for (std::uint64_t i = 0; i < in.count; ++i)
            out.set(i, std::clamp(zo + eltwise_detail::scale(in.get(i) - zi, m), out.type_min(), out.type_max()));
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/activations.hpp
// ---- begin vnnx/sim/layers/broadcast.hpp
// Element-wise layers with a constant operand stored in the file (lowering.md §7.3.2–7.3.4,
// §8.5): ADD (0), SUB (41), SQUARED_DIFFERENCE (99) and MUL (18) with union broadcast8,
// MAXIMUM (55) and MINIMUM (57) with MinMaxOptions. The constant is filter_shape_dims
// [k, c, h, w] channels-first bytes; each of its dims is 1 (repeated) or the activation's.


namespace vnnx::sim {

namespace eltwise_detail {

/// The constant of a broadcast layer, read and indexed against the activation.
struct filter_operand {
    std::array<std::int64_t, 4> stride{};  // per [k, c, h, w] of the activation's last 4 dims; 0 = repeated
    std::array<std::int64_t, 4> act_dims{1, 1, 1, 1};
    std::vector<std::int32_t> values;

    filter_operand(const layer_context& c, const tensor_ref& x, const std::array<std::int32_t, 4>& dims,
                   format::obj_off_t data, bool is_signed) {
        for (std::size_t i = 0; i < 4; ++i) {
            act_dims[i] = x.dim_from_end(4 - i);
            if (i == 0 && x.rank() < 4) act_dims[0] = 1;
        }
        std::uint64_t count = 1;
        for (std::size_t i = 0; i < 4; ++i) {
            if (dims[i] < 1) c.reject("filter_shape_dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]));
            if (dims[i] != 1 && dims[i] != act_dims[i])
                c.reject("filter_shape_dims[" + std::to_string(i) + "] is " + std::to_string(dims[i]) +
                         ", it must be 1 or the activation's " + std::to_string(act_dims[i]));
            count *= static_cast<std::uint64_t>(dims[i]);
        }
        std::int64_t acc = 1;
        for (std::size_t d = 4; d-- > 0;) {
            stride[d] = dims[d] == 1 ? 0 : acc;
            acc *= dims[d];
        }
        const auto raw = c.bytes(data, count, "filter_data");
        values.resize(raw.size());
        for (std::size_t i = 0; i < raw.size(); ++i) {
            const auto b = static_cast<std::uint8_t>(raw[i]);
            values[i] = is_signed ? static_cast<std::int8_t>(b) : b;
        }
    }

    /// Calls f(i, filter value) for every activation element i (dense channels-first).
    template <class F>
    void for_each(std::uint64_t count, F&& f) const {
        const std::int64_t inner = act_dims[0] * act_dims[1] * act_dims[2] * act_dims[3];
        std::uint64_t i = 0;
        while (i < count) {
            for (std::int64_t k = 0; k < act_dims[0]; ++k)
                for (std::int64_t ch = 0; ch < act_dims[1]; ++ch)
                    for (std::int64_t r = 0; r < act_dims[2]; ++r)
                        for (std::int64_t col = 0; col < act_dims[3]; ++col, ++i)
                            f(i, values[static_cast<std::size_t>(k * stride[0] + ch * stride[1] + r * stride[2] +
                                                                 col * stride[3])]);
            if (inner == 0) break;
        }
    }
};

template <class D>
std::array<std::int32_t, 4> dims_of(const D& d) {
    return {d[0], d[1], d[2], d[3]};
}

/// ADD / SUB / SQUARED_DIFFERENCE / MUL with a constant, union broadcast8.
inline void run_broadcast(layer_context& c, int kind) {  // 0 add, 41 sub, 99 squared difference, 18 mul
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& x = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    c.require_same_count(x, out);
    const auto u = c.rec.options.get<format::layer_options::broadcast8>();
    const filter_operand f(c, x, dims_of(u.filter_shape_dims), u.filter_data, x.is_signed());
    const std::int32_t zi = c.rec.input_offset, zf = u.filter_offset, zo = c.rec.output_offset;
    const std::int32_t lo = std::max(c.rec.activation_min, out.type_min());
    const std::int32_t hi = std::min(c.rec.activation_max, out.type_max());
    if (lo > hi) c.reject("activation_min exceeds activation_max");
    const qm mo = read_qm(c, c.rec.output_multiplier, c.rec.output_shift, "output");
    if (kind == 18) {
        f.for_each(out.count, [&](std::uint64_t i, std::int32_t fv) {
            out.set(i, std::clamp(scale((x.get(i) - zi) * (fv - zf), mo) + zo, lo, hi));
        });
        return;
    }
    const int ls = u.left_shift;
    if (ls < 0 || ls > 20) c.reject("left_shift " + std::to_string(ls) + " is outside 0..20");
    const qm mi = read_qm(c, c.rec.input_multiplier, c.rec.input_shift, "input");
    const qm mf = read_qm(c, u.filter_multiplier, u.filter_shift, "filter");
    const bool sub = kind == 41 && u.sub != 0;
    if (kind == 41 && u.sub == 0) c.reject("a SUB layer needs broadcast8.sub = 1");
    f.for_each(out.count, [&](std::uint64_t i, std::int32_t fv) {
        const std::int32_t xs = scale((x.get(i) - zi) * (1 << ls), mi);
        const std::int32_t fs = scale((fv - zf) * (1 << ls), mf);
        std::int32_t raw = 0;
        if (kind == 99) raw = (xs - fs) * (xs - fs);
        else if (sub) raw = u.swap_inputs ? fs - xs : xs - fs;
        else raw = xs + fs;
        out.set(i, std::clamp(scale(raw, mo) + zo, lo, hi));
    });
}

}  // namespace eltwise_detail

template <>
struct layer_exec<0> {  // ADD with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 0); }
};
template <>
struct layer_exec<41> {  // SUB with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 41); }
};
template <>
struct layer_exec<99> {  // SQUARED_DIFFERENCE with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 99); }
};
template <>
struct layer_exec<18> {  // MUL with a constant
    static constexpr bool defined = true;
    static void run(layer_context& c) { eltwise_detail::run_broadcast(c, 18); }
};

/// MAXIMUM (55) / MINIMUM (57) with a constant: raw codes compared, as TFLite does.
template <std::int32_t Type>
struct min_max_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        c.require_8bit();
        const tensor_ref& x = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        c.require_same_count(x, out);
        const auto u = c.rec.options.get<format::layer_options::MinMaxOptions>();
        if (u.max != (Type == 55 ? 1 : 0)) c.reject("MinMaxOptions.max " + std::to_string(u.max) + " contradicts the layer type");
        const eltwise_detail::filter_operand f(c, x, eltwise_detail::dims_of(u.filter_shape_dims), u.filter_data,
                                               x.is_signed());
        f.for_each(out.count, [&](std::uint64_t i, std::int32_t fv) {
            const std::int32_t v = x.get(i);
            out.set(i, Type == 55 ? std::max(v, fv) : std::min(v, fv));
        });
    }
};
template <> struct layer_exec<55> : min_max_exec<55> {};
template <> struct layer_exec<57> : min_max_exec<57> {};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/broadcast.hpp
// ---- begin vnnx/sim/layers/movement.hpp
// Data-movement layers, computed from their records only (lowering.md §7.4, §7.5, §7.7):
//   RESHAPE (22)        the output holds the input's elements in TFLite order; both tensors'
//                       channels-first layouts come from their records (`mode` and `nop` are
//                       informational: any reshape is performed).
//   SLICE (65), STRIDED_SLICE (45)  SliceOptions begin/end/stride on the last four
//                       channels-first axes (end exclusive, negative strides allowed); the
//                       sliced box is written to the output in TFLite order, so an output of
//                       lower rank (shrink_axis) receives the same elements.
//   TRANSPOSE (39)      output axis j of the last three channels-first axes takes input axis
//                       permutation[j]; leading axes stay in place.
//   PAD (34)            pads [c,h,w before, c,h,w after] on the last three axes, filled with
//                       PadOptions.value.
//   GATHER (36)         out[outer][k][inner] = in[outer][coord[k]][inner] on the
//                       channels-first axis GatherOptions.axis, written in TFLite order.
//   CAST (53)           each element converted to the output type (two's complement wrap).
//   UNPACK (88)         output k = the input with TFLite axis `axis` fixed at k.
//   MIRROR_PAD (100)    pads as PAD, each padded element mirrored from the input: without the
//                       edge element (MirrorPadOptions.mode 1, REFLECT) or with it (0, SYMMETRIC).

// ---- begin vnnx/sim/layers/movement_common.hpp
// Strided views for the data-movement executors. VNNX tensors are dense channels-first
// (lowering.md §2.1); a TFLite reshape, squeeze, unpack or rank-changing slice is a
// reinterpretation in TFLite axis order, so those executors read the input through a view in
// TFLite order and write the output through another, element by element in row-major order.


namespace vnnx::sim::movement {

/// Elements base[Σ idx_i·strides_i] for idx in the box `dims`, visited in row-major order.
struct view {
    std::byte* base = nullptr;
    std::vector<std::int64_t> dims, strides;  // strides in elements
    std::uint32_t elem = 1;

    [[nodiscard]] std::int64_t count() const noexcept {
        std::int64_t n = 1;
        for (auto d : dims) n *= d;
        return n;
    }
};

/// Dense row-major strides of a shape.
inline std::vector<std::int64_t> dense_strides(const std::vector<std::int32_t>& s) {
    std::vector<std::int64_t> st(s.size(), 1);
    for (std::size_t i = s.size(); i-- > 1;) st[i - 1] = st[i] * s[i];
    return st;
}

/// Reorders the axes of a channels-first view ([..., C, H, W]) into TFLite order ([..., H, W, C]).
inline view to_tflite_order(view v) {
    const std::size_t r = v.dims.size();
    if (r < 3) return v;
    std::vector<std::int64_t> d(v.dims.begin(), v.dims.end() - 3), s(v.strides.begin(), v.strides.end() - 3);
    for (std::size_t a : {r - 2, r - 1, r - 3}) {
        d.push_back(v.dims[a]);
        s.push_back(v.strides[a]);
    }
    v.dims = std::move(d);
    v.strides = std::move(s);
    return v;
}

/// A dense channels-first tensor as a view in its own (channels-first) axis order.
inline view cf_view(const tensor_ref& t) {
    view v;
    v.base = t.data;
    v.elem = t.elem;
    v.dims.assign(t.shape.begin(), t.shape.end());
    v.strides = dense_strides(t.shape);
    return v;
}

/// A dense channels-first tensor seen in TFLite axis order.
inline view tflite_view(const tensor_ref& t) { return to_tflite_order(cf_view(t)); }

/// The view with axis `a` fixed at index k (the axis removed).
inline view fix_axis(view v, std::size_t a, std::int64_t k) {
    v.base += static_cast<std::ptrdiff_t>(k * v.strides[a] * v.elem);
    v.dims.erase(v.dims.begin() + static_cast<std::ptrdiff_t>(a));
    v.strides.erase(v.strides.begin() + static_cast<std::ptrdiff_t>(a));
    return v;
}

/// Copies src into dst, both walked in row-major order of their own boxes. The caller checks
/// that both hold the same number of elements of the same size.
namespace copy_detail {
// The same box in both views (slices, concatenations, splits): visit it in the destination's
// memory order with adjacent axes merged, so the innermost loop is a run that is contiguous in
// the destination (one memcpy when the source run is contiguous too). Every element still goes
// to the same place; only the order of the copies changes, which needs disjoint tensors.
inline bool copy_same_box(const view& src, const view& dst) {
    if (src.dims != dst.dims || src.elem != dst.elem) return false;
    const std::size_t es = src.elem;
    const std::int64_t n = src.count();
    auto span_of = [&](const view& v) {
        std::int64_t lo = 0, hi = 0;
        for (std::size_t a = 0; a < v.dims.size(); ++a) {
            const std::int64_t ext = (v.dims[a] - 1) * v.strides[a];
            (ext < 0 ? lo : hi) += ext;
        }
        return std::pair{v.base + lo * static_cast<std::int64_t>(es), v.base + (hi + 1) * static_cast<std::int64_t>(es)};
    };
    const auto [s0, s1] = span_of(src);
    const auto [d0, d1] = span_of(dst);
    if (!(s1 <= d0 || d1 <= s0)) return false;
    std::vector<std::size_t> ax;
    for (std::size_t a = 0; a < src.dims.size(); ++a)
        if (src.dims[a] != 1) ax.push_back(a);
    std::stable_sort(ax.begin(), ax.end(), [&](std::size_t x, std::size_t y) {
        return std::abs(dst.strides[x]) > std::abs(dst.strides[y]);
    });
    std::vector<std::int64_t> dims, ss, ds;
    for (std::size_t a : ax) {
        if (!dims.empty() && ss.back() == src.strides[a] * src.dims[a] && ds.back() == dst.strides[a] * dst.dims[a]) {
            dims.back() *= src.dims[a];
            ss.back() = src.strides[a];
            ds.back() = dst.strides[a];
            continue;
        }
        dims.push_back(src.dims[a]);
        ss.push_back(src.strides[a]);
        ds.push_back(dst.strides[a]);
    }
    if (dims.empty()) {
        dims = {1};
        ss = ds = {1};
    }
    const std::int64_t run = dims.back(), rs = ss.back(), rd = ds.back();
    const std::size_t outer_rank = dims.size() - 1;
    std::vector<std::int64_t> idx(outer_rank, 0);
    std::int64_t so = 0, dof = 0;
    for (std::int64_t done = 0; done < n; done += run) {
        const std::byte* sp = src.base + so * static_cast<std::int64_t>(es);
        std::byte* dp = dst.base + dof * static_cast<std::int64_t>(es);
        if (rs == 1 && rd == 1) {
            std::memcpy(dp, sp, static_cast<std::size_t>(run) * es);
        } else if (es == 1) {
            for (std::int64_t j = 0; j < run; ++j) dp[j * rd] = sp[j * rs];
        } else {
            for (std::int64_t j = 0; j < run; ++j)
                std::memcpy(dp + j * rd * static_cast<std::int64_t>(es), sp + j * rs * static_cast<std::int64_t>(es), es);
        }
        for (std::size_t d = outer_rank; d-- > 0;) {
            so += ss[d];
            dof += ds[d];
            if (++idx[d] < dims[d]) break;
            so -= ss[d] * dims[d];
            dof -= ds[d] * dims[d];
            idx[d] = 0;
        }
    }
    return true;
}
}  // namespace copy_detail

inline void copy(const view& src, const view& dst) {
    const std::int64_t n = src.count();
    if (n == 0) return;
    if (copy_detail::copy_same_box(src, dst)) return;
    const std::size_t es = src.elem;
    struct cursor {
        const view& v;
        std::vector<std::int64_t> idx;
        std::int64_t off = 0;
        explicit cursor(const view& x) : v(x), idx(x.dims.size(), 0) {}
        void next() {
            for (std::size_t d = idx.size(); d-- > 0;) {
                off += v.strides[d];
                if (++idx[d] < v.dims[d]) return;
                off -= v.strides[d] * v.dims[d];
                idx[d] = 0;
            }
        }
    };
    cursor s(src), d(dst);
    for (std::int64_t e = 0; e < n; ++e) {
        std::memcpy(dst.base + static_cast<std::size_t>(d.off) * es, src.base + static_cast<std::size_t>(s.off) * es, es);
        s.next();
        d.next();
    }
}

/// The TFLite axis of rank `rank` whose channels-first axis is `cf_axis` (non-negative), or -1.
inline std::int32_t tflite_axis_of_cf(std::int32_t cf_axis, std::int32_t rank) {
    for (std::int32_t a = 0; a < rank; ++a) {
        std::int32_t c = a;
        if (rank >= 3) {
            if (a == rank - 1) c = rank - 3;
            else if (a == rank - 3 || a == rank - 2) c = a + 1;
        }
        if (c == cf_axis) return a;
    }
    return -1;
}

/// Requires two tensors of the same element size and count.
template <class Ctx>
void require_same_elements(const Ctx& c, const tensor_ref& a, const tensor_ref& b, const char* what) {
    if (a.elem != b.elem || a.type != b.type)
        c.reject(std::string(what) + ": calc type " + std::to_string(a.type) + " vs " + std::to_string(b.type));
    c.require_same_count(a, b);
}

}  // namespace vnnx::sim::movement
// ---- end vnnx/sim/layers/movement_common.hpp

namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::RESHAPE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "reshape");
        movement::copy(movement::tflite_view(in), movement::tflite_view(out));
    }
};

namespace movement {

/// SLICE and STRIDED_SLICE: the sliced box of the input, as a view in TFLite order.
inline view slice_view(const layer_context& c, const tensor_ref& in) {
    const auto so = c.rec.options.get<format::layer_options::SliceOptions>();
    const std::size_t r = in.rank();
    const auto cf = cf_view(in);
    view v;
    v.base = in.data;
    v.elem = in.elem;
    // Axis j of the four stored is channels-first axis r - 4 + j; axes before it must be 1.
    for (std::size_t k = 0; k + 4 < r; ++k)
        if (in.shape[k] != 1) c.reject("input rank " + std::to_string(r) + ": leading dim " + std::to_string(k) + " is not 1");
    std::int64_t base = 0;
    for (std::size_t j = 0; j < 4; ++j) {
        const std::int64_t b = so.begin[j], e = so.end[j], s = so.stride[j];
        const auto k = static_cast<std::int64_t>(r) - 4 + static_cast<std::int64_t>(j);
        const std::int64_t dim = k >= 0 ? in.shape[static_cast<std::size_t>(k)] : 1;
        if (s == 0) c.reject("SliceOptions axis " + std::to_string(j) + ": stride 0");
        const std::int64_t span = s > 0 ? e - b : b - e;
        const std::int64_t as = s > 0 ? s : -s;
        const std::int64_t n = span <= 0 ? 0 : (span + as - 1) / as;
        if (n > 0 && (b < 0 || b >= dim || b + (n - 1) * s < 0 || b + (n - 1) * s >= dim))
            c.reject("SliceOptions axis " + std::to_string(j) + ": begin " + std::to_string(b) + " end " + std::to_string(e) +
                     " stride " + std::to_string(s) + " leave the dim " + std::to_string(dim));
        if (k < 0) {
            if (n != 1) c.reject("SliceOptions axis " + std::to_string(j) + " is absent from the input but selects " + std::to_string(n) + " elements");
            continue;
        }
        base += b * cf.strides[static_cast<std::size_t>(k)];
        v.dims.push_back(n);
        v.strides.push_back(s * cf.strides[static_cast<std::size_t>(k)]);
    }
    // Leading unit axes of a rank > 4 input stay in the view so its TFLite order is right.
    v.dims.insert(v.dims.begin(), r > 4 ? r - 4 : 0, 1);
    v.strides.insert(v.strides.begin(), r > 4 ? r - 4 : 0, 0);
    v.base += static_cast<std::ptrdiff_t>(base * in.elem);
    return to_tflite_order(v);
}

template <std::int32_t Type>
struct slice_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        const auto src = slice_view(c, in);
        if (in.elem != out.elem || in.type != out.type) c.reject("input and output calc types differ");
        if (static_cast<std::uint64_t>(src.count()) != out.count)
            c.reject("the slice selects " + std::to_string(src.count()) + " elements but the output has " + std::to_string(out.count));
        copy(src, tflite_view(out));
    }
};

}  // namespace movement

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SLICE)>
    : movement::slice_exec<static_cast<std::int32_t>(builtin_operator::SLICE)> {};
template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::STRIDED_SLICE)>
    : movement::slice_exec<static_cast<std::int32_t>(builtin_operator::STRIDED_SLICE)> {};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::TRANSPOSE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "transpose");
        const auto p = c.rec.options.get<format::layer_options::TransposeOptions>().permutation;
        std::array<bool, 3> seen{};
        for (auto a : p) {
            if (a < 0 || a > 2 || seen[static_cast<std::size_t>(a)])
                c.reject("permutation [" + std::to_string(p[0]) + "," + std::to_string(p[1]) + "," + std::to_string(p[2]) +
                         "] is not a permutation of 0,1,2");
            seen[static_cast<std::size_t>(a)] = true;
        }
        const std::array<std::int64_t, 3> d{in.channels(), in.rows(), in.cols()};
        const std::array<std::int64_t, 3> st{d[1] * d[2], d[2], 1};
        movement::view src;
        src.base = in.data;
        src.elem = in.elem;
        src.dims = {in.outer()};
        src.strides = {d[0] * d[1] * d[2]};
        for (auto a : p) {
            src.dims.push_back(d[static_cast<std::size_t>(a)]);
            src.strides.push_back(st[static_cast<std::size_t>(a)]);
        }
        movement::view dst;  // the output is written densely in the permuted order
        dst.base = out.data;
        dst.elem = out.elem;
        dst.dims = {static_cast<std::int64_t>(out.count)};
        dst.strides = {1};
        movement::copy(src, dst);
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::PAD)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        c.require_8bit();
        if (in.type != out.type) c.reject("input and output calc types differ");
        const auto po = c.rec.options.get<format::layer_options::PadOptions>();
        if (po.transpose_dilate_w != 1 || po.transpose_dilate_h != 1) c.reject("a PAD layer needs transpose_dilate_w = transpose_dilate_h = 1");
        const auto& pads = c.rec.pads;
        for (auto p : pads)
            if (p < 0) c.reject("negative pad " + std::to_string(p));
        const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
        const std::int64_t oc = C + pads[0] + pads[3], oh = H + pads[1] + pads[4], ow = W + pads[2] + pads[5];
        if (out.channels() != oc || out.rows() != oh || out.cols() != ow || out.outer() != in.outer())
            c.reject("output shape does not match the input padded by the layer's pads");
        if (in.is_signed() ? (po.value < -128 || po.value > 127) : (po.value < 0 || po.value > 255))
            c.reject("pad value " + std::to_string(po.value) + " does not fit the 8-bit type");
        std::memset(out.data, static_cast<std::uint8_t>(po.value), static_cast<std::size_t>(out.count));
        for (std::int64_t o = 0; o < in.outer(); ++o)
            for (std::int64_t ch = 0; ch < C; ++ch)
                for (std::int64_t y = 0; y < H; ++y) {
                    const std::int64_t src = ((o * C + ch) * H + y) * W;
                    const std::int64_t dst = ((o * oc + ch + pads[0]) * oh + y + pads[1]) * ow + pads[2];
                    std::memcpy(out.data + dst, in.data + src, static_cast<std::size_t>(W));
                }
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::GATHER)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input (params) and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem || in.type != out.type) c.reject("params and output calc types differ");
        const auto go = c.rec.options.get<format::layer_options::GatherOptions>();
        if (go.batch_dims != 0 || go.batch_size != 1) c.reject("only batch_dims 0 (batch_size 1) is supported");
        const auto r = static_cast<std::int32_t>(in.rank());
        if (go.axis < 0 || go.axis >= r) c.reject("axis " + std::to_string(go.axis) + " is outside the params rank " + std::to_string(r));
        std::int64_t outer = 1, inner = 1;
        for (std::int32_t i = 0; i < go.axis; ++i) outer *= in.shape[static_cast<std::size_t>(i)];
        for (std::int32_t i = go.axis + 1; i < r; ++i) inner *= in.shape[static_cast<std::size_t>(i)];
        const std::int64_t dim = in.shape[static_cast<std::size_t>(go.axis)];
        if (go.outer_size != outer || go.inner_size != inner || go.axis_size != dim)
            c.reject("outer/axis/inner sizes " + std::to_string(go.outer_size) + "/" + std::to_string(go.axis_size) + "/" +
                     std::to_string(go.inner_size) + " do not match the params shape");
        if (go.coord_size <= 0) c.reject("coord_size must be positive");
        const auto coords = c.int32s(go.coord_data, static_cast<std::uint64_t>(go.coord_size), "coord_data");
        const std::int64_t n = go.coord_size;
        if (static_cast<std::uint64_t>(outer * n * inner) != out.count)
            c.reject("the gather yields " + std::to_string(outer * n * inner) + " elements but the output has " + std::to_string(out.count));
        // Gather on the channels-first axis into a box shaped like the params with that axis
        // resized, then lay the box out through TFLite order (index shapes other than 1-D
        // change the output rank).
        std::vector<std::byte> box(static_cast<std::size_t>(outer * n * inner) * in.elem);
        const std::size_t chunk = static_cast<std::size_t>(inner) * in.elem;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t k = 0; k < n; ++k) {
                const std::int32_t ix = coords[static_cast<std::size_t>(k)];
                if (ix < 0 || ix >= dim) c.reject("coordinate " + std::to_string(k) + " (" + std::to_string(ix) + ") is outside [0, " + std::to_string(dim) + ")");
                std::memcpy(box.data() + static_cast<std::size_t>(o * n + k) * chunk,
                            in.data + static_cast<std::size_t>(o * dim + ix) * chunk, chunk);
            }
        tensor_ref shaped = in;
        shaped.data = box.data();
        shaped.shape[static_cast<std::size_t>(go.axis)] = static_cast<std::int32_t>(n);
        shaped.count = static_cast<std::uint64_t>(outer * n * inner);
        movement::copy(movement::tflite_view(shaped), movement::tflite_view(out));
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::CAST)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.shape != out.shape) c.reject("input and output shapes differ");
        for (std::uint64_t i = 0; i < in.count; ++i) out.set(i, in.get(i));
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::UNPACK)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        const auto po = c.rec.options.get<format::layer_options::PackOptions>();
        if (c.tensors.size() < 2) c.reject("expects an input and outputs");
        const tensor_ref& in = c.tensors[0];
        const auto n_out = c.tensors.size() - 1;
        const auto rank = static_cast<std::int32_t>(in.rank());
        if (po.dims != rank) c.reject("PackOptions.dims " + std::to_string(po.dims) + " differs from the input rank " + std::to_string(rank));
        const std::int32_t a = movement::tflite_axis_of_cf(po.axis + rank, rank);
        if (a < 0) c.reject("axis " + std::to_string(po.axis) + " is outside the input rank");
        const auto src = movement::tflite_view(in);
        const auto count = src.dims[static_cast<std::size_t>(a)];
        if (po.count != count || static_cast<std::int64_t>(n_out) > count)
            c.reject("count " + std::to_string(po.count) + " and " + std::to_string(n_out) + " outputs for an axis of " + std::to_string(count));
        for (std::size_t k = 0; k < n_out; ++k) {
            const tensor_ref& out = c.tensors[1 + k];
            if (out.elem != in.elem || out.type != in.type) c.reject("output " + std::to_string(k) + " calc type differs from the input");
            const auto part = movement::fix_axis(src, static_cast<std::size_t>(a), static_cast<std::int64_t>(k));
            if (static_cast<std::uint64_t>(part.count()) != out.count) c.reject("output " + std::to_string(k) + " has the wrong size");
            movement::copy(part, movement::tflite_view(out));
        }
    }
};

namespace movement {

/// The source index of output index `o` along an axis of `n` input elements padded by `before`:
/// mirrored without the edge (REFLECT) or with it (SYMMETRIC).
inline std::int64_t mirror_index(std::int64_t o, std::int64_t before, std::int64_t n, bool reflect) {
    std::int64_t i = o - before;
    if (i < 0) i = reflect ? -i : -i - 1;
    else if (i >= n) i = reflect ? 2 * n - 2 - i : 2 * n - 1 - i;
    return i;
}

}  // namespace movement

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::MIRROR_PAD)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem || in.type != out.type) c.reject("input and output calc types differ");
        const auto mode = c.rec.options.get<format::layer_options::MirrorPadOptions>().mode;
        if (mode != 0 && mode != 1) c.reject("mode " + std::to_string(mode) + " is neither 1 (REFLECT) nor 0 (SYMMETRIC)");
        const bool reflect = mode == 1;
        const auto& pads = c.rec.pads;
        const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
        const std::array<std::int64_t, 3> n{C, H, W};
        for (std::size_t a = 0; a < 3; ++a) {
            const std::int64_t limit = n[a] - (reflect ? 1 : 0);
            if (pads[a] < 0 || pads[a + 3] < 0 || pads[a] > limit || pads[a + 3] > limit)
                c.reject("pads exceed what the mode can mirror");
        }
        const std::int64_t oc = C + pads[0] + pads[3], oh = H + pads[1] + pads[4], ow = W + pads[2] + pads[5];
        if (out.channels() != oc || out.rows() != oh || out.cols() != ow || out.outer() != in.outer())
            c.reject("output shape does not match the input padded by the layer's pads");
        const std::size_t es = in.elem;
        for (std::int64_t o = 0; o < in.outer(); ++o)
            for (std::int64_t ch = 0; ch < oc; ++ch) {
                const auto sc = movement::mirror_index(ch, pads[0], C, reflect);
                for (std::int64_t y = 0; y < oh; ++y) {
                    const auto sy = movement::mirror_index(y, pads[1], H, reflect);
                    for (std::int64_t x = 0; x < ow; ++x) {
                        const auto sx = movement::mirror_index(x, pads[2], W, reflect);
                        const auto src = static_cast<std::size_t>(((o * C + sc) * H + sy) * W + sx);
                        const auto dst = static_cast<std::size_t>(((o * oc + ch) * oh + y) * ow + x);
                        std::memcpy(out.data + dst * es, in.data + src * es, es);
                    }
                }
            }
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/movement.hpp
// ---- begin vnnx/sim/layers/pool.hpp
// MAX_POOL_2D (17) and AVERAGE_POOL_2D (1) layers, from the record: `kernel_shape` [kh, kw],
// `strides` [sh, sw], `pads` [c0, top, left, c1, bottom, right] (padded taps are skipped; the
// average divides by the in-bounds taps), clamp to [activation_min, activation_max]. Input
// and output share their quantization, so codes are pooled directly.


namespace vnnx::sim {

namespace pool_exec_detail {

template <kernels::pool_kind Kind>
void run_pool(layer_context& c) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    if (in.type != out.type) c.reject("input and output calc types differ");
    if (in.rank() < 3 || out.rank() != in.rank()) c.reject("expects channels-first [.., C, H, W] tensors of equal rank");
    if (c.rec.pads[0] != 0 || c.rec.pads[3] != 0) c.reject("channel padding is not supported by a pool");
    kernels::pool_shape s;
    s.channels = static_cast<int>(in.outer() * in.channels());
    s.height = in.rows();
    s.width = in.cols();
    s.kernel_h = c.rec.kernel_shape[0];
    s.kernel_w = c.rec.kernel_shape[1];
    s.stride_h = c.rec.strides[0];
    s.stride_w = c.rec.strides[1];
    s.pad_top = c.rec.pads[1];
    s.pad_left = c.rec.pads[2];
    s.pad_bottom = c.rec.pads[4];
    s.pad_right = c.rec.pads[5];
    s.is_signed = in.is_signed();
    s.act_min = std::max(c.rec.activation_min, in.type_min());
    s.act_max = std::min(c.rec.activation_max, in.type_max());
    if (s.stride_h < 1 || s.stride_w < 1 || s.kernel_h < 1 || s.kernel_w < 1)
        c.reject("kernel_shape and strides must be positive");
    if (out.outer() * out.channels() != s.channels || out.rows() != s.out_h() || out.cols() != s.out_w())
        c.reject("output is " + std::to_string(out.channels()) + "x" + std::to_string(out.rows()) + "x" +
                 std::to_string(out.cols()) + " but the window walk gives " + std::to_string(s.out_h()) + "x" +
                 std::to_string(s.out_w()));
    kernels::pool2d(c.ex.isa, Kind, s, std::span<const std::uint8_t>(in.u8(), in.count),
                    std::span<std::uint8_t>(out.u8(), out.count), c.ex.pool, c.view.source() + ": " + c.where);
}

}  // namespace pool_exec_detail

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::MAX_POOL_2D)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { pool_exec_detail::run_pool<kernels::pool_kind::max>(c); }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::AVERAGE_POOL_2D)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { pool_exec_detail::run_pool<kernels::pool_kind::average>(c); }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/pool.hpp
// ---- begin vnnx/sim/layers/reduce.hpp
// Reduction layers MEAN (40), SUM (74), REDUCE_MAX (82), REDUCE_MIN (89), from the record:
// reduce8 flags say which channels-first axes (channels, rows, columns) are reduced; the
// input is seen as [outer, C, H, W] and the output holds the kept elements in order (its record
// shape may keep or drop the reduced axes). input_offset/output_offset are the zero points,
// output_multiplier/output_shift the stored requantization, activation_min/max the clamp.
//   MEAN, H and W of a 4-D tensor kept 4-D: TFLite's integer kernel: the raw codes are summed,
//        scaled by the stored multiplier (which folds the 1/n) and shifted by
//        z_out − round(z_in·S_in/S_out) (float, from the tensor records' scales).
//   MEAN otherwise: TFLite's QuantizedMeanOrSum, which works in float from the tensor records'
//        scales: round(mean·S_in/S_out − z_in·S_in/S_out) + z_out.
//   SUM: (Σ(x − z_in))·M + z_out with the stored multiplier.
//   REDUCE_PROD: TFLite's product: p = x0 − z_in, then p = S(p·(x − z_in)) per further element in
//        TFLite (channels-last) order, and S(p) + z_out, S the stored scaling applied as
//        TFLite's 64-bit MultiplyByQuantizedMultiplier (multiplier rounded to 16 bits).
//   REDUCE_MAX / REDUCE_MIN: the extreme code, requantized (x − z_in)·M + z_out (exact identity
//        when input and output quantization agree, QM(1) = (2^30, 1)).


namespace vnnx::sim {

namespace reduce_exec_detail {

struct reduce_args {
    std::int32_t kind = 40;
    bool red_c = false, red_h = false, red_w = false;
    std::int32_t multiplier = 0, shift = 0;
    std::int32_t z_in = 0, z_out = 0, lo = -128, hi = 127;
};

/// Runs a reduction on tensors [input, output]; Ctx is a node or layer context.
/// TFLite's MultiplyByQuantizedMultiplier for a 64-bit input (REDUCE_PROD).
inline std::int32_t scale64(std::int64_t x, std::int32_t multiplier, std::int32_t shift) {
    const std::int32_t reduced = multiplier < 0x7FFF0000 ? (multiplier + (1 << 15)) >> 16 : 0x7FFF;
    const std::int32_t total = 15 - shift;
    return static_cast<std::int32_t>((x * reduced + (std::int64_t{1} << (total - 1))) >> total);
}

/// Reductions keep elements in TFLite order; a record that drops axes can change which axis is
/// "channels" ([1,H,W,C] reduced over C is [1,H,W], channels-first [W,1,H]). Position, in the
/// output record's channels-first memory, of the output element with TFLite row-major index k.
inline std::uint64_t cf_position(const tensor_ref& out, std::uint64_t k) {
    if (out.rank() < 3) return k;
    const std::uint64_t C = static_cast<std::uint64_t>(out.channels()), H = static_cast<std::uint64_t>(out.rows()),
                        W = static_cast<std::uint64_t>(out.cols());
    const std::uint64_t c = k % C, w = (k / C) % W, h = (k / (C * W)) % H, lead = k / (C * W * H);
    return ((lead * C + c) * H + h) * W + w;
}

/// TFLite row-major index, in the reduced (keep_dims) shape [outer, H', W', C'], of the input
/// element at channels-first (o, ch, y, x); rank <= 2 tensors have C = 1 and no permutation.
struct keep_index {
    std::int64_t oc, oh, ow;
    bool rc, rh, rw;
    [[nodiscard]] std::size_t operator()(std::int64_t o, std::int64_t ch, std::int64_t y, std::int64_t x) const {
        return static_cast<std::size_t>(((o * oh + (rh ? 0 : y)) * ow + (rw ? 0 : x)) * oc + (rc ? 0 : ch));
    }
};

template <class Ctx>
void run_reduce(const Ctx& c, const tensor_ref& in, const tensor_ref& out, const reduce_args& a) {
    if ((in.type != 0 && in.type != 1) || (out.type != 0 && out.type != 1)) c.reject("expects 8-bit tensors");
    if (!a.red_c && !a.red_h && !a.red_w) c.reject("reduce8 reduces no axis");
    const std::int64_t outer = in.outer();
    const std::int64_t C = in.channels(), H = in.rows(), W = in.cols();
    const std::int64_t oc = a.red_c ? 1 : C, oh = a.red_h ? 1 : H, ow = a.red_w ? 1 : W;
    const std::int64_t n = (a.red_c ? C : 1) * (a.red_h ? H : 1) * (a.red_w ? W : 1);
    if (static_cast<std::int64_t>(out.count) != outer * oc * oh * ow)
        c.reject("output has " + std::to_string(out.count) + " elements but the reduction keeps " +
                 std::to_string(outer * oc * oh * ow));
    if (a.shift < -31 || a.shift > 30) c.reject("output_shift " + std::to_string(a.shift) + " is outside -31..30");
    const bool is_max = a.kind == static_cast<std::int32_t>(builtin_operator::REDUCE_MAX);
    const bool is_min = a.kind == static_cast<std::int32_t>(builtin_operator::REDUCE_MIN);
    const bool is_mean = a.kind == static_cast<std::int32_t>(builtin_operator::MEAN);
    const bool is_prod = a.kind == static_cast<std::int32_t>(builtin_operator::REDUCE_PROD);
    if (is_prod && (a.shift < -31 || a.shift > 7)) c.reject("REDUCE_PROD scaling shift must lie in -31..7");
    // TFLite picks its integer MEAN kernel for 4-D keep_dims means over exactly H and W.
    const bool mean_hw = is_mean && in.rank() == 4 && out.rank() == 4 && a.red_h && a.red_w && !a.red_c;
    const float s_ratio = in.scale / out.scale;
    if (is_mean && !(std::isfinite(s_ratio) && s_ratio > 0)) c.reject("tensor scales must be positive");
    float hw_temp = static_cast<float>(a.z_in) * in.scale / out.scale;
    hw_temp = hw_temp > 0 ? hw_temp + 0.5f : hw_temp - 0.5f;
    const std::int32_t hw_bias = a.z_out - static_cast<std::int32_t>(hw_temp);

    std::vector<std::int64_t> acc(static_cast<std::size_t>(out.count), 0);
    std::vector<std::int32_t> ext(static_cast<std::size_t>(out.count), is_max ? INT32_MIN : INT32_MAX);
    const keep_index key{oc, oh, ow, a.red_c, a.red_h, a.red_w};
    std::vector<std::int32_t> prod(static_cast<std::size_t>(out.count), 0);
    std::vector<bool> started(static_cast<std::size_t>(out.count), false);
    // TFLite (channels-last) order: REDUCE_PROD's per-step rounding depends on it.
    for (std::int64_t o = 0; o < outer; ++o)
        for (std::int64_t y = 0; y < H; ++y)
            for (std::int64_t x = 0; x < W; ++x)
                for (std::int64_t ch = 0; ch < C; ++ch) {
                    const auto i = static_cast<std::uint64_t>(((o * C + ch) * H + y) * W + x);
                    const auto k = key(o, ch, y, x);
                    const std::int32_t v = in.get(i);
                    acc[k] += v;
                    ext[k] = is_max ? std::max(ext[k], v) : std::min(ext[k], v);
                    if (is_prod) {
                        prod[k] = started[k] ? scale64(std::int64_t{prod[k]} * (v - a.z_in), a.multiplier, a.shift) : v - a.z_in;
                        started[k] = true;
                    }
                }
    const float lo = static_cast<float>(a.lo), hi = static_cast<float>(a.hi);
    for (std::size_t k = 0; k < acc.size(); ++k) {
        std::int32_t r = 0;
        if (is_prod) {
            r = scale64(prod[k], a.multiplier, a.shift) + a.z_out;
        } else if (is_max || is_min) {
            r = quant::multiply_by_quantized_multiplier(ext[k] - a.z_in, a.multiplier, a.shift) + a.z_out;
        } else if (mean_hw) {
            if (acc[k] > INT32_MAX || acc[k] < INT32_MIN) c.reject("MEAN sum overflows 32 bits");
            r = quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(acc[k]), a.multiplier, a.shift) + hw_bias;
        } else if (is_mean) {
            const float mean = static_cast<float>(acc[k]) / static_cast<float>(n);
            const float bias = static_cast<float>(-a.z_in) * s_ratio;
            const float f = std::clamp(std::round(mean * s_ratio + bias) + static_cast<float>(a.z_out), lo, hi);
            r = static_cast<std::int32_t>(f);
        } else {  // SUM
            const std::int64_t centred = acc[k] - static_cast<std::int64_t>(a.z_in) * n;
            if (centred > INT32_MAX || centred < INT32_MIN) c.reject("SUM overflows 32 bits");
            r = quant::multiply_by_quantized_multiplier(static_cast<std::int32_t>(centred), a.multiplier, a.shift) + a.z_out;
        }
        out.set(cf_position(out, k), std::clamp(r, a.lo, a.hi));
    }
}

template <class Ctx, class Reduce8>
reduce_args args_of(const Ctx& c, const Reduce8& r8, std::int32_t kind, const tensor_ref& out) {
    reduce_args a;
    a.kind = kind;
    a.red_c = r8.channels != 0;
    a.red_h = r8.rows != 0;
    a.red_w = r8.columns != 0;
    a.multiplier = c.int32s(c.rec.output_multiplier, 1, "output_multiplier")[0];
    a.shift = c.int32s(c.rec.output_shift, 1, "output_shift")[0];
    a.z_in = c.rec.input_offset;
    a.z_out = c.rec.output_offset;
    a.lo = std::max(c.rec.activation_min, out.type_min());
    a.hi = std::min(c.rec.activation_max, out.type_max());
    if (a.lo > a.hi) c.reject("activation_min exceeds activation_max");
    if (a.multiplier < 0) c.reject("output_multiplier is negative");
    return a;
}

}  // namespace reduce_exec_detail

template <std::int32_t Type>
struct reduce_layer_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        const auto r8 = c.rec.options.get<format::layer_options::reduce8>();
        const auto a = reduce_exec_detail::args_of(c, r8, Type, c.tensors[1]);
        reduce_exec_detail::run_reduce(c, c.tensors[0], c.tensors[1], a);
    }
};

template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::MEAN)> : reduce_layer_exec<40> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::SUM)> : reduce_layer_exec<74> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::REDUCE_MAX)> : reduce_layer_exec<82> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::REDUCE_MIN)> : reduce_layer_exec<89> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::REDUCE_PROD)> : reduce_layer_exec<81> {};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/reduce.hpp
// ---- begin vnnx/sim/layers/argmax.hpp
// ARG_MAX (56) / ARG_MIN (79) layers: the reduce8 flag names the channels-first axis searched
// (exactly one of channels, rows, columns); each output element is the int32 index of the first
// maximum (minimum) code along it, outputs in the order of the kept elements.


namespace vnnx::sim {

template <bool Minimum>
struct argmax_exec {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.type != 0 && in.type != 1) c.reject("expects an 8-bit input");
        if (out.type != 3) c.reject("expects an int32 output, found calc type " + std::to_string(out.type));
        const auto r8 = c.rec.options.get<format::layer_options::reduce8>();
        if ((r8.channels != 0) + (r8.rows != 0) + (r8.columns != 0) != 1) c.reject("reduce8 must flag exactly one axis");
        const std::int64_t outer = in.outer(), C = in.channels(), H = in.rows(), W = in.cols();
        const bool rc = r8.channels != 0, rh = r8.rows != 0, rw = r8.columns != 0;
        const reduce_exec_detail::keep_index key{rc ? 1 : C, rh ? 1 : H, rw ? 1 : W, rc, rh, rw};
        const std::int64_t kept = outer * (rc ? 1 : C) * (rh ? 1 : H) * (rw ? 1 : W);
        if (static_cast<std::int64_t>(out.count) != kept)
            c.reject("output has " + std::to_string(out.count) + " elements, expected " + std::to_string(kept));
        // Walking the input in memory order visits each output's candidates in increasing axis
        // order, so a strict comparison keeps the first extreme.
        std::vector<std::int32_t> best(static_cast<std::size_t>(kept)), at(static_cast<std::size_t>(kept), -1);
        std::uint64_t i = 0;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::int64_t ch = 0; ch < C; ++ch)
                for (std::int64_t y = 0; y < H; ++y)
                    for (std::int64_t x = 0; x < W; ++x, ++i) {
                        const auto k = key(o, ch, y, x);
                        const std::int32_t v = in.get(i);
                        if (at[k] < 0 || (Minimum ? v < best[k] : v > best[k])) {
                            best[k] = v;
                            at[k] = static_cast<std::int32_t>(rc ? ch : rh ? y : x);
                        }
                    }
        for (std::size_t k = 0; k < at.size(); ++k) out.set(reduce_exec_detail::cf_position(out, k), at[k]);
    }
};

template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::ARG_MAX)> : argmax_exec<false> {};
template <> struct layer_exec<static_cast<std::int32_t>(builtin_operator::ARG_MIN)> : argmax_exec<true> {};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/argmax.hpp
// ---- begin vnnx/sim/layers/resize.hpp
// RESIZE_NEAREST_NEIGHBOR (97) and RESIZE_BILINEAR (23) layers. The geometry comes from the
// input and output records ([.., C, H, W]); ResizeOptions.scale must agree with it, `mode`
// bit 0 selects linear, bit 8 align_corners, bit 9 half_pixel_centers. The arithmetic is
// TFLite's: nearest with its 10-bit fixed-point ratio (its float rule when a flag is set);
// int8 bilinear with 10-bit integer positions and weights, rounded half away from zero;
// uint8 bilinear in float with +0.5 and truncation, as TFLite's optimized uint8 kernel.


namespace vnnx::sim {

namespace resize_exec_detail {

inline std::int32_t nearest(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    if (!align && !half) {
        const std::int32_t s10 = ((1 << 10) * in + out / 2) / out;
        return std::min((v * s10) >> 10, in - 1);
    }
    const float scale = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                           : static_cast<float>(in) / static_cast<float>(out);
    const float off = half ? 0.5f : 0.0f;
    std::int32_t r = align ? static_cast<std::int32_t>(std::round((static_cast<float>(v) + off) * scale))
                           : static_cast<std::int32_t>(std::floor((static_cast<float>(v) + off) * scale));
    r = std::min(r, in - 1);
    return half ? std::max(r, 0) : r;
}

/// Integer source position of output index v in 1/1024 units, and the two taps.
struct tap {
    std::int32_t lo = 0, hi = 0;
    std::int64_t frac = 0;  // weight of `hi` in 1/1024 (integer) ...
    float ffrac = 0;        // ... or as a float
};

inline tap integer_tap(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    std::int32_t s = ((1 << 10) * in + out / 2) / out;
    if (align && out > 1) s = ((1 << 10) * (in - 1) + (out - 1) / 2) / (out - 1);
    const std::int32_t pos = half ? v * s + s / 2 - (1 << 9) : v * s;
    tap t;
    t.lo = std::max(pos / (1 << 10), 0);
    t.hi = std::min((pos + (1 << 10) - 1) / (1 << 10), in - 1);
    t.frac = pos - (1 << 10) * t.lo;
    return t;
}

inline tap float_tap(std::int32_t v, std::int32_t in, std::int32_t out, bool align, bool half) {
    const float s = (align && out > 1) ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                                       : static_cast<float>(in) / static_cast<float>(out);
    const float pos = half ? (static_cast<float>(v) + 0.5f) * s - 0.5f : static_cast<float>(v) * s;
    tap t;
    t.lo = std::max(static_cast<std::int32_t>(std::floor(pos)), 0);
    t.hi = std::min(static_cast<std::int32_t>(std::ceil(pos)), in - 1);
    t.ffrac = pos - static_cast<float>(t.lo);
    return t;
}

inline void run(layer_context& c, bool linear_type) {
    if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
    c.require_8bit();
    const tensor_ref& in = c.tensors[0];
    const tensor_ref& out = c.tensors[1];
    if (in.type != out.type) c.reject("input and output calc types differ");
    const auto o = c.rec.options.get<format::layer_options::ResizeOptions>();
    if ((o.mode & ~0x301) != 0) c.reject("mode " + std::to_string(o.mode) + " has unknown bits");
    const bool linear = (o.mode & 1) != 0, align = (o.mode & 0x100) != 0, half = (o.mode & 0x200) != 0;
    if (linear != linear_type) c.reject("mode " + std::to_string(o.mode) + " does not match the layer type");
    if (align && half) c.reject("align_corners and half_pixel_centers are exclusive");
    const std::int64_t planes = in.outer() * in.channels();
    const std::int32_t ih = in.rows(), iw = in.cols(), oh = out.rows(), ow = out.cols();
    if (out.outer() * out.channels() != planes || ih < 1 || iw < 1 || oh < 1 || ow < 1)
        c.reject("input and output must have the same planes and positive sizes");
    if (o.scale[0] != static_cast<float>(oh) / static_cast<float>(ih) || o.scale[1] != static_cast<float>(ow) / static_cast<float>(iw))
        c.reject("scale does not match the input and output tensors");
    const std::size_t ip = static_cast<std::size_t>(ih) * iw, op = static_cast<std::size_t>(oh) * ow;
    if (!linear) {
        std::vector<std::int32_t> cx(static_cast<std::size_t>(ow));
        for (std::int32_t x = 0; x < ow; ++x) cx[static_cast<std::size_t>(x)] = nearest(x, iw, ow, align, half);
        for (std::int64_t p = 0; p < planes; ++p)
            for (std::int32_t y = 0; y < oh; ++y) {
                const std::int32_t sy = nearest(y, ih, oh, align, half);
                const std::uint8_t* src = in.u8() + static_cast<std::size_t>(p) * ip + static_cast<std::size_t>(sy) * iw;
                std::uint8_t* dst = out.u8() + static_cast<std::size_t>(p) * op + static_cast<std::size_t>(y) * ow;
                for (std::int32_t x = 0; x < ow; ++x) dst[x] = src[cx[static_cast<std::size_t>(x)]];
            }
        return;
    }
    const bool is_float = !in.is_signed();  // TFLite's uint8 kernel works in float
    std::vector<tap> tx(static_cast<std::size_t>(ow));
    for (std::int32_t x = 0; x < ow; ++x)
        tx[static_cast<std::size_t>(x)] = is_float ? float_tap(x, iw, ow, align, half) : integer_tap(x, iw, ow, align, half);
    for (std::int64_t p = 0; p < planes; ++p) {
        const std::size_t ibase = static_cast<std::size_t>(p) * ip;
        for (std::int32_t y = 0; y < oh; ++y) {
            const tap ty = is_float ? float_tap(y, ih, oh, align, half) : integer_tap(y, ih, oh, align, half);
            for (std::int32_t x = 0; x < ow; ++x) {
                const tap& t = tx[static_cast<std::size_t>(x)];
                auto v = [&](std::int32_t yy, std::int32_t xx) {
                    return in.get(ibase + static_cast<std::size_t>(yy) * iw + static_cast<std::size_t>(xx));
                };
                const std::uint64_t at = static_cast<std::size_t>(p) * op + static_cast<std::size_t>(y) * ow + x;
                if (is_float) {
                    const float dy = ty.ffrac, dx = t.ffrac;
                    const float r = static_cast<float>(v(ty.lo, t.lo)) * ((1 - dy) * (1 - dx)) +
                                    static_cast<float>(v(ty.lo, t.hi)) * ((1 - dy) * dx) +
                                    static_cast<float>(v(ty.hi, t.lo)) * (dy * (1 - dx)) +
                                    static_cast<float>(v(ty.hi, t.hi)) * (dy * dx) + 0.5f;
                    out.set(at, static_cast<std::int32_t>(r));
                } else {
                    const std::int64_t fy = ty.frac, fx = t.frac, one = 1 << 10;
                    const std::int64_t acc = v(ty.lo, t.lo) * (one - fy) * (one - fx) + v(ty.hi, t.lo) * fy * (one - fx) +
                                             v(ty.lo, t.hi) * (one - fy) * fx + v(ty.hi, t.hi) * fy * fx;
                    const std::int64_t round = acc > 0 ? (1 << 19) : -(1 << 19);
                    out.set(at, static_cast<std::int32_t>((acc + round) / (1 << 20)));
                }
            }
        }
    }
}

}  // namespace resize_exec_detail

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::RESIZE_NEAREST_NEIGHBOR)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { resize_exec_detail::run(c, false); }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::RESIZE_BILINEAR)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) { resize_exec_detail::run(c, true); }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/resize.hpp
// ---- begin vnnx/sim/layers/softmax.hpp
// SOFTMAX (25) layer, from the record: SoftmaxOptions.axis (−3 channels, −2 rows, −1 columns)
// names the normalised channels-first axis, `depth` its length; `vci_int8` holds the uint32
// table E[r] ≈ exp((v − 127)·S_in·β)·L (v = r as int8, four byte planes) and input_multiplier/
// input_shift = QM(1 / (S_out·2^16)). Per vector: m = max code; e_j = E[x_j − m + 127] (the
// difference always lies in −255..0, so the index is a valid int8 code); the output is
// round(e_j / Σe · 2^16 · M) + z_out, clamped, with M the stored real multiplier. The scale L
// cancels in the ratio, so the table's own normalisation never needs to be known.


namespace vnnx::sim {

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SOFTMAX)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input tensor and one output tensor");
        c.require_8bit();
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        c.require_same_count(in, out);
        const auto o = c.rec.options.get<format::layer_options::SoftmaxOptions>();
        if (o.axis < -3 || o.axis > -1) c.reject("axis " + std::to_string(o.axis) + " is not one of -3, -2, -1");
        const auto from_end = static_cast<std::size_t>(-o.axis);
        const std::int64_t n = in.dim_from_end(from_end);
        if (n != o.depth) c.reject("depth " + std::to_string(o.depth) + " differs from the axis length " + std::to_string(n));
        const std::int64_t inner = from_end == 3 ? std::int64_t{in.rows()} * in.cols() : from_end == 2 ? in.cols() : 1;
        const std::int64_t outer = static_cast<std::int64_t>(in.count) / (n * inner);
        const auto planes = c.bytes(o.vci_int8, 1024, "vci_int8");
        std::uint32_t table[256];
        for (std::size_t r = 0; r < 256; ++r)
            table[r] = static_cast<std::uint32_t>(planes[r]) | static_cast<std::uint32_t>(planes[256 + r]) << 8 |
                       static_cast<std::uint32_t>(planes[512 + r]) << 16 | static_cast<std::uint32_t>(planes[768 + r]) << 24;
        const auto m = c.int32s(c.rec.input_multiplier, 1, "input_multiplier")[0];
        const auto s = c.int32s(c.rec.input_shift, 1, "input_shift")[0];
        if (m <= 0 || s < -62 || s > 62) c.reject("input_multiplier/input_shift do not describe a positive real");
        // 2^16 · M, M = m·2^(s − 31)
        const double k = std::ldexp(static_cast<double>(m), s - 31 + 16);
        const std::int32_t zo = c.rec.output_offset, lo = out.type_min(), hi = out.type_max();
        std::vector<std::uint32_t> e(static_cast<std::size_t>(n));
        for (std::int64_t a = 0; a < outer; ++a)
            for (std::int64_t b = 0; b < inner; ++b) {
                const std::int64_t base = a * n * inner + b;
                std::int32_t mx = INT32_MIN;
                for (std::int64_t j = 0; j < n; ++j) mx = std::max(mx, in.get(static_cast<std::uint64_t>(base + j * inner)));
                std::uint64_t sum = 0;
                for (std::int64_t j = 0; j < n; ++j) {
                    const std::int32_t v = in.get(static_cast<std::uint64_t>(base + j * inner)) - mx + 127;
                    e[static_cast<std::size_t>(j)] = table[static_cast<std::uint8_t>(static_cast<std::int8_t>(v))];
                    sum += e[static_cast<std::size_t>(j)];
                }
                if (sum == 0) c.reject("the exponential table sums to zero");
                const double scale = k / static_cast<double>(sum);
                for (std::int64_t j = 0; j < n; ++j) {
                    const double q = std::round(static_cast<double>(e[static_cast<std::size_t>(j)]) * scale);
                    out.set(static_cast<std::uint64_t>(base + j * inner),
                            std::clamp(static_cast<std::int32_t>(q) + zo, lo, hi));
                }
            }
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/softmax.hpp
// ---- begin vnnx/sim/layers/space_depth.hpp
// DEPTH_TO_SPACE (5) and SPACE_TO_DEPTH (26), TFLite semantics on dense channels-first tensors:
//   DEPTH_TO_SPACE  out[n, h·bs+i, w·bs+j, c] = in[n, h, w, (i·bs+j)·C_out + c]
//   SPACE_TO_DEPTH  out[n, h, w, (i·bs+j)·C_in + c] = in[n, h·bs+i, w·bs+j, c]
// The block size bs is not stored in the record (the SDK stores none); it follows from the
// input and output tensor records, which must agree with it exactly.


namespace vnnx::sim {

namespace movement {

/// The block size of a depth/space move from the records: `space` is the side with the larger
/// rows and columns, `depth` the one with more channels.
template <class Ctx>
std::int64_t block_size(const Ctx& c, const tensor_ref& space, const tensor_ref& depth) {
    if (space.rank() != 4 || depth.rank() != 4) c.reject("input and output must be 4-D");
    if (depth.rows() < 1 || space.rows() % depth.rows() != 0) c.reject("rows do not give a whole block size");
    const std::int64_t bs = space.rows() / depth.rows();
    if (bs < 1 || space.cols() != depth.cols() * bs || depth.channels() != space.channels() * bs * bs ||
        space.outer() != depth.outer())
        c.reject("tensor shapes do not describe a block size " + std::to_string(bs) + " move");
    return bs;
}

/// The depth-side tensor in TFLite order with its channels split: [N, H, i, W, j, C].
inline view depth_blocks(const tensor_ref& depth, std::int64_t bs, std::int64_t c_space) {
    const view t = tflite_view(depth);  // [N, H, W, C·bs·bs]
    view v;
    v.base = t.base;
    v.elem = t.elem;
    const auto sc = t.strides[3];
    v.dims = {t.dims[0], t.dims[1], bs, t.dims[2], bs, c_space};
    v.strides = {t.strides[0], t.strides[1], bs * c_space * sc, t.strides[2], c_space * sc, sc};
    return v;
}

/// The space-side tensor in TFLite order with its rows and columns split: [N, H, i, W, j, C].
inline view space_blocks(const tensor_ref& space, std::int64_t bs) {
    const view t = tflite_view(space);  // [N, H·bs, W·bs, C]
    view v;
    v.base = t.base;
    v.elem = t.elem;
    v.dims = {t.dims[0], t.dims[1] / bs, bs, t.dims[2] / bs, bs, t.dims[3]};
    v.strides = {t.strides[0], bs * t.strides[1], t.strides[1], bs * t.strides[2], t.strides[2], t.strides[3]};
    return v;
}

}  // namespace movement

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::DEPTH_TO_SPACE)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "depth_to_space");
        const auto bs = movement::block_size(c, out, in);
        movement::copy(movement::depth_blocks(in, bs, out.channels()), movement::space_blocks(out, bs));
    }
};

template <>
struct layer_exec<static_cast<std::int32_t>(builtin_operator::SPACE_TO_DEPTH)> {
    static constexpr bool defined = true;
    static void run(layer_context& c) {
        if (c.tensors.size() != 2) c.reject("expects one input and one output tensor");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        movement::require_same_elements(c, in, out, "space_to_depth");
        const auto bs = movement::block_size(c, in, out);
        movement::copy(movement::space_blocks(in, bs), movement::depth_blocks(out, bs, in.channels()));
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/layers/space_depth.hpp
// ---- end vnnx/sim/layers/all.hpp
// ---- begin vnnx/sim/nodes/all.hpp
// Every node executor; sim/registry.hpp builds its table from these.
// ---- begin vnnx/sim/nodes/identity.hpp
// IDENTITY (300): a node that only runs its layers. With one input it first copies the input
// into its output tensor (the `<input>.id` copy of lowering.md §5.3) when the two differ.


namespace vnnx::sim {

template <>
struct node_exec<static_cast<std::int32_t>(format::vnnx_operator::IDENTITY)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.tensors.size() < 2) return;
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.data == out.data) return;
        if (in.type != out.type && !((in.type == 0 || in.type == 1) && (out.type == 0 || out.type == 1)))
            c.reject("copies calc type " + std::to_string(in.type) + " into calc type " + std::to_string(out.type));
        c.require_same_count(in, out);
        std::memmove(out.data, in.data, static_cast<std::size_t>(in.count) * in.elem);
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/nodes/identity.hpp
// ---- begin vnnx/sim/nodes/concat_split.hpp
// Data-movement nodes, computed from their records only (lowering.md §7.2). The node's
// tensors are its inputs (num_inputs) then its outputs (num_outputs), dense channels-first.
//   CONCATENATION (2)   inputs joined on channels-first axis ConcatOptions.axis (non-negative).
//   SPLIT (49), SPLIT_V (102)  the input cut on channels-first axis SplitOptions.axis
//                       (negative form) into the sizes of the `splits` array.
//   PACK (83)           inputs stacked on the TFLite axis whose channels-first form (for the
//                       output rank dims + 1) is PackOptions.axis.
//   TILE (69)           the input repeated TileOptions.tile = [n, c, h, w] times per
//                       channels-first axis.


namespace vnnx::sim {

namespace movement {

/// outer = product of dims before `axis`, inner = product after it.
inline void around(const tensor_ref& t, std::size_t axis, std::int64_t& outer, std::int64_t& inner) {
    outer = inner = 1;
    for (std::size_t i = 0; i < axis; ++i) outer *= t.shape[i];
    for (std::size_t i = axis + 1; i < t.rank(); ++i) inner *= t.shape[i];
}

/// The dims of `a` and `b` agree everywhere except on `axis`.
inline bool same_off_axis(const tensor_ref& a, const tensor_ref& b, std::size_t axis) {
    if (a.rank() != b.rank()) return false;
    for (std::size_t i = 0; i < a.rank(); ++i)
        if (i != axis && a.shape[i] != b.shape[i]) return false;
    return true;
}

}  // namespace movement

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::CONCATENATION)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto n_in = static_cast<std::size_t>(c.rec.num_inputs);
        if (c.rec.num_outputs != 1 || n_in < 1 || c.tensors.size() != n_in + 1)
            c.reject("expects num_inputs inputs and one output");
        const tensor_ref& out = c.tensors[n_in];
        const auto axis = c.rec.options.get<format::node_options::ConcatOptions>().axis;
        if (axis < 0 || static_cast<std::size_t>(axis) >= out.rank())
            c.reject("axis " + std::to_string(axis) + " is outside the output rank " + std::to_string(out.rank()));
        const auto ax = static_cast<std::size_t>(axis);
        std::int64_t sum = 0;
        for (std::size_t i = 0; i < n_in; ++i) {
            const tensor_ref& x = c.tensors[i];
            if (x.elem != out.elem || x.type != out.type) c.reject("input " + std::to_string(i) + " calc type differs from the output");
            if (!movement::same_off_axis(x, out, ax)) c.reject("input " + std::to_string(i) + " shape does not match the output off the axis");
            sum += x.shape[ax];
        }
        if (sum != out.shape[ax]) c.reject("input sizes along the axis do not add up to the output's");
        std::int64_t outer, inner;
        movement::around(out, ax, outer, inner);
        std::size_t pos = 0;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::size_t i = 0; i < n_in; ++i) {
                const tensor_ref& x = c.tensors[i];
                const std::size_t chunk = static_cast<std::size_t>(x.shape[ax] * inner) * x.elem;
                std::memmove(out.data + pos, x.data + static_cast<std::size_t>(o) * chunk, chunk);
                pos += chunk;
            }
    }
};

namespace movement {

struct split_exec {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto n_out = static_cast<std::size_t>(c.rec.num_outputs);
        if (c.rec.num_inputs != 1 || n_out < 1 || c.tensors.size() != n_out + 1)
            c.reject("expects one input and num_outputs outputs");
        const tensor_ref& in = c.tensors[0];
        const auto so = c.rec.options.get<format::node_options::SplitOptions>();
        const auto r = static_cast<std::int32_t>(in.rank());
        if (so.axis < -r || so.axis >= 0) c.reject("axis " + std::to_string(so.axis) + " is outside the input rank " + std::to_string(r));
        const auto ax = static_cast<std::size_t>(so.axis + r);
        const auto sizes = c.int32s(so.splits, n_out, "splits");
        std::int64_t sum = 0;
        for (std::size_t k = 0; k < n_out; ++k) {
            const tensor_ref& y = c.tensors[1 + k];
            if (y.elem != in.elem || y.type != in.type) c.reject("output " + std::to_string(k) + " calc type differs from the input");
            if (!same_off_axis(y, in, ax) || y.shape[ax] != sizes[k])
                c.reject("output " + std::to_string(k) + " shape does not match split size " + std::to_string(sizes[k]));
            if (sizes[k] > so.max_split) c.reject("split size " + std::to_string(sizes[k]) + " exceeds max_split");
            sum += sizes[k];
        }
        if (sum != in.shape[ax]) c.reject("split sizes do not add up to the input's axis");
        std::int64_t outer, inner;
        around(in, ax, outer, inner);
        std::size_t pos = 0;
        for (std::int64_t o = 0; o < outer; ++o)
            for (std::size_t k = 0; k < n_out; ++k) {
                const tensor_ref& y = c.tensors[1 + k];
                const std::size_t chunk = static_cast<std::size_t>(y.shape[ax] * inner) * y.elem;
                std::memmove(y.data + static_cast<std::size_t>(o) * chunk, in.data + pos, chunk);
                pos += chunk;
            }
    }
};

}  // namespace movement

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::SPLIT)> : movement::split_exec {};
template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::SPLIT_V)> : movement::split_exec {};

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::PACK)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        const auto po = c.rec.options.get<format::node_options::PackOptions>();
        const auto n_in = static_cast<std::size_t>(c.rec.num_inputs);
        if (c.rec.num_outputs != 1 || n_in < 1 || c.tensors.size() != n_in + 1 || po.count != c.rec.num_inputs)
            c.reject("expects count inputs and one output");
        const tensor_ref& out = c.tensors[n_in];
        const auto orank = static_cast<std::int32_t>(out.rank());
        if (po.dims + 1 != orank) c.reject("PackOptions.dims " + std::to_string(po.dims) + " is not the output rank - 1");
        const std::int32_t a = movement::tflite_axis_of_cf(po.axis + orank, orank);
        if (a < 0) c.reject("axis " + std::to_string(po.axis) + " is outside the output rank");
        const auto dst = movement::tflite_view(out);
        if (dst.dims[static_cast<std::size_t>(a)] != po.count) c.reject("the output's packed axis does not hold count entries");
        for (std::size_t k = 0; k < n_in; ++k) {
            const tensor_ref& x = c.tensors[k];
            if (x.elem != out.elem || x.type != out.type) c.reject("input " + std::to_string(k) + " calc type differs from the output");
            const auto part = movement::fix_axis(dst, static_cast<std::size_t>(a), static_cast<std::int64_t>(k));
            if (static_cast<std::uint64_t>(part.count()) != x.count || static_cast<std::int32_t>(x.rank()) != po.dims)
                c.reject("input " + std::to_string(k) + " does not fill one entry of the packed axis");
            movement::copy(movement::tflite_view(x), part);
        }
    }
};

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::TILE)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.rec.num_outputs != 1 || c.tensors.size() != 2) c.reject("expects one input and one output");
        const tensor_ref& in = c.tensors[0];
        const tensor_ref& out = c.tensors[1];
        if (in.elem != out.elem || in.type != out.type) c.reject("input and output calc types differ");
        const auto tile = c.rec.options.get<format::node_options::TileOptions>().tile;
        if (in.rank() > 4 || out.rank() != in.rank()) c.reject("input rank must be 1..4 and equal the output rank");
        std::array<std::int64_t, 4> d{1, 1, 1, 1}, od{};
        for (std::size_t i = 0; i < in.rank(); ++i) d[4 - in.rank() + i] = in.shape[i];
        for (std::size_t j = 0; j < 4; ++j) {
            if (tile[j] < 1) c.reject("tile entry " + std::to_string(j) + " must be at least 1");
            od[j] = d[j] * tile[j];
        }
        for (std::size_t i = 0; i < out.rank(); ++i)
            if (out.shape[i] != od[4 - out.rank() + i]) c.reject("output shape is not the input tiled by TileOptions.tile");
        for (std::size_t j = 0; j + out.rank() < 4; ++j)
            if (od[j] != 1) c.reject("TileOptions.tile repeats an axis the tensors do not have");
        const std::size_t es = in.elem;
        const std::size_t row = static_cast<std::size_t>(d[3]) * es;
        std::size_t pos = 0;
        for (std::int64_t n = 0; n < od[0]; ++n)
            for (std::int64_t ch = 0; ch < od[1]; ++ch)
                for (std::int64_t y = 0; y < od[2]; ++y) {
                    const std::int64_t src_row = ((n % d[0]) * d[1] + ch % d[1]) * d[2] + y % d[2];
                    for (std::int64_t t = 0; t < tile[3]; ++t) {
                        std::memcpy(out.data + pos, in.data + static_cast<std::size_t>(src_row) * row, row);
                        pos += row;
                    }
                }
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/nodes/concat_split.hpp
// ---- begin vnnx/sim/nodes/mean.hpp
// MEAN (40) node: a MEAN that starts its split (lowering.md §7.7.1). Tensors: the input, the
// output; node union reduce8; the same arithmetic as the MEAN layer (sim/layers/reduce.hpp).


namespace vnnx::sim {

template <>
struct node_exec<static_cast<std::int32_t>(builtin_operator::MEAN)> {
    static constexpr bool defined = true;
    static void run(node_context& c) {
        if (c.rec.num_inputs != 1 || c.rec.num_outputs != 1 || c.tensors.size() < 2)
            c.reject("expects one input and one output tensor");
        const auto r8 = c.rec.options.get<format::node_options::reduce8>();
        const auto a = reduce_exec_detail::args_of(c, r8, static_cast<std::int32_t>(builtin_operator::MEAN), c.tensors[1]);
        reduce_exec_detail::run_reduce(c, c.tensors[0], c.tensors[1], a);
    }
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/nodes/mean.hpp
// ---- end vnnx/sim/nodes/all.hpp

namespace vnnx::sim {

namespace detail {
template <std::size_t... I>
constexpr std::array<node_fn, sizeof...(I)> make_node_table(std::index_sequence<I...>) {
    return {{[] {
        if constexpr (node_exec<static_cast<std::int32_t>(I)>::defined) return &node_exec<static_cast<std::int32_t>(I)>::run;
        else return static_cast<node_fn>(nullptr);
    }()...}};
}
template <std::size_t... I>
constexpr std::array<layer_fn, sizeof...(I)> make_layer_table(std::index_sequence<I...>) {
    return {{[] {
        if constexpr (layer_exec<static_cast<std::int32_t>(I)>::defined) return &layer_exec<static_cast<std::int32_t>(I)>::run;
        else return static_cast<layer_fn>(nullptr);
    }()...}};
}
inline constexpr auto node_table = make_node_table(std::make_index_sequence<max_type_code + 1>{});
inline constexpr auto layer_table = make_layer_table(std::make_index_sequence<max_type_code + 1>{});
}  // namespace detail

[[nodiscard]] inline node_fn node_function(std::int32_t type) noexcept {
    return type >= 0 && type <= max_type_code ? detail::node_table[static_cast<std::size_t>(type)] : nullptr;
}
[[nodiscard]] inline layer_fn layer_function(std::int32_t type) noexcept {
    return type >= 0 && type <= max_type_code ? detail::layer_table[static_cast<std::size_t>(type)] : nullptr;
}

}  // namespace vnnx::sim
// ---- end vnnx/sim/registry.hpp

namespace vnnx::sim {

struct run_options {
    isa_kind isa = best_isa();
    unsigned threads = 1;
};

/// Element type of a calc type as an .npy dtype.
inline dtype dtype_of_calc(std::int32_t type) {
    switch (type) {
        case 0: return dtype::uint8;
        case 1: return dtype::int8;
        case 2: return dtype::int16;
        case 3: return dtype::int32;
        default: fail_input("calc type " + std::to_string(type) + " has no array type");
    }
}

class machine {
public:
    /// `bytes` must outlive the machine.
    machine(std::span<const std::byte> bytes, std::string source, run_options opt = {})
        : view_(bytes, std::move(source)), opt_(opt) {
        if (!isa_supported(opt_.isa))
            fail(error_kind::usage, "the ISA '" + std::string(isa_name(opt_.isa)) + "' is not supported by this CPU");
        if (opt_.threads > 1) pool_ = std::make_unique<thread_pool>(opt_.threads);
        // allocate_bytes comes from the file: bounded before it sizes an allocation (issue 8).
        check_limit(view_.header().allocate_bytes, active_limits().max_activation_bytes,
                    view_.source() + ": header allocate_bytes", "VNNX_MAX_ACTIVATION_BYTES");
        memory_.assign(view_.header().allocate_bytes, std::byte{0});
        std::memcpy(memory_.data(), bytes.data(), bytes.size());
        for (std::size_t k = 0; k < view_.num_nodes(); ++k) {
            const auto type = view_.node(k).type;
            if (node_function(type) == nullptr)
                fail(error_kind::unsupported, view_.source() + ": " + format::model_view::describe("node", k, type) +
                                                  ": the simulator has no executor for this node type");
            const auto layers = view_.node_layers(k);
            for (std::size_t l = 0; l < layers.size(); ++l)
                if (layer_function(layers[l].type) == nullptr)
                    fail(error_kind::unsupported, view_.source() + ": node " + std::to_string(k) + " " +
                                                      format::model_view::describe("layer", l, layers[l].type) +
                                                      ": the simulator has no executor for this layer type");
        }
        node_cache_.resize(view_.num_nodes());
        layer_cache_.resize(view_.num_layers());
    }

    [[nodiscard]] const format::model_view& view() const noexcept { return view_; }

    /// Writes graph input i (channels-first, the tensor's calc type and element count).
    void set_input(std::size_t i, std::span<const std::byte> data) {
        const auto& io = view_.input(i);
        const std::uint64_t bytes = io.length * format::element_size(io.type);
        if (data.size() != bytes)
            fail_input(view_.source() + ": input " + std::to_string(i) + " needs " + std::to_string(bytes) + " bytes, got " +
                       std::to_string(data.size()));
        std::memcpy(region(io.direct, bytes, "input " + std::to_string(i)), data.data(), data.size());
    }
    /// Graph output o after run().
    [[nodiscard]] std::span<const std::byte> output(std::size_t o) {
        const auto& io = view_.output(o);
        const std::uint64_t bytes = io.length * format::element_size(io.type);
        return {region(io.direct, bytes, "output " + std::to_string(o)), static_cast<std::size_t>(bytes)};
    }

    /// Runs every node; calls `after_node(k)` after node k (per-node comparison, progress).
    template <class F>
    void run(F&& after_node) {
        const execution ex{opt_.isa, pool_.get()};
        std::size_t layer_base = 0;
        for (std::size_t k = 0; k < view_.num_nodes(); ++k) {
            const auto& node = view_.node(k);
            auto all = resolve(k);
            const std::size_t own = static_cast<std::size_t>(std::max(0, node.num_inputs)) +
                                    static_cast<std::size_t>(std::max(0, node.num_outputs));
            const auto layers = view_.node_layers(k);
            if (own > all.size())
                fail_input(view_.source() + ": " + format::model_view::describe("node", k, node.type) + ": " +
                           std::to_string(own) + " node tensors but only " + std::to_string(all.size()) + " records");
            if (node.skip != 0) {
                // Zero-copy split or concatenation: its parts already alias one buffer, the
                // node does no work (vnnx-format.md §3.2).
                layer_base += layers.size();
                after_node(k);
                continue;
            }
            node_context nc{view_, node, std::span<tensor_ref>(all.data(), own),
                            format::model_view::describe("node", k, node.type), ex, k, &node_cache_[k]};
            node_function(node.type)(nc);
            std::size_t next = own;
            for (std::size_t l = 0; l < layers.size(); ++l) {
                const auto& layer = layers[l];
                const std::size_t n = layer.num_tensors < 0 ? 0 : static_cast<std::size_t>(layer.num_tensors);
                const std::string where = "node " + std::to_string(k) + " " +
                                          format::model_view::describe("layer", l, layer.type);
                if (next + n > all.size())
                    fail_input(view_.source() + ": " + where + ": needs " + std::to_string(n) +
                               " tensor records beyond those of its node");
                layer_context lc{view_, layer, std::span<tensor_ref>(all.data() + next, n), where, ex, k,
                                 &layer_cache_[layer_base + l]};
                layer_function(layer.type)(lc);
                next += n;
            }
            layer_base += layers.size();
            after_node(k);
        }
    }
    void run() {
        run([](std::size_t) {});
    }

    /// The tensors of node k resolved to memory (node tensors, then each layer's).
    [[nodiscard]] std::vector<tensor_ref> resolve(std::size_t k) {
        std::vector<tensor_ref> out;
        const auto recs = view_.node_tensors(k);
        out.reserve(recs.size());
        for (std::size_t i = 0; i < recs.size(); ++i) {
            const auto& r = recs[i];
            tensor_ref t;
            t.type = r.type;
            t.elem = format::element_size(r.type);
            if (t.elem == 0)
                fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) +
                           ": unknown calc type " + std::to_string(r.type));
            if (r.dims < 0 || r.dims > 6)
                fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) + ": dims " +
                           std::to_string(r.dims) + " is outside 0..6");
            t.count = 1;
            for (std::int32_t d = 0; d < r.dims; ++d) {
                const std::int32_t v = r.shape[static_cast<std::size_t>(d)];
                if (v <= 0 || v > (1 << 24))
                    fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) +
                               ": shape entry " + std::to_string(v) + " is not a positive size");
                t.shape.push_back(v);
                t.count *= static_cast<std::uint64_t>(v);
                if (t.count > (std::uint64_t{1} << 32))
                    fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) +
                               ": too many elements");
            }
            t.scale = r.scale;
            t.zero = r.zero;
            if (r.direct.absent())
                fail_input(view_.source() + ": node " + std::to_string(k) + " tensor " + std::to_string(i) + " has no buffer");
            t.data = region(r.direct.value, t.count * t.elem,
                            "node " + std::to_string(k) + " tensor " + std::to_string(i));
            out.push_back(std::move(t));
        }
        return out;
    }

private:
    std::byte* region(std::uint64_t offset, std::uint64_t bytes, const std::string& what) {
        if (offset > memory_.size() || memory_.size() - offset < bytes)
            fail_input(view_.source() + ": " + what + ": " + std::to_string(bytes) + " bytes at offset " +
                       std::to_string(offset) + " lie outside the model's " + std::to_string(memory_.size()) +
                       " bytes of memory");
        return memory_.data() + offset;
    }

    format::model_view view_;
    run_options opt_;
    std::unique_ptr<thread_pool> pool_;
    std::vector<std::byte> memory_;
    std::vector<std::shared_ptr<void>> node_cache_, layer_cache_;
};

}  // namespace vnnx::sim
// ---- end vnnx/sim/machine.hpp
// ---- begin vnnx/sim/io.hpp
// Graph inputs and outputs between the user's arrays and the simulator's tensors.
// Users hand over arrays in the TFLite layout (channels last, NHWC) and dtype; VNNX tensors are
// channels first (lowering.md §2.1: a shape of rank >= 3 moves its last axis to position -3).
// Also the SDK's default test input (vnnx_compile without -i: NumPy seed 42, randint(0, 256)).
#include <random>


namespace vnnx::sim {

/// Which layout the arrays of `vnnx infer` use.
enum class io_layout { tflite, vnnx };

/// Element type of a VNNX calc type as an array dtype.
[[nodiscard]] inline dtype io_dtype(std::int32_t calc_type) {
    switch (calc_type) {
        case 0: return dtype::uint8;
        case 1: return dtype::int8;
        case 2: return dtype::int16;
        case 3: return dtype::int32;
        default: fail_input("calc type " + std::to_string(calc_type) + " has no array type");
    }
}

/// [.., H, W, C] -> [.., C, H, W] (rank >= 3); lower ranks are unchanged.
[[nodiscard]] inline std::vector<std::int64_t> channels_first_shape(std::span<const std::int64_t> s) {
    std::vector<std::int64_t> out(s.begin(), s.end());
    if (out.size() >= 3) std::rotate(out.end() - 3, out.end() - 1, out.end());
    return out;
}

/// [.., C, H, W] -> [.., H, W, C] (rank >= 3); lower ranks are unchanged.
[[nodiscard]] inline std::vector<std::int64_t> channels_last_shape(std::span<const std::int64_t> s) {
    std::vector<std::int64_t> out(s.begin(), s.end());
    if (out.size() >= 3) std::rotate(out.end() - 3, out.end() - 2, out.end());
    return out;
}

namespace detail {

/// Moves the last three axes [A, B, C] -> [C, A, B] (to_first) or [A, B, C] -> [B, C, A];
/// leading axes are an outer loop. Works on bytes, any element size.
inline ndarray rotate_last3(const ndarray& a, bool to_first) {
    if (a.shape.size() < 3) return a;
    const std::size_t r = a.shape.size();
    const auto d0 = static_cast<std::size_t>(a.shape[r - 3]), d1 = static_cast<std::size_t>(a.shape[r - 2]),
               d2 = static_cast<std::size_t>(a.shape[r - 1]);
    ndarray out(a.type, to_first ? channels_first_shape(a.shape) : channels_last_shape(a.shape));
    const std::size_t e = dtype_size(a.type), plane = d0 * d1 * d2;
    const std::size_t outer = plane == 0 ? 0 : a.element_count() / plane;
    for (std::size_t o = 0; o < outer; ++o) {
        const std::byte* src = a.data.data() + o * plane * e;
        std::byte* dst = out.data.data() + o * plane * e;
        for (std::size_t i = 0; i < d0; ++i)
            for (std::size_t j = 0; j < d1; ++j)
                for (std::size_t k = 0; k < d2; ++k) {
                    const std::size_t from = (i * d1 + j) * d2 + k;
                    // to_first: source [H=i, W=j, C=k] -> [C=k, H=i, W=j]; else [C=i, H=j, W=k] -> [H=j, W=k, C=i].
                    const std::size_t to = to_first ? (k * d0 + i) * d1 + j : (j * d2 + k) * d0 + i;
                    std::memcpy(dst + to * e, src + from * e, e);
                }
    }
    return out;
}

/// Shapes equal up to leading 1s (the SDK adds or drops the batch dimension of .npy inputs).
inline bool same_shape_up_to_batch(std::span<const std::int64_t> a, std::span<const std::int64_t> b) {
    auto strip = [](std::span<const std::int64_t> s) {
        std::size_t i = 0;
        while (i + 1 < s.size() && s[i] == 1) ++i;
        return std::vector<std::int64_t>(s.begin() + static_cast<std::ptrdiff_t>(i), s.end());
    };
    return strip(a) == strip(b);
}

inline std::string shape_text(std::span<const std::int64_t> s) {
    std::string out = "(";
    for (std::size_t i = 0; i < s.size(); ++i) out += (i ? ", " : "") + std::to_string(s[i]);
    return out + (s.size() == 1 ? ",)" : ")");
}

}  // namespace detail

/// An NHWC array as channels first.
[[nodiscard]] inline ndarray to_channels_first(const ndarray& a) { return detail::rotate_last3(a, true); }
/// A channels-first array as NHWC.
[[nodiscard]] inline ndarray to_channels_last(const ndarray& a) { return detail::rotate_last3(a, false); }

/// The shape an io tensor has in `layout` (its record holds the channels-first shape).
[[nodiscard]] inline std::vector<std::int64_t> io_shape(const format::io_tensor& io, io_layout layout) {
    std::vector<std::int64_t> cf(io.shape.begin(), io.shape.end());
    return layout == io_layout::vnnx ? cf : channels_last_shape(cf);
}

/// TFLite's QUANTIZE of a float array (round half away from zero, then clamp) into `to`.
[[nodiscard]] inline ndarray quantize_array(const ndarray& a, dtype to, float scale, std::int32_t zero,
                                            const std::string& what) {
    if (a.type != dtype::float32) fail_input(what + ": only float32 arrays can be quantized");
    if (!(scale > 0)) fail_input(what + ": the tensor's scale " + std::to_string(scale) + " is not positive");
    std::int64_t lo = 0, hi = 0;
    switch (to) {
        case dtype::int8: lo = -128, hi = 127; break;
        case dtype::uint8: lo = 0, hi = 255; break;
        case dtype::int16: lo = -32768, hi = 32767; break;
        default: fail_input(what + ": cannot quantize to " + std::string(dtype_name(to)));
    }
    ndarray out(to, a.shape);
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const double q = std::round(static_cast<double>(a.get<float>(i)) / scale) + zero;
        out.set(i, static_cast<std::int64_t>(std::clamp<double>(q, static_cast<double>(lo), static_cast<double>(hi))));
    }
    return out;
}

/// An int64 array (TFLite's ARG_MAX default) as the int32 of its VNNX io tensor: the format has
/// no 64-bit type, the values must fit.
[[nodiscard]] inline ndarray narrow_int64(const ndarray& a, const std::string& what) {
    if (a.type != dtype::int64) fail_input(what + ": only int64 arrays are narrowed to int32");
    ndarray out(dtype::int32, a.shape);
    for (std::size_t i = 0; i < a.element_count(); ++i) {
        const auto v = a.get<std::int64_t>(i);
        if (v < INT32_MIN || v > INT32_MAX) fail_input(what + ": value " + std::to_string(v) + " does not fit in int32");
        out.set(i, v);
    }
    return out;
}

/// The channels-first bytes of an io tensor from a user array in `layout`. The dtype must be the
/// tensor's (float32 is quantized with the tensor's scale and zero point when the model's float
/// input was folded away); the shape must match up to a leading batch of 1.
[[nodiscard]] inline std::vector<std::byte> io_bytes(const format::io_tensor& io, const ndarray& a, io_layout layout,
                                                     const std::string& what) {
    const dtype want = io_dtype(io.type);
    const auto shape = io_shape(io, layout);
    if (!detail::same_shape_up_to_batch(a.shape, shape))
        fail_input(what + ": shape " + detail::shape_text(a.shape) + " does not match the model's " +
                   detail::shape_text(shape) + (layout == io_layout::tflite ? " (TFLite layout, channels last)" : " (VNNX layout, channels first)"));
    ndarray v = a;
    if (v.type != want) {
        if (v.type != dtype::float32)
            fail_input(what + ": dtype " + std::string(dtype_name(v.type)) + " does not match the model's " +
                       std::string(dtype_name(want)));
        v = quantize_array(v, want, io.scale, io.zero_point, what);
    }
    v.shape = shape;
    if (layout == io_layout::tflite) v = to_channels_first(v);
    return std::move(v.data);
}

/// An io tensor's channels-first bytes as an array in `layout`.
[[nodiscard]] inline ndarray io_array(const format::io_tensor& io, std::span<const std::byte> bytes, io_layout layout,
                                      const std::string& what) {
    ndarray cf(io_dtype(io.type), std::vector<std::int64_t>(io.shape.begin(), io.shape.end()));
    if (bytes.size() != cf.data.size())
        fail_input(what + ": " + std::to_string(bytes.size()) + " bytes for a tensor of " +
                   std::to_string(cf.data.size()) + " bytes");
    if (!bytes.empty()) std::memcpy(cf.data.data(), bytes.data(), bytes.size());
    return layout == io_layout::vnnx ? cf : to_channels_last(cf);
}

/// The SDK's pseudo-random test input: integers 0..255 cast to `type` (so int8 wraps), drawn in
/// C order of `shape`. With seed 42 this reproduces NumPy's `np.random.seed(42);
/// np.random.randint(0, 256, shape)`: the legacy generator is MT19937 seeded by init_genrand, and
/// a 0..255 draw keeps the low 8 bits of one 32-bit output (masked rejection never rejects).
/// The SDK seeds again for every input (`default_input_arr` of infer_tflite.py).
[[nodiscard]] inline ndarray random_array(std::mt19937& gen, dtype type, std::vector<std::int64_t> shape) {
    ndarray out(type, std::move(shape));
    for (std::size_t i = 0; i < out.element_count(); ++i) {
        const auto v = static_cast<std::uint8_t>(gen() & 0xFFu);
        if (type == dtype::float32) out.set(i, static_cast<float>(v));
        else out.set(i, static_cast<std::int64_t>(v));
    }
    return out;
}

/// The default seed of vnnx_compile's generated test input.
inline constexpr std::uint32_t default_input_seed = 42;

}  // namespace vnnx::sim
// ---- end vnnx/sim/io.hpp
// ---- begin vnnx/report/compare.hpp
// How far two integer arrays are apart: what `vnnx compare` and `vnnx demo` print, and the rule
// that decides whether the simulator agrees with the reference.


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
// ---- end vnnx/report/compare.hpp
// ---- begin vnnx/report/compile_report.hpp
// What a compilation produced, per node and per node type, with totals: as JSON (`vnnx compile
// --report`) and as a readable table (`vnnx compile -v`, `vnnx demo`).



namespace vnnx::report {

/// Where a compilation came from and what it was for (the result does not know).
struct compile_info {
    std::string source;  // the .tflite file
    std::string output;  // the .vnnx file (may be empty)
    std::string preset;  // V250, V500, V1000
};

/// Sums over the nodes of one type.
struct type_totals {
    std::size_t nodes = 0, layers = 0;
    std::int64_t weight_bytes = 0, macs = 0;
    std::int32_t max_scratchpad_bytes = 0;
};

[[nodiscard]] inline std::map<std::string, type_totals> totals_by_type(const compile_result& r) {
    std::map<std::string, type_totals> out;
    for (const auto& n : r.nodes) {
        auto& t = out[n.type];
        ++t.nodes;
        t.layers += n.layers.size();
        t.weight_bytes += n.weight_bytes;
        t.macs += n.macs;
        t.max_scratchpad_bytes = std::max(t.max_scratchpad_bytes, n.scratchpad_bytes);
    }
    return out;
}

[[nodiscard]] inline std::int64_t total_weight_bytes(const compile_result& r) {
    std::int64_t w = 0;
    for (const auto& n : r.nodes) w += n.weight_bytes;
    return w;
}

namespace detail {

inline std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"') out += "\\\"";
        else if (c == '\\') out += "\\\\";
        else if (c < 0x20) out += fmt::format("\\u{:04x}", c);
        else out += ch;
    }
    return out + "\"";
}

template <class Range>
std::string json_list(const Range& r) {
    std::string out = "[";
    bool first = true;
    for (const auto& v : r) {
        out += fmt::format("{}{}", first ? "" : ", ", v);
        first = false;
    }
    return out + "]";
}

inline std::string shape_text(const std::vector<std::int32_t>& s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) out += fmt::format("{}{}", i ? "x" : "", s[i]);
    return out.empty() ? "-" : out;
}

}  // namespace detail

/// One JSON object: {"source", "output", "preset", "nodes": [...], "node_types": {...}, "totals": {...}}.
[[nodiscard]] inline std::string compile_json(const compile_result& r, const compile_info& info) {
    using detail::json_list;
    using detail::json_string;
    std::string out = fmt::format("{{\"source\": {}, \"output\": {}, \"preset\": {},\n \"nodes\": [", json_string(info.source),
                                  json_string(info.output), json_string(info.preset));
    for (std::size_t i = 0; i < r.nodes.size(); ++i) {
        const auto& n = r.nodes[i];
        std::vector<std::string> layers;
        for (const auto& l : n.layers) layers.push_back(json_string(l));
        out += fmt::format(
            "{}\n  {{\"index\": {}, \"type\": {}, \"ops\": {}, \"layers\": {}, \"input_shape\": {}, \"output_shape\": {}, "
            "\"output\": {}, \"weight_bytes\": {}, \"macs\": {}, \"scratchpad_bytes\": {}}}",
            i ? "," : "", n.index, json_string(n.type), json_string(n.ops), json_list(layers), json_list(n.input_shape),
            json_list(n.output_shape), json_string(n.output_name), n.weight_bytes, n.macs, n.scratchpad_bytes);
    }
    out += "],\n \"node_types\": {";
    bool first = true;
    for (const auto& [type, t] : totals_by_type(r)) {
        out += fmt::format("{}\n  {}: {{\"nodes\": {}, \"layers\": {}, \"weight_bytes\": {}, \"macs\": {}, \"max_scratchpad_bytes\": {}}}",
                           first ? "" : ",", json_string(type), t.nodes, t.layers, t.weight_bytes, t.macs, t.max_scratchpad_bytes);
        first = false;
    }
    std::size_t layers = 0;
    for (const auto& n : r.nodes) layers += n.layers.size();
    out += fmt::format(
        "}},\n \"totals\": {{\"nodes\": {}, \"layers\": {}, \"file_bytes\": {}, \"allocate_bytes\": {}, \"weight_bytes\": {}, "
        "\"macs\": {}}}}}\n",
        r.nodes.size(), layers, r.bytes.size(), r.allocate_bytes, total_weight_bytes(r), r.macs);
    return out;
}

/// A readable table: one row per node, then per node type, then the totals.
[[nodiscard]] inline std::string compile_table(const compile_result& r, const compile_info& info) {
    std::string out = fmt::format("{} -> {} ({})\n", info.source, info.output.empty() ? "(memory)" : info.output, info.preset);
    out += fmt::format("{:>4}  {:<18} {:<28} {:>12} {:>12} {:>10} {:>12} {:>10}  {}\n", "node", "type", "operators", "input",
                       "output", "weights", "MACs", "scratchpad", "layers");
    for (const auto& n : r.nodes) {
        std::string layers;
        for (const auto& l : n.layers) layers += (layers.empty() ? "" : " ") + l;
        std::string ops = n.ops.size() > 28 ? n.ops.substr(0, 25) + "..." : n.ops;
        out += fmt::format("{:>4}  {:<18} {:<28} {:>12} {:>12} {:>10} {:>12} {:>10}  {}\n", n.index, n.type, ops,
                           detail::shape_text(n.input_shape), detail::shape_text(n.output_shape), n.weight_bytes, n.macs,
                           n.scratchpad_bytes, layers.empty() ? "-" : layers);
    }
    out += fmt::format("\n{:<18} {:>6} {:>7} {:>12} {:>14} {:>12}\n", "node type", "nodes", "layers", "weights", "MACs",
                       "scratchpad");
    for (const auto& [type, t] : totals_by_type(r))
        out += fmt::format("{:<18} {:>6} {:>7} {:>12} {:>14} {:>12}\n", type, t.nodes, t.layers, t.weight_bytes, t.macs,
                           t.max_scratchpad_bytes);
    out += fmt::format("\ntotal: {} nodes, file {} bytes, allocate {} bytes, weights {} bytes, {} MACs ({:.3f} M)\n",
                       r.nodes.size(), r.bytes.size(), r.allocate_bytes, total_weight_bytes(r), r.macs,
                       static_cast<double>(r.macs) / 1e6);
    return out;
}

/// Several compilations of one model side by side (the CLI's -s V250,V500,V1000): one column
/// per preset, one row per size.
[[nodiscard]] inline std::string sizes_table(const std::vector<std::pair<std::string, const compile_result*>>& cols) {
    std::string out = fmt::format("\n{:<16}", "size");
    for (const auto& [name, r] : cols) out += fmt::format(" {:>14}", name);
    out += "\n";
    auto row = [&](std::string_view what, auto value) {
        out += fmt::format("{:<16}", what);
        for (const auto& [name, r] : cols) out += fmt::format(" {:>14}", value(*r));
        out += "\n";
    };
    row("file bytes", [](const compile_result& r) { return r.bytes.size(); });
    row("allocate bytes", [](const compile_result& r) { return r.allocate_bytes; });
    row("weight bytes", [](const compile_result& r) { return total_weight_bytes(r); });
    row("nodes", [](const compile_result& r) { return r.nodes.size(); });
    row("layers", [](const compile_result& r) {
        std::size_t n = 0;
        for (const auto& nd : r.nodes) n += nd.layers.size();
        return n;
    });
    row("max scratchpad", [](const compile_result& r) {
        std::int32_t m = 0;
        for (const auto& nd : r.nodes) m = std::max(m, nd.scratchpad_bytes);
        return m;
    });
    row("MACs", [](const compile_result& r) { return r.macs; });
    return out;
}

}  // namespace vnnx::report
// ---- end vnnx/report/compile_report.hpp
// ---- begin vnnx/ops/sdk_list.hpp
// The operators of lowering.md §6: every key of the SDK's supported-operator list. `vnnx ops`
// lists those without a trait as not supported, so the OPS table shows what is still missing.


namespace vnnx::ops {

/// The TFLite builtins among the 75 rows of §6 (SILU there has no builtin: it is the
/// LOGISTIC→MUL pattern, see `patterns`). UNIDIRECTIONAL_SEQUENCE_LSTM is listed but has no lowering.
inline constexpr std::array sdk_operators{
    builtin_operator::ABS, builtin_operator::ADD, builtin_operator::ARG_MAX, builtin_operator::ARG_MIN,
    builtin_operator::AVERAGE_POOL_2D, builtin_operator::BATCH_MATMUL, builtin_operator::BATCH_TO_SPACE_ND,
    builtin_operator::CAST, builtin_operator::CONCATENATION, builtin_operator::CONV_2D,
    builtin_operator::DEPTHWISE_CONV_2D, builtin_operator::DEPTH_TO_SPACE, builtin_operator::DEQUANTIZE,
    builtin_operator::DILATE, builtin_operator::DIV, builtin_operator::ELU, builtin_operator::EQUAL,
    builtin_operator::EXP, builtin_operator::EXPAND_DIMS, builtin_operator::FULLY_CONNECTED, builtin_operator::GATHER,
    builtin_operator::GELU, builtin_operator::GREATER, builtin_operator::GREATER_EQUAL, builtin_operator::HARD_SWISH,
    builtin_operator::L2_NORMALIZATION, builtin_operator::LEAKY_RELU, builtin_operator::LESS,
    builtin_operator::LESS_EQUAL, builtin_operator::LOG, builtin_operator::LOGISTIC, builtin_operator::LOG_SOFTMAX,
    builtin_operator::MAXIMUM, builtin_operator::MAX_POOL_2D, builtin_operator::MEAN, builtin_operator::MINIMUM,
    builtin_operator::MIRROR_PAD, builtin_operator::MUL, builtin_operator::NEG, builtin_operator::NOT_EQUAL,
    builtin_operator::PACK, builtin_operator::PAD, builtin_operator::PADV2, builtin_operator::POW,
    builtin_operator::PRELU, builtin_operator::QUANTIZE, builtin_operator::REDUCE_MAX, builtin_operator::REDUCE_MIN,
    builtin_operator::REDUCE_PROD, builtin_operator::RELU, builtin_operator::RELU6, builtin_operator::RELU_0_TO_1,
    builtin_operator::RELU_N1_TO_1, builtin_operator::RESHAPE, builtin_operator::RESIZE_BILINEAR,
    builtin_operator::RESIZE_NEAREST_NEIGHBOR, builtin_operator::RSQRT, builtin_operator::SLICE,
    builtin_operator::SOFTMAX, builtin_operator::SPACE_TO_BATCH_ND, builtin_operator::SPACE_TO_DEPTH,
    builtin_operator::SPLIT, builtin_operator::SPLIT_V, builtin_operator::SQUARED_DIFFERENCE, builtin_operator::SQUEEZE,
    builtin_operator::STRIDED_SLICE, builtin_operator::SUB, builtin_operator::SUM, builtin_operator::TANH,
    builtin_operator::TILE, builtin_operator::TRANSPOSE, builtin_operator::TRANSPOSE_CONV,
    builtin_operator::UNIDIRECTIONAL_SEQUENCE_LSTM, builtin_operator::UNPACK};
static_assert(sdk_operators.size() == 74, "75 rows of lowering.md §6 minus SILU");

[[nodiscard]] constexpr bool in_sdk_list(builtin_operator op) noexcept {
    return std::find(sdk_operators.begin(), sdk_operators.end(), op) != sdk_operators.end();
}

/// Rows of §6 that are patterns of several TFLite operators rather than one builtin.
struct pattern {
    std::string_view name, becomes;
};
inline constexpr std::array patterns{
    pattern{"SILU", "LOGISTIC followed by MUL with its input: one LUT (303) layer"},
};

}  // namespace vnnx::ops
// ---- end vnnx/ops/sdk_list.hpp
// ---- end vnnx.hpp
