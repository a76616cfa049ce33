#pragma once
// What every route handler may use: the catalog, the blob store, the page cache, the settings,
// the counters of /metrics, the tokens, the ingester, the admin page's files and trusted
// publishing.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "wheelhouse/app/page_cache.hpp"
#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/metrics/server_metrics.hpp"
#include "wheelhouse/oidc/key_cache.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/upstream/page_store.hpp"
#include "wheelhouse/upstream/routing.hpp"

namespace wheelhouse::attest {
struct trust_root;
}
namespace wheelhouse::auth {
class token_store;
}
namespace wheelhouse::catalog {
class catalog;
class download_counter;
}
namespace wheelhouse::concurrency {
class worker_pool;
}
namespace wheelhouse::ingest {
class ingester;
}
namespace wheelhouse::oidc {
class publisher_store;
class token_exchange;
}
namespace wheelhouse::storage {
class blob_store;
}

namespace wheelhouse::app {

class file_lookups;
class remote_downloads;
class static_routes;

// Trusted publishing: the audience CI requests tokens for, the minted tokens' life, keys pinned
// per issuer (read from --oidc-jwks files at start), and how the issuers' keys are fetched.
struct trusted_publishing_settings {
    std::string audience = "wheelhouse";
    std::chrono::seconds token_lifetime{900};
    std::map<std::string, oidc::key_set> pinned_keys;  // issuer -> keys; never fetched
    // PEP 740: what attestations are verified against; null: they are neither checked nor kept.
    std::shared_ptr<const attest::trust_root> sigstore_root;
    oidc::key_cache::options keys;
    // The scheme of the endpoints PEP 807's discovery names when --public-url does not say:
    // "https" when the server terminates TLS itself (--tls-cert).
    std::string scheme = "http";
};

struct app_settings {
    std::chrono::seconds page_max_age{60};  // Cache-Control on simple pages
    std::string public_root = "/";          // the index's root as clients see it: where redirects point
    std::string files_base = "/files/";     // where page links point for downloads
    std::uint64_t max_upload_bytes = 4ull << 30;
    unsigned write_workers = 2;             // the write pool: uploads, registrations, curation
    std::size_t write_queue = 16;           // writes waiting for a worker before 503
    unsigned read_workers = 2;              // the read pool: admin queries, sorts, METADATA files
    std::size_t read_queue = 64;            // reads waiting for a worker before 503
    page_cache::options pages;              // how many variant indexes keep pages in memory
    bool private_index = false;             // reads need a token (auth::scope::read or above)
    // How assets registered without a mode of their own are downloaded: redirect, proxy or cache.
    catalog::download_mode remote_download_mode = catalog::download_mode::redirect;
    std::string github_api_url = "https://api.github.com";
    std::string github_token;                // for private repositories' release listings; may be empty
    remote::client_settings remote_client;   // the allow-list, CA bundle and deadlines of every fetch
    unsigned proxy_downloads = 16;           // proxied remote downloads at once; more get 503
    unsigned outbound_workers = 4;           // the outbound lane: work that waits on other hosts
    std::size_t outbound_queue = 32;         // such work waiting for a worker before 503
    trusted_publishing_settings publishing;  // the OIDC exchange (oidc_routes.hpp)
    // Upstream indexes (issue 26): with none, no name is served from elsewhere.
    upstream::routing upstreams;
    upstream::store_options upstream_pages;  // freshness, limits, --offline, the folder of kept pages
    bool upstream_link_files = false;         // pages link upstream's file URLs, not /files/ (--upstream-files link)
    remote::client_settings upstream_client;  // its allow-list: the upstreams' hosts and --upstream-file-hosts
    // Files in a bucket (blob_store::bucket()): streamed through by this client when proxied,
    // else a 302 to a URL presigned for this long.
    bool bucket_proxy_downloads = false;
    std::chrono::seconds bucket_url_lifetime{300};
    remote::client_settings bucket_client;  // its allow-list: the bucket's endpoint alone
};

// Built whole by the application, before the first request: every member is given at
// construction and none changes after it.
struct route_context {
    catalog::catalog& catalog;
    storage::blob_store& blobs;
    page_cache& pages;
    const app_settings& settings;
    metrics::server_metrics& metrics;
    catalog::download_counter& downloads;   // counts wheel downloads
    remote::http_client& asset_client;      // fetches release assets
    remote_downloads& remote_files;         // answers downloads of files kept on a remote host
    auth::token_store& tokens;
    ingest::ingester& ingester;
    const static_routes& static_files;      // the admin page's files
    const concurrency::worker_pool& write_workers;  // for /metrics' queue levels
    concurrency::worker_pool& read_workers;         // renders the pages the cache misses
    oidc::publisher_store& publishers;               // trusted publishers
    oidc::token_exchange& exchange;                  // the OIDC exchange
    concurrency::worker_pool& outbound_workers;      // work that waits on other hosts (upstream fetches)
    file_lookups& lookups;                           // /files/' catalog lookups, kept
    upstream::page_store* const upstream_pages;      // null without upstreams
    remote::http_client* const upstream_client;      // fetches upstream files' .metadata and sizes; null likewise
    remote::http_client* const bucket_client;        // streams proxied downloads from the bucket; null unless they are proxied
};

}  // namespace wheelhouse::app
