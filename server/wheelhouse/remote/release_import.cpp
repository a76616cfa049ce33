#include "wheelhouse/remote/release_import.hpp"

#include <algorithm>

#include "wheelhouse/pep625/sdist_filename.hpp"
#include "wheelhouse/remote/github_release.hpp"
#include "wheelhouse/text/quoted.hpp"


namespace wheelhouse::remote {
namespace {

// A wheel (a bad name is registered, to be rejected with the reason), or an sdist by its PEP 625
// name: a release's other archives (docs, checksums) are no distribution of a project.
bool is_distribution(std::string_view asset_name) {
    return asset_name.ends_with(".whl") || pep625::parse_sdist_filename(asset_name).has_value();
}

// The asset's download URL names the file the listing does, and the caller may add it.
result<void> check_listed_file(const release_asset& asset, const import_request& request) {
    auto named = url_filename(asset.download_url);
    if (!named) return named.error();
    if (*named != asset.name) {
        return make_error(error_kind::upstream, "the release lists " + text::quoted(asset.name) +
                                                    " with a download URL of " + text::quoted(*named) +
                                                    ": GitHub's API answer is inconsistent; nothing was registered");
    }
    if (request.may_register) return request.may_register(*named);
    return {};
}

}  // namespace

std::size_t import_report::count(registration_outcome outcome) const {
    return static_cast<std::size_t>(
        std::count_if(files.begin(), files.end(), [&](const registration_report& report) { return report.outcome == outcome; }));
}

result<import_report> import_release(github_api& github, registrar& registrar, const import_request& request) {
    auto found = github.release_by_tag(request.repository, request.tag);
    if (!found) return found.error();
    import_report report;
    report.release_id = found->id;
    for (const auto& asset : found->assets) {
        if (!is_distribution(asset.name)) {
            report.skipped.push_back(asset.name);
            continue;
        }
        // What is registered is the file the download URL names: the access check and the
        // listing must agree on it (a lying API could list one name with another's URL).
        if (auto allowed = check_listed_file(asset, request); !allowed) {
            registration_report refused;
            refused.url = asset.download_url;
            refused.filename = asset.name;
            refused.failure = allowed.error();
            report.files.push_back(std::move(refused));
            continue;
        }
        registration_request one;
        one.url = asset.download_url;
        if (asset.sha256) {
            one.sha256 = asset.sha256;
            one.sha256_source = digest_source::github_api;
        }
        one.ask_github = false;  // the listing just said what GitHub knows
        if (!github.settings().token.empty()) {
            // A private repository's asset downloads only through the API, with the token.
            one.fetch_url = release_asset_api_url(github.settings().api_url, request.repository, asset.id);
            one.fetch_headers = asset_download_headers(github.settings().token);
        }
        one.mode = request.mode;
        one.verify = request.verify;
        one.actor = request.actor;
        one.in_same_commit = request.in_same_commit;
        auto registered = registrar.register_asset(one);
        report.files.push_back(std::move(registered));
    }
    return report;
}

}  // namespace wheelhouse::remote
