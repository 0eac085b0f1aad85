// Constants of the compiler's graph: copied by default, borrowed from the model's bytes inside
// compile(). A borrowed constant reads the file's bytes in place; an owned one outlives them;
// copies and moves keep each kind pointing at the right bytes. (compile() itself, borrowing, is
// checked by every test that compiles a model and compares the simulator with the reference.)
#include <cstdint>
#include <vector>

#include <catch2/catch.hpp>

#include "vnnx/compiler/import.hpp"
#include "vnnx/tflite/builder.hpp"

namespace {

using vnnx::compiler::constant_bytes;
using vnnx::tflite::tensor_type;
namespace opt = vnnx::tflite;

std::vector<std::byte> bytes_of(std::initializer_list<int> v) {
    std::vector<std::byte> out;
    for (int x : v) out.push_back(static_cast<std::byte>(x));
    return out;
}

// x [1,8] int8 -> RESHAPE(x, shape) -> [2,4]: one int32 constant of 8 bytes.
std::vector<std::byte> reshape_model() {
    vnnx::tflite::builder b;
    const vnnx::tflite::quant q{{0.5f}, {3}, 0};
    const auto x = b.add_tensor("x", tensor_type::INT8, {1, 8}, q);
    const auto shape = b.add_constant("shape", tensor_type::INT32, {2}, std::vector<std::int32_t>{2, 4});
    const auto y = b.add_tensor("y", tensor_type::INT8, {2, 4}, q);
    b.add_operator(vnnx::builtin_operator::RESHAPE, {x, shape}, {y}, opt::reshape_options{{2, 4}});
    b.set_inputs({x});
    b.set_outputs({y});
    return b.finish();
}

bool inside(const std::byte* p, const std::vector<std::byte>& buf) {
    return p >= buf.data() && p < buf.data() + buf.size();
}

}  // namespace

TEST_CASE("constant bytes: owned and borrowed bytes through copies, moves and assignments") {
    const auto file = bytes_of({1, 2, 3, 4, 5});
    constant_bytes owned(bytes_of({9, 8, 7}));
    const auto borrowed = constant_bytes::borrow(std::span<const std::byte>(file).subspan(1, 3));
    CHECK_FALSE(owned.borrowed());
    CHECK(borrowed.borrowed());
    CHECK(borrowed.data() == file.data() + 1);
    CHECK(borrowed.size() == 3);
    CHECK(std::to_integer<int>(borrowed.at(2)) == 4);
    CHECK_THROWS_AS(borrowed.at(3), std::out_of_range);

    // A copy of an owned constant has its own bytes; of a borrowed one, the same view.
    constant_bytes copy = owned;
    CHECK(copy == owned);
    CHECK(copy.data() != owned.data());
    constant_bytes view = borrowed;
    CHECK(view.data() == borrowed.data());

    // A move keeps the bytes valid and the moved-from object empty.
    constant_bytes moved = std::move(copy);
    CHECK(moved == constant_bytes(bytes_of({9, 8, 7})));
    CHECK(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from state is specified here

    // Assignment from either kind to either kind.
    moved = borrowed;
    CHECK(moved.data() == file.data() + 1);
    moved = bytes_of({6});
    CHECK(moved.size() == 1);
    CHECK(std::to_integer<int>(moved[0]) == 6);
    CHECK_FALSE(moved.borrowed());
    constant_bytes self = bytes_of({1, 1});
    const auto* before = self.data();
    constant_bytes& alias = self;
    self = std::move(alias);  // a self-move leaves a valid object
    CHECK(self.size() == 2);
    CHECK(self.data() == before);

    // The graph's vectors of tensors move their constants when they grow.
    std::vector<constant_bytes> many;
    for (int i = 0; i < 100; ++i) many.emplace_back(std::vector<std::byte>(static_cast<std::size_t>(i + 1), std::byte{7}));
    for (int i = 0; i < 100; ++i) {
        REQUIRE(many[static_cast<std::size_t>(i)].size() == static_cast<std::size_t>(i + 1));
        CHECK(std::to_integer<int>(many[static_cast<std::size_t>(i)].at(static_cast<std::size_t>(i))) == 7);
    }
}

TEST_CASE("constant bytes: import_graph copies constants unless asked to borrow them from the model") {
    auto bytes = reshape_model();
    const auto m = vnnx::tflite::model_view::parse(bytes, "reshape.tflite");
    const auto copied = vnnx::compiler::import_graph(m);
    const auto borrowed = vnnx::compiler::import_graph(m, vnnx::compiler::constant_storage::borrow);
    REQUIRE(copied.tensors.size() == borrowed.tensors.size());
    std::size_t constants = 0;
    for (std::size_t i = 0; i < copied.tensors.size(); ++i) {
        const auto& a = copied.tensors[i];
        const auto& b = borrowed.tensors[i];
        REQUIRE(a.is_constant() == b.is_constant());
        if (!a.is_constant()) continue;
        ++constants;
        CHECK(*a.data == *b.data);
        CHECK_FALSE(inside(a.data->data(), bytes));
        CHECK(inside(b.data->data(), bytes));
        CHECK(b.data->borrowed());
        CHECK(b.values<std::int32_t>() == std::vector<std::int32_t>{2, 4});
    }
    CHECK(constants == 1);
    // A copied graph outlives the model's bytes (the bytes are overwritten, then freed).
    std::fill(bytes.begin(), bytes.end(), std::byte{0});
    bytes = {};
    for (const auto& t : copied.tensors)
        if (t.is_constant()) CHECK(t.values<std::int32_t>() == std::vector<std::int32_t>{2, 4});
}
