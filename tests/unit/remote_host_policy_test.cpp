#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include <boost/url/ipv4_address.hpp>
#include <boost/url/ipv6_address.hpp>
#include <boost/url/parse.hpp>

#include "wheelhouse/remote/host_policy.hpp"

using wheelhouse::error_kind;
using wheelhouse::remote::host_policy;

TEST_CASE("remote host policy: URLs on the default allow-list over https pass", "[remote]") {
    const host_policy policy;
    for (const char* url : {
             "https://github.com/owner/repo/releases/download/v1/pkg-1.0-py3-none-any.whl",
             "https://GitHub.COM/owner/repo/releases/download/v1/pkg-1.0-py3-none-any.whl",
             "https://github.com:443/owner/repo",
             "https://github.com./owner/repo",
             "https://objects.githubusercontent.com/github-production-release-asset/1?X-Amz-Signature=ab",
             "https://release-assets.githubusercontent.com/x?sp=r&sv=2018",
             "https://api.github.com/repos/o/r/releases/tags/v1",
             "https://api.github.com",
         }) {
        CAPTURE(url);
        CHECK(policy.check_url(url));
    }
}

TEST_CASE("remote host policy: URLs off the allow-list, in the wrong scheme or malformed are refused", "[remote]") {
    const host_policy policy;
    const std::pair<const char*, const char*> table[] = {
        {"http://github.com/owner/repo", "https://"},
        {"ftp://github.com/x", "https://"},
        {"file:///etc/passwd", "https://"},
        {"https://evil.example/x.whl", "allow-list"},
        {"https://github.com.evil.example/x.whl", "allow-list"},
        {"https://evilgithub.com/x.whl", "allow-list"},
        {"https://127.0.0.1/x.whl", "allow-list"},
        {"https://[::1]/x.whl", "allow-list"},
        {"https://169.254.169.254/latest/meta-data", "allow-list"},
        {"https://user:pass@github.com/x", "password"},
        {"https:///x.whl", "no host"},
        {"github.com/owner/repo", "not a valid"},
        {"https://github.com/a b", "not a valid"},
        {"", "not a valid"},
        {"https://git hub.com/", "not a valid"},
    };
    for (const auto& [url, says] : table) {
        CAPTURE(url);
        const auto checked = policy.check_url(url);
        REQUIRE_FALSE(checked);
        CHECK(checked.error().kind == error_kind::invalid);
        CHECK_THAT(checked.error().message, Catch::Contains(says));
    }
}

TEST_CASE("remote host policy: a configured list, IP literals only when listed, plain http only when allowed",
          "[remote]") {
    host_policy policy;
    policy.allowed_hosts = {"Mirror.Example", "127.0.0.1", "[::1]"};
    CHECK(policy.check_url("https://mirror.example/a.whl"));
    CHECK(policy.check_url("https://127.0.0.1:8443/a.whl"));
    CHECK(policy.check_url("https://[::1]:8443/a.whl"));
    CHECK_FALSE(policy.check_url("https://github.com/a.whl"));
    CHECK_FALSE(policy.check_url("https://127.0.0.2/a.whl"));
    CHECK_FALSE(policy.check_url("https://localhost/a.whl"));
    CHECK_FALSE(policy.check_url("http://mirror.example/a.whl"));
    policy.allow_plain_http = true;
    CHECK(policy.check_url("http://mirror.example/a.whl"));
    CHECK_FALSE(policy.check_url("ftp://mirror.example/a.whl"));
}

TEST_CASE("remote host policy: private, loopback and special addresses are refused", "[remote]") {
    const host_policy policy;
    for (const char* address : {
             "127.0.0.1",        "127.255.255.254", "10.0.0.1",        "10.255.255.255", "172.16.0.1",
             "172.31.255.255",   "192.168.1.1",     "169.254.169.254", "100.64.0.1",     "100.127.255.255",
             "0.0.0.0",          "0.1.2.3",         "224.0.0.1",       "239.255.255.250", "255.255.255.255",
             "240.0.0.1",        "::1",             "::",              "fe80::1",        "fe80::1%eth0",
             "febf::1",          "fc00::1",         "fd12:3456::1",    "ff02::1",        "::ffff:127.0.0.1",
             "::ffff:10.1.2.3",  "::ffff:169.254.169.254", "::ffff:7f00:1", "::127.0.0.1", "64:ff9b::a9fe:a9fe",
             "[::1]",            "FE80::ABCD",
         }) {
        CAPTURE(address);
        const auto checked = policy.check_address(address);
        REQUIRE_FALSE(checked);
        CHECK_THAT(checked.error().message, Catch::Contains("--remote-allow-private-addresses"));
    }
}

