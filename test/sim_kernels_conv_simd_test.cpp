#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "support/sim_random.hpp"

#include <vnnx/sim/kernels/conv.hpp>

namespace {
namespace k = vnnx::sim::kernels;
using vnnx::sim::isa_kind;

using namespace vnnx_test;
}  // namespace


namespace {
// One random conv: scalar vs every SIMD ISA of this CPU, byte for byte.
void check_random_conv(std::mt19937& rng, const k::conv_shape& s, bool extreme) {
    const auto x = random_bytes(rng, s.input_size(), extreme);
    const auto w = random_weights(rng, s.weight_size(), extreme);
    const std::int64_t acc_scale = std::max<std::int64_t>(1, 128 * 64 * (s.reduction() > 16 ? 8 : 1));
    const auto rq = random_requant(rng, s.kernels, s.output_signed, acc_scale);
    const k::conv2d ref(s, w, rq, isa_kind::scalar);
    std::vector<std::uint8_t> want(s.output_size());
    ref.run(x, want);
    for (isa_kind i : simd_isas()) {
        const k::conv2d c(s, w, rq, i);
        std::vector<std::uint8_t> got(s.output_size(), 0xA5);
        c.run(x, got);
        INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " H=" << s.height << " W=" << s.width
                    << " K=" << s.kernels << " k=" << s.kernel_h << "x" << s.kernel_w << " s=" << s.stride_h << ","
                    << s.stride_w << " d=" << s.dilation_h << "," << s.dilation_w << " g=" << s.groups
                    << " in_signed=" << s.input_signed << " out_signed=" << s.output_signed);
        REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
    }
}
}  // namespace

TEST_CASE("conv kernels: SIMD equals scalar on random ordinary convolutions") {
    std::mt19937 rng(20261130);
    std::uniform_int_distribution<int> ch(1, 70), sp(1, 23), kk(1, 5), st(1, 3), dl(1, 3), coin(0, 1), ten(0, 9);
    int done = 0;
    while (done < 60) {
        k::conv_shape s;
        s.channels = ch(rng);
        s.kernels = ch(rng);
        s.kernel_h = kk(rng);
        s.kernel_w = kk(rng);
        s.stride_h = st(rng);
        s.stride_w = st(rng);
        s.dilation_h = dl(rng);
        s.dilation_w = dl(rng);
        s.height = (s.kernel_h - 1) * s.dilation_h + sp(rng);
        s.width = (s.kernel_w - 1) * s.dilation_w + sp(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        check_random_conv(rng, s, ten(rng) == 0);
        ++done;
    }
    CHECK(done == 60);
}

TEST_CASE("conv kernels: SIMD equals scalar on typical layer shapes") {
    std::mt19937 rng(7);
    struct shape_case { int c, h, w, k, kh, kw, sh, sw; };
    // 1x1 expand/project, 3x3 stride 1 and 2, 7x7 maps, wide channel counts, the stem conv.
    const shape_case cases[] = {{16, 28, 28, 96, 1, 1, 1, 1}, {96, 14, 14, 24, 1, 1, 1, 1}, {3, 33, 33, 32, 3, 3, 2, 2},
                                {64, 20, 20, 64, 3, 3, 1, 1}, {160, 7, 7, 320, 1, 1, 1, 1}, {33, 9, 9, 65, 3, 3, 2, 2},
                                {8, 16, 16, 17, 3, 3, 1, 2},
                                // one output pixel (a classifier; an odd count of channel groups; 3x3 taps)
                                {1280, 1, 1, 1001, 1, 1, 1, 1}, {9, 1, 1, 13, 1, 1, 1, 1}, {37, 3, 3, 19, 3, 3, 1, 1},
                                {5, 4, 4, 7, 3, 3, 2, 2}};
    for (const auto& cs : cases)
        for (int sign = 0; sign < 4; ++sign) {
            k::conv_shape s;
            s.channels = cs.c, s.height = cs.h, s.width = cs.w, s.kernels = cs.k;
            s.kernel_h = cs.kh, s.kernel_w = cs.kw, s.stride_h = cs.sh, s.stride_w = cs.sw;
            s.input_signed = sign & 1;
            s.output_signed = sign & 2;
            check_random_conv(rng, s, sign == 3);
        }
}

TEST_CASE("conv kernels: extreme inputs and weights at the largest exact reduction stay exact") {
    // 4096 channels x 4x4 taps = 65536 products of 128*128 or 255*128: the accumulator limit.
    std::mt19937 rng(3);
    for (int sign = 0; sign < 2; ++sign) {
        k::conv_shape s;
        s.channels = 4096, s.height = 4, s.width = 5, s.kernels = 3, s.kernel_h = 4, s.kernel_w = 4;
        s.input_signed = sign;
        const auto x = std::vector<std::uint8_t>(s.input_size(), sign ? 0x80 : 0xFF);
        std::vector<std::int8_t> w(s.weight_size(), -128);
        for (std::size_t i = s.weight_size() / 3; i < s.weight_size(); ++i) w[i] = 127;  // kernel 0 negative
        k::requant_params rq;
        rq.multiplier = {1, 1, 1};
        rq.shift = {32, 32, 32};
        rq.constant = {0, 0, 0};
        // (acc + 0) >> 32 is -1 for negative acc, 0 otherwise: the sign of the exact sum.
        const k::conv2d ref(s, w, rq, isa_kind::scalar);
        std::vector<std::uint8_t> want(s.output_size());
        ref.run(x, want);
        const std::uint8_t neg = 0xFF, zero = 0;
        // int8: -128 * -128 > 0 for kernel 0; uint8: 255 * -128 < 0.
        CHECK(want[0] == (sign ? zero : neg));
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(s.output_size());
            k::conv2d(s, w, rq, i).run(x, got);
            CHECK(got == want);
        }
    }
}

