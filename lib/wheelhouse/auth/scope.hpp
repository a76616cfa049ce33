#pragma once
// What a token may do: a scope, optionally limited to projects by name or glob.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::auth {

// Ordered: each scope includes the ones below it (admin can upload, upload can read).
enum class scope {
    read,    // download from an index configured as private
    upload,  // publish files
    admin,   // yank, delete, manage tokens and remote assets
};

std::string_view to_string(scope value) noexcept;

// "read", "upload" or "admin", as the CLI and the catalog spell them.
result<scope> parse_scope(std::string_view text);

// Which builds of a project a token may publish, by a glob over their labels (build_labels.hpp):
// what a trusted publisher with a label pattern grants the tokens it mints.
struct build_limit {
    std::string project;        // PEP 503-normalised
    std::string label_pattern;  // normalize_label_pattern's form: "cu130*"
};

struct token_grant {
    std::string name;    // the token's label, e.g. "ci-flash-attn"; safe to log
    scope granted = scope::read;
    // PEP 503-normalised names or globs ('*' any run, '?' one character), matched against
    // the normalised project name. Empty: every project.
    std::vector<std::string> project_patterns;
    // Empty: any build of those projects. Else a file is published only when some limit of its
    // project admits its labels (build_labels.hpp, permits_file).
    std::vector<build_limit> build_limits{};
    // The trusted publisher whose exchange minted the token (oidc/); nullopt for an API token.
    // Its PEP 740 attestations must be this publisher's (attest/provenance.hpp).
    std::optional<std::int64_t> publisher_id{};
};

// Checks and normalises a project pattern as `--project` gives it: letters, digits, '-',
// '_', '.', '*' and '?', lower-cased with separator runs folded to '-' exactly as PEP 503
// folds names ("Nunchaku_*" -> "nunchaku-*"), so a pattern means what the name would.
// A pattern without wildcards must be a valid project name, or it could never match.
result<std::string> normalize_project_pattern(std::string_view pattern);

// Shell-style matching of the whole `text` against `pattern`: '*' any run of characters
// (also one holding '*' or '?'), '?' any one character, everything else itself. Not
// fnmatch(3): no character classes or escapes (which would make '[' and '\' special in a
// pattern someone typed), no locale or flag differences between libcs. The pattern runs as a
// bit-parallel automaton over the text, so the time is linear in the text (one 64-bit word
// of states per 63 pattern characters) whatever the pattern, with no backtracking.
bool glob_match(std::string_view pattern, std::string_view text);

// Whether `grant` allows an action that needs `needed` on `project`, a name as a request
// gave it: it is normalised here (PEP 503) before it is matched, so "Flash_Attn" is
// "flash-attn". A grant limited to projects covers no string that is not a valid project
// name, and no empty project: pass one for an action on no single project (list tokens, the
// root /simple/ page), which could otherwise reach beyond its projects.
bool permits(const token_grant& grant, scope needed, std::string_view project);

}  // namespace wheelhouse::auth
