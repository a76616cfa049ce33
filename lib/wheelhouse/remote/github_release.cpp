#include "wheelhouse/remote/github_release.hpp"

#include <boost/json/parse.hpp>
#include <boost/json/value.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/rfc/unreserved_chars.hpp>
#include <boost/url/url_view.hpp>

#include <algorithm>
#include <cctype>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::remote {
namespace {

namespace json = boost::json;

using text::to_lower;

result<json::value> parse_json(std::string_view text, std::string_view what) {
    boost::system::error_code failure;
    json::value value = json::parse(text, failure);
    if (failure) {
        return make_error(error_kind::upstream, "the GitHub API's " + std::string(what) + " is not JSON: " + failure.message());
    }
    return value;
}

result<release_asset> parse_asset(const json::value& value) {
    const auto* object = value.if_object();
    if (object == nullptr) return make_error(error_kind::upstream, "a release asset from the GitHub API is not an object");
    release_asset asset;
    const auto* id = object->if_contains("id");
    const auto* name = object->if_contains("name");
    const auto* size = object->if_contains("size");
    const auto* url = object->if_contains("browser_download_url");
    if (id == nullptr || !id->is_int64() || name == nullptr || !name->is_string() || size == nullptr ||
        !(size->is_int64() || size->is_uint64()) || url == nullptr || !url->is_string()) {
        return make_error(error_kind::upstream,
                          "a release asset from the GitHub API lacks id, name, size or browser_download_url");
    }
    asset.id = id->as_int64();
    asset.name = std::string(name->as_string());
    asset.size = size->is_uint64() ? size->as_uint64() : static_cast<std::uint64_t>(std::max<std::int64_t>(0, size->as_int64()));
    asset.download_url = std::string(url->as_string());
    if (const auto* digest = object->if_contains("digest"); digest != nullptr && digest->is_string()) {
        asset.sha256 = parse_sha256_digest(digest->as_string());
    }
    return asset;
}

result<std::vector<release_asset>> parse_asset_array(const json::value& value) {
    const auto* array = value.if_array();
    if (array == nullptr) return make_error(error_kind::upstream, "the GitHub API's asset list is not an array");
    std::vector<release_asset> assets;
    for (const auto& item : *array) {
        auto asset = parse_asset(item);
        if (!asset) return asset.error();
        assets.push_back(std::move(asset).value());
    }
    return assets;
}

bool repository_char(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
}

std::string trimmed_base(std::string_view api_url) {
    while (api_url.ends_with('/')) api_url.remove_suffix(1);
    return std::string(api_url);
}

std::string encoded_segment(std::string_view text) {
    return boost::urls::encode(text, boost::urls::unreserved_chars);
}

}  // namespace

result<release> parse_release(std::string_view text) {
    auto value = parse_json(text, "release");
    if (!value) return value.error();
    const auto* object = value->if_object();
    if (object == nullptr) return make_error(error_kind::upstream, "the GitHub API's release is not an object");
    const auto* id = object->if_contains("id");
    const auto* tag = object->if_contains("tag_name");
    if (id == nullptr || !id->is_int64() || tag == nullptr || !tag->is_string()) {
        return make_error(error_kind::upstream, "the GitHub API's release lacks id or tag_name");
    }
    release found;
    found.id = id->as_int64();
    found.tag = std::string(tag->as_string());
    if (const auto* assets = object->if_contains("assets"); assets != nullptr) {
        auto parsed = parse_asset_array(*assets);
        if (!parsed) return parsed.error();
        found.assets = std::move(parsed).value();
    }
    return found;
}

result<std::vector<release_asset>> parse_assets(std::string_view text) {
    auto value = parse_json(text, "asset list");
    if (!value) return value.error();
    return parse_asset_array(*value);
}

std::optional<std::string> parse_sha256_digest(std::string_view digest) {
    constexpr std::string_view prefix = "sha256:";
    if (digest.size() != prefix.size() + 64 || !text::starts_with_ignoring_case(digest, prefix)) return std::nullopt;
    auto hex = to_lower(digest.substr(prefix.size()));
    if (!crypto::is_sha256_hex(hex)) return std::nullopt;
    return hex;
}