TEST_CASE("conv kernels: pitched output rows land where the dense ones would, the gaps untouched or filled") {
    // Output (k, y, x) at k*plane + y*row + x (the conv node writes a hardware grid this way):
    // every ISA, depthwise and groups = 1, one output pixel, one pixel per row, odd widths. In
    // half the cases the gaps between rows are to be filled with a byte (conv_output_pitch::gap_fill).
    std::mt19937 rng(2024);
    std::uniform_int_distribution<int> ch(1, 24), sp(1, 40), kk(1, 4), st(1, 2), extra(0, 9), coin(0, 1);
    vnnx::sim::thread_pool pool(2);
    for (int n = 0; n < 40; ++n) {
        k::conv_shape s;
        s.channels = ch(rng);
        const bool dw = coin(rng);
        s.kernels = dw ? s.channels : ch(rng);
        s.groups = dw ? s.channels : 1;
        s.kernel_h = kk(rng);
        s.kernel_w = kk(rng);
        s.stride_h = st(rng);
        s.stride_w = st(rng);
        s.height = s.kernel_h + (n % 7 == 0 ? 0 : sp(rng));
        s.width = s.kernel_w + (n % 5 == 0 ? 0 : sp(rng));
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto w = random_weights(rng, s.weight_size(), false);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 32);
        const auto oh = static_cast<std::size_t>(s.out_h()), ow = static_cast<std::size_t>(s.out_w());
        const k::conv_output_pitch pitch{ow + static_cast<std::size_t>(extra(rng)) + static_cast<std::size_t>(st(rng) - 1) * ow, 0};
        const int fill = coin(rng) ? static_cast<int>(rng() % 256) : -1;
        const k::conv_output_pitch p{pitch.row, (oh - 1) * pitch.row + ow + static_cast<std::size_t>(extra(rng)), fill};
        std::vector<std::uint8_t> dense(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, dense);
        std::vector<std::uint8_t> want(static_cast<std::size_t>(s.kernels) * p.plane, 0xA5);
        for (std::size_t kk2 = 0; kk2 < static_cast<std::size_t>(s.kernels); ++kk2)
            for (std::size_t y = 0; y < oh; ++y) {
                std::copy_n(dense.begin() + static_cast<std::ptrdiff_t>((kk2 * oh + y) * ow), ow,
                            want.begin() + static_cast<std::ptrdiff_t>(kk2 * p.plane + y * p.row));
                if (fill >= 0 && y + 1 < oh)
                    std::fill_n(want.begin() + static_cast<std::ptrdiff_t>(kk2 * p.plane + y * p.row + ow), p.row - ow,
                                static_cast<std::uint8_t>(fill));
            }
        std::vector<isa_kind> isas = simd_isas();
        isas.push_back(isa_kind::scalar);
        for (isa_kind i : isas) {
            std::vector<std::uint8_t> got(want.size(), 0xA5);
            k::conv_workspace ws;
            k::conv2d(s, w, rq, i).run(x, got, p, ws, coin(rng) ? &pool : nullptr);
            INFO("isa " << vnnx::sim::isa_name(i) << " dw=" << dw << " C=" << s.channels << " K=" << s.kernels << " "
                        << s.height << "x" << s.width << " k=" << s.kernel_h << "x" << s.kernel_w << " s=" << s.stride_h
                        << "," << s.stride_w << " row=" << p.row << " plane=" << p.plane << " fill=" << fill);
            REQUIRE(got == want);
        }
    }
}

