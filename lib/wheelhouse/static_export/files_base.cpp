#include "wheelhouse/static_export/files_base.hpp"

namespace wheelhouse::static_export {

result<std::string> root_for(std::string_view base_url) {
    if (base_url.empty()) return invalid("the base URL is empty; give the URL the export will be served from, or /");
    for (const char c : base_url) {
        if (static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '<' || c == '>' || c == '\\' || c == 0x7f)
            return invalid("the base URL '" + std::string(base_url) + "' holds a space, quote or control character");
        if (c == '?' || c == '#')
            return invalid("the base URL '" + std::string(base_url) + "' has a query or fragment; links are built by appending paths to it");
    }
    std::string_view rest = base_url;
    if (rest.starts_with("https://")) rest.remove_prefix(8);
    else if (rest.starts_with("http://")) rest.remove_prefix(7);
    else if (!rest.starts_with('/') || rest.starts_with("//"))
        return invalid("the base URL '" + std::string(base_url) + "' must start with http://, https:// or / (a path on the same host)");
    if (rest.data() != base_url.data()) {
        const auto host = rest.substr(0, rest.find('/'));
        if (host.empty()) return invalid("the base URL '" + std::string(base_url) + "' has no host");
        if (host.find('@') != std::string_view::npos)
            return invalid("the base URL '" + std::string(base_url) + "' holds credentials; they would be published in every page");
    }
    std::string base(base_url);
    while (base.ends_with('/')) base.pop_back();
    return base + "/";
}

result<std::string> files_base_for(std::string_view base_url) {
    auto root = root_for(base_url);
    if (!root) return root;
    return *root + "files/";
}

}  // namespace wheelhouse::static_export
