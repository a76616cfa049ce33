#include "wheelhouse/remote/issuer_key_fetcher.hpp"

#include <map>
#include <memory>
#include <mutex>

#include <boost/url/parse.hpp>

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::remote {
namespace {

// A key set is a few KiB from a host that answers in milliseconds; one that takes longer is down.
constexpr std::chrono::seconds key_fetch_deadline{20};

class issuer_clients {
public:
    explicit issuer_clients(client_settings base) : base_(std::move(base)) {}

    result<std::string> get(const std::string& url, std::size_t max_bytes) {
        const auto parsed = boost::urls::parse_uri(url);
        if (!parsed) return invalid("'" + url + "' is not a URL");
        auto& client = client_for(text::to_lower(parsed->host_address()));
        fetch_request request;
        request.url = url;
        request.headers = {{"Accept", "application/json"}};
        request.max_body = max_bytes;
        request.follow_redirects = false;  // the keys are the issuer's own, on its own host
        auto response = client.fetch(request);
        if (!response) return response.error();
        if (response->status != 200)
            return make_error(error_kind::upstream, "answered HTTP " + std::to_string(response->status) + ", not 200");
        return std::move(response->body);
    }

private:
    http_client& client_for(const std::string& host) {
        std::lock_guard lock(mutex_);
        auto& client = clients_[host];
        if (!client) {
            auto settings = base_;
            settings.policy.allowed_hosts = {host};
            settings.policy.allow_plain_http = false;
            settings.max_redirects = 0;
            settings.total_timeout = key_fetch_deadline;
            client = std::make_unique<http_client>(std::move(settings));
        }
        return *client;
    }

    client_settings base_;
    std::mutex mutex_;
    std::map<std::string, std::unique_ptr<http_client>> clients_;  // by host; as many as issuers trusted
};

}  // namespace

oidc::key_cache::fetcher make_issuer_key_fetcher(const client_settings& base) {
    auto clients = std::make_shared<issuer_clients>(base);
    return [clients](const std::string& url, std::size_t max_bytes) { return clients->get(url, max_bytes); };
}

}  // namespace wheelhouse::remote
