#include "wheelhouse/metadata/field_validation.hpp"

#include <algorithm>
#include <array>

#include <boost/url/parse.hpp>

#include "wheelhouse/pep440/specifier.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/pep508/requirement.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::metadata {
namespace {

using text::quoted;

constexpr std::size_t shown_value_bytes = 80;
constexpr std::size_t longest_summary = 512;   // PyPI's limit
constexpr std::size_t longest_url_label = 32;  // the specification's limit

// A field value in a message: quoted, shortened, control and non-ASCII bytes escaped.
std::string shown(std::string_view value) { return quoted(value, shown_value_bytes); }

error bad_field(std::string_view field, std::string_view value, std::string_view problem, std::string_view fix) {
    return invalid("METADATA's " + std::string(field) + " " + shown(value) + " " + std::string(problem) + "; " +
                   std::string(fix));
}

// Characters, not bytes: the text is UTF-8 (parse_core_metadata checked it).
std::size_t characters(std::string_view text) noexcept {
    return static_cast<std::size_t>(
        std::count_if(text.begin(), text.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

bool has_control(std::string_view text, bool tab_allowed) noexcept {
    return std::any_of(text.begin(), text.end(), [tab_allowed](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return (byte < 0x20 && !(tab_allowed && c == '\t')) || byte == 0x7f;
    });
}

result<void> check_metadata_version(std::string_view value) {
    constexpr std::array<std::string_view, 8> known{"1.0", "1.1", "1.2", "2.0", "2.1", "2.2", "2.3", "2.4"};
    if (std::find(known.begin(), known.end(), value) != known.end()) return {};
    const bool later_minor = value.size() > 2 && value.starts_with("2.") &&
                             std::all_of(value.begin() + 2, value.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (later_minor) return {};
    return bad_field("Metadata-Version", value, "is not a core metadata version",
                     "the known ones are 1.0, 1.1, 1.2 and 2.0 to 2.4 (write what your build backend wrote)");
}

result<void> check_summary(std::string_view value) {
    if (value.find_first_of("\r\n") != std::string_view::npos) {
        return bad_field("Summary", value, "spans several lines",
                         "write the summary on one line (the long text goes in the description)");
    }
    if (has_control(value, true)) {
        return bad_field("Summary", value, "holds a control character", "remove it");
    }
    if (characters(value) > longest_summary) {
        return invalid("METADATA's Summary is " + std::to_string(characters(value)) + " characters long (" +
                       shown(value) + "); shorten it to at most " + std::to_string(longest_summary));
    }
    return {};
}

result<void> check_requires_python(std::string_view value) {
    if (has_control(value, false)) {
        return bad_field("Requires-Python", value, "holds a line break or control character",
                         "write it on one line, such as '>=3.9'");
    }
    if (auto parsed = pep440::parse_specifier_set(value); !parsed) {
        return bad_field("Requires-Python", value,
                         "is not a PEP 440 version specifier set (" + parsed.error().message + ")",
                         "write one such as '>=3.9' or '>=3.9,<3.14'");
    }
    return {};
}

result<void> check_requires_dist(std::string_view value) {
    if (auto parsed = pep508::parse_requirement(value); !parsed) {
        return bad_field("Requires-Dist", value, "is not a PEP 508 requirement (" + parsed.error().message + ")",
                         "write one such as 'torch>=2.8' or 'einops; extra == \"kernels\"'");
    }
    return {};
}

result<void> check_provides_extra(std::string_view value) {
    if (pep503::is_valid_project_name(value)) return {};
    return bad_field("Provides-Extra", value, "is not a valid extra name",
                     "use ASCII letters and digits, with '-', '_' or '.' between them (PEP 685)");
}

result<void> check_project_url(std::string_view value) {
    constexpr std::string_view form = "write it as 'Label, https://host/path'";
    const auto comma = value.find(',');
    if (comma == std::string_view::npos) {
        return bad_field("Project-URL", value, "has no ', ' between label and URL", form);
    }
    auto trim = [](std::string_view text) {
        while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
        while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
        return text;
    };
    const auto label = trim(value.substr(0, comma));
    const auto url = trim(value.substr(comma + 1));
    if (label.empty()) return bad_field("Project-URL", value, "has an empty label", form);
    if (characters(label) > longest_url_label || has_control(label, false)) {
        return bad_field("Project-URL", value, "has a label that is not one line of at most 32 characters", form);
    }
    const auto parsed = boost::urls::parse_uri(url);
    const bool web = parsed && (parsed->scheme() == "https" || parsed->scheme() == "http");
    if (!web || !parsed->has_authority() || parsed->host().empty()) {
        return bad_field("Project-URL", value, "does not end in an http:// or https:// URL with a host", form);
    }
    return {};
}

// The single-use fields this index reads; a second one would leave the index and an
// installer free to read different values.
result<void> check_single_use(const core_metadata& metadata) {
    for (std::string_view field : {"Summary", "Requires-Python"}) {
        if (metadata.get_all(field).size() > 1) {
            return invalid("METADATA has more than one " + std::string(field) + " header; keep one");
        }
    }
    return {};
}

result<void> check_name(std::string_view value) {
    if (pep503::is_valid_project_name(value)) return {};
    return bad_field("Name", value, "is not a valid project name",
                     "use ASCII letters and digits, with '-', '_' or '.' between them");
}

result<void> check_version(std::string_view value) {
    if (auto parsed = pep440::parse(value); !parsed) {
        return bad_field("Version", value, "is not a PEP 440 version (" + parsed.error().message + ")",
                         "write one such as '2.8.3'");
    }
    return {};
}

// PEP 643: what names the distribution is never left to the build; an installer that trusted
// such metadata would not know what it installs.
result<void> check_dynamic(std::string_view value) {
    for (std::string_view never : {"Name", "Version", "Metadata-Version"}) {
        if (text::equals_ignoring_case(text::trim(value), never)) {
            return bad_field("Dynamic", value, "names a field that is never dynamic (PEP 643)",
                             "remove it: Name, Version and Metadata-Version are always static");
        }
    }
    return {};
}

struct field_rule {
    std::string_view field;
    result<void> (*check)(std::string_view value);
};

constexpr std::array<field_rule, 9> rules{{
    {"Metadata-Version", check_metadata_version},
    {"Name", check_name},
    {"Version", check_version},
    {"Summary", check_summary},
    {"Requires-Python", check_requires_python},
    {"Requires-Dist", check_requires_dist},
    {"Provides-Extra", check_provides_extra},
    {"Project-URL", check_project_url},
    {"Dynamic", check_dynamic},
}};

}  // namespace

result<void> validate_fields(const core_metadata& metadata) {
    for (const auto& rule : rules) {
        for (std::string_view value : metadata.get_all(rule.field)) {
            if (auto checked = rule.check(value); !checked) return checked;
        }
    }
    return check_single_use(metadata);
}

}  // namespace wheelhouse::metadata
