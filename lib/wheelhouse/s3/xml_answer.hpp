#pragma once
// The XML that S3 answers with, read into a tree, and the few answers the blob store needs
// decoded from it. A reader of the documents S3 sends, not of XML at large: elements, attributes
// (skipped), text with the five named entities and numeric references, CDATA, comments and
// processing instructions; a DOCTYPE is refused, so no entity is ever expanded. Cost is linear
// in the document; nesting is bounded.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::s3 {

struct xml_element {
    std::string name;  // as written, prefix and all: S3 uses a default namespace
    std::string text;  // every text and CDATA run directly inside, entities decoded
    std::vector<xml_element> children;

    // The first child named `name`; null when none.
    const xml_element* child(std::string_view child_name) const noexcept;
    // That child's text; empty when there is no such child.
    std::string_view child_text(std::string_view child_name) const noexcept;
};

inline constexpr std::size_t max_xml_depth = 32;

// error_kind::invalid, with where and why, for anything else.
result<xml_element> parse_xml(std::string_view document);

// <Error><Code>NoSuchKey</Code><Message>...</Message></Error>
struct error_answer {
    std::string code;
    std::string message;
};
// nullopt-like: an empty code when the document is not an Error (S3 may answer 200 with one).
result<error_answer> error_of(std::string_view document);

// ListObjectsV2: one page of keys.
struct listed_object {
    std::string key;
    std::uint64_t size = 0;
};
struct list_page {
    std::vector<listed_object> objects;
    std::string next_continuation_token;  // empty on the last page
};
result<list_page> list_page_of(std::string_view document);

// CreateMultipartUpload: the UploadId.
result<std::string> upload_id_of(std::string_view document);

// CompleteMultipartUpload: whether the object was made. S3 answers 200 before it is done and
// may then send an <Error>; anything but <CompleteMultipartUploadResult> is a failure.
result<void> completion_of(std::string_view document);

// ListMultipartUploads: the uploads begun and neither completed nor aborted.
struct open_upload {
    std::string key;
    std::string upload_id;
};
result<std::vector<open_upload>> open_uploads_of(std::string_view document);

}  // namespace wheelhouse::s3
