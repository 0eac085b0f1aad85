#pragma once
// The reference interpreter: runs subgraph 0 of a TFLite model operator by operator with
// TFLite's 8-bit integer semantics (see the kernel headers beside this one). It defines the
// answer the simulator is compared with, so it stays scalar and simple.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vnnx/quant/activation.hpp"
#include "vnnx/quant/multiplier.hpp"
#include "vnnx/ref/activations.hpp"
#include "vnnx/ref/binary_math.hpp"
#include "vnnx/ref/batch_matmul.hpp"
#include "vnnx/ref/conv.hpp"
#include "vnnx/ref/eltwise.hpp"
#include "vnnx/ref/l2_norm.hpp"
#include "vnnx/ref/log_softmax.hpp"
#include "vnnx/ref/prelu.hpp"
#include "vnnx/ref/layout.hpp"
#include "vnnx/ref/pool.hpp"
#include "vnnx/ref/reduce.hpp"
#include "vnnx/ref/resize.hpp"
#include "vnnx/ref/shape.hpp"
#include "vnnx/ref/softmax.hpp"
#include "vnnx/ref/spatial.hpp"
#include "vnnx/ref/unary_math.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/support/linkage.hpp"
#include "vnnx/support/npy.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::ref {

/// Called after each operator with its index and the interpreter's tensor table.
using node_observer = std::function<void(std::size_t op_index, const std::vector<std::optional<ndarray>>& tensors)>;

/// Called after each CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED of 8-bit types with its
/// accumulators (int32, bias included, before requantization; the output's shape) and output.
using accumulator_observer = std::function<void(std::size_t op_index, const ndarray& accumulators, const ndarray& output)>;

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

    /// Also hands every convolution's accumulators to `a` (which must outlive the run).
    void observe_accumulators(const accumulator_observer* a) { acc_obs_ = a; }

    /// With `targets`, only the operators those tensors depend on run, and the trace's outputs
    /// are those tensors (a graph cut before operators this interpreter may not know).
    /// With keep_all false (and no observer), each tensor is released after the last operator
    /// that reads it, unless it is an output: the trace then holds the outputs only, and a large
    /// model's run touches a fraction of the memory.
    run_trace run(std::vector<ndarray> inputs, const std::vector<std::int32_t>& targets = {}, bool keep_all = true) {
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
        std::vector<bool> needed(g_.operator_count(), targets.empty());
        if (!targets.empty()) {
            std::vector<bool> want(values_.size(), false);
            for (auto t : targets) {
                if (t < 0 || static_cast<std::size_t>(t) >= want.size()) fail_input(src() + ": target tensor " + std::to_string(t) + " out of range");
                want[static_cast<std::size_t>(t)] = true;
            }
            for (std::size_t k = g_.operator_count(); k-- > 0;) {
                const auto o = g_.op(k);
                for (auto t : o.outputs()) needed[k] = needed[k] || (t >= 0 && want[static_cast<std::size_t>(t)]);
                if (needed[k])
                    for (auto t : o.inputs())
                        if (t >= 0 && static_cast<std::size_t>(t) < want.size()) want[static_cast<std::size_t>(t)] = true;
            }
        }
        std::vector<std::size_t> last_use;
        const bool release = !keep_all && !obs_;
        if (release) {
            constexpr auto keep = static_cast<std::size_t>(-1);
            last_use.assign(values_.size(), 0);
            for (std::size_t k = 0; k < g_.operator_count(); ++k)
                if (needed[k])
                    for (auto t : g_.op(k).inputs())
                        if (t >= 0 && static_cast<std::size_t>(t) < last_use.size()) last_use[static_cast<std::size_t>(t)] = k;
            for (auto o : g_.outputs())
                if (o >= 0 && static_cast<std::size_t>(o) < last_use.size()) last_use[static_cast<std::size_t>(o)] = keep;
            for (auto o : targets) last_use[static_cast<std::size_t>(o)] = keep;
        }
        for (std::size_t k = 0; k < g_.operator_count(); ++k) {
            if (!needed[k]) continue;
            op_ = g_.op(k);
            execute();
            if (obs_) obs_(k, values_);
            if (release)
                for (auto t : op_.inputs())
                    if (t >= 0 && static_cast<std::size_t>(t) < last_use.size() && last_use[static_cast<std::size_t>(t)] == k)
                        values_[static_cast<std::size_t>(t)].reset();
        }
        run_trace tr;
        if (targets.empty())
            for (auto o : g_.outputs()) tr.outputs.push_back(value(o));
        for (auto o : targets) tr.outputs.push_back(value(o));
        tr.tensors = std::move(values_);
        return tr;
    }

