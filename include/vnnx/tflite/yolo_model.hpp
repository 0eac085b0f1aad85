#pragma once
// A YOLOv8n-shaped int8 model made with the builder: the layer shapes and operator mix of
// YOLOv8n (width 0.25, depth 0.33, 80 classes) with deterministic random weights. Benchmarks
// time it at 640x640; tests run it at a small size. Every Conv is CONV_2D + LOGISTIC + MUL
// (SiLU as TFLite exports it), C2f blocks use SPLIT and CONCATENATION, SPPF chains three 5x5
// MAX_POOL_2D, the neck upsamples with RESIZE_NEAREST_NEIGHBOR, and each detection level ends
// in a box (64) and class (80) branch concatenated to 144 channels: three outputs, or with
// `decoded` the post-processing of a real export (onnx2tf) joining them into [1, 84, 8400]:
// NCHW transposes and reshapes of each scale, a concatenation over the scales, slices of box
// and class rows, then the DFL and dist2bbox decoding of yolo_head_model.hpp.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/support/error.hpp"
#include "vnnx/tflite/builder.hpp"
#include "vnnx/tflite/yolo_head_model.hpp"

namespace vnnx::tflite {

/// Which YOLO-shaped model yolov8n_model makes.
struct yolo_model_options {
    bool decoded = false;  // a real export's decoding head: one [1, 84, N] output
    bool c2psa = false;    // YOLO11's C2PSA attention block after the SPPF
};

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

/// YOLO11's C2PSA with one PSABlock on a P5 map (x.c = 256: 2 heads of 64, keys of 32), as an
/// int8 onnx2tf export writes it in NHWC: a 1x1 conv split in two halves; on one half the
/// attention (a 1x1 qkv conv, NCHW TRANSPOSE and RESHAPE into heads, STRIDED_SLICEs for q, k, v,
/// BATCH_MATMUL qᵀ·k, SOFTMAX with β = 1/√32, BATCH_MATMUL v·pᵀ, back to NHWC, plus a 3x3
/// depthwise positional conv of v, a 1x1 projection, residual ADD) and the 1x1 feed-forward
/// pair with its residual ADD; the halves concatenated and a last 1x1 conv.
inline yolo_maker::tensor c2psa(builder& b, yolo_maker& m, yolo_head_maker& h, const yolo_maker::tensor& x) {
    using B = builtin_operator;
    const quant q = yolo_maker::act_q();
    const std::int32_t c = x.c / 2, key = 32, hd = 64, heads = c / hd, n = x.h * x.w;
    const auto halves = m.split2(m.conv(x, 2 * c, 1, 1));
    auto t = halves[1];
    const auto qkv = m.conv(t, c + 2 * key * heads, 1, 1, true);
    const auto nchw = h.transpose("psa/qkv_nchw", qkv.id, {0, 3, 1, 2}, {1, qkv.c, x.h, x.w}, q);
    const auto per_head = h.reshape("psa/qkv_heads", nchw, {1, heads, 2 * key + hd, n}, q);
    auto part = [&](const char* name, std::int32_t from, std::int32_t to) {
        return h.strided_slice(std::string("psa/") + name, per_head, {0, 0, from, 0}, {0, 0, to, 0}, 0b1011, 0b1011,
                               {1, heads, to - from, n}, q);
    };
    const auto qq = part("q", 0, key), kk = part("k", key, 2 * key), vv = part("v", 2 * key, 2 * key + hd);
    const auto scores = h.tensor("psa/scores", {1, heads, n, n}, quant{2.0f, -128});
    b.add_operator(B::BATCH_MATMUL, {qq, kk}, {scores}, batch_matmul_options{true, false, false});
    const auto probs = h.tensor("psa/probs", {1, heads, n, n}, quant{1.0f / 256, -128});
    b.add_operator(B::SOFTMAX, {scores}, {probs}, softmax_options{1.0f / std::sqrt(static_cast<float>(key))});
    const auto ctx = h.tensor("psa/context", {1, heads, hd, n}, q);
    b.add_operator(B::BATCH_MATMUL, {vv, probs}, {ctx}, batch_matmul_options{false, true, false});
    auto to_nhwc = [&](const std::string& name, std::int32_t v) {
        const auto r = h.reshape(name + "/nchw", v, {1, c, x.h, x.w}, q);
        return h.transpose(name + "/nhwc", r, {0, 2, 3, 1}, {1, x.h, x.w, c}, q);
    };
    const yolo_maker::tensor attn{to_nhwc("psa/context", ctx), x.h, x.w, c};
    // The positional encoding: a plain 3x3 depthwise conv of v.
    const yolo_maker::tensor v_map{to_nhwc("psa/v", vv), x.h, x.w, c};
    const float s = 3.0f / (3.0f * 73.0f * 5.0f);
    std::vector<float> ws = random_float(4242, static_cast<std::size_t>(c), 0.7f * s, 1.3f * s);
    std::vector<float> bs;
    for (float v : ws) bs.push_back(v * q.scale[0]);
    const auto w = b.add_constant("psa/pe/weights", tensor_type::INT8, {1, 3, 3, c}, random_int8(4243, static_cast<std::size_t>(9 * c)),
                                  quant{ws, std::vector<std::int64_t>(ws.size(), 0), 3});
    const auto bias = b.add_constant("psa/pe/bias", tensor_type::INT32, {c}, random_int32(4244, static_cast<std::size_t>(c), -3000, 3000),
                                     quant{bs, std::vector<std::int64_t>(bs.size(), 0), 0});
    const auto pe = h.tensor("psa/pe", {1, x.h, x.w, c}, q);
    b.add_operator(B::DEPTHWISE_CONV_2D, {v_map.id, w, bias}, {pe},
                   depthwise_conv2d_options{padding_mode::SAME, 1, 1, 1, activation_function::NONE, 1, 1});
    const auto mixed = m.add(attn, {pe, x.h, x.w, c});
    t = m.add(t, m.conv(mixed, c, 1, 1, true));
    t = m.add(t, m.conv(m.conv(t, 2 * c, 1, 1), c, 1, 1, true));
    return m.conv(m.concat({halves[0], t}), x.c, 1, 1);
}

}  // namespace detail

