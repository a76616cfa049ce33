#include "wheelhouse/attest/attestation.hpp"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <algorithm>
#include <charconv>
#include <set>

#include "wheelhouse/attest/x509.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/text/base64.hpp"
#include "wheelhouse/text/hex.hpp"
#include "wheelhouse/text/json_object.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::attest {
namespace {

namespace json = boost::json;

constexpr std::string_view in_toto_payload_type = "application/vnd.in-toto+json";
constexpr std::string_view in_toto_statement_type = "https://in-toto.io/Statement/v1";
constexpr std::int64_t clock_leeway_seconds = 60;

error refused(std::string reason) { return invalid("the attestation " + std::move(reason)); }

const json::value* member(const json::value& parent, std::string_view key) {
    const auto* fields = parent.if_object();
    return fields ? fields->if_contains(key) : nullptr;
}

std::optional<std::string_view> string_at(const json::value& parent, std::string_view key) {
    const auto* found = member(parent, key);
    if (!found || !found->is_string()) return std::nullopt;
    return std::string_view(found->get_string());
}

std::optional<std::string> base64_at(const json::value& parent, std::string_view key) {
    const auto text = string_at(parent, key);
    return text ? text::base64_decode(*text) : std::nullopt;
}

// protobuf's JSON writes int64 as a string of digits; some writers use a number.
std::optional<std::int64_t> integer_at(const json::value& parent, std::string_view key) {
    const auto* found = member(parent, key);
    if (!found) return std::nullopt;
    if (found->is_int64()) return found->get_int64() >= 0 ? std::optional(found->get_int64()) : std::nullopt;
    if (found->is_uint64()) return std::nullopt;  // past int64: no real log index or time
    if (!found->is_string()) return std::nullopt;
    const std::string_view digits = found->get_string();
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size() || value < 0) return std::nullopt;
    return value;
}

std::string hex_of(std::string_view bytes) {
    return text::to_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}

// DSSE's pre-authentication encoding: what the envelope's signature signs.
std::string pae(std::string_view payload_type, std::string_view payload) {
    return "DSSEv1 " + std::to_string(payload_type.size()) + " " + std::string(payload_type) + " " +
           std::to_string(payload.size()) + " " + std::string(payload);
}

struct decoded_material {
    std::shared_ptr<X509> certificate;
    std::string certificate_der;
    std::string statement;
    std::string signature;
    const json::value* entry = nullptr;
};

result<decoded_material> decode(const json::value& attestation) {
    decoded_material out;
    const auto* version = member(attestation, "version");
    if (!version || !version->is_int64() || version->get_int64() != 1)
        return refused("is not a PEP 740 attestation: its \"version\" must be 1");
    const auto* material = member(attestation, "verification_material");
    const auto* envelope = member(attestation, "envelope");
    if (!material || !material->is_object() || !envelope || !envelope->is_object())
        return refused("is not a PEP 740 attestation: it needs \"verification_material\" and \"envelope\" objects");
    auto der = base64_at(*material, "certificate");
    out.certificate = der ? parse_certificate(*der) : nullptr;
    if (!out.certificate) return refused("certificate is not base64 of one DER X.509 certificate");
    out.certificate_der = std::move(*der);
    const auto* entries = member(*material, "transparency_entries");
    if (!entries || !entries->is_array() || entries->get_array().size() != 1)
        return refused("must carry exactly one transparency log entry in \"transparency_entries\"");
    out.entry = &entries->get_array().front();
    auto statement = base64_at(*envelope, "statement");
    auto signature = base64_at(*envelope, "signature");
    if (!statement || !signature) return refused("envelope needs base64 \"statement\" and \"signature\"");
    out.statement = std::move(*statement);
    out.signature = std::move(*signature);
    return out;
}

