#include "wheelhouse/remote/host_policy.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>

#include <boost/url/ipv4_address.hpp>
#include <boost/url/ipv6_address.hpp>
#include <boost/url/parse.hpp>

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::remote {
namespace {

using text::to_lower;

// An allow-list entry as written ("GitHub.com", "[::1]", "host.") in the form hosts compare in.
std::string comparable_host(std::string_view host) {
    if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
    if (!host.empty() && host.back() == '.') host.remove_suffix(1);
    return to_lower(host);
}

std::string allowed_list_text(const std::vector<std::string>& hosts) {
    std::string text;
    for (const auto& host : hosts) text += (text.empty() ? "" : ", ") + host;
    return text.empty() ? "(empty)" : text;
}

// The blocks of the IANA IPv4 Special-Purpose Address Registry and the IANA IPv6
// Special-Purpose Address Registry (https://www.iana.org/assignments/iana-ipv4-special-registry/,
// https://www.iana.org/assignments/iana-ipv6-special-registry/), taken from the revisions current
// in 2025 (the newest entry: 100:0:0:1::/64, allocated 2025-04), plus multicast and the
// deprecated IPv6 blocks. Every entry is refused, the ones marked globally reachable too: those
// are anycast services (PCP, TURN, DNS-SD, AMT, AS112) that the nearest server answers, often
// one inside the network the index runs in, or identifier spaces (ORCHIDv2, DETs); no release
// host lives in any of them. Two entries are not refused whole but judged by the IPv4 address
// they carry, which is where a connection to them goes: IPv4-mapped ::ffff:0:0/96 and the
// NAT64 well-known prefix 64:ff9b::/96. 6to4 (2002::/16) and Teredo (2001::/32) are refused
// whole rather than decoded: both are deprecated relays, a host behind them has a native
// address too, and Teredo's client address is obscured. The local-use NAT64 prefix
// 64:ff9b:1::/48 is refused whole as its IPv4 address sits where the operator chose. Past the
// table, IPv6 outside 2000::/3, the only global unicast space IANA has allocated, is refused.
struct special_block {
    std::string_view address;  // the block's first address, without the prefix length
    unsigned bits;             // the prefix length
    std::string_view name;     // what the refusal says, the block and its RFC included
};

constexpr std::array<special_block, 26> ipv4_blocks{{
    {"0.0.0.0", 8, "\"this network\" 0.0.0.0/8 (RFC 791)"},
    {"0.0.0.0", 32, "\"this host on this network\" 0.0.0.0/32 (RFC 1122)"},
    {"10.0.0.0", 8, "private-use 10.0.0.0/8 (RFC 1918)"},
    {"100.64.0.0", 10, "shared address space (carrier-grade NAT) 100.64.0.0/10 (RFC 6598)"},
    {"127.0.0.0", 8, "loopback 127.0.0.0/8 (RFC 1122)"},
    {"169.254.0.0", 16, "link-local 169.254.0.0/16 (RFC 3927)"},
    {"172.16.0.0", 12, "private-use 172.16.0.0/12 (RFC 1918)"},
    {"192.0.0.0", 24, "IETF protocol assignments 192.0.0.0/24 (RFC 6890)"},
    {"192.0.0.0", 29, "IPv4 service continuity prefix 192.0.0.0/29 (RFC 7335)"},
    {"192.0.0.8", 32, "IPv4 dummy address 192.0.0.8/32 (RFC 7600)"},
    {"192.0.0.9", 32, "Port Control Protocol anycast 192.0.0.9/32 (RFC 7723)"},
    {"192.0.0.10", 32, "TURN anycast 192.0.0.10/32 (RFC 8155)"},
    {"192.0.0.170", 31, "NAT64/DNS64 discovery 192.0.0.170/31 (RFC 8880)"},
    {"192.0.2.0", 24, "documentation (TEST-NET-1) 192.0.2.0/24 (RFC 5737)"},
    {"192.31.196.0", 24, "AS112-v4 192.31.196.0/24 (RFC 7535)"},
    {"192.52.193.0", 24, "AMT 192.52.193.0/24 (RFC 7450)"},
    {"192.88.99.0", 24, "deprecated 6to4 relay anycast 192.88.99.0/24 (RFC 7526)"},
    {"192.88.99.2", 32, "6a44 relay anycast 192.88.99.2/32 (RFC 6751)"},
    {"192.168.0.0", 16, "private-use 192.168.0.0/16 (RFC 1918)"},
    {"192.175.48.0", 24, "direct delegation AS112 service 192.175.48.0/24 (RFC 7534)"},
    {"198.18.0.0", 15, "benchmarking 198.18.0.0/15 (RFC 2544)"},
    {"198.51.100.0", 24, "documentation (TEST-NET-2) 198.51.100.0/24 (RFC 5737)"},
    {"203.0.113.0", 24, "documentation (TEST-NET-3) 203.0.113.0/24 (RFC 5737)"},
    {"224.0.0.0", 4, "multicast 224.0.0.0/4 (RFC 5771)"},
    {"240.0.0.0", 4, "reserved 240.0.0.0/4 (RFC 1112)"},
    {"255.255.255.255", 32, "limited broadcast 255.255.255.255/32 (RFC 919)"},
}};

constexpr std::array<special_block, 27> ipv6_blocks{{
    {"::", 128, "unspecified address ::/128 (RFC 4291)"},
    {"::1", 128, "loopback ::1/128 (RFC 4291)"},
    {"::", 96, "deprecated IPv4-compatible ::/96 (RFC 4291)"},
    {"::ffff:0:0:0", 96, "IPv4-translated ::ffff:0:0:0/96 (RFC 2765)"},
    {"64:ff9b:1::", 48, "local-use IPv4/IPv6 translation 64:ff9b:1::/48 (RFC 8215)"},
    {"100::", 64, "discard-only 100::/64 (RFC 6666)"},
    {"100:0:0:1::", 64, "dummy prefix 100:0:0:1::/64 (RFC 9780)"},
    {"2001::", 23, "IETF protocol assignments 2001::/23 (RFC 2928)"},
    {"2001::", 32, "Teredo 2001::/32 (RFC 4380)"},
    {"2001:1::1", 128, "Port Control Protocol anycast 2001:1::1/128 (RFC 7723)"},
    {"2001:1::2", 128, "TURN anycast 2001:1::2/128 (RFC 8155)"},
    {"2001:1::3", 128, "DNS-SD service registration anycast 2001:1::3/128 (RFC 9665)"},
    {"2001:2::", 48, "benchmarking 2001:2::/48 (RFC 5180)"},
    {"2001:3::", 32, "AMT 2001:3::/32 (RFC 7450)"},
    {"2001:4:112::", 48, "AS112-v6 2001:4:112::/48 (RFC 7535)"},
    {"2001:10::", 28, "deprecated ORCHID 2001:10::/28 (RFC 4843)"},
    {"2001:20::", 28, "ORCHIDv2 2001:20::/28 (RFC 7343)"},
    {"2001:30::", 28, "drone remote ID entity tags 2001:30::/28 (RFC 9374)"},
    {"2001:db8::", 32, "documentation 2001:db8::/32 (RFC 3849)"},
    {"2002::", 16, "6to4 2002::/16 (RFC 3056)"},
    {"2620:4f:8000::", 48, "direct delegation AS112 service 2620:4f:8000::/48 (RFC 7534)"},
    {"3fff::", 20, "documentation 3fff::/20 (RFC 9637)"},
    {"5f00::", 16, "segment routing (SRv6) SIDs 5f00::/16 (RFC 9602)"},
    {"fc00::", 7, "unique-local fc00::/7 (RFC 4193)"},
    {"fe80::", 10, "link-local fe80::/10 (RFC 4291)"},
    {"fec0::", 10, "deprecated site-local fec0::/10 (RFC 3879)"},
    {"ff00::", 8, "multicast ff00::/8 (RFC 4291)"},
}};

using ipv6_bytes = std::array<unsigned char, 16>;

// Dotted-quad text as a number; used on the tables at compile time.
constexpr std::optional<std::uint32_t> parse_v4(std::string_view text) {
    std::uint32_t address = 0;
    for (int octet = 0; octet < 4; ++octet) {
        if (octet > 0) {
            if (text.empty() || text.front() != '.') return std::nullopt;
            text.remove_prefix(1);
        }
        unsigned value = 0;
        std::size_t digits = 0;
        while (!text.empty() && text.front() >= '0' && text.front() <= '9' && digits < 3) {
            value = value * 10 + static_cast<unsigned>(text.front() - '0');
            text.remove_prefix(1);
            ++digits;
        }
        if (digits == 0 || value > 255) return std::nullopt;
        address = (address << 8) | value;
    }
    return text.empty() ? std::optional<std::uint32_t>(address) : std::nullopt;
}

constexpr int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
}

// Colon-hex text with at most one "::" (lower case, no embedded dotted quad) as bytes; used
// on the tables at compile time.
constexpr std::optional<ipv6_bytes> parse_v6(std::string_view text) {
    std::array<std::uint16_t, 8> before{}, after{};  // the groups on each side of "::"
    std::size_t count_before = 0, count_after = 0;
    bool gap = text.starts_with("::");
    if (gap) text.remove_prefix(2);
    while (!text.empty()) {
        unsigned group = 0;
        std::size_t digits = 0;
        for (; !text.empty() && text.front() != ':'; text.remove_prefix(1), ++digits) {
            if (hex_value(text.front()) < 0 || digits == 4) return std::nullopt;
            group = group * 16 + static_cast<unsigned>(hex_value(text.front()));
        }
        if (digits == 0 || count_before + count_after == 8) return std::nullopt;
        (gap ? after[count_after++] : before[count_before++]) = static_cast<std::uint16_t>(group);
        if (text.empty()) break;
        text.remove_prefix(1);
        if (text.starts_with(":")) {
            if (gap) return std::nullopt;
            gap = true;
            text.remove_prefix(1);
        } else if (text.empty()) {
            return std::nullopt;  // a single trailing ':'
        }
    }
    if (gap ? count_before + count_after > 7 : count_before != 8) return std::nullopt;
    ipv6_bytes out{};
    auto put = [&out](std::size_t group, std::uint16_t value) {
        out[2 * group] = static_cast<unsigned char>(value >> 8);
        out[2 * group + 1] = static_cast<unsigned char>(value & 0xFF);
    };
    for (std::size_t i = 0; i < count_before; ++i) put(i, before[i]);
    for (std::size_t i = 0; i < count_after; ++i) put(8 - count_after + i, after[i]);
    return out;
}

template <class Address>
struct prefix {
    Address base;
    unsigned bits;
    std::string_view name;
};

// The tables parsed while compiling: a typo in one is a build error, not a hole at run time.
template <std::size_t N>
constexpr std::array<prefix<std::uint32_t>, N> parsed_v4(const std::array<special_block, N>& blocks) {
    std::array<prefix<std::uint32_t>, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = {parse_v4(blocks[i].address).value(), blocks[i].bits, blocks[i].name};
    return out;
}
template <std::size_t N>
constexpr std::array<prefix<ipv6_bytes>, N> parsed_v6(const std::array<special_block, N>& blocks) {
    std::array<prefix<ipv6_bytes>, N> out{};
    for (std::size_t i = 0; i < N; ++i) out[i] = {parse_v6(blocks[i].address).value(), blocks[i].bits, blocks[i].name};
    return out;
}

constexpr auto ipv4_prefixes = parsed_v4(ipv4_blocks);
constexpr auto ipv6_prefixes = parsed_v6(ipv6_blocks);

bool in_prefix(std::uint32_t address, std::uint32_t base, unsigned bits) noexcept {
    const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
    return (address & mask) == (base & mask);
}

bool in_prefix(const ipv6_bytes& address, const ipv6_bytes& base, unsigned bits) noexcept {
    for (unsigned i = 0; i < 16 && bits > 0; ++i) {
        const unsigned take = std::min(bits, 8U);
        const auto mask = static_cast<unsigned char>(0xFF << (8 - take));
        if ((address[i] & mask) != (base[i] & mask)) return false;
        bits -= take;
    }
    return true;
}

// The most specific block that holds the address, so the message names the narrowest reason.
template <class Address, std::size_t N>
std::optional<std::string_view> most_specific(const std::array<prefix<Address>, N>& prefixes, const Address& address) {
    const prefix<Address>* found = nullptr;
    for (const auto& candidate : prefixes) {
        if (in_prefix(address, candidate.base, candidate.bits) && (found == nullptr || candidate.bits > found->bits)) {
            found = &candidate;
        }
    }
    if (found == nullptr) return std::nullopt;
    return found->name;
}

std::uint32_t v4_from(const ipv6_bytes& b, std::size_t at) {
    return (std::uint32_t{b[at]} << 24) | (std::uint32_t{b[at + 1]} << 16) | (std::uint32_t{b[at + 2]} << 8) | b[at + 3];
}

// Why an IPv6 address may not be reached; `embedded_v4` is set instead for the two prefixes
// whose connections go to the IPv4 address in their last 32 bits.
std::optional<std::string_view> special_v6(const ipv6_bytes& address, std::optional<std::uint32_t>& embedded_v4) {
    static constexpr ipv6_bytes mapped = parse_v6("::ffff:0:0").value();
    static constexpr ipv6_bytes nat64 = parse_v6("64:ff9b::").value();
    if (in_prefix(address, mapped, 96) || in_prefix(address, nat64, 96)) {
        embedded_v4 = v4_from(address, 12);
        return std::nullopt;
    }
    if (auto refused = most_specific(ipv6_prefixes, address)) return refused;
    if ((address[0] & 0xE0) != 0x20) return "space IANA has not allocated for global unicast (outside 2000::/3)";
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
    const std::string scheme = to_lower(view.scheme());
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
        refused = most_specific(ipv4_prefixes, v4->to_uint());
    } else if (const auto v6 = boost::urls::parse_ipv6_address(text)) {
        ipv6_bytes bytes{};
        const auto written = v6->to_bytes();
        std::copy(written.begin(), written.end(), bytes.begin());
        std::optional<std::uint32_t> embedded_v4;
        refused = special_v6(bytes, embedded_v4);
        if (!refused && embedded_v4) refused = most_specific(ipv4_prefixes, *embedded_v4);
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
