#pragma once
// Runs an element-wise binary row kernel over equal-length operands in chunks spread over the
// thread pool. A chunk is large enough to hide the pool's hand-off and small enough that both
// operands and the output of one chunk stay in L1/L2.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "vnnx/sim/isa.hpp"
#include "vnnx/sim/thread_pool.hpp"
#include "vnnx/support/error.hpp"

namespace vnnx::sim::kernels {

// row(tag, a, b, out, n) is called with the ISA tag chosen by `isa` for every chunk.
template <class Row>
void binary_rows(isa_kind isa, std::span<const std::uint8_t> a, std::span<const std::uint8_t> b,
                 std::span<std::uint8_t> out, thread_pool* pool, std::string_view what, Row row) {
    if (a.size() != b.size() || a.size() != out.size())
        fail_input(std::string(what) + ": element counts differ (" + std::to_string(a.size()) + ", " +
                   std::to_string(b.size()) + ", output " + std::to_string(out.size()) + ")");
    // At most 16 Ki elements, and at least four chunks per thread down to 2 Ki elements: the
    // residual additions of small layers (a few thousand elements) would otherwise run on one
    // thread.
    const std::size_t threads = pool ? pool->size() : 1;
    const std::size_t chunk = std::clamp<std::size_t>(a.size() / (4 * threads) / 64 * 64, 2048, 16384);
    const std::size_t chunks = (a.size() + chunk - 1) / chunk;
    auto body = [&](std::size_t c) {
        const std::size_t i = c * chunk, n = std::min(chunk, a.size() - i);
        dispatch(isa, [&](auto tag) { row(tag, a.data() + i, b.data() + i, out.data() + i, n); });
    };
    if (pool) pool->parallel_for(chunks, body);
    else
        for (std::size_t c = 0; c < chunks; ++c) body(c);
}

}  // namespace vnnx::sim::kernels
