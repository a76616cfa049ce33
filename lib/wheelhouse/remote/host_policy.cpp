#include "wheelhouse/remote/host_policy.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include <boost/url/ipv4_address.hpp>
#include <boost/url/ipv6_address.hpp>
#include <boost/url/parse.hpp>

namespace wheelhouse::remote {
namespace {

std::string lower(std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c + 32 : c); });
    return out;
}

// An allow-list entry as written ("GitHub.com", "[::1]", "host.") in the form hosts compare in.
std::string comparable_host(std::string_view host) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    return lower(host);
}

std::string allowed_list_text(const std::vector<std::string>& hosts) {
    std::string text;
    for (const auto& host : hosts) text += (text.empty() ? "" : ", ") + host;
    return text.empty() ? "(empty)" : text;
}

// Why an IPv4 address may not be reached, or nothing when it is a public address.
std::optional<std::string_view> private_v4_range(std::uint32_t a) {
    struct range {
        std::uint32_t base;
        unsigned bits;
        std::string_view name;
    };
    static constexpr std::array<range, 10> refused{{
        {0x00000000, 8, "'this network' 0.0.0.0/8"},
        {0x0A000000, 8, "private network 10.0.0.0/8"},
        {0x64400000, 10, "carrier-grade NAT 100.64.0.0/10"},
        {0x7F000000, 8, "loopback 127.0.0.0/8"},
        {0xA9FE0000, 16, "link-local 169.254.0.0/16"},
        {0xAC100000, 12, "private network 172.16.0.0/12"},
        {0xC0A80000, 16, "private network 192.168.0.0/16"},
        {0xE0000000, 4, "multicast 224.0.0.0/4"},
        {0xF0000000, 4, "reserved 240.0.0.0/4"},
        {0xFFFFFFFF, 32, "broadcast 255.255.255.255"},
    }};
    for (const auto& r : refused) {
        const std::uint32_t mask = r.bits == 0 ? 0 : ~std::uint32_t{0} << (32 - r.bits);
        if ((a & mask) == r.base) return r.name;
    }
    return std::nullopt;
}

std::uint32_t v4_from(const std::array<unsigned char, 16>& b, std::size_t at) {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

std::optional<std::string_view> private_v6_range(const std::array<unsigned char, 16>& b,
                                                  std::optional<std::uint32_t>& embedded_v4) {
    const bool first_80_zero = std::all_of(b.begin(), b.begin() + 10, [](unsigned char c) { return c == 0; });
    if (first_80_zero && b[10] == 0xFF && b[11] == 0xFF) {  // ::ffff:a.b.c.d, IPv4-mapped
        embedded_v4 = v4_from(b, 12);
        return std::nullopt;
    }
    const bool first_96_zero = first_80_zero && b[10] == 0 && b[11] == 0;
    if (first_96_zero) {
        const std::uint32_t low = v4_from(b, 12);
        if (low == 0) return "unspecified address ::";
        if (low == 1) return "loopback ::1";
        embedded_v4 = low;  // ::a.b.c.d, the deprecated IPv4-compatible form
        return std::nullopt;
    }
    // 64:ff9b::/96, NAT64: reaches the embedded IPv4 address through the translator.
    static constexpr std::array<unsigned char, 12> nat64{0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (std::equal(nat64.begin(), nat64.end(), b.begin())) {
        embedded_v4 = v4_from(b, 12);
        return std::nullopt;
    }
    if (b[0] == 0xFE && (b[1] & 0xC0) == 0x80) return "link-local fe80::/10";
    if (b[0] == 0xFE && (b[1] & 0xC0) == 0xC0) return "site-local fec0::/10";
    if ((b[0] & 0xFE) == 0xFC) return "unique local fc00::/7";
    if (b[0] == 0xFF) return "multicast ff00::/8";
    return std::nullopt;
}

}  // namespace

std::vector<std::string> default_allowed_hosts() {
    // Release pages and downloads, the storage hosts their downloads redirect to, the API.
    return {"github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com", "api.github.com"};
}

result<void> host_policy::check_url(std::string_view url) const {
    const auto parsed = boost::urls::parse_uri(url);
    if (!parsed) {
        return invalid("'" + std::string(url) + "' is not a valid absolute URL (" + parsed.error().message() +
                       "); write it as https://HOST/PATH");
    }
    const auto& view = *parsed;
    const std::string scheme = lower(view.scheme());
    if (scheme != "https" && !(scheme == "http" && allow_plain_http)) {
        return invalid("'" + std::string(url) + "' uses " + scheme + "://; only https:// URLs may be fetched");
    }
    if (!view.has_authority() || view.host_address().empty()) {
        return invalid("'" + std::string(url) + "' has no host; write it as https://HOST/PATH");
    }
    if (view.has_userinfo()) {
        return invalid("'" + std::string(url) +
                       "' carries a user name or password; give the GitHub token in configuration (github-token) instead");
    }
    const std::string host = comparable_host(std::string(view.host_address()));
    const bool allowed = std::any_of(allowed_hosts.begin(), allowed_hosts.end(),
                                     [&](const std::string& entry) { return comparable_host(entry) == host; });
    if (!allowed) {
        return invalid("host '" + host + "' of '" + std::string(url) + "' is not on the allow-list (" +
                       allowed_list_text(allowed_hosts) + "); add it with --remote-allowed-hosts if it is trusted");
    }
    return {};
}

result<void> host_policy::check_address(std::string_view address) const {
    std::string_view text = address;
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
    if (const auto zone = text.find('%'); zone != std::string_view::npos) text = text.substr(0, zone);

    std::optional<std::string_view> refused;
    if (const auto v4 = boost::urls::parse_ipv4_address(text)) {
        refused = private_v4_range(v4->to_uint());
    } else if (const auto v6 = boost::urls::parse_ipv6_address(text)) {
        const auto bytes = v6->to_bytes();
        std::array<unsigned char, 16> b{};
        std::copy(bytes.begin(), bytes.end(), b.begin());
        std::optional<std::uint32_t> embedded_v4;
        refused = private_v6_range(b, embedded_v4);
        if (!refused && embedded_v4) refused = private_v4_range(*embedded_v4);
    } else {
        return invalid("'" + std::string(address) + "' is not an IPv4 or IPv6 address");
    }
    if (refused && !allow_private_addresses) {
        return invalid("address " + std::string(address) + " is in " + std::string(*refused) +
                       ", which the index does not connect to (--remote-allow-private-addresses allows it, for tests)");
    }
    return {};
}

}  // namespace wheelhouse::remote
