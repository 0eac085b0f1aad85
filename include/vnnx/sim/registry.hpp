#pragma once
// Folds every node_exec / layer_exec specialisation into dispatch tables indexed by the
// VNNX type code, at compile time: the simulator's dispatch is one array access.
#include <array>
#include <cstdint>
#include <utility>

#include "vnnx/sim/executors.hpp"
#include "vnnx/sim/layers/all.hpp"
#include "vnnx/sim/nodes/all.hpp"
#include "vnnx/support/linkage.hpp"

namespace vnnx::sim {

/// The executor of node (layer) type code `type`, or nullptr when the simulator has none.
[[nodiscard]] VNNX_ENTRY node_fn node_function(std::int32_t type) noexcept;
[[nodiscard]] VNNX_ENTRY layer_fn layer_function(std::int32_t type) noexcept;
/// The preparation of node type code `type` (node_exec<T>::prepare), or nullptr when it has none.
[[nodiscard]] VNNX_ENTRY node_fn node_prepare_function(std::int32_t type) noexcept;
/// The same for layer type code `type` (layer_exec<T>::prepare).
[[nodiscard]] VNNX_ENTRY layer_fn layer_prepare_function(std::int32_t type) noexcept;

#if VNNX_DEFINE_ENTRIES
namespace detail {
template <std::size_t... I>
constexpr std::array<node_fn, sizeof...(I)> make_node_table(std::index_sequence<I...>) {
    return {{[] {
        if constexpr (node_exec<static_cast<std::int32_t>(I)>::defined) return &node_exec<static_cast<std::int32_t>(I)>::run;
        else return static_cast<node_fn>(nullptr);
    }()...}};
}
// The `prepare` of each executor Exec<T> that has one (node_exec or layer_exec), else nullptr.
template <template <std::int32_t> class Exec, class Fn, std::size_t... I>
constexpr std::array<Fn, sizeof...(I)> make_prepare_table(std::index_sequence<I...>) {
    return {{[] {
        if constexpr (requires { &Exec<static_cast<std::int32_t>(I)>::prepare; }) return &Exec<static_cast<std::int32_t>(I)>::prepare;
        else return static_cast<Fn>(nullptr);
    }()...}};
}
template <std::size_t... I>
constexpr std::array<layer_fn, sizeof...(I)> make_layer_table(std::index_sequence<I...>) {
    return {{[] {
        if constexpr (layer_exec<static_cast<std::int32_t>(I)>::defined) return &layer_exec<static_cast<std::int32_t>(I)>::run;
        else return static_cast<layer_fn>(nullptr);
    }()...}};
}
inline constexpr auto node_table = make_node_table(std::make_index_sequence<max_type_code + 1>{});
inline constexpr auto layer_table = make_layer_table(std::make_index_sequence<max_type_code + 1>{});
inline constexpr auto prepare_table = make_prepare_table<node_exec, node_fn>(std::make_index_sequence<max_type_code + 1>{});
inline constexpr auto layer_prepare_table = make_prepare_table<layer_exec, layer_fn>(std::make_index_sequence<max_type_code + 1>{});
}  // namespace detail

VNNX_ENTRY node_fn node_function(std::int32_t type) noexcept {
    return type >= 0 && type <= max_type_code ? detail::node_table[static_cast<std::size_t>(type)] : nullptr;
}
VNNX_ENTRY layer_fn layer_function(std::int32_t type) noexcept {
    return type >= 0 && type <= max_type_code ? detail::layer_table[static_cast<std::size_t>(type)] : nullptr;
}
VNNX_ENTRY node_fn node_prepare_function(std::int32_t type) noexcept {
    return type >= 0 && type <= max_type_code ? detail::prepare_table[static_cast<std::size_t>(type)] : nullptr;
}
VNNX_ENTRY layer_fn layer_prepare_function(std::int32_t type) noexcept {
    return type >= 0 && type <= max_type_code ? detail::layer_prepare_table[static_cast<std::size_t>(type)] : nullptr;
}

#endif

}  // namespace vnnx::sim
