#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <variant>

#include "wheelhouse/app/page_response.hpp"
#include "wheelhouse/http/conditional.hpp"
#include "wheelhouse/transport/responses.hpp"

using namespace wheelhouse;
namespace http = boost::beast::http;

namespace {

// What a page response was before it was written by hand: Beast's fields and serializer.
transport::outgoing_response beast_page_response(const http::request_header<>& request, const app::rendered_page& page,
                                                 std::string_view content_type, std::string_view cache_control,
                                                 bool negotiated, bool current) {
    http::fields headers;
    headers.set(http::field::etag, page.etag);
    headers.set(http::field::cache_control, cache_control);
    if (negotiated) headers.set(http::field::vary, "Accept, User-Agent");
    if (current) {
        http::response<http::empty_body> response{http::status::not_modified, request.version()};
        response.set(http::field::server, "wheelhouse");
        for (const auto& field : headers) response.set(field.name_string(), field.value());
        response.keep_alive(transport::wants_keep_alive(request));
        return transport::outgoing_response{http::message_generator(std::move(response)), 304, 0};
    }
    return transport::make_shared_response(request, http::status::ok, content_type, page.body, std::move(headers));
}

}  // namespace

TEST_CASE("page response: the hand-written head is byte for byte Beast's", "[page_response]") {
    const app::rendered_page page{std::make_shared<const std::string>("{\"meta\": {\"api-version\": \"1.4\"}}\n"),
                                  "\"0123456789abcdef0123456789abcdef\""};
    for (const auto method : {http::verb::get, http::verb::head}) {
        for (const unsigned version : {10u, 11u}) {
            for (const char* connection : {"", "close", "keep-alive"}) {
                for (const bool negotiated : {true, false}) {
                    for (const char* if_none_match : {"", "\"other\"", "\"0123456789abcdef0123456789abcdef\""}) {
                        http::request_header<> request;
                        request.method(method);
                        request.version(version);
                        request.target("/simple/flash-attn/");
                        if (*connection) request.set(http::field::connection, connection);
                        if (*if_none_match) request.set(http::field::if_none_match, if_none_match);
                        CAPTURE(method, version, connection, negotiated, if_none_match);

                        auto written = app::respond_with_page(request, page, "application/vnd.pypi.simple.v1+json",
                                                              "max-age=60, public", negotiated);
                        const bool current = std::string_view(if_none_match) == page.etag;
                        auto reference = beast_page_response(request, page, "application/vnd.pypi.simple.v1+json",
                                                             "max-age=60, public", negotiated, current);
                        const auto* prepared = std::get_if<transport::prepared_response>(&written.shape);
                        REQUIRE(prepared != nullptr);  // the fast path was taken
                        CHECK(prepared->head.keep_alive ==
                              std::get<http::message_generator>(reference.shape).keep_alive());
                        CHECK(written.status == reference.status);
                        CHECK(written.body_bytes == reference.body_bytes);
                        CHECK(transport::serialize(std::move(written)) == transport::serialize(std::move(reference)));
                    }
                }
            }
        }
    }
}

TEST_CASE("page response: Last-Modified is the second after the render, and no date finds a page current before it",
          "[page_response]") {
    using namespace std::chrono;
    app::rendered_page page{std::make_shared<const std::string>("<html></html>\n"), "\"00112233445566778899aabbccddeeff\""};
    http::request_header<> request;
    request.method(http::verb::get);
    request.version(11);
    const auto text_of = [](transport::outgoing_response response) { return transport::serialize(std::move(response)); };
    const auto last_modified_of = [](const std::string& head) {
        const auto at = head.find("Last-Modified: ");
        REQUIRE(at != std::string::npos);
        return head.substr(at + 15, 29);
    };

    SECTION("rendered seconds ago: the next second, and an If-Modified-Since at it is current") {
        page.stamp_now();
        page.rendered_ms -= 5000;
        const auto rendered = page.rendered_ms / 1000;
        page.rendered_second = {};
        page.next_second = {};
        const auto date = http_conditional::http_date(rendered + 1);
        std::copy(date.begin(), date.end(), page.next_second.begin());
        const auto whole = text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false));
        CHECK(last_modified_of(whole) == date);
        request.set(http::field::if_modified_since, date);
        CHECK_THAT(text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false)),
                   Catch::StartsWith("HTTP/1.1 304"));
        request.set(http::field::if_modified_since, http_conditional::http_date(rendered));  // the render's second
        CHECK_THAT(text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false)),
                   Catch::StartsWith("HTTP/1.1 200"));
        // If-None-Match decides when both are sent.
        request.set(http::field::if_modified_since, date);
        request.set(http::field::if_none_match, "\"other\"");
        CHECK_THAT(text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false)),
                   Catch::StartsWith("HTTP/1.1 200"));
    }
    SECTION("rendered this second: its own second, which no If-Modified-Since finds current") {
        page.stamp_now();
        page.rendered_ms = duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count() + 60'000;
        const auto own = http_conditional::http_date(page.rendered_ms / 1000);
        std::copy(own.begin(), own.end(), page.rendered_second.begin());
        const auto whole = text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false));
        CHECK(last_modified_of(whole) == own);
        request.set(http::field::if_modified_since, own);
        CHECK_THAT(text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false)),
                   Catch::StartsWith("HTTP/1.1 200"));
    }
    SECTION("a page never stamped carries no date and ignores If-Modified-Since") {
        const auto whole = text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false));
        CHECK(whole.find("Last-Modified") == std::string::npos);
        request.set(http::field::if_modified_since, "Sun, 06 Nov 2094 08:49:37 GMT");
        CHECK_THAT(text_of(app::respond_with_page(request, page, "text/html", "max-age=60", false)),
                   Catch::StartsWith("HTTP/1.1 200"));
    }
}
