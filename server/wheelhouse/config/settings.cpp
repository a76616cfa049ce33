#include "wheelhouse/config/settings.hpp"

#include <algorithm>
#include <charconv>
#include <thread>

#include <boost/url/parse.hpp>

#include "wheelhouse/config/setting.hpp"
#include "wheelhouse/static_export/files_base.hpp"
#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::config {
namespace {

// --- checks of the value that won, wherever it came from -----------------------------------------

result<void> listen_address(std::string& listen) {
    if (auto address = split_listen_address(listen); !address) return address.error();
    return {};
}

result<void> listen_address_if_set(std::string& listen) {
    if (listen.empty()) return {};
    return listen_address(listen);
}

result<void> zero_is_one_per_core(unsigned& count) {
    if (count == 0) count = std::max(1u, std::thread::hardware_concurrency());
    return {};
}

result<void> at_least_one(unsigned& count) {
    if (count == 0) return invalid("must be at least 1");
    return {};
}

result<void> at_least_one_second(std::chrono::seconds& duration) {
    if (duration.count() == 0) return invalid("must be at least 1 second");
    return {};
}

result<void> readable_file_if_set(std::string& path) {
    std::error_code ec;
    if (!path.empty() && !std::filesystem::is_regular_file(path, ec))
        return invalid("'" + path + "' is not a readable file; give a PEM file of CA certificates");
    return {};
}

// Syntax only: whether its host is allowed is the client's to say when it is used.
result<void> https_url(std::string& url) {
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed || parsed->scheme() != "https" || parsed->host_address().empty())
        return invalid("'" + url + "' is not an https:// URL; write it as https://api.github.com or https://HOST/api/v3");
    return {};
}

result<void> upstream_files_mode(std::string& mode) {
    if (mode == "cache" || mode == "link") return {};
    return invalid("'" + mode + "' is neither cache (files through this index, checked and kept) nor link "
                   "(upstream's URLs as they are)");
}

result<void> bucket_download_mode(std::string& mode) {
    if (mode == "redirect" || mode == "proxy") return {};
    return invalid("'" + mode + "' is neither redirect (302 to a presigned URL) nor proxy (streamed through the index)");
}

// SigV4 presigned URLs live at most a week; less than a minute races the client's redirect.
result<void> presigned_lifetime(std::chrono::seconds& lifetime) {
    if (lifetime < std::chrono::seconds(60) || lifetime > std::chrono::seconds(604800))
        return invalid("must be from 60 seconds to 604800 (7 days, Signature V4's limit)");
    return {};
}

// The same rules as an export's base URL: http(s)://HOST/PATH or /PATH, no credentials or query.
result<void> public_url_if_set(std::string& url) {
    if (url.empty()) return {};
    if (auto base = static_export::files_base_for(url); !base) return base.error();
    return {};
}

// PEP 807: a minted upload token lives from 15 minutes to 6 hours.
result<void> minted_token_lifetime(std::chrono::seconds& lifetime) {
    if (lifetime < std::chrono::seconds(900) || lifetime > std::chrono::seconds(6 * 3600))
        return invalid("must be from 900 (15 minutes) to 21600 (6 hours) seconds, as PEP 807 requires");
    return {};
}

result<void> audience_text(std::string& audience) {
    const bool printable = std::all_of(audience.begin(), audience.end(), [](char c) { return c > 0x20 && c < 0x7f; });
    if (audience.size() > 200 || !printable) return invalid("must be at most 200 printable characters without spaces");
    return {};
}

// --- the settings: one row each, in --help's order; the default is the field's in settings.hpp ---

