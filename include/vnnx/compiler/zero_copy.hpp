#pragma once
// Zero-copy channel splits and concatenations (lowering.md §11.2, vnnx-format.md §7.1): a
// CONCATENATION or SPLIT node on the channels-first channel axis, whose parts are contiguous
// slices of the whole, is marked skip = 1 and does no work: its parts are placed at offsets of
// one buffer instead (offset = bytes of the preceding parts).
// Rules as the SDK applies them (set_skip_channel_split, then set_skip_concat), with two extra
// conditions of ours: no graph input may take part (the host passes its own input buffers, so
// an alias into the embedded one would not see the data) and a tensor is aliased at most once.
// The SDK's channel-slice rule (an IDENTITY node starting with SLICE) is not applied: the SDK
// marks such nodes but never aliases their buffers, and this compiler emits no SLICE subnode.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "vnnx/ir/program.hpp"
#include "vnnx/format/builtin_operator.hpp"
#include "vnnx/format/records.hpp"

namespace vnnx::compiler {

/// Where a tensor of a skipped node lives: `offset` bytes into the buffer of `root`.
struct alias {
    std::string root;
    std::uint64_t offset = 0;
};

namespace zero_copy_detail {

inline bool is_type(const node_build& nd, builtin_operator b) { return nd.rec.type == static_cast<std::int32_t>(b); }

inline std::size_t n_in(const node_build& nd) { return static_cast<std::size_t>(std::max(0, nd.rec.num_inputs)); }
inline std::size_t n_out(const node_build& nd) { return static_cast<std::size_t>(std::max(0, nd.rec.num_outputs)); }

/// Names a node writes: its own outputs and each layer's output (its last record).
inline std::set<std::string> writes(const node_build& nd) {
    std::set<std::string> w;
    for (std::size_t i = n_in(nd); i < n_in(nd) + n_out(nd) && i < nd.tensors.size(); ++i) w.insert(nd.tensors[i].name);
    for (const auto& l : nd.layers)
        if (!l.tensors.empty()) w.insert(l.tensors.back().name);
    return w;
}

/// Names a node reads: every tensor record it has that it does not write.
inline std::set<std::string> reads(const node_build& nd) {
    const auto w = writes(nd);
    std::set<std::string> r;
    for (const auto& t : nd.tensors)
        if (!w.count(t.name)) r.insert(t.name);
    for (const auto& l : nd.layers)
        for (const auto& t : l.tensors)
            if (!w.count(t.name)) r.insert(t.name);
    return r;
}

/// Bytes of a dense channels-first tensor.
inline std::uint64_t dense_bytes(const tensor_desc& t) {
    std::uint64_t n = 1;
    for (auto d : t.shape) n *= static_cast<std::uint64_t>(std::max(d, 1));
    return n * std::max<std::uint32_t>(format::element_size(t.type), 1);
}

/// The parts are contiguous slices of the whole when every dim before the channel axis
/// (rank − 3) is 1 and the parts agree with the whole off that axis.
inline bool channel_slices(const tensor_desc& whole, const std::vector<const tensor_desc*>& parts) {
    const std::size_t r = whole.shape.size();
    if (r < 3) return false;
    for (std::size_t d = 0; d + 3 < r; ++d)
        if (whole.shape[d] != 1) return false;
    std::int64_t sum = 0;
    for (const auto* p : parts) {
        if (p->shape.size() != r || p->type != whole.type) return false;
        for (std::size_t d = 0; d < r; ++d)
            if (d != r - 3 && p->shape[d] != whole.shape[d]) return false;
        sum += p->shape[r - 3];
    }
    return sum == whole.shape[r - 3];
}

}  // namespace zero_copy_detail

/// Sets `skip` on the channel SPLIT and CONCATENATION nodes that can be done by aliasing
/// (splits first, then concatenations, as the SDK does).
inline void mark_zero_copy(program& p) {
    using namespace zero_copy_detail;
    using B = builtin_operator;
    std::set<std::string> io;
    for (const auto& x : p.inputs) io.insert(x.name);
    for (const auto& x : p.outputs) io.insert(x.name);
    std::vector<std::set<std::string>> w, r;
    for (const auto& nd : p.nodes) {
        w.push_back(writes(nd));
        r.push_back(reads(nd));
    }
    auto touches_io = [&](const node_build& nd) {
        for (const auto& t : nd.tensors)
            if (io.count(t.name)) return true;
        return false;
    };
    // Nodes that read one of node k's outputs.
    auto consumers = [&](std::size_t k) {
        std::vector<std::size_t> out;
        for (std::size_t j = 0; j < p.nodes.size(); ++j) {
            if (j == k) continue;
            for (const auto& name : w[k])
                if (r[j].count(name)) {
                    out.push_back(j);
                    break;
                }
        }
        return out;
    };
    auto producers = [&](std::size_t k) {
        std::vector<std::size_t> out;
        for (std::size_t j = 0; j < p.nodes.size(); ++j) {
            if (j == k) continue;
            for (const auto& name : r[k])
                if (w[j].count(name)) {
                    out.push_back(j);
                    break;
                }
        }
        return out;
    };
    std::set<std::string> aliased;  // tensors already placed inside another buffer
    auto distinct_fresh = [&](const std::vector<const tensor_desc*>& parts) {
        std::set<std::string> seen;
        for (const auto* t : parts)
            if (!seen.insert(t->name).second || aliased.count(t->name)) return false;
        return true;
    };
    auto plain = [](const node_build& nd) {
        return nd.layers.empty() && nd.rec.output_strides == decltype(nd.rec.output_strides){1, 1} &&
               nd.tensors.size() == n_in(nd) + n_out(nd);
    };

    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        if (!is_type(nd, B::SPLIT) || !plain(nd) || n_in(nd) != 1 || touches_io(nd)) continue;
        if (nd.get<format::node_options::SplitOptions>().axis != -3) continue;
        std::vector<const tensor_desc*> parts;
        for (std::size_t i = 1; i < nd.tensors.size(); ++i) parts.push_back(&nd.tensors[i]);
        if (!channel_slices(nd.tensors[0], parts) || !distinct_fresh(parts)) continue;
        bool concat_reader = false;
        for (auto j : consumers(k)) concat_reader |= is_type(p.nodes[j], B::CONCATENATION);
        if (concat_reader) continue;
        nd.rec.skip = 1;
        for (const auto* t : parts) aliased.insert(t->name);
    }
    for (std::size_t k = 0; k < p.nodes.size(); ++k) {
        auto& nd = p.nodes[k];
        if (!is_type(nd, B::CONCATENATION) || !plain(nd) || n_out(nd) != 1 || touches_io(nd)) continue;
        const auto& whole = nd.tensors.back();
        const auto axis = nd.get<format::node_options::ConcatOptions>().axis;
        if (axis != static_cast<std::int32_t>(whole.shape.size()) - 3) continue;
        std::vector<const tensor_desc*> parts;
        for (std::size_t i = 0; i + 1 < nd.tensors.size(); ++i) parts.push_back(&nd.tensors[i]);
        if (!channel_slices(whole, parts) || !distinct_fresh(parts)) continue;
        // A producer whose other reader is already skipped keeps this one a copy (SDK rule).
        bool shared = false;
        for (auto j : producers(k))
            for (auto c : consumers(j)) shared |= c != k && p.nodes[c].rec.skip == 1;
        if (shared) continue;
        nd.rec.skip = 1;
        for (const auto* t : parts) aliased.insert(t->name);
    }
}