TEST_CASE("conv kernels: tiles requantized in registers and the short last tile equal scalar") {
    // Ordinary convolutions whose pixel count leaves every remainder modulo the 48-pixel tile
    // (the last tile computes 16, 32 or 48 pixels), with requantization that has an accumulator
    // clamp on every channel (the in-register path) except, in half the cases, one channel of
    // the second k-block (that block takes the path through memory).
    std::mt19937 rng(48);
    std::uniform_int_distribution<int> ch(1, 40), kk(1, 3), coin(0, 1);
    int checked = 0;
    std::size_t clamped = 0, channels = 0;  // channels the in-register path can take
    for (int pixels = 1; pixels <= 100; ++pixels) {
        k::conv_shape s;
        s.channels = ch(rng);
        s.kernels = 9 + ch(rng);
        s.kernel_h = kk(rng);
        s.kernel_w = kk(rng);
        // H x W output pixels = pixels (W = a divisor), stride 1: every grid pixel is an output.
        int w = 1;
        for (int d = 1; d <= pixels; ++d)
            if (pixels % d == 0 && d <= 12) w = d;
        s.height = pixels / w + s.kernel_h - 1;
        s.width = w + s.kernel_w - 1;
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto wts = random_weights(rng, s.weight_size(), false);
        auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64 * 8);
        for (std::size_t i = 0; i < rq.multiplier.size(); ++i) {
            const int cap = rq.shift[i] >= 16 ? 65535 : 1 << rq.shift[i];
            rq.multiplier[i] = static_cast<std::uint16_t>(std::min<int>(rq.multiplier[i], cap));
            rq.constant[i] = std::clamp<std::int64_t>(rq.constant[i], -(std::int64_t{1} << 44), std::int64_t{1} << 44);
        }
        const bool mixed = coin(rng) == 1;
        if (mixed) {
            rq.shift[9] = 8;
            rq.multiplier[9] = 300;  // om > 2^o: no accumulator clamp
        }
        for (std::size_t i = 0; i < rq.multiplier.size(); ++i, ++channels)
            clamped += k::acc_clamp_range(rq.multiplier[i], rq.constant[i], rq.shift[i], rq.act_min, rq.act_max).ok;
        const k::conv2d ref(s, wts, rq, isa_kind::scalar);
        std::vector<std::uint8_t> want(s.output_size());
        ref.run(x, want);
        for (isa_kind i : simd_isas()) {
            const k::conv2d c(s, wts, rq, i);
            std::vector<std::uint8_t> got(s.output_size(), 0xA5);
            c.run(x, got);
            INFO("isa " << vnnx::sim::isa_name(i) << " pixels=" << pixels << " C=" << s.channels << " K=" << s.kernels
                        << " k=" << s.kernel_h << "x" << s.kernel_w << " mixed=" << mixed);
            REQUIRE(std::equal(want.begin(), want.end(), got.begin()));
            ++checked;
        }
    }
    CHECK(checked >= 100);
    CHECK(clamped * 10 >= channels * 7);
}

