#include "wheelhouse/upstream/project_page.hpp"

#include <algorithm>
#include <array>

#include <optional>
#include <string>
#include <vector>

#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>

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

// RFC 3986 §5.2.4 on an encoded path, as written.
std::string remove_dot_segments(std::string_view path) {
    std::vector<std::string_view> kept;
    const bool absolute = !path.empty() && path.front() == '/';
    std::size_t start = absolute ? 1 : 0;
    bool ends_in_directory = false;
    while (start <= path.size()) {
        const auto end = std::min(path.find('/', start), path.size());
        const auto segment = path.substr(start, end - start);
        ends_in_directory = segment == "." || segment == "..";
        if (segment == "..") {
            if (!kept.empty()) kept.pop_back();
        } else if (segment != ".") {
            kept.push_back(segment);
        }
        start = end + 1;
    }
    std::string out = absolute ? "/" : "";
    for (std::size_t i = 0; i < kept.size(); ++i) {
        if (i) out += '/';
        out += kept[i];
    }
    if (ends_in_directory && !kept.empty()) out += '/';
    return out;
}

// RFC 3986 §5.2 resolution that keeps every byte as written: Boost.URL 1.81's resolve() decodes
// %2B to '+' in a path, which the S3 behind download.pytorch.org reads as a blank (its wheels
// are named "torch-2.8.0+cu128-…"). Nullopt when a part is not valid where it lands.
std::optional<boost::urls::url> resolve_as_written(boost::urls::url_view base, boost::urls::url_view reference) {
    if (reference.has_scheme()) return boost::urls::url(reference);
    if (base.empty()) return std::nullopt;
    boost::urls::url out(base);
    out.remove_query();
    out.remove_fragment();
    try {
        if (reference.has_authority()) {
            out.set_encoded_authority(reference.encoded_authority());
            out.set_encoded_path(remove_dot_segments(reference.encoded_path()));
        } else if (reference.encoded_path().empty()) {
            if (!reference.has_query() && base.has_query()) out.set_encoded_query(base.encoded_query());
        } else if (reference.encoded_path().front() == '/') {
            out.set_encoded_path(remove_dot_segments(reference.encoded_path()));
        } else {
            const auto directory = base.encoded_path().substr(0, base.encoded_path().rfind('/') + 1);
            std::string merged = directory.empty() && base.has_authority() ? "/" : std::string(directory);
            merged += reference.encoded_path();
            out.set_encoded_path(remove_dot_segments(merged));
        }
        if (reference.has_query()) out.set_encoded_query(reference.encoded_query());
        if (reference.has_fragment()) out.set_encoded_fragment(reference.encoded_fragment());
    } catch (const boost::system::system_error&) {  // a part that is not valid there
        return std::nullopt;
    }
    return out;
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

page_builder::page_builder(const page_source& source, std::size_t body_bytes)
    : source_(source), url_budget_(2 * body_bytes + url_budget_floor) {
    page_.project = source.project;
    if (auto parsed = boost::urls::parse_uri(source.url)) base_ = *parsed;
}

result<void> page_builder::set_base(std::string_view reference) {
    if (reference.size() > max_url_length)
        return invalid("its <base href> is " + std::to_string(reference.size()) + " bytes long, past " +
                       std::to_string(max_url_length));
    const auto parsed = boost::urls::parse_uri_reference(reference);
    auto resolved = parsed ? resolve_as_written(base_, *parsed) : std::nullopt;
    if (!resolved) return invalid("its <base href> " + quoted(reference) + " is no URL");
    base_ = std::move(*resolved);
    return {};
}

std::optional<boost::urls::url> page_builder::http_url(std::string_view reference) const {
    if (reference.empty() || reference.size() > max_url_length) return std::nullopt;
    const auto parsed = boost::urls::parse_uri_reference(reference);
    auto resolved = parsed ? resolve_as_written(base_, *parsed) : std::nullopt;
    if (!resolved || !is_http_scheme(resolved->scheme()) || resolved->host_address().empty()) return std::nullopt;
    // The bound holds as resolved: a short reference under a long base would otherwise carry
    // the base into every file's URLs (base length × links, not the page's size).
    if (resolved->buffer().size() > max_url_length) return std::nullopt;
    resolved->set_scheme(text::to_lower(resolved->scheme()));  // "HTTPS:" is https (RFC 3986 §6.2.2.1); clients compare as written
    return resolved;
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
    auto resolved = http_url(link.reference);
    if (!resolved) {
        leave_out(named() + " is no http(s) URL, or past " + std::to_string(max_url_length) + " bytes once resolved");
        return {};
    }
    auto& url = *resolved;
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
    // Upstream's attestations of these very bytes (they are checked by sha256), served by upstream.
    if (auto provenance = http_url(link.provenance_reference)) file.provenance = std::string(provenance->buffer());
    url_bytes_ += file.url.size() + (file.provenance ? file.provenance->size() : 0);
    if (url_bytes_ > url_budget_) {
        return invalid("its relative URLs resolve to more than twice its size (" + std::to_string(url_bytes_) +
                       " bytes so far): a <base href> repeated into every link");
    }
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
