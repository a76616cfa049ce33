#pragma once
// Requests to GitHub's REST API for releases, with the configured token and its rate limits
// respected: a 403/429 with X-RateLimit-Remaining 0 is an error naming the reset time, and a
// short Retry-After is waited out and retried.
//
// Thread safety: as http_client; blocking, for a worker or the command line.

#include <chrono>
#include <string>
#include <vector>

#include "wheelhouse/remote/github_release.hpp"
#include "wheelhouse/remote/http_client.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::remote {

struct github_settings {
    std::string api_url = "https://api.github.com";
    std::string token;  // empty: anonymous (public repositories, 60 requests an hour)
    std::chrono::seconds max_retry_after{30};  // longer waits are reported instead of waited
};

class github_api {
public:
    github_api(http_client& client, github_settings settings) : client_(client), settings_(std::move(settings)) {}

    // The release tagged `tag`, with every asset (the assets list followed page by page).
    // not_found when the repository or tag does not exist (or is private without a token).
    result<release> release_by_tag(const repository_name& repository, std::string_view tag);

    const github_settings& settings() const noexcept { return settings_; }

private:
    // A GET of an API URL, JSON expected; `what` names it in messages. Link: next page in `next`.
    result<fetch_response> get(const std::string& url, std::string_view what);

    http_client& client_;
    github_settings settings_;
};

// The headers that make an asset's API URL (release_asset_api_url) answer with its bytes, by a
// redirect to the storage host, instead of its JSON: how a private repository's asset is read.
// The token goes with them when there is one; it is only ever taken from the settings.
header_list asset_download_headers(std::string_view token);

// The message for a rate-limited answer: when it resets (from X-RateLimit-Reset, Unix seconds)
// and what to do. Pure, for tests.
std::string rate_limit_message(std::string_view reset_header, bool with_token);

}  // namespace wheelhouse::remote
