#pragma once
// How the server fetches trusted-publishing issuers' discovery documents and key sets: through
// the outbound HTTPS client (TLS 1.2+, certificates and host names checked against the system's
// CAs or --ca-bundle, every resolved address judged by the host policy's SSRF rules), with one
// client per issuer host whose allow-list is that host alone, no redirects, and a short deadline.
// The URLs come from oidc::key_cache, which asks only for issuers some trusted publisher names.

#include "wheelhouse/oidc/key_cache.hpp"
#include "wheelhouse/remote/http_client.hpp"

namespace wheelhouse::remote {

// A fetcher for oidc::key_cache. `base` gives the CA bundle, the private-address rule and the
// connect and read deadlines; its allow-list is replaced per host. Thread safety: the fetcher
// may be called from any number of threads at once; each call blocks its thread.
oidc::key_cache::fetcher make_issuer_key_fetcher(const client_settings& base);

}  // namespace wheelhouse::remote
