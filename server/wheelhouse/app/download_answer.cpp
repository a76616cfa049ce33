#include "wheelhouse/app/download_answer.hpp"

#include <algorithm>
#include <charconv>

#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

// A private index's answers must not be kept by shared caches (RFC 9111 §3.5: "public" would
// let an nginx cache hand them to clients without a token).
constexpr std::string_view immutable_public = "max-age=31536000, public, immutable";
constexpr std::string_view immutable_private = "max-age=31536000, private, immutable";

}  // namespace

download_answer::download_answer(const http::request_header<>& request, std::string_view sha256_hex,
                                 std::uint64_t size, bool private_index, std::int64_t modified,
                                 std::string_view content_type)
    : request_(request),
      etag_("\"" + std::string(sha256_hex) + "\""),
      size_(size),
      private_index_(private_index),
      modified_(modified),
      content_type_(content_type) {
    const auto range = field_value(request, http::field::range);
    const auto if_range = field_value(request, http::field::if_range);
    // If-Range with another validator means the client's partial copy is stale: send it all.
    if (!range.empty() && (if_range.empty() || if_range == etag_)) {
        decision_ = http_conditional::decide_range(range, size);
    }
}

std::optional<http_conditional::byte_range> download_answer::range() const {
    if (decision_.outcome != http_conditional::range_outcome::partial) return std::nullopt;
    return decision_.range;
}

std::optional<transport::outgoing_response> download_answer::without_body() const {
    if (not_modified()) {
        auto response = head(false);
        response.result(http::status::not_modified);
        response.erase(http::field::content_type);
        response.erase(http::field::content_length);
        return transport::outgoing_response{http::message_generator(std::move(response)), 304, 0};
    }
    if (decision_.outcome == http_conditional::range_outcome::unsatisfiable) {
        auto headers = validator_fields();
        headers.set(http::field::content_range, "bytes */" + std::to_string(size_));
        return transport::make_text_response(
            request_, http::status::range_not_satisfiable,
            "the requested range lies outside the file's " + std::to_string(size_) + " bytes", std::move(headers));
    }
    if (request_.method() != http::verb::head) return std::nullopt;
    auto response = head(range().has_value());
    const unsigned code = response.result_int();
    return transport::outgoing_response{http::message_generator(std::move(response)), code, 0};
}

transport::outgoing_response download_answer::with_body(std::shared_ptr<const std::string> body) const {
    if (auto done = without_body()) return std::move(*done);
    const auto part = range();
    if (part) body = std::make_shared<const std::string>(body->substr(part->first, part->length));
    return transport::make_prepared_response(head(part.has_value()), std::move(body));
}

bool download_answer::not_modified() const {
    // RFC 9110 §13.2.2: If-None-Match decides when sent; If-Modified-Since only without it, and
    // only for GET and HEAD (this answer serves no other method).
    if (const auto if_none_match = field_value(request_, http::field::if_none_match); !if_none_match.empty())
        return http_conditional::if_none_match_matches(if_none_match, etag_);
    return modified_ > 0 && http_conditional::unmodified_since(field_value(request_, http::field::if_modified_since), modified_);
}

http::fields download_answer::validator_fields() const {
    http::fields fields;
    fields.set(http::field::etag, etag_);
    if (modified_ > 0) fields.set(http::field::last_modified, http_conditional::http_date(modified_));
    fields.set(http::field::cache_control, private_index_ ? immutable_private : immutable_public);
    fields.set(http::field::accept_ranges, "bytes");
    return fields;
}

http::response<http::empty_body> download_answer::head(bool partial) const {
    const auto part = partial ? range() : std::nullopt;
    http::response<http::empty_body> response{part ? http::status::partial_content : http::status::ok,
                                              request_.version()};
    response.set(http::field::server, transport::server_name);
    response.set(http::field::content_type, content_type_);
    for (const auto& field : validator_fields()) response.set(field.name(), field.value());
    if (part) response.set(http::field::content_range, http_conditional::content_range(*part, size_));
    response.content_length(part ? part->length : size_);
    response.keep_alive(transport::wants_keep_alive(request_));
    return response;
}

transport::outgoing_response redirect_download(const http::request_header<>& request, const std::string& url,
                                               bool private_index, std::chrono::seconds max_age) {
    // A control character would end the field (or the head). One pass over the URL tells that
    // and whether it is plain ASCII, as a registered or presigned URL always is; a hand-edited
    // catalog's spaces and bytes past ASCII are percent-encoded, as a URI carries them.
    const auto kinds = text::kinds_of_bytes(url);
    if (kinds.control) {
        return transport::make_text_response(request, http::status::internal_server_error,
                                             "the catalog names a download URL with control characters; the "
                                             "administrator has to re-register the file");
    }
    char cache_control[48] = "max-age=";
    char* end = std::to_chars(cache_control + 8, cache_control + 24, max_age.count()).ptr;
    const std::string_view standing = private_index ? ", private" : ", public";
    end = std::copy(standing.begin(), standing.end(), end);
    const bool plain = !kinds.non_ascii && url.find(' ') == std::string::npos;
    const std::string encoded = plain ? std::string() : text::percent_encode_space_and_non_ascii(url);
    const std::string_view location = plain ? std::string_view(url) : std::string_view(encoded);
    const transport::header_field fields[] = {{http::field::content_type, "text/plain; charset=utf-8"},
                                              {http::field::location, location},
                                              {http::field::cache_control, std::string_view(cache_control, end)}};
    // Past Beast's serializer, as a cached page: the redirect to a bucket is as hot a path.
    constexpr std::string_view lead = "302 Found: the file is at ";
    std::string text;
    text.reserve(lead.size() + location.size() + 1);
    text.append(lead);
    text.append(location);
    text.push_back('\n');
    return transport::make_prepared_response(request, http::status::found, fields,
                                             std::make_shared<const std::string>(std::move(text)));
}

}  // namespace wheelhouse::app
