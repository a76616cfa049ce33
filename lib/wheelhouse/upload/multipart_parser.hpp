#pragma once
// RFC 7578 multipart/form-data, parsed as it arrives: the upload form that twine and
// `curl -F content=@file.whl` send to /legacy/. No part is ever held whole in memory.
//
// What real clients emit (and so what this accepts):
// - twine (requests-toolbelt's MultipartEncoder, headers rendered by urllib3): boundary is
//   uuid4().hex; each part is "--B\r\n" + "Content-Disposition: form-data; name=\"…\"" +
//   ["; filename=\"…\"" + "\r\nContent-Type: application/octet-stream"] + "\r\n\r\n" +
//   bytes + "\r\n"; the body ends "--B--\r\n". Fields without a value are empty parts.
// - curl -F: boundary is 24 dashes and 16 hex (curl 7) or 22 alphanumerics (curl 8); the
//   same layout; text fields carry no Content-Type.
// Both use CRLF everywhere, so bare LF is rejected with a message rather than guessed at.
// Quoted names and filenames: `\"` and `\\` are undone (old Firefox and curl's
// CURLMIMEOPT_FORMESCAPE escape that way); WHATWG's %22/%0D/%0A are left as sent, as
// every browser's own parser does, because a literal "%22" is indistinguishable from one.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::upload {

// The boundary of a `multipart/form-data; boundary=…` Content-Type value (quoted or not),
// checked against RFC 2046 (1 to 70 characters from its set, no trailing space).
result<std::string> boundary_from_content_type(std::string_view content_type);

// What a part's headers say about it.
struct part_header {
    std::string name;                     // Content-Disposition name, never empty
    std::optional<std::string> filename;  // set for file parts, even when the filename is empty
    std::string content_type;             // as sent; empty when the part has none
};

// Parses one part's header block: header lines, each ending in CRLF, then the empty line.
// Requires `Content-Disposition: form-data; name=…`; other headers but Content-Type and
// Content-Transfer-Encoding (only 7bit, 8bit or binary) are ignored.
result<part_header> parse_part_headers(std::string_view header_block);

// Receives the parts in order. Every call may fail; the parser then stops and returns the
// sink's error from feed()/finish().
class part_sink {
public:
    virtual ~part_sink() = default;
    virtual result<void> begin_part(const part_header& header) = 0;
    virtual result<void> part_data(std::span<const char> bytes) = 0;  // zero or more times
    virtual result<void> end_part() = 0;
    virtual result<void> end_body() = 0;  // after the closing boundary, once
};

struct multipart_limits {
    std::size_t max_header_block_bytes = 16 * 1024;  // per part, including the empty line
    // Parts in one body, past which the body is refused (too_large) as the next one begins,
    // so a form of a million one-byte fields costs no more than one of a thousand. twine sends
    // about 30 fields plus one per classifier, requirement and project URL: a rich project
    // (200 classifiers, 100 requirements) stays under 400, which leaves a margin of 2.5.
    std::size_t max_parts = 1000;
};

// A push parser: feed() the body in chunks of any size, then finish(). Part bytes go to the
// sink as they arrive; at most the delimiter's length is held back between chunks, and it
// is held implicitly (it can only be a prefix of the delimiter), so nothing of a file part
// is ever copied. Preamble and epilogue are ignored. After the first error every call
// returns that error.
// Thread safety: one parser belongs to one thread at a time.
class multipart_parser {
public:
    // `boundary` as returned by boundary_from_content_type. The sink must outlive the parser.
    multipart_parser(std::string_view boundary, part_sink& sink, multipart_limits limits = {});
    multipart_parser(const multipart_parser&) = delete;
    multipart_parser& operator=(const multipart_parser&) = delete;

    // Takes std::string, std::string_view and byte buffers alike (they convert to the span).
    result<void> feed(std::span<const char> chunk);

    // The end of the body: an error unless the closing boundary has been seen.
    result<void> finish();

