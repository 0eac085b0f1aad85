# VNNX_TEST_SINGLE_INCLUDE: the whole test suite built against one generated header. Every
# <vnnx/...> include of the tests is redirected to ${VNNX_SINGLE_INCLUDE_DIR}/vnnx.hpp by a
# forwarding header, so the split headers are never read and the single header must hold all
# the tests use.
if(NOT EXISTS "${VNNX_SINGLE_INCLUDE_DIR}/vnnx.hpp")
  message(FATAL_ERROR "VNNX_TEST_SINGLE_INCLUDE: ${VNNX_SINGLE_INCLUDE_DIR}/vnnx.hpp does not exist "
                      "(scripts/gen_single_include.py makes it)")
endif()
set(_vnnx_shim "${PROJECT_BINARY_DIR}/single_include_shim")
foreach(_h IN LISTS VNNX_PUBLIC_HEADERS)
  file(RELATIVE_PATH _rel "${PROJECT_SOURCE_DIR}/include" "${_h}")
  # CONFIGURE writes only when the text changes: no rebuilds on every configure.
  file(CONFIGURE OUTPUT "${_vnnx_shim}/${_rel}" CONTENT "#pragma once\n#include <vnnx.hpp>\n")
endforeach()
target_include_directories(vnnx_tests BEFORE PRIVATE "${_vnnx_shim}" "${VNNX_SINGLE_INCLUDE_DIR}")
# The unit that compiles the entry points once (test/library_once.cpp) reads the single header too.
target_include_directories(vnnx_library_once BEFORE PRIVATE "${_vnnx_shim}" "${VNNX_SINGLE_INCLUDE_DIR}")