private:
    const tflite::model_view& m_;
    tflite::subgraph_view g_;
    const node_observer& obs_;
    const accumulator_observer* acc_obs_ = nullptr;
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

    /// SLICE and STRIDED_SLICE: output 0 gets x[start + k·step] for count[i] k per axis, once its
    /// shape is known to hold exactly that many elements of x's type.
    void slice_into_output(const ndarray& x, const std::vector<std::int64_t>& start, const std::vector<std::int64_t>& step,
                           const std::vector<std::int64_t>& count) {
        auto& y = out();
        std::int64_t total = 1;
        for (auto c : count) total *= c;
        if (static_cast<std::int64_t>(y.element_count()) != total || y.type != x.type) bad("output shape does not match the slice");
        strided_copy(x, start, step, count, y);
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

    /// The optional int32 bias at input i (empty when the operator has none).
    std::span<const std::int32_t> optional_bias(std::size_t i) {
        if (!has_input(i)) return {};
        const auto& b = in(i);
        if (b.type != dtype::int32) unsupported("only int32 biases are implemented");
        return view<std::int32_t>(b);
    }

    /// Zero points and per-channel multipliers (input scale x filter scale / output scale) of
    /// a filter operator; the caller sets the activation range and the rounding.
    requant_params filter_requant(const tflite::tensor_view& ti, const tflite::tensor_view& tw,
                                  const tflite::tensor_view& to) const {
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
        return q;
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
    void transpose_conv();
    void spatial(bop kind);
    void compare_or_reduce(bop kind);
    void extra(bop kind);
};

inline void interpreter::conv_like(bop kind) {
    const auto ti = in_tensor(0), tw = in_tensor(1), to = out_tensor();
    require_8bit(ti, "input");
    require_8bit(tw, "filter");
    const auto& x = in(0);
    const auto& w = in(1);
    const std::span<const std::int32_t> bias = optional_bias(2);
    auto& y = out();
    requant_params q = filter_requant(ti, tw, to);
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
    ndarray accumulators;
    if (acc_obs_ != nullptr && *acc_obs_) {
        accumulators = ndarray(dtype::int32, y.shape);
        q.accumulators = reinterpret_cast<std::int32_t*>(accumulators.data.data());
    }
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
    if (q.accumulators != nullptr) (*acc_obs_)(op_.index(), accumulators, y);
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
    if (kind == bop::FLOOR_DIV) unsupported("only int32 floor division is implemented");
    if (kind == bop::DIV) {
        const auto f = op_.options<tflite::opt::DivOptions>().fused_activation_function;
        dispatch8(ta, [&]<class T>(T) {
            divide<T>(view<T>(a), sa, view<T>(b), sb, view<T>(y), q_of(ta), q_of(tb), q_of(to), act_range(f, to),
                      [&](const std::string& rule) { bad(rule); });
        });
        return;
    }
    if (kind == bop::SQUARED_DIFFERENCE) {
        dispatch8(ta, [&]<class T>(T) {
            squared_difference<T>(view<T>(a), sa, view<T>(b), sb, view<T>(y),
                                  make_squared_difference_params(q_of(ta), q_of(tb), q_of(to)));
        });
        return;
    }
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
    if (kind == bop::DEQUANTIZE && (y.type == dtype::int8 || y.type == dtype::uint8)) {
        // An 8-bit DEQUANTIZE output (converters leave some) is a requantization, as QUANTIZE.
        const auto qi = q_of(ti), qo = q_of(to);
        dispatch8(ti, [&]<class In>(In) {
            dispatch8(to, [&]<class Out>(Out) { requantize<In, Out>(view<In>(x), view<Out>(y), qi, qo); });
        });
        return;
    }
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
    if (x.type == dtype::float32) {
        // The float kernels of an island (DEQUANTIZE → ... → QUANTIZE).
        if (y.type != dtype::float32) unsupported("a float32 input needs a float32 output");
        float_unary f{};
        switch (kind) {
            case bop::EXP: f = float_unary::exp; break;
            case bop::LOG: f = float_unary::log; break;
            case bop::SQRT: f = float_unary::sqrt; break;
            case bop::NEG: f = float_unary::neg; break;
            case bop::ABS: f = float_unary::abs; break;
            case bop::RSQRT: f = float_unary::rsqrt; break;
            default: unsupported("float32 input (only EXP, LOG, SQRT, NEG, ABS and RSQRT have float kernels here)");
        }
        apply_float_unary(f, view<float>(x), view<float>(y));
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
            case bop::ELU: apply_table<T>(xi, yo, elu_table<T>(qi, qo)); break;
            case bop::GELU: apply_table<T>(xi, yo, gelu_table<T>(qi, qo, op_.options<tflite::opt::GeluOptions>().approximate)); break;
            case bop::ABS: abs_quantized<T>(xi, yo, qi, qo); break;
            case bop::RSQRT: apply_table<T>(xi, yo, rsqrt_table<T>(qi, qo)); break;
            case bop::NEG: neg_quantized<T>(xi, yo, qi, qo); break;
            case bop::EXP: apply_table<T>(xi, yo, exp_table<T>(qi, qo)); break;
            case bop::LOG: apply_table<T>(xi, yo, log_table<T>(qi, qo)); break;
            case bop::SQRT: apply_table<T>(xi, yo, sqrt_table<T>(qi, qo)); break;
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
            slice_into_output(x, start, step, count);
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

inline void interpreter::transpose_conv() {
    // Inputs: output_shape, filter [O,KH,KW,C], input, optional bias.
    const auto tw = in_tensor(1), ti = in_tensor(2), to = out_tensor();
    require_8bit(ti, "input");
    require_8bit(tw, "filter");
    if (ti.type() != tw.type() || ti.type() != to.type()) unsupported("mixed input/filter/output types");
    const auto& w = in(1);
    const auto& x = in(2);
    const std::span<const std::int32_t> bias = optional_bias(3);
    auto& y = out();
    if (x.shape.size() != 4 || w.shape.size() != 4 || y.shape.size() != 4) bad("input, filter and output must be 4-D");
    const auto o = op_.options<tflite::opt::TransposeConvOptions>();
    if (o.stride_h <= 0 || o.stride_w <= 0) bad("strides must be positive");
    requant_params q = filter_requant(ti, tw, to);
    q.act = act_range(o.fused_activation_function, to);
    q.round = rounding::double_;  // the kernel's own requantization (MultiplyByQuantizedMultiplier)
    const auto is = as_nhwc(shape32(x)), fs = as_nhwc(shape32(w)), os = as_nhwc(shape32(y));
    if (!bias.empty() && bias.size() != static_cast<std::size_t>(os.c)) bad("bias size does not match output channels");
    // TFLite's padding: the forward conv from the output size back to the input size.
    const auto p = o.padding == tflite::padding_mode::SAME ? padding::same : padding::valid;
    const std::int32_t pad_h = compute_padding(o.stride_h, 1, os.h, fs.h, compute_out_size(p, os.h, fs.h, o.stride_h));
    const std::int32_t pad_w = compute_padding(o.stride_w, 1, os.w, fs.w, compute_out_size(p, os.w, fs.w, o.stride_w));
    dispatch8(ti, [&]<class T>(T) {
        transpose_conv2d<T, T>(view<T>(x), is, view<T>(w), fs, bias, view<T>(y), os, o.stride_h, o.stride_w, pad_h, pad_w, q);
    });
}

inline void interpreter::spatial(bop kind) {
    const auto& x = in(0);
    auto& y = out();
    const std::size_t es = dtype_size(x.type);
    if (kind == bop::DILATE) {
        const auto d = int_values(in(1));
        const auto& v = in(2);
        if (v.type != x.type || v.element_count() != 1) bad("padding_value must be one element of the input type");
        dilate(x, d, std::span<const std::byte>(v.data.data(), es), y);
        return;
    }
    const auto block = int_values(in(1));
    const auto pads = int_values(in(2));
    std::array<std::int64_t, 2> b{1, 1};
    std::array<std::int64_t, 4> p{0, 0, 0, 0};
    if (x.shape.size() == 4 && block.size() == 2 && pads.size() == 4) {
        b = {block[0], block[1]};
        p = {pads[0], pads[1], pads[2], pads[3]};
    } else if (x.shape.size() == 3 && block.size() == 1 && pads.size() == 2) {
        b = {block[0], 1};
        p = {pads[0], pads[1], 0, 0};
    } else {
        bad("block shape and paddings/crops must describe the spatial axes of a 3-D or 4-D input");
    }
    if (kind == bop::BATCH_TO_SPACE_ND) {
        batch_to_space_nd(x, b, p, y);
        return;
    }
    // Quantized padding is the output zero point.
    std::vector<std::byte> fill(es, std::byte{0});
    const auto to = out_tensor();
    if (to.type() == tensor_type::INT8 || to.type() == tensor_type::UINT8)
        fill[0] = static_cast<std::byte>(static_cast<std::uint8_t>(q_of(to).zero_point));
    space_to_batch_nd(x, b, p, fill, y);
}

/// Comparisons (bool output), the reductions other than MEAN, SLICE and TILE.
inline void interpreter::compare_or_reduce(bop kind) {
    switch (kind) {
        case bop::EQUAL:
        case bop::NOT_EQUAL:
        case bop::GREATER:
        case bop::GREATER_EQUAL:
        case bop::LESS:
        case bop::LESS_EQUAL: {
            const auto ta = in_tensor(0), tb = in_tensor(1);
            const auto& a = in(0);
            const auto& b = in(1);
            auto& y = out();
            if (ta.type() != tb.type()) unsupported("inputs must have one type");
            if (y.type != dtype::bool_) bad("output must be bool");
            const auto sa = shape32(a), sb = shape32(b);
            if (static_cast<std::int64_t>(y.element_count()) != flat_size(broadcast_shape(sa, sb, where())))
                bad("output size does not match the broadcast of the inputs");
            const comparison c = kind == bop::EQUAL ? comparison::equal : kind == bop::NOT_EQUAL ? comparison::not_equal
                               : kind == bop::GREATER ? comparison::greater : kind == bop::GREATER_EQUAL ? comparison::greater_equal
                               : kind == bop::LESS ? comparison::less : comparison::less_equal;
            dispatch8(ta, [&]<class T>(T) { compare<T>(view<T>(a), sa, view<T>(b), sb, view<std::uint8_t>(y), q_of(ta), q_of(tb), c); });
            return;
        }
        case bop::REDUCE_MAX:
        case bop::REDUCE_MIN:
        case bop::REDUCE_PROD:
        case bop::SUM: {
            const auto ti = in_tensor(0), to = out_tensor();
            const auto& x = in(0);
            auto& y = out();
            if (ti.type() != to.type()) unsupported("input and output types differ");
            std::vector<bool> red(x.shape.size(), false);
            for (auto a : int_values(in(1))) red[norm_axis(a, x.shape.size())] = true;
            std::int64_t kept = 1;
            for (std::size_t i = 0; i < x.shape.size(); ++i)
                if (!red[i]) kept *= x.shape[i];
            if (static_cast<std::int64_t>(y.element_count()) != kept) bad("output size does not match the kept axes");
            dispatch8(ti, [&]<class T>(T) {
                const auto qi = q_of(ti), qo = q_of(to);
                if (kind == bop::REDUCE_MAX || kind == bop::REDUCE_MIN) {
                    reduce_max_min<T>(view<T>(x), shape32(x), red, view<T>(y), kind == bop::REDUCE_MAX);
                } else if (kind == bop::REDUCE_PROD) {
                    reduce_prod<T>(view<T>(x), shape32(x), red, view<T>(y), qi, qo);
                } else if (qi.scale == qo.scale && qi.zero_point == qo.zero_point) {
                    // One quantization: TFLite sums the codes in the 8-bit type (wrapping).
                    const auto r = reduce_generic<T, T>(view<T>(x), shape32(x), red, [](T v) { return v; },
                                                        [](T acc, T v) { return static_cast<T>(acc + v); });
                    std::copy(r.begin(), r.end(), view<T>(y).begin());
                } else {
                    std::int64_t count = 0;
                    const auto sums = reduce_sum<T>(view<T>(x), shape32(x), red, count);
                    sum_requantize<T>(sums, count, view<T>(y), qi, qo);
                }
            });
            return;
        }
        case bop::SLICE: {
            const auto& x = in(0);
            const auto begin = int_values(in(1)), size = int_values(in(2));
            const std::size_t r = x.shape.size();
            if (begin.size() != r || size.size() != r) bad("begin and size must have one entry per axis");
            std::vector<std::int64_t> start(r), step(r, 1), count(r);
            for (std::size_t i = 0; i < r; ++i) {
                const std::int64_t b = begin[i], n = size[i] == -1 ? x.shape[i] - b : size[i];
                if (b < 0 || n < 0 || b + n > x.shape[i]) bad("slice out of range on axis " + std::to_string(i));
                start[i] = b;
                count[i] = n;
            }
            slice_into_output(x, start, step, count);
            return;
        }
        case bop::TILE: {
            const auto& x = in(0);
            const auto mult = int_values(in(1));
            auto& y = out();
            const std::size_t r = x.shape.size();
            if (mult.size() != r) bad("multiples must have one entry per axis");
            std::int64_t total = 1;
            for (std::size_t i = 0; i < r; ++i) {
                if (mult[i] < 0) bad("multiples must not be negative");
                total *= x.shape[i] * mult[i];
            }
            if (static_cast<std::int64_t>(y.element_count()) != total || y.type != x.type) bad("output shape does not match the tiling");
            const std::size_t es = dtype_size(x.type);
            std::vector<std::int64_t> istride(r, 1), idx(r, 0);
            for (std::size_t i = r; i-- > 1;) istride[i - 1] = istride[i] * x.shape[i];
            for (std::int64_t e = 0; e < total; ++e) {
                std::int64_t src = 0;
                for (std::size_t d = 0; d < r; ++d) src += (idx[d] % x.shape[d]) * istride[d];
                std::memcpy(y.data.data() + static_cast<std::size_t>(e) * es, x.data.data() + static_cast<std::size_t>(src) * es, es);
                for (std::size_t d = r; d-- > 0;) {
                    if (++idx[d] < x.shape[d] * mult[d]) break;
                    idx[d] = 0;
                }
            }
            return;
        }
        default: unsupported("not implemented");
    }
}

/// PRELU, LOG_SOFTMAX, L2_NORMALIZATION (8-bit) and POW (float32 or int32).
inline void interpreter::extra(bop kind) {
    const auto ti = in_tensor(0), to = out_tensor();
    const auto& x = in(0);
    if (kind == bop::POW) {
        const auto& e = in(1);
        auto& y = out();
        const auto sx = shape32(x), se = shape32(e);
        if (x.type != e.type || x.type != y.type) unsupported("POW inputs and output must have one type");
        if (static_cast<std::int64_t>(y.element_count()) != flat_size(broadcast_shape(sx, se, where())))
            bad("output size does not match the broadcast of the inputs");
        if (x.type == dtype::float32) {
            const auto a = view<float>(x), b = view<float>(e);
            auto o = view<float>(y);
            for_each_broadcast(sx, se, broadcast_shape(sx, se, where()), [&](std::int64_t i, std::int64_t j, std::int64_t k) {
                o[static_cast<std::size_t>(k)] = std::pow(a[static_cast<std::size_t>(i)], b[static_cast<std::size_t>(j)]);
            });
        } else if (x.type == dtype::int32) {
            const auto a = view<std::int32_t>(x), b = view<std::int32_t>(e);
            auto o = view<std::int32_t>(y);
            for_each_broadcast(sx, se, broadcast_shape(sx, se, where()), [&](std::int64_t i, std::int64_t j, std::int64_t k) {
                const std::int32_t p = b[static_cast<std::size_t>(j)];
                if (p < 0) bad("int32 POW needs non-negative exponents");
                std::int32_t r = 1;  // TFLite's IntegerPow: repeated multiplication, wrapping
                for (std::int32_t n = 0; n < p; ++n)
                    r = static_cast<std::int32_t>(static_cast<std::uint32_t>(r) * static_cast<std::uint32_t>(a[static_cast<std::size_t>(i)]));
                o[static_cast<std::size_t>(k)] = r;
            });
        } else {
            unsupported("POW of " + std::string(dtype_name(x.type)) + " (TFLite has float32 and int32 POW only)");
        }
        return;
    }
    auto& y = out();
    if (ti.type() != to.type()) unsupported("input and output types differ");
    dispatch8(ti, [&]<class T>(T) {
        const auto qi = q_of(ti), qo = q_of(to);
        if (kind == bop::PRELU) {
            const auto ta = in_tensor(1);
            const auto& a = in(1);
            if (ta.type() != ti.type()) unsupported("alpha must have the input's type");
            const auto sx = shape32(x), sa = shape32(a);
            if (static_cast<std::int64_t>(y.element_count()) != flat_size(broadcast_shape(sx, sa, where())))
                bad("output size does not match the broadcast of input and alpha");
            prelu<T>(view<T>(x), sx, view<T>(a), sa, view<T>(y), make_prelu_params(qi, q_of(ta), qo));
            return;
        }
        if (x.element_count() != y.element_count() || x.shape.empty()) bad("output must match the input, rank >= 1");
        if (kind == bop::LOG_SOFTMAX) {
            log_softmax<T>(view<T>(x), view<T>(y), x.shape.back(), qi.scale, qo.scale, qo.zero_point);
        } else {
            if (op_.options<tflite::opt::L2NormOptions>().fused_activation_function != tflite::activation_function::NONE)
                unsupported("a fused activation on L2_NORMALIZATION");
            l2_normalize<T>(view<T>(x), view<T>(y), x.shape.back(), qi.zero_point);
        }
    });
}

inline void interpreter::execute() {
    const bop kind = op_.op();
    switch (kind) {
        case bop::CONV_2D:
        case bop::DEPTHWISE_CONV_2D:
        case bop::FULLY_CONNECTED: conv_like(kind); return;
        case bop::TRANSPOSE_CONV: transpose_conv(); return;
        case bop::DILATE:
        case bop::SPACE_TO_BATCH_ND:
        case bop::BATCH_TO_SPACE_ND: spatial(kind); return;
        case bop::ADD:
        case bop::SUB:
        case bop::MUL:
        case bop::MAXIMUM:
        case bop::MINIMUM:
        case bop::DIV:
        case bop::SQUARED_DIFFERENCE:
        case bop::FLOOR_DIV: binary(kind); return;
        case bop::EQUAL:
        case bop::NOT_EQUAL:
        case bop::GREATER:
        case bop::GREATER_EQUAL:
        case bop::LESS:
        case bop::LESS_EQUAL:
        case bop::REDUCE_MAX:
        case bop::REDUCE_MIN:
        case bop::REDUCE_PROD:
        case bop::SUM:
        case bop::SLICE:
        case bop::TILE: compare_or_reduce(kind); return;
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
        case bop::ELU:
        case bop::GELU:
        case bop::ABS:
        case bop::RSQRT:
        case bop::NEG:
        case bop::EXP:
        case bop::LOG:
        case bop::SQRT:
        case bop::SOFTMAX: unary(kind); return;
        case bop::PRELU:
        case bop::LOG_SOFTMAX:
        case bop::L2_NORMALIZATION:
        case bop::POW: extra(kind); return;
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
                const auto qi = q_of(ti), qo = q_of(to);
                if (qi.scale == qo.scale && qi.zero_point == qo.zero_point) {
                    // One quantization: TFLite divides the integer sum, truncating (mean_hw_uint8).
                    auto yo = view<T>(y);
                    for (std::size_t i = 0; i < sums.size(); ++i) yo[i] = static_cast<T>(sums[i] / count);
                    return;
                }
                mean_requantize<T>(sums, count, view<T>(y), qi, qo);
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
        case bop::BATCH_MATMUL: {
            const auto ta = in_tensor(0), tb = in_tensor(1), to = out_tensor();
            if (ta.type() != tensor_type::INT8 || tb.type() != tensor_type::INT8 || to.type() != tensor_type::INT8)
                unsupported("only int8 BATCH_MATMUL is implemented");
            const auto o = op_.options<tflite::opt::BatchMatMulOptions>();
            const auto& a = in(0);
            const auto& b = in(1);
            auto& y = out();
            const auto geo = batch_matmul_shapes(shape32(a), shape32(b), o.adj_x, o.adj_y, where());
            shape_t want = geo.batch;
            want.push_back(geo.m);
            want.push_back(geo.n);
            if (shape32(y) != want) bad("output shape does not match the operands");
            const auto qa = q_of(ta), qb = q_of(tb), qo = q_of(to);
            requant_params q;
            q.input_zero_point = qa.zero_point;
            q.filter_zero_point = qb.zero_point;
            q.output_zero_point = qo.zero_point;
            // TFLite multiplies the two float scales in float (GetQuantizedConvolutionMultipler).
            q.multipliers.push_back(quant::quantize_multiplier(static_cast<double>(qa.scale * qb.scale) / static_cast<double>(qo.scale)));
            q.round = rounding::single;  // int8 GEMMs run through ruy
            batch_matmul<std::int8_t>(view<std::int8_t>(a), view<std::int8_t>(b), view<std::int8_t>(y), geo, o.adj_x, o.adj_y, q);
            return;
        }
        default: layout(kind); return;
    }
}

}  // namespace detail

/// Runs the model on `inputs` (graph-input order) and returns every tensor it computed.
[[nodiscard]] VNNX_ENTRY run_trace run_traced(const tflite::model_view& model, std::vector<ndarray> inputs,
                                              const node_observer& observer = {});
/// Runs only what tensors `targets` need; the trace's outputs are those tensors, in order.
[[nodiscard]] VNNX_ENTRY run_trace run_until(const tflite::model_view& model, std::vector<ndarray> inputs,
                                             const std::vector<std::int32_t>& targets, const node_observer& observer = {});
/// Runs the model and returns its outputs in graph-output order.
[[nodiscard]] VNNX_ENTRY std::vector<ndarray> run(const tflite::model_view& model, std::vector<ndarray> inputs);
/// run(), handing each convolution's accumulators to `observer` on the way.
[[nodiscard]] VNNX_ENTRY std::vector<ndarray> run_observing_accumulators(const tflite::model_view& model,
                                                                         std::vector<ndarray> inputs,
                                                                         const accumulator_observer& observer);

#if VNNX_DEFINE_ENTRIES
VNNX_ENTRY run_trace run_traced(const tflite::model_view& model, std::vector<ndarray> inputs, const node_observer& observer) {
    detail::interpreter it(model, observer);
    return it.run(std::move(inputs));
}

VNNX_ENTRY run_trace run_until(const tflite::model_view& model, std::vector<ndarray> inputs,
                               const std::vector<std::int32_t>& targets, const node_observer& observer) {
    if (targets.empty()) fail(error_kind::usage, std::string(model.source()) + ": run_until needs at least one target tensor");
    detail::interpreter it(model, observer);
    return it.run(std::move(inputs), targets);
}

VNNX_ENTRY std::vector<ndarray> run(const tflite::model_view& model, std::vector<ndarray> inputs) {
    const node_observer none;  // the interpreter keeps a reference: it must outlive `it`
    detail::interpreter it(model, none);
    return it.run(std::move(inputs), {}, false).outputs;
}

VNNX_ENTRY std::vector<ndarray> run_observing_accumulators(const tflite::model_view& model, std::vector<ndarray> inputs,
                                                           const accumulator_observer& observer) {
    const node_observer none;
    detail::interpreter it(model, none);
    it.observe_accumulators(&observer);
    return it.run(std::move(inputs), {}, false).outputs;
}
#endif

}  // namespace vnnx::ref
