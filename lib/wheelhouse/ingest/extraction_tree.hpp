#pragma once
// What unpacking an archive's members in order would make, modelled without a disk: the tree
// of the paths made so far, so that each member is judged by where an extraction would put it
// (PEP 706's data filter: by what the extraction does, not by how a name looks), and a little
// stricter, so that tarfile and GNU tar make the same tree:
// - a path is relative UTF-8 without control characters, backslashes, a drive letter, or an
//   empty, "." or ".." part, each part at most max_component_length bytes;
// - the directories above a member are directories (made by members or implied by names),
//   never a link or a file: nothing is written through a link (GNU tar delays links whose
//   target has "..", tarfile does not, so the two would write different trees);
// - a member lands on nothing an earlier one made (a directory member may name a directory
//   that names before it implied);
// - a symbolic link's target, resolved from the link's directory through the directories and
//   links made so far, stays inside the top-level directory that holds the link. Past a part
//   that does not exist yet only descending parts may follow: what ".." would climb out of is
//   not known until a later member makes it;
// - a hard link names an earlier file, by its path from the root, through directories only.
// Why one resolution per link is enough: nothing an earlier member made is ever replaced, so a
// resolution through made parts stays true, and past a missing part the target only descends,
// through whatever later members put there, each of them checked in turn. So each link's
// resolution is kept, and resolving through it later costs one step.
//
// Cost: O(p log n) for a member of p path parts among n nodes (an ordered map, not a hash: the
// names come from the uploader, who could choose ones whose hashes collide). Memory: one node
// per path made (about 120 bytes, plus its last part when longer than 15 bytes) and each
// link's unresolved rest; the parts and rests kept are bounded by max_kept_bytes.

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/ingest/tar_stream.hpp"
#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

// Thread safety: one archive's members, placed in order on one thread at a time.
class extraction_tree {
public:
    explicit extraction_tree(const tar_name_limits& limits);

    // Adds `entry` where an extraction would put it, or says why it would not be safe there.
    // For a symbolic link, `resolved` (when given) receives where its target resolves, from the
    // root: "demo-1.0/src/mod.py" (the parts past the last existing one included).
    result<void> place(const tar_entry& entry, std::string* resolved = nullptr);

    // Path parts looked up so far: the model's whole cost, for the fuzz harness's bound.
    std::uint64_t steps() const noexcept { return steps_; }

private:
    enum class node_kind : std::uint8_t { implied_directory, directory, file, symlink };
    static constexpr std::uint32_t no_rest = UINT32_MAX;

    struct node {
        std::uint32_t parent = 0;
        node_kind kind = node_kind::implied_directory;
        std::uint32_t target = 0;      // a symlink's: the last existing node its target reached
        std::uint32_t rest = no_rest;  // a symlink's: index in rests_ of the parts past it
        const std::string* name = nullptr;  // the key in children_
    };

    struct child_key {
        std::uint32_t parent;
        std::string name;
    };
    struct child_probe {
        std::uint32_t parent;
        std::string_view name;
    };
    struct child_order {
        using is_transparent = void;
        template <class A, class B>
        bool operator()(const A& a, const B& b) const noexcept {
            if (a.parent != b.parent) return a.parent < b.parent;
            return std::string_view(a.name) < std::string_view(b.name);
        }
    };

    struct resolution {
        std::uint32_t node = 0;
        std::string rest;  // parts past the last existing node, '/'-joined
    };

    std::optional<std::uint32_t> child(std::uint32_t parent, std::string_view name);
    result<std::uint32_t> add(std::uint32_t parent, std::string_view name, node_kind kind);
    result<std::uint32_t> directory_of(const std::vector<std::string_view>& parts, std::string_view path);
    result<std::uint32_t> hard_link_target(std::string_view link, std::string_view path);
    result<resolution> resolve(std::uint32_t directory, std::string_view target, std::string_view path);
    result<void> keep(std::size_t bytes);
    std::string path_of(std::uint32_t node) const;

    const tar_name_limits& limits_;
    std::vector<node> nodes_;  // nodes_[0]: the directory the archive is unpacked into
    std::map<child_key, std::uint32_t, child_order> children_;
    std::vector<std::string> rests_;
    std::uint64_t kept_bytes_ = 0;
    std::uint64_t implied_directories_ = 0;
    std::uint64_t steps_ = 0;
};

}  // namespace wheelhouse::ingest
