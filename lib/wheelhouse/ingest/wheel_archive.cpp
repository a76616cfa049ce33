#include "wheelhouse/ingest/wheel_archive.hpp"

#include <zip.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/range_cache.hpp"
#include "wheelhouse/ingest/record.hpp"
#include "wheelhouse/ingest/zip_range_source.hpp"
#include "wheelhouse/ingest/zip_tail.hpp"
#include "wheelhouse/pep825/variant_metadata.hpp"
#include "wheelhouse/text/base64.hpp"

namespace wheelhouse::ingest {
namespace {

struct archive_closer {
    void operator()(zip_t* archive) const noexcept { zip_discard(archive); }
};
struct entry_closer {
    void operator()(zip_file_t* file) const noexcept { zip_fclose(file); }
};
using archive_handle = std::unique_ptr<zip_t, archive_closer>;
using entry_handle = std::unique_ptr<zip_file_t, entry_closer>;

std::string zip_message(int code) {
    zip_error_t failure;
    zip_error_init_with_code(&failure, code);
    std::string message = zip_error_strerror(&failure);
    zip_error_fini(&failure);
    return message;
}

// libzip's consistency check refuses duplicate names without saying which; find it to say so.
error duplicate_entry_error(const std::filesystem::path& path) {
    int code = 0;
    archive_handle archive(zip_open(path.c_str(), ZIP_RDONLY, &code));
    std::set<std::string> seen;
    const zip_int64_t count = archive ? zip_get_num_entries(archive.get(), 0) : 0;
    for (zip_int64_t index = 0; index < count; ++index) {
        const char* name = zip_get_name(archive.get(), static_cast<zip_uint64_t>(index), 0);
        if (name != nullptr && !seen.insert(name).second) {
            return invalid("entry " + std::string(name) +
                           " appears twice in the archive; an installer would keep only one of them");
        }
    }
    return invalid("two archive entries have the same name; an installer would keep only one of them");
}

error open_error(int code, const std::filesystem::path& path) {
    switch (code) {
        case ZIP_ER_EXISTS:
            return duplicate_entry_error(path);
        case ZIP_ER_NOZIP:
            return invalid("not a zip archive (no end-of-central-directory record): a wheel is a zip file; "
                           "was the file truncated?");
        case ZIP_ER_INCONS:
            return invalid("the zip archive is inconsistent (its directory and its entries disagree); the file "
                           "is corrupt or truncated");
        case ZIP_ER_MULTIDISK:
            return invalid("a multi-disk zip archive cannot be a wheel");
        case ZIP_ER_OPEN:
        case ZIP_ER_READ:
        case ZIP_ER_SEEK:
        case ZIP_ER_MEMORY:
            return make_error(error_kind::internal, "reading " + path.string() + ": " + zip_message(code));
        default:
            return invalid("not a readable zip archive: " + zip_message(code));
    }
}

std::string with_bytes(std::uint64_t count) { return std::to_string(count) + " bytes"; }

struct entry_info {
    zip_uint64_t index = 0;
    std::string name;
    std::uint64_t size = 0;  // declared, uncompressed
    bool directory = false;
};

// Reads one entry, never past min(declared size, `cap`) + 1 byte, feeding `sink` as it goes.
template <class Sink>
result<std::uint64_t> inflate_entry(zip_t* archive, const entry_info& entry, std::uint64_t cap, Sink&& sink) {
    entry_handle file(zip_fopen_index(archive, entry.index, 0));
    if (!file) {
        return invalid("entry " + entry.name + " cannot be opened: " + zip_strerror(archive));
    }
    std::array<std::uint8_t, 64 * 1024> buffer{};
    std::uint64_t total = 0;
    for (;;) {
        const zip_int64_t count = zip_fread(file.get(), buffer.data(), buffer.size());
        if (count < 0) {
            return invalid("entry " + entry.name + " is corrupt: " + zip_file_strerror(file.get()));
        }
        if (count == 0) break;
        total += static_cast<std::uint64_t>(count);
        if (total > entry.size) {
            return invalid("entry " + entry.name + " inflates past its declared size of " + with_bytes(entry.size) +
                           ": refusing a possible zip bomb");
        }
        if (total > cap) return total;  // the caller reports which limit
        sink(std::span<const std::uint8_t>(buffer.data(), static_cast<std::size_t>(count)));
    }
    if (total != entry.size) {
        return invalid("entry " + entry.name + " holds " + with_bytes(total) + " but the archive declares " +
                       with_bytes(entry.size) + "; the file is corrupt or truncated");
    }
    return total;
}

result<std::string> read_small_entry(zip_t* archive, const entry_info& entry, std::uint64_t limit) {
    if (entry.size > limit) {
        return make_error(error_kind::too_large, entry.name + " is " + with_bytes(entry.size) + ", past the limit of " +
                                                     with_bytes(limit) + " for dist-info files");
    }
    std::string bytes;
    bytes.reserve(static_cast<std::size_t>(entry.size));
    auto read = inflate_entry(archive, entry, limit, [&](std::span<const std::uint8_t> chunk) {
        bytes.append(reinterpret_cast<const char*>(chunk.data()), chunk.size());
    });
    if (!read) return read.error();
    return bytes;
}

bool is_record_or_signature(std::string_view name, std::string_view dist_info) {
    if (name.size() <= dist_info.size() + 1 || !name.starts_with(dist_info) || name[dist_info.size()] != '/') {
        return false;
    }
    const auto file = name.substr(dist_info.size() + 1);
    return file == "RECORD" || file == "RECORD.jws" || file == "RECORD.p7s";
}

}  // namespace

result<void> check_entry_name(std::string_view name) {
    if (name.empty()) return invalid("an archive entry has an empty name");
    const std::string quoted = "entry \"" + std::string(name) + "\"";
    if (name.front() == '/') return invalid(quoted + " has an absolute path; wheel entries must be relative");
    if (name.size() >= 2 && name[1] == ':' && std::isalpha(static_cast<unsigned char>(name[0]))) return invalid(quoted + " starts with a drive letter; wheel entries must be relative");
    if (name.find('\\') != std::string_view::npos) return invalid(quoted + " contains a backslash; wheel paths use '/'");
    for (unsigned char c : name) {
        if (c < 0x20 || c == 0x7f) return invalid(quoted + " contains a control character");
    }
    std::string_view rest = name;
    if (rest.ends_with('/')) rest.remove_suffix(1);  // a directory entry
    while (true) {
        const auto slash = rest.find('/');
        const auto component = rest.substr(0, slash);
        if (component == "..") return invalid(quoted + " contains '..': it would be written outside the install directory");
        if (component.empty() || component == ".") return invalid(quoted + " has an empty or '.' path component");
        if (slash == std::string_view::npos) break;
        rest.remove_prefix(slash + 1);
    }
    return {};
}

result<void> check_wheel_metadata(std::string_view wheel) {
    while (!wheel.empty()) {
        const auto end = wheel.find('\n');
        std::string_view line = wheel.substr(0, end);
        wheel.remove_prefix(end == std::string_view::npos ? wheel.size() : end + 1);
        if (line.ends_with('\r')) line.remove_suffix(1);
        if (line.empty()) break;  // end of the headers
        const auto colon = line.find(':');
        if (colon == std::string_view::npos) continue;
        std::string_view key = line.substr(0, colon);
        if (key != "Wheel-Version") continue;
        std::string_view value = line.substr(colon + 1);
        while (!value.empty() && (value.front() == ' ' || value.front() == '\t')) value.remove_prefix(1);
        while (!value.empty() && (value.back() == ' ' || value.back() == '\t')) value.remove_suffix(1);
        unsigned major = 0;
        auto [next, code] = std::from_chars(value.data(), value.data() + value.size(), major);
        if (code != std::errc{} || next == value.data() + value.size() || *next != '.') {
            return invalid("WHEEL says Wheel-Version: " + std::string(value) + "; expected a version such as 1.0");
        }
        if (major != 1) {
            return invalid("WHEEL says Wheel-Version: " + std::string(value) +
                           "; only version 1.x wheels can be installed by today's installers");
        }
        return {};
    }
    return invalid("WHEEL has no Wheel-Version header");
}

namespace {

// What pass 1 learns from the central directory alone.
struct directory {
    std::vector<entry_info> entries;
    std::unordered_map<std::string, std::size_t> by_name;
    std::string dist_info;
    std::uint64_t declared_total = 0;
    std::size_t metadata = 0;  // indices into entries
    std::size_t wheel = 0;
    std::size_t record = 0;
    std::optional<std::size_t> variant_json;  // PEP 825's, read like METADATA when present
};

// An entry's record in the central directory, with the name and sizes every entry needs.
result<zip_stat_t> stat_entry(zip_t* archive, zip_uint64_t index) {
    zip_stat_t stat;
    zip_stat_init(&stat);
    if (zip_stat_index(archive, index, 0, &stat) != 0) {
        return invalid("entry " + std::to_string(index) + " cannot be read: " + zip_strerror(archive));
    }
    const std::uint64_t required = ZIP_STAT_NAME | ZIP_STAT_SIZE | ZIP_STAT_COMP_SIZE | ZIP_STAT_COMP_METHOD;
    if ((stat.valid & required) != required) {
        return invalid("entry " + std::to_string(index) + " lacks a name or sizes in the zip directory");
    }
    return stat;
}

// What an entry's record promises, held to the limits before anything is inflated: no
// encryption, a compression method libzip reads, a size within the limit, a plausible ratio.
result<void> check_entry_record(const zip_stat_t& stat, const entry_info& entry, const archive_limits& limits) {
    if ((stat.valid & ZIP_STAT_ENCRYPTION_METHOD) && stat.encryption_method != ZIP_EM_NONE) {
        return invalid("entry " + entry.name + " is encrypted");
    }
    if (!entry.directory && !zip_compression_method_supported(static_cast<zip_int32_t>(stat.comp_method), 0)) {
        return invalid("entry " + entry.name + " uses zip compression method " + std::to_string(stat.comp_method) +
                       ", which cannot be read here; wheels use deflate");
    }
    if (entry.size > limits.max_entry_uncompressed) {
        return make_error(error_kind::too_large, "entry " + entry.name + " declares " + with_bytes(entry.size) +
                                                     ", past the per-entry limit of " +
                                                     with_bytes(limits.max_entry_uncompressed));
    }
    if (entry.size > limits.ratio_floor &&
        (stat.comp_size == 0 || entry.size / stat.comp_size > limits.max_compression_ratio)) {
        return invalid("entry " + entry.name + " would inflate from " + with_bytes(stat.comp_size) + " to " +
                       with_bytes(entry.size) + " (more than " + std::to_string(limits.max_compression_ratio) +
                       ":1): refusing a possible zip bomb");
    }
    return {};
}

// Entry `index` checked and added to `found`, its top-level *.dist-info directory (if it is in
// one) to `dist_infos`.
result<void> add_entry(zip_t* archive, zip_uint64_t index, const archive_limits& limits, directory& found,
                       std::set<std::string>& dist_infos) {
    auto stat = stat_entry(archive, index);
    if (!stat) return stat.error();
    entry_info entry{index, stat->name, stat->size, std::string_view(stat->name).ends_with('/')};
    if (auto named = check_entry_name(entry.name); !named) return named.error();
    if (!found.by_name.emplace(entry.name, found.entries.size()).second) {
        return invalid("entry " + entry.name + " appears twice in the archive; an installer would keep only one of them");
    }
    if (auto promised = check_entry_record(*stat, entry, limits); !promised) return promised.error();
    found.declared_total += entry.size;
    if (found.declared_total > limits.max_total_uncompressed) {
        return make_error(error_kind::too_large, "the archive declares more than " +
                                                     with_bytes(limits.max_total_uncompressed) +
                                                     " uncompressed, past the limit: refusing a possible zip bomb");
    }
    const auto slash = entry.name.find('/');
    if (slash != std::string::npos && std::string_view(entry.name).substr(0, slash).ends_with(".dist-info")) {
        dist_infos.insert(entry.name.substr(0, slash));
    }
    found.entries.push_back(std::move(entry));
    return {};
}

// The one *.dist-info directory a wheel has.
result<std::string> only_dist_info(const std::set<std::string>& dist_infos) {
    if (dist_infos.empty()) return invalid("the wheel has no top-level *.dist-info directory");
    if (dist_infos.size() > 1) {
        std::string names;
        for (const auto& name : dist_infos) names += (names.empty() ? "" : ", ") + name;
        return invalid("the wheel has " + std::to_string(dist_infos.size()) + " .dist-info directories (" + names +
                       "); it must have exactly one");
    }
    return *dist_infos.begin();
}

// METADATA, WHEEL and RECORD in the dist-info directory, and variant.json when it is there.
result<void> find_dist_info_files(directory& found) {
    const auto find_required = [&](std::string_view file) -> result<std::size_t> {
        const auto at = found.by_name.find(found.dist_info + "/" + std::string(file));
        if (at == found.by_name.end() || found.entries[at->second].directory) {
            return invalid(found.dist_info + "/" + std::string(file) + " is missing; every wheel has METADATA, WHEEL and RECORD");
        }
        return at->second;
    };
    auto metadata_entry = find_required("METADATA");
    if (!metadata_entry) return metadata_entry.error();
    auto wheel_entry = find_required("WHEEL");
    if (!wheel_entry) return wheel_entry.error();
    auto record_entry = find_required("RECORD");
    if (!record_entry) return record_entry.error();
    found.metadata = *metadata_entry;
    found.wheel = *wheel_entry;
    found.record = *record_entry;
    if (const auto variant = found.by_name.find(found.dist_info + "/variant.json");
        variant != found.by_name.end() && !found.entries[variant->second].directory) {
        found.variant_json = variant->second;
    }
    return {};
}

// Pass 1: names, declared sizes and the dist-info directory, before inflating anything.
// Touches only the central directory.
result<directory> read_directory(zip_t* archive, const archive_limits& limits) {
    const zip_int64_t count = zip_get_num_entries(archive, 0);
    if (count <= 0) return invalid("the zip archive is empty");
    if (static_cast<std::uint64_t>(count) > limits.max_entries) {
        return make_error(error_kind::too_large, "the archive has " + std::to_string(count) + " entries, past the limit of " +
                                                     std::to_string(limits.max_entries));
    }
    directory found;
    found.entries.reserve(static_cast<std::size_t>(count));
    std::set<std::string> dist_infos;
    for (zip_uint64_t index = 0; index < static_cast<zip_uint64_t>(count); ++index) {
        if (auto added = add_entry(archive, index, limits, found, dist_infos); !added) return added.error();
    }
    auto dist_info = only_dist_info(dist_infos);
    if (!dist_info) return dist_info.error();
    found.dist_info = std::move(dist_info).value();
    if (auto located = find_dist_info_files(found); !located) return located.error();
    return found;
}

// The checks every reading shares once the directory is known: WHEEL's version. The result
// carries WHEEL, variant.json and the counts; METADATA is read last, by the caller.
result<wheel_archive> start_archive(zip_t* archive, const directory& found, const archive_limits& limits) {
    wheel_archive wheel;
    wheel.dist_info = found.dist_info;
    wheel.entry_count = found.entries.size();
    auto wheel_text = read_small_entry(archive, found.entries[found.wheel], limits.max_metadata_size);
    if (!wheel_text) return wheel_text.error();
    if (auto checked = check_wheel_metadata(*wheel_text); !checked) return checked.error();
    wheel.wheel = std::move(wheel_text).value();
    if (found.variant_json) {
        const auto& entry = found.entries[*found.variant_json];
        wheel.variant_json_size = entry.size;
        // A larger one is refused by its declared size (wheel_validation) before a byte is inflated.
        if (entry.size <= pep825::limits{}.bytes) {
            auto variant = read_small_entry(archive, entry, pep825::limits{}.bytes);
            if (!variant) return variant.error();
            wheel.variant_json = std::move(variant).value();
        }
    }
    return wheel;
}

// RECORD's rows by path.
using record_index = std::unordered_map<std::string_view, const record_row*>;

// Every RECORD row names an entry, and (but for RECORD and its signatures) carries its hash.
result<record_index> index_record(const std::vector<record_row>& record, const directory& listing,
                                  std::string_view dist_info) {
    record_index listed;
    for (const auto& row : record) {
        const auto found = listing.by_name.find(row.path);
        if (found == listing.by_name.end() || listing.entries[found->second].directory) {
            return invalid("rebuild the wheel: RECORD lists a file the archive lacks",
                           "RECORD lists " + row.path + " but the archive has no such file");
        }
        if (!row.algorithm && !is_record_or_signature(row.path, dist_info)) {
            return invalid("rebuild the wheel: RECORD lists a file without its hash",
                           "RECORD lists " + row.path + " without a hash; only RECORD itself may have none");
        }
        listed.emplace(row.path, &row);
    }
    return listed;
}

// One file inflated within what is left of the archive's limit after `inflated_before` bytes,
// and held to its RECORD row (`expected`; nullptr for RECORD and its signatures): its size and
// its hash. Returns the bytes it inflated to.
result<std::uint64_t> inflate_against_record(zip_t* archive, const entry_info& entry, const record_row* expected,
                                             const archive_limits& limits, std::uint64_t inflated_before) {
    std::optional<crypto::hasher> hasher;
    if (expected != nullptr && expected->algorithm) {
        auto created = crypto::hasher::create(*expected->algorithm);
        if (!created) return created.error();
        hasher.emplace(std::move(created).value());
    }
    const std::uint64_t budget = limits.max_total_uncompressed - inflated_before;
    auto inflated = inflate_entry(archive, entry, budget, [&](std::span<const std::uint8_t> chunk) {
        if (hasher) hasher->update(chunk);
    });
    if (!inflated) return inflated.error();
    if (*inflated > budget) {
        return make_error(error_kind::too_large, "the archive inflates past " + with_bytes(limits.max_total_uncompressed) +
                                                     ": refusing a possible zip bomb");
    }
    if (expected == nullptr) return inflated;
    if (expected->size && *expected->size != *inflated) {
        return invalid("rebuild the wheel: a file's size differs from what RECORD says",
                       "RECORD says " + entry.name + " is " + with_bytes(*expected->size) + " but the archive entry is " +
                           with_bytes(*inflated));
    }
    if (hasher) {
        const auto actual = text::base64url_encode(hasher->finish());
        if (actual != expected->digest) {
            const auto algorithm = std::string(crypto::name_of(*expected->algorithm));
            return invalid("rebuild the wheel: a file's hash differs from what RECORD says",
                           "RECORD says " + entry.name + " has " + algorithm + "=" + expected->digest +
                               " but the archive entry hashes to " + algorithm + "=" + actual);
        }
    }
    return inflated;
}

// Pass 2: inflate every file once, counting real bytes into `wheel`, and hold it to its RECORD row.
result<void> verify_entries(zip_t* archive, const directory& listing, const record_index& listed,
                            const archive_limits& limits, wheel_archive& wheel) {
    for (const auto& entry : listing.entries) {
        if (entry.directory) continue;
        const auto row = listed.find(entry.name);
        const bool exempt = is_record_or_signature(entry.name, wheel.dist_info);
        if (row == listed.end() && !exempt) {
            return invalid("rebuild the wheel: an archive entry is missing from RECORD",
                           "archive entry " + entry.name + " is not listed in RECORD");
        }
        const record_row* expected = row == listed.end() || exempt ? nullptr : row->second;
        auto inflated = inflate_against_record(archive, entry, expected, limits, wheel.uncompressed_size);
        if (!inflated) return inflated.error();
        wheel.uncompressed_size += *inflated;
    }
    return {};
}

}  // namespace

result<wheel_archive> read_wheel_archive(const std::filesystem::path& path, const archive_limits& limits) {
    int code = 0;
    archive_handle archive(zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
    if (!archive) return open_error(code, path);

    auto listing = read_directory(archive.get(), limits);
    if (!listing) return listing.error();
    auto started = start_archive(archive.get(), *listing, limits);
    if (!started) return started.error();
    wheel_archive wheel = std::move(started).value();

    auto record_text = read_small_entry(archive.get(), listing->entries[listing->record], limits.max_metadata_size);
    if (!record_text) return record_text.error();
    auto record = parse_record(*record_text);
    if (!record) return record.error();
    auto listed = index_record(*record, *listing, wheel.dist_info);
    if (!listed) return listed.error();
    if (auto verified = verify_entries(archive.get(), *listing, *listed, limits, wheel); !verified) return verified.error();

    auto metadata = read_small_entry(archive.get(), listing->entries[listing->metadata], limits.max_metadata_size);
    if (!metadata) return metadata.error();
    wheel.metadata = std::move(metadata).value();
    return wheel;
}

result<wheel_archive> read_remote_wheel_archive(range_cache& file, const archive_limits& limits) {
    // The directory's bounds first, with messages libzip cannot give; then the whole directory
    // in one request, so libzip's entry-by-entry reads of it are served from the cache.
    auto located = locate_central_directory(file, limits.max_central_directory, limits.max_entries);
    if (!located) return located.error();
    if (auto directory_bytes = file.read(located->offset, located->size); !directory_bytes) return directory_bytes.error();

    range_source_state state;
    state.cache = &file;
    zip_error_t failure;
    zip_error_init(&failure);
    zip_source_t* source = make_range_source(state, &failure);
    if (source == nullptr) {
        zip_error_fini(&failure);
        return make_error(error_kind::internal, "creating a zip source for the remote archive failed");
    }
    // Without ZIP_CHECKCONS: that check reads every entry's local header, all over the file.
    archive_handle archive(zip_open_from_source(source, ZIP_RDONLY, &failure));
    if (!archive) {
        const int code = zip_error_code_zip(&failure);
        zip_error_fini(&failure);
        zip_source_free(source);
        if (state.read_failure) return *state.read_failure;
        switch (code) {
            case ZIP_ER_NOZIP:
                return invalid("not a zip archive (no end-of-central-directory record): a wheel is a zip file");
            case ZIP_ER_INCONS:
                return invalid("the zip archive is inconsistent (its directory and its records disagree); the asset "
                               "is corrupt or truncated");
            default:
                return invalid("not a readable zip archive: " + zip_message(code));
        }
    }
    zip_error_fini(&failure);

    const auto reading_failed = [&](const error& failed) -> error { return state.read_failure ? *state.read_failure : failed; };
    auto listing = read_directory(archive.get(), limits);
    if (!listing) return reading_failed(listing.error());
    auto started = start_archive(archive.get(), *listing, limits);
    if (!started) return reading_failed(started.error());
    wheel_archive wheel = std::move(started).value();
    // Reading METADATA whole lets libzip check its CRC-32 against the directory's.
    auto metadata = read_small_entry(archive.get(), listing->entries[listing->metadata], limits.max_metadata_size);
    if (!metadata) return reading_failed(metadata.error());
    wheel.metadata = std::move(metadata).value();
    wheel.uncompressed_size = listing->declared_total;
    wheel.entries_verified = false;
    return wheel;
}

}  // namespace wheelhouse::ingest
