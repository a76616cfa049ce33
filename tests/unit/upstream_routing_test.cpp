// Which upstream serves which name on which index, and which names no upstream ever serves.

#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "wheelhouse/upstream/routing.hpp"

using namespace wheelhouse;
using namespace wheelhouse::upstream;

namespace {

routing pypi_and_pytorch(std::vector<std::string> route_texts) {
    std::vector<upstream_index> upstreams{parse_upstream("pypi=https://pypi.org/simple").value(),
                                          parse_upstream("pytorch-cu128=https://download.pytorch.org/whl/cu128/").value(),
                                          parse_upstream("pytorch-cpu=https://download.pytorch.org/whl/cpu/").value()};
    std::vector<route> routes;
    for (const auto& text : route_texts) {
        auto parsed = parse_route(text);
        if (!parsed) FAIL(parsed.error().message);
        routes.push_back(std::move(parsed).value());
    }
    auto made = routing::make(std::move(upstreams), std::move(routes));
    if (!made) FAIL(made.error().message);
    return std::move(made).value();
}

std::string served_by(const routing& routes, std::string_view selector, std::string_view project) {
    const auto* upstream = routes.upstream_for(selector, project);
    return upstream ? upstream->name : "none";
}

}  // namespace

TEST_CASE("upstream routing: upstreams as NAME=URL", "[upstream][routing]") {
    const auto pypi = parse_upstream(" pypi = https://pypi.org/simple ");
    REQUIRE(pypi);
    CHECK(pypi->name == "pypi");
    CHECK(pypi->url == "https://pypi.org/simple/");
    CHECK(page_url(*pypi, "flash-attn") == "https://pypi.org/simple/flash-attn/");
    for (const auto* bad : {"pypi", "PyPI=https://pypi.org/simple/", "pypi=http://pypi.org/simple/",
                            "pypi=https://user:secret@pypi.org/simple/", "pypi=https://pypi.org/simple/?x=1",
                            "pypi=not a url", "=https://pypi.org/simple/", "-x=https://pypi.org/simple/"}) {
        INFO(bad);
        const auto refused = parse_upstream(bad);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("write NAME=URL, as pypi=https://pypi.org/simple/"));
    }
}

TEST_CASE("upstream routing: a variant index takes its routes, the rest comes from the first upstream",
          "[upstream][routing]") {
    const auto routes = pypi_and_pytorch({"cu128: torch torchvision, triton = pytorch-cu128",
                                          "cpu: torch* = pytorch-cpu"});
    // The example: /variants/cu128-torch2.8-sm90/simple/ takes torch from PyTorch's cu128 index.
    CHECK(served_by(routes, "cu128-torch2.8-sm90", "torch") == "pytorch-cu128");
    CHECK(served_by(routes, "cu128-torch2.8-sm90", "triton") == "pytorch-cu128");
    CHECK(served_by(routes, "cu128", "torchvision") == "pytorch-cu128");
    CHECK(served_by(routes, "cu128-torch2.8-sm90", "numpy") == "pypi");
    CHECK(served_by(routes, "cu128-torch2.8-sm90", "torchaudio") == "pypi");  // not named for cu128
    CHECK(served_by(routes, "cpu-torch2.8", "torchaudio") == "pytorch-cpu");
    // Another CUDA, and the root index, are PyPI's.
    CHECK(served_by(routes, "cu130-torch2.10", "torch") == "pypi");
    CHECK(served_by(routes, "cu12", "torch") == "pypi");
    CHECK(served_by(routes, "", "torch") == "pypi");
    // A file of torch may come from each of them.
    std::vector<std::string> names;
    for (const auto* upstream : routes.upstreams_for("torch")) names.push_back(upstream->name);
    CHECK(names == std::vector<std::string>{"pypi", "pytorch-cu128", "pytorch-cpu"});
    names.clear();
    for (const auto* upstream : routes.upstreams_for("numpy")) names.push_back(upstream->name);
    CHECK(names == std::vector<std::string>{"pypi"});
}

TEST_CASE("upstream routing: routes apply in order, * and simple, names compared normalised", "[upstream][routing]") {
    const auto routes = pypi_and_pytorch({"simple: Torch = pytorch-cpu", "*: torch, Nvidia_* = pytorch-cu128"});
    CHECK(served_by(routes, "", "torch") == "pytorch-cpu");
    CHECK(served_by(routes, "cu130", "torch") == "pytorch-cu128");
    CHECK(served_by(routes, "", "nvidia-cublas-cu12") == "pytorch-cu128");
    CHECK(served_by(routes, "cpu", "six") == "pypi");
    CHECK(routing().upstream_for("", "six") == nullptr);
}

TEST_CASE("upstream routing: malformed routes are refused with the form to write", "[upstream][routing]") {
    for (const auto* bad : {"torch = pypi", "cu128 torch = pypi", "cu128: = pypi", "cu999x: torch = pypi",
                            "cu130-cu128: torch = pypi", "cu128: torch = ", "cu128: tor/ch = pypi", "cu128: torch"}) {
        INFO(bad);
        const auto refused = parse_route(bad);
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("write INDEX: PROJECT… = UPSTREAM"));
    }
    auto unknown = routing::make({parse_upstream("pypi=https://pypi.org/simple/").value()},
                                 {parse_route("cu128: torch = pytorch").value()});
    REQUIRE_FALSE(unknown);
    CHECK_THAT(unknown.error().message, Catch::Contains("names the upstream 'pytorch', which no --upstream declares"));
    auto twice = routing::make({parse_upstream("pypi=https://pypi.org/simple/").value(),
                                parse_upstream("pypi=https://mirror.example/simple/").value()},
                               {});
    REQUIRE_FALSE(twice);
    CHECK_THAT(twice.error().message, Catch::Contains("two upstreams are named 'pypi'"));
}

TEST_CASE("upstream routing: owned names are local or reserved, never upstream", "[upstream][routing]") {
    const std::vector<std::string> reserved{"acme-*", "acme", "internal-tool"};
    CHECK(source_of("flash-attn", true, reserved, true) == name_source::local);
    CHECK(source_of("acme-core", false, reserved, true) == name_source::reserved);
    CHECK(source_of("acme", false, reserved, true) == name_source::reserved);
    CHECK(source_of("acme-core", true, reserved, true) == name_source::local);
    CHECK(source_of("acmeco", false, reserved, true) == name_source::upstream);
    CHECK(source_of("numpy", false, reserved, true) == name_source::upstream);
    CHECK(source_of("numpy", false, reserved, false) == name_source::nowhere);
    CHECK(is_reserved(reserved, "internal-tool"));
    CHECK_FALSE(is_reserved(reserved, "internal-tools"));
}
