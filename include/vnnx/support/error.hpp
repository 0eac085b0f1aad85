#pragma once
// The one exception type of the library. It carries the kind of failure so that the
// command line can map it to an exit status (1: bad or unsupported input, 2: bad usage).
// No fmt here: the format layer uses it and must build on hosts without fmt.
#include <stdexcept>
#include <string>
#include <utility>

namespace vnnx {

enum class error_kind { bad_input, unsupported, usage, io, limit };

class error : public std::runtime_error {
public:
    error(error_kind kind, std::string what) : std::runtime_error(std::move(what)), kind_(kind) {}
    [[nodiscard]] error_kind kind() const noexcept { return kind_; }
    [[nodiscard]] int exit_code() const noexcept { return kind_ == error_kind::usage ? 2 : 1; }

private:
    error_kind kind_;
};

[[noreturn]] inline void fail(error_kind kind, std::string what) { throw error(kind, std::move(what)); }
[[noreturn]] inline void fail_input(std::string what) { throw error(error_kind::bad_input, std::move(what)); }

}  // namespace vnnx
