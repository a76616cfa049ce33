#include "wheelhouse/remote/github_api.hpp"

#include <charconv>
#include <ctime>
#include <thread>

namespace wheelhouse::remote {
namespace {

constexpr int max_attempts = 3;
constexpr int max_asset_pages = 100;  // 10,000 assets: far past any real release

std::optional<long long> number(std::string_view text) {
    long long value = 0;
    const auto [end, code] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (code != std::errc{} || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::string utc_time(long long unix_seconds) {
    const std::time_t time = static_cast<std::time_t>(unix_seconds);
    std::tm parts{};
    gmtime_r(&time, &parts);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &parts);
    return text;
}

}  // namespace

header_list asset_download_headers(std::string_view token) {
    header_list headers{{"Accept", "application/octet-stream"}};
    if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + std::string(token));
    return headers;
}

std::string rate_limit_message(std::string_view reset_header, bool with_token) {
    std::string message = "GitHub's API rate limit is used up";
    if (auto reset = number(reset_header)) {
        message += " until " + utc_time(*reset);
    }
    message += with_token ? "; try again after the reset"
                          : "; try again after the reset, or configure a token (--github-token or "
                            "WHEELHOUSE_GITHUB_TOKEN) for a higher limit";
    return message;
}

result<fetch_response> github_api::get(const std::string& url, std::string_view what) {
    fetch_request request;
    request.url = url;
    request.headers = {{"Accept", "application/vnd.github+json"}, {"X-GitHub-Api-Version", "2022-11-28"}};
    if (!settings_.token.empty()) request.headers.emplace_back("Authorization", "Bearer " + settings_.token);
    for (int attempt = 1;; ++attempt) {
        auto response = client_.fetch(request);
        if (!response) {
            return make_error(response.error().kind, "asking GitHub's API for " + std::string(what) + ": " +
                                                         response.error().message);
        }
        const unsigned status = response->status;
        if (status == 200) return response;
        if (status == 403 || status == 429) {
            const auto retry_after = number(response->header("retry-after"));
            if (retry_after && *retry_after >= 0 && std::chrono::seconds(*retry_after) <= settings_.max_retry_after &&
                attempt < max_attempts) {
                std::this_thread::sleep_for(std::chrono::seconds(*retry_after));
                continue;
            }
            if (response->header("x-ratelimit-remaining") == "0" || status == 429) {
                return make_error(error_kind::unavailable,
                                  rate_limit_message(response->header("x-ratelimit-reset"), !settings_.token.empty()));
            }
            return make_error(error_kind::upstream, "GitHub's API refused " + std::string(what) + " (" +
                                                        std::to_string(status) + ")" +
                                                        (settings_.token.empty() ? "; a private repository needs a token "
                                                                                   "(--github-token)"
                                                                                 : "; check the token's access"));
        }
        if (status == 404) {
            return make_error(error_kind::not_found,
                              "GitHub's API has no " + std::string(what) +
                                  (settings_.token.empty() ? " (a private repository needs a token: --github-token)" : ""));
        }
        if (status == 401) {
            return make_error(error_kind::upstream, "GitHub's API refused the configured token (401): check "
                                                    "--github-token");
        }
        return make_error(error_kind::upstream, "GitHub's API answered " + std::to_string(status) + " for " +
                                                    std::string(what));
    }
}

result<release> github_api::release_by_tag(const repository_name& repository, std::string_view tag) {
    const std::string where = "release " + std::string(tag) + " of " + repository.owner + "/" + repository.name;
    // e.g. "GitHub's API has no release v9 of owner/repo"
    auto answer = get(release_by_tag_url(settings_.api_url, repository, tag), where);
    if (!answer) return answer.error();
    auto found = parse_release(answer->body);
    if (!found) return found.error();

    // The embedded list stops at GitHub's first page; the assets endpoint has them all.
    std::vector<release_asset> assets;
    std::string url = release_assets_url(settings_.api_url, repository, found->id);
    for (int page = 1;; ++page) {
        if (page > max_asset_pages) {
            return make_error(error_kind::upstream, "the assets of " + where + " run past " +
                                                        std::to_string(max_asset_pages) + " pages");
        }
        auto listed = get(url, "the assets of " + where);
        if (!listed) return listed.error();
        auto parsed = parse_assets(listed->body);
        if (!parsed) return parsed.error();
        for (auto& asset : *parsed) assets.push_back(std::move(asset));
        auto next = next_page_url(listed->header("link"));
        if (!next) break;
        url = std::move(*next);
    }
    found->assets = std::move(assets);
    return found;
}

}  // namespace wheelhouse::remote
