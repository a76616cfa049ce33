#include "wheelhouse/auth/build_labels.hpp"

#include <algorithm>

#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::auth {
namespace {


constexpr std::size_t max_pattern_length = 100;

bool is_pattern_character(char c) noexcept {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '*' || c == '?';
}

std::string listed(const std::vector<std::string>& items) {
    std::string text;
    for (const auto& item : items) text += (text.empty() ? "" : ", ") + text::quoted(item, 60);
    return text;
}

}  // namespace

result<std::string> normalize_label_pattern(std::string_view pattern) {
    if (pattern.starts_with('+')) pattern.remove_prefix(1);
    std::string normalized = text::to_lower(pattern);
    if (normalized.empty() || normalized.size() > max_pattern_length) {
        return invalid("label pattern " + text::quoted(pattern) + " must be 1 to " + std::to_string(max_pattern_length) +
                       " characters, such as 'cu130*' or '*torch2.10*'");
    }
    const auto bad = std::find_if_not(normalized.begin(), normalized.end(), is_pattern_character);
    if (bad != normalized.end()) {
        return invalid("label pattern " + text::quoted(pattern) + " contains " + text::describe_byte(*bad) +
                       ": use letters, digits, '.', '_', and the wildcards '*' and '?'");
    }
    return normalized;
}

result<file_labels> labels_of_file(std::string_view filename) {
    file_labels found;
    if (pep625::looks_like_sdist(filename)) {
        auto sdist = pep625::parse_sdist_filename(filename);
        if (!sdist) return sdist.error();
        found.project = sdist->normalized_name;
        if (auto local = sdist->version.local_string(); !local.empty()) found.labels.push_back(std::move(local));
        return found;
    }
    auto wheel = pep427::parse_wheel_filename(filename);
    if (!wheel) return wheel.error();
    found.project = wheel->normalized_name;
    if (auto local = wheel->version.local_string(); !local.empty()) found.labels.push_back(std::move(local));
    if (wheel->variant_label) found.labels.push_back(*wheel->variant_label);
    return found;
}

result<void> permits_file(const token_grant& grant, std::string_view filename) {
    if (grant.build_limits.empty()) return {};
    auto labels = labels_of_file(filename);
    if (!labels) return labels.error();
    const auto& project = labels->project;
    std::vector<std::string> patterns;
    for (const auto& limit : grant.build_limits) {
        if (limit.project == project) patterns.push_back(limit.label_pattern);
    }
    const std::vector<std::string> judged = labels->labels.empty() ? std::vector<std::string>{""} : labels->labels;
    const bool admitted = std::any_of(patterns.begin(), patterns.end(), [&](const std::string& pattern) {
        return std::all_of(judged.begin(), judged.end(), [&](const std::string& label) { return glob_match(pattern, label); });
    });
    if (admitted) return {};
    const std::string carried = labels->labels.empty() ? "no label" : "the label " + listed(labels->labels);
    if (patterns.empty()) {
        return make_error(error_kind::forbidden, "token '" + grant.name + "' may publish no build of project '" +
                                                     project + "'");
    }
    return make_error(error_kind::forbidden, "token '" + grant.name + "' may publish only builds labelled " +
                                                 listed(patterns) + "; " + std::string(filename) + " carries " + carried);
}

}  // namespace wheelhouse::auth
