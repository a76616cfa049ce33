#include "wheelhouse/app/routes/oidc_routes.hpp"

#include <algorithm>
#include <array>

#include <boost/json.hpp>
#include <boost/url/parse.hpp>
#include <spdlog/spdlog.h>

#include "wheelhouse/app/answers.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/oidc/exchange.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::app::trusted_publishing {
namespace {

namespace json = boost::json;

// PEP 807's one feature this index has: a token usable until it expires.
constexpr std::string_view multi_use_token = "multi-use-token";

// 422 for what the client sent, as Warehouse answers every refused exchange.
route_answer refused(const route_request& request, std::string_view code, const error& failure) {
    return publishing_refusal(request.header(), http::status::unprocessable_entity, code, describe(failure));
}

// The identity token of the body, {"token": "...", "features": [...]}; extra keys are ignored,
// as PyPI ignores them.
result<std::string> identity_token_of(const std::string& body) {
    auto object = text::parse_json_object(body);
    if (!object) return invalid("the body must be a JSON object {\"token\": \"<identity token>\"}: " + object.error().message);
    const auto* token = object->if_contains("token");
    if (token == nullptr || !token->is_string())
        return invalid("the body has no \"token\" string: send {\"token\": \"<the CI's identity token>\"}");
    if (const auto* features = object->if_contains("features"); features != nullptr) {
        const bool supported = features->is_array() && std::all_of(features->get_array().begin(), features->get_array().end(),
            [](const json::value& feature) { return feature.is_string() && feature.get_string() == multi_use_token; });
        if (!supported) return invalid("this index mints only multi-use tokens: send \"features\": [\"multi-use-token\"], or none");
    }
    return std::string(token->get_string());
}

// Which refusal code PyPI gives each kind of refused exchange (warehouse/oidc/views.py).
std::string_view code_of(error_kind kind) {
    switch (kind) {
        case error_kind::forbidden: return "invalid-publisher";
        case error_kind::conflict: return "invalid-reuse-token";
        default: return "invalid-token";
    }
}

// The index's root as clients reach it, and that root's path: --public-url's, else this
// request's scheme and Host before --public-url's path (or "/"). nullopt for a Host no client sends.
struct index_root {
    std::string url;   // "https://pkgs.example.com/wheels/"
    std::string path;  // "/wheels/"
};

std::optional<index_root> root_of(const route_context& context, const route_request& request) {
    constexpr std::string_view files = "files/";
    const std::string_view files_base = context.settings.files_base;  // "<root>files/" (static_export/files_base)
    if (files_base.ends_with(files) && files_base.find("://") != std::string_view::npos) {
        const std::string url(files_base.substr(0, files_base.size() - files.size()));
        const auto parsed = boost::urls::parse_uri(url);
        if (!parsed) return std::nullopt;
        return index_root{url, std::string(parsed->encoded_path())};
    }
    const auto host = field_value(request.header(), http::field::host);
    const bool plain = !host.empty() && host.size() <= 255 && std::all_of(host.begin(), host.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-' ||
               c == ':' || c == '[' || c == ']';
    });
    if (!plain) return std::nullopt;
    const std::string path(files_base.ends_with(files) ? files_base.substr(0, files_base.size() - files.size()) : "/");
    return index_root{context.settings.publishing.scheme + "://" + std::string(host) + path, path};
}

}  // namespace

route_answer audience(route_context& context, route_request& request) {
    return json_response(request.header(), http::status::ok,
                         json::serialize(json::object{{"audience", context.settings.publishing.audience}}));
}

route_answer mint_token(route_context& context, route_request& request) {
    auto identity_token = identity_token_of(request.incoming.body);
    if (!identity_token) return refused(request, "invalid-payload", identity_token.error());
    auto minted = context.exchange.exchange(*identity_token);
    if (!minted) {
        const auto& failure = minted.error();
        spdlog::warn("trusted publishing: refused a token from {}: {}", request.incoming.peer.to_string(), describe(failure));
        if (failure.kind == error_kind::unavailable) {
            http::fields retry;
            retry.set(http::field::retry_after, std::to_string(context.exchange.retry_after(*identity_token).count()));
            return request.refuse(failure, std::move(retry));
        }
        if (failure.kind == error_kind::internal) return request.refuse(failure);
        return refused(request, code_of(failure.kind), failure);
    }
    spdlog::info("trusted publishing: minted token '{}' for {}", minted->name, request.incoming.peer.to_string());
    json::object body{{"success", true}, {"token", minted->secret}, {"expires", minted->expires_seconds}};
    return json_response(request.header(), http::status::ok, json::serialize(body));
}

route_answer discovery(route_context& context, route_request& request) {
    const auto root = root_of(context, request);
    const auto key = request.target.query_value("discover");  // the upload URL's path, decoded
    if (!root) {
        return request.refuse(make_error(error_kind::not_found, "send a Host header of a name or an address and "
                                                                "port: the answer names this index's URLs by it"));
    }
    if (!key) return request.refuse(make_error(error_kind::not_found, "ask ?discover=<the upload URL's path>"));
    const std::array uploads{root->path + "legacy/", root->path + "legacy", root->path + "api/v1/files/",
                             root->path + "api/v1/files"};
    if (std::find(uploads.begin(), uploads.end(), *key) == uploads.end()) {
        return request.refuse(make_error(error_kind::not_found, "trusted publishing here uploads to " + root->path +
                                                                    "legacy/; no other path takes uploads"));
    }
    const json::array features{json::string(multi_use_token)};
    json::object body{{"audience-endpoint", root->url + "_/oidc/audience"},
                      {"token-mint-endpoint", root->url + "_/oidc/mint-token"},
                      {"features", features},
                      {"default-features", features}};
    return json_response(request.header(), http::status::ok, json::serialize(body));
}

}  // namespace wheelhouse::app::trusted_publishing