TEST_CASE("conv kernels: rows computed at a padded pitch (gap_row) land where the dense ones would") {
    // The output of each channel starts `lead` bytes into a plane of rows `pitch` wide (a padded
    // tensor); only the gaps between rows may take other bytes, nothing before the first row
    // or after the last row's end of any channel.
    std::mt19937 rng(911);
    std::uniform_int_distribution<int> ch(1, 40), sp(1, 30), kk(1, 3), extra(1, 5), coin(0, 1);
    for (int n = 0; n < 40; ++n) {
        k::conv_shape s;
        s.channels = ch(rng);
        s.kernels = ch(rng);
        s.kernel_h = s.kernel_w = n % 4 == 3 ? kk(rng) : 1;
        s.height = s.kernel_h - 1 + sp(rng);
        s.width = s.kernel_w - 1 + sp(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const int oh = s.out_h(), ow = s.out_w();
        const int pitch = ow + extra(rng), lead_rows = coin(rng), lead = lead_rows * pitch + coin(rng);
        const std::size_t plane = static_cast<std::size_t>(lead + oh * pitch + coin(rng));
        const int fill = coin(rng) ? static_cast<int>(rng() % 256) : -1;
        s.gap_row = pitch;
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto w = random_weights(rng, s.weight_size(), false);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64 * 8);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : simd_isas()) {
            const k::conv2d c(s, w, rq, i);
            std::vector<std::uint8_t> got(plane * static_cast<std::size_t>(s.kernels), 0xA5);
            k::conv_workspace ws;
            c.run(std::span<const std::uint8_t>(x), std::span<std::uint8_t>(got).subspan(static_cast<std::size_t>(lead)),
                  k::conv_output_pitch{static_cast<std::size_t>(pitch), plane, fill}, ws);
            INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " K=" << s.kernels << " k=" << s.kernel_h
                        << " H=" << s.height << " W=" << s.width << " pitch=" << pitch << " lead=" << lead
                        << " fill=" << fill);
            for (int kk2 = 0; kk2 < s.kernels; ++kk2) {
                const std::uint8_t* g = got.data() + static_cast<std::size_t>(kk2) * plane;
                for (std::size_t b = 0; b < plane; ++b) {
                    const auto rel = static_cast<std::int64_t>(b) - lead;
                    const std::int64_t y = rel >= 0 ? rel / pitch : -1, xx = rel >= 0 ? rel % pitch : -1;
                    if (y >= 0 && y < oh && xx < ow) {
                        REQUIRE(g[b] == want[(static_cast<std::size_t>(kk2) * oh + static_cast<std::size_t>(y)) * ow +
                                             static_cast<std::size_t>(xx)]);
                    } else if (!(y >= 0 && y < oh - 1)) {
                        REQUIRE(g[b] == 0xA5);  // before the first row or after the last row's end
                    } else if (fill >= 0) {
                        REQUIRE(g[b] == fill);  // a gap between rows
                    }
                }
            }
        }
    }
}

TEST_CASE("conv kernels: strided rows at a pitch equal to the grid's, gaps filled, equal scalar") {
    // A strided convolution whose output row pitch is its grid width ceil(W / stride) (a hardware
    // grid): with gap_fill the kernels store whole tiles at that pitch and the pad lands in the
    // gaps; it must equal scalar, the gaps must hold the fill and nothing after the last row changes.
    std::mt19937 rng(77);
    std::uniform_int_distribution<int> ch(1, 40), sp(4, 40), coin(0, 1), extra(0, 3);
    vnnx::sim::thread_pool pool(2);
    // Cases are drawn until 24 have gaps, so the count does not depend on the ISAs of the host.
    int checked = 0;
    for (int n = 0; n < 400 && checked < 24; ++n) {
        k::conv_shape s;
        s.channels = ch(rng);
        s.kernels = ch(rng);
        s.kernel_h = s.kernel_w = coin(rng) ? 3 : 1;
        s.stride_h = s.stride_w = 2;
        s.height = sp(rng);
        s.width = sp(rng);
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const std::size_t oh = static_cast<std::size_t>(s.out_h()), ow = static_cast<std::size_t>(s.out_w());
        const auto row = static_cast<std::size_t>((s.width + 1) / 2);
        if (row <= ow) continue;  // no column past the output: no gaps
        const std::size_t plane = (oh - 1) * row + ow + static_cast<std::size_t>(extra(rng));
        const int fill = static_cast<int>(rng() % 256);
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto w = random_weights(rng, s.weight_size(), false);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64 * 8);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : simd_isas()) {
            std::vector<std::uint8_t> got(plane * static_cast<std::size_t>(s.kernels), 0xA5);
            k::conv_workspace ws;
            k::conv2d(s, w, rq, i).run(x, got, k::conv_output_pitch{row, plane, fill}, ws, coin(rng) ? &pool : nullptr);
            INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " K=" << s.kernels << " k=" << s.kernel_h
                        << " H=" << s.height << " W=" << s.width << " row=" << row << " fill=" << fill);
            for (std::size_t kk = 0; kk < static_cast<std::size_t>(s.kernels); ++kk)
                for (std::size_t b = 0; b < plane; ++b) {
                    const std::size_t y = b / row, xx = b % row;
                    if (y < oh && xx < ow) REQUIRE(got[kk * plane + b] == want[(kk * oh + y) * ow + xx]);
                    else if (y + 1 < oh) REQUIRE(got[kk * plane + b] == fill);
                    else REQUIRE(got[kk * plane + b] == 0xA5);
                }
        }
        ++checked;
    }
    CHECK(checked == 24);
}

