#pragma once
// Data-movement kernels on ndarrays of any element type: concatenation, split, pad,
// strided slice, transpose, gather, pack/unpack. They copy whole elements as bytes.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "vnnx/ref/shape.hpp"
#include "vnnx/support/npy.hpp"

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