const std::vector<setting>& table() {
    using enum option_set;
    static const std::vector<setting> rows = {
        declare(data, "data", &settings::data, "Data folder: catalog.db, blobs/, tmp/ (default ./var)"),
        declare(serving, "listen", &settings::listen,
                "Address and port to listen on (default 127.0.0.1:8080; port 0 picks one)", listen_address),
        declare(serving, "tls-cert", &settings::tls_cert,
                "Serve HTTPS: PEM file of the server's certificate, then its chain (read at start and on SIGHUP)"),
        declare(serving, "tls-key", &settings::tls_key, "PEM file of --tls-cert's private key (read with it)"),
        declare(serving, "redirect-http", &settings::redirect_http,
                "With --tls-cert: also listen for plain HTTP on HOST:PORT, answering every request with a redirect "
                "to the same path over HTTPS (301 for GET and HEAD, 308 for the rest)", listen_address_if_set),
        declare(serving, "threads", &settings::threads, "I/O threads (default: one per core)", zero_is_one_per_core),
        declare(serving, "access-log", &settings::access_log, "Access log: '-' for stdout, 'off', or a file path"),
        declare(serving, "page-max-age", &settings::page_max_age,
                "Cache-Control max-age of simple pages, seconds (default 60)"),
        declare(serving, "max-upload-size", &settings::max_upload_bytes, "Largest upload in bytes (default 4 GiB)"),
        declare(serving, "idle-timeout", &settings::idle_timeout, "Seconds a kept-alive connection may wait (default 30)"),
        declare(serving, "read-timeout", &settings::read_timeout,
                "Seconds a client may go silent mid-request (default 30)"),
        declare(serving, "min-body-rate", &settings::min_body_rate,
                "Bytes a second a request body must average once --read-timeout has passed, or 408; "
                "0: no minimum (default 4096)"),
        declare(serving, "max-connections", &settings::max_connections,
                "Connections open at once; at the limit a lingering or idle one is closed to make room, and when "
                "all are busy a new one gets 503 with Retry-After (default: what the file-descriptor limit leaves "
                "room for, two descriptors each)"),
        declare(serving, "max-connections-per-address", &settings::max_connections_per_address,
                "Connections one client address (IPv6: one /64) may hold; more get 503 with Retry-After; "
                "0: no limit (default; behind a proxy or NAT every client shares its address)"),
        declare(serving, "drain-timeout", &settings::drain_timeout, "Seconds to finish requests on SIGTERM (default 10)"),
        declare(serving, "ingest-workers", &settings::ingest_workers,
                "Threads for catalog writes: uploads and curation (default: one per core)", zero_is_one_per_core),
        declare(serving, "ingest-queue", &settings::ingest_queue,
                "Writes (uploads, curation) that may wait for a worker before 503 (default 16)"),
        declare(serving, "private", &settings::private_index,
                "Private index: reading pages and files needs a token too (pip: --index-url "
                "http://__token__:TOKEN@HOST/simple/); WHEELHOUSE_PRIVATE=0 overrides the file's private = true"),
        declare(serving, "public-url", &settings::public_url,
                "The index's URL as clients see it (https://HOST/PATH/): pages link files absolutely under it, "
                "for clients that resolve no relative URL (micropip) and behind a proxy that rewrites paths",
                public_url_if_set),
        declare(fetching, "github-api-url", &settings::github_api_url,
                "GitHub REST API base URL (default https://api.github.com; Enterprise: https://HOST/api/v3)", https_url),
        declare(fetching, "github-token", &settings::github_token,
                "GitHub token for private repositories' releases and assets (prefer WHEELHOUSE_GITHUB_TOKEN)"),
        declare(fetching, "ca-bundle", &settings::ca_bundle,
                "PEM file of CAs trusted for release hosts, instead of the system's store", readable_file_if_set),
        declare(fetching, "remote-allowed-hosts", &settings::remote_allowed_hosts,
                "Comma-separated hosts release assets may be fetched from (default github.com,"
                "objects.githubusercontent.com,release-assets.githubusercontent.com,api.github.com)"),
        declare(fetching, "remote-allow-private-addresses", &settings::remote_allow_private_addresses,
                "Let release hosts resolve to loopback, private and link-local addresses (tests only)"),
        declare(fetching, "remote-download-mode", &settings::remote_download_mode,
                "Downloads of release assets: redirect (302 to GitHub), proxy (streamed through), "
                "cache (streamed once, then kept); default redirect"),
        declare(fetching, "remote-connect-timeout", &settings::remote_connect_timeout,
                "Seconds to resolve, connect and shake hands with a release host (default 10)", at_least_one_second),
        declare(fetching, "remote-read-timeout", &settings::remote_read_timeout,
                "Seconds a release host may go silent mid-answer (default 30)", at_least_one_second),
        declare(fetching, "remote-proxy-downloads", &settings::remote_proxy_downloads,
                "Downloads streamed from release hosts at once (proxy and cache modes; one thread each); "
                "more get 503 with Retry-After (default 16)", at_least_one),
        declare(serving, "oidc-audience", &settings::oidc_audience,
                "Audience CI identity tokens must name for trusted publishing (default: --public-url's host, else "
                "wheelhouse); GET /_/oidc/audience tells clients", audience_text),
        declare(serving, "oidc-token-lifetime", &settings::oidc_token_lifetime,
                "Seconds an upload token minted for a trusted publisher lives (default 900; 900 to 21600)",
                minted_token_lifetime),
        declare(serving, "oidc-jwks", &settings::oidc_jwks,
                "ISSUER=FILE: take that issuer's signing keys from a JWK set file instead of fetching them "
                "(air-gapped sites); once per issuer"),
        declare(serving, "sigstore-trust-root", &settings::sigstore_trust_root,
                "Sigstore trusted_root.json that PEP 740 attestations sent with uploads are verified against; "
                "those that verify are served as provenance (default: none; attestations are then not kept)",
                readable_file_if_set),
        declare(serving, "outbound-workers", &settings::outbound_workers,
                "Threads for work that waits on other hosts: registrations of release assets, upstream indexes' pages and files, and trusted publishers' key fetches (default 4)", at_least_one),
        declare(serving, "outbound-queue", &settings::outbound_queue,
                "Such work that may wait for a thread before 503 (default 32)"),
        declare(serving, "upstream", &settings::upstreams,
                "An upstream index for the names this index does not own, NAME=URL (pypi=https://pypi.org/simple/); "
                "once per upstream; the first serves every name no --upstream-route sends elsewhere"),
        declare(serving, "upstream-route", &settings::upstream_routes,
                "Which upstream an index takes some names from: 'INDEX: PROJECT... = UPSTREAM', INDEX * (every "
                "index), simple (/simple/ only) or a variant selector ('cu128: torch torchvision triton = "
                "pytorch-cu128'); once per route, tried in order"),
        declare(serving, "upstream-max-age", &settings::upstream_max_age,
                "Seconds a kept upstream page is served before it is revalidated (default 600)"),
        declare(serving, "upstream-files", &settings::upstream_files,
                "Upstream files: cache (through /files/, checked against upstream's sha256 and kept; default) or "
                "link (pages link upstream's URLs)", upstream_files_mode),
        declare(serving, "upstream-file-hosts", &settings::upstream_file_hosts,
                "Comma-separated hosts upstream files may come from besides the upstreams' own "
                "(default files.pythonhosted.org)"),
        declare(serving, "upstream-max-page-size", &settings::upstream_max_page_size,
                "Largest upstream page in bytes; a larger one is refused, 502 (default 64 MiB)"),
        declare(serving, "upstream-timeout", &settings::upstream_timeout,
                "Seconds one upstream page fetch may take in all, or 504 (default 60)", at_least_one_second),
        declare(serving, "offline", &settings::offline,
                "Fetch nothing from upstream indexes: serve the pages and files kept, 504 for others"),
        declare(bucket, "s3-endpoint", &settings::s3_endpoint,
                "Keep the files this index holds in an S3-compatible bucket, not DATA/blobs: the store's base URL "
                "(https://s3.example.com); credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY or "
                "--s3-credentials-file, checked at start"),
        declare(bucket, "s3-bucket", &settings::s3_bucket, "The bucket (with --s3-endpoint)"),
        declare(bucket, "s3-region", &settings::s3_region, "The region requests are signed for (default us-east-1)"),
        declare(bucket, "s3-prefix", &settings::s3_prefix, "Where in the bucket the files go, e.g. wheelhouse/"),
        declare(bucket, "s3-ca-bundle", &settings::s3_ca_bundle,
                "PEM file of the CAs an https endpoint is checked against (default: the system's)", readable_file_if_set),
        declare(bucket, "s3-credentials-file", &settings::s3_credentials_file,
                "An AWS credentials file (aws_access_key_id = ..., its first profile), read at start",
                readable_file_if_set),
        declare(bucket, "s3-timeout", &settings::s3_timeout,
                "Seconds each connect, send or read of a bucket request may take (default 30)", at_least_one_second),
        declare(bucket, "s3-downloads", &settings::s3_downloads,
                "Downloads of files in the bucket: redirect (302 to a presigned URL; default) or proxy (streamed "
                "through the index, for a bucket only it can reach)", bucket_download_mode),
        declare(bucket, "s3-url-lifetime", &settings::s3_url_lifetime,
                "Seconds a presigned download URL works (default 300; 60 to 604800); each is reused for a tenth of it", presigned_lifetime),
    };
    return rows;
}

