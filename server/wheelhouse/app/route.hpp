#pragma once
// What a route is: one row of the route table (route_table.cpp), declared as data: its methods
// and path, the access it needs and how its project is found, who reads its answers, how its body
// is read, where it runs, what /metrics counts it under, and the handler. The dispatcher
// (application.cpp) decides from the row alone, and hands the handler the rest in route_request:
// the path's captures, the caller's grant, the upload's sink, and refuse() and busy() in the
// row's words. So a route cannot be declared without its access rule, and no handler checks a
// token, picks an audience or re-reads the path of its own.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/catalog/project_filter.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/metrics/route.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

struct route_context;

// The methods a route answers, as a set; the 405's Allow lists them in this order.
enum method_bit : unsigned {
    GET = 1u << 0,
    HEAD = 1u << 1,
    POST = 1u << 2,
    PUT = 1u << 3,
    DELETE = 1u << 4,
};
using method_set = unsigned;
inline constexpr method_set get_head = GET | HEAD;
// The bit of `method`; 0 for methods no route declares.
method_set bit_of(http::verb method) noexcept;
// "GET, HEAD, POST": the Allow header's value.
std::string allow_header(method_set methods);

// Who may call the route.
enum class access {
    anyone,  // holds no data: the admin page's files, /healthz
    read,    // the index's contents: open, unless the server runs --private (then any token's scope)
    upload,  // publishing files: upload or admin scope
    admin,   // curation and tokens: admin scope
};

// Which project the caller's token must cover, for tokens limited to some projects.
enum class project_scope {
    none,     // no project's data (a redirect, liveness, the page's files): any token will do
    project,  // the {project} capture, normalised as PEP 503 says
    file,     // the project the {filename} capture names (distribution::parse_file_name: a wheel, an
              // sdist, the .metadata of either, a release's variants.json)
    listing,  // a list of projects: shown filtered to the token's projects (route_request::visible)
    index,    // the whole index (tokens, the audit log, metrics): a limited token is refused
    body,     // named in the body (an upload form, a registration): the handler asks
              // may_act_on_file() of the file's name, or may_act_on() of a project (route_access.hpp)
};

// Who calls the route, which decides how its refusals read.
enum class audience {
    // pip, uv, twine, curl: text (JSON when asked for), and a 401 says Basic, the one scheme pip
    // and twine answer by sending the credentials of their index URL or -u.
    package_tools,
    // The admin page and scripts: always JSON {"error": …}, and a 401 says Bearer, since a Basic
    // challenge makes a browser open its own password dialog over the page.
    json_api,
    // CI jobs exchanging identity tokens (the PyPA action, uv, PEP 807 clients): PyPI's error
    // shape, {"message", "errors": [{"code", "description"}]}, which their scripts read.
    trusted_publishing,
};

// How the body that follows the headers is read.
enum class body_kind {
    none,         // none expected (a stray one is read up to a small limit and dropped)
    json,         // a JSON object held in memory, at most json_body_limit bytes
    raw_upload,   // the file itself (curl -T), streamed to a spool file as it arrives (plan_upload)
    form_upload,  // twine's form (curl -F): its `content` part streamed to a spool file, its fields kept
};
inline constexpr std::uint64_t json_body_limit = 64 * 1024;

// Where the handler runs. Reads and writes have pools of their own, so a burst of admin reads
// never takes the threads uploads need, and a queue of uploads never delays a read.
enum class lane {
    io_thread,   // inline on the connection's I/O thread: cached pages (a miss goes to the read
                 // pool), static files, liveness
    read_pool,   // queries, sorts, METADATA files from disk
    write_pool,  // catalog writes: curation, tokens, publishers
    ingest,      // uploads: the write pool too, in arrival order with the other writes, announced to
                 // the group commit as they queue (ingester::expect); a full queue is refused in the
                 // ingest's own words and counted as a busy ingest
    outbound,    // work that waits on other hosts (registrations, issuers' keys): a pool and a bound
                 // of its own, so a slow or silent host never holds a thread uploads need
};

