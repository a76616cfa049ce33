#pragma once
// GitHub's REST API for releases, as pure functions over text: the release and asset JSON,
// the Link header's next page, the release-download URL's parts, and the API URLs to ask.
// The server's registrar and release import do the requests.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::remote {

struct release_asset {
    std::int64_t id = 0;
    std::string name;          // the file name, as uploaded
    std::uint64_t size = 0;
    std::string download_url;  // browser_download_url
    std::optional<std::string> sha256;  // from "digest": "sha256:<hex>", lower case; absent on old assets
};

struct release {
    std::int64_t id = 0;
    std::string tag;
    std::vector<release_asset> assets;  // the first page only, as the release object embeds them
};

// GET /repos/{owner}/{repo}/releases/tags/{tag}
result<release> parse_release(std::string_view json);
// GET /repos/{owner}/{repo}/releases/{id}/assets: an array of assets.
result<std::vector<release_asset>> parse_assets(std::string_view json);
// An asset's "digest": the lower-case hex of "sha256:<64 hex>"; nullopt for other algorithms
// or a malformed value.
std::optional<std::string> parse_sha256_digest(std::string_view digest);

// The URL of rel="next" in a Link header (RFC 8288), as GitHub paginates; nullopt on the last page.
std::optional<std::string> next_page_url(std::string_view link_header);

struct repository_name {
    std::string owner;
    std::string name;
};
// "OWNER/REPO", with GitHub's characters for both (letters, digits, '-', '_', '.').
result<repository_name> parse_repository(std::string_view text);

struct release_download {
    repository_name repository;
    std::string tag;       // percent-decoded
    std::string filename;  // percent-decoded
};
// https://<web host>/OWNER/REPO/releases/download/TAG/FILE, where the web host belongs to the
// API at `api_url` (github.com for https://api.github.com; the same host for GitHub Enterprise
// and tests). nullopt for any other URL.
std::optional<release_download> parse_release_download_url(std::string_view url, std::string_view api_url);

// The last path segment of `url`, percent-decoded: the file name a download URL names.
result<std::string> url_filename(std::string_view url);

// {api_url}/repos/OWNER/REPO/releases/tags/TAG (TAG percent-encoded).
std::string release_by_tag_url(std::string_view api_url, const repository_name& repository, std::string_view tag);
// {api_url}/repos/OWNER/REPO/releases/ID/assets?per_page=100
std::string release_assets_url(std::string_view api_url, const repository_name& repository, std::int64_t release_id);

// {api_url}/repos/OWNER/REPO/releases/assets/ID: with Accept: application/octet-stream and a
// token, the download of a private repository's asset.
std::string release_asset_api_url(std::string_view api_url, const repository_name& repository, std::int64_t asset_id);

}  // namespace wheelhouse::remote
