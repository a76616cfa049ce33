#include "wheelhouse/catalog/project_search.hpp"

#include <array>

#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::catalog {
namespace {

// The per-project figures are correlated subqueries over files_by_project, so the name order
// walks the projects' name index and touches only the files of the rows it returns.
constexpr std::string_view project_columns =
    "SELECT p.id, p.name, p.display_name, p.status, p.status_reason, "
    "(SELECT count(*) FROM files f WHERE f.project_id = p.id) AS file_count, "
    "(SELECT coalesce(sum(f.size), 0) FROM files f WHERE f.project_id = p.id) AS total_size, "
    "(SELECT coalesce(max(f.upload_time_ms), 0) FROM files f WHERE f.project_id = p.id) AS last_upload "
    "FROM projects p WHERE instr(p.name, ?1) > 0 AND ";

// Indexed by project_sort; the order is picked from this fixed list, never built from input.
constexpr std::array<std::string_view, 4> page_orders = {
    " ORDER BY p.name LIMIT ?2 OFFSET ?3",
    " ORDER BY last_upload DESC, p.name LIMIT ?2 OFFSET ?3",
    " ORDER BY file_count DESC, p.name LIMIT ?2 OFFSET ?3",
    " ORDER BY total_size DESC, p.name LIMIT ?2 OFFSET ?3",
};

bool is_separator(char c) noexcept { return c == '-' || c == '_' || c == '.' || c == ' ' || c == '\t'; }

}  // namespace

std::string_view to_string(project_sort sort) noexcept {
    switch (sort) {
        case project_sort::name: return "name";
        case project_sort::recent: return "recent";
        case project_sort::files: return "files";
        case project_sort::size: return "size";
    }
    return "name";
}

result<project_sort> parse_project_sort(std::string_view text) {
    for (const auto sort : {project_sort::name, project_sort::recent, project_sort::files, project_sort::size}) {
        if (text == to_string(sort)) return sort;
    }
    return invalid("sort '" + std::string(text) + "' is not one of name, recent, files, size");
}

std::string normalize_search(std::string_view typed) {
    std::string folded;
    bool pending_separator = false;
    for (const char c : typed) {
        if (is_separator(c)) {
            pending_separator = !folded.empty();
            continue;
        }
        if (pending_separator) folded.push_back('-');
        pending_separator = false;
        folded.push_back(c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
    }
    return folded;
}

std::string latest_release(const std::vector<version_seen>& versions) {
    std::optional<pep440::version> best;
    bool best_yanked = true;
    for (const auto& seen : versions) {
        auto parsed = pep440::parse(seen.normalized_version);
        if (!parsed) continue;  // ingest refuses such versions; an old row must not hide the rest
        // A release that is not yanked beats any yanked one; among equals, PEP 440 decides.
        const bool better = !best || (best_yanked && !seen.yanked) ||
                            (best_yanked == seen.yanked && pep440::compare(*parsed, *best) > 0);
        if (better) {
            best = std::move(*parsed);
            best_yanked = seen.yanked;
        }
    }
    return best ? best->public_string() : std::string();
}

result<project_page> search_projects(const catalog& catalog, const project_query& query) {
    if (query.page < 1) return invalid("page " + std::to_string(query.page) + " is before the first; pages start at 1");
    if (query.per_page < 1 || query.per_page > max_per_page) {
        return invalid("per_page " + std::to_string(query.per_page) + " is outside 1.." + std::to_string(max_per_page));
    }
    const auto search = normalize_search(query.search);
    project_page page;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        {
            static const std::string counted = "SELECT count(*) FROM projects WHERE instr(name, ?1) > 0 AND " +
                                               visible_project_condition("name", 2);
            auto count = db.cached(counted);
            if (!count) return count.error();
            (*count)->bind_text(1, search);
            bind_project_filter(**count, 2, query.visible);
            auto row = (*count)->step();
            if (!row) return row.error();
            page.total = *row ? (*count)->column_int64(0) : 0;
        }
        auto rows = db.cached(std::string(project_columns) + visible_project_condition("p.name", 4) +
                              std::string(page_orders[static_cast<std::size_t>(query.sort)]));
        if (!rows) return rows.error();
        (*rows)->bind_text(1, search).bind_int64(2, query.per_page).bind_int64(3, (query.page - 1) * query.per_page);
        bind_project_filter(**rows, 4, query.visible);
        for (;;) {
            auto row = (*rows)->step();
            if (!row) return row.error();
            if (!*row) break;
            const auto& statement = **rows;
            project_summary summary;
            summary.project.id = statement.column_int64(0);
            summary.project.name = statement.column_text(1);
            summary.project.display_name = statement.column_text(2);
            summary.project.status = parse_project_status(statement.column_text(3)).value_or(project_status::active);
            summary.project.status_reason = statement.column_optional_text(4);
            summary.file_count = statement.column_int64(5);
            summary.total_size = static_cast<std::uint64_t>(statement.column_int64(6));
            summary.last_upload_ms = statement.column_int64(7);
            page.projects.push_back(std::move(summary));
        }
        auto versions = db.cached(
            "SELECT normalized_version, min(yanked_reason IS NOT NULL) FROM files WHERE project_id = ?1 "
            "GROUP BY normalized_version");
        if (!versions) return versions.error();
        for (auto& summary : page.projects) {
            std::vector<version_seen> seen;
            (*versions)->bind_int64(1, summary.project.id);
            for (;;) {
                auto row = (*versions)->step();
                if (!row) return row.error();
                if (!*row) break;
                seen.push_back({(*versions)->column_text(0), (*versions)->column_bool(1)});
            }
            (*versions)->reset();
            summary.latest_version = latest_release(seen);
        }
        return {};
    });
    if (!read) return read.error();
    return page;
}

}  // namespace wheelhouse::catalog
