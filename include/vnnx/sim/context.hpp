#pragma once
// What a node or layer executor sees while the simulator runs a VNNX file: the checked view of
// the file, the model's memory image (allocate_bytes, the file at its start), the records of
// its tensors resolved to memory, and the chosen ISA and threads. Executors read parameters
// only from the file (multipliers, shifts, tables, weights) and activations only from the
// memory image at the tensors' offsets, so every run also checks the file's memory plan.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vnnx/format/enums.hpp"
#include "vnnx/format/model_view.hpp"
#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"

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

/// Whether the bytes of two tensors overlap in memory.
[[nodiscard]] inline bool bytes_overlap(const tensor_ref& a, const tensor_ref& b) noexcept {
    return a.data < b.data + b.count * b.elem && b.data < a.data + a.count * a.elem;
}

struct execution {
    isa_kind isa = isa_kind::scalar;
    thread_pool* pool = nullptr;  // null: one thread
    // Whether a node may carry out its layers itself when their intermediate tensors are
    // unobservable (it then leaves them unwritten); off for tools that rerun layers alone.
    bool fuse_layers = true;
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
    // Nodes only: the tensors of the node's layers, and how many of its first layers the node
    // carried out itself (it wrote their final output; the machine skips them).
    std::span<tensor_ref> layer_tensors{};
    std::size_t* layers_done = nullptr;
    // Nodes only: runs the node's layer l through its executor (its own cache and name) on the
    // given tensors, for a node that carries out a layer on other tensors than its records'.
    const std::function<void(std::size_t, std::span<tensor_ref>)>* run_layer = nullptr;
    // Nodes only: a node that also carried out the next node whole (wrote its outputs, leaving
    // tensors nothing reads unwritten) sets *next_node_done; the machine then skips that node.
    // resolve_node gives any node's tensors as the machine resolves them.
    bool* next_node_done = nullptr;
    const std::function<std::vector<tensor_ref>(std::size_t)>* resolve_node = nullptr;

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
    /// Data movement over bytes: one input and one output, both of the same 8-bit calc type.
    void require_unary_8bit() const {
        if (tensors.size() != 2) reject("expects one input and one output tensor");
        require_8bit();
        if (tensors[0].type != tensors[1].type) reject("input and output calc types differ");
    }
    /// A fill value of the record (`what` names the field), checked to be a value of t's 8-bit type.
    [[nodiscard]] std::uint8_t fill_byte(std::int32_t v, const tensor_ref& t, std::string_view what) const {
        if (t.is_signed() ? (v < -128 || v > 127) : (v < 0 || v > 255))
            reject(std::string(what) + " " + std::to_string(v) + " does not fit the 8-bit type");
        return static_cast<std::uint8_t>(v);
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