// Rekor's signed entry timestamp over this entry, and the entry's body naming this signature,
// certificate and statement: else a SET of any other entry would do.
result<std::int64_t> check_log_entry(const trust_root& root, const decoded_material& material, std::int64_t now) {
    const auto& entry = *material.entry;
    const auto* kind = member(entry, "kindVersion");
    if (!kind || string_at(*kind, "kind") != "dsse" || string_at(*kind, "version") != "0.0.1")
        return refused("transparency log entry is not a Rekor dsse 0.0.1 entry");
    const auto log_index = integer_at(entry, "logIndex");
    const auto integrated = integer_at(entry, "integratedTime");
    const auto* log_id = member(entry, "logId");
    const auto key_id = log_id ? base64_at(*log_id, "keyId") : std::nullopt;
    const auto* promise = member(entry, "inclusionPromise");
    const auto set = promise ? base64_at(*promise, "signedEntryTimestamp") : std::nullopt;
    const auto body = base64_at(entry, "canonicalizedBody");
    if (!log_index || !integrated || !key_id || !body)
        return refused("transparency log entry needs logIndex, integratedTime, logId.keyId and canonicalizedBody");
    if (!set) return refused("transparency log entry has no inclusionPromise.signedEntryTimestamp");
    const auto* log = root.log_with_id(*key_id);
    if (!log) return refused("transparency log entry is from log " + hex_of(*key_id) + ", which the trust root does not list");
    if (!log->valid.contains(*integrated)) return refused("transparency log entry's time is outside its log key's validity");
    if (*integrated > now + clock_leeway_seconds) return refused("transparency log entry's time is in the future");

    // The SET signs the canonical JSON (keys sorted, no spaces) of these four fields.
    const std::string signed_payload = "{\"body\":\"" + text::base64_encode(*body) + "\",\"integratedTime\":" +
                                       std::to_string(*integrated) + ",\"logID\":\"" + hex_of(*key_id) +
                                       "\",\"logIndex\":" + std::to_string(*log_index) + "}";
    if (!verify_ecdsa(*log->key, signed_payload, *set))
        return refused("transparency log entry's signed entry timestamp does not verify with the log's key");

    auto parsed = text::parse_json_object(*body);
    if (!parsed) return refused("transparency log entry's body is not JSON: " + parsed.error().message);
    const json::value body_json(std::move(*parsed));
    const auto* spec = member(body_json, "spec");
    const auto* payload_hash = spec ? member(*spec, "payloadHash") : nullptr;
    const auto* signatures = spec ? member(*spec, "signatures") : nullptr;
    if (string_at(body_json, "kind") != "dsse" || string_at(body_json, "apiVersion") != "0.0.1" || !payload_hash ||
        !signatures || !signatures->is_array() || signatures->get_array().size() != 1) {
        return refused("transparency log entry's body is not a dsse 0.0.1 entry with one signature");
    }
    if (string_at(*payload_hash, "algorithm") != "sha256" ||
        string_at(*payload_hash, "value") != crypto::sha256_hex(material.statement)) {
        return refused("transparency log entry was made for another statement (its payloadHash differs)");
    }
    const auto& logged = signatures->get_array().front();
    if (base64_at(logged, "signature") != material.signature)
        return refused("transparency log entry was made for another signature");
    const auto verifier_pem = base64_at(logged, "verifier");
    const auto verifier = verifier_pem ? parse_pem_certificate(*verifier_pem) : nullptr;
    if (!verifier || der_of(*verifier) != material.certificate_der)
        return refused("transparency log entry was made for another certificate");
    return *integrated;
}

// What Fulcio's leaves are and sigstore-python requires: no CA, key usage digitalSignature and
// extended key usage codeSigning, both present (OpenSSL reports an absent one as every usage).
result<void> check_leaf_usage(X509& leaf) {
    const auto flags = X509_get_extension_flags(&leaf);
    if ((flags & EXFLAG_CA) != 0 || X509_check_ca(&leaf) != 0)
        return refused("certificate is a CA's; a signing certificate must not be one");
    if ((flags & EXFLAG_KUSAGE) == 0 || (X509_get_key_usage(&leaf) & KU_DIGITAL_SIGNATURE) == 0)
        return refused("certificate is not for signatures (no digitalSignature key usage)");
    if ((flags & EXFLAG_XKUSAGE) == 0 || (X509_get_extended_key_usage(&leaf) & XKU_CODE_SIGN) == 0)
        return refused("certificate is not for code signing (no codeSigning extended key usage)");
    return {};
}

// The leaf chains to one of the trust root's authorities, as things stood when it was logged.
result<void> check_chain(const trust_root& root, X509& leaf, std::int64_t at) {
    std::string last_error = "no certificate authority of the trust root was valid then";
    for (const auto& authority : root.authorities) {
        if (!authority.valid.contains(at)) continue;
        std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store(X509_STORE_new(), X509_STORE_free);
        // sk_X509_free is a macro; the stack only borrows the certificates.
        std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)> intermediates(
            sk_X509_new_null(), [](STACK_OF(X509)* stack) { sk_X509_free(stack); });
        std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> context(X509_STORE_CTX_new(),
                                                                                X509_STORE_CTX_free);
        if (!store || !intermediates || !context) return make_error(error_kind::internal, "OpenSSL is out of memory");
        X509_STORE_add_cert(store.get(), authority.chain.back().get());
        for (std::size_t i = 0; i + 1 < authority.chain.size(); ++i) sk_X509_push(intermediates.get(), authority.chain[i].get());
        if (X509_STORE_CTX_init(context.get(), store.get(), &leaf, intermediates.get()) != 1)
            return make_error(error_kind::internal, "OpenSSL could not start a certificate check");
        X509_STORE_CTX_set_time(context.get(), 0, static_cast<time_t>(at));
        const bool chained = X509_verify_cert(context.get()) == 1;
        if (!chained) last_error = X509_verify_cert_error_string(X509_STORE_CTX_get_error(context.get()));
        ERR_clear_error();
        if (chained) return check_leaf_usage(leaf);
    }
    return refused("certificate does not chain to the Sigstore trust root at the time it was logged: " + last_error);
}