/// YOLOv8n-shaped model with a `size` x `size` x 3 int8 input (size a multiple of 32, >= 32).
/// At 640 it has YOLOv8n's 4.4 GMAC; outputs are 1 x size/8 x size/8 x 144, /16 and /32, or
/// with `decoded` one [1, 84, N] tensor of boxes and class scores (N = 8400 at 640). With
/// `c2psa`, YOLO11's attention block follows the SPPF (the YOLO11-shaped bench model).
[[nodiscard]] inline std::vector<std::byte> yolov8n_model(std::int32_t size = 640, yolo_model_options opt = {}) {
    const bool decoded = opt.decoded;
    if (size < 32 || size % 32 != 0 || size > 4096)
        fail(error_kind::usage, "yolov8n_model: size " + std::to_string(size) + " must be a multiple of 32 in 32..4096");
    builder b;
    b.set_description(std::string(opt.c2psa ? "vnnx: YOLO11-shaped int8 model (C2PSA)" : "vnnx: YOLOv8n-shaped int8 model") +
                      (decoded ? " with the decoding head, random weights" : ", random weights"));
    detail::yolo_maker m(b);
    yolo_head_params hp;
    hp.image_size = size;
    hp.classes = 80;
    detail::yolo_head_maker h(b, hp);
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
    const auto p5 = opt.c2psa ? detail::c2psa(b, m, h, m.sppf(x, 256)) : m.sppf(x, 256);
    // neck
    const auto n4 = m.c2f(m.concat({m.upsample2(p5), p4}), 128, 1, false);
    const auto o3 = m.c2f(m.concat({m.upsample2(n4), p3}), 64, 1, false);
    const auto o4 = m.c2f(m.concat({m.conv(o3, 64, 3, 2), n4}), 128, 1, false);
    const auto o5 = m.c2f(m.concat({m.conv(o4, 128, 3, 2), p5}), 256, 1, false);
    // heads
    const auto d3 = m.detect(o3), d4 = m.detect(o4), d5 = m.detect(o5);
    b.set_inputs({in.id});
    if (!decoded) {
        b.set_outputs({d3.id, d4.id, d5.id});
        return b.finish();
    }
    // The export's post-processing: each scale to NCHW and flattened, [1, 144, N] over the scales,
    // box rows 0..63 and class rows 64..143 sliced out, then the decoding.
    const quant q = detail::yolo_maker::act_q();
    std::vector<std::int32_t> flat, sizes;
    std::int32_t n = 0;
    for (const auto& d : {d3, d4, d5}) {
        const std::string tag = "head" + std::to_string(d.h);
        const auto nchw = h.transpose(tag + "/nchw", d.id, {0, 3, 1, 2}, {1, d.c, d.h, d.w}, q);
        flat.push_back(h.reshape(tag + "/flat", nchw, {1, d.c, d.h * d.w}, q));
        sizes.push_back(d.h);
        n += d.h * d.w;
    }
    const auto all = h.concat("head/cat", flat, 2, {1, 144, n}, q);
    const auto box = h.strided_slice("head/box", all, {0, 0, 0}, {0, 64, 0}, 0b101, 0b101, {1, 64, n}, q);
    const auto out = detail::yolov8_decode(b, h, box, q, sizes, 80, [&] {
        return h.strided_slice("head/cls", all, {0, 64, 0}, {0, 144, 0}, 0b101, 0b101, {1, 80, n}, q);
    });
    b.set_outputs({out});
    return b.finish();
}

}  // namespace vnnx::tflite