TEST_CASE("remote host policy: public addresses pass, and private ones pass when allowed", "[remote]") {
    host_policy policy;
    for (const char* address : {"140.82.112.3", "185.199.108.133", "8.8.8.8", "172.32.0.1", "172.15.255.255",
                                "100.128.0.1", "100.63.255.255", "192.169.0.1", "169.255.0.1", "11.0.0.1",
                                "2606:50c0:8000::154", "2001:4860:4860::8888", "::ffff:140.82.112.3",
                                "64:ff9b::8c52:7003"}) {
        CAPTURE(address);
        CHECK(policy.check_address(address));
    }
    policy.allow_private_addresses = true;
    for (const char* address : {"127.0.0.1", "::1", "10.0.0.1", "fe80::1", "::ffff:127.0.0.1"}) {
        CAPTURE(address);
        CHECK(policy.check_address(address));
    }
}

TEST_CASE("remote host policy: text that is no address is refused even when private addresses are allowed",
          "[remote]") {
    host_policy policy;
    policy.allow_private_addresses = true;
    for (const char* text : {"", "localhost", "github.com", "1.2.3", "256.1.1.1", "::g", "1.2.3.4.5"}) {
        CAPTURE(text);
        const auto checked = policy.check_address(text);
        REQUIRE_FALSE(checked);
        CHECK_THAT(checked.error().message, Catch::Contains("not an IPv4 or IPv6 address"));
    }
}

namespace {

// The IANA IPv4 and IPv6 Special-Purpose Address Registries (every entry), multicast, the
// deprecated IPv6 blocks, and the IPv4-embedding blocks the policy refuses whole, written out
// here independently of the policy's own table.
const char* const special_blocks[] = {
    "0.0.0.0/8",       "0.0.0.0/32",      "10.0.0.0/8",         "100.64.0.0/10",    "127.0.0.0/8",
    "169.254.0.0/16",  "172.16.0.0/12",   "192.0.0.0/24",       "192.0.0.0/29",     "192.0.0.8/32",
    "192.0.0.9/32",    "192.0.0.10/32",   "192.0.0.170/31",     "192.0.2.0/24",     "192.31.196.0/24",
    "192.52.193.0/24", "192.88.99.0/24",  "192.88.99.2/32",     "192.168.0.0/16",   "192.175.48.0/24",
    "198.18.0.0/15",   "198.51.100.0/24", "203.0.113.0/24",     "224.0.0.0/4",      "240.0.0.0/4",
    "255.255.255.255/32",
    "::/128",          "::1/128",         "::/96",              "::ffff:0:0:0/96",  "64:ff9b:1::/48",
    "100::/64",        "100:0:0:1::/64",  "2001::/23",          "2001::/32",        "2001:1::1/128",
    "2001:1::2/128",   "2001:1::3/128",   "2001:2::/48",        "2001:3::/32",      "2001:4:112::/48",
    "2001:10::/28",    "2001:20::/28",    "2001:30::/28",       "2001:db8::/32",    "2002::/16",
    "2620:4f:8000::/48", "3fff::/20",     "5f00::/16",          "fc00::/7",         "fe80::/10",
    "fec0::/10",       "ff00::/8",
};

using address_bytes = std::array<unsigned char, 16>;  // IPv4 in the last four

struct block {
    bool v6 = false;
    address_bytes base{};
    unsigned bits = 0;
    std::string text;
};

block parse_block(const std::string& cidr) {
    const auto slash = cidr.find('/');
    block out;
    out.text = cidr;
    out.bits = static_cast<unsigned>(std::stoul(cidr.substr(slash + 1)));
    const auto address = cidr.substr(0, slash);
    if (auto v4 = boost::urls::parse_ipv4_address(address)) {
        const auto bytes = v4->to_bytes();
        std::copy(bytes.begin(), bytes.end(), out.base.begin() + 12);
    } else {
        auto v6 = boost::urls::parse_ipv6_address(address);
        REQUIRE(v6);
        const auto bytes = v6->to_bytes();
        std::copy(bytes.begin(), bytes.end(), out.base.begin());
        out.v6 = true;
    }
    return out;
}

unsigned width(bool v6) { return v6 ? 128 : 32; }

bool contains(const block& b, bool v6, const address_bytes& address) {
    if (b.v6 != v6) return false;
    const unsigned offset = v6 ? 0 : 96;  // IPv4 bits start at byte 12
    for (unsigned bit = 0; bit < b.bits; ++bit) {
        const unsigned at = offset + bit;
        const int mask = 0x80 >> (at % 8);
        if ((address[at / 8] & mask) != (b.base[at / 8] & mask)) return false;
    }
    return true;
}

// The first address of a block with every host bit set from `from_bit` on (last: from the
// prefix; middle: from one bit after it).
address_bytes with_host_bits(const block& b, unsigned from_bit) {
    address_bytes out = b.base;
    const unsigned offset = b.v6 ? 0 : 96;
    for (unsigned bit = from_bit; bit < width(b.v6); ++bit) {
        const unsigned at = offset + bit;
        out[at / 8] = static_cast<unsigned char>(out[at / 8] | (0x80 >> (at % 8)));
    }
    return out;
}

// address + delta (±1) within the family; false when it wraps.
bool step(address_bytes& address, bool v6, int delta) {
    const int low = v6 ? 0 : 12;
    for (int i = 15; i >= low; --i) {
        const int value = address[static_cast<std::size_t>(i)] + delta;
        address[static_cast<std::size_t>(i)] = static_cast<unsigned char>(value & 0xFF);
        if (value >= 0 && value <= 0xFF) return true;
    }
    return false;
}

std::string text_of(const address_bytes& address, bool v6) {
    if (v6) return boost::urls::ipv6_address(address).to_string();
    return boost::urls::ipv4_address(std::array<unsigned char, 4>{address[12], address[13], address[14], address[15]})
        .to_string();
}

}  // namespace

