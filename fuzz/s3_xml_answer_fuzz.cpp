// The object store's XML answers (s3/xml_answer). Beside memory safety:
// - a document that is read, written back (names as read, text escaped), reads to the same tree;
// - the tree holds no more bytes than the document (so no answer grows past what was sent, and
//   doubling the document at most doubles what is kept);
// - a refusal says why in printable ASCII;
// - the decoders (error, list page, upload id, completion, open uploads) accept or refuse without breaking either rule.

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/s3/xml_answer.hpp"

namespace {

using wheelhouse::s3::xml_element;

void write(const xml_element& element, std::string& out) {
    out += "<" + element.name + ">";
    for (const char c : element.text) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else out += c;
    }
    for (const auto& child : element.children) write(child, out);
    out += "</" + element.name + ">";
}

// Text first, then children: written back, the text comes before every child, so compare so.
bool same(const xml_element& a, const xml_element& b) {
    if (a.name != b.name || a.text != b.text || a.children.size() != b.children.size()) return false;
    for (std::size_t i = 0; i < a.children.size(); ++i)
        if (!same(a.children[i], b.children[i])) return false;
    return true;
}

std::size_t bytes_kept(const xml_element& element) {
    std::size_t total = element.name.size() + element.text.size();
    for (const auto& child : element.children) total += bytes_kept(child);
    return total;
}

void check_refusal(const wheelhouse::error& refused, std::string_view input) {
    for (const char c : refused.message)
        WHEELHOUSE_FUZZ_CHECK(c >= 0x20 && c < 0x7F, std::string(input) + " -> " + refused.message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input = wheelhouse::fuzz::as_text(data, size);
    const auto parsed = wheelhouse::s3::parse_xml(input);
    if (!parsed) {
        check_refusal(parsed.error(), input);
    } else {
        WHEELHOUSE_FUZZ_CHECK(bytes_kept(*parsed) <= input.size(), input);
        std::string written;
        write(*parsed, written);
        const auto again = wheelhouse::s3::parse_xml(written);
        WHEELHOUSE_FUZZ_CHECK(again.has_value(), written + " -> " + (again ? "" : again.error().message));
        WHEELHOUSE_FUZZ_CHECK(same(*parsed, *again), std::string(input) + " written back as " + written);
    }
    if (const auto failure = wheelhouse::s3::error_of(input); !failure) check_refusal(failure.error(), input);
    if (const auto page = wheelhouse::s3::list_page_of(input); !page) check_refusal(page.error(), input);
    if (const auto id = wheelhouse::s3::upload_id_of(input); !id) check_refusal(id.error(), input);
    if (const auto made = wheelhouse::s3::completion_of(input); !made) check_refusal(made.error(), input);
    if (const auto open = wheelhouse::s3::open_uploads_of(input); !open) {
        check_refusal(open.error(), input);
    } else {
        std::size_t kept = 0;
        for (const auto& upload : *open) kept += upload.key.size() + upload.upload_id.size();
        WHEELHOUSE_FUZZ_CHECK(kept <= input.size(), input);
    }
    return 0;
}
