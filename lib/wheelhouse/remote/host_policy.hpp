#pragma once
// Which URLs and addresses the index may fetch from: the allow-list of hosts that hold release
// assets, and the address ranges (loopback, private, link-local, every IANA special-purpose
// block) refused unless configured.
// Pure: it judges text, the HTTP client asks it before connecting and after each redirect.

#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/result.hpp"

namespace wheelhouse::remote {

// The hosts GitHub serves releases, their assets and its API from.
std::vector<std::string> default_allowed_hosts();

struct host_policy {
    std::vector<std::string> allowed_hosts = default_allowed_hosts();  // exact names, lower case
    bool allow_private_addresses = false;  // every IANA special-purpose block (see the .cpp): tests only
    bool allow_plain_http = false;         // http:// besides https://: tests only

    // The URL's scheme and host are allowed; the error says which part is not and the setting
    // that would allow it.
    result<void> check_url(std::string_view url) const;
    // An address the host resolved to (IPv4 or IPv6 text) may be connected to.
    result<void> check_address(std::string_view address) const;
};

}  // namespace wheelhouse::remote
