#pragma once
// The JSON the admin catalog (static/) reads from /api/v1/: project lists, a project with its
// variant matrix, a file with its METADATA and downloads, tokens and the audit log. Pure: the
// same rows always give the same bytes. Times are ISO 8601 UTC (PEP 700's form) or null.

#include <chrono>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/catalog/audit.hpp"
#include "wheelhouse/catalog/download_counter.hpp"
#include "wheelhouse/catalog/project_search.hpp"
#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/oidc/publisher.hpp"
#include "wheelhouse/render/simple_pages.hpp"

namespace wheelhouse::render {

// {"query": "flash-attn", "sort": "name", "page": 1, "per_page": 50, "total": 1, "pages": 1,
//  "filters": {"cuda": "cu130", "torch": "torch2.10", "sm": null, "rocm": null, "python": "cp312",
//              "lacks": false},
//  "projects": [{"name", "display_name", "status", "latest_version", "file_count", "total_size",
//                "last_upload"}]}. "query" is the search as it was matched (normalised); each filter
// in its canonical word, null when not given.
std::string project_list_json(const catalog::project_page& page, const catalog::project_query& query);

// {"cuda": ["cu12", "cu128", "cu130"], "torch": ["torch2.8", "torch2.10"], "sm": ["sm89", "sm120"],
//  "rocm": ["rocm6.4"], "python": ["cp39", "cp312", "cp314t"]}, each in natural order.
std::string build_words_json(const catalog::build_words& words);

// variant_matrix_json's object (versions newest first, each build with its variant and
// selectors), plus "status_reason", "summary" and "requires_python" of the newest release's
// METADATA, "latest_version", "file_count", "total_size" and "last_upload".
std::string project_detail_json(const catalog::project_record& project, std::span<const catalog::file_record> files,
                                const link_options& links);

struct file_detail {
    catalog::file_record file;
    catalog::project_record project;
    std::optional<std::string> metadata_text;  // the METADATA bytes as stored; absent when not kept
    std::vector<catalog::daily_downloads> downloads;
    std::vector<catalog::audit_entry> history;  // the audit entries about this file, newest first
};

// {"filename", "project", "display_name", "project_status", "version", "normalized_version",
//  "python_tag", "abi_tag", "platform_tag", "build_tag", "variant", "pep825" (render::pep825_json), "sha256", "size",
//  "upload_time", "uploaded_by", "yanked" (false or the reason), "requires_python", "summary",
//  "location": {"mode", "url", "remote_url", "fetch_url"}, "metadata": {"sha256", "size", "text"},
//  "downloads": {"total", "days": [{"day", "count"}]}, "history": [audit entries]}.
// METADATA bytes that are not UTF-8 are shown with U+FFFD in their place.
std::string file_detail_json(const file_detail& detail, const link_options& links);

// {"name", "scope", "projects": ["*"] or patterns, "created", "expires", "revoked", "last_used",
//  "usable", "builds": null or [{"project", "labels"}], "publisher": null or the trusted
//  publisher's id} (usable: neither revoked nor expired at `now_ms`).
boost::json::object token_json(const auth::token_record& token, std::int64_t now_ms);
std::string token_list_json(std::span<const auth::token_record> tokens, std::int64_t now_ms);

// A trusted publisher as the admin page and scripts read it, and a project's list of them with
// the audience its CI must request tokens for and how long a minted token lives.
boost::json::object publisher_json(const oidc::publisher& who);
std::string publisher_list_json(std::string_view project, std::string_view audience, std::chrono::seconds token_lifetime,
                                std::span<const oidc::publisher> publishers);

// {"page": 1, "per_page": 50, "total": 61, "pages": 2, "actions": ["add_file", "yank", ...],
//  "entries": [{"id", "time", "actor", "action", "target", "detail"}]}
boost::json::object audit_entry_json(const catalog::audit_entry& entry);
std::string audit_json(const catalog::audit_page& page, const catalog::audit_query& query);

}  // namespace wheelhouse::render
