#pragma once
// Topological order by depth-first search and clean-up (lowering.md §3.3). Splitting depends
// on this exact order: repeatedly take the lowest-index unfinished operator and visit it;
// visiting first visits, in operator-index order, every consumer of its outputs, then
// prepends the operator. Unreferenced tensors are dropped and indices renumbered.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "vnnx/ir/graph.hpp"

namespace vnnx::compiler::passes {

inline void sort_dfs(graph& g) {
    const std::size_t n = g.ops.size();
    std::vector<std::vector<std::int32_t>> readers(g.tensors.size());
    for (std::size_t i = 0; i < n; ++i)
        for (auto t : g.ops[i].inputs)
            if (t >= 0) readers[static_cast<std::size_t>(t)].push_back(static_cast<std::int32_t>(i));
    // Per operator: every operator consuming one of its outputs, in operator-index order.
    std::vector<std::vector<std::int32_t>> next(n);
    for (std::size_t i = 0; i < n; ++i) {
        for (auto t : g.ops[i].outputs)
            if (t >= 0) next[i].insert(next[i].end(), readers[static_cast<std::size_t>(t)].begin(),
                                       readers[static_cast<std::size_t>(t)].end());
        std::sort(next[i].begin(), next[i].end());
        next[i].erase(std::unique(next[i].begin(), next[i].end()), next[i].end());
    }

    std::vector<std::uint8_t> state(n, 0);  // 0 new, 1 on stack, 2 done
    std::vector<std::int32_t> order;        // post-order; reversed below
    order.reserve(n);
    // Iterative DFS: real graphs chain hundreds of operators.
    struct frame {
        std::int32_t op;
        std::size_t k = 0;
    };
    for (std::size_t root = 0; root < n; ++root) {
        if (state[root] != 0) continue;
        std::vector<frame> stack{{static_cast<std::int32_t>(root)}};
        state[root] = 1;
        while (!stack.empty()) {
            frame& f = stack.back();
            const auto& succ = next[static_cast<std::size_t>(f.op)];
            if (f.k < succ.size()) {
                const auto c = succ[f.k++];
                if (state[static_cast<std::size_t>(c)] == 1)
                    fail_input(g.source + ": the operator graph has a cycle through " +
                               describe(g.ops[static_cast<std::size_t>(c)]));
                if (state[static_cast<std::size_t>(c)] == 0) {
                    state[static_cast<std::size_t>(c)] = 1;
                    stack.push_back({c});
                }
                continue;
            }
            state[static_cast<std::size_t>(f.op)] = 2;
            order.push_back(f.op);
            stack.pop_back();
        }
    }
    std::reverse(order.begin(), order.end());
    std::vector<op> sorted;
    sorted.reserve(n);
    for (auto i : order) sorted.push_back(std::move(g.ops[static_cast<std::size_t>(i)]));
    g.ops = std::move(sorted);
}

/// Drops tensors no operator and no graph input/output references; renumbers the rest in order.
inline void drop_unused_tensors(graph& g) {
    std::vector<std::uint8_t> used(g.tensors.size(), 0);
    auto mark = [&](std::int32_t t) {
        if (t >= 0) used[static_cast<std::size_t>(t)] = 1;
    };
    for (const auto& o : g.ops) {
        for (auto t : o.inputs) mark(t);
        for (auto t : o.outputs) mark(t);
    }
    for (auto t : g.inputs) mark(t);
    for (auto t : g.outputs) mark(t);
    std::vector<std::int32_t> remap(g.tensors.size(), -1);
    std::vector<tensor> kept;
    for (std::size_t i = 0; i < g.tensors.size(); ++i)
        if (used[i]) {
            remap[i] = static_cast<std::int32_t>(kept.size());
            kept.push_back(std::move(g.tensors[i]));
        }
    auto fix = [&](std::vector<std::int32_t>& v) {
        for (auto& t : v)
            if (t >= 0) t = remap[static_cast<std::size_t>(t)];
    };
    for (auto& o : g.ops) {
        fix(o.inputs);
        fix(o.outputs);
    }
    fix(g.inputs);
    fix(g.outputs);
    g.tensors = std::move(kept);
}

}  // namespace vnnx::compiler::passes
