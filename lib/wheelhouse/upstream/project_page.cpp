#include "wheelhouse/upstream/project_page.hpp"

#include <algorithm>
#include <array>

#include <boost/url/parse.hpp>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/file_name.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/upstream/page_builder.hpp"

namespace wheelhouse::upstream {
namespace {

using text::quoted;

// What this index speaks (render/simple_pages.hpp's repository_version), as the highest minor.
constexpr unsigned highest_minor = 4;

constexpr std::array sdist_extensions = {".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar.xz", ".tar"};

// The sdist's name without its extension; empty when it has none of sdist_extensions.
std::string_view sdist_stem(std::string_view filename) {
    for (const std::string_view extension : sdist_extensions) {
        if (text::ends_with_ignoring_case(filename, extension)) return filename.substr(0, filename.size() - extension.size());
    }
    return {};
}

bool is_http_scheme(std::string_view scheme) {
    return text::equals_ignoring_case(scheme, "https") || text::equals_ignoring_case(scheme, "http");
}

}  // namespace

std::vector<std::string> projects_named_by(std::string_view filename) {
    std::vector<std::string> projects;
    if (filename.empty() || text::check_file_name_bytes("file", filename)) return projects;
    if (text::ends_with_ignoring_case(filename, ".whl")) {
        if (auto wheel = pep427::parse_wheel_filename(filename)) projects.push_back(std::move(wheel->normalized_name));
        return projects;
    }
    // pip cuts an sdist's name at the '-' before which the name is the project's, and takes the
    // file only when what follows is a version.
    const auto stem = sdist_stem(filename);
    for (std::size_t dash = stem.find('-'); dash != std::string_view::npos; dash = stem.find('-', dash + 1)) {
        if (pep440::parse(stem.substr(dash + 1))) projects.push_back(pep503::normalize(stem.substr(0, dash)));
    }
    return projects;
}

bool names_file_of(std::string_view filename, std::string_view project) {
    if (filename.empty() || text::check_file_name_bytes("file", filename)) return false;
    if (text::ends_with_ignoring_case(filename, ".whl")) {
        const auto wheel = pep427::parse_wheel_filename(filename);
        return wheel && wheel->normalized_name == project;
    }
    // One pass for a page's many files: the only cut that can name `project` is where the stem,
    // normalised as it is read, has just spelt it; only there is the rest parsed as a version.
    const auto stem = sdist_stem(filename);
    std::size_t matched = 0;  // of `project`, by the normalised stem so far
    bool in_separators = false;
    for (std::size_t at = 0; at < stem.size(); ++at) {
        const char c = stem[at];
        const bool separator = c == '-' || c == '_' || c == '.';
        if (separator && c == '-' && !in_separators && matched == project.size() && at > 0)
            return pep440::parse(stem.substr(at + 1)).has_value();
        if (separator && in_separators) continue;
        const char normalised = separator ? '-' : text::to_lower(c);
        in_separators = separator;
        if (matched >= project.size() || project[matched] != normalised) return false;
        ++matched;
    }
    return false;
}

result<std::string> supported_api_version(std::string_view declared) {
    const auto dot = declared.find('.');
    const auto major = declared.substr(0, dot);
    const auto minor = dot == std::string_view::npos ? std::string_view() : declared.substr(dot + 1);
    const auto digits = [](std::string_view part) {
        return !part.empty() && part.size() <= 6 && part.find_first_not_of("0123456789") == std::string_view::npos;
    };
    if (!digits(major) || !digits(minor))
        return invalid("its api-version " + quoted(declared) + " is not MAJOR.MINOR (PEP 629)");
    if (major != "1") return invalid("its api-version is " + quoted(declared) + "; this index reads version 1 (PEP 629)");
    const auto number = std::stoul(std::string(minor));
    return "1." + std::to_string(number < highest_minor ? number : highest_minor);
}

std::optional<page_format> format_of_content_type(std::string_view content_type) {
    const auto media = text::to_lower(text::trim(content_type.substr(0, content_type.find(';'))));
    if (media == "application/vnd.pypi.simple.v1+json") return page_format::json;
    if (media == "application/vnd.pypi.simple.v1+html" || media == "text/html") return page_format::html;
    return std::nullopt;
}

result<project_page> parse_project_page(std::string_view body, const page_source& source) {
    auto parsed = source.format == page_format::json ? detail::parse_json_page(body, source)
                                                     : detail::parse_html_page(body, source);
    if (!parsed) {
        return invalid("the upstream page of " + source.project + " at " + source.url + " was refused: " +
                       parsed.error().message);
    }
    return parsed;
}

namespace detail {

page_builder::page_builder(const page_source& source) : source_(source) {
    page_.project = source.project;
    if (auto parsed = boost::urls::parse_uri(source.url)) base_ = *parsed;
}

result<void> page_builder::set_base(std::string_view reference) {
    const auto parsed = boost::urls::parse_uri_reference(reference);
    boost::urls::url resolved;
    if (!parsed || !boost::urls::resolve(base_, *parsed, resolved))
        return invalid("its <base href> " + quoted(reference) + " is no URL");
    base_ = std::move(resolved);
    return {};
}

void page_builder::leave_out(std::string why) {
    if (page_.left_out++ == 0) page_.first_left_out = std::move(why);
}

result<void> page_builder::add(listed_link link) {
    if (page_.files.size() >= max_files) return invalid("it lists more than " + std::to_string(max_files) + " files");
    const auto named = [&] { return quoted(link.reference); };
    if (link.reference.size() > max_url_length) {
        leave_out("a URL of " + std::to_string(link.reference.size()) + " bytes");
        return {};
    }
    const auto reference = boost::urls::parse_uri_reference(link.reference);
    boost::urls::url url;
    if (!reference || base_.empty() || !boost::urls::resolve(base_, *reference, url) || !is_http_scheme(url.scheme()) ||
        url.host_address().empty()) {
        leave_out(named() + " is no http(s) URL");
        return {};
    }
    if (link.sha256.empty() && url.has_fragment()) link.sha256 = sha256_named_in(url.fragment());
    url.remove_fragment();
    const auto segments = url.segments();
    auto& file = link.attributes;
    file.filename = segments.empty() ? std::string() : std::string(segments.back());
    if (link.check_text && text::trim(link.link_text) != file.filename) {
        leave_out("the page names " + quoted(link.link_text) + " a file whose URL names " + quoted(file.filename));
        return {};
    }
    if (!names_file_of(file.filename, page_.project)) {
        leave_out(quoted(file.filename) + " is no wheel or sdist of " + page_.project);
        return {};
    }
    if (!crypto::is_sha256_hex(link.sha256)) {
        leave_out(file.filename + " has no sha256 (the index checks every byte it keeps against one)");
        return {};
    }
    const auto too_long = [](const std::optional<std::string>& text) { return text && text->size() > max_text_length; };
    if (too_long(file.requires_python) || too_long(file.yanked_reason)) {
        leave_out(file.filename + " has a requires-python or yank reason past " + std::to_string(max_text_length) + " bytes");
        return {};
    }
    file.url = std::string(url.buffer());
    file.sha256 = std::move(link.sha256);
    if (file.upload_time && !is_upload_time(*file.upload_time)) file.upload_time.reset();
    const auto [seen, fresh] = by_filename_.try_emplace(file.filename, page_.files.size());
    if (!fresh) {
        if (page_.files[seen->second].sha256 == file.sha256) return {};
        return invalid("it lists " + file.filename + " twice, with sha256 " + page_.files[seen->second].sha256 +
                       " and " + file.sha256);
    }
    page_.files.push_back(std::move(file));
    return {};
}

project_page page_builder::finish() && { return std::move(page_); }

std::string sha256_named_in(std::string_view text) {
    for (std::size_t start = 0; start <= text.size();) {
        const auto end = std::min(text.find('&', start), text.size());
        const auto part = text.substr(start, end - start);
        if (text::starts_with_ignoring_case(part, "sha256=")) {
            auto digest = text::to_lower(part.substr(7));
            return crypto::is_sha256_hex(digest) ? digest : std::string();
        }
        start = end + 1;
    }
    return {};
}

bool is_upload_time(std::string_view text) noexcept {
    // "YYYY-MM-DDTHH:MM:SS" then an optional fraction, then "Z".
    constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd";
    if (text.size() < shape.size() + 1 || text.size() > 40 || text.back() != 'Z') return false;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        const bool digit = text[i] >= '0' && text[i] <= '9';
        if (shape[i] == 'd' ? !digit : text[i] != shape[i]) return false;
    }
    const auto rest = text.substr(shape.size(), text.size() - shape.size() - 1);
    if (rest.empty()) return true;
    return rest.size() >= 2 && rest[0] == '.' && rest.find_first_not_of("0123456789", 1) == std::string_view::npos;
}

std::optional<std::string> known_status(std::string_view status) {
    if (status == "archived" || status == "quarantined" || status == "deprecated") return std::string(status);
    return std::nullopt;
}

}  // namespace detail
}  // namespace wheelhouse::upstream
