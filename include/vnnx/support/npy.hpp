#pragma once
// NumPy .npy files (format versions 1.0, 2.0, 3.0), little-endian, C order, and a small
// n-dimensional array value type. The reader treats its bytes as untrusted: every length,
// the header dictionary and the data size are checked, and failures name the source.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "vnnx/support/atomic_file.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"

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
