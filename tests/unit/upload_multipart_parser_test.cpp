#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "wheelhouse/upload/multipart_parser.hpp"

using namespace wheelhouse;
using namespace wheelhouse::upload;

namespace {

// Everything a sink is told, in order, so a parse can be compared with the body that was built.
struct recorded_part {
    part_header header;
    std::string data;
    bool ended = false;
};

class recording_sink final : public part_sink {
public:
    result<void> begin_part(const part_header& header) override {
        REQUIRE((parts.empty() || parts.back().ended));
        parts.push_back({header, {}, false});
        return {};
    }
    result<void> part_data(std::span<const char> bytes) override {
        REQUIRE(!parts.empty());
        REQUIRE(!parts.back().ended);
        REQUIRE(!bytes.empty());
        parts.back().data.append(bytes.data(), bytes.size());
        delivered += bytes.size();
        return {};
    }
    result<void> end_part() override {
        REQUIRE(!parts.empty());
        parts.back().ended = true;
        return {};
    }
    result<void> end_body() override {
        REQUIRE(!body_ended);
        body_ended = true;
        return {};
    }

    std::vector<recorded_part> parts;
    std::size_t delivered = 0;
    bool body_ended = false;
};

struct field {
    std::string name;
    std::string value;
};

// The body twine sends (requests-toolbelt's MultipartEncoder, headers rendered by urllib3):
// metadata_dictionary() in order, lists flattened, None as an empty part, then :action,
// protocol_version and the file.
std::string twine_body(const std::string& boundary, const std::vector<field>& fields, const std::string& filename,
                       const std::string& wheel) {
    std::string body;
    for (const auto& [name, value] : fields) {
        body += "--" + boundary + "\r\n";
        body += "Content-Disposition: form-data; name=\"" + name + "\"\r\n\r\n";
        body += value + "\r\n";
    }
    body += "--" + boundary + "\r\n";
    body += "Content-Disposition: form-data; name=\"content\"; filename=\"" + filename + "\"\r\n";
    body += "Content-Type: application/octet-stream\r\n\r\n";
    body += wheel + "\r\n";
    body += "--" + boundary + "--\r\n";
    return body;
}

// The body `curl -F name=value ... -F content=@file` sends: text parts carry no Content-Type.
std::string curl_body(const std::string& boundary, const std::vector<field>& fields, const std::string& filename,
                      const std::string& wheel) {
    std::string body;
    for (const auto& [name, value] : fields) {
        body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + value + "\r\n";
    }
    body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"content\"; filename=\"" + filename +
            "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + wheel + "\r\n--" + boundary + "--\r\n";
    return body;
}

const std::string twine_boundary = "3b9e5c0f6a1d4c2e8f7a6b5c4d3e2f10";                        // uuid4().hex
const std::string curl7_boundary = "------------------------d74496d66958873e";                // 24 dashes + 16 hex
const std::string curl8_boundary = "------------------------Xq3pT0aBcDeFgHiJkLmN9z";          // 24 dashes + 22 alnum

const std::string wheel_name = "flash_attn-2.8.3+cu130torch2.10cxx11abiTRUE-cp312-cp312-linux_x86_64.whl";

// Wheel-like bytes that try every trick on a boundary search: CRLFs, dashes, the delimiter
// missing its last byte, the boundary without its CRLF, all 256 byte values, a CR at the end.
std::string tricky_content(const std::string& boundary) {
    std::string bytes = "PK\x03\x04";
    bytes += "\r\n--";
    bytes += "\r\n--" + boundary.substr(0, boundary.size() - 1) + "x";
    bytes += "--" + boundary + "\r\n";  // no CR before: not a delimiter
    bytes += "\r\r\n-\r\n--\r\n\r\n--x";
    bytes += boundary;
    for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<char>(b));
    bytes += "\r\n-";
    bytes += "\r\n--" + boundary.substr(0, boundary.size() / 2);
    bytes += "\r";
    return bytes;
}

