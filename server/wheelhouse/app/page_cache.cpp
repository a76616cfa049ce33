#include "wheelhouse/app/page_cache.hpp"


#include <openssl/evp.h>

namespace wheelhouse::app {

std::string entity_tag_for(std::string_view body) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_Digest(body.data(), body.size(), digest, &length, EVP_sha256(), nullptr);
    static constexpr char hex[] = "0123456789abcdef";
    std::string tag = "\"";
    for (unsigned i = 0; i < 16; ++i) {
        tag.push_back(hex[digest[i] >> 4]);
        tag.push_back(hex[digest[i] & 0x0F]);
    }
    tag.push_back('"');
    return tag;
}

std::string page_cache::flatten(const page_key& key) {
    std::string flat;
    flat.reserve(key.scope.size() + key.project.size() + 3);
    flat.push_back(key.format == pep691::page_format::json ? 'j' : 'h');
    flat += key.scope;
    flat.push_back('\0');
    flat += key.project;
    return flat;
}

result<std::optional<rendered_page>> page_cache::get_or_render(const page_key& key, const renderer& render) {
    const auto flat = flatten(key);
    std::uint64_t generation_before = 0;
    {
        std::shared_lock lock(mutex_);
        if (auto found = pages_.find(flat); found != pages_.end()) {
            hits_.fetch_add(1, std::memory_order_relaxed);
            return std::optional(found->second);
        }
        generation_before = generation_;
    }
    misses_.fetch_add(1, std::memory_order_relaxed);
    auto body = render();
    if (!body) return body.error();
    if (!*body) return std::optional<rendered_page>();
    rendered_page page{std::make_shared<const std::string>(std::move(**body)), {}};
    page.etag = entity_tag_for(*page.body);

    std::unique_lock lock(mutex_);
    if (generation_ == generation_before && !pages_.contains(flat)) {
        bytes_ += page.body->size();
        pages_.emplace(flat, page);
        keys_by_project_.emplace(key.project, flat);
    }
    return std::optional(std::move(page));
}

void page_cache::invalidate_project(std::string_view project) {
    std::unique_lock lock(mutex_);
    ++generation_;
    for (const std::string& owner : {std::string(project), std::string()}) {
        auto [first, last] = keys_by_project_.equal_range(owner);
        for (auto it = first; it != last; ++it) {
            if (auto page = pages_.find(it->second); page != pages_.end()) {
                bytes_ -= page->second.body->size();
                pages_.erase(page);
            }
        }
        keys_by_project_.erase(owner);
    }
}

void page_cache::clear() {
    std::unique_lock lock(mutex_);
    ++generation_;
    pages_.clear();
    keys_by_project_.clear();
    bytes_ = 0;
}

page_cache::statistics page_cache::stats() const {
    std::shared_lock lock(mutex_);
    return {hits_.load(std::memory_order_relaxed), misses_.load(std::memory_order_relaxed), pages_.size(), bytes_};
}

}  // namespace wheelhouse::app