// Each capture's name and where it begins among the target's segments: a route has at most a
// few, kept in place (a download's two would otherwise cost two allocations a request).
using route_captures = boost::container::small_vector<std::pair<std::string_view, std::size_t>, 3>;

struct route_request;
class upload_sink;
// A handler answers with a response, or nullopt when it has kept request.respond to answer
// later (a proxied download). Whatever it throws ends only its own connection.
using route_answer = std::optional<transport::outgoing_response>;
using route_handler = route_answer (*)(route_context& context, route_request& request);

struct route {
    method_set methods = 0;
    // "/api/v1/files/{filename}/yank[/]": literal segments, {name} captures one non-empty
    // segment, {name}.suffix one that ends in ".suffix" and holds more than it (captured whole,
    // suffix included), {name...} the rest of the path (one or more segments); a final "/" must
    // be there, a final "[/]" may be. Handlers read captures, never the target's segments.
    std::string_view pattern;
    access needs = access::read;
    project_scope scope = project_scope::none;
    // What a refusal names, as the subject of "need": "yanks" -> "yanks need an API token: …".
    std::string_view action;
    audience answers = audience::package_tools;
    body_kind body = body_kind::none;
    lane runs_on = lane::io_thread;
    // What /metrics counts its requests under, whatever the answer (a 405 on its path too).
    metrics::route label = metrics::route::other;
    route_handler handler = nullptr;
};

// One request on its way through a route: what the dispatcher found from its headers, then the
// whole request. Thread safety: used by one thread at a time (plan_body, then the handler).
struct route_request {
    const route* matched = nullptr;
    http_target::request_target target;  // parsed once, in plan_body
    transport::incoming_request incoming;  // set before the handler runs
    std::optional<auth::token_grant> grant;  // the caller's, when the route asked for one
    std::string project;                     // the normalised project the grant was checked for
    catalog::project_filter visible;         // for project_scope::listing: what the caller may see
    transport::responder respond;            // answers at most once; for handlers that answer later
    std::chrono::steady_clock::time_point queued_at;  // when the dispatcher gave it to its lane
    // For the upload body kinds: where the body went (the spool file, and a form's fields), the
    // sink's one owner once the handler runs (dropping it removes the spool file). Until then the
    // session owns it, so a body the session refuses takes its spool file with it at once.
    std::shared_ptr<upload_sink> upload;
    std::weak_ptr<upload_sink> planned_upload;  // set by plan_upload

    // The request's headers: plan_body's, while it plans (refusals from the headers answer in
    // their terms: HEAD, Accept, keep-alive), then the whole request's.
    const http::request_header<>& header() const noexcept { return planned != nullptr ? *planned : incoming.header; }
    const http::request_header<>* planned = nullptr;  // set during plan_body only
    // The capture `name` of the route's pattern ("" when it has none); for {name...}, its first segment.
    std::string_view capture(std::string_view name) const noexcept;
    // For {name...}: every segment it took, in order (empty when the pattern has no such capture).
    std::span<const std::string> capture_rest(std::string_view name) const noexcept;
    // The one way a handler refuses: `failure` in the words of the row's audience (JSON for the
    // API, PyPI's shapes for trusted publishing, text for tools and pip), with `extra` headers.
    transport::outgoing_response refuse(const error& failure, http::fields extra = {}) const;
    // 503 for a full queue of `runs_on`, in the row's audience. The dispatcher answers so for the
    // row's own lane; a handler, for work it hands to another (a page miss to the read pool, an
    // upstream fetch to the outbound lane): whether it does depends on what it finds (a cached
    // page needs neither), so that lane is the handler's to name, the words never.
    transport::outgoing_response busy(lane runs_on) const;

    // Where each capture begins among target.segments (set by the router).
    route_captures captures;
};

}  // namespace wheelhouse::app
