#pragma once
// The prefix file links start with, from the URL an index or export is served at: shared by
// `wheelhouse export --base-url` and `serve --public-url`, kept apart from the export so the
// settings (and their fuzz target) need nothing of the catalog.

#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::static_export {

// "https://host/path", "http://host:8080" or an absolute path "/", "/wheels": without query,
// fragment or credentials. Returns the URL with exactly one '/' at its end: the index's root as
// clients see it, where its redirects point. `invalid` says what is wrong.
result<std::string> root_for(std::string_view base_url);
// The prefix file links start with: root_for's answer, then "files/".
result<std::string> files_base_for(std::string_view base_url);

}  // namespace wheelhouse::static_export
