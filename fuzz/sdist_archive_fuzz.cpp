// Source distribution archives (ingest/sdist_archive, tar_stream, extraction_tree). The input is
// read three ways: gzipped here, as the tar stream inside an sdist (so the fuzzer works on tar
// headers, pax records, names and links rather than on deflate); as it is, as a .tar.gz (gzip
// framing, truncation, trailing bytes); and as lines of members placed straight into an
// extraction tree ("f name", "d name", "s name\ttarget", "h name\ttarget"). Beside memory safety:
// - what is accepted stays within the limits it was given (members, PKG-INFO size, bytes
//   inflated), has one top-level directory, and, read from the gzipped tar, was inflated to
//   exactly the input;
// - what is accepted yields a consistent member model: one report per member counted, each
//   path under the root and none twice, no member under a link, every link's resolution under
//   the root, every hard link naming an earlier file;
// - what is refused says why in printable text: a reason line, then printable detail;
// - the cost is linear: the tree's steps (path parts looked up; what an upload pays, without
//   the report's paths) stay within a constant times the bytes of names and targets it was
//   given, and the member lines placed twice (under two top-level directories) cost twice what
//   they cost once, so doubling the input cannot square the cost.

#include <zlib.h>

#include <cstdlib>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "archive_limits.hpp"
#include "fuzz_support.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/extraction_tree.hpp"
#include "wheelhouse/ingest/sdist_archive.hpp"

