#include "wheelhouse/cli/serve_command.hpp"

#include <csignal>
#include <fstream>
#include <cstdio>
#include <memory>
#include <optional>

#include <boost/url/parse.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/app/application.hpp"
#include "wheelhouse/attest/trust_root.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/config/settings.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/oidc/jwk.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/static_export/files_base.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/transport/server.hpp"

namespace wheelhouse::cli {
namespace {

// The data folder's blob store and catalog; nullopt (the reason logged) when it cannot serve.
struct data_folder {
    storage::blob_store blobs;
    std::unique_ptr<catalog::catalog> catalog;
};

std::optional<data_folder> open_data_folder(const std::filesystem::path& data,
                                            std::shared_ptr<storage::object_store> bucket) {
    auto blobs = storage::blob_store::open(data, std::move(bucket));
    if (!blobs) {
        spdlog::error("cannot use data folder {}: {}", data.string(), blobs.error().message);
        return std::nullopt;
    }
    // A read-only or foreign-owned folder (a container volume mounted :ro) would otherwise
    // serve reads and fail every upload; refuse to start instead.
    if (auto probe = blobs->create_spool(); !probe) {
        spdlog::error("cannot use data folder {}: it is not writable ({})", data.string(), probe.error().message);
        return std::nullopt;
    }
    auto catalog = catalog::catalog::open(data / "catalog.db");
    if (!catalog) {
        spdlog::error("cannot open the catalog in {}: {}", data.string(), catalog.error().message);
        return std::nullopt;
    }
    // What a run that died left: its spool files, and blobs it had put in place but not listed.
    if (auto swept = ingest::ingester(**catalog, *blobs).recover(); !swept) {
        spdlog::warn("could not sweep {}: {}", blobs->spool_dir().string(), swept.error().message);
    } else if (swept->removed > 0) {
        spdlog::info("removed {} files left in {} by a run that stopped abruptly, and {} blobs it had not listed",
                     swept->removed, blobs->spool_dir().string(), swept->blobs_released);
    }
    return data_folder{std::move(blobs).value(), std::move(catalog).value()};
}

app::app_settings app_settings_from(const config::settings& settings) {
    app::app_settings out;
    out.page_max_age = settings.page_max_age;
    out.max_upload_bytes = settings.max_upload_bytes;
    out.write_workers = settings.ingest_workers;
    out.write_queue = settings.ingest_queue;
    out.private_index = settings.private_index;
    if (!settings.public_url.empty()) {  // checked when the settings were read
        out.public_root = *static_export::root_for(settings.public_url);
        out.files_base = *static_export::files_base_for(settings.public_url);
    }
    out.remote_download_mode = settings.remote_download_mode;
    out.github_api_url = settings.github_api_url;
    out.github_token = settings.github_token;
    out.remote_client = config::client_settings_from(settings);
    out.proxy_downloads = settings.remote_proxy_downloads;
    out.outbound_workers = settings.outbound_workers;
    out.outbound_queue = settings.outbound_queue;
    out.publishing.audience = config::oidc_audience_of(settings);
    out.publishing.token_lifetime = settings.oidc_token_lifetime;
    out.publishing.scheme = settings.tls_cert.empty() ? "http" : "https";
    out.upstreams = config::routing_from(settings);
    out.upstream_pages.max_age = settings.upstream_max_age;
    out.upstream_pages.max_page_bytes = settings.upstream_max_page_size;
    out.upstream_pages.offline = settings.offline;
    out.upstream_pages.directory = settings.data / "upstream";
    // Large pages' copies, unlinked files in the blob store's spool: on the data disk.
    out.pages.file_folder = out.upstream_pages.file_folder = settings.data / "tmp";
    out.upstream_link_files = settings.upstream_files == "link";
    out.upstream_client = config::upstream_client_settings_from(settings);
    out.upstream_pages.file_hosts = out.upstream_client.policy;
    out.bucket_proxy_downloads = settings.s3_downloads == "proxy";
    out.bucket_url_lifetime = settings.s3_url_lifetime;
    out.bucket_client = config::bucket_client_settings_from(settings);
    return out;
}

// A key file's first `most + 1` bytes: its parser refuses one past its bound by the length.
std::string read_key_file(const std::filesystem::path& path, std::size_t most) {
    std::ifstream in(path, std::ios::binary);
    std::string text(most + 1, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<std::size_t>(in.gcount()));
    return text;
}

// --sigstore-trust-root: read and parsed now, so a bad file stops the start.
result<std::shared_ptr<const attest::trust_root>> sigstore_root_from(const std::string& path) {
    if (path.empty()) return std::shared_ptr<const attest::trust_root>();
    auto parsed = attest::parse_trust_root(read_key_file(path, attest::max_trust_root_bytes));
    if (!parsed) return invalid("--sigstore-trust-root " + path + ": " + parsed.error().message);
    spdlog::info("PEP 740 attestations are verified against {} ({} certificate authorities, {} transparency logs)",
                 path, parsed->authorities.size(), parsed->logs.size());
    return std::make_shared<const attest::trust_root>(std::move(*parsed));
}

// --oidc-jwks: each ISSUER=FILE read and its keys parsed now, so a bad file stops the start.
result<std::map<std::string, oidc::key_set>> pinned_keys(const std::vector<config::pinned_key_file>& pins) {
    std::map<std::string, oidc::key_set> keys;
    for (const auto& pin : pins) {
        auto parsed = oidc::parse_key_set(read_key_file(pin.file, oidc::max_key_set_bytes));
        if (!parsed) return invalid("--oidc-jwks " + pin.file + ": " + parsed.error().message);
        keys.insert_or_assign(pin.issuer, std::move(*parsed));
    }
    return keys;
}

// HTTPS's certificate, when --tls-cert and --tls-key are given; nullptr for plain HTTP.
result<std::shared_ptr<transport::tls_certificate>> certificate_from(const config::settings& settings) {
    if (settings.tls_cert.empty() != settings.tls_key.empty())
        return invalid("give --tls-cert and --tls-key together: the certificate and its key");
    if (settings.tls_cert.empty()) {
        if (!settings.redirect_http.empty())
            return invalid("give --tls-cert and --tls-key with --redirect-http: it redirects to HTTPS");
        return std::shared_ptr<transport::tls_certificate>();
    }
    auto loaded = transport::tls_certificate::load(settings.tls_cert, settings.tls_key);
    if (!loaded) return loaded.error();
    return std::move(*loaded);
}

transport::server_options server_options_from(const config::settings& settings, metrics::server_metrics& metrics,
                                              std::shared_ptr<const transport::tls_certificate> tls) {
    const auto address = config::split_listen_address(settings.listen);  // checked by resolve
    transport::server_options out;
    out.host = address->first;
    out.port = address->second;
    out.tls = std::move(tls);
    if (!settings.redirect_http.empty()) out.redirect_http = *config::split_listen_address(settings.redirect_http);
    // Redirects go to --public-url's origin when it is https://, never to a host a client names.
    if (const auto url = boost::urls::parse_uri(settings.public_url); url && url->scheme() == "https")
        out.redirect_origin = "https://" + std::string(url->encoded_authority());
    out.threads = settings.threads;
    out.access_log = settings.access_log;
    out.metrics = &metrics;
    out.limits.idle_timeout = settings.idle_timeout;
    out.limits.read_timeout = settings.read_timeout;
    out.limits.min_body_rate = settings.min_body_rate;
    out.limits.max_connections = settings.max_connections;
    out.limits.max_connections_per_address = settings.max_connections_per_address;
    return out;
}

// Tests and scripts read the bound port from this line.
std::string host_text(const tcp::endpoint& endpoint) {
    return endpoint.address().is_v6() ? "[" + endpoint.address().to_string() + "]" : endpoint.address().to_string();
}

void announce(const transport::server& server, const config::settings& settings) {
    const auto endpoint = server.local_endpoint();
    const auto host = host_text(endpoint);
    const char* scheme = settings.tls_cert.empty() ? "http" : "https";
    // An admin who meant to open the index (or to close it) sees which it is before anyone reads.
    const char* access = settings.private_index ? "private: every read needs a token of scope read or above"
                                                : "public: anyone may read, uploads need a token";
    if (const auto redirect = server.redirect_endpoint()) {
        std::fprintf(stderr, "wheelhouse redirecting http://%s:%u/ to https\n", host_text(*redirect).c_str(),
                     redirect->port());
    }
    std::fprintf(stderr, "wheelhouse listening on %s://%s:%u/ (data %s, %u threads, up to %zu connections; %s)\n",
                 scheme, host.c_str(), endpoint.port(), settings.data.c_str(), settings.threads,
                 server.limits().max_connections, access);
    std::fflush(stderr);
}

int serve(const config::overrides& values) {
    auto resolved = config::resolve(values);
    if (!resolved) {
        spdlog::error("{}", resolved.error().message);
        return 2;
    }
    const auto& settings = *resolved;
    auto bucket = bucket_of(settings);
    if (!bucket) {
        spdlog::error("cannot use the bucket: {}", bucket.error().message);
        return 1;
    }
    auto data = open_data_folder(settings.data, *bucket);
    if (!data) return 1;
    if (*bucket) spdlog::info("the files this index holds are in {}", (*bucket)->describe());
    auto application_settings = app_settings_from(settings);
    auto pinned = pinned_keys(settings.oidc_jwks);
    if (!pinned) {
        spdlog::error("{}", pinned.error().message);
        return 2;
    }
    application_settings.publishing.pinned_keys = std::move(*pinned);
    auto sigstore_root = sigstore_root_from(settings.sigstore_trust_root);
    if (!sigstore_root) {
        spdlog::error("{}", sigstore_root.error().message);
        return 2;
    }
    application_settings.publishing.sigstore_root = std::move(*sigstore_root);
    auto certificate = certificate_from(settings);
    if (!certificate) {
        spdlog::error("{}", certificate.error().message);
        return 2;
    }
    if (*certificate) spdlog::info("HTTPS with the certificate of {}", (*certificate)->describe());
    app::application application(*data->catalog, data->blobs, std::move(application_settings));
    if (*bucket) {
        (*bucket)->record_into(&application.metrics());
        (*bucket)->answer_clients();
    }
    transport::server server(server_options_from(settings, application.metrics(), *certificate), application);
    if (auto opened = server.open(); !opened) {
        spdlog::error("{}", opened.error().message);
        return 1;
    }

    net::signal_set signals(server.context(), SIGINT, SIGTERM);
    signals.async_wait([&](error_code ec, int signal_number) {
        if (ec) return;
        spdlog::info("signal {}: draining connections (up to {} s)", signal_number, settings.drain_timeout.count());
        server.drain(settings.drain_timeout);
    });
    // SIGHUP (systemctl reload, a certbot deploy hook): the certificate and key are read again;
    // new connections get them, and none is dropped.
    net::signal_set reload(server.context(), SIGHUP);
    std::function<void(error_code, int)> on_reload = [&](error_code ec, int) {
        if (ec) return;
        if (!*certificate) {
            spdlog::info("SIGHUP: nothing to read again (no --tls-cert)");
        } else if (auto reloaded = (*certificate)->reload();
                   !reloaded) {
            spdlog::error("SIGHUP: kept the certificate in use ({}): {}", (*certificate)->describe(),
                          reloaded.error().message);
        } else {
            spdlog::info("SIGHUP: new connections get the certificate of {}", (*certificate)->describe());
        }
        reload.async_wait(on_reload);
    };
    reload.async_wait(on_reload);
    application.watch_external_changes(server.context());
    announce(server, settings);

    server.start();
    server.wait();
    reload.cancel();
    application.stop_watching();
    application.finish_ingests();
    spdlog::info("stopped; all connections closed");
    return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
    auto values = std::make_shared<config::overrides>();
    auto* command = app.add_subcommand("serve", "Serve the index over HTTP (pip, uv, twine, curl, browsers)");
    config::add_options(*command, *values, config::option_set::serving);
    command->callback([values] { set_exit_status(serve(*values)); });
}

}  // namespace wheelhouse::cli
