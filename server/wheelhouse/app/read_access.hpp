#pragma once
// Who may read an index configured as private. pip sends the credentials of its index URL
// (`http://__token__:<token>@HOST/simple/`) as HTTP Basic on every request to that host, so
// pages, files and the read API all check the same header.

#include <string>
#include <string_view>

#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::app {

// The project a read of `target` concerns, PEP 503-normalised: the project page
// (/simple/<p>/, /variants/<sel>/simple/<p>/, /api/v1/projects/<p>/…) or the file's project
// (/files/<sha256>/<filename>). Empty when the read spans projects (/simple/ itself).
std::string project_read_by(const http_target::request_target& target);

// Succeeds when the request presents a live token whose scope covers reading `project`
// (read, upload and admin all do; a token limited to projects reads only those, and not the
// list of every project). Errors are unauthorized (no or unknown credentials) or forbidden,
// with messages that say how to send a token. Thread safety: any thread.
result<void> check_read_access(const auth::token_store& tokens, const http::request_header<>& request,
                               std::string_view project);

}  // namespace wheelhouse::app