namespace {

namespace ingest = wheelhouse::ingest;

const auto& limits = wheelhouse::fuzz::small_archive_limits;

std::string gzip(std::string_view bytes) {
    z_stream stream{};
    if (deflateInit2(&stream, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
    std::string out(deflateBound(&stream, static_cast<uLong>(bytes.size())) + 64, '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(bytes.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
    out.resize(stream.total_out);
    deflateEnd(&stream);
    return out;
}

struct reported {
    ingest::tar_entry_type type;
    std::string path, link, resolved;
};

wheelhouse::result<ingest::sdist_archive> read(std::string_view bytes, std::vector<reported>& members) {
    members.clear();
    const auto report = [&](const ingest::sdist_member& member) {
        members.push_back(
            {member.type, std::string(member.path), std::string(member.link), std::string(member.resolved)});
    };
    return ingest::read_sdist_archive(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                                      limits, {}, report);
}

bool under(std::string_view path, std::string_view root) {
    return path == root || (path.size() > root.size() && path.starts_with(root) && path[root.size()] == '/');
}

void check_accepted(const ingest::sdist_archive& archive, const std::vector<reported>& members, std::string_view input) {
    const std::string shown(input.substr(0, 200));
    WHEELHOUSE_FUZZ_CHECK(archive.entry_count >= 1 && archive.entry_count <= limits.max_entries, shown);
    WHEELHOUSE_FUZZ_CHECK(archive.pkg_info.size() <= limits.max_metadata_size, shown);
    WHEELHOUSE_FUZZ_CHECK(archive.uncompressed_size <= limits.max_total_uncompressed, shown);
    WHEELHOUSE_FUZZ_CHECK(!archive.root.empty() && archive.root.find('/') == std::string::npos, archive.root);
    WHEELHOUSE_FUZZ_CHECK(members.size() == archive.entry_count, shown);
    std::set<std::string> paths, files, links;
    for (const auto& member : members) {
        WHEELHOUSE_FUZZ_CHECK(under(member.path, archive.root) && !member.path.ends_with('/'), member.path);
        WHEELHOUSE_FUZZ_CHECK(paths.insert(member.path).second, member.path);
        for (const auto& link : links) WHEELHOUSE_FUZZ_CHECK(!member.path.starts_with(link + "/"), member.path);
        switch (member.type) {
            case ingest::tar_entry_type::symlink:
                WHEELHOUSE_FUZZ_CHECK(under(member.resolved, archive.root), member.path + " -> " + member.resolved);
                links.insert(member.path);
                break;
            case ingest::tar_entry_type::hard_link:
                WHEELHOUSE_FUZZ_CHECK(files.contains(member.link) && member.resolved == member.link, member.path);
                files.insert(member.path);
                break;
            case ingest::tar_entry_type::file: files.insert(member.path); break;
            case ingest::tar_entry_type::directory: break;
        }
    }
}

void check_refusal(const wheelhouse::error& failure) {
    const auto reason = wheelhouse::reason_of(failure);
    WHEELHOUSE_FUZZ_CHECK(!reason.empty() && reason.size() <= 4 * wheelhouse::reason_budget, failure.message);
    for (unsigned char c : failure.message) {
        WHEELHOUSE_FUZZ_CHECK((c >= 0x20 && c < 0x7f) || c == '\n', failure.message);
    }
}

// The input's lines as members ("s name\ttarget"), each name under `top` when given.
std::vector<ingest::tar_entry> member_lines(std::string_view input, std::string_view top) {
    std::vector<ingest::tar_entry> entries;
    for (auto line : wheelhouse::fuzz::split(input, '\n')) {
        if (line.size() < 2) continue;
        ingest::tar_entry entry;
        const char kind = line[0];
        entry.type = kind == 'd' ? ingest::tar_entry_type::directory
                     : kind == 's' ? ingest::tar_entry_type::symlink
                     : kind == 'h' ? ingest::tar_entry_type::hard_link
                                   : ingest::tar_entry_type::file;
        line.remove_prefix(2);
        const auto tab = line.find('\t');
        entry.name = std::string(top) + std::string(line.substr(0, tab));
        if (tab != std::string_view::npos) {
            const auto target = line.substr(tab + 1);
            const bool from_root = entry.type == ingest::tar_entry_type::hard_link;
            entry.link = (from_root ? std::string(top) : std::string()) + std::string(target);
        }
        entries.push_back(std::move(entry));
    }
    return entries;
}

std::uint64_t steps_placing(const std::vector<ingest::tar_entry>& entries, std::uint64_t& bytes) {
    const ingest::tar_name_limits names;
    ingest::extraction_tree tree(names);
    for (const auto& entry : entries) {
        bytes += entry.name.size() + entry.link.size() + 1;
        (void)tree.place(entry);  // on past refusals: every line costs what it costs
    }
    return tree.steps();
}

void check_linear_cost(std::string_view input) {
    std::uint64_t once_bytes = 0, twice_bytes = 0, alone_bytes = 0;
    const auto once = steps_placing(member_lines(input, "a/"), once_bytes);
    auto both = member_lines(input, "a/");
    for (auto& entry : member_lines(input, "b/")) both.push_back(std::move(entry));
    const auto twice = steps_placing(both, twice_bytes);
    const auto alone = steps_placing(member_lines(input, ""), alone_bytes);
    const auto detail = std::to_string(once) + " steps once, " + std::to_string(twice) + " twice, " +
                        std::to_string(alone) + " for " + std::to_string(alone_bytes) + " bytes";
    // Under two top-level directories the copies never meet: the same work, twice.
    WHEELHOUSE_FUZZ_CHECK(twice <= 2 * once, detail);
    // A step per path part looked up or walked: at most a few per byte of name or target.
    WHEELHOUSE_FUZZ_CHECK(alone <= 3 * alone_bytes, detail);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto input = wheelhouse::fuzz::as_text(data, size);
    std::vector<reported> members;
    if (auto archive = read(gzip(input), members)) {
        check_accepted(*archive, members, input);
        WHEELHOUSE_FUZZ_CHECK(archive->uncompressed_size == input.size(),
                              std::to_string(archive->uncompressed_size) + " of " + std::to_string(input.size()));
    } else {
        check_refusal(archive.error());
    }
    if (auto archive = read(input, members)) {
        check_accepted(*archive, members, input);
    } else {
        check_refusal(archive.error());
    }
    check_linear_cost(input);
    return 0;
}
