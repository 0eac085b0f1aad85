#pragma once
// A YOLOv8 detection head with its post-processing, made with the builder: the graph a YOLOv8
// export ends in, from the three feature maps to the decoded [1, 4 + classes, anchors] tensor.
// Per scale a box branch (4 x 16 DFL bins) and a class branch (1x1 convs); the branches are
// flattened and concatenated across the scales; the DFL transposes the box tensor to
// [1, 4, 16, N], takes the softmax over the 16 bins and their expectation with a 1x1 conv of
// weights 0..15; STRIDED_SLICEs with masks and a negative begin split the distances into
// left-top and right-bottom; constant anchor tensors turn them into corners, centre and size
// (SUB, ADD, MUL by 0.5) and a constant per-anchor stride / image size tensor normalises the boxes
// (MUL); LOGISTIC gives the class scores, requantized (QUANTIZE) to the output's scale so that
// the last CONCATENATION joins tensors of one quantization, as TFLite's int8 converter makes it.
// Deterministic random weights; quantizations chosen so that every tensor uses its range.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "vnnx/support/error.hpp"
#include "vnnx/tflite/builder.hpp"

namespace vnnx::tflite {

struct yolo_head_params {
    std::int32_t image_size = 64;  // the scales are image_size / 8, / 16, / 32 (a multiple of 32)
    std::int32_t channels = 16;    // channels of each input feature map
    std::int32_t classes = 8;
    std::uint64_t seed = 7;
};

namespace detail {

class yolo_head_maker {
public:
    yolo_head_maker(builder& b, const yolo_head_params& p) : b_(b), p_(p) {}

    static constexpr std::int32_t bins = 16;

    std::int32_t tensor(const std::string& name, std::vector<std::int32_t> shape, quant q) {
        return b_.add_tensor(name, tensor_type::INT8, std::move(shape), std::move(q));
    }
    std::int32_t shape_const(const std::string& name, const std::vector<std::int32_t>& v) {
        return b_.add_constant(name, tensor_type::INT32, {static_cast<std::int32_t>(v.size())}, v);
    }

    // 1x1 conv with per-channel weight scales sized for random int8 inputs of the input's range.
    std::int32_t conv1x1(const std::string& name, std::int32_t x, std::int32_t hw, std::int32_t c_in, std::int32_t c_out,
                         float in_scale, quant out_q) {
        const auto seed = p_.seed * 1000 + 17 * static_cast<std::uint64_t>(n_++);
        const float s = out_q.scale[0] * 40.0f / (in_scale * 127.0f * static_cast<float>(c_in));
        std::vector<float> ws = random_float(seed + 1, static_cast<std::size_t>(c_out), 0.6f * s, 1.4f * s);
        std::vector<float> bs;
        for (float v : ws) bs.push_back(v * in_scale);
        const auto w = b_.add_constant(name + "/weights", tensor_type::INT8, {c_out, 1, 1, c_in},
                                       random_int8(seed, static_cast<std::size_t>(c_out * c_in)),
                                       quant{ws, std::vector<std::int64_t>(ws.size(), 0), 0});
        const auto bias = b_.add_constant(name + "/bias", tensor_type::INT32, {c_out},
                                          random_int32(seed + 2, static_cast<std::size_t>(c_out), -4000, 4000),
                                          quant{bs, std::vector<std::int64_t>(bs.size(), 0), 0});
        const auto y = tensor(name, {1, hw, hw, c_out}, out_q);
        b_.add_operator(builtin_operator::CONV_2D, {x, w, bias}, {y},
                        conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32});
        return y;
    }

    std::int32_t reshape(const std::string& name, std::int32_t x, const std::vector<std::int32_t>& shape, quant q) {
        const auto y = tensor(name, shape, q);
        b_.add_operator(builtin_operator::RESHAPE, {x, shape_const(name + "/shape", shape)}, {y}, reshape_options{shape});
        return y;
    }