    // True once the closing boundary has been seen (and the sink told end_body()).
    bool complete() const noexcept { return state_ == state::epilogue; }

private:
    enum class state {
        preamble,            // before the first boundary
        after_boundary,      // just read "\r\n--B": "--", padding or CRLF follows
        closing_dash,        // read "\r\n--B-"
        transport_padding,   // spaces or tabs after the boundary
        boundary_line_end,   // read the CR that ends a boundary line
        headers,             // a part's header block
        body,                // a part's bytes
        epilogue,            // after the closing boundary
        failed,
    };

    result<std::size_t> step(std::string_view input);
    result<std::size_t> scan_for_delimiter(std::string_view input);
    result<std::size_t> on_delimiter(std::size_t consumed);
    result<void> deliver(std::string_view bytes);
    result<std::size_t> read_boundary_tail(std::string_view input);
    result<std::size_t> read_headers(std::string_view input);
    error too_many_parts() const;

    std::string delimiter_;  // "\r\n--" + boundary
    std::boyer_moore_horspool_searcher<std::string::const_iterator> searcher_;  // over delimiter_
    part_sink& sink_;
    multipart_limits limits_;
    state state_ = state::preamble;
    // How many bytes of delimiter_ the input has matched so far, across chunk edges. The body
    // starts as if after a CRLF, so a boundary on the very first line is found too.
    std::size_t matched_ = 2;
    bool in_preamble_ = true;  // the boundary line being read is the first one
    std::optional<std::string> preamble_near_miss_;  // why a boundary-like preamble line was not one
    std::string header_block_;
    std::size_t parts_ = 0;  // parts begun so far
    std::optional<error> failure_;
};

// One non-file form field, in the order it arrived; repeated names (classifiers,
// requires_dist) are repeated entries.
struct form_field {
    std::string name;
    std::string value;
    std::optional<std::string> filename;  // set when it came as a file part (twine's gpg_signature)
};

struct form_limits {
    // All fields but `content` together (names and values): they are held in memory.
    std::size_t max_field_bytes = 1024 * 1024;
    // The wheel itself; the HTTP layer's body limit usually answers first.
    std::uint64_t max_content_bytes = UINT64_MAX;
    // Fields that are read and dropped: the wheel's own METADATA (stored byte for byte for
    // PEP 658) holds the long description, so a README of any size cannot fail an upload.
    std::vector<std::string> skipped_fields = {"description"};
};

// The sink the upload form needs: the part named `content` goes to `write_content` (a spool
// file), every other field is kept as a string within form_limits. Rejects a body without
// exactly one `content` part with a filename.
// Thread safety: as its parser.
class form_collector final : public part_sink {
public:
    using content_writer = std::function<result<void>(std::span<const char>)>;

    explicit form_collector(content_writer write_content, form_limits limits = {});

    result<void> begin_part(const part_header& header) override;
    result<void> part_data(std::span<const char> bytes) override;
    result<void> end_part() override;
    result<void> end_body() override;

    // The `content` part; meaningful once it has begun (after end_body(), always).
    bool has_content() const noexcept { return content_seen_; }
    const std::string& content_filename() const noexcept { return content_filename_; }
    const std::string& content_type() const noexcept { return content_type_; }
    std::uint64_t content_size() const noexcept { return content_size_; }

    const std::vector<form_field>& fields() const noexcept { return fields_; }
    // The first value of field `name`, or nullopt when it was not sent.
    std::optional<std::string_view> first_value(std::string_view name) const;

private:
    enum class destination { none, content, field, skipped };

    content_writer write_content_;
    form_limits limits_;
    destination current_ = destination::none;
    bool content_seen_ = false;
    std::string content_filename_;
    std::string content_type_;
    std::uint64_t content_size_ = 0;
    std::vector<form_field> fields_;
    std::size_t field_bytes_ = 0;
};

}  // namespace wheelhouse::upload