/// The placement of every tensor of a skipped node relative to the buffer it lives in, chains
/// (a part of a part) resolved to the outermost buffer.
inline std::map<std::string, alias> zero_copy_aliases(const program& p) {
    using namespace zero_copy_detail;
    using B = builtin_operator;
    std::map<std::string, alias> direct;  // one level: part -> whole
    for (const auto& nd : p.nodes) {
        if (nd.rec.skip != 1) continue;
        std::uint64_t at = 0;
        if (is_type(nd, B::CONCATENATION)) {
            for (std::size_t i = 0; i + 1 < nd.tensors.size(); ++i) {
                direct[nd.tensors[i].name] = {nd.tensors.back().name, at};
                at += dense_bytes(nd.tensors[i]);
            }
        } else if (is_type(nd, B::SPLIT)) {
            for (std::size_t i = 1; i < nd.tensors.size(); ++i) {
                direct[nd.tensors[i].name] = {nd.tensors[0].name, at};
                at += dense_bytes(nd.tensors[i]);
            }
        }
    }
    std::map<std::string, alias> out;
    for (const auto& [name, a] : direct) {
        alias r = a;
        for (std::size_t depth = 0; depth <= direct.size(); ++depth) {
            const auto it = direct.find(r.root);
            if (it == direct.end()) break;
            r.offset += it->second.offset;
            r.root = it->second.root;
        }
        out[name] = r;
    }
    return out;
}

}  // namespace vnnx::compiler
