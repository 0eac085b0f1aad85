#pragma once
// tflite::model_view: a verified, read-only, zero-copy view of a TFLite model.
// parse() runs the flatbuffers verifier table by table (driven by the field lists of
// schema.hpp) and then our own rules (indices in range, shapes, buffer sizes, quantization,
// one producer per tensor, no cycles). After parse() every accessor is safe.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/limits.hpp"
#include "vnnx/tflite/schema.hpp"
#include "vnnx/support/linkage.hpp"

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

#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY model_view model_view::parse(std::span<const std::byte> bytes, std::string source) {
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

#endif

}  // namespace vnnx::tflite