std::optional<std::string> next_page_url(std::string_view link_header) {
    // <url>; rel="next", <url>; rel="last"; rel may also be a space-separated list.
    for (auto open = link_header.find('<'); open != std::string_view::npos;) {
        const auto close = link_header.find('>', open);
        if (close == std::string_view::npos) return std::nullopt;
        const auto url = link_header.substr(open + 1, close - open - 1);
        const auto following = link_header.find('<', close);
        const auto params = to_lower(link_header.substr(close + 1, following - close - 1));
        if (const auto at = params.find("rel="); at != std::string::npos) {
            std::string_view value = std::string_view(params).substr(at + 4);
            if (value.starts_with('"')) {
                value.remove_prefix(1);
                value = value.substr(0, value.find('"'));
            } else {
                value = value.substr(0, value.find_first_of(";, "));
            }
            for (std::size_t start = 0; start <= value.size();) {
                const auto space = value.find(' ', start);
                if (value.substr(start, space - start) == "next") return std::string(url);
                if (space == std::string_view::npos) break;
                start = space + 1;
            }
        }
        open = following;
    }
    return std::nullopt;
}

result<repository_name> parse_repository(std::string_view text) {
    const auto slash = text.find('/');
    const auto owner = text.substr(0, slash);
    const auto name = slash == std::string_view::npos ? std::string_view{} : text.substr(slash + 1);
    const auto valid = [](std::string_view part) {
        return !part.empty() && part != "." && part != ".." && std::all_of(part.begin(), part.end(), repository_char);
    };
    if (slash == std::string_view::npos || !valid(owner) || !valid(name)) {
        return invalid("\"" + std::string(text) + "\" is not a GitHub repository: give it as OWNER/REPO, e.g. "
                       "Dao-AILab/flash-attention");
    }
    return repository_name{std::string(owner), std::string(name)};
}

std::optional<release_download> parse_release_download_url(std::string_view url, std::string_view api_url) {
    auto parsed = boost::urls::parse_absolute_uri(url);
    auto api = boost::urls::parse_absolute_uri(api_url);
    if (!parsed || !api) return std::nullopt;
    const std::string host = to_lower(parsed->encoded_authority());
    const std::string api_host = to_lower(api->encoded_authority());
    if (host != api_host && "api." + host != api_host) return std::nullopt;
    std::vector<std::string> segments;
    for (auto segment : parsed->segments()) segments.emplace_back(segment);
    if (segments.size() != 6 || segments[2] != "releases" || segments[3] != "download") return std::nullopt;
    auto repository = parse_repository(segments[0] + "/" + segments[1]);
    if (!repository) return std::nullopt;
    return release_download{std::move(repository).value(), segments[4], segments[5]};
}

result<std::string> url_filename(std::string_view url) {
    auto parsed = boost::urls::parse_absolute_uri(url);
    if (!parsed) return invalid("\"" + std::string(url) + "\" is not an absolute URL: " + parsed.error().message());
    auto segments = parsed->segments();
    if (segments.empty()) return invalid("the URL " + std::string(url) + " names no file: it must end in a wheel's or an sdist's filename");
    std::string last = *std::prev(segments.end());
    if (last.empty()) return invalid("the URL " + std::string(url) + " ends in '/': it must end in a wheel's or an sdist's filename");
    return last;
}

std::string release_by_tag_url(std::string_view api_url, const repository_name& repository, std::string_view tag) {
    return trimmed_base(api_url) + "/repos/" + repository.owner + "/" + repository.name + "/releases/tags/" +
           encoded_segment(tag);
}

std::string release_assets_url(std::string_view api_url, const repository_name& repository, std::int64_t release_id) {
    return trimmed_base(api_url) + "/repos/" + repository.owner + "/" + repository.name + "/releases/" +
           std::to_string(release_id) + "/assets?per_page=100";
}

std::string release_asset_api_url(std::string_view api_url, const repository_name& repository, std::int64_t asset_id) {
    return trimmed_base(api_url) + "/repos/" + repository.owner + "/" + repository.name + "/releases/assets/" +
           std::to_string(asset_id);
}

}  // namespace wheelhouse::remote
