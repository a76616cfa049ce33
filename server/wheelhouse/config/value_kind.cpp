#include "wheelhouse/config/value_kind.hpp"

#include <algorithm>

#include <boost/url/ipv6_address.hpp>

#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::config {
namespace {

using text::to_lower;
using text::trim;

std::vector<std::string> split_commas(std::string_view text) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= text.size()) {
        const auto comma = text.find(',', start);
        const auto end = comma == std::string_view::npos ? text.size() : comma;
        parts.emplace_back(text.substr(start, end - start));
        start = end + 1;
    }
    return parts;
}

bool is_host(const std::string& host) {
    std::string bare = host;
    if (bare.size() >= 2 && bare.front() == '[' && bare.back() == ']') bare = bare.substr(1, bare.size() - 2);
    if (boost::urls::parse_ipv6_address(bare)) return true;
    return std::all_of(host.begin(), host.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    });
}

// "github.com, [::1] ,127.0.0.1" -> the entries, lower case; an entry that is no host fails.
result<std::vector<std::string>> parse_host_list(std::string_view comma_separated) {
    std::vector<std::string> hosts;
    for (const auto& raw : split_commas(comma_separated)) {
        std::string host = to_lower(trim(raw));
        if (host.empty()) continue;
        if (!is_host(host)) {
            return invalid("'" + raw + "' is not a host name or IP address; write names alone, without scheme, port or path "
                           "(e.g. github.com,objects.githubusercontent.com)");
        }
        hosts.push_back(host);
    }
    return hosts;
}

}  // namespace

std::optional<std::uint64_t> file_count(const toml::node& node, std::uint64_t largest) {
    // Exact: value<>() would convert a float, and one past 2^63 (4444e46) is undefined behaviour.
    const auto value = node.value_exact<std::int64_t>();
    if (!value || *value < 0 || static_cast<std::uint64_t>(*value) > largest) return std::nullopt;
    return static_cast<std::uint64_t>(*value);
}

// An array's names joined as the command line writes them, so both are read by one parser.
std::optional<std::string> value_kind<std::vector<std::string>>::from_file(const toml::node& node) {
    if (auto single = node.value<std::string>()) return single;
    const auto* array = node.as_array();
    if (!array) return std::nullopt;
    std::string joined;
    for (const auto& element : *array) {
        const auto name = element.value<std::string>();
        if (!name) return std::nullopt;
        joined += (joined.empty() ? "" : ",") + *name;
    }
    return joined;
}

result<void> value_kind<std::vector<std::string>>::assign(std::vector<std::string>& out, const input& value) {
    auto hosts = parse_host_list(value);
    if (!hosts) return hosts.error();
    out = std::move(hosts).value();
    return {};
}

namespace {

// Each element of a TOML array: a string as it is, or a table written as that string.
template <class FromTable>
std::optional<std::vector<std::string>> strings_or_tables(const toml::node& node, const FromTable& from_table) {
    const auto* array = node.as_array();
    if (!array) return std::nullopt;
    std::vector<std::string> out;
    for (const auto& element : *array) {
        if (auto text = element.value<std::string>()) {
            out.push_back(std::move(*text));
        } else if (const auto* table = element.as_table()) {
            auto text_of_table = from_table(*table);
            if (!text_of_table) return std::nullopt;
            out.push_back(std::move(*text_of_table));
        } else {
            return std::nullopt;
        }
    }
    return out;
}

// Every entry, split further at ';' (the variable's separator), blanks around each dropped.
template <class Entry>
result<std::vector<Entry>> parse_each(const std::vector<std::string>& values,
                                      result<Entry> (*parse)(std::string_view)) {
    std::vector<Entry> out;
    for (const auto& value : values) {
        std::size_t start = 0;
        while (start <= value.size()) {
            const auto end = std::min(value.find(';', start), value.size());
            const auto piece = trim(std::string_view(value).substr(start, end - start));
            if (!piece.empty()) {
                auto parsed = parse(piece);
                if (!parsed) return parsed.error();
                out.push_back(std::move(*parsed));
            }
            start = end + 1;
        }
    }
    return out;
}

}  // namespace

std::optional<std::vector<std::string>> value_kind<std::vector<upstream::upstream_index>>::from_file(
    const toml::node& node) {
    return strings_or_tables(node, [](const toml::table& table) -> std::optional<std::string> {
        const auto name = table["name"].value<std::string>();
        const auto url = table["url"].value<std::string>();
        if (!name || !url || table.size() != 2) return std::nullopt;
        return *name + "=" + *url;
    });
}

result<void> value_kind<std::vector<upstream::upstream_index>>::assign(std::vector<upstream::upstream_index>& out,
                                                                        const input& value) {
    auto parsed = parse_each<upstream::upstream_index>(value, upstream::parse_upstream);
    if (!parsed) return parsed.error();
    out = std::move(parsed).value();
    return {};
}

result<pinned_key_file> parse_pinned_key_file(std::string_view text) {
    const auto equals = text.find('=');
    const auto issuer = text.substr(0, equals == std::string_view::npos ? 0 : equals);
    const auto file = equals == std::string_view::npos ? std::string_view{} : text.substr(equals + 1);
    std::error_code ec;
    if (!issuer.starts_with("https://") || file.empty() || !std::filesystem::is_regular_file(file, ec)) {
        return invalid("'" + std::string(text) + "' is not ISSUER=FILE with an https:// issuer and a readable JWK set "
                       "file, e.g. https://token.actions.githubusercontent.com=/etc/wheelhouse/github-jwks.json");
    }
    return pinned_key_file{std::string(issuer), std::string(file)};
}

std::optional<std::vector<std::string>> value_kind<std::vector<pinned_key_file>>::from_file(const toml::node& node) {
    return strings_or_tables(node, [](const toml::table&) -> std::optional<std::string> { return std::nullopt; });
}

result<void> value_kind<std::vector<pinned_key_file>>::assign(std::vector<pinned_key_file>& out, const input& value) {
    auto parsed = parse_each<pinned_key_file>(value, parse_pinned_key_file);
    if (!parsed) return parsed.error();
    out = std::move(parsed).value();
    return {};
}

std::optional<std::vector<std::string>> value_kind<std::vector<upstream::route>>::from_file(const toml::node& node) {
    return strings_or_tables(node, [](const toml::table& table) -> std::optional<std::string> {
        const auto index = table["index"].value<std::string>();
        const auto upstream = table["upstream"].value<std::string>();
        const auto* projects = table["projects"].as_array();
        if (!index || !upstream || !projects || table.size() != 3) return std::nullopt;
        std::string text = *index + ":";
        for (const auto& project : *projects) {
            const auto name = project.value<std::string>();
            if (!name) return std::nullopt;
            text += " " + *name;
        }
        return text + " = " + *upstream;
    });
}

result<void> value_kind<std::vector<upstream::route>>::assign(std::vector<upstream::route>& out, const input& value) {
    auto parsed = parse_each<upstream::route>(value, upstream::parse_route);
    if (!parsed) return parsed.error();
    out = std::move(parsed).value();
    return {};
}

result<void> value_kind<catalog::download_mode>::assign(catalog::download_mode& out, const input& value) {
    const auto mode = catalog::parse_download_mode(value);
    if (!mode || *mode == catalog::download_mode::local)
        return invalid("'" + value + "' is not a download mode; use redirect, proxy or cache");
    out = *mode;
    return {};
}

}  // namespace wheelhouse::config
