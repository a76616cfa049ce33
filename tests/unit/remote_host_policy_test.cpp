#include <catch2/catch.hpp>

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