    std::int32_t transpose(const std::string& name, std::int32_t x, const std::vector<std::int32_t>& perm,
                           const std::vector<std::int32_t>& out_shape, quant q) {
        const auto y = tensor(name, out_shape, q);
        b_.add_operator(builtin_operator::TRANSPOSE, {x, shape_const(name + "/perm", perm)}, {y}, transpose_options{});
        return y;
    }

    std::int32_t concat(const std::string& name, const std::vector<std::int32_t>& xs, std::int32_t axis,
                        const std::vector<std::int32_t>& out_shape, quant q) {
        const auto y = tensor(name, out_shape, q);
        b_.add_operator(builtin_operator::CONCATENATION, xs, {y}, concatenation_options{axis, activation_function::NONE});
        return y;
    }

    std::int32_t strided_slice(const std::string& name, std::int32_t x, const std::vector<std::int32_t>& begin,
                               const std::vector<std::int32_t>& end, std::int32_t begin_mask, std::int32_t end_mask,
                               const std::vector<std::int32_t>& out_shape, quant q) {
        const auto y = tensor(name, out_shape, q);
        const auto bt = shape_const(name + "/begin", begin), et = shape_const(name + "/end", end);
        const auto st = shape_const(name + "/strides", std::vector<std::int32_t>(begin.size(), 1));
        strided_slice_options o{};
        o.begin_mask = begin_mask;
        o.end_mask = end_mask;
        b_.add_operator(builtin_operator::STRIDED_SLICE, {x, bt, et, st}, {y}, o);
        return y;
    }

