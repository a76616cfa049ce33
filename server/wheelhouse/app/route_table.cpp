#include "wheelhouse/app/route_table.hpp"

#include <array>

#include "wheelhouse/app/routes/admin_routes.hpp"
#include "wheelhouse/app/routes/api_routes.hpp"
#include "wheelhouse/app/routes/file_routes.hpp"
#include "wheelhouse/app/routes/metrics_route.hpp"
#include "wheelhouse/app/routes/oidc_routes.hpp"
#include "wheelhouse/app/routes/publisher_routes.hpp"
#include "wheelhouse/app/routes/remote_routes.hpp"
#include "wheelhouse/app/routes/simple_routes.hpp"
#include "wheelhouse/app/routes/static_routes.hpp"
#include "wheelhouse/app/routes/upload_routes.hpp"
#include "wheelhouse/app/routes/upstream_routes.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app {
namespace {

route_answer liveness(route_context&, route_request& request) {
    return transport::make_text_response(request.header(), http::status::ok, "serving");
}

// The subjects of refusals: "<action> need an API token: …".
constexpr std::string_view private_reads = "reads of this private index";
constexpr std::string_view uploads = "uploads";
constexpr std::string_view registrations = "registrations of remote files";
constexpr std::string_view tokens = "token lists and changes";
constexpr std::string_view publisher_changes = "trusted publisher lists and changes";

using enum access;
using enum body_kind;
using enum lane;
using scope = project_scope;
using label = metrics::route;
constexpr auto tools = audience::package_tools;
constexpr auto api = audience::json_api;
constexpr auto ci = audience::trusted_publishing;
constexpr auto raw = body_kind::raw_upload;
constexpr auto form = body_kind::form_upload;

// The order matters where two routes fit one path and method: the first one answers (so
// "/simple/" is the list, not a project page with an empty name, and a .metadata file's URL is
// the metadata row's). A page's {project...} takes the rest of the path, for the page's own 301s
// and 404s. The label is what /metrics counts a request under, refusals included.
// clang-format off
constexpr std::array routes{
    // methods      pattern                                     needs   scope           action                    audience body    runs on     label                      handler
    // The admin page and its files, which hold no data; liveness for load balancers; metrics.
    route{get_head,   "/",                                        anyone, scope::none,    "",                       tools,   none,   io_thread,  label::static_files,       static_file},
    route{get_head,   "/static/{path...}",                        anyone, scope::none,    "",                       tools,   none,   io_thread,  label::static_files,       static_file},
    route{get_head,   "/healthz",                                 anyone, scope::none,    "",                       tools,   none,   io_thread,  label::healthz,            liveness},
    route{get_head,   "/metrics",                                 read,   scope::index,   "metrics reads",          tools,   none,   read_pool,  label::metrics,            metrics_page},
    // pip and uv: the simple index, its variant indexes, the files. Inline: a page is a cache hit
    // (a miss renders on the read pool, once however many wait for it), a file one indexed lookup
    // before sendfile or a proxy thread takes over; METADATA, read from disk for every candidate
    // pip weighs, on the read pool.
    route{get_head,   "/simple[/]",                               read,   scope::listing, private_reads,            tools,   none,   io_thread,  label::simple_index,       simple_page},
    route{get_head,   "/simple/{project...}",                     read,   scope::project, private_reads,            tools,   none,   io_thread,  label::simple_project,     simple_page},
    route{get_head,   "/variants/{selector}[/]",                  read,   scope::none,    private_reads,            tools,   none,   io_thread,  label::variants,           variant_root},
    route{get_head,   "/variants/{selector}/simple[/]",           read,   scope::listing, private_reads,            tools,   none,   io_thread,  label::variants,           variant_page},
    route{get_head,   "/variants/{selector}/simple/{project...}", read,   scope::project, private_reads,            tools,   none,   io_thread,  label::variants,           variant_page},
    route{get_head,   "/files/{sha256}/{filename}.metadata",      read,   scope::file,    private_reads,            tools,   none,   read_pool,  label::metadata,           download_metadata},
    route{get_head,   "/files/{sha256}/{filename}",               read,   scope::file,    private_reads,            tools,   none,   io_thread,  label::files,              download_file},
    route{get_head,   "/integrity/{project}/{version}/{filename}/provenance", read, scope::file, private_reads,    tools,   none,   read_pool,  label::metadata,           file_provenance},
    // twine, curl -F and curl -T.
    route{POST,       "/legacy[/]",                               upload, scope::body,    uploads,                  tools,   form,   ingest,     label::upload,             ingest_upload},
    route{PUT,        "/api/v1/files/{filename}",                 upload, scope::file,    uploads,                  tools,   raw,    ingest,     label::upload,             ingest_upload},
    route{PUT,        "/api/v1/files[/]",                         upload, scope::none,    uploads,                  tools,   raw,    ingest,     label::upload,             ingest_upload},
    // The admin catalog's JSON, and scripts: reads that query, sort or read METADATA on the read
    // pool, changes on the write pool.
    route{get_head,   "/api/v1/projects[/]",                      read,   scope::listing, private_reads,            api,     none,   read_pool,  label::api,                admin::list_projects},
    route{get_head,   "/api/v1/variants[/]",                      read,   scope::listing, private_reads,            api,     none,   read_pool,  label::api,                admin::list_build_words},
    route{get_head,   "/api/v1/projects/{project}[/]",            read,   scope::project, private_reads,            api,     none,   read_pool,  label::api,                admin::project_detail},
    route{get_head,   "/api/v1/projects/{project}/variants[/]",   read,   scope::project, private_reads,            tools,   none,   read_pool,  label::api,                project_variants},
    route{PUT | POST, "/api/v1/projects/{project}/status[/]",     admin,  scope::project, "project status changes", api,     json,   write_pool, label::api,                admin::set_project_status},
    route{get_head,   "/api/v1/files/{filename}[/]",              read,   scope::file,    private_reads,            api,     none,   read_pool,  label::api,                admin::file_detail},
    route{DELETE,     "/api/v1/files/{filename}[/]",              admin,  scope::file,    "deletions",              api,     none,   write_pool, label::api,                admin::delete_file},
    route{POST,       "/api/v1/files/{filename}/yank[/]",         admin,  scope::file,    "yanks",                  api,     json,   write_pool, label::api,                admin::yank_file},
    route{POST,       "/api/v1/files/{filename}/unyank[/]",       admin,  scope::file,    "un-yanks",               api,     json,   write_pool, label::api,                admin::unyank_file},
    route{get_head,   "/api/v1/tokens[/]",                        admin,  scope::index,   tokens,                   api,     none,   read_pool,  label::api,                admin::list_tokens},
    route{POST,       "/api/v1/tokens[/]",                        admin,  scope::index,   tokens,                   api,     json,   write_pool, label::api,                admin::create_token},
    route{DELETE,     "/api/v1/tokens/{name}[/]",                 admin,  scope::index,   tokens,                   api,     none,   write_pool, label::api,                admin::revoke_token},
    route{get_head,   "/api/v1/upstream[/]",                      read,   scope::index,   private_reads,            api,     none,   read_pool,  label::api,                upstream_overview},
    route{get_head,   "/api/v1/audit[/]",                         admin,  scope::index,   "audit log reads",        api,     none,   read_pool,  label::api,                admin::read_audit},
    // Registrations fetch from release hosts (whole assets with "verify"): the outbound lane, so a
    // host that stalls holds none of the workers uploads and curation use.
    route{POST,       "/api/v1/remote[/]",                        upload, scope::body,    registrations,            api,     json,   outbound,   label::api,                registration::register_asset},
    route{POST,       "/api/v1/import/github[/]",                 upload, scope::body,    registrations,            api,     json,   outbound,   label::api,                registration::import_release},
    // Trusted publishing: a project's publishers; CI trades an identity token for an upload token
    // without one (PyPI's paths, its old /github/ one, and PEP 807's discovery). The exchange may
    // wait for an issuer's keys, so it runs on the outbound lane, never where uploads do.
    route{get_head,   "/api/v1/projects/{project}/publishers[/]", admin,  scope::project, publisher_changes,        api,     none,   read_pool,  label::api,                publishers::list_publishers},
    route{POST,       "/api/v1/projects/{project}/publishers[/]", admin,  scope::project, publisher_changes,        api,     json,   write_pool, label::api,                publishers::add_publisher},
    route{DELETE,     "/api/v1/projects/{project}/publishers/{id}[/]", admin, scope::project, publisher_changes,     api,     none,   write_pool, label::api,                publishers::remove_publisher},
    route{get_head,   "/_/oidc/audience",                         anyone, scope::none,    "",                       ci,      none,   io_thread,  label::trusted_publishing, trusted_publishing::audience},
    route{POST,       "/_/oidc/mint-token",                       anyone, scope::none,    "",                       ci,      json,   outbound,   label::trusted_publishing, trusted_publishing::mint_token},
    route{POST,       "/_/oidc/github/mint-token",                anyone, scope::none,    "",                       ci,      json,   outbound,   label::trusted_publishing, trusted_publishing::mint_token},
    route{get_head,   "/.well-known/pytp",                        anyone, scope::none,    "",                       ci,      none,   io_thread,  label::trusted_publishing, trusted_publishing::discovery},
};
// clang-format on

}  // namespace

std::span<const route> route_table() noexcept { return routes; }

}  // namespace wheelhouse::app
