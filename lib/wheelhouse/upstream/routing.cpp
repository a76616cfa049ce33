#include "wheelhouse/upstream/routing.hpp"

#include <algorithm>

#include <boost/url/parse.hpp>

#include "wheelhouse/auth/scope.hpp"
#include "wheelhouse/text/ascii.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/variants/selector.hpp"

namespace wheelhouse::upstream {
namespace {

using text::quoted;

constexpr std::size_t longest_upstream_name = 64;

bool is_upstream_name(std::string_view name) {
    return !name.empty() && name.size() <= longest_upstream_name && name.front() != '-' &&
           std::all_of(name.begin(), name.end(),
                       [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; });
}

std::vector<std::string> split_words(std::string_view text, std::string_view separators) {
    std::vector<std::string> words;
    for (std::size_t start = 0; start < text.size();) {
        const auto end = std::min(text.find_first_of(separators, start), text.size());
        if (end > start) words.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return words;
}

// The index part of a route: "*", "simple", or a selector read as the variant indexes read it.
result<void> read_indexes(std::string_view text, route& out) {
    if (text == "*") return {};
    if (text == "simple") {
        out.applies_to = route::indexes::root;
        return {};
    }
    auto selector = variants::parse_selector(text);
    if (!selector) return invalid("its index " + quoted(text) + " is not *, simple or a variant selector: " +
                                  selector.error().message);
    out.applies_to = route::indexes::variants;
    out.selector_words = split_words(selector->canonical(), "-");
    return {};
}

bool applies(const route& rule, std::string_view selector) {
    switch (rule.applies_to) {
        case route::indexes::every: return true;
        case route::indexes::root: return selector.empty();
        case route::indexes::variants: break;
    }
    if (selector.empty()) return false;
    const auto words = split_words(selector, "-");
    return std::all_of(rule.selector_words.begin(), rule.selector_words.end(), [&](const std::string& word) {
        return std::find(words.begin(), words.end(), word) != words.end();
    });
}

bool takes(const route& rule, std::string_view project) {
    return std::any_of(rule.patterns.begin(), rule.patterns.end(),
                       [&](const std::string& pattern) { return auth::glob_match(pattern, project); });
}

}  // namespace

result<upstream_index> parse_upstream(std::string_view text) {
    const auto equals = text.find('=');
    const auto fail = [&](const std::string& why) {
        return invalid("upstream " + quoted(text) + ": " + why + "; write NAME=URL, as pypi=https://pypi.org/simple/");
    };
    if (equals == std::string_view::npos) return fail("it has no '='");
    upstream_index out{std::string(text::trim(text.substr(0, equals))), std::string(text::trim(text.substr(equals + 1)))};
    if (!is_upstream_name(out.name)) return fail("its name must be lower-case letters, digits and '-'");
    const auto url = boost::urls::parse_uri(out.url);
    if (!url || text::to_lower(url->scheme()) != "https" || url->host_address().empty())
        return fail("its URL is not an https:// URL");
    if (url->has_userinfo() || url->has_query() || url->has_fragment())
        return fail("its URL holds credentials, a query or a fragment");
    if (out.url.back() != '/') out.url.push_back('/');
    return out;
}

result<route> parse_route(std::string_view text) {
    const auto colon = text.find(':');
    const auto equals = text.rfind('=');
    const auto fail = [&](const std::string& why) {
        return invalid("upstream route " + quoted(text) + ": " + why +
                       "; write INDEX: PROJECT… = UPSTREAM, as cu128: torch torchvision = pytorch-cu128");
    };
    if (colon == std::string_view::npos || equals == std::string_view::npos || equals < colon)
        return fail("it needs a ':' after the index and a '=' before the upstream");
    route out;
    out.text = std::string(text::trim(text));
    if (auto indexes = read_indexes(text::trim(text.substr(0, colon)), out); !indexes) return fail(indexes.error().message);
    for (const auto& word : split_words(text.substr(colon + 1, equals - colon - 1), " \t,")) {
        auto pattern = auth::normalize_project_pattern(word);
        if (!pattern) return fail(pattern.error().message);
        out.patterns.push_back(std::move(*pattern));
    }
    if (out.patterns.empty()) return fail("it names no project");
    out.upstream = std::string(text::trim(text.substr(equals + 1)));
    if (!is_upstream_name(out.upstream)) return fail("its upstream " + quoted(out.upstream) + " is no upstream's name");
    return out;
}

result<routing> routing::make(std::vector<upstream_index> upstreams, std::vector<route> routes) {
    routing out;
    for (auto& upstream : upstreams) {
        if (out.find(upstream.name)) return invalid("two upstreams are named " + quoted(upstream.name));
        out.upstreams_.push_back(std::move(upstream));
    }
    for (auto& rule : routes) {
        if (!out.find(rule.upstream)) {
            return invalid("upstream route " + quoted(rule.text) + " names the upstream " + quoted(rule.upstream) +
                           ", which no --upstream declares");
        }
        out.routes_.push_back(std::move(rule));
    }
    return out;
}

const upstream_index* routing::find(std::string_view name) const noexcept {
    const auto found = std::find_if(upstreams_.begin(), upstreams_.end(),
                                    [&](const upstream_index& upstream) { return upstream.name == name; });
    return found == upstreams_.end() ? nullptr : &*found;
}

const upstream_index* routing::upstream_for(std::string_view selector, std::string_view project) const {
    if (upstreams_.empty()) return nullptr;
    for (const auto& rule : routes_) {
        if (applies(rule, selector) && takes(rule, project)) return find(rule.upstream);
    }
    return &upstreams_.front();
}

std::vector<const upstream_index*> routing::upstreams_for(std::string_view project) const {
    std::vector<const upstream_index*> out;
    if (upstreams_.empty()) return out;
    const auto add = [&](const upstream_index* upstream) {
        if (std::find(out.begin(), out.end(), upstream) == out.end()) out.push_back(upstream);
    };
    add(&upstreams_.front());
    for (const auto& rule : routes_) {
        if (takes(rule, project)) add(find(rule.upstream));
    }
    return out;
}

std::string page_url(const upstream_index& upstream, std::string_view project) {
    return upstream.url + std::string(project) + "/";
}

bool is_reserved(std::span<const std::string> patterns, std::string_view project) noexcept {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& pattern) { return auth::glob_match(pattern, project); });
}

name_source source_of(std::string_view project, bool known_locally, std::span<const std::string> reserved,
                      bool has_upstream) noexcept {
    if (known_locally) return name_source::local;
    if (is_reserved(reserved, project)) return name_source::reserved;
    return has_upstream ? name_source::upstream : name_source::nowhere;
}

}  // namespace wheelhouse::upstream
