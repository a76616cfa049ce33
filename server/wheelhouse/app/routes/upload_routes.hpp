#pragma once
// Uploads from CI: POST /legacy/ (twine's form, curl -F) and PUT /api/v1/files/<filename>
// (curl -T). The route table checks the token from the headers; plan_upload checks the size
// and the form's boundary and streams the body to a spool file; ingest_upload (on the write
// pool) validates and hashes, and hands the row to the ingester's group commit, which answers.

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// Where the body of an upload goes, by the row's body kind (the plan's sink, typed in
// request.planned_upload), or why it is refused from its headers (413 past --max-upload-size, 400 without a
// filename or a multipart boundary). Thread safety: an I/O thread.
transport::body_plan plan_upload(route_context& context, const http::request_header<>& header,
                                 route_request& request);

// The whole upload is in its spool file: checks the form's fields and the project, validates
// the file and hands its row to the group commit, which answers 201 (new), 200 (the same bytes
// again) or why not once the commit is synced; nullopt then, and the worker takes the next
// upload. Thread safety: a worker.
route_answer ingest_upload(route_context& context, route_request& request);

}  // namespace wheelhouse::app
