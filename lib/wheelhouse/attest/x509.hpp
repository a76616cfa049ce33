#pragma once
// Certificates and public keys as Sigstore hands them over, through OpenSSL 3: DER and PEM
// certificates, DER public keys, the ECDSA signatures Fulcio's leaf keys and Rekor's log key
// make, and the UTF8String extensions Fulcio writes its OIDC claims into. Pure.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <openssl/types.h>

#include "wheelhouse/result.hpp"

namespace wheelhouse::attest {

// The certificate `der` holds, exactly (no bytes after it); null otherwise.
std::shared_ptr<X509> parse_certificate(std::string_view der);
// The one certificate a PEM text holds (Rekor's entries name their signer so); null otherwise.
std::shared_ptr<X509> parse_pem_certificate(std::string_view pem);
// The DER encoding of a certificate.
std::string der_of(const X509& certificate);
// The public key a DER SubjectPublicKeyInfo holds, exactly; null otherwise.
std::shared_ptr<EVP_PKEY> parse_public_key(std::string_view der);

enum class ec_curve { p256, p384 };
// The curve of an EC key on P-256 or P-384; nullopt for any other key.
std::optional<ec_curve> ec_curve_of(const EVP_PKEY& key) noexcept;

// Whether `signature` (DER ECDSA) is `key`'s signature of `message` with the hash that goes with
// its curve (SHA-256 for P-256, SHA-384 for P-384), as Sigstore's clients sign. False for any
// other key.
bool verify_ecdsa(const EVP_PKEY& key, std::string_view message, std::string_view signature) noexcept;

// The value of the extension `oid` (dotted) as the string of the DER UTF8String it holds (how
// Fulcio writes 1.3.6.1.4.1.57264.1.8 and later); nullopt when absent, present twice, or not a
// UTF8String. `raw`: the extension's octets as they are (the deprecated 57264.1.1 to .6).
std::optional<std::string> utf8_extension(const X509& certificate, std::string_view oid, bool raw = false);

}  // namespace wheelhouse::attest