TEST_CASE("remote host policy: every special-purpose block, first, middle and last, and its neighbours",
          "[remote]") {
    std::vector<block> blocks;
    for (const char* cidr : special_blocks) blocks.push_back(parse_block(cidr));
    const host_policy policy;
    auto most_specific = [&](bool v6, const address_bytes& address) {
        const block* found = nullptr;
        for (const auto& b : blocks) {
            if (contains(b, v6, address) && (!found || b.bits > found->bits)) found = &b;
        }
        return found;
    };
    std::size_t allowed_neighbours = 0;
    for (const auto& b : blocks) {
        const unsigned host_bits = width(b.v6) - b.bits;
        const address_bytes samples[] = {b.base, with_host_bits(b, b.bits + (host_bits > 1 ? 1 : 0)),
                                         with_host_bits(b, b.bits)};
        for (const auto& address : samples) {
            const auto text = text_of(address, b.v6);
            CAPTURE(b.text, text);
            const auto checked = policy.check_address(text);
            REQUIRE_FALSE(checked);
            // The message names the narrowest block that holds the address.
            CHECK_THAT(checked.error().message, Catch::Contains(most_specific(b.v6, address)->text));
            CHECK_THAT(checked.error().message, Catch::Contains("--remote-allow-private-addresses"));
        }
        for (int delta : {-1, +1}) {
            address_bytes neighbour = delta < 0 ? b.base : samples[2];
            if (!step(neighbour, b.v6, delta)) continue;
            if (most_specific(b.v6, neighbour)) continue;  // the next block over
            const bool global_unicast = !b.v6 || (neighbour[0] & 0xE0) == 0x20;
            const auto text = text_of(neighbour, b.v6);
            CAPTURE(b.text, text);
            CHECK(static_cast<bool>(policy.check_address(text)) == global_unicast);
            allowed_neighbours += global_unicast ? 1 : 0;
        }
    }
    CHECK(allowed_neighbours >= 30);
}

TEST_CASE("remote host policy: addresses that carry an IPv4 address", "[remote]") {
    const host_policy policy;
    const std::pair<const char*, const char*> refused[] = {
        // Issue 14: 6to4 and Teredo were let through; both are refused whole, public or not inside.
        {"2002:c0a8:101::1", "6to4 2002::/16"},
        {"2002:8c52:7003::1", "6to4 2002::/16"},
        {"2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo 2001::/32"},
        {"198.18.0.1", "benchmarking 198.18.0.0/15"},
        {"192.0.0.1", "192.0.0.0/29"},
        {"192.0.0.200", "IETF protocol assignments 192.0.0.0/24"},
        // IPv4-mapped and NAT64 go where their IPv4 address goes.
        {"::ffff:198.18.0.1", "benchmarking 198.18.0.0/15"},
        {"::ffff:192.0.2.1", "TEST-NET-1"},
        {"64:ff9b::c000:201", "TEST-NET-1"},
        {"64:ff9b::a00:1", "private-use 10.0.0.0/8"},
        {"64:ff9b:1::808:808", "local-use IPv4/IPv6 translation 64:ff9b:1::/48"},
        // IPv4-compatible is deprecated and reaches nothing: refused whole.
        {"::8.8.8.8", "deprecated IPv4-compatible ::/96"},
        {"::ffff:0:808:808", "IPv4-translated ::ffff:0:0:0/96"},
        // Outside the global unicast space IANA has allocated.
        {"4000::1", "outside 2000::/3"},
        {"1234::1", "outside 2000::/3"},
        {"e000::1", "outside 2000::/3"},
    };
    for (const auto& [address, reason] : refused) {
        CAPTURE(address);
        const auto checked = policy.check_address(address);
        REQUIRE_FALSE(checked);
        CHECK_THAT(checked.error().message, Catch::Contains(reason));
    }
    for (const char* address : {"::ffff:8.8.8.8", "64:ff9b::808:808", "2003::1", "2001:200::1", "2000::1",
                                "3ffe:ffff::1", "2001:4860:4860::8888", "198.20.0.0", "198.17.255.255",
                                "192.0.1.0", "191.255.255.255", "223.255.255.255", "1.1.1.1"}) {
        CAPTURE(address);
        const auto checked = policy.check_address(address);
        INFO((checked ? std::string() : checked.error().message));
        CHECK(checked);
    }
}
