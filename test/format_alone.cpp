// The format layer is a drop-in for firmware build hosts: it must compile with only the
// standard library alone, never pulling in fmt or flatbuffers.
#include <vnnx/support/error.hpp>
#include <vnnx/support/bytes.hpp>
#include <vnnx/meta/fixed_string.hpp>
#include <vnnx/meta/pp.hpp>
#include <vnnx/meta/reflect.hpp>
#include <vnnx/meta/set.hpp>
#include <vnnx/meta/struct.hpp>
#include <vnnx/meta/union.hpp>
#include <vnnx/format.hpp>
#include <vnnx/format/builtin_operator.hpp>
#include <vnnx/format/c_check.hpp>
#include <vnnx/format/codec.hpp>
#include <vnnx/format/enums.hpp>
#include <vnnx/format/layout_asserts.hpp>
#include <vnnx/format/layout_json.hpp>
#include <vnnx/format/model_view.hpp>
#include <vnnx/format/records.hpp>
#include <vnnx/format/union_select.hpp>
#include <vnnx/format/writer.hpp>

#if defined(FMT_VERSION)
#error "the format layer must not include fmt"
#endif
#if defined(BOOST_VERSION) || defined(BOOST_HANA_CONFIG_HPP)
#error "the format layer must not include Boost"
#endif
#if defined(FLATBUFFERS_VERSION_MAJOR)
#error "the format layer must not include flatbuffers"
#endif
