// Every operator trait against the format and the simulator, at compile time: the node type it
// starts (or IDENTITY, whose node runs it as a layer) has a node executor, its layer type has a
// layer executor, its union member type is a member of the union of the record it fills, and
// that member is the one the format's type table (union_select.hpp) gives the types it emits.
// An operator added without its executor, or with a member the format lacks or places elsewhere,
// does not compile here. The cases below list the same facts at run time, by name, for the report.
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include <catch2/catch.hpp>

#include <vnnx/format/enums.hpp>
#include <vnnx/format/records.hpp>
#include <vnnx/format/union_select.hpp>
#include <vnnx/ops/registry.hpp>
#include <vnnx/sim/registry.hpp>

namespace {

namespace ops = vnnx::ops;
namespace fmt_ = vnnx::format;
using vnnx::sim::layer_exec;
using vnnx::sim::node_exec;

constexpr std::int32_t identity_code = static_cast<std::int32_t>(fmt_::vnnx_operator::IDENTITY);

constexpr bool type_in_range(std::int32_t t) { return t >= 0 && t <= vnnx::sim::max_type_code; }

/// Whether entry E's node and layer types have executors and its member is in the right union.
template <const ops::entry& E>
constexpr bool tied() {
    if (!E.supported) return true;
    constexpr std::int32_t node = E.node_type == ops::identity_node ? identity_code : E.node_type;
    static_assert(type_in_range(node), "an operator's node type is outside the simulator's type codes");
    constexpr bool node_ok = node_exec<node>::defined;
    constexpr bool layer_ok = [] {
        if constexpr (E.layer_type == ops::no_layer) {
            return true;
        } else {
            static_assert(type_in_range(E.layer_type), "an operator's layer type is outside the simulator's type codes");
            return layer_exec<E.layer_type>::defined;
        }
    }();
    // The member is in the union of what the trait fills (a layer's options or a node's), and it
    // is the member the format's type table gives the node and layer types it emits.
    const bool table_ok = (E.layer_type == ops::no_layer || fmt_::union_name_for_type(E.layer_type) == E.member) &&
                          (E.node_type == ops::identity_node || fmt_::union_name_for_type(E.node_type) == E.member);
    return node_ok && layer_ok && table_ok;
}

/// Whether trait T's member type is a member of the union of a record it fills.
template <class T, const ops::entry& E>
constexpr bool member_in_union() {
    using M = typename T::member;
    if constexpr (std::is_same_v<M, ops::no_member>) return true;
    else return (E.lowers_layer && fmt_::layer_union::holds<M>) || (E.lowers_node && fmt_::node_union::holds<M>);
}

template <std::size_t I>
constexpr bool trait_tied() {
    constexpr auto code = static_cast<vnnx::builtin_operator>(I);
    if constexpr (requires { ops::op<code>::summary; }) return tied<ops::table[I]>() && member_in_union<ops::op<code>, ops::table[I]>();
    else return true;
}

template <std::size_t... I>
constexpr int first_untied(std::index_sequence<I...>) {
    int first = -1;
    ((first < 0 && !trait_tied<I>() ? (first = static_cast<int>(I), 0) : 0), ...);
    return first;
}

constexpr int untied = first_untied(std::make_index_sequence<ops::table.size()>{});
static_assert(untied == -1, "an operator trait lacks a simulator executor, or its union member is not in the union it fills "
                            "or not the one the format's type table gives its types "
                            "(the test below names it)");
static_assert(tied<ops::lut_entry>() && member_in_union<ops::lut_op, ops::lut_entry>(), "the LUT chain operator lacks its executor or union member");

}  // namespace

TEST_CASE("ops/sim ties: every supported operator's node and layer types have executors") {
    int supported = 0;
    for (const auto& e : ops::table) {
        if (!e.supported) continue;
        ++supported;
        INFO(vnnx::builtin_name(e.code) << " node " << e.node_type << " layer " << e.layer_type << " member " << e.member);
        const std::int32_t node = e.node_type == ops::identity_node ? identity_code : e.node_type;
        CHECK(vnnx::sim::node_function(node) != nullptr);
        if (e.layer_type != ops::no_layer) CHECK(vnnx::sim::layer_function(e.layer_type) != nullptr);
        if (!e.member.empty()) {
            const bool layer = e.lowers_layer && fmt_::layer_union::index_of_name(e.member) < fmt_::layer_union::member_count;
            const bool nodem = e.lowers_node && fmt_::node_union::index_of_name(e.member) < fmt_::node_union::member_count;
            CHECK(e.lowers_layer == (e.lower_layer != nullptr));
            CHECK(e.lowers_node == (e.lower_node != nullptr));
            CHECK((layer || nodem));
        }
    }
    CHECK(supported >= 70);  // the operator table is not empty by accident
}
