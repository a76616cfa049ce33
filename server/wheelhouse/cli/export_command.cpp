#include "wheelhouse/cli/export_command.hpp"

#include <CLI/Option.hpp>

#include <cstdio>
#include <memory>

#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/existing_data.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/static_export/static_site.hpp"

namespace wheelhouse::cli {

int run_export(const export_command_options& options) {
    const auto fail = [](const std::string& message) {
        std::fprintf(stderr, "wheelhouse export: %s\nwheelhouse export: nothing was written\n", message.c_str());
        return 1;
    };
    static_export::export_options settings;
    settings.base_url = options.base_url;
    if (auto base = static_export::files_base_for(options.base_url); !base) return fail(base.error().message);
    for (const auto& text : options.variants) {
        auto selector = variants::parse_selector(text);
        if (!selector) return fail("--variant " + text + ": " + selector.error().message);
        settings.variants.push_back(std::move(selector).value());
    }
    auto bucket = bucket_of(options.settings);
    if (!bucket) return fail("cannot use the bucket: " + bucket.error().message);
    auto data = open_existing_data(options.data_dir, *bucket);
    if (!data) return fail(data.error().message);
    auto exported = static_export::export_site(*data->catalog, *data->store, options.out, settings);
    if (!exported) return fail(exported.error().message);
    const auto& report = *exported;
    std::printf("wheelhouse export: %s\n", report.location.c_str());
    std::printf("  projects  %zu, %zu pages (HTML and index.json)\n", report.projects, report.pages);
    std::printf("  files     %zu wheels and %zu METADATA files copied, %zu linked at their remote URL\n", report.wheels,
                report.metadata_files, report.remote_links);
    for (const auto& selector : settings.variants)
        std::printf("  variant   %s/variants/%s/simple/\n", report.location.c_str(), selector.canonical().c_str());
    std::printf("  serve it at %s (pip install --index-url <that>/simple/ ...)\n", options.base_url.c_str());
    std::fflush(stdout);
    return 0;
}

void add_export_command(CLI::App& app) {
    auto options = std::make_shared<export_command_options>();
    CLI::App* command = app.add_subcommand(
        "export", "Write the /simple/ pages and the wheels as static files for GitHub Pages, a CDN or an object store");
    add_settings_options(*command, config::option_set::bucket, [options](config::settings resolved) {
        options->data_dir = resolved.data.string();
        options->settings = std::move(resolved);
    });
    command->add_option("--out", options->out, "the folder to create (must not exist, or be empty)")->required();
    command->add_option("--base-url", options->base_url,
                        "where the folder will be served from: https://host/path, or / for the root of the same host; "
                        "file links start with it")
        ->required();
    command->add_option("--variant", options->variants,
                        "also write the variant index variants/<selector>/simple/ (repeatable), as "
                        "--variant cu130-torch2.10");
    command->footer(
        "Layout: simple/index.html and index.json, simple/<project>/index.html and index.json, "
        "files/<sha256>/<filename> and <filename>.metadata. Pages equal the server's byte for byte except file links; "
        "files held only at a remote URL link there, without core-metadata. Exit status: 0 done; 1 nothing written.");
    command->callback([options] { set_exit_status(run_export(*options)); });
}

}  // namespace wheelhouse::cli
