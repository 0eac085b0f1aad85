#pragma once
// Activation memory planning: one shared arena, first-fit over the node sequence
// (vnnx-format.md §7.1, lowering.md §11.4). A buffer lives from the node that first touches
// it to the node that last touches it; buffers whose lifetimes do not overlap may share bytes.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "vnnx/support/bytes.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::compiler {

struct buffer_request {
    std::uint64_t bytes = 0;
    std::int32_t first_use = 0;  // node index
    std::int32_t last_use = 0;   // node index, inclusive
};

struct arena_plan {
    std::vector<std::uint64_t> offsets;  // one per request, arena-relative, 16-byte aligned
    std::uint64_t size = 0;
};

/// First-fit placement in request order (callers pass requests in order of first use).
inline arena_plan plan_arena(const std::vector<buffer_request>& requests, std::uint64_t alignment = 16) {
    struct placed {
        std::uint64_t begin, end;
        std::int32_t first, last;
    };
    arena_plan plan;
    plan.offsets.resize(requests.size());
    std::vector<placed> live;
    for (std::size_t i = 0; i < requests.size(); ++i) {
        const auto& r = requests[i];
        if (r.last_use < r.first_use) fail(error_kind::bad_input, "arena: a buffer's last use precedes its first use");
        const std::uint64_t need = round_up(std::max<std::uint64_t>(r.bytes, 1), alignment);
        // Buffers that overlap this one in time, sorted by address.
        std::vector<placed> busy;
        for (const auto& p : live)
            if (!(p.last < r.first_use || r.last_use < p.first)) busy.push_back(p);
        std::sort(busy.begin(), busy.end(), [](const placed& a, const placed& b) { return a.begin < b.begin; });
        std::uint64_t at = 0;
        for (const auto& p : busy) {
            if (at + need <= p.begin) break;
            at = std::max(at, p.end);
        }
        plan.offsets[i] = at;
        live.push_back({at, at + need, r.first_use, r.last_use});
        plan.size = std::max(plan.size, at + need);
    }
    return plan;
}

}  // namespace vnnx::compiler
