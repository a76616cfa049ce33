#pragma once
// The JSON the admin catalog reads and the curation it does, under /api/v1/ (the route table
// says who may call each, and where it runs):
//   GET    projects?q=&page=&per_page=&sort=   the project list, searched, sorted, paginated,
//          &cuda=&torch=&sm=&rocm=&python=&lacks=  filtered by the builds a project has (or lacks)
//   GET    variants                            the words those filters take, as the builds name them
//   GET    projects/<project>                  versions, variant matrix, summary, status
//   PUT    projects/<project>/status           {"status", "reason"} (POST too)
//   GET    files/<filename>                    details, METADATA, downloads per day
//   POST   files/<filename>/yank               {"reason"}
//   POST   files/<filename>/unyank             {"reason"}
//   DELETE files/<filename>                    the row; its blob when nothing else needs it
//   GET    tokens, POST tokens {"name", "scope", "projects", "expires_in_days"}
//   DELETE tokens/<name>
//   GET    audit?page=&per_page=&action=&actor=&target=&q=   newest first; limit= is per_page
// Every refusal is JSON {"error": "..."} with its status. Thread safety: each handler runs on
// the worker its route's lane names.

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"

namespace wheelhouse::app::admin {

route_answer list_projects(route_context& context, route_request& request);
route_answer list_build_words(route_context& context, route_request& request);
route_answer project_detail(route_context& context, route_request& request);
route_answer set_project_status(route_context& context, route_request& request);
route_answer file_detail(route_context& context, route_request& request);
route_answer yank_file(route_context& context, route_request& request);
route_answer unyank_file(route_context& context, route_request& request);
route_answer delete_file(route_context& context, route_request& request);
route_answer list_tokens(route_context& context, route_request& request);
route_answer create_token(route_context& context, route_request& request);
route_answer revoke_token(route_context& context, route_request& request);
route_answer read_audit(route_context& context, route_request& request);

}  // namespace wheelhouse::app::admin
