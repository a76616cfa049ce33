#pragma once
// /files/<sha256>/<filename>[.metadata] of a file no catalog row names: a file of an upstream
// project (issue 26), as an upstream page this index served linked it. Kept ones are sent from
// the blob store; others are found on their project's upstream page and fetched:
//  - the file streams from the upstream through the index (remote_downloads, cache mode: Range
//    passed on, the sha256 checked before the last bytes go out, a whole verified copy kept and
//    recorded in upstream_files);
//  - its .metadata is fetched whole, checked against the page's core-metadata hash, kept beside
//    the blob and recorded, then sent.
// A file of an owned name is never fetched nor sent, even one kept before the name was owned.

#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/app/route.hpp"
#include "wheelhouse/app/route_context.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::app {

// What the blob store keeps of an upstream file.
struct kept_upstream_bytes {
    enum class kind { none, owned, kept };
    kind what = kind::none;
    std::string digest;  // kind::kept: the ETag of the bytes to send (the file's sha256, or its .metadata's)
};

// The 404 for a file of a name this index owns (a project here, or reserved).
transport::outgoing_response owned_file_refusal(const http::request_header<>& request, std::string_view filename);

// Thread safety: any thread (two indexed catalog reads).
result<kept_upstream_bytes> find_kept_upstream_bytes(const route_context& context, std::string_view sha256,
                                                     std::string_view filename, bool metadata);

// Finds and fetches the file on the outbound lane, answering through `respond`; nullopt then. A
// response at once when there is nothing to find (no upstream) or the lane is full (503).
// Thread safety: any thread; never blocks.
std::optional<transport::outgoing_response> fetch_upstream_file(const route_context& context,
                                                                const route_request& routed, std::string_view sha256,
                                                                std::string_view filename, bool metadata);

}  // namespace wheelhouse::app
