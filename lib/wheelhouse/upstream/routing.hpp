#pragma once
// Which upstream index serves which name, on which of this index's indexes, and which names no
// upstream ever serves (owned ones). Pure: the settings' text in, decisions out.
//
// An upstream is "NAME=URL". A route is "INDEX: PROJECT… = UPSTREAM": INDEX is "*" (every
// index), "simple" (the root /simple/ only) or a variant selector, which takes every variant
// index whose selector names all of its words ("cu128" takes "cu128-torch2.8-sm90"); each
// PROJECT a name or a glob, PEP 503-normalised. Routes are tried in order; a name no route takes
// comes from the first upstream.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::upstream {

struct upstream_index {
    std::string name;  // lower-case letters, digits and '-': how routes, logs and headers name it
    std::string url;   // "https://pypi.org/simple/": a project's page is url + "<project>/"
};

struct route {
    enum class indexes { every, root, variants };
    indexes applies_to = indexes::every;
    std::vector<std::string> selector_words;  // indexes::variants: canonical words a selector must all name
    std::vector<std::string> patterns;        // normalised names or globs (auth::glob_match)
    std::string upstream;                     // an upstream_index's name
    std::string text;                         // as written, for messages
};

// "pypi=https://pypi.org/simple/" (a final '/' is added when missing). https only; no
// credentials, query or fragment.
result<upstream_index> parse_upstream(std::string_view text);

// "cu128: torch torchvision triton = pytorch-cu128"; projects are separated by blanks or commas.
result<route> parse_route(std::string_view text);

class routing {
public:
    routing() = default;
    // Every route must name one of `upstreams`, whose names must differ.
    static result<routing> make(std::vector<upstream_index> upstreams, std::vector<route> routes);

    bool empty() const noexcept { return upstreams_.empty(); }
    const std::vector<upstream_index>& upstreams() const noexcept { return upstreams_; }
    const std::vector<route>& routes() const noexcept { return routes_; }
    const upstream_index* find(std::string_view name) const noexcept;

    // The upstream for `project` (normalised) on the index of `selector`: "" for /simple/, else
    // a canonical selector. Null when no upstream is configured.
    const upstream_index* upstream_for(std::string_view selector, std::string_view project) const;

    // Every upstream some index takes `project` from, first-configured first, each once: where a
    // file of it linked from any page may come from.
    std::vector<const upstream_index*> upstreams_for(std::string_view project) const;

private:
    std::vector<upstream_index> upstreams_;
    std::vector<route> routes_;
};

// The URL of `project`'s page at `upstream`.
std::string page_url(const upstream_index& upstream, std::string_view project);

// Where a name's pages and files come from.
enum class name_source {
    local,     // the catalog has the project: this index alone
    reserved,  // owned before its first upload: this index alone, which has nothing yet
    upstream,  // the upstream routing gives
    nowhere,   // not here, and no upstream is configured
};

// `known_locally`: the catalog has the project. `reserved`: normalised patterns (as
// auth::normalize_project_pattern makes them), matched as token scopes are.
name_source source_of(std::string_view project, bool known_locally, std::span<const std::string> reserved,
                      bool has_upstream) noexcept;

// Whether one of `patterns` covers `project` (both normalised).
bool is_reserved(std::span<const std::string> patterns, std::string_view project) noexcept;

}  // namespace wheelhouse::upstream
