#pragma once
// The one vocabulary of the files the index serves and takes: a wheel (PEP 427), an sdist
// (PEP 625), the core metadata of either (PEP 658, "<file>.metadata") and a release's PEP 825
// variants.json. Each names the project it belongs to. Routes, access checks, uploads,
// registrations, curation and downloads all ask here, so no path can read a name one way and
// check it another; a name that parses as none of these names no project, and an access check
// for a token limited to some projects then refuses (it fails closed). Pure functions.

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::distribution {

// A wheel or an sdist: what an upload or a registration may be, and what a file row holds.
using archive_name = std::variant<pep427::wheel_filename, pep625::sdist_filename>;

// PEP 825's "{name}-{version}-variants.json", which the index writes for a release of variant
// wheels (pep825::release_variants_filename).
struct release_variants_name {
    std::string filename;         // as given
    std::string normalized_name;  // PEP 503
    std::string version_text;     // as written
    pep440::version version;
};

enum class file_kind {
    wheel,
    sdist,
    wheel_metadata,    // "<wheel>.metadata"
    sdist_metadata,    // "<sdist>.metadata"
    release_variants,  // "{name}-{version}-variants.json"
};

struct file_name {
    file_kind kind = file_kind::wheel;
    std::variant<pep427::wheel_filename, pep625::sdist_filename, release_variants_name> parsed;

    // The PEP 503 name of the project the file belongs to; never empty.
    const std::string& project() const noexcept;
    // The name a catalog row holds: the archive's for it and its .metadata, else the name given.
    const std::string& row_filename() const noexcept;
    bool is_metadata() const noexcept { return kind == file_kind::wheel_metadata || kind == file_kind::sdist_metadata; }
};

// The catalog row a download's name asks for, told by its suffixes alone: the archive's name and
// whether its .metadata is meant; nullopt for a release's variants.json, which no row holds. For a
// name a row holds this says what parse_file_name would (that name was parsed when its file came
// in), so a download need not parse it again; any other name must still be parsed.
struct row_request {
    std::string_view row_filename;
    bool metadata = false;
};
std::optional<row_request> row_requested(std::string_view filename) noexcept;

// Parses a wheel or sdist filename. An archive extension other than ".tar.gz" is refused as an
// sdist's; any other name is judged as a wheel's, whose refusal names both extensions.
result<archive_name> parse_archive_name(std::string_view filename);
const std::string& project_of(const archive_name& name) noexcept;

// Parses any name the index serves under /files/<sha256>/. Refusals are `invalid` and say which
// kinds of name there are.
result<file_name> parse_file_name(std::string_view filename);

// "wheel", "sdist", "wheel metadata", "sdist metadata", "release variants.json".
std::string_view describe(file_kind kind) noexcept;

}  // namespace wheelhouse::distribution
