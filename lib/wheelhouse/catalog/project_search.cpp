#include "wheelhouse/catalog/project_search.hpp"

#include <algorithm>
#include <array>
#include <unordered_map>
#include <unordered_set>

#include <boost/json.hpp>

#include "wheelhouse/catalog/row_columns.hpp"
#include "wheelhouse/pep440/version.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/catalog/variant_view.hpp"
#include "wheelhouse/sqlite/statement.hpp"

namespace wheelhouse::catalog {
namespace {

// A project row (row_columns.hpp), then its three figures from project_row_width on. The
// figures are correlated subqueries over files_by_project, so the name order walks the
// projects' name index and touches only the files of the rows it returns.
const std::string project_summaries =
    "SELECT " + project_row_columns() + ", "
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

// The projects a build filter keeps: those of the bound JSON array of ids, or all but those.
std::string builds_condition(const build_filter& builds, int parameter) {
    if (!builds.active()) return {};
    return std::string(builds.lacks ? " AND p.id NOT IN" : " AND p.id IN") + " (SELECT value FROM json_each(?" +
           std::to_string(parameter) + "))";
}

// The columns of a file that a build filter reads, for every file of the visible projects,
// after its project's id.
constexpr auto build_columns = sqlite::pick(file_columns, {"cuda", "sm", "torch", "torch_and_higher", "cxx11abi",
                                                           "rocm", "cpu", "xpu", "python_tag", "abi_tag",
                                                           "packagetype"});
constexpr int first_build_column = 1;
constexpr int build_columns_end = first_build_column + static_cast<int>(build_columns.size());
const std::string select_builds = "SELECT f.project_id, " + sqlite::column_list(build_columns, "f.") +
                                  " FROM files f JOIN projects p ON p.id = f.project_id WHERE ";

struct build_shape {
    variants::build_variant variant;
    std::string python_tags;
    std::string abi_tags;
    package_type kind = package_type::wheel;
};

build_shape shape_of(const sqlite::statement& row) {
    file_record file;
    sqlite::read_columns(row, first_build_column, build_columns, file);
    return {std::move(file.variant), std::move(file.python_tag), std::move(file.abi_tag), file.type};
}

// The row's shape columns as one key: builds repeat a few shapes many times over.
std::string shape_key(const sqlite::statement& row) {
    std::string key;
    for (int column = first_build_column; column < build_columns_end; ++column) {
        key += row.column_is_null(column) ? std::string("\x1e") : row.column_text(column);
        key += '\x1f';
    }
    return key;
}

// Calls visit(project_id, key, row) for every file of the visible projects, in one read.
template <class Visit>
result<void> for_each_build(sqlite::connection& db, const project_filter& visible, Visit&& visit) {
    auto rows = db.cached(select_builds + visible_project_condition("p.name", 1));
    if (!rows) return rows.error();
    bind_project_filter(**rows, 1, visible);
    for (;;) {
        auto row = (*rows)->step();
        if (!row) return row.error();
        if (!*row) return {};
        visit(**rows);
    }
}

bool made_for(const build_shape& shape, const build_filter& builds) {
    if (builds.kind && shape.kind != *builds.kind) return false;
    if (variants::speaks_to_machine(builds.wanted.constraints) && !variants::made_for(shape.variant, builds.wanted))
        return false;
    return !builds.python || installs_on_python(shape.python_tags, shape.abi_tags, *builds.python);
}

// The ids of the visible projects with a build the filter asks for, as a JSON array.
result<std::string> projects_with_builds(sqlite::connection& db, const project_filter& visible,
                                         const build_filter& builds) {
    std::unordered_map<std::string, bool> verdicts;  // by shape_key
    std::unordered_set<std::int64_t> found;
    auto read = for_each_build(db, visible, [&](const sqlite::statement& row) {
        const auto project = row.column_int64(0);
        if (found.count(project)) return;
        auto [verdict, fresh] = verdicts.try_emplace(shape_key(row), false);
        if (fresh) verdict->second = made_for(shape_of(row), builds);
        if (verdict->second) found.insert(project);
    });
    if (!read) return read.error();
    boost::json::array ids;
    for (const auto id : found) ids.emplace_back(id);
    return boost::json::serialize(ids);
}

struct interpreter {
    unsigned major = 0, minor = 0;
    bool free_threaded = false;
};

// "cp312" -> 3.12, "cp314t" -> 3.14 free-threaded, "py3" -> 3 (minor 0: any 3.x); else nothing.
std::optional<interpreter> interpreter_of(std::string_view tag, std::string_view prefix) {
    if (!tag.starts_with(prefix)) return std::nullopt;
    tag.remove_prefix(prefix.size());
    interpreter out;
    if (!tag.empty() && tag.back() == 't') {
        out.free_threaded = true;
        tag.remove_suffix(1);
    }
    if (tag.empty() || tag.size() > 3 || tag.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
    out.major = static_cast<unsigned>(tag[0] - '0');
    for (char c : tag.substr(1)) out.minor = out.minor * 10 + static_cast<unsigned>(c - '0');
    return out;
}

// Each part of a compressed tag set ("cp311.cp312", separator '.') or an arch list ("8.0,9.0a").
template <class Each>
void for_each_part(std::string_view text, char separator, Each&& each) {
    while (true) {
        const auto at = text.find(separator);
        each(text.substr(0, at));
        if (at == std::string_view::npos) return;
        text.remove_prefix(at + 1);
    }
}

// A filter word for one axis: as given, or the bare version with the axis's prefix.
result<std::string> axis_word(std::string_view given, std::string_view parameter, std::string_view prefix,
                              std::optional<std::string> variants::build_variant::*axis, std::string_view example) {
    std::string word(given);
    if (word.front() >= '0' && word.front() <= '9') word.insert(0, prefix);
    auto parsed = variants::parse_selector(word);
    if (parsed) {
        auto rest = parsed->constraints;
        (rest.*axis).reset();
        if ((parsed->constraints.*axis) && !variants::speaks_to_machine(rest)) return parsed->canonical();
    }
    return invalid(std::string(parameter) + " '" + std::string(given) + "' is not one " + std::string(parameter) +
                   " word; give one such as " + std::string(example));
}

}  // namespace

result<build_filter> parse_build_filter(const build_filter_text& text) {
    using variants::build_variant;
    struct axis {
        std::string_view given, parameter, prefix;
        std::optional<std::string> build_variant::*field;
        std::string_view example;
    };
    const axis axes[] = {
        {text.cuda, "cuda", "cu", &build_variant::cuda, "cu130, cu12 or 13.0"},
        {text.rocm, "rocm", "rocm", &build_variant::rocm, "rocm6.4 or 6.4"},
        {text.torch, "torch", "torch", &build_variant::torch, "torch2.10 or 2.10"},
        {text.sm, "sm", "sm", &build_variant::sm, "sm120, sm89 or 8.9"},
    };
    std::string words;
    for (const auto& one : axes) {
        if (one.given.empty()) continue;
        auto word = axis_word(one.given, one.parameter, one.prefix, one.field, one.example);
        if (!word) return word.error();
        words += (words.empty() ? "" : "-") + *word;
    }
    build_filter out;
    out.lacks = text.lacks;
    if (!words.empty()) {
        auto wanted = variants::parse_selector(words);
        if (!wanted) return invalid("the filters contradict each other: " + wanted.error().message);
        out.wanted = std::move(*wanted);
        // A filter asks for a torch family ("torch2.10" for 2.10.0 too), as the matrix heads it.
        auto& torch = out.wanted.constraints.torch;
        if (torch) torch = torch_family(*torch);
    }
    if (!text.python.empty()) {
        std::string python(text.python);
        if (python.front() >= '0' && python.front() <= '9') {  // "3.12", "3.14t"
            python.erase(std::remove(python.begin(), python.end(), '.'), python.end());
            python.insert(0, "cp");
        }
        if (!interpreter_of(python, "cp") || python.size() < 4)  // "cp3" names no interpreter
            return invalid("python '" + std::string(text.python) + "' is not an interpreter; give one such as cp312, cp314t or 3.12");
        out.python = std::move(python);
    }
    if (!text.kind.empty()) {
        if (text.kind == "sdist") out.kind = package_type::sdist;
        else if (text.kind == "wheel" || text.kind == "bdist_wheel") out.kind = package_type::wheel;
        else return invalid("kind '" + std::string(text.kind) + "' is no kind of file; give wheel or sdist");
        if (out.kind == package_type::sdist && (variants::speaks_to_machine(out.wanted.constraints) || out.python))
            return invalid("kind=sdist stands alone: an sdist is built for no CUDA, torch, GPU, ROCm or Python");
    }
    if (out.lacks && !out.active())
        return invalid("lacks needs something to lack: give cuda, torch, sm, rocm, python or kind beside it");
    return out;
}

bool installs_on_python(std::string_view python_tags, std::string_view abi_tags, std::string_view wanted) {
    const auto target = interpreter_of(wanted, "cp");
    if (!target) return false;
    bool installs = false;
    for_each_part(python_tags, '.', [&](std::string_view python_tag) {
        for_each_part(abi_tags, '.', [&](std::string_view abi_tag) {
            if (installs) return;
            if (const auto pure = interpreter_of(python_tag, "py"); pure && abi_tag == "none") {
                // "py3" any 3.x; "py312" 3.12 alone.
                installs = pure->major == target->major && (pure->minor == 0 || pure->minor == target->minor);
                return;
            }
            const auto built = interpreter_of(python_tag, "cp");
            if (!built || built->free_threaded || built->major != target->major) return;
            if (abi_tag == "abi3") {
                installs = !target->free_threaded && built->minor <= target->minor;
                return;
            }
            const auto abi = interpreter_of(abi_tag, "cp");
            const bool free_threaded_abi = abi && abi->free_threaded;
            installs = built->minor == target->minor && free_threaded_abi == target->free_threaded &&
                       (abi_tag == "none" || abi);
        });
    });
    return installs;
}

result<build_words> words_of_builds(const catalog& catalog, const project_filter& visible) {
    build_words words;
    auto read = catalog.read_snapshot([&](sqlite::connection& db) -> result<void> {
        std::unordered_set<std::string> seen;
        return for_each_build(db, visible, [&](const sqlite::statement& row) {
            if (!seen.insert(shape_key(row)).second) return;
            const auto shape = shape_of(row);
            words.kind.insert(shape.kind == package_type::sdist ? "sdist" : "wheel");
            const auto& variant = shape.variant;
            if (variant.cuda) words.cuda.insert(variants::cuda_word(*variant.cuda));
            if (variant.rocm) words.rocm.insert("rocm" + *variant.rocm);
            if (variant.torch) words.torch.insert("torch" + torch_family(*variant.torch));
            if (variant.sm) {
                for_each_part(*variant.sm, ',', [&](std::string_view arch) {
                    // The GPU that runs it: sm90 for sm90a and sm100f (a filter word is a GPU).
                    if (!arch.empty() && (arch.back() == 'a' || arch.back() == 'f')) arch.remove_suffix(1);
                    words.sm.insert(variants::sm_word(arch));
                });
            }
            for_each_part(shape.python_tags, '.', [&](std::string_view python_tag) {
                for_each_part(shape.abi_tags, '.', [&](std::string_view abi_tag) {
                    const auto abi = interpreter_of(abi_tag, "cp");
                    if (abi && abi->free_threaded) words.python.insert(std::string(abi_tag));
                    else if (interpreter_of(python_tag, "cp")) words.python.insert(std::string(python_tag));
                });
            });
        });
    });
    if (!read) return read.error();
    return words;
}

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
        folded.push_back(text::to_lower(c));
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
        std::string with_builds;
        if (query.builds.active()) {
            auto found = projects_with_builds(db, query.visible, query.builds);
            if (!found) return found.error();
            with_builds = std::move(*found);
        }
        {
            auto count = db.cached("SELECT count(*) FROM projects p WHERE instr(p.name, ?1) > 0 AND " +
                                   visible_project_condition("p.name", 2) + builds_condition(query.builds, 3));
            if (!count) return count.error();
            (*count)->bind_text(1, search);
            bind_project_filter(**count, 2, query.visible);
            if (query.builds.active()) (*count)->bind_text(3, with_builds);
            auto row = (*count)->step();
            if (!row) return row.error();
            page.total = *row ? (*count)->column_int64(0) : 0;
        }
        auto rows = db.cached(project_summaries + visible_project_condition("p.name", 4) +
                              builds_condition(query.builds, 5) +
                              std::string(page_orders[static_cast<std::size_t>(query.sort)]));
        if (!rows) return rows.error();
        (*rows)->bind_text(1, search).bind_int64(2, query.per_page).bind_int64(3, (query.page - 1) * query.per_page);
        bind_project_filter(**rows, 4, query.visible);
        if (query.builds.active()) (*rows)->bind_text(5, with_builds);
        for (;;) {
            auto row = (*rows)->step();
            if (!row) return row.error();
            if (!*row) break;
            const auto& statement = **rows;
            project_summary summary;
            summary.project = read_project_row(statement);
            summary.file_count = statement.column_int64(project_row_width);
            summary.total_size = static_cast<std::uint64_t>(statement.column_int64(project_row_width + 1));
            summary.last_upload_ms = statement.column_int64(project_row_width + 2);
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
