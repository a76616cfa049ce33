#pragma once
// Imports a whole GitHub release: lists its assets through the REST API (every page) and
// registers each wheel and each sdist (by its PEP 625 name) with the registrar, GitHub's digest
// as its sha256 where there is one. Other assets (docs, checksums) are listed as skipped.
//
// Thread safety: as registrar; blocking.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "wheelhouse/remote/github_api.hpp"
#include "wheelhouse/remote/registrar.hpp"

namespace wheelhouse::remote {

struct import_request {
    repository_name repository;
    std::string tag;
    std::optional<catalog::download_mode> mode;
    bool verify = false;
    std::optional<std::string> actor;
    // Whether the caller may add the asset `filename` (its project, as distribution::file_name
    // reads it); an error rejects that asset.
    std::function<result<void>(std::string_view filename)> may_register;
    // Writes of the caller's in each commit that lists an asset (registration_request's).
    std::function<result<void>(sqlite::connection&)> in_same_commit;
};

struct import_report {
    std::int64_t release_id = 0;
    std::vector<registration_report> files;
    std::vector<std::string> skipped;  // asset names that are no wheel or sdist

    std::size_t count(registration_outcome outcome) const;
};

// An error only when the release cannot be listed (not_found, unavailable for the rate limit,
// upstream); each wheel's own failure is in its report.
result<import_report> import_release(github_api& github, registrar& registrar, const import_request& request);

}  // namespace wheelhouse::remote
