#include "wheelhouse/ingest/extraction_tree.hpp"

#include <cctype>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/quoted.hpp"
#include "wheelhouse/text/utf8.hpp"

namespace wheelhouse::ingest {
namespace {

constexpr std::string_view outside_reason = "rebuild the sdist: a member would be written outside its directory";
constexpr std::string_view link_reason = "rebuild the sdist without links that leave it";

std::string quoted(std::string_view text) { return text::quoted(text); }

error leaves(const std::string& detail) { return invalid(std::string(link_reason), detail); }

// What no path or link target may hold, whoever reads it: bytes that are not UTF-8, control
// characters, backslashes (a separator to Windows), a leading '/' or drive letter.
std::optional<std::string> text_fault(std::string_view text) {
    if (text.empty()) return "is empty";
    if (auto fault = text::find_utf8_fault(text)) return "is not UTF-8 (" + fault->what + ")";
    for (unsigned char c : text) {
        if (c < 0x20 || c == 0x7f) return "contains a control character";
        if (c == '\\') return "contains a backslash";
    }
    if (text.front() == '/') return "is an absolute path";
    if (text.size() >= 2 && text[1] == ':' && std::isalpha(static_cast<unsigned char>(text[0]))) {
        return "starts with a drive letter";
    }
    return std::nullopt;
}

std::vector<std::string_view> split(std::string_view path) {
    std::vector<std::string_view> parts;
    for (;;) {
        const auto slash = path.find('/');
        parts.push_back(path.substr(0, slash));
        if (slash == std::string_view::npos) return parts;
        path.remove_prefix(slash + 1);
    }
}

// Why `path` is no name an extraction writes as it is: the reason and what is wrong with it.
struct path_fault {
    std::string_view reason;
    std::string what;
};

std::optional<path_fault> find_path_fault(std::string_view path, const std::vector<std::string_view>& parts,
                                          std::string_view reason, std::size_t max_component_length) {
    if (auto fault = text_fault(path)) return path_fault{reason, *fault};
    for (const auto part : parts) {
        if (part == "..") return path_fault{reason, "contains '..'"};
        if (part.empty() || part == ".") return path_fault{reason, "has an empty or '.' part"};
        if (part.size() > max_component_length) {
            return path_fault{"rebuild the sdist with shorter names: a path has a part no file system takes",
                              "has a part longer than " + std::to_string(max_component_length) + " bytes"};
        }
    }
    return std::nullopt;
}

}  // namespace

extraction_tree::extraction_tree(const tar_name_limits& limits) : limits_(limits) { nodes_.push_back({}); }

std::optional<std::uint32_t> extraction_tree::child(std::uint32_t parent, std::string_view name) {
    ++steps_;
    const auto found = children_.find(child_probe{parent, name});
    if (found == children_.end()) return std::nullopt;
    return found->second;
}

result<void> extraction_tree::keep(std::size_t bytes) {
    kept_bytes_ += bytes;
    if (kept_bytes_ > limits_.max_kept_bytes) {
        return make_error(error_kind::too_large,
                          "rebuild the sdist with fewer or shorter names: they take more than " +
                              std::to_string(limits_.max_kept_bytes) + " bytes, past the limit");
    }
    return {};
}

result<std::uint32_t> extraction_tree::add(std::uint32_t parent, std::string_view name, node_kind kind) {
    if (auto kept = keep(name.size()); !kept) return kept.error();
    const auto id = static_cast<std::uint32_t>(nodes_.size());
    const auto [at, added] = children_.emplace(child_key{parent, std::string(name)}, id);
    nodes_.push_back({.parent = parent, .kind = kind, .name = &at->first.name});
    (void)added;  // callers looked first
    return id;
}

// The directory that holds the last of `parts`, made where names imply it; never through a
// link or a file.
result<std::uint32_t> extraction_tree::directory_of(const std::vector<std::string_view>& parts, std::string_view path) {
    std::uint32_t at = 0;
    for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
        const auto found = child(at, parts[i]);
        if (!found) {
            if (++implied_directories_ > limits_.max_implied_directories) {
                return make_error(error_kind::too_large,
                                  "rebuild the sdist with fewer directories: its names imply more than " +
                                      std::to_string(limits_.max_implied_directories));
            }
            auto made = add(at, parts[i], node_kind::implied_directory);
            if (!made) return made.error();
            at = *made;
            continue;
        }
        const auto kind = nodes_[*found].kind;
        if (kind == node_kind::symlink) {
            return invalid("rebuild the sdist without members under a symbolic link",
                           "member " + quoted(path) + " is stored under the link " + quoted(path_of(*found)) +
                               ": tarfile writes through it, GNU tar may not");
        }
        if (kind == node_kind::file) {
            return invalid("rebuild the sdist: a member is stored under a file",
                           "member " + quoted(path) + " is under the file " + quoted(path_of(*found)));
        }
        at = *found;
    }
    return at;
}