TEST_CASE("conv kernels: the AMX tile path equals scalar at its chunk, block and pixel-tile edges") {
    // Channel counts that split into one or several equal chunks of channel groups, some with a
    // padded last group; kernel counts around the 16-channel block; pixel counts around the
    // 32-pixel tile; 1x1 and strided or dilated 3x3 taps; dense and pitched outputs; one and two
    // threads.
    if (!vnnx::sim::isa_supported(isa_kind::avx512_amx)) {
        WARN("skipping: this CPU (or kernel) offers no AMX-INT8");
        return;
    }
    std::mt19937 rng(2026);
    const int channels[] = {29, 32, 36, 63, 64, 65, 68, 100, 129, 257};
    const int kernels[] = {1, 15, 16, 17, 31, 33, 48};
    std::uniform_int_distribution<int> px(1, 70), coin(0, 1), four(0, 3), extra(1, 4);
    vnnx::sim::thread_pool pool(2);
    int checked = 0;
    for (int n = 0; n < 140; ++n) {
        k::conv_shape s;
        s.channels = channels[n % 10];
        s.kernels = kernels[n % 7];
        if (four(rng) == 0) {
            s.kernel_h = s.kernel_w = 3;
            s.stride_h = s.stride_w = 1 + coin(rng);
            s.dilation_h = s.dilation_w = 1 + (s.stride_h == 1 ? coin(rng) : 0);
        }
        const int pixels = px(rng), w = 1 + pixels % 9, rows = 1 + pixels / w;
        s.height = (rows - 1) * s.stride_h + (s.kernel_h - 1) * s.dilation_h + 1;
        s.width = (w - 1) * s.stride_w + (s.kernel_w - 1) * s.dilation_w + 1;
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const auto x = random_bytes(rng, s.input_size(), n % 11 == 0);
        const auto wts = random_weights(rng, s.weight_size(), n % 11 == 0);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64 * 8);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, wts, rq, isa_kind::scalar).run(x, want);
        const int oh = s.out_h(), ow = s.out_w();
        const bool pitched = coin(rng) == 1;
        const std::size_t row = static_cast<std::size_t>(ow + (pitched ? extra(rng) : 0));
        const std::size_t plane = row * static_cast<std::size_t>(oh) + (pitched ? 3 : 0);
        const int fill = pitched && coin(rng) ? static_cast<int>(rng() % 256) : -1;
        // Rows computed at the output's pitch: every tile, the grid's last one included, goes
        // straight to the output (the last through store masks); unfilled gaps take any bytes.
        const bool grid_rows = pitched && s.stride_h == 1 && coin(rng) == 1;
        if (grid_rows) s.gap_row = static_cast<int>(row);
        const k::conv2d c(s, wts, rq, isa_kind::avx512_amx);
        INFO("C=" << s.channels << " K=" << s.kernels << " k=" << s.kernel_h << " s=" << s.stride_h
                  << " d=" << s.dilation_h << " H=" << s.height << " W=" << s.width << " in_signed=" << s.input_signed
                  << " out_signed=" << s.output_signed << " row=" << row << " gap_row=" << s.gap_row << " fill=" << fill);
        REQUIRE(c.uses_amx() == (oh * ow > 1));
        std::vector<std::uint8_t> got(plane * static_cast<std::size_t>(s.kernels), 0xA5);
        k::conv_workspace ws;
        c.run(x, got, k::conv_output_pitch{row, plane, fill}, ws, coin(rng) ? &pool : nullptr);
        for (std::size_t kk = 0; kk < static_cast<std::size_t>(s.kernels); ++kk)
            for (std::size_t b = 0; b < plane; ++b) {
                const std::size_t y = b / row, xx = b % row;
                if (y < static_cast<std::size_t>(oh) && xx < static_cast<std::size_t>(ow))
                    REQUIRE(got[kk * plane + b] == want[(kk * oh + y) * ow + xx]);
                else if (fill >= 0 && y + 1 < static_cast<std::size_t>(oh))
                    REQUIRE(got[kk * plane + b] == fill);  // a gap between rows, filled
                else if (!(grid_rows && y + 1 < static_cast<std::size_t>(oh)))
                    REQUIRE(got[kk * plane + b] == 0xA5);  // gaps and the plane's tail untouched
            }
        ++checked;
    }
    CHECK(checked == 140);
}

