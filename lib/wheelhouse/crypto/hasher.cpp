#include "wheelhouse/crypto/hasher.hpp"

#include <openssl/evp.h>

#include <utility>

#include "wheelhouse/text/hex.hpp"
#include "wheelhouse/text/swar.hpp"

namespace wheelhouse::crypto {

struct hasher::evp_state {
    EVP_MD_CTX* context = nullptr;
    ~evp_state() { EVP_MD_CTX_free(context); }
};

std::string_view name_of(hash_algorithm algorithm) noexcept {
    switch (algorithm) {
        case hash_algorithm::sha256: return "sha256";
        case hash_algorithm::sha384: return "sha384";
        case hash_algorithm::sha512: return "sha512";
        case hash_algorithm::blake2b_256: return "blake2b_256";
        case hash_algorithm::md5: return "md5";
    }
    return "unknown";
}

std::optional<hash_algorithm> algorithm_named(std::string_view name) noexcept {
    for (auto algorithm : {hash_algorithm::sha256, hash_algorithm::sha384, hash_algorithm::sha512,
                           hash_algorithm::blake2b_256, hash_algorithm::md5}) {
        if (name_of(algorithm) == name) return algorithm;
    }
    return std::nullopt;
}

namespace {

// Fetched once for the process: OpenSSL 3 looks an algorithm up by name at every init given
// EVP_sha256() and the like, which costs more than hashing a signature's few hundred bytes.
const EVP_MD* method_of(hash_algorithm algorithm) {
    static EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA2-256", nullptr);
    static EVP_MD* const sha384 = EVP_MD_fetch(nullptr, "SHA2-384", nullptr);
    static EVP_MD* const sha512 = EVP_MD_fetch(nullptr, "SHA2-512", nullptr);
    switch (algorithm) {
        case hash_algorithm::sha256: return sha256;
        case hash_algorithm::sha384: return sha384;
        case hash_algorithm::sha512: return sha512;
        case hash_algorithm::md5: {
            static EVP_MD* const md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);  // absent under FIPS
            return md5;
        }
        case hash_algorithm::blake2b_256: break;
    }
    return nullptr;
}

}  // namespace

hasher::hasher(hash_algorithm algorithm, std::unique_ptr<evp_state> evp) noexcept
    : algorithm_(algorithm), evp_(std::move(evp)) {
    if (algorithm == hash_algorithm::blake2b_256) blake_.emplace(32);
}

hasher::hasher(hasher&&) noexcept = default;
hasher& hasher::operator=(hasher&&) noexcept = default;
hasher::~hasher() = default;

result<hasher> hasher::create(hash_algorithm algorithm) {
    if (algorithm == hash_algorithm::blake2b_256) return hasher(algorithm, nullptr);
    const EVP_MD* method = method_of(algorithm);
    auto state = std::make_unique<evp_state>();
    state->context = EVP_MD_CTX_new();
    if (method == nullptr || state->context == nullptr || EVP_DigestInit_ex(state->context, method, nullptr) != 1) {
        return make_error(error_kind::internal,
                          "OpenSSL cannot compute " + std::string(name_of(algorithm)) + " in this configuration");
    }
    return hasher(algorithm, std::move(state));
}

void hasher::update(std::span<const std::uint8_t> data) noexcept {
    if (blake_) {
        blake_->update(data);
    } else {
        EVP_DigestUpdate(evp_->context, data.data(), data.size());
    }
}

void hasher::update(std::string_view data) noexcept {
    update(std::span(reinterpret_cast<const std::uint8_t*>(data.data()), data.size()));
}

std::vector<std::uint8_t> hasher::finish() {
    if (blake_) {
        std::vector<std::uint8_t> digest(blake_->digest_size());
        blake_->finish(digest);
        return digest;
    }
    std::vector<std::uint8_t> digest(EVP_MAX_MD_SIZE);
    unsigned int length = 0;
    EVP_DigestFinal_ex(evp_->context, digest.data(), &length);
    digest.resize(length);
    return digest;
}

std::string hasher::to_hex(std::span<const std::uint8_t> bytes) { return text::to_hex(bytes); }

std::string sha256_bytes(std::string_view data) {
    auto digest = hasher::create(hash_algorithm::sha256);
    // SHA-256 is always available; a failure here means OpenSSL itself is broken.
    if (!digest) return {};
    digest->update(data);
    const auto bytes = digest->finish();
    return std::string(bytes.begin(), bytes.end());
}

std::string sha256_hex(std::string_view data) {
    const auto bytes = sha256_bytes(data);
    return hasher::to_hex({reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()});
}

bool is_sha256_hex(std::string_view text) noexcept {
    if (text.size() != 64) return false;
    // Every download's URL is checked here: eight bytes a step, each one '0'-'9' or 'a'-'f'.
    std::uint64_t wrong = 0;
    for (std::size_t at = 0; at < 64; at += 8) {
        const auto word = text::swar::load(text.data() + at);
        const auto hex = text::swar::bytes_between(word, '0', '9') | text::swar::bytes_between(word, 'a', 'f');
        wrong |= (word & text::swar::highs) | (~hex & text::swar::highs);
    }
    return wrong == 0;
}

}  // namespace wheelhouse::crypto