const setting* find_setting(std::string_view name) {
    const auto& rows = table();
    const auto found = std::find_if(rows.begin(), rows.end(), [&](const setting& row) { return row.name == name; });
    return found == rows.end() ? nullptr : &*found;
}

// --- resolving: defaults, the file, the flags and variables, then the checks ----------------------

result<void> read_file(settings& out, const std::string& path) {
    auto failure = [&](const std::string& problem) { return invalid("configuration file " + path + ": " + problem); };
    toml::table file;
    try {
        file = toml::parse_file(path);
    } catch (const toml::parse_error& bad) {
        return failure(std::string(bad.description()) + " (line " + std::to_string(bad.source().begin.line) + ")");
    }
    for (const auto& [key, node] : file) {
        const setting* row = find_setting(key.str());
        if (!row) return failure("unknown key '" + std::string(key.str()) + "'");
        if (auto read = row->from_file(out, node); !read) return failure(read.error().message);
    }
    return {};
}

result<void> apply_given(settings& out, const overrides& values) {
    for (const auto& [name, assign] : values.given) {
        if (auto assigned = assign(out); !assigned) return invalid("--" + name + ": " + assigned.error().message);
    }
    return {};
}

// A bad value is named where it came from: its flag (or variable), or else the file's key.
result<void> check_all(settings& out, const overrides& values) {
    for (const auto& row : table()) {
        if (!row.check) continue;
        if (auto checked = row.check(out); !checked) {
            const bool from_file = values.config_file && !values.given.contains(row.name);
            const std::string source = from_file ? "configuration file " + *values.config_file + ": key '" +
                                                       std::string(row.name) + "'"
                                                 : "--" + std::string(row.name);
            return invalid(source + ": " + checked.error().message);
        }
    }
    return {};
}

}  // namespace