const std::vector<field> twine_fields = {
    {"name", "flash-attn"},
    {"version", "2.8.3+cu130torch2.10cxx11abiTRUE"},
    {"filetype", "bdist_wheel"},
    {"pyversion", "cp312"},
    {"metadata_version", "2.1"},
    {"summary", "Flash Attention: Fast and Memory-Efficient Exact Attention"},
    {"home_page", "https://github.com/Dao-AILab/flash-attention"},
    {"author", "Tri Dao"},
    {"author_email", "tri@tridao.me"},
    {"maintainer", ""},
    {"maintainer_email", ""},
    {"license", ""},
    {"description", "# FlashAttention\r\nThis repository provides the official implementation.\n\n--\n"},
    {"keywords", ""},
    {"classifiers", "Programming Language :: Python :: 3"},
    {"classifiers", "License :: OSI Approved :: BSD License"},
    {"classifiers", "Operating System :: Unix"},
    {"download_url", ""},
    {"comment", ""},
    {"sha256_digest", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"},
    {"requires_dist", "torch"},
    {"requires_dist", "einops"},
    {"requires_python", ">=3.9"},
    {"description_content_type", "text/markdown"},
    {"md5_digest", "098f6bcd4621d373cade4e832627b4f6"},
    {"blake2_256_digest", "928b20366943e2afd11ebc0eae2e53a93bf177a4fcf35bcc64d503704e65e202"},
    {":action", "file_upload"},
    {"protocol_version", "1"},
};

void feed_in_chunks(multipart_parser& parser, std::string_view body, std::size_t chunk_size) {
    for (std::size_t at = 0; at < body.size(); at += chunk_size) {
        const auto fed = parser.feed(body.substr(at, chunk_size));
        INFO((fed ? std::string() : fed.error().message));
        REQUIRE(fed);
    }
}

// Feeds `body` to a fresh parser in `chunk_size` pieces and returns the error the first
// failing call (or finish) gives, or nullopt.
template <class Sink>
std::optional<error> parse_error(std::string_view boundary, std::string_view body, Sink& sink,
                                 std::size_t chunk_size = 1 << 20, multipart_limits limits = {}) {
    multipart_parser parser(boundary, sink, limits);
    for (std::size_t at = 0; at < body.size(); at += chunk_size) {
        if (auto fed = parser.feed(body.substr(at, chunk_size)); !fed) {
            const auto again = parser.feed(std::string_view("more"));  // errors are sticky
            REQUIRE_FALSE(again);
            CHECK(again.error().message == fed.error().message);
            return fed.error();
        }
    }
    if (auto finished = parser.finish(); !finished) return finished.error();
    return std::nullopt;
}

std::string message_of(const std::optional<error>& failure) { return failure ? failure->message : "(no error)"; }

}  // namespace

TEST_CASE("multipart: boundary from Content-Type values", "[multipart]") {
    struct row {
        const char* content_type;
        const char* boundary;  // nullptr: an error whose message contains `message`
        const char* message;
    };
    const std::string long_boundary(70, 'b');
    const std::string too_long = "multipart/form-data; boundary=" + std::string(71, 'b');
    const std::string longest = "multipart/form-data; boundary=" + long_boundary;
    const row table[] = {
        {"multipart/form-data; boundary=3b9e5c0f6a1d4c2e8f7a6b5c4d3e2f10", "3b9e5c0f6a1d4c2e8f7a6b5c4d3e2f10", ""},
        {"multipart/form-data; boundary=------------------------d74496d66958873e",
         "------------------------d74496d66958873e", ""},
        {"Multipart/Form-Data; BOUNDARY=abc", "abc", ""},
        {"multipart/form-data;boundary=abc", "abc", ""},
        {"multipart/form-data ; boundary = abc ", "abc", ""},
        {"multipart/form-data; charset=utf-8; boundary=abc", "abc", ""},
        {"multipart/form-data; boundary=\"abc\"", "abc", ""},
        {"multipart/form-data; boundary=\"gc0pJq0M:08jU534c0p\"", "gc0pJq0M:08jU534c0p", ""},
        {"multipart/form-data; boundary=\"with space\"", "with space", ""},
        {"multipart/form-data; boundary=\"=_Part_0_1.2\"", "=_Part_0_1.2", ""},
        {"multipart/form-data; boundary=abc;", "abc", ""},
        {longest.c_str(), long_boundary.c_str(), ""},
        {"", nullptr, "no Content-Type"},
        {"application/octet-stream", nullptr, "not multipart/form-data"},
        {"multipart/mixed; boundary=abc", nullptr, "not multipart/form-data"},
        {"application/x-www-form-urlencoded", nullptr, "not multipart/form-data"},
        {"multipart/form-data", nullptr, "multipart/form-data without a boundary parameter"},
        {"multipart/form-data; charset=utf-8", nullptr, "multipart/form-data without a boundary parameter"},
        {"multipart/form-data; boundary=", nullptr, "empty value"},
        {"multipart/form-data; boundary=\"\"", nullptr, "boundary is empty"},
        {"multipart/form-data; boundary=\"abc", nullptr, "unterminated quoted string"},
        {too_long.c_str(), nullptr, "71 characters long; RFC 2046 allows at most 70"},
        {"multipart/form-data; boundary=ab{c", nullptr, "contains '{'"},
        {"multipart/form-data; boundary=\"abc \"", nullptr, "ends with a space"},
        {"multipart/form-data; boundary=abc; boundary=def", nullptr, "twice"},
        {"multipart/form-data; boundary", nullptr, "has no value"},
        {"multipart/form-data; =abc", nullptr, "has no name"},
        {"multipart/form-data; boundary=\"abc\"x", nullptr, "separated by ';'"},
    };
    for (const auto& [content_type, boundary, message] : table) {
        CAPTURE(content_type);
        const auto parsed = boundary_from_content_type(content_type);
        if (boundary) {
            REQUIRE(parsed);
            CHECK(*parsed == boundary);
        } else {
            REQUIRE_FALSE(parsed);
            CHECK(parsed.error().kind == error_kind::invalid);
            CHECK_THAT(parsed.error().message, Catch::Contains(message));
        }
    }
}

