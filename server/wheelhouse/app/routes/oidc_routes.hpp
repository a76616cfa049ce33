#pragma once
// Trusted publishing as PyPI speaks it and PEP 807 standardises it, for the PyPA publish action,
// `uv publish` and PEP 807 clients:
//   GET  /_/oidc/audience             {"audience": "..."}: what CI must request its token for
//   POST /_/oidc/mint-token           {"token": "<CI identity token>"} -> {"success": true,
//                                     "token": "<upload token>", "expires": <unix time>}; refusals
//                                     422 {"message", "errors": [{"code", "description"}]}, or 503
//                                     with Retry-After while an issuer's keys cannot be had
//   GET  /.well-known/pytp?discover=  PEP 807 discovery for an upload path: its two endpoints
// None needs a token (CI has none yet); the exchange checks everything (oidc/exchange.hpp).

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"

namespace wheelhouse::app::trusted_publishing {

// Thread safety: an I/O thread (answers from settings).
route_answer audience(route_context& context, route_request& request);
// Thread safety: a worker of the outbound lane (it may wait for an issuer's keys).
route_answer mint_token(route_context& context, route_request& request);
// Thread safety: an I/O thread.
route_answer discovery(route_context& context, route_request& request);

}  // namespace wheelhouse::app::trusted_publishing
