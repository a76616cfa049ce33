#pragma once
// The rows of the catalog as the rest of the program sees them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/variants/build_variant.hpp"

namespace wheelhouse::catalog {

// PEP 792 project status.
enum class project_status { active, archived, quarantined, deprecated };

// Where a file's bytes are served from.
enum class download_mode {
    local,     // our blob store
    redirect,  // 302 to remote_url
    proxy,     // streamed from remote_url
    cache,     // streamed from remote_url once, then kept in the blob store
};

// What kind of distribution a file is, by the names twine's form and Warehouse's JSON use.
enum class package_type {
    wheel,  // "bdist_wheel"
    sdist,  // "sdist": a PEP 625 .tar.gz, with no wheel tags and no variant
};

struct project_record {
    std::int64_t id = 0;
    std::string name;          // PEP 503 normalised: the key
    std::string display_name;  // as its METADATA spells it
    project_status status = project_status::active;
    std::optional<std::string> status_reason;
};

struct file_record {
    std::int64_t id = 0;
    std::string project;             // normalised project name
    std::string filename;
    std::string version;             // as written in the filename
    std::string normalized_version;  // PEP 440 normalised, local label included
    std::string local_label;         // normalised, without '+'; empty when none
    std::string python_tag;          // as written, compressed sets kept: "py2.py3"; "" for an sdist
    std::string abi_tag;
    std::string platform_tag;
    std::optional<std::string> build_tag;
    variants::build_variant variant;
    std::string sha256;              // lower-case hex of the whole wheel
    std::uint64_t size = 0;
    std::optional<std::string> requires_python;
    std::optional<std::string> summary;
    std::int64_t upload_time_ms = 0;        // Unix time in milliseconds, UTC
    std::optional<std::string> yanked_reason;  // set (possibly empty) when yanked
    download_mode mode = download_mode::local;
    std::optional<std::string> remote_url;
    std::string metadata_sha256;     // of the METADATA bytes served at <file>.metadata (PEP 658)
    std::uint64_t metadata_size = 0;  // bytes of <file>.metadata; 0 with an empty metadata_sha256 (not known)
    std::optional<std::string> uploaded_by;  // token name, or "cli" for local ingest
    // Where proxy and cache modes fetch the bytes when not from remote_url: a private
    // repository's asset through GitHub's API, asked with the configured token (never stored).
    std::optional<std::string> fetch_url;
    // PEP 825: the filename's variant label ("null" for the null variant); nullopt otherwise.
    std::optional<std::string> variant_label;
    // The label's properties, parsed once at ingest and kept as variant_properties rows, read
    // back with the file row; empty for the null variant and without a label.
    pep825::variant_properties variant_properties;
    std::string variant_namespaces;  // its variant.json's default-priorities.namespace, JSON; "" without a label
    package_type type = package_type::wheel;
    // PEP 740: uploaded with attestations that verified; its provenance is served from the
    // integrity API (catalog::provenance_of).
    bool attested = false;

    bool yanked() const noexcept { return yanked_reason.has_value(); }
};

// PEP 825: one property of a variant wheel, one row of variant_properties (the file's id is the
// rest of the key): how the catalog keeps a label's properties without JSON to parse on a read.
struct variant_property {
    std::string space;  // the namespace
    std::string feature;
    std::string value;
};

// PEP 825: the {name}-{version}-variants.json of a release with variant wheels, generated from
// their rows (catalog/release_variants.hpp).
struct release_variants_file {
    std::string project;             // normalised project name
    std::string normalized_version;
    std::string filename;
    std::string content;
    std::string sha256;
    std::int64_t updated_ms = 0;
};

// The spellings the schema's CHECK constraints and the JSON API use.
std::string_view to_string(project_status status) noexcept;
std::optional<project_status> parse_project_status(std::string_view text) noexcept;
std::string_view to_string(download_mode mode) noexcept;
std::optional<download_mode> parse_download_mode(std::string_view text) noexcept;
std::string_view to_string(package_type type) noexcept;
std::optional<package_type> parse_package_type(std::string_view text) noexcept;

}  // namespace wheelhouse::catalog