TEST_CASE("multipart: part header blocks as clients write them", "[multipart]") {
    struct row {
        const char* block;
        const char* name;
        const char* filename;  // nullptr: no filename parameter
        const char* content_type;
    };
    const row table[] = {
        {"Content-Disposition: form-data; name=\"version\"\r\n\r\n", "version", nullptr, ""},
        {"Content-Disposition: form-data; name=\"content\"; filename=\"x.whl\"\r\n"
         "Content-Type: application/octet-stream\r\n\r\n",
         "content", "x.whl", "application/octet-stream"},
        {"content-disposition: FORM-DATA; NAME=\"a\"; FileName=\"b.whl\"\r\ncontent-type: text/plain\r\n\r\n", "a",
         "b.whl", "text/plain"},
        {"Content-Disposition: form-data; name=content; filename=x.whl\r\n\r\n", "content", "x.whl", ""},
        {"Content-Disposition:form-data;name=\"a\"\r\n\r\n", "a", nullptr, ""},
        {"Content-Disposition: form-data; name=\"upload\"; filename=\"\"\r\n\r\n", "upload", "", ""},
        // curl's CURLMIMEOPT_FORMESCAPE and old Firefox escape with backslashes
        {"Content-Disposition: form-data; name=\"a\\\"b\"; filename=\"c\\\\d.whl\"\r\n\r\n", "a\"b", "c\\d.whl", ""},
        // WHATWG percent-escapes stay as sent, as browsers' own parsers leave them
        {"Content-Disposition: form-data; name=\"a%22b\"; filename=\"x%0A.whl\"\r\n\r\n", "a%22b", "x%0A.whl", ""},
        // a Windows path from an old browser keeps its backslashes
        {"Content-Disposition: form-data; name=\"f\"; filename=\"C:\\Users\\ci\\x.whl\"\r\n\r\n", "f",
         "C:\\Users\\ci\\x.whl", ""},
        {"Content-Disposition: form-data; name=\"summary\"; filename=\"caf\xc3\xa9.whl\"\r\n\r\n", "summary",
         "caf\xc3\xa9.whl", ""},
        {"Content-Disposition: form-data; name=\"a;b\"\r\n\r\n", "a;b", nullptr, ""},
        {"Content-Disposition: form-data; name=\"a\"; filename*=UTF-8''x.whl\r\n\r\n", "a", nullptr, ""},
        {"X-Custom: 1\r\nContent-Disposition: form-data; name=\"a\"\r\nContent-Transfer-Encoding: binary\r\n\r\n", "a",
         nullptr, ""},
        {"Content-Disposition: form-data;\r\n name=\"folded\"\r\n\r\n", "folded", nullptr, ""},
    };
    for (const auto& [block, name, filename, content_type] : table) {
        CAPTURE(block);
        const auto header = parse_part_headers(block);
        INFO((header ? std::string() : header.error().message));
        REQUIRE(header);
        CHECK(header->name == name);
        CHECK(header->filename.has_value() == (filename != nullptr));
        if (filename) CHECK(header->filename == filename);
        CHECK(header->content_type == content_type);
    }
}

