#include "wheelhouse/cli/serve_command.hpp"

#include <csignal>
#include <cstdio>
#include <memory>

#include <spdlog/spdlog.h>

#include "wheelhouse/app/application.hpp"
#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/config/settings.hpp"
#include "wheelhouse/ingest/ingester.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/transport/server.hpp"

namespace wheelhouse::cli {
namespace {

int serve(const config::overrides& values) {
    auto resolved = config::resolve(values);
    if (!resolved) {
        spdlog::error("{}", resolved.error().message);
        return 2;
    }
    const auto& settings = *resolved;
    const auto address = config::split_listen_address(settings.listen);

    auto blobs = storage::blob_store::open(settings.data);
    if (!blobs) {
        spdlog::error("cannot use data folder {}: {}", settings.data.string(), blobs.error().message);
        return 1;
    }
    // A read-only or foreign-owned folder (a container volume mounted :ro) would otherwise
    // serve reads and fail every upload; refuse to start instead.
    if (auto probe = blobs->create_spool(); !probe) {
        spdlog::error("cannot use data folder {}: it is not writable ({})", settings.data.string(),
                      probe.error().message);
        return 1;
    }

    auto catalog = catalog::catalog::open(settings.data / "catalog.db");
    if (!catalog) {
        spdlog::error("cannot open the catalog in {}: {}", settings.data.string(), catalog.error().message);
        return 1;
    }
    // What a run that died left: its spool files, and blobs it had put in place but not listed.
    if (auto swept = ingest::ingester(**catalog, *blobs).recover(); !swept) {
        spdlog::warn("could not sweep {}: {}", blobs->spool_dir().string(), swept.error().message);
    } else if (swept->removed > 0) {
        spdlog::info("removed {} files left in {} by a run that stopped abruptly, and {} blobs it had not listed",
                     swept->removed, blobs->spool_dir().string(), swept->blobs_released);
    }

    app::app_settings app_settings;
    app_settings.page_max_age = settings.page_max_age;
    app_settings.max_upload_bytes = settings.max_upload_bytes;
    app_settings.ingest_workers = settings.ingest_workers;
    app_settings.ingest_queue = settings.ingest_queue;
    app_settings.private_index = settings.private_index;
    app_settings.remote_download_mode = settings.remote_download_mode;
    app_settings.github_api_url = settings.github_api_url;
    app_settings.github_token = settings.github_token;
    app_settings.remote_client = config::client_settings_from(settings);
    app_settings.proxy_downloads = settings.remote_proxy_downloads;
    app::application application(**catalog, *blobs, app_settings);

    transport::server_options options;
    options.host = address->first;
    options.port = address->second;
    options.threads = settings.threads;
    options.access_log = settings.access_log;
    options.metrics = &application.metrics();
    options.limits.idle_timeout = settings.idle_timeout;
    options.limits.read_timeout = settings.read_timeout;
    transport::server server(options, application);
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
    application.watch_external_changes(server.context());

    const auto endpoint = server.local_endpoint();
    const auto host = endpoint.address().is_v6() ? "[" + endpoint.address().to_string() + "]"
                                                 : endpoint.address().to_string();
    // Tests and scripts read the bound port from this line.
    std::fprintf(stderr, "wheelhouse listening on http://%s:%u/ (data %s, %u threads)\n", host.c_str(),
                 endpoint.port(), settings.data.c_str(), settings.threads);
    std::fflush(stderr);

    server.start();
    server.wait();
    application.stop_watching();
    application.finish_ingests();
    spdlog::info("stopped; all connections closed");
    return 0;
}

}  // namespace

void add_serve_command(CLI::App& app) {
    auto values = std::make_shared<config::overrides>();
    auto* command = app.add_subcommand("serve", "Serve the index over HTTP (pip, uv, twine, curl, browsers)");
    config::add_options(*command, *values, true);
    command->callback([values] { set_exit_status(serve(*values)); });
}

}  // namespace wheelhouse::cli
