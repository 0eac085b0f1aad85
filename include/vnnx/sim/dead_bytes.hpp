#pragma once
// Whether bytes of the memory image that node k writes are read again, from the records alone:
// a node may then skip writing bytes that nothing observes (e.g. the intermediate tensors of its
// own layers). The walk goes through the nodes after k in order; a tensor read (node inputs,
// layer inputs, every tensor of a zero-copy node) that meets a live byte makes the range
// observable, a tensor write (node and layer outputs, which their executors write whole) ends
// the bytes it covers. Graph inputs and outputs are observable wherever they lie.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "vnnx/format/model_view.hpp"

namespace vnnx::sim {

namespace dead_bytes_detail {

using range = std::pair<std::uint64_t, std::uint64_t>;  // [first, second)

// The bytes of a tensor record; false when the record gives none (then nothing is assumed).
inline bool bytes_of(const format::vnnx_tensor_t& t, range& r) {
    if (t.direct.absent() || t.dims < 0 || t.dims > 6) return false;
    const std::uint64_t e = format::element_size(t.type);
    if (e == 0) return false;
    std::uint64_t n = 1;
    for (std::int32_t d = 0; d < t.dims; ++d) {
        const std::int32_t v = t.shape[static_cast<std::size_t>(d)];
        if (v <= 0 || v > (1 << 24)) return false;
        n *= static_cast<std::uint64_t>(v);
        if (n > (std::uint64_t{1} << 32)) return false;
    }
    r = {t.direct.value, t.direct.value + n * e};
    return true;
}

inline bool meets(const std::vector<range>& live, const range& r) {
    for (const auto& l : live)
        if (l.first < r.second && r.first < l.second) return true;
    return false;
}

inline void remove(std::vector<range>& live, const range& r) {
    std::vector<range> out;
    for (const auto& l : live) {
        if (l.second <= r.first || r.second <= l.first) {
            out.push_back(l);
            continue;
        }
        if (l.first < r.first) out.emplace_back(l.first, r.first);
        if (r.second < l.second) out.emplace_back(r.second, l.second);
    }
    live = std::move(out);
}

}  // namespace dead_bytes_detail

/// True when no byte of `live` (ranges of memory-image offsets written by node k) can be read
/// after node k: see the header comment. Any record the walk cannot size makes it false.
inline bool dead_after(const format::model_view& v, std::size_t k, std::vector<std::pair<std::uint64_t, std::uint64_t>> live) {
    namespace d = dead_bytes_detail;
    for (std::size_t i = 0; i < v.num_inputs(); ++i) {
        const auto& io = v.input(i);
        if (d::meets(live, {io.direct, io.direct + io.length * format::element_size(io.type)})) return false;
    }
    for (std::size_t o = 0; o < v.num_outputs(); ++o) {
        const auto& io = v.output(o);
        if (d::meets(live, {io.direct, io.direct + io.length * format::element_size(io.type)})) return false;
    }
    for (std::size_t j = k + 1; j < v.num_nodes() && !live.empty(); ++j) {
        const auto& n = v.node(j);
        const auto recs = v.node_tensors(j);
        std::vector<d::range> r(recs.size());
        for (std::size_t i = 0; i < recs.size(); ++i)
            if (!d::bytes_of(recs[i], r[i])) return false;
        if (n.skip != 0) {
            for (const auto& x : r)
                if (d::meets(live, x)) return false;
            continue;
        }
        const auto ins = static_cast<std::size_t>(std::max(0, n.num_inputs));
        const auto outs = static_cast<std::size_t>(std::max(0, n.num_outputs));
        if (ins + outs > r.size()) return false;
        for (std::size_t i = 0; i < ins; ++i)
            if (d::meets(live, r[i])) return false;
        for (std::size_t i = ins; i < ins + outs; ++i) d::remove(live, r[i]);
        std::size_t next = ins + outs;
        for (const auto& l : v.node_layers(j)) {
            const auto nt = static_cast<std::size_t>(std::max(0, l.num_tensors));
            const auto lo = std::min(nt, static_cast<std::size_t>(std::max(0, l.num_outputs)));
            if (next + nt > r.size()) return false;
            for (std::size_t i = next; i < next + nt - lo; ++i)
                if (d::meets(live, r[i])) return false;
            for (std::size_t i = next + nt - lo; i < next + nt; ++i) d::remove(live, r[i]);
            next += nt;
        }
    }
    return true;
}

}  // namespace vnnx::sim