TEST_CASE("multipart: part header blocks that are rejected, and why", "[multipart]") {
    struct row {
        const char* block;
        const char* message;
    };
    const row table[] = {
        {"\r\n", "no Content-Disposition header"},
        {"Content-Type: text/plain\r\n\r\n", "no Content-Disposition header"},
        {"Content-Disposition: attachment; name=\"a\"\r\n\r\n", "'attachment'; every part"},
        {"Content-Disposition: form-data\r\n\r\n", "no name parameter"},
        {"Content-Disposition: form-data; filename=\"x.whl\"\r\n\r\n", "no name parameter"},
        {"Content-Disposition: form-data; name=\"\"\r\n\r\n", "empty name"},
        {"Content-Disposition: form-data; name=\"a\r\n\r\n", "unterminated quoted string in Content-Disposition"},
        {"Content-Disposition: form-data; name=\"a\"; name=\"b\"\r\n\r\n", "parameter 'name' twice"},
        {"Content-Disposition: form-data; name=\"a\"; filename=\"x\"; filename=\"y\"\r\n\r\n", "'filename' twice"},
        {"Content-Disposition: form-data; name=\"a\"\r\nContent-Disposition: form-data; name=\"b\"\r\n\r\n",
         "two Content-Disposition headers"},
        {"Content-Disposition: form-data; name=\"a\"\r\nContent-Type: a\r\nContent-Type: b\r\n\r\n",
         "two Content-Type headers"},
        {"Content-Disposition: form-data; name=\"a\"\r\nContent-Transfer-Encoding: base64\r\n\r\n",
         "Content-Transfer-Encoding 'base64'; send the bytes as they are"},
        {"Content-Disposition form-data; name=\"a\"\r\n\r\n", "has no colon"},
        {"Content Disposition: form-data; name=\"a\"\r\n\r\n", "malformed name"},
        {" folded: first\r\n\r\n", "starts with a folded line"},
        {"Content-Disposition: form-data; name=\"a\"\r\n--abc\r\n\r\n", "run into a boundary line"},
        {"Content-Disposition: form-data; name=\"a\"\r\n", "does not end with an empty line"},
        {"Content-Disposition: form-data; name=\"a\"\r\n\r\nextra", "goes on after its empty line"},
        {"Content-Disposition: form-data; name=\"a\" junk\r\n\r\n", "separated by ';'"},
    };
    for (const auto& [block, message] : table) {
        CAPTURE(block);
        const auto header = parse_part_headers(block);
        REQUIRE_FALSE(header);
        CHECK(header.error().kind == error_kind::invalid);
        CHECK_THAT(header.error().message, Catch::Contains(message));
    }
}

TEST_CASE("multipart: a twine upload, whole and in every small chunk size", "[multipart]") {
    const auto wheel = tricky_content(twine_boundary);
    const auto body = twine_body(twine_boundary, twine_fields, wheel_name, wheel);
    const auto content_type = "multipart/form-data; boundary=" + twine_boundary;
    const auto boundary = boundary_from_content_type(content_type);
    REQUIRE(boundary);

    std::vector<std::size_t> chunk_sizes;
    for (std::size_t size = 1; size <= 200; ++size) chunk_sizes.push_back(size);
    for (std::size_t size : {255u, 256u, 1000u, 4096u, 65536u}) chunk_sizes.push_back(size);
    chunk_sizes.push_back(body.size());

    for (const auto chunk_size : chunk_sizes) {
        CAPTURE(chunk_size);
        recording_sink sink;
        multipart_parser parser(*boundary, sink);
        feed_in_chunks(parser, body, chunk_size);
        REQUIRE(parser.complete());
        REQUIRE(parser.finish());
        CHECK(sink.body_ended);
        REQUIRE(sink.parts.size() == twine_fields.size() + 1);
        for (std::size_t i = 0; i < twine_fields.size(); ++i) {
            CHECK(sink.parts[i].header.name == twine_fields[i].name);
            CHECK(sink.parts[i].data == twine_fields[i].value);
            CHECK_FALSE(sink.parts[i].header.filename);
            CHECK(sink.parts[i].header.content_type.empty());
            CHECK(sink.parts[i].ended);
        }
        const auto& content = sink.parts.back();
        CHECK(content.header.name == "content");
        CHECK(content.header.filename == wheel_name);
        CHECK(content.header.content_type == "application/octet-stream");
        CHECK(content.data == wheel);
        CHECK(content.ended);
    }
}

TEST_CASE("multipart: curl -F bodies with curl 7 and curl 8 boundaries, every chunk size", "[multipart]") {
    for (const auto& boundary : {curl7_boundary, curl8_boundary}) {
        CAPTURE(boundary);
        const auto wheel = tricky_content(boundary);
        const auto body = curl_body(boundary, {{"name", "flash-attn"}, {"empty", ""}}, "x.whl", wheel);
        for (std::size_t chunk_size = 1; chunk_size <= body.size(); ++chunk_size) {
            CAPTURE(chunk_size);
            recording_sink sink;
            multipart_parser parser(boundary, sink);
            feed_in_chunks(parser, body, chunk_size);
            REQUIRE(parser.finish());
            REQUIRE(sink.parts.size() == 3);
            CHECK(sink.parts[0].data == "flash-attn");
            CHECK(sink.parts[1].header.name == "empty");
            CHECK(sink.parts[1].data.empty());
            CHECK(sink.parts[2].header.filename == "x.whl");
            CHECK(sink.parts[2].data == wheel);
        }
    }
}

