// PEP 691 content negotiation (pep691/negotiation). The input is an Accept header. Beside
// memory safety:
// - the answer is one of the forms offered, with its own Content-Type, one the header asked for
//   (by name, its type's wildcard or */*), and never JSON when only HTML may be given;
// - the order in which a client lists its media ranges does not change the answer (RFC 9110
//   chooses by quality and specificity, never by position);
// - the ?format= override names what it is asked for.

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wheelhouse/pep691/negotiation.hpp"

namespace {

namespace pep691 = wheelhouse::pep691;

std::string describe(const std::optional<pep691::media_choice>& choice) {
    return choice ? std::string(choice->content_type) : std::string("406");
}

// Whether `header` could name `type` at all: by its name, its type's wildcard or "*/*".
bool could_name(std::string_view header, std::string_view type) {
    std::string lower(header);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    const auto slash = type.find('/');
    return lower.find(type) != std::string::npos || lower.find(std::string(type.substr(0, slash)) + "/*") != std::string::npos ||
           lower.find("*/*") != std::string::npos;
}

void check_answer(std::string_view header, bool html_only) {
    const auto choice = pep691::negotiate(header, html_only);
    if (!choice) return;
    if (header.find_first_not_of(" \t") != std::string_view::npos) {
        const bool named = choice->format == pep691::page_format::json
                               ? could_name(header, pep691::json_v1) ||
                                     could_name(header, "application/vnd.pypi.simple.latest+json")
                               : could_name(header, pep691::html_v1) || could_name(header, pep691::text_html) ||
                                     could_name(header, "application/vnd.pypi.simple.latest+html");
        WHEELHOUSE_FUZZ_CHECK(named, std::string(header) + " -> " + std::string(choice->content_type) + ", never asked for");
    }
    const bool json = choice->format == pep691::page_format::json;
    WHEELHOUSE_FUZZ_CHECK(!(html_only && json), std::string(header));
    WHEELHOUSE_FUZZ_CHECK(json ? choice->content_type == pep691::json_v1
                               : (choice->content_type == pep691::html_v1 || choice->content_type == pep691::text_html_utf8),
                          std::string(header));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto header = wheelhouse::fuzz::as_text(data, size);
    check_answer(header, false);
    check_answer(header, true);
    auto ranges = wheelhouse::fuzz::split(header, ',');
    if (ranges.size() > 1 && ranges.size() <= 6) {
        std::reverse(ranges.begin(), ranges.end());
        std::string reversed(ranges[0]);
        for (std::size_t i = 1; i < ranges.size(); ++i) reversed += "," + std::string(ranges[i]);
        for (bool html_only : {false, true}) {
            const auto forward = pep691::negotiate(header, html_only), backward = pep691::negotiate(reversed, html_only);
            WHEELHOUSE_FUZZ_CHECK(describe(forward) == describe(backward),
                                  std::string(header) + " -> " + describe(forward) + " but " + reversed + " -> " +
                                      describe(backward));
        }
    }
    if (auto chosen = pep691::choose_by_format_parameter(header)) {
        const bool json = chosen->format == pep691::page_format::json;
        WHEELHOUSE_FUZZ_CHECK(json == (chosen->content_type == pep691::json_v1), std::string(header));
    }
    (void)pep691::prefers_html_for_core_metadata(header);
    return 0;
}
