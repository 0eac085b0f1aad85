#pragma once
// The compiler's mutable graph. The TFLite model is read once through tflite::model_view and
// copied here (constants copied or, inside compile(), borrowed from the file) so that transforms
// can add, rewrite and drop operators and tensors freely; everything after the transforms reads
// only this graph.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "vnnx/ir/constant_bytes.hpp"
#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/quant/scale_arith.hpp"
#include "vnnx/support/error.hpp"
#include "vnnx/tflite/model_view.hpp"

namespace vnnx::compiler {

using tflite::tensor_type;

struct quantization {
    // double: the file's float32 scales convert exactly, and --sdk-scales keeps the SDK's
    // 6-decimal scales at the precision its multipliers are computed in.
    std::vector<double> scale;
    std::vector<std::int64_t> zero_point;
    std::int32_t quantized_dimension = 0;

    [[nodiscard]] bool empty() const noexcept { return scale.empty(); }
    [[nodiscard]] double scale0() const noexcept { return scale.empty() ? 0.0 : scale[0]; }
    [[nodiscard]] std::int32_t zero0() const noexcept {
        return zero_point.empty() ? 0 : static_cast<std::int32_t>(zero_point[0]);
    }
};

/// Whether an imported graph copies its constants or borrows them from the model's bytes.
enum class constant_storage { copy, borrow };

struct tensor {
    std::string name;
    tensor_type type = tensor_type::INT8;
    std::vector<std::int32_t> shape;  // TFLite order (NHWC)
    quantization quant;
    std::optional<constant_bytes> data;  // constants only

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
    /// How ratios of scales are formed: TFLite's float32, or the SDK's double (--sdk-scales).
    quant::scale_arith arith = quant::scale_arith::tflite_float;
    /// The SDK's record choices where ours are more exact (no filter gain): --sdk-scales.
    bool sdk_records = false;
    /// uint8 weight channels that leave int8 are requantized as the SDK does, instead of running
    /// exactly on a second copy of the input channels they read (passes/outlier_weights.hpp):
    /// --requantize-outliers.
    bool requantize_outliers = false;

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