TEST_CASE("multipart: a file part's bytes reach the sink as they arrive", "[multipart]") {
    // Only a possible delimiter prefix may be held back, never more than the delimiter's length.
    const std::string boundary = twine_boundary;
    std::string wheel;
    for (int i = 0; i < 5000; ++i) wheel.push_back(static_cast<char>((i * 7919) % 251));
    wheel += "\r\n--" + boundary.substr(0, 20);  // a long near-delimiter run at the very end
    const auto body = curl_body(boundary, {}, "x.whl", wheel);
    const auto content_start = body.find(wheel);
    const std::size_t delimiter_size = boundary.size() + 4;

    recording_sink sink;
    multipart_parser parser(boundary, sink);
    std::size_t held_most = 0;
    for (std::size_t at = 0; at < body.size(); ++at) {
        REQUIRE(parser.feed(std::string_view(body).substr(at, 1)));
        if (at >= content_start && at < content_start + wheel.size()) {
            const auto fed_content = at + 1 - content_start;
            REQUIRE(sink.delivered <= fed_content);
            held_most = std::max(held_most, fed_content - sink.delivered);
        }
    }
    REQUIRE(parser.finish());
    CHECK(held_most < delimiter_size);
    CHECK(held_most >= 20);  // the near-delimiter run was held, then released
    CHECK(sink.parts.at(0).data == wheel);
}

TEST_CASE("multipart: preamble, epilogue, transport padding and a first boundary without CRLF", "[multipart]") {
    const std::string boundary = "simple";
    const std::string padded =
        "This is the preamble.\r\n--simplex is still preamble: no boundary starts a line here\r\n"
        "--simple \t \r\n"
        "Content-Disposition: form-data; name=\"a\"\r\n\r\n"
        "one\r\n"
        "--simple\r\n"
        "Content-Disposition: form-data; name=\"b\"\r\n\r\n"
        "two\r\n"
        "--simple--  \r\nThis is the epilogue.\r\n--simple\r\n garbage \n\r";
    for (std::size_t chunk_size : {1u, 2u, 3u, 1000u}) {
        CAPTURE(chunk_size);
        recording_sink sink;
        multipart_parser parser(boundary, sink);
        feed_in_chunks(parser, padded, chunk_size);
        CHECK(parser.complete());
        REQUIRE(parser.finish());
        REQUIRE(sink.parts.size() == 2);
        CHECK(sink.parts[0].data == "one");
        CHECK(sink.parts[1].data == "two");
        CHECK(sink.body_ended);
    }

    // A body that starts right at the boundary, and one whose closing boundary has no CRLF.
    recording_sink bare_sink;
    multipart_parser bare(boundary, bare_sink);
    const std::string whole = "--simple\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--simple--";
    REQUIRE(bare.feed(whole));  // a std::string converts to the span
    CHECK(bare.complete());
    REQUIRE(bare.finish());
    CHECK(bare_sink.parts.at(0).data == "v");

    // A form with no parts at all is well-formed multipart (the collector then asks for content).
    recording_sink empty_sink;
    CHECK_FALSE(parse_error(boundary, "--simple--\r\n", empty_sink));
    CHECK(empty_sink.body_ended);
    CHECK(empty_sink.parts.empty());
}

TEST_CASE("multipart: malformed and truncated bodies get precise errors", "[multipart]") {
    const std::string b = "BOUNDARY";
    const std::string part_a = "--BOUNDARY\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nvalue\r\n";
    const std::string close = "--BOUNDARY--\r\n";
    struct row {
        std::string body;
        const char* message;
    };
    const std::vector<row> table = {
        {"", "never reaches the boundary '--BOUNDARY'"},
        {"no boundary anywhere\r\n", "never reaches the boundary '--BOUNDARY'"},
        {"--OTHER\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--OTHER--\r\n", "never reaches"},
        {part_a, "ends before its closing boundary (truncated upload?)"},
        {part_a.substr(0, part_a.size() - 4), "ends before its closing boundary (truncated upload?)"},
        {part_a.substr(0, 30), "ends before its closing boundary (truncated upload?)"},
        {"--BOUNDARY", "ends before its closing boundary"},
        {"--BOUNDARY\r", "ends before its closing boundary"},
        {part_a + "--BOUNDARY-", "ends before its closing boundary"},
        {part_a + "--BOUNDARY\r\n", "ends before its closing boundary"},
        {"--BOUNDARY\n" "Content-Disposition: form-data; name=\"a\"\n\nv\n--BOUNDARY--\n",
         "never reaches the boundary '--BOUNDARY' named in its Content-Type (the boundary line '--BOUNDARY' ends with "
         "a bare LF; multipart bodies need CRLF)"},
        {part_a + "--BOUNDARY\nContent-Disposition: form-data; name=\"b\"\r\n\r\n", "ends with a bare LF"},
        {part_a + "--BOUNDARY\r-", "does not end with CRLF"},
        {"--BOUNDARY\r\nContent-Disposition: form-data; name=\"a\"\n\nv", "bare LF"},
        {"--BOUNDARY\r\nContent-Disposition: form-data;\r name=\"a\"\r\n\r\nv", "bare CR"},
        {"--BOUNDARYX\r\n", "never reaches the boundary"},
        {part_a + "--BOUNDARYX\r\n", "followed by 'X' instead of a line end"},
        {part_a.substr(0, part_a.size() - 2) + "\r\n--BOUNDARYxyz\r\n" + close, "followed by 'x' instead of a line end"},
        {part_a + "--BOUNDARY-x\r\n", "'--BOUNDARY-' is malformed"},
        {part_a + "--BOUNDARY  x\r\n", "has text after it"},
        {"--BOUNDARY  x\r\n", "(the boundary line '--BOUNDARY' has text after it)"},
        {"--BOUNDARY\r\n\r\nno headers\r\n" + close, "no Content-Disposition header"},
        {"--BOUNDARY\r\nContent-Disposition: form-data; name=\"a\"\r\n--BOUNDARY\r\n\r\n", "run into a boundary line"},
    };
    for (const auto& [body, message] : table) {
        CAPTURE(body);
        for (std::size_t chunk_size : {1u, 3u, 1000u}) {
            CAPTURE(chunk_size);
            recording_sink sink;
            const auto failure = parse_error(b, body, sink, chunk_size);
            REQUIRE(failure);
            CHECK(failure->kind == error_kind::invalid);
            CHECK_THAT(failure->message, Catch::Contains(message));
        }
    }
}

