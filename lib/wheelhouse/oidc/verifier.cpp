#include "wheelhouse/oidc/verifier.hpp"

#include <cmath>
#include <limits>
#include <optional>

#include <boost/json.hpp>

#include "wheelhouse/oidc/signature.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::oidc {
namespace {

namespace json = boost::json;

error refused(std::string reason) { return invalid("the identity token " + std::move(reason)); }

// A NumericDate (RFC 7519 section 2): seconds, integral or not; nullopt for anything else.
std::optional<std::int64_t> seconds_of(const json::value& value) {
    if (value.is_int64()) return value.get_int64();
    if (value.is_uint64()) {
        if (value.get_uint64() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return std::nullopt;
        return static_cast<std::int64_t>(value.get_uint64());
    }
    if (value.is_double()) {
        const double seconds = std::floor(value.get_double());
        if (!std::isfinite(seconds) || std::abs(seconds) > 1e15) return std::nullopt;
        return static_cast<std::int64_t>(seconds);
    }
    return std::nullopt;
}

// The time claim `name`: nullopt when absent (an error when required), or why it is unreadable.
result<std::optional<std::int64_t>> time_claim(const json::object& claims, std::string_view name, bool required) {
    const auto* value = claims.if_contains(name);
    if (value == nullptr) {
        if (required) return refused("has no \"" + std::string(name) + "\" claim; it is required");
        return std::optional<std::int64_t>();
    }
    const auto seconds = seconds_of(*value);
    if (!seconds) return refused("has a \"" + std::string(name) + "\" claim that is not a time in seconds");
    return std::optional(*seconds);
}

result<void> check_audience(const json::object& claims, const std::string& audience) {
    const auto* aud = claims.if_contains("aud");
    if (aud == nullptr) return refused("names no audience (\"aud\"); request it for " + text::quoted(audience));
    const json::value* only = aud;
    if (aud->is_array()) {
        const auto& list = aud->get_array();
        if (list.size() != 1) {
            return refused("names " + std::to_string(list.size()) + " audiences; a token for this index must name "
                           "only " + text::quoted(audience) + " (GET /_/oidc/audience)");
        }
        only = &list.front();
    }
    if (!only->is_string()) return refused("has an \"aud\" that is not a string");
    const std::string_view named(only->get_string().data(), only->get_string().size());
    if (named != audience) {
        return refused("is for the audience " + text::quoted(named) + ", not this index's " + text::quoted(audience) +
                       "; request it with the audience GET /_/oidc/audience gives");
    }
    return {};
}

result<void> check_times(const json::object& claims, const token_rules& rules, std::int64_t& expires) {
    auto exp = time_claim(claims, "exp", true);
    if (!exp) return exp.error();
    auto iat = time_claim(claims, "iat", true);
    if (!iat) return iat.error();
    auto nbf = time_claim(claims, "nbf", false);
    if (!nbf) return nbf.error();
    const auto now = rules.now_seconds;
    const auto leeway = rules.leeway_seconds;
    expires = **exp;
    if (now > **exp + leeway)
        return refused("expired " + std::to_string(now - **exp) + " s ago; request a new one just before the exchange");
    if (**iat > now + leeway)
        return refused("was issued " + std::to_string(**iat - now) + " s in the future; check both clocks");
    if (*nbf && **nbf > now + leeway)
        return refused("is not valid for another " + std::to_string(**nbf - now) + " s (\"nbf\")");
    if (**exp - **iat > rules.max_lifetime_seconds) {
        return refused("is valid for " + std::to_string(**exp - **iat) + " s; CI tokens live minutes, and at most " +
                       std::to_string(rules.max_lifetime_seconds) + " s are accepted");
    }
    return {};
}

}  // namespace

result<std::string> claimed_issuer(const unverified_token& token) {
    const auto issuer = string_claim(token.claims, "iss");
    if (!issuer || issuer->empty()) return refused("names no issuer (\"iss\")");
    return std::string(*issuer);
}

result<verified_token> verify_token(const unverified_token& token, const verification_key& key, const token_rules& rules) {
    if (auto signed_by = check_signature(token.alg, key, token.signing_input, token.signature); !signed_by)
        return signed_by.error();
    const auto& claims = token.claims;
    const auto issuer = string_claim(claims, "iss");
    if (issuer != rules.issuer)
        return refused("is from the issuer " + (issuer ? text::quoted(*issuer) : std::string("(none)")) + ", not " + text::quoted(rules.issuer));
    if (auto audience = check_audience(claims, rules.audience); !audience) return audience.error();
    verified_token verified;
    if (auto times = check_times(claims, rules, verified.expires_seconds); !times) return times.error();
    const auto jti = string_claim(claims, "jti");
    if (!jti || jti->empty() || jti->size() > rules.max_token_id_bytes)
        return refused("has no token id (\"jti\") of 1 to " + std::to_string(rules.max_token_id_bytes) +
                       " bytes, so it could be used twice; it is refused");
    verified.claims = claims;
    verified.issuer = std::string(*issuer);
    verified.token_id = std::string(*jti);
    return verified;
}

}  // namespace wheelhouse::oidc