result<std::string> check_statement(std::string_view statement, std::string_view filename, std::string_view sha256) {
    auto parsed = text::parse_json_object(statement);
    if (!parsed) return refused("statement is not JSON: " + parsed.error().message);
    const json::value body(std::move(*parsed));
    if (string_at(body, "_type") != in_toto_statement_type)
        return refused("statement is not an in-toto v1 statement (\"_type\")");
    const auto* subjects = member(body, "subject");
    if (!subjects || !subjects->is_array() || subjects->get_array().size() != 1)
        return refused("statement must have exactly one subject");
    const auto& subject = subjects->get_array().front();
    const auto name = string_at(subject, "name");
    const auto wanted = ultranormalized_filename(filename);
    const auto named = name ? ultranormalized_filename(*name) : std::nullopt;
    if (!named || !wanted || *named != *wanted) {
        return refused("subject " + text::quoted(name.value_or(""), 120) + " is not the uploaded file " +
                       text::quoted(filename, 120));
    }
    const auto* digests = member(subject, "digest");
    if (!digests || string_at(*digests, "sha256") != sha256)
        return refused("subject's sha256 digest is not the uploaded file's (" + std::string(sha256) + ")");
    const auto predicate = string_at(body, "predicateType");
    if (predicate != publish_predicate && predicate != slsa_predicate) {
        return refused("predicateType " + text::quoted(predicate.value_or(""), 120) + " is none PyPI knows: " +
                       std::string(publish_predicate) + " or " + std::string(slsa_predicate));
    }
    return std::string(*predicate);
}

signer signer_of(const X509& leaf) {
    auto claim = [&](std::string_view arc) {
        return utf8_extension(leaf, "1.3.6.1.4.1.57264.1." + std::string(arc)).value_or("");
    };
    return signer{.issuer = claim("8"),
                  .source_repository_uri = claim("12"),
                  .owner_id = claim("17"),
                  .build_config_uri = claim("18"),
                  .source_digest = claim("13"),
                  .source_ref = claim("14")};
}

}  // namespace

result<verified_attestation> verify_attestation(const trust_root& root, const json::value& attestation,
                                                std::string_view filename, std::string_view sha256, std::int64_t now) {
    auto material = decode(attestation);
    if (!material) return material.error();
    auto integrated = check_log_entry(root, *material, now);
    if (!integrated) return integrated.error();
    if (auto chained = check_chain(root, *material->certificate, *integrated); !chained) return chained.error();
    const EVP_PKEY* key = X509_get0_pubkey(material->certificate.get());
    if (!key || !ec_curve_of(*key)) return refused("certificate's key is not an EC P-256 or P-384 key");
    if (!verify_ecdsa(*key, pae(in_toto_payload_type, material->statement), material->signature))
        return refused("signature does not verify with the certificate's key");
    auto predicate = check_statement(material->statement, filename, sha256);
    if (!predicate) return predicate.error();
    return verified_attestation{.predicate_type = std::move(*predicate),
                                .signed_by = signer_of(*material->certificate),
                                .integrated_time = *integrated};
}

std::optional<std::string> ultranormalized_filename(std::string_view filename) {
    auto parsed = distribution::parse_archive_name(filename);
    if (!parsed) return std::nullopt;
    auto underscored = [](std::string name) {
        std::replace(name.begin(), name.end(), '-', '_');
        return name;
    };
    if (const auto* sdist = std::get_if<pep625::sdist_filename>(&*parsed)) {
        auto version = pep440::parse(sdist->version_text);
        if (!version) return std::nullopt;
        return underscored(sdist->normalized_name) + "-" + version->to_string() + ".tar.gz";
    }
    const auto& wheel = std::get<pep427::wheel_filename>(*parsed);
    auto sorted_set = [](std::vector<std::string> tags) {
        std::sort(tags.begin(), tags.end());
        tags.erase(std::unique(tags.begin(), tags.end()), tags.end());
        std::string joined;
        for (const auto& tag : tags) joined += (joined.empty() ? "" : ".") + tag;
        return joined;
    };
    std::string out = underscored(wheel.normalized_name) + "-" + wheel.version.to_string();
    if (wheel.build) out += "-" + std::to_string(wheel.build->number) + wheel.build->suffix;
    out += "-" + sorted_set(wheel.python_tags) + "-" + sorted_set(wheel.abi_tags) + "-" + sorted_set(wheel.platform_tags);
    if (wheel.variant_label) out += "-" + *wheel.variant_label;
    return out + ".whl";
}

}  // namespace wheelhouse::attest