TEST_CASE("conv kernels: a last tile of one or two pixels (the one-pixel kernel) equals scalar") {
    // Grids of 48 t + 1 or 48 t + 2 pixels (a 7x7 map is 49): AVX-512 computes those last pixels
    // with lanes over output channels. Dense and padded-pitch rows (the last pixels then may be
    // gap columns), gaps filled or not, an odd or even count of (group, tap) steps, one thread
    // and a pool, and requantization with and without the in-register form.
    std::mt19937 rng(4849);
    std::uniform_int_distribution<int> ch(1, 70), kn(1, 40), side(1, 20), extra(0, 3), coin(0, 1);
    vnnx::sim::thread_pool pool(2);
    int checked = 0, gapped = 0, odd_steps = 0;
    for (int n = 0; n < 20000 && checked < 40; ++n) {
        k::conv_shape s;
        s.channels = ch(rng);
        s.kernels = kn(rng);
        s.kernel_h = s.kernel_w = coin(rng) ? 3 : 1;
        const int oh = side(rng), ow = side(rng) + side(rng), pitch = ow + (coin(rng) ? extra(rng) : 0);
        if ((oh * pitch) % 48 != 1 && (oh * pitch) % 48 != 2) continue;
        s.height = oh + s.kernel_h - 1;
        s.width = ow + s.kernel_w - 1;
        s.gap_row = pitch;
        s.input_signed = coin(rng);
        s.output_signed = coin(rng);
        const std::size_t plane = static_cast<std::size_t>(oh * pitch + extra(rng));
        const int fill = coin(rng) ? static_cast<int>(rng() % 256) : -1;
        const auto x = random_bytes(rng, s.input_size(), coin(rng) == 1);
        const auto w = random_weights(rng, s.weight_size(), false);
        auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64 * 8);
        if (coin(rng))  // the in-register form for most channels (see the short-last-tile case)
            for (std::size_t i = 0; i < rq.multiplier.size(); ++i) {
                const int cap = rq.shift[i] >= 16 ? 65535 : 1 << rq.shift[i];
                rq.multiplier[i] = static_cast<std::uint16_t>(std::min<int>(rq.multiplier[i], cap));
                rq.constant[i] = std::clamp<std::int64_t>(rq.constant[i], -(std::int64_t{1} << 44), std::int64_t{1} << 44);
            }
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        const int groups4 = (s.channels + 3) / 4;
        odd_steps += (groups4 * s.kernel_h * s.kernel_w) % 2;
        gapped += pitch > ow;
        for (isa_kind i : simd_isas())
            for (vnnx::sim::thread_pool* p : {static_cast<vnnx::sim::thread_pool*>(nullptr), &pool}) {
                std::vector<std::uint8_t> got(plane * static_cast<std::size_t>(s.kernels), 0xA5);
                k::conv_workspace ws;
                k::conv2d(s, w, rq, i).run(x, got, k::conv_output_pitch{static_cast<std::size_t>(pitch), plane, fill}, ws, p);
                INFO("isa " << vnnx::sim::isa_name(i) << " C=" << s.channels << " K=" << s.kernels << " k=" << s.kernel_h
                            << " oh=" << oh << " ow=" << ow << " pitch=" << pitch << " fill=" << fill << " pool=" << (p != nullptr));
                for (std::size_t kk = 0; kk < static_cast<std::size_t>(s.kernels); ++kk)
                    for (std::size_t b = 0; b < plane; ++b) {
                        const std::size_t y = b / static_cast<std::size_t>(pitch), xx = b % static_cast<std::size_t>(pitch);
                        const std::uint8_t g = got[kk * plane + b];
                        if (y < static_cast<std::size_t>(oh) && xx < static_cast<std::size_t>(ow))
                            REQUIRE(g == want[(kk * static_cast<std::size_t>(oh) + y) * static_cast<std::size_t>(ow) + xx]);
                        else if (y + 1 < static_cast<std::size_t>(oh) && fill >= 0) REQUIRE(g == fill);
                        else if (y + 1 >= static_cast<std::size_t>(oh)) REQUIRE(g == 0xA5);
                    }
            }
        ++checked;
    }
    CHECK(checked == 40);
    CHECK(gapped >= 5);
    CHECK(odd_steps >= 5);
}

