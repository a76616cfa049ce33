#include "wheelhouse/oidc/jwt.hpp"

#include <array>

#include <boost/json.hpp>

#include "wheelhouse/text/base64.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {


constexpr std::array<std::pair<algorithm, std::string_view>, 5> algorithm_names{{
    {algorithm::rs256, "RS256"},
    {algorithm::rs384, "RS384"},
    {algorithm::rs512, "RS512"},
    {algorithm::es256, "ES256"},
    {algorithm::es384, "ES384"},
}};

error refused(std::string reason) { return invalid("the identity token " + std::move(reason)); }

result<boost::json::object> decoded_object(std::string_view part, std::string_view which) {
    const auto bytes = text::base64url_decode(part);
    if (!bytes) return refused("has a " + std::string(which) + " that is not unpadded base64url");
    auto object = text::parse_json_object(*bytes);
    if (!object) return refused("has a " + std::string(which) + " that is " + object.error().message);
    return std::move(*object);
}

result<void> check_header(const boost::json::object& header, unverified_token& token) {
    const auto alg = string_claim(header, "alg");
    if (!alg) return refused("names no signature algorithm (\"alg\")");
    const auto known = algorithm_named(*alg);
    if (!known) {
        return refused("is signed with " + text::quoted(*alg) +
                       "; only RS256, RS384, RS512, ES256 and ES384 are accepted (never none or HMAC)");
    }
    token.alg = *known;
    const auto kid = string_claim(header, "kid");
    if (!kid || kid->empty()) return refused("names no signing key (\"kid\"), so no published key can check it");
    token.key_id = std::string(*kid);
    if (header.contains("typ")) {
        const auto typ = string_claim(header, "typ");
        if (!typ || (*typ != "JWT" && *typ != "jwt")) return refused("has a \"typ\" other than JWT");
    }
    // RFC 7515 section 4.1.11: an extension the recipient does not understand must be refused.
    if (header.contains("crit")) return refused("has a \"crit\" header, and no JOSE extension is understood here");
    return {};
}

}  // namespace

std::string_view name_of(algorithm which) noexcept {
    for (const auto& [value, name] : algorithm_names) {
        if (value == which) return name;
    }
    return "RS256";
}

std::optional<algorithm> algorithm_named(std::string_view name) noexcept {
    for (const auto& [value, known] : algorithm_names) {
        if (known == name) return value;
    }
    return std::nullopt;
}

std::optional<std::string_view> string_claim(const boost::json::object& claims, std::string_view name) {
    const auto* value = claims.if_contains(name);
    if (value == nullptr || !value->is_string()) return std::nullopt;
    const auto& text = value->get_string();
    return std::string_view(text.data(), text.size());
}

result<unverified_token> parse_token(std::string_view token) {
    if (token.size() > max_token_bytes) {
        return refused("is " + std::to_string(token.size()) + " bytes; CI identity tokens are a few KiB, at most " +
                       std::to_string(max_token_bytes) + " are read");
    }
    const auto first = token.find('.');
    const auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
        return refused("is not a JSON Web Token (three base64url parts joined by '.')");
    unverified_token parsed;
    auto header = decoded_object(token.substr(0, first), "header");
    if (!header) return header.error();
    if (auto checked = check_header(*header, parsed); !checked) return checked.error();
    auto claims = decoded_object(token.substr(first + 1, second - first - 1), "payload");
    if (!claims) return claims.error();
    parsed.claims = std::move(*claims);
    auto signature = text::base64url_decode(token.substr(second + 1));
    if (!signature || signature->empty()) return refused("has a signature that is empty or not unpadded base64url");
    parsed.signature = std::move(*signature);
    parsed.signing_input = token.substr(0, second);
    return parsed;
}

}  // namespace wheelhouse::oidc
