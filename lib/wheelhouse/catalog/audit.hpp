#pragma once
// The audit log: who changed what, and when. Written inside the transaction that makes the
// change, so the record and the change commit or roll back together.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"
#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::catalog {

// Unix time in milliseconds, as every *_ms column holds it.
std::int64_t now_ms();

result<void> write_audit(sqlite::connection& db, std::string_view actor, std::string_view action,
                         std::string_view target, const std::optional<std::string>& detail);

struct audit_entry {
    std::int64_t id = 0;
    std::int64_t time_ms = 0;
    std::string actor;
    std::string action;
    std::string target;
    std::optional<std::string> detail;
};

// Which entries to read: every filter given must hold; pages of `per_page`, newest first.
struct audit_query {
    std::optional<std::string> target;  // exactly this target (a filename, a project, a token)
    std::string actor;                  // exactly this actor; empty: anyone
    std::string action;                 // exactly this action ("yank"); empty: any
    std::string search;                 // anywhere in target or detail, any case: a file's short
                                        // hash ("3f2a1b9c") finds its add_file and delete_file
    std::int64_t page = 1;              // from 1
    std::int64_t per_page = 100;
};

struct audit_page {
    std::vector<audit_entry> entries;
    std::int64_t total = 0;            // entries the filters match, on every page
    std::vector<std::string> actions;  // every action the log holds, for a filter to offer
};

// invalid for a page below 1 or per_page below 1.
result<audit_page> read_audit(sqlite::connection& db, const audit_query& query);

}  // namespace wheelhouse::catalog
