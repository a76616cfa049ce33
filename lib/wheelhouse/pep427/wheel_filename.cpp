#include "wheelhouse/pep427/wheel_filename.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/pep503/name.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/file_name.hpp"
#include "wheelhouse/text/quoted.hpp"

// Follows packaging 23.0's parse_wheel_filename and is deliberately stricter where a name
// could harm or mislead an index that stores files under these names; each stricter rule below
// is marked "Stricter than packaging" and listed in tests/data/invalid_wheel_filenames.tsv.

namespace wheelhouse::pep427 {
namespace {

using text::describe_byte;

constexpr std::string_view extension = ".whl";
constexpr std::string_view expected_form =
    "{distribution}-{version}(-{build tag})?-{python tag}-{abi tag}-{platform tag}(-{variant label})?.whl";

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }
bool is_tag_character(char c) noexcept {
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
using text::to_lower;
bool is_label_character(char c) noexcept { return is_digit(c) || (c >= 'a' && c <= 'z') || c == '_' || c == '.'; }

// A part that reads as a platform tag: taken for a variant label, it would hide a build tag or a
// local label written with '-' ("flash_attn-2.8.3-cu128-cp312-cp312-linux_x86_64.whl").
// The prefixes are packaging.tags' platforms: PyPI's, WebAssembly's (PEP 783) and the BSDs',
// Solaris', AIX's and Cygwin's sysconfig spellings, which wheels built there carry.
bool looks_like_platform_tag(std::string_view part) noexcept {
    constexpr std::array<std::string_view, 18> prefixes = {
        "linux_",    "manylinux",    "musllinux_", "macosx_",  "win_",     "win32",
        "android_",  "ios_",         "pyodide_",   "emscripten_", "freebsd_", "netbsd_",
        "openbsd_",  "dragonfly_",   "solaris_",   "sunos_",   "aix_",     "cygwin_"};
    return part == "any" || std::any_of(prefixes.begin(), prefixes.end(), [&](auto p) { return part.starts_with(p); });
}

class parser {
public:
    explicit parser(std::string_view filename) : filename_(filename) {}

    result<wheel_filename> run() {
        if (filename_.empty()) return invalid("empty wheel filename");
        // Stricter than packaging: printable ASCII, a file name and not a path (text/file_name.hpp).
        if (auto problem = text::check_file_name_bytes("wheel", filename_, "(use the project's ASCII name)")) {
            return *problem;
        }
        if (!filename_.ends_with(extension)) {
            return fail(text::ends_with_ignoring_case(filename_, extension)
                            ? "the extension must be '.whl' in lower case"
                            : "a wheel filename must end in '.whl' (an sdist's in '.tar.gz')");
        }
        const std::string_view stem = filename_.substr(0, filename_.size() - extension.size());

        std::array<std::string_view, 7> parts{};
        std::size_t count = 0;
        std::size_t start = 0;
        while (true) {
            const std::size_t dash = stem.find('-', start);
            const std::string_view part = stem.substr(start, dash == std::string_view::npos ? dash : dash - start);
            if (count < parts.size()) parts[count] = part;
            ++count;
            if (dash == std::string_view::npos) break;
            start = dash + 1;
        }
        // A build tag starts with a digit, which tells it from a python tag: six parts hold a build
        // tag or a variant label (PEP 825), seven hold both.
        const bool digit_third = count >= 6 && !parts[2].empty() && is_digit(parts[2].front());
        const bool has_build = (count == 6 || count == 7) && digit_third;
        const bool has_label = count == 7 || (count == 6 && !has_build);
        // Stricter than PEP 825: a "label" that reads as a platform tag means the parts are shifted.
        const bool shifted = has_label && looks_like_platform_tag(parts[count - 1]);
        if (count == 6 && shifted) return fail(build_tag_not_digit(parts[2]));
        if (count == 7 && (shifted || !digit_third)) return seven_parts_unexplained(parts);
        if (count < 5 || count > 7) {
            std::string reason = "found " + std::to_string(count) + " '-'-separated part" + (count == 1 ? "" : "s") +
                                 " where 5, 6 or 7 are expected";
            if (count > 6) reason += "; write a '-' inside the name or version as '_'";
            return fail(reason, "the form is " + std::string(expected_form));
        }

        wheel_filename out;
        out.filename = std::string(filename_);
        if (auto problem = take_name(parts[0], out)) return *problem;
        if (auto problem = take_version(parts[0], parts[1], out)) return *problem;
        if (has_build) {
            if (auto problem = take_build(parts[2], out)) return *problem;
        }
        if (has_label) {
            if (auto problem = take_label(parts[count - 1], out)) return *problem;
        }
        const std::size_t tags = (has_build ? 3 : 2);
        if (auto problem = take_tag_set("python", parts[tags], out.python_tags)) return *problem;
        if (auto problem = take_tag_set("abi", parts[tags + 1], out.abi_tags)) return *problem;
        if (auto problem = take_tag_set("platform", parts[tags + 2], out.platform_tags)) return *problem;

        // Stricter than packaging: it takes "a..b" as a name and anything as a build suffix, but a
        // name with ".." invites path tricks wherever the file is later stored or served.
        if (filename_.find("..") != std::string_view::npos) {
            return fail("'..' is not allowed in a wheel filename");
        }
        return out;
    }

private:
    using maybe_error = std::optional<error>;

    error fail(std::string_view reason, std::string_view detail = {}) const {
        return text::refuse_file_name("wheel", filename_, reason, detail);
    }

    maybe_error take_name(std::string_view name, wheel_filename& out) const {
        if (name.empty()) return fail("the distribution name is empty");
        // packaging refuses "__": PEP 427 escapes each run of '-', '_' and '.' as one '_'.
        if (name.find("__") != std::string_view::npos) {
            return fail("the distribution name '" + std::string(name) +
                        "' contains '__' (each run of '-', '_' and '.' in a name is written as one '_')");
        }
        // Stricter than packaging, which accepts any [\w.]* here, even "_a" or an empty name.
        if (!pep503::is_valid_project_name(name)) {
            return fail("the distribution name '" + std::string(name) +
                        "' is not a valid project name (ASCII letters and digits, with '.' or '_' "
                        "only between them)");
        }
        out.name = std::string(name);
        out.normalized_name = pep503::normalize(name);
        return std::nullopt;
    }

    maybe_error take_version(std::string_view name, std::string_view text, wheel_filename& out) const {
        if (text.empty()) return fail("the version is empty");
        auto parsed = pep440::parse(text);
        if (!parsed) {
            const std::string reason = "bad version: " + parsed.error().message;
            // "flash-attn-2.8.3-…" reads as name "flash", version "attn": say what was meant, first.
            if (!is_digit(text.front()) && !(text.size() > 1 && (text[0] == 'v' || text[0] == 'V') && is_digit(text[1]))) {
                return fail("if '" + std::string(text) + "' is part of the name, write it as '" + std::string(name) + "_" +
                                std::string(text) + "'; it is no version",
                            reason);
            }
            // pep440's reason quotes the version; a long one leaves the status line for the detail.
            if (!text::fits_status_line("wheel", reason))
                return fail("the version is not a PEP 440 version", reason);
            return fail(reason);
        }
        out.version_text = std::string(text);
        out.version = std::move(parsed).value();
        return std::nullopt;
    }

    maybe_error take_build(std::string_view text, wheel_filename& out) const {
        if (text.empty()) return fail("the build tag is empty");
        if (!is_digit(text.front())) return fail(build_tag_not_digit(text));
        const std::size_t digits =
            static_cast<std::size_t>(std::find_if_not(text.begin(), text.end(), is_digit) - text.begin());
        build_tag build;
        // Stricter than packaging: Python's int is unbounded.
        if (std::from_chars(text.data(), text.data() + digits, build.number).ec == std::errc::result_out_of_range) {
            return fail("the build number '" + std::string(text.substr(0, digits)) + "' is larger than " +
                        std::to_string(std::numeric_limits<std::uint64_t>::max()));
        }
        build.suffix = std::string(text.substr(digits));
        build.text = std::string(text);
        out.build = std::move(build);
        return std::nullopt;
    }

    static std::string build_tag_not_digit(std::string_view text) {
        return "the build tag '" + std::string(text) +
               "' must start with a digit (is the version's local label written with '-' instead of '+'?)";
    }

    // Seven parts hold a build tag and a variant label, or a '-' too many.
    error seven_parts_unexplained(const std::array<std::string_view, 7>& parts) const {
        const std::string why = is_digit(parts[2].empty() ? 'x' : parts[2].front())
                                    ? "the last, '" + std::string(parts[6]) + "', is a platform tag, not a variant label"
                                    : "the third, '" + std::string(parts[2]) + "', is no build tag (one starts with a digit)";
        return fail("write a '-' inside the name, version or variant label as '_': found 7 '-'-separated parts",
                    why + "; a local label is written with '+'; the form is " + std::string(expected_form));
    }

    maybe_error take_label(std::string_view label, wheel_filename& out) const {
        if (label.empty()) return fail("the variant label is empty");
        if (!is_valid_variant_label(label)) {
            const char bad = *std::find_if_not(label.begin(), label.end(), is_label_character);
            return fail("the variant label '" + std::string(label) + "' contains " + describe_byte(bad) +
                        "; PEP 825 labels are 0-9, a-z, '_' and '.'");
        }
        out.variant_label = std::string(label);
        return std::nullopt;
    }

    // Stricter than packaging, which takes empty tags, empty members ("py2..py3") and any
    // characters: a tag no installer could ever match is an upload mistake worth refusing.
    maybe_error take_tag_set(std::string_view kind, std::string_view set, std::vector<std::string>& tags) const {
        const auto what = [kind] { return "the " + std::string(kind) + " tag"; };
        if (set.empty()) return fail(what() + " is empty");
        std::size_t start = 0;
        while (true) {
            const std::size_t dot = set.find('.', start);
            const std::string_view tag = set.substr(start, dot == std::string_view::npos ? dot : dot - start);
            if (tag.empty()) {
                return fail(what() + " set '" + std::string(set) + "' has an empty member (a stray '.')");
            }
            if (!is_valid_tag(tag)) {
                const char bad = *std::find_if_not(tag.begin(), tag.end(), is_tag_character);
                return fail(what() + " '" + std::string(tag) + "' contains " + describe_byte(bad) +
                            "; tags are ASCII letters, digits and '_'");
            }
            std::string lowered = to_lower(tag);
            tags.push_back(std::move(lowered));
            if (dot == std::string_view::npos) return std::nullopt;
            start = dot + 1;
        }
    }

    std::string_view filename_;
};

}  // namespace

bool is_valid_tag(std::string_view tag) noexcept {
    return !tag.empty() && std::all_of(tag.begin(), tag.end(), is_tag_character);
}

bool is_valid_variant_label(std::string_view label) noexcept {
    return !label.empty() && std::all_of(label.begin(), label.end(), is_label_character);
}

result<wheel_filename> parse_wheel_filename(std::string_view filename) { return parser(filename).run(); }

}  // namespace wheelhouse::pep427