result<void> extraction_tree::place(const tar_entry& entry, std::string* resolved) {
    const auto parts = split(entry.name);
    if (auto fault = find_path_fault(entry.name, parts, outside_reason, limits_.max_component_length)) {
        return invalid(std::string(fault->reason), "member " + quoted(entry.name) + " " + fault->what);
    }
    auto directory = directory_of(parts, entry.name);
    if (!directory) return directory.error();
    const auto last = parts.back();
    if (const auto existing = child(*directory, last)) {
        auto& found = nodes_[*existing];
        if (entry.type == tar_entry_type::directory && found.kind == node_kind::implied_directory) {
            found.kind = node_kind::directory;
            return {};
        }
        return invalid("rebuild the sdist: a member appears twice in it",
                       "member " + quoted(entry.name) + " lands where an earlier one made " +
                           quoted(path_of(*existing)) + "; an unpacker would keep only one");
    }
    const auto add_here = [&](node_kind kind) -> result<void> {
        auto id = add(*directory, last, kind);
        if (!id) return id.error();
        return {};
    };
    switch (entry.type) {
        case tar_entry_type::file: return add_here(node_kind::file);
        case tar_entry_type::directory: return add_here(node_kind::directory);
        case tar_entry_type::hard_link: {
            auto target = hard_link_target(entry.link, entry.name);
            if (!target) return target.error();
            if (resolved) *resolved = path_of(*target);
            return add_here(node_kind::file);
        }
        case tar_entry_type::symlink: {
            if (*directory == 0) {
                return leaves("symbolic link " + quoted(entry.name) + " lies at the top level");
            }
            auto target = resolve(*directory, entry.link, entry.name);
            if (!target) return target.error();
            if (resolved) *resolved = path_of(target->node) + (target->rest.empty() ? "" : "/" + target->rest);
            auto made = add(*directory, last, node_kind::symlink);
            if (!made) return made.error();
            nodes_[*made].target = target->node;
            if (!target->rest.empty()) {
                if (auto kept = keep(target->rest.size()); !kept) return kept.error();
                nodes_[*made].rest = static_cast<std::uint32_t>(rests_.size());
                rests_.push_back(std::move(target->rest));
            }
            return {};
        }
    }
    return {};
}

// A hard link's target is an earlier file's path from the root, through directories only:
// link() does not follow a final symbolic link, and would copy it, target and all, elsewhere.
result<std::uint32_t> extraction_tree::hard_link_target(std::string_view link, std::string_view path) {
    const auto what = "hard link " + quoted(path) + " -> " + quoted(link);
    const auto parts = split(link);
    if (auto fault = find_path_fault(link, parts, link_reason, limits_.max_component_length)) {
        return invalid(std::string(fault->reason), what + ": its target " + fault->what);
    }
    std::uint32_t at = 0;
    for (const auto part : parts) {
        const auto found = child(at, part);
        if (!found) return leaves(what + " names no member before it");
        at = *found;
        if (nodes_[at].kind == node_kind::symlink) {
            return leaves(what + " names a symbolic link, or a path through one");
        }
    }
    if (nodes_[at].kind != node_kind::file) return leaves(what + " names no file before it");
    return at;
}

// Where `target`, read from `directory`, leads through what exists so far.
result<extraction_tree::resolution> extraction_tree::resolve(std::uint32_t directory, std::string_view target,
                                                             std::string_view path) {
    const auto what = "symbolic link " + quoted(path) + " -> " + quoted(target);
    if (auto fault = text_fault(target)) return leaves(what + ": its target " + *fault);
    resolution at{directory, {}};
    bool at_file = false;
    for (const auto part : split(target)) {
        ++steps_;
        if (at_file) return leaves(what + " passes through the file " + quoted(path_of(at.node)));
        if (part.size() > limits_.max_component_length) {
            return leaves(what + " has a part longer than " + std::to_string(limits_.max_component_length) +
                          " bytes");
        }
        if (part.empty() || part == ".") continue;
        if (part == "..") {
            if (!at.rest.empty()) {
                return invalid(std::string(link_reason),
                               what + " climbs out of " + quoted(at.rest) + ", which nothing before it made");
            }
            if (nodes_[at.node].parent == 0) {
                return leaves(what + " points outside " + quoted(path_of(at.node) + "/"));
            }
            at.node = nodes_[at.node].parent;
            continue;
        }
        if (!at.rest.empty()) {
            at.rest.append("/").append(part);
            continue;
        }
        const auto found = child(at.node, part);
        if (!found) {
            at.rest = std::string(part);
            continue;
        }
        const auto& next = nodes_[*found];
        if (next.kind == node_kind::symlink) {
            at.node = next.target;
            if (next.rest != no_rest) at.rest = rests_[next.rest];
        } else {
            at.node = *found;
        }
        at_file = at.rest.empty() && nodes_[at.node].kind == node_kind::file;
    }
    if (at.rest.size() > limits_.max_name_length) {
        return leaves(what + " resolves to a path longer than " + std::to_string(limits_.max_name_length) +
                      " bytes");
    }
    return at;
}

std::string extraction_tree::path_of(std::uint32_t id) const {
    std::vector<const std::string*> parts;
    for (; id != 0; id = nodes_[id].parent) parts.push_back(nodes_[id].name);
    std::string path;
    for (auto part = parts.rbegin(); part != parts.rend(); ++part) {
        if (!path.empty()) path.push_back('/');
        path.append(**part);
    }
    return path;
}

}  // namespace wheelhouse::ingest