TEST_CASE("conv kernels: small layers split in balanced items over pools of 2-4 threads equal scalar") {
    // Few items per thread take the split of kernels/item_split.hpp: runs of channel blocks and
    // pixel tiles of equal size, the last tile's pixel or two riding with the last item. Every
    // output byte must come out once, whatever the split: MobileNetV2's 7x7 and 14x14 1x1 layers,
    // a 28x28 one, 3x3 ones, and random small ones, each on 2, 3 and 4 threads.
    std::mt19937 rng(6301);
    struct layer {
        int c, k, oh, ow, kk;
    };
    std::vector<layer> layers = {{96, 576, 14, 14, 1}, {576, 96, 14, 14, 1}, {960, 160, 7, 7, 1}, {160, 960, 7, 7, 1},
                                 {320, 1280, 7, 7, 1}, {32, 192, 28, 28, 1}, {24, 144, 20, 20, 3}, {64, 40, 7, 7, 3}};
    std::uniform_int_distribution<int> ch(1, 200), side(1, 16);
    while (layers.size() < 24) layers.push_back({ch(rng), ch(rng), side(rng), side(rng), rng() % 2 ? 3 : 1});
    std::vector<std::unique_ptr<vnnx::sim::thread_pool>> pools;
    for (unsigned t : {2u, 3u, 4u}) pools.push_back(std::make_unique<vnnx::sim::thread_pool>(t));
    for (const auto& l : layers) {
        k::conv_shape s;
        s.channels = l.c;
        s.kernels = l.k;
        s.kernel_h = s.kernel_w = l.kk;
        s.height = l.oh + l.kk - 1;
        s.width = l.ow + l.kk - 1;
        s.input_signed = rng() % 2 == 0;
        s.output_signed = rng() % 2 == 0;
        const auto x = random_bytes(rng, s.input_size(), false);
        const auto w = random_weights(rng, s.weight_size(), false);
        const auto rq = random_requant(rng, s.kernels, s.output_signed, 128 * 64 * 8);
        std::vector<std::uint8_t> want(s.output_size());
        k::conv2d(s, w, rq, isa_kind::scalar).run(x, want);
        for (isa_kind i : simd_isas()) {
            const k::conv2d c(s, w, rq, i);
            for (const auto& p : pools) {
                // Twice on one pool: the second run takes the split the first one chose.
                for (int run = 0; run < 2; ++run) {
                    std::vector<std::uint8_t> got(s.output_size(), 0xA5);
                    c.run(x, got, p.get());
                    INFO("isa " << vnnx::sim::isa_name(i) << " C=" << l.c << " K=" << l.k << " " << l.oh << "x" << l.ow
                                << " k=" << l.kk << " threads=" << p->size() << " run " << run);
                    REQUIRE(std::equal(want.begin(), want.end(), got.begin(), got.end()));
                }
            }
        }
    }
}
