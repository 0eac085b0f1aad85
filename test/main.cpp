// Catch2's main lives alone so that test translation units stay cheap to rebuild.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
