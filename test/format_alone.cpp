// The format layer is a drop-in for firmware build hosts: it must compile with only the
// standard library and Boost.Hana, never pulling in fmt or flatbuffers.
#include <vnnx/support/error.hpp>
#include <vnnx/support/bytes.hpp>

#if defined(FMT_VERSION)
#error "the format layer must not include fmt"
#endif
#if defined(FLATBUFFERS_VERSION_MAJOR)
#error "the format layer must not include flatbuffers"
#endif
