#pragma once
// Which projects a list shows a caller: every one, or those a project-limited token covers.
// Every list of projects (the /simple/ index, the admin catalog's list and search) filters in
// its query through this one type, so no handler can forget it.

#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::catalog {

struct project_filter {
    // PEP 503-normalised names or globs ('*' any run, '?' one character), as a token's project
    // limits are stored (auth::token_grant::project_patterns). Empty: every project.
    std::vector<std::string> patterns;

    bool shows_every_project() const noexcept { return patterns.empty(); }
};

// The SQL condition "the project named by `name_column` passes the filter bound at parameter
// `parameter`", e.g. visible_project_condition("p.name", 4). Built from constants only; the
// patterns enter through bind_project_filter. SQLite's GLOB means what auth::glob_match means
// for normalised names and patterns, which hold no '[' (auth::normalize_project_pattern).
std::string visible_project_condition(std::string_view name_column, int parameter);

// Binds the filter at `parameter`: NULL for every project, else a JSON array of its patterns.
void bind_project_filter(sqlite::statement& statement, int parameter, const project_filter& filter);

}  // namespace wheelhouse::catalog