TEST_CASE("multipart: a part header block is bounded", "[multipart]") {
    const std::string padding(20000, 'x');
    const std::string body = "--B\r\nContent-Disposition: form-data; name=\"a\"\r\nX-Pad: " + padding + "\r\n\r\nv\r\n--B--\r\n";
    recording_sink sink;
    const auto failure = parse_error("B", body, sink, 4096);
    CHECK_THAT(message_of(failure), Catch::Contains("part header block too large (over 16384 bytes)"));

    // Just under the limit passes; the limit is configurable.
    const std::string header = "Content-Disposition: form-data; name=\"a\"\r\n\r\n";
    const std::string fits = "--B\r\n" + header + "v\r\n--B--\r\n";
    recording_sink fits_sink;
    CHECK_FALSE(parse_error("B", fits, fits_sink, 7, multipart_limits{header.size()}));
    recording_sink over_sink;
    CHECK(parse_error("B", fits, over_sink, 7, multipart_limits{header.size() - 1}));
}

TEST_CASE("multipart: the number of parts is bounded, so a million tiny fields cost nothing", "[multipart]") {
    // Issue 14: the limit counted bytes, so a million one-byte fields cost ~107 MiB.
    auto field = [](int i) { return "--B\r\nContent-Disposition: form-data; name=\"f" + std::to_string(i) + "\"\r\n\r\nx\r\n"; };
    std::string body;
    for (int i = 0; i < 1000; ++i) body += field(i);
    const std::string close = "--B--\r\n";

    recording_sink at_limit;
    CHECK_FALSE(parse_error("B", body + close, at_limit, 4096));
    CHECK(at_limit.parts.size() == 1000);

    // The next part is refused as it begins: the sink never hears of it.
    for (std::size_t chunk_size : {1u, 7u, 4096u}) {
        recording_sink over;
        const auto failure = parse_error("B", body + field(1000) + close, over, chunk_size);
        REQUIRE(failure);
        CHECK(failure->kind == error_kind::too_large);
        CHECK_THAT(failure->message, Catch::Contains("the form has more than 1000 parts"));
        CHECK(over.parts.size() == 1000);
    }

    // A million fields stop at the same point; the rest is never looked at.
    multipart_limits limits;
    limits.max_parts = 10;
    recording_sink stream_sink;
    multipart_parser parser("B", stream_sink, limits);
    std::size_t fed_parts = 0;
    result<void> fed;
    while (fed && fed_parts < 1000000) fed = parser.feed(field(static_cast<int>(fed_parts++)));
    REQUIRE_FALSE(fed);
    CHECK(fed_parts == 11);
    CHECK(stream_sink.parts.size() == 10);
}

