#pragma once
// A small TFLite model builder over flatbuffers::FlatBufferBuilder, using the same field lists
// as the reader (schema.hpp). Tests and examples make single-op and small multi-op models with
// it; demo_model() is the built-in demo (a small int8 CNN).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/tflite/model_view.hpp"
#include "vnnx/tflite/schema.hpp"
#include "vnnx/support/linkage.hpp"

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
    [[nodiscard]] std::vector<std::byte> finish() const;

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

#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY std::vector<std::byte> builder::finish() const {
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
#endif

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
