#pragma once
// The JSON the admin catalog reads and the curation it does, under /api/v1/:
//   GET    projects?q=&page=&per_page=&sort=   the project list, searched, sorted, paginated
//   GET    projects/<project>                  versions, variant matrix, summary, status
//   PUT    projects/<project>/status           {"status", "reason"} (POST too)        admin
//   GET    files/<filename>                    details, METADATA, downloads per day
//   POST   files/<filename>/yank               {"reason"}                              admin
//   POST   files/<filename>/unyank             {"reason"}                              admin
//   DELETE files/<filename>                    the row; its blob when nothing else needs it  admin
//   GET    tokens, POST tokens {"name", "scope", "projects", "expires_in_days"}        admin
//   DELETE tokens/<name>                                                               admin
//   GET    audit?limit=&target=                                                        admin
// (PUT files/<filename> stays the raw upload; projects/<project>/variants stays in api_routes.)
// Every refusal is JSON {"error": "..."} with its status; credentials are checked by the API,
// whatever the page shows. Reads answer on the I/O thread; writes go to the worker pool.

#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/auth/token_store.hpp"
#include "wheelhouse/concurrency/worker_pool.hpp"
#include "wheelhouse/http/request_target.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Thread safety: plan() and handle() run on I/O threads; writes on the pool's workers.
class admin_routes {
public:
    admin_routes(route_context& context, auth::token_store& tokens, concurrency::worker_pool& workers);

    // True for the routes above, whatever the method (a wrong one is answered 405 here).
    static bool claims(http::verb method, const http_target::request_target& target);

    // A JSON body of at most 64 KiB, read into memory.
    transport::body_plan plan(const http::request_header<>& request) const;
    void handle(transport::incoming_request request, const http_target::request_target& target,
                const transport::responder& respond);

private:
    route_context& context_;
    auth::token_store& tokens_;
    concurrency::worker_pool& workers_;
    ingest::ingester ingester_;
};

}  // namespace wheelhouse::app