TEST_CASE("multipart: random bodies split at random points parse the same as whole", "[multipart]") {
    std::mt19937 random(20240611);
    const std::string boundary = "------------------------d74496d66958873e";
    const std::vector<std::string> fragments = {
        "\r", "\n", "\r\n", "-", "--", "\r\n-", "\r\n--", "\r\n--" + boundary.substr(0, 10),
        "\r\n--" + boundary.substr(0, boundary.size() - 1), "--" + boundary, "PK\x03\x04", std::string(1, '\0'),
        "abc", std::string(300, 'z')};
    for (int round = 0; round < 400; ++round) {
        CAPTURE(round);
        std::vector<std::pair<std::string, std::string>> expected;  // name, data
        const int part_count = std::uniform_int_distribution<int>(0, 5)(random);
        std::string body = std::uniform_int_distribution<int>(0, 1)(random) ? "preamble\r\n" : "";
        for (int p = 0; p < part_count; ++p) {
            std::string data;
            const int pieces = std::uniform_int_distribution<int>(0, 12)(random);
            for (int i = 0; i < pieces; ++i) {
                data += fragments[std::uniform_int_distribution<std::size_t>(0, fragments.size() - 1)(random)];
            }
            // A random body may have formed a whole delimiter by chance: cut it up.
            for (auto at = data.find("\r\n--" + boundary); at != std::string::npos; at = data.find("\r\n--" + boundary)) {
                data.erase(at, 1);
            }
            if (data.starts_with("--" + boundary)) data.insert(0, "x");
            const auto name = "part" + std::to_string(p);
            expected.emplace_back(name, data);
            body += "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n" + data + "\r\n";
        }
        body += "--" + boundary + "--\r\n";

        for (int split = 0; split < 8; ++split) {
            std::vector<std::size_t> cuts = {0, body.size()};
            const int cut_count = std::uniform_int_distribution<int>(0, 40)(random);
            for (int c = 0; c < cut_count; ++c) {
                cuts.push_back(std::uniform_int_distribution<std::size_t>(0, body.size())(random));
            }
            std::sort(cuts.begin(), cuts.end());
            recording_sink sink;
            multipart_parser parser(boundary, sink);
            for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
                // Copy each chunk into its own allocation so ASan sees any read past its end.
                const std::vector<char> chunk(body.begin() + static_cast<std::ptrdiff_t>(cuts[c]),
                                              body.begin() + static_cast<std::ptrdiff_t>(cuts[c + 1]));
                REQUIRE(parser.feed(std::span<const char>(chunk.data(), chunk.size())));
            }
            REQUIRE(parser.finish());
            REQUIRE(sink.parts.size() == expected.size());
            for (std::size_t p = 0; p < expected.size(); ++p) {
                CHECK(sink.parts[p].header.name == expected[p].first);
                CHECK(sink.parts[p].data == expected[p].second);
            }
        }
    }
}

TEST_CASE("multipart: form_collector keeps fields and streams content to the writer", "[multipart]") {
    const auto wheel = tricky_content(twine_boundary);
    const auto body = twine_body(twine_boundary, twine_fields, wheel_name, wheel);
    std::string spooled;
    form_collector form([&](std::span<const char> bytes) -> result<void> {
        spooled.append(bytes.data(), bytes.size());
        return {};
    });
    multipart_parser parser(twine_boundary, form);
    feed_in_chunks(parser, body, 17);
    REQUIRE(parser.finish());

    CHECK(form.has_content());
    CHECK(spooled == wheel);
    CHECK(form.content_size() == wheel.size());
    CHECK(form.content_filename() == wheel_name);
    CHECK(form.content_type() == "application/octet-stream");
    CHECK(form.first_value("name") == std::optional<std::string_view>("flash-attn"));
    CHECK(form.first_value("version") == std::optional<std::string_view>("2.8.3+cu130torch2.10cxx11abiTRUE"));
    CHECK(form.first_value("sha256_digest") ==
          std::optional<std::string_view>("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"));
    CHECK(form.first_value(":action") == std::optional<std::string_view>("file_upload"));
    CHECK(form.first_value("maintainer") == std::optional<std::string_view>(""));
    CHECK_FALSE(form.first_value("gpg_signature"));
    // A repeated field keeps each value, in order.
    auto values = [&](std::string_view name) {
        std::vector<std::string_view> out;
        for (const auto& field : form.fields()) {
            if (field.name == name) out.emplace_back(field.value);
        }
        return out;
    };
    CHECK(values("classifiers") == std::vector<std::string_view>{"Programming Language :: Python :: 3",
                                                                  "License :: OSI Approved :: BSD License",
                                                                  "Operating System :: Unix"});
    CHECK(values("requires_dist") == std::vector<std::string_view>{"torch", "einops"});
    // The description is read and dropped: the wheel's METADATA holds it.
    CHECK_FALSE(form.first_value("description"));
    CHECK(form.fields().size() == twine_fields.size() - 1);
    CHECK(values("content").empty());
}

