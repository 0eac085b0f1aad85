#pragma once
// The bytes of a constant tensor in the compiler's graph: owned, or borrowed from the model file
// the graph was imported from. compile() borrows (the file outlives its graph), which spares
// copying every weight of the model (MobileNetV2: 3.5 MiB and 900 page faults, a tenth of a
// compile); graphs handed to callers own their bytes. Passes that make new constants assign a
// vector; nothing writes a constant in place, so the bytes are read-only here.
#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace vnnx::compiler {

class constant_bytes {
public:
    constant_bytes() = default;
    constant_bytes(std::vector<std::byte> owned) : own_(std::move(owned)), owned_(true) { view_ = own_; }
    [[nodiscard]] static constant_bytes borrow(std::span<const std::byte> bytes) {
        constant_bytes c;
        c.view_ = bytes;
        return c;
    }

    constant_bytes(const constant_bytes& o) : own_(o.own_), view_(o.view_), owned_(o.owned_) {
        if (owned_) view_ = own_;
    }
    constant_bytes(constant_bytes&& o) noexcept : own_(std::move(o.own_)), view_(o.view_), owned_(o.owned_) {
        if (owned_) view_ = own_;
        o.view_ = {};
    }
    constant_bytes& operator=(constant_bytes o) noexcept {
        std::swap(own_, o.own_);
        std::swap(owned_, o.owned_);
        view_ = owned_ ? std::span<const std::byte>(own_) : o.view_;
        return *this;
    }
    ~constant_bytes() = default;

    [[nodiscard]] const std::byte* data() const noexcept { return view_.data(); }
    [[nodiscard]] std::size_t size() const noexcept { return view_.size(); }
    [[nodiscard]] bool empty() const noexcept { return view_.empty(); }
    [[nodiscard]] const std::byte* begin() const noexcept { return view_.data(); }
    [[nodiscard]] const std::byte* end() const noexcept { return view_.data() + view_.size(); }
    [[nodiscard]] const std::byte& operator[](std::size_t i) const noexcept { return view_[i]; }
    [[nodiscard]] const std::byte& at(std::size_t i) const {
        if (i >= view_.size()) throw std::out_of_range("constant_bytes::at");
        return view_[i];
    }
    [[nodiscard]] std::span<const std::byte> span() const noexcept { return view_; }
    operator std::span<const std::byte>() const noexcept { return view_; }
    /// Whether the bytes live in the model file rather than here.
    [[nodiscard]] bool borrowed() const noexcept { return !owned_ && !view_.empty(); }

    friend bool operator==(const constant_bytes& a, const constant_bytes& b) noexcept {
        return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }

private:
    std::vector<std::byte> own_;
    std::span<const std::byte> view_;
    bool owned_ = false;
};

}  // namespace vnnx::compiler