void add_options(CLI::App& command, overrides& values, option_set options) {
    command.add_option("--config", values.config_file, "TOML configuration file (keys as the long options)")
        ->envname(environment_name("config"));
    for (const auto& row : table()) {
        if (row.taken_by <= options) row.add_option(command, values);
    }
}

remote::client_settings client_settings_from(const settings& values) {
    remote::client_settings out;
    out.policy.allowed_hosts = values.remote_allowed_hosts;
    out.policy.allow_private_addresses = values.remote_allow_private_addresses;
    out.policy.allow_plain_http = false;
    out.ca_bundle = values.ca_bundle;
    out.connect_timeout = values.remote_connect_timeout;
    out.read_timeout = values.remote_read_timeout;
    return out;
}

remote::client_settings upstream_client_settings_from(const settings& values) {
    auto out = client_settings_from(values);
    out.policy.allowed_hosts = values.upstream_file_hosts;
    for (const auto& upstream : values.upstreams) {
        const auto url = boost::urls::parse_uri(upstream.url);  // checked by parse_upstream
        out.policy.allowed_hosts.push_back(text::to_lower(url->host_address()));
    }
    out.total_timeout = values.upstream_timeout;
    return out;
}

remote::client_settings bucket_client_settings_from(const settings& values) {
    remote::client_settings out;
    out.policy.allowed_hosts.clear();
    if (const auto endpoint = boost::urls::parse_uri(values.s3_endpoint); endpoint && endpoint->has_authority()) {
        out.policy.allowed_hosts.push_back(text::to_lower(endpoint->host_address()));
        out.policy.allow_plain_http = endpoint->scheme() == "http";
    }
    out.policy.allow_private_addresses = true;
    out.ca_bundle = values.s3_ca_bundle;
    out.connect_timeout = values.s3_timeout;
    out.read_timeout = values.s3_timeout;
    return out;
}

upstream::routing routing_from(const settings& values) {
    auto made = upstream::routing::make(values.upstreams, values.upstream_routes);
    return made ? std::move(made).value() : upstream::routing();  // resolve has checked it
}

result<settings> resolve(const overrides& values) {
    settings out;
    if (values.config_file) {
        if (auto read = read_file(out, *values.config_file); !read) return read.error();
    }
    if (auto applied = apply_given(out, values); !applied) return applied.error();
    if (auto checked = check_all(out, values); !checked) return checked.error();
    if (auto routed = upstream::routing::make(out.upstreams, out.upstream_routes); !routed)
        return invalid("--upstream-route: " + routed.error().message);
    return out;
}

std::string oidc_audience_of(const settings& values) {
    if (!values.oidc_audience.empty()) return values.oidc_audience;
    if (const auto url = boost::urls::parse_uri(values.public_url); url && !url->host_address().empty())
        return std::string(url->host_address());
    return "wheelhouse";
}

result<std::pair<std::string, unsigned short>> split_listen_address(const std::string& listen) {
    const auto colon = listen.rfind(':');
    if (colon == std::string::npos)
        return invalid("listen address '" + listen + "' has no port; write it as HOST:PORT, e.g. 127.0.0.1:8080");
    std::string host = listen.substr(0, colon);
    const std::string port_text = listen.substr(colon + 1);
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (host.empty()) host = "0.0.0.0";
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc{} || end != port_text.data() + port_text.size() || port > 65535)
        return invalid("listen address '" + listen + "' has no valid port (0-65535)");
    return std::pair{host, static_cast<unsigned short>(port)};
}

}  // namespace wheelhouse::config