TEST_CASE("multipart: form_collector rejects forms that do not carry exactly one wheel", "[multipart]") {
    const std::string b = "BOUNDARY";
    auto part = [&](const std::string& disposition, const std::string& data) {
        return "--" + b + "\r\nContent-Disposition: form-data; " + disposition + "\r\n\r\n" + data + "\r\n";
    };
    const std::string close = "--" + b + "--\r\n";
    struct row {
        std::string body;
        error_kind kind;
        const char* message;
    };
    const std::vector<row> table = {
        {part("name=\"name\"", "x") + close, error_kind::invalid,
         "no 'content' part: send the wheel or sdist as -F content=@FILE"},
        {close, error_kind::invalid, "no 'content' part"},
        {part("name=\"content\"; filename=\"a.whl\"", "1") + part("name=\"content\"; filename=\"b.whl\"", "2") + close,
         error_kind::invalid, "two 'content' parts: upload one file (wheel or sdist) per request"},
        {part("name=\"content\"", "PK") + close, error_kind::invalid, "the 'content' part has no filename"},
        {part("name=\"content\"; filename=\"\"", "PK") + close, error_kind::invalid,
         "the 'content' part has no filename"},
        {part("name=\"big\"", std::string(2000, 'x')) + part("name=\"content\"; filename=\"a.whl\"", "1") + close,
         error_kind::too_large, "the form fields besides 'content' exceed 1000 bytes (at field 'big')"},
        {part("name=\"" + std::string(1200, 'n') + "\"", "") + close, error_kind::too_large, "exceed 1000 bytes"},
        {part("name=\"content\"; filename=\"a.whl\"", std::string(5000, 'w')) + close, error_kind::too_large,
         "the file is larger than the upload limit of 4096 bytes"},
    };
    for (const auto& [body, kind, message] : table) {
        CAPTURE(body.substr(0, 200));
        for (std::size_t chunk_size : {1u, 64u, 100000u}) {
            form_limits limits;
            limits.max_field_bytes = 1000;
            limits.max_content_bytes = 4096;
            std::size_t written = 0;
            form_collector form(
                [&](std::span<const char> bytes) -> result<void> {
                    written += bytes.size();
                    return {};
                },
                limits);
            const auto failure = parse_error(b, body, form, chunk_size);
            REQUIRE(failure);
            CHECK(failure->kind == kind);
            CHECK_THAT(failure->message, Catch::Contains(message));
            CHECK(written <= limits.max_content_bytes);
        }
    }

    // Many small fields add up against the same cap, a large skipped description does not.
    std::string many;
    for (int i = 0; i < 200; ++i) many += part("name=\"classifiers\"", "Topic :: Scientific/Engineering");
    form_limits limits;
    limits.max_field_bytes = 4000;
    form_collector capped([](std::span<const char>) -> result<void> { return {}; }, limits);
    CHECK_THAT(message_of(parse_error(b, many + close, capped)), Catch::Contains("(at field 'classifiers')"));

    form_collector skipping([](std::span<const char>) -> result<void> { return {}; }, limits);
    const std::string with_description = part("name=\"description\"", std::string(100000, 'd')) +
                                         part("name=\"content\"; filename=\"a.whl\"", "PK") + close;
    CHECK_FALSE(parse_error(b, with_description, skipping, 999));
}

TEST_CASE("multipart: a failing writer stops the parse with its own error", "[multipart]") {
    form_collector form([](std::span<const char>) -> result<void> {
        return make_error(error_kind::internal, "writing the upload spool file failed: No space left on device");
    });
    const auto body = curl_body(curl7_boundary, {}, "x.whl", "PK\x03\x04 wheel bytes");
    const auto failure = parse_error(curl7_boundary, body, form, 8);
    REQUIRE(failure);
    CHECK(failure->kind == error_kind::internal);
    CHECK_THAT(failure->message, Catch::Contains("No space left on device"));
}

TEST_CASE("multipart: other file parts are kept as fields with their filename", "[multipart]") {
    // twine --sign sends the signature as a file part named gpg_signature.
    const std::string b = "B";
    const std::string body =
        "--B\r\nContent-Disposition: form-data; name=\"gpg_signature\"; filename=\"x.whl.asc\"\r\n"
        "Content-Type: application/octet-stream\r\n\r\n-----BEGIN PGP SIGNATURE-----\r\n"
        "--B\r\nContent-Disposition: form-data; name=\"content\"; filename=\"x.whl\"\r\n\r\nPK\r\n--B--\r\n";
    form_collector form([](std::span<const char>) -> result<void> { return {}; });
    REQUIRE_FALSE(parse_error(b, body, form, 3));
    REQUIRE(form.fields().size() == 1);
    CHECK(form.fields()[0].name == "gpg_signature");
    CHECK(form.fields()[0].filename == "x.whl.asc");
    CHECK(form.fields()[0].value == "-----BEGIN PGP SIGNATURE-----");
    CHECK(form.content_size() == 2);
}
