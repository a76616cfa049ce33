#include "wheelhouse/attest/trust_root.hpp"

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <charconv>
#include <ctime>

#include "wheelhouse/attest/x509.hpp"
#include "wheelhouse/text/base64.hpp"
#include "wheelhouse/text/json_object.hpp"

namespace wheelhouse::attest {
namespace {

namespace json = boost::json;

error bad_root(std::string reason) { return invalid("the Sigstore trust root " + std::move(reason)); }

const json::object* object_at(const json::object& parent, std::string_view key) {
    const auto* found = parent.if_contains(key);
    return found ? found->if_object() : nullptr;
}

std::optional<std::string> bytes_at(const json::object& parent, std::string_view key) {
    const auto* found = parent.if_contains(key);
    if (!found || !found->is_string()) return std::nullopt;
    const auto& text = found->get_string();
    return text::base64_decode(std::string_view(text.data(), text.size()));
}

result<validity> validity_at(const json::object& parent, std::string_view where) {
    validity valid;
    const auto* span = object_at(parent, "validFor");
    if (!span) return bad_root(std::string(where) + " has no validFor");
    const auto* start = span->if_contains("start");
    if (!start || !start->is_string()) return bad_root(std::string(where) + " has no validFor.start");
    const auto from = parse_rfc3339_utc(std::string_view(start->get_string()));
    if (!from) return bad_root(std::string(where) + "'s validFor.start is not an RFC 3339 UTC time");
    valid.from = *from;
    if (const auto* end = span->if_contains("end")) {
        const auto until = end->is_string() ? parse_rfc3339_utc(std::string_view(end->get_string())) : std::nullopt;
        if (!until) return bad_root(std::string(where) + "'s validFor.end is not an RFC 3339 UTC time");
        valid.until = *until;
    }
    return valid;
}

result<certificate_authority> authority_of(const json::value& entry, std::size_t index) {
    const std::string where = "certificateAuthorities[" + std::to_string(index) + "]";
    const auto* fields = entry.if_object();
    const auto* chain = fields ? object_at(*fields, "certChain") : nullptr;
    const auto* list = chain ? chain->if_contains("certificates") : nullptr;
    if (!list || !list->is_array() || list->get_array().empty())
        return bad_root(where + " has no certChain.certificates");
    certificate_authority authority;
    for (const auto& listed : list->get_array()) {
        const auto der = listed.is_object() ? bytes_at(listed.get_object(), "rawBytes") : std::nullopt;
        auto certificate = der ? parse_certificate(*der) : nullptr;
        if (!certificate) return bad_root(where + " lists a certificate that is not base64 DER X.509");
        authority.chain.push_back(std::move(certificate));
    }
    auto valid = validity_at(*fields, where);
    if (!valid) return valid.error();
    authority.valid = *valid;
    if (const auto* uri = fields->if_contains("uri"); uri && uri->is_string()) authority.uri = uri->get_string();
    return authority;
}

// nullopt for a log whose key this index cannot check signatures with (Rekor v2's Ed25519 logs,
// whose entries carry no signed entry timestamp either): passed over, as an unusable JWK is.
result<std::optional<transparency_log>> log_of(const json::value& entry, std::size_t index) {
    const std::string where = "tlogs[" + std::to_string(index) + "]";
    const auto* fields = entry.if_object();
    const auto* public_key = fields ? object_at(*fields, "publicKey") : nullptr;
    const auto der = public_key ? bytes_at(*public_key, "rawBytes") : std::nullopt;
    auto key = der ? parse_public_key(*der) : nullptr;
    if (!key) return bad_root(where + " has no publicKey.rawBytes that is a base64 DER public key");
    if (!ec_curve_of(*key)) return std::optional<transparency_log>();
    const auto* log_id = object_at(*fields, "logId");
    const auto key_id = log_id ? bytes_at(*log_id, "keyId") : std::nullopt;
    if (!key_id || key_id->empty()) return bad_root(where + " has no base64 logId.keyId");
    auto valid = validity_at(*public_key, where + ".publicKey");
    if (!valid) return valid.error();
    transparency_log log{.base_url = {}, .log_id = *key_id, .key = std::move(key), .valid = *valid};
    if (const auto* url = fields->if_contains("baseUrl"); url && url->is_string()) log.base_url = url->get_string();
    return std::optional(std::move(log));
}

}  // namespace

const transparency_log* trust_root::log_with_id(std::string_view log_id) const noexcept {
    for (const auto& log : logs) {
        if (log.log_id == log_id) return &log;
    }
    return nullptr;
}

std::optional<std::int64_t> parse_rfc3339_utc(std::string_view text) noexcept {
    // YYYY-MM-DDTHH:MM:SS, an optional fraction of 1 to 9 digits, then Z.
    constexpr std::string_view shape = "dddd-dd-ddTdd:dd:dd";
    if (text.size() < shape.size() + 1 || text.size() > shape.size() + 11 || text.back() != 'Z') return std::nullopt;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        const bool digit = text[i] >= '0' && text[i] <= '9';
        if (shape[i] == 'd' ? !digit : text[i] != shape[i]) return std::nullopt;
    }
    auto fraction = text.substr(shape.size(), text.size() - shape.size() - 1);
    if (!fraction.empty()) {
        if (fraction.size() < 2 || fraction[0] != '.') return std::nullopt;
        for (const char c : fraction.substr(1)) {
            if (c < '0' || c > '9') return std::nullopt;
        }
    }
    auto number = [&](std::size_t at, std::size_t digits) {
        int value = 0;
        std::from_chars(text.data() + at, text.data() + at + digits, value);
        return value;
    };
    std::tm parts{};
    parts.tm_year = number(0, 4) - 1900;
    parts.tm_mon = number(5, 2) - 1;
    parts.tm_mday = number(8, 2);
    parts.tm_hour = number(11, 2);
    parts.tm_min = number(14, 2);
    parts.tm_sec = number(17, 2);
    if (parts.tm_mon > 11 || parts.tm_mday < 1 || parts.tm_mday > 31 || parts.tm_hour > 23 || parts.tm_min > 59 ||
        parts.tm_sec > 60) {
        return std::nullopt;
    }
    return static_cast<std::int64_t>(timegm(&parts));
}

result<trust_root> parse_trust_root(std::string_view json_text) {
    if (json_text.size() > max_trust_root_bytes)
        return bad_root("is over " + std::to_string(max_trust_root_bytes) + " bytes");
    auto document = text::parse_json_object(json_text);
    if (!document) return bad_root("is not JSON: " + document.error().message);
    trust_root root;
    const auto* authorities = document->if_contains("certificateAuthorities");
    const auto* logs = document->if_contains("tlogs");
    if (!authorities || !authorities->is_array() || authorities->get_array().empty())
        return bad_root("lists no certificateAuthorities (Fulcio)");
    if (!logs || !logs->is_array() || logs->get_array().empty()) return bad_root("lists no tlogs (Rekor)");
    for (const auto& entry : authorities->get_array()) {
        auto authority = authority_of(entry, root.authorities.size());
        if (!authority) return authority.error();
        root.authorities.push_back(std::move(*authority));
    }
    for (std::size_t i = 0; i < logs->get_array().size(); ++i) {
        auto log = log_of(logs->get_array()[i], i);
        if (!log) return log.error();
        if (*log) root.logs.push_back(std::move(**log));
    }
    if (root.logs.empty()) return bad_root("lists no tlogs with an EC P-256 or P-384 key (Rekor v1), the only ones checked here");
    return root;
}

}  // namespace wheelhouse::attest