    std::int32_t binary(builtin_operator op, const std::string& name, std::int32_t a, std::int32_t c,
                        const std::vector<std::int32_t>& out_shape, quant q) {
        const auto y = tensor(name, out_shape, q);
        if (op == builtin_operator::ADD) b_.add_operator(op, {a, c}, {y}, add_options{activation_function::NONE, true});
        else if (op == builtin_operator::SUB) b_.add_operator(op, {a, c}, {y}, sub_options{activation_function::NONE, true});
        else b_.add_operator(op, {a, c}, {y}, mul_options{activation_function::NONE});
        return y;
    }

private:
    builder& b_;
    const yolo_head_params& p_;
    int n_ = 0;
};

/// The decoding every YOLOv8 export ends in, from the box logits [1, 64, N] (4 sides x 16 DFL
/// bins, N anchors over the scales of `sizes`, largest first) to [1, 4 + classes, N]: the DFL
/// softmax and expectation, dist2bbox with constant anchors, boxes normalised to the image, and
/// the class sigmoid. `class_logits` adds the [1, classes, N] class logits when the graph
/// reaches them, so that callers keep their operator order.
template <class ClassLogits>
std::int32_t yolov8_decode(builder& b, yolo_head_maker& m, std::int32_t box_t, const quant& box_q,
                           const std::vector<std::int32_t>& sizes, std::int32_t classes, ClassLogits&& class_logits) {
    using B = builtin_operator;
    constexpr std::int32_t bins = yolo_head_maker::bins;
    std::int32_t n = 0;
    for (const auto s : sizes) n += s * s;
    // [1, 64, N] -> [1, 4, 16, N] -> [1, 4, N, 16], softmax over the bins, then the expectation
    // sum_i i * p_i as a 1x1 conv with weights 0..15.
    const auto box_4 = m.reshape("dfl/bins", box_t, {1, 4, bins, n}, box_q);
    const auto box_b = m.transpose("dfl/bins_last", box_4, {0, 1, 3, 2}, {1, 4, n, bins}, box_q);
    const quant prob_q{1.0f / 256, -128};
    const auto prob = m.tensor("dfl/softmax", {1, 4, n, bins}, prob_q);
    b.add_operator(B::SOFTMAX, {box_b}, {prob}, softmax_options{1.0f});
    std::vector<std::int8_t> ramp(bins);
    for (std::int32_t i = 0; i < bins; ++i) ramp[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(i);
    const auto w = b.add_constant("dfl/weights", tensor_type::INT8, {1, 1, 1, bins}, ramp, quant{1.0f, 0});
    const auto wb = b.add_constant("dfl/bias", tensor_type::INT32, {1}, std::vector<std::int32_t>{0}, quant{1.0f / 256, 0});
    const quant dist_q{16.0f / 255, -128};
    const auto dist4 = m.tensor("dfl/expectation", {1, 4, n, 1}, dist_q);
    b.add_operator(B::CONV_2D, {prob, w, wb}, {dist4},
                   conv2d_options{padding_mode::VALID, 1, 1, activation_function::NONE, 1, 1, tensor_type::FLOAT32});
    const auto dist = m.reshape("dfl/distances", dist4, {1, 4, n}, dist_q);

    // Left-top = rows 0..1, right-bottom = rows -2.. (negative begin, masks for the rest).
    const auto lt = m.strided_slice("lt", dist, {0, 0, 0}, {0, 2, 0}, 0b101, 0b101, {1, 2, n}, dist_q);
    const auto rb = m.strided_slice("rb", dist, {0, -2, 0}, {0, 0, 0}, 0b101, 0b111, {1, 2, n}, dist_q);

    // Anchor centres (grid units, +0.5) and each anchor's 1 / grid size, as constant tensors:
    // boxes leave normalised to the image (as YOLOv8's int8 exports do, so that they share the
    // class scores' quantization in the last CONCATENATION).
    std::vector<float> ax, ay, norm;
    for (std::size_t s = 0; s < 3; ++s)
        for (std::int32_t y = 0; y < sizes[s]; ++y)
            for (std::int32_t x = 0; x < sizes[s]; ++x) {
                ax.push_back(static_cast<float>(x) + 0.5f);
                ay.push_back(static_cast<float>(y) + 0.5f);
                norm.push_back(1.0f / static_cast<float>(sizes[s]));
            }
    const float grid_max = static_cast<float>(sizes[0]);
    const quant anchor_q{grid_max / 255.0f, -128};
    std::vector<std::int8_t> anchors;
    for (const auto* v : {&ax, &ay})
        for (float a : *v) anchors.push_back(static_cast<std::int8_t>(std::lround(a / anchor_q.scale[0]) - 128));
    const auto anchor = b.add_constant("anchors", tensor_type::INT8, {1, 2, n}, anchors, anchor_q);
    const quant norm_q{0.5f / 127, 0};
    std::vector<std::int8_t> norm_v;
    for (float v : norm) norm_v.push_back(static_cast<std::int8_t>(std::lround(v / norm_q.scale[0])));
    const auto norm_t = b.add_constant("norm", tensor_type::INT8, {1, 1, n}, norm_v, norm_q);

    // Corners span [-16, grid + 16] grid units; centre and size share that quantization.
    const float corner_s = (grid_max + 32.0f) / 255.0f;
    const quant corner_q{corner_s, -128 + std::lround(16.0f / corner_s)};
    const auto x1y1 = m.binary(B::SUB, "x1y1", anchor, lt, {1, 2, n}, corner_q);
    const auto x2y2 = m.binary(B::ADD, "x2y2", anchor, rb, {1, 2, n}, corner_q);
    const auto sum = m.binary(B::ADD, "corner_sum", x1y1, x2y2, {1, 2, n}, quant{2.0f * corner_s, corner_q.zero_point[0]});
    const auto half = b.add_constant("half", tensor_type::INT8, {}, std::vector<std::int8_t>{64}, quant{1.0f / 128, 0});
    const auto cxy = m.binary(B::MUL, "centre", sum, half, {1, 2, n}, corner_q);
    const auto wh = m.binary(B::SUB, "size", x2y2, x1y1, {1, 2, n}, corner_q);
    const auto box_grid = m.concat("box_grid", {cxy, wh}, 1, {1, 4, n}, corner_q);
    const quant out_q{4.0f / 255, -128};
    const auto box_n = m.binary(B::MUL, "box_normalised", box_grid, norm_t, {1, 4, n}, out_q);

    // Classes [1, classes, N]: sigmoid, requantized to the output's scale.
    const auto cls_t = class_logits();
    const auto cls_p = m.tensor("cls_sigmoid", {1, classes, n}, prob_q);
    b.add_operator(B::LOGISTIC, {cls_t}, {cls_p});
    const auto cls_o = m.tensor("cls_scores", {1, classes, n}, out_q);
    b.add_operator(B::QUANTIZE, {cls_p}, {cls_o});

    return m.concat("detections", {box_n, cls_o}, 1, {1, 4 + classes, n}, out_q);
}

}  // namespace detail

/// The YOLOv8 head: inputs are three int8 feature maps [1, s/8, s/8, C], [1, s/16, s/16, C],
/// [1, s/32, s/32, C] (s = image_size); the output is int8 [1, 4 + classes, N] with N the anchor
/// count: rows 0..3 the box centre x, y and size w, h as fractions of the image, then the class
/// probabilities (YOLOv8's layout, boxes normalised as its int8 TFLite exports do).
[[nodiscard]] inline std::vector<std::byte> yolov8_head_model(const yolo_head_params& p = {}) {
    if (p.image_size < 32 || p.image_size % 32 != 0 || p.image_size > 1024)
        fail(error_kind::usage, "yolov8_head_model: image size " + std::to_string(p.image_size) +
                                    " must be a multiple of 32 in 32..1024");
    if (p.channels < 1 || p.channels > 1024 || p.classes < 1 || p.classes > 1000)
        fail(error_kind::usage, "yolov8_head_model: channels must be in 1..1024 and classes in 1..1000");
    constexpr std::int32_t bins = detail::yolo_head_maker::bins;
    builder b;
    b.set_description("vnnx: YOLOv8 detection head with DFL and anchor decoding, random weights");
    detail::yolo_head_maker m(b, p);
    const quant feat_q{0.05f, -20}, box_q{0.12f, 5}, cls_q{0.1f, 30};
    const std::int32_t strides[3] = {8, 16, 32};
    std::int32_t n = 0;
    std::vector<std::int32_t> inputs, boxes, classes, sizes;
    for (int s = 0; s < 3; ++s) {
        const std::int32_t hw = p.image_size / strides[s];
        const std::string tag = "p" + std::to_string(s + 3);
        const auto x = m.tensor(tag, {1, hw, hw, p.channels}, feat_q);
        inputs.push_back(x);
        const auto box = m.conv1x1(tag + "/box", x, hw, p.channels, 4 * bins, feat_q.scale[0], box_q);
        const auto cls = m.conv1x1(tag + "/cls", x, hw, p.channels, p.classes, feat_q.scale[0], cls_q);
        boxes.push_back(m.reshape(tag + "/box_flat", box, {1, hw * hw, 4 * bins}, box_q));
        classes.push_back(m.reshape(tag + "/cls_flat", cls, {1, hw * hw, p.classes}, cls_q));
        sizes.push_back(hw);
        n += hw * hw;
    }
    // Across the scales, anchors on axis 1.
    const auto box_all = m.concat("box_cat", boxes, 1, {1, n, 4 * bins}, box_q);
    const auto cls_all = m.concat("cls_cat", classes, -2, {1, n, p.classes}, cls_q);

    // DFL: [1, N, 64] -> [1, 64, N], then the decoding shared with the whole-model builder.
    const auto box_t = m.transpose("box_t", box_all, {0, 2, 1}, {1, 4 * bins, n}, box_q);
    const auto out = detail::yolov8_decode(b, m, box_t, box_q, sizes, p.classes, [&] {
        // Classes: [1, N, classes] -> [1, classes, N].
        return m.transpose("cls_t", cls_all, {0, 2, 1}, {1, p.classes, n}, cls_q);
    });
    b.set_inputs(inputs);
    b.set_outputs({out});
    return b.finish();
}

}  // namespace vnnx::tflite
