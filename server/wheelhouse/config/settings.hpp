#pragma once
// The server's configuration: flags > WHEELHOUSE_* environment > TOML file > defaults.
// A setting is a field below (its default) plus one row of the table in settings.cpp (its
// name, which is the flag, the file's key and the variable, its check and its help).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <CLI/App.hpp>

#include "wheelhouse/catalog/records.hpp"
#include "wheelhouse/remote/host_policy.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/upstream/routing.hpp"

namespace wheelhouse::config {

// --oidc-jwks: an issuer whose signing keys are read from a JWK set file, never fetched.
struct pinned_key_file {
    std::string issuer;  // https://
    std::string file;    // readable when the setting is read
};

struct settings {
    std::string listen = "127.0.0.1:8080";
    std::string tls_cert;       // PEM, certificate then chain: HTTPS on --listen; empty: plain HTTP
    std::string tls_key;        // PEM private key of tls_cert
    std::string redirect_http;  // HOST:PORT of a plain-HTTP listener that redirects to HTTPS; empty: none
    std::filesystem::path data = "./var";
    unsigned threads = 0;  // 0: one per core
    std::string access_log = "-";
    std::chrono::seconds page_max_age{60};
    std::uint64_t max_upload_bytes = 4ull << 30;
    std::chrono::seconds idle_timeout{30};
    std::chrono::seconds read_timeout{30};
    std::uint64_t min_body_rate = 4096;  // bytes a second a body averages after read_timeout; 0: none
    unsigned max_connections = 0;        // 0: from the file-descriptor limit
    unsigned max_connections_per_address = 0;  // one client's share of them; 0: none
    std::chrono::seconds drain_timeout{10};
    unsigned ingest_workers = 0;  // 0: one per core
    unsigned ingest_queue = 16;
    bool private_index = false;  // reads (/simple/, /files/, /api/) need a token too
    std::string public_url;      // when set, pages link files absolutely: <public_url>/files/…

    // Release assets: registering, importing and downloading them.
    std::string github_api_url = "https://api.github.com";  // GitHub Enterprise: https://HOST/api/v3
    std::string github_token;    // lists private repositories' releases and fetches their assets
    std::string ca_bundle;       // PEM file of trusted CAs; empty: the system's store
    std::vector<std::string> remote_allowed_hosts = remote::default_allowed_hosts();
    bool remote_allow_private_addresses = false;  // loopback and private networks: tests only
    catalog::download_mode remote_download_mode = catalog::download_mode::redirect;
    std::chrono::seconds remote_connect_timeout{10};
    std::chrono::seconds remote_read_timeout{30};
    unsigned remote_proxy_downloads = 16;  // proxied downloads at once; more get 503

    // Trusted publishing (OIDC) and the lane its key fetches run on.
    std::string oidc_audience;  // empty: --public-url's host, else "wheelhouse"
    std::chrono::seconds oidc_token_lifetime{900};
    std::vector<pinned_key_file> oidc_jwks;  // that issuer's keys from a file, never fetched
    std::string sigstore_trust_root;     // PEP 740: the trusted_root.json attestations are checked against
    unsigned outbound_workers = 4;
    unsigned outbound_queue = 32;
    // Upstream indexes (issue 26): names this index does not own, served from them.
    std::vector<upstream::upstream_index> upstreams;  // the first serves what no route takes
    std::vector<upstream::route> upstream_routes;
    std::chrono::seconds upstream_max_age{600};       // a kept page is revalidated after this
    std::string upstream_files = "cache";             // cache: through /files/, checked and kept; link: upstream's URLs
    std::vector<std::string> upstream_file_hosts{"files.pythonhosted.org"};  // besides the upstreams' own hosts
    std::uint64_t upstream_max_page_size = 64ull << 20;
    std::chrono::seconds upstream_timeout{60};        // one page fetch, whole
    bool offline = false;                              // fetch nothing from upstreams: serve what is kept
    // Object storage (issue 29): the files this index holds itself in an S3 bucket, not DATA/blobs.
    std::string s3_endpoint;  // http(s)://HOST[:PORT]; empty: files under DATA/blobs
    std::string s3_bucket;
    std::string s3_region = "us-east-1";
    std::string s3_prefix;
    std::string s3_ca_bundle;
    std::string s3_credentials_file;  // else AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY
    std::chrono::seconds s3_timeout{30};
    std::string s3_downloads = "redirect";  // redirect: 302 to a presigned URL; proxy: through the index
    std::chrono::seconds s3_url_lifetime{300};
};

// The audience trusted publishers' tokens must name: --oidc-audience, else --public-url's host
// (so two indexes that trust one repository do not accept each other's tokens), else "wheelhouse".
std::string oidc_audience_of(const settings& values);

// Which options a command takes: every command --config and --data; commands that read or add
// the index's own files the bucket's too (--s3-*); commands that fetch release assets the remote
// ones too (--github-*, --ca-bundle, --remote-*); `serve` all.
enum class option_set { data, bucket, fetching, serving };

// What the command line and the environment gave; the rest falls through to the file and
// then the defaults. Filled by CLI11 as it parses (add_options), read by resolve.
struct overrides {
    std::optional<std::string> config_file;
    // A setting's name -> how its flag's or variable's value sets it (which may fail: a bad value).
    std::map<std::string, std::function<result<void>(settings&)>, std::less<>> given;
};

// Registers --config (WHEELHOUSE_CONFIG) and each setting of `options` as --NAME with its
// WHEELHOUSE_NAME variable, in the order of the settings table (which is --help's order).
void add_options(CLI::App& command, overrides& values, option_set options);

// The HTTP client's settings: the allow-list, private addresses, CA bundle and deadlines.
// Plain http:// is never allowed here.
remote::client_settings client_settings_from(const settings& values);
// The same for upstream indexes: their hosts and upstream-file-hosts, and upstream-timeout whole.
remote::client_settings upstream_client_settings_from(const settings& values);
// The same for proxied downloads from the bucket of --s3-endpoint: its host alone, private
// addresses and plain http allowed (the operator's own store), --s3-timeout between reads.
remote::client_settings bucket_client_settings_from(const settings& values);
// The upstreams and routes as one routing (checked by resolve: every route names an upstream).
upstream::routing routing_from(const settings& values);

// Defaults, then the TOML file, then the overrides, then each setting's check. The error names
// where the bad value came from (the flag, or the file and key) and how to fix it.
result<settings> resolve(const overrides& values);

// "127.0.0.1:8080", "[::1]:0", ":8080" (all addresses) -> host and port.
result<std::pair<std::string, unsigned short>> split_listen_address(const std::string& listen);

}  // namespace wheelhouse::config
