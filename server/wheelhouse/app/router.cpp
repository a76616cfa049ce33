#include "wheelhouse/app/router.hpp"

#include <algorithm>
#include <iterator>

namespace wheelhouse::app {
namespace {

constexpr std::string_view optional_slash = "[/]";

// "/" parses to no segments or to one empty one; the patterns say the latter.
const std::vector<std::string>& segments_of(const http_target::request_target& target) {
    static const std::vector<std::string> root{""};
    return target.segments.empty() ? root : target.segments;
}

}  // namespace

result<router> router::build(std::span<const route> routes) {
    router built;
    for (const auto& declared : routes) {
        auto pattern = compile(declared);
        if (!pattern) return pattern.error();
        built.routes_.push_back(std::move(*pattern));
    }
    for (std::size_t index = 0; index < built.routes_.size(); ++index) {
        const auto& first = built.routes_[index].segments.front();
        if (first.what != segment::kind::literal) {
            built.other_first_.push_back(index);
            for (auto& bucket : built.by_first_) bucket.patterns.push_back(index);
            continue;
        }
        auto bucket = std::find_if(built.by_first_.begin(), built.by_first_.end(),
                                   [&](const first_segment_bucket& each) { return each.first == first.text; });
        if (bucket == built.by_first_.end()) {  // it starts with the capture-first patterns declared before it
            built.by_first_.push_back({first.text, built.other_first_});
            bucket = std::prev(built.by_first_.end());
        }
        bucket->patterns.push_back(index);
    }
    return built;
}

const std::vector<std::size_t>& router::candidates(std::string_view first) const noexcept {
    for (const auto& bucket : by_first_) {
        if (bucket.first == first) return bucket.patterns;
    }
    return other_first_;
}

result<router::compiled> router::compile(const route& declared) {
    std::string_view pattern = declared.pattern;
    auto refuse = [&](std::string_view why) {
        return make_error(error_kind::internal, "route " + std::string(declared.pattern) + ": " + std::string(why));
    };
    if (!pattern.starts_with('/')) return refuse("a pattern starts with '/'");
    if (declared.methods == 0 || declared.handler == nullptr) return refuse("a route needs methods and a handler");
    compiled out{&declared, {}, false};
    if (pattern.ends_with(optional_slash)) {
        out.optional_slash = true;
        pattern.remove_suffix(optional_slash.size());
    }
    pattern.remove_prefix(1);
    while (true) {
        const auto slash = pattern.find('/');
        const auto text = pattern.substr(0, slash);
        segment part{segment::kind::literal, text, {}};
        if (text.starts_with('{')) {
            const auto close = text.find('}');
            if (close == std::string_view::npos || close < 2)
                return refuse("a capture is written {name}, {name}.suffix or {name...}");
            part.text = text.substr(1, close - 1);
            part.suffix = text.substr(close + 1);
            part.what = segment::kind::capture;
            if (part.suffix.find_first_of("{}") != std::string_view::npos) return refuse("one capture a segment");
            if (part.text.ends_with("...")) {
                part.text.remove_suffix(3);
                part.what = segment::kind::rest;
                if (part.text.empty()) return refuse("a capture is written {name}, {name}.suffix or {name...}");
                if (slash != std::string_view::npos) return refuse("{name...} must be the last segment");
                if (!part.suffix.empty()) return refuse("{name...} takes no suffix");
            }
        }
        out.segments.push_back(part);
        if (slash == std::string_view::npos) break;
        pattern.remove_prefix(slash + 1);
    }
    return out;
}

bool router::fits(const compiled& pattern, const std::vector<std::string>& segments,
                  route_captures* captures) {
    const auto& parts = pattern.segments;
    std::size_t count = segments.size();
    const bool rest = parts.back().what == segment::kind::rest;
    if (pattern.optional_slash && count == parts.size() + 1 && segments.back().empty()) --count;
    if (rest ? count < parts.size() : count != parts.size()) return false;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const auto& part = parts[i];
        if (part.what == segment::kind::literal) {
            if (segments[i] != part.text) return false;
        } else if (part.what == segment::kind::capture &&
                   (segments[i].size() <= part.suffix.size() || !segments[i].ends_with(part.suffix))) {
            return false;  // a capture takes at least one byte besides its suffix
        }
    }
    if (captures != nullptr) {
        captures->clear();
        for (std::size_t i = 0; i < parts.size(); ++i) {
            if (parts[i].what != segment::kind::literal) captures->emplace_back(parts[i].text, i);
        }
    }
    return true;
}

route_match router::match(http::verb method, const http_target::request_target& target) const {
    const auto& segments = segments_of(target);
    const auto wanted = bit_of(method);
    route_match out;
    for (const auto index : candidates(segments.front())) {
        const auto& pattern = routes_[index];
        const bool first_fit = out.found == nullptr && (pattern.declared->methods & wanted) != 0;
        if (!fits(pattern, segments, first_fit ? &out.captures : nullptr)) continue;
        out.allowed |= pattern.declared->methods;
        if (out.same_path == nullptr) out.same_path = pattern.declared;
        if (first_fit) out.found = pattern.declared;
    }
    return out;
}

const route* router::nearest(http::verb method, const http_target::request_target& target) const {
    const auto& segments = segments_of(target);
    const route* best = nullptr;
    std::size_t best_score = 1;  // at least the first segment, shared
    for (const auto& pattern : routes_) {
        std::size_t shared = 0;
        while (shared < pattern.segments.size() && shared < segments.size() &&
               pattern.segments[shared].what == segment::kind::literal && pattern.segments[shared].text == segments[shared]) {
            ++shared;
        }
        const std::size_t score = 2 * shared + ((pattern.declared->methods & bit_of(method)) != 0 ? 1 : 0);
        if (score > best_score) {
            best = pattern.declared;
            best_score = score;
        }
    }
    return best;
}

std::string_view router::where_to_look(const http_target::request_target& target) noexcept {
    const std::string_view first = target.segments.empty() ? std::string_view{} : std::string_view(target.segments[0]);
    if (first == "simple") return "no such page; project pages are at /simple/<project>/";
    if (first == "variants")
        return "no such page; variant indexes are at /variants/<selector>/simple/, as /variants/cu130-torch2.10/simple/";
    if (first == "files") return "file URLs have the form /files/<sha256>/<filename>";
    if (first == "api") return "no such API route; see /api/v1/projects/<project>/variants";
    if (first == "static") return "no such file in the admin catalog; the catalog is at /";
    return "no such page; the package index is at /simple/";
}

}  // namespace wheelhouse::app
