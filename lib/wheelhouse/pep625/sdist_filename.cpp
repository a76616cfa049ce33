#include "wheelhouse/pep625/sdist_filename.hpp"

#include <algorithm>
#include <array>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/file_name.hpp"

namespace wheelhouse::pep625 {
namespace {

using text::ends_with_ignoring_case;
using text::longest_file_name;

constexpr std::string_view extension = ".tar.gz";

error fail(std::string_view filename, std::string_view reason, std::string_view detail = {}) {
    return text::refuse_file_name("sdist", filename, reason, detail);
}

struct split_name {
    std::string_view name;
    std::string_view version_text;
    pep440::version version;
};

// The first split at a '-', from the last one back, whose left is a project name and whose right
// a version: "flash-attn-2.8.3" is flash-attn 2.8.3, "foo-1.0-post1" is foo 1.0.post1.
std::optional<split_name> split_at_version(std::string_view stem) {
    for (auto dash = stem.rfind('-'); dash != std::string_view::npos && dash > 0; dash = stem.rfind('-', dash - 1)) {
        const auto name = stem.substr(0, dash);
        const auto version_text = stem.substr(dash + 1);
        if (!pep503::is_valid_project_name(name)) continue;
        auto version = pep440::parse(version_text);
        if (version) return split_name{name, version_text, std::move(version).value()};
    }
    return std::nullopt;
}

}  // namespace

std::string canonical_sdist_filename(std::string_view name, const pep440::version& version) {
    std::string out = pep503::normalize(name);
    std::replace(out.begin(), out.end(), '-', '_');
    return out + "-" + version.to_string() + std::string(extension);
}

bool looks_like_sdist(std::string_view filename) noexcept {
    constexpr std::array<std::string_view, 5> archives = {".tar.gz", ".zip", ".tar.bz2", ".tgz", ".tar"};
    return std::any_of(archives.begin(), archives.end(),
                       [&](auto suffix) { return ends_with_ignoring_case(filename, suffix); });
}

result<sdist_filename> parse_sdist_filename(std::string_view filename) {
    if (filename.empty()) return invalid("empty sdist filename");
    if (auto problem = text::check_file_name_bytes("sdist", filename)) return *problem;
    if (!filename.ends_with(extension)) {
        if (ends_with_ignoring_case(filename, extension)) {
            return fail(filename, "the extension must be '.tar.gz' in lower case");
        }
        return fail(filename, "rebuild it as a .tar.gz (python -m build --sdist): PEP 625 sdists are gzipped tar files",
                    "a .zip, .tar.bz2, .tgz or plain .tar is a legacy sdist, which installers no longer need to read");
    }
    const auto stem = filename.substr(0, filename.size() - extension.size());
    auto split = split_at_version(stem);
    if (!split) {
        return fail(filename, "name it {name}-{version}.tar.gz with a project name and a PEP 440 version",
                    "no '-' in it separates a valid project name from a PEP 440 version");
    }
    const auto canonical = canonical_sdist_filename(split->name, split->version);
    if (canonical.size() > longest_file_name) {  // normalising can lengthen a version: "1r" is "1.post0"
        return fail(filename, "shorten the name or version: written as PEP 625 says, the name would be " +
                                  std::to_string(canonical.size()) + " bytes; at most " +
                                  std::to_string(longest_file_name) + " are allowed",
                    "the PEP 625 spelling is " + canonical);
    }
    if (canonical != filename) {
        const std::string reason = "rename it to " + canonical +
                                   ": PEP 625 writes the name lower case with '_' and the version normalised";
        if (text::fits_status_line("sdist", reason)) return fail(filename, reason);
        return fail(filename, "rename it to its PEP 625 name: the name lower case with '_', the version normalised",
                    "the name to use is " + canonical);
    }
    sdist_filename out;
    out.filename = std::string(filename);
    out.name = std::string(split->name);
    out.normalized_name = pep503::normalize(split->name);
    out.version_text = std::string(split->version_text);
    out.version = std::move(split->version);
    return out;
}

}  // namespace wheelhouse::pep625
