#include "wheelhouse/remote/host_policy.hpp"

namespace wheelhouse::remote {

std::vector<std::string> default_allowed_hosts() {
    // Release pages and downloads, the storage hosts their downloads redirect to, the API.
    return {"github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com", "api.github.com"};
}

}  // namespace wheelhouse::remote
