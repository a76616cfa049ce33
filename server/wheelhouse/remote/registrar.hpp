#pragma once
// Registers a wheel or sdist that stays where it is (a GitHub release asset). A wheel is not
// downloaded: Range requests for the zip's end, its central directory, WHEEL and METADATA,
// validated as an upload is; the SHA-256 from the request, GitHub's asset digest, or one
// streamed pass over the asset. An sdist (gzip, which has no end to seek to) is read once,
// whole, and validated as an upload is. Then the same catalog row an upload makes, served by
// redirect or proxy.
//
// Thread safety: register_asset() may run on several threads at once (client and ingester
// are safe so); it blocks: run it on the ingest workers or the command line.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/remote/github_api.hpp"
#include "wheelhouse/remote/http_client.hpp"

namespace wheelhouse::remote {

enum class registration_outcome { added, present, rejected };
std::string_view to_string(registration_outcome outcome) noexcept;

// Where a registration's sha256 came from.
enum class digest_source { none, request, github_api, computed };
std::string_view to_string(digest_source source) noexcept;

struct registration_request {
    std::string url;
    std::optional<std::string> sha256;  // hex, as the caller knows it
    digest_source sha256_source = digest_source::request;  // what `sha256` is, when set
    std::optional<catalog::download_mode> mode;  // default: the registrar's
    bool ask_github = true;  // look a release asset's digest up in GitHub's API when none is given
    bool verify = false;  // stream the whole asset and hold it to the digest even when one is known
    std::optional<std::string> actor;  // token name, or "cli"
    // Writes of the caller's in the commit that lists the file (ingest::ingest_options's).
    std::function<result<void>(sqlite::connection&)> in_same_commit;
    // Where the bytes are read from when `url` refuses them without credentials: a private
    // repository's asset through the API, with its token. Only the first host sees its
    // Authorization. Kept in the row (without the headers) for proxy and cache downloads only
    // when it was needed. Empty, with a GitHub token configured and `ask_github`, the registrar
    // asks the API for the asset's URL itself.
    std::string fetch_url;
    header_list fetch_headers;
};

struct registration_report {
    std::string url;
    std::string filename;
    registration_outcome outcome = registration_outcome::rejected;
    std::string sha256;
    digest_source sha256_source = digest_source::none;
    std::uint64_t size = 0;
    std::uint64_t bytes_transferred = 0;  // of the asset, over every request (redirect hops' bodies included)
    std::uint64_t requests = 0;
    catalog::download_mode mode = catalog::download_mode::redirect;
    std::optional<error> failure;  // set when rejected: what was wrong
    std::optional<catalog::file_record> file;  // the row, when added or present
};

struct registrar_settings {
    catalog::download_mode default_mode = catalog::download_mode::redirect;
    ingest::archive_limits limits;
    // The largest file the index takes (max-upload-size, as for uploads): a registration that
    // has to read a whole asset of unknown size stops past it.
    std::uint64_t max_file_bytes = 4ull << 30;
};

class registrar {
public:
    registrar(http_client& client, ingest::ingester& ingester, github_api& github, registrar_settings settings)
        : client_(client), ingester_(ingester), github_(github), settings_(std::move(settings)) {}

    // Never throws; a refusal is a report with outcome rejected and the error (invalid for a
    // bad URL, wheel or digest; conflict for a taken filename; upstream when the host failed).
    registration_report register_asset(const registration_request& request);

private:
    // The catalog row for a validated wheel or sdist whose sha256 and size `report` holds; its
    // bytes were read from `fetch_url` (empty: from request.url).
    template <class ArchiveName, class Validated>
    registration_report finish(registration_report report, const ArchiveName& name, const Validated& validated,
                               const registration_request& request, const std::string& fetch_url);

    http_client& client_;
    ingest::ingester& ingester_;
    github_api& github_;
    registrar_settings settings_;
};

}  // namespace wheelhouse::remote
