#include "wheelhouse/ingest/sdist_archive.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <optional>
#include <system_error>
#include <unordered_set>
#include <vector>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::ingest {
namespace {


constexpr std::size_t block = 512;
// pax and GNU long-name headers before one member; real tars write at most two.
constexpr int max_meta_headers = 8;

std::string with_bytes(std::uint64_t count) { return std::to_string(count) + " bytes"; }

// Reads up to `size` bytes into `out`; 0 at the end.
using byte_source = std::function<result<std::size_t>(std::uint8_t* out, std::size_t size)>;

// The tar stream inside the gzip one, inflated on demand, with the size and ratio limits
// applied to every byte as it comes out.
class gzip_reader {
public:
    gzip_reader(byte_source source, const archive_limits& limits) : source_(std::move(source)), limits_(limits) {
        // 16 + MAX_WBITS: gzip framing only, its CRC-32 and length checked at the end.
        if (inflateInit2(&stream_, 16 + MAX_WBITS) == Z_OK) initialised_ = true;
    }
    ~gzip_reader() {
        if (initialised_) inflateEnd(&stream_);
    }
    gzip_reader(const gzip_reader&) = delete;
    gzip_reader& operator=(const gzip_reader&) = delete;

    // Fills `out` whole, or stops early only at the end of the gzip stream; returns the count.
    result<std::size_t> read(std::uint8_t* out, std::size_t size) {
        if (!initialised_) return make_error(error_kind::internal, "zlib could not start an inflate stream");
        std::size_t filled = 0;
        while (filled < size && !ended_) {
            if (stream_.avail_in == 0) {
                auto got = source_(input_.data(), input_.size());
                if (!got) return got.error();
                if (*got == 0) return truncated();
                stream_.next_in = input_.data();
                stream_.avail_in = static_cast<uInt>(*got);
                compressed_ += *got;
            }
            stream_.next_out = out + filled;
            stream_.avail_out = static_cast<uInt>(size - filled);
            const auto before = stream_.avail_out;
            const int status = inflate(&stream_, Z_NO_FLUSH);
            filled += before - stream_.avail_out;
            inflated_ += before - stream_.avail_out;
            if (status == Z_STREAM_END) {
                ended_ = true;
                if (auto rest = check_nothing_after(); !rest) return rest.error();
            } else if (status != Z_OK && status != Z_BUF_ERROR) {
                return corrupt();
            }
            if (auto within = check_limits(); !within) return within.error();
        }
        return filled;
    }

    std::uint64_t inflated() const noexcept { return inflated_; }

private:
    error truncated() const {
        return invalid("upload the whole file: the sdist is cut short (its gzip stream ends early)",
                       "the file ends after " + with_bytes(compressed_) + ", before gzip's end record");
    }

    error corrupt() const {
        if (compressed_ >= 2 && inflated_ == 0 && !(input_[0] == 0x1f && input_[1] == 0x8b)) {
            return invalid("build the sdist with python -m build --sdist: this file is not gzip-compressed",
                           "a .tar.gz starts with the bytes 1f 8b");
        }
        return invalid("build and upload the sdist again: its gzip stream is damaged",
                       "zlib: " + std::string(stream_.msg ? stream_.msg : "data error") + " after " +
                           with_bytes(inflated_) + " inflated");
    }

    // A second gzip member or other bytes after the first would be ignored by some readers and
    // read by others: refused.
    result<void> check_nothing_after() {
        std::uint8_t probe = 0;
        if (stream_.avail_in == 0) {
            auto got = source_(&probe, 1);
            if (!got) return got.error();
            if (*got == 0) return {};
        }
        return invalid("rebuild the sdist: bytes follow the end of its gzip stream",
                       "an sdist is one gzip stream holding one tar archive");
    }

    result<void> check_limits() const {
        if (inflated_ > limits_.max_total_uncompressed) {
            return make_error(error_kind::too_large,
                              "the sdist unpacks to more than " + with_bytes(limits_.max_total_uncompressed) +
                                  ", past the limit: refusing a possible gzip bomb");
        }
        if (inflated_ > limits_.ratio_floor && inflated_ / std::max<std::uint64_t>(compressed_, 1) > limits_.max_compression_ratio) {
            return invalid("rebuild the sdist without the bulk data: it inflates like a gzip bomb",
                           with_bytes(compressed_) + " inflated to " + with_bytes(inflated_) + " (more than " +
                               std::to_string(limits_.max_compression_ratio) + ":1)");
        }
        return {};
    }

    byte_source source_;
    const archive_limits& limits_;
    z_stream stream_{};
    bool initialised_ = false;
    bool ended_ = false;
    std::array<std::uint8_t, 1 << 16> input_{};
    std::uint64_t compressed_ = 0;
    std::uint64_t inflated_ = 0;
};

// One tar header, with what pax or GNU headers before it said.
struct member {
    std::string name;
    std::string link;
    char type = '0';
    std::uint64_t size = 0;
};

std::string field(const std::uint8_t* header, std::size_t offset, std::size_t length) {
    const auto* start = reinterpret_cast<const char*>(header + offset);
    return std::string(start, strnlen(start, length));
}

// Octal, space- or NUL-terminated; or GNU's base-256 (high bit set) for sizes past 8 GiB.
std::optional<std::uint64_t> number(const std::uint8_t* header, std::size_t offset, std::size_t length) {
    const std::uint8_t* digits = header + offset;
    std::uint64_t value = 0;
    if (digits[0] & 0x80) {
        if (digits[0] != 0x80) return std::nullopt;  // negative, or too wide
        for (std::size_t i = 1; i < length; ++i) {
            if (value >> 56) return std::nullopt;
            value = (value << 8) | digits[i];
        }
        return value;
    }
    std::size_t i = 0;
    while (i < length && digits[i] == ' ') ++i;
    bool any = false;
    for (; i < length && digits[i] >= '0' && digits[i] <= '7'; ++i) {
        if (value >> 60) return std::nullopt;
        value = value * 8 + (digits[i] - '0');
        any = true;
    }
    for (; i < length; ++i) {
        if (digits[i] != ' ' && digits[i] != 0) return std::nullopt;
    }
    if (!any) return std::nullopt;
    return value;
}

bool checksum_matches(const std::uint8_t* header) {
    const auto stored = number(header, 148, 8);
    if (!stored) return false;
    std::uint64_t unsigned_sum = 0;
    std::int64_t signed_sum = 0;  // some old tars summed signed chars
    for (std::size_t i = 0; i < block; ++i) {
        const std::uint8_t byte = (i >= 148 && i < 156) ? ' ' : header[i];
        unsigned_sum += byte;
        signed_sum += static_cast<std::int8_t>(byte);
    }
    return *stored == unsigned_sum || static_cast<std::int64_t>(*stored) == signed_sum;
}

error unsafe(std::string_view what, const error& why) {
    return invalid("rebuild the sdist: " + std::string(what) + " would be written outside its directory", why.message);
}

// "a/b/../c" joined and resolved; nullopt when '..' climbs above the archive's root.
std::optional<std::vector<std::string_view>> resolve(std::vector<std::string_view> base, std::string_view path) {
    while (!path.empty()) {
        const auto slash = path.find('/');
        const auto part = path.substr(0, slash);
        if (part == "..") {
            if (base.empty()) return std::nullopt;
            base.pop_back();
        } else if (!part.empty() && part != ".") {
            base.push_back(part);
        }
        if (slash == std::string_view::npos) break;
        path.remove_prefix(slash + 1);
    }
    return base;
}

class tar_reader {
public:
    tar_reader(gzip_reader& gzip, const archive_limits& limits) : gzip_(gzip), limits_(limits) {}

    result<sdist_archive> run() {
        for (;;) {
            auto next = next_member();
            if (!next) return next.error();
            if (!*next) break;
            if (auto taken = take(**next); !taken) return taken.error();
        }
        if (out_.entry_count == 0) return invalid("build the sdist again: its tar archive is empty");
        if (!pkg_info_seen_) {
            return invalid("build the sdist with python -m build --sdist: it has no PKG-INFO",
                           "an sdist holds its core metadata in " + out_.root + "/PKG-INFO");
        }
        out_.uncompressed_size = gzip_.inflated();
        return std::move(out_);
    }

private:
    // Exactly `size` bytes, or the archive is cut short.
    result<void> read_exact(std::uint8_t* out, std::size_t size) {
        auto got = gzip_.read(out, size);
        if (!got) return got.error();
        if (*got != size) {
            return invalid("build the sdist again: its tar archive is cut short",
                           "the gzip stream ends inside a tar member, after " + with_bytes(gzip_.inflated()));
        }
        return {};
    }

    // A member's data, padded to whole blocks: into `keep` when given, else read and dropped.
    result<void> read_data(std::uint64_t size, std::string* keep) {
        const std::uint64_t padded = (size + block - 1) / block * block;
        std::array<std::uint8_t, 1 << 16> buffer{};
        std::uint64_t done = 0;
        while (done < padded) {
            const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), padded - done));
            if (auto read = read_exact(buffer.data(), chunk); !read) return read.error();
            if (keep && done < size) {
                keep->append(reinterpret_cast<const char*>(buffer.data()),
                             static_cast<std::size_t>(std::min<std::uint64_t>(chunk, size - done)));
            }
            done += chunk;
        }
        return {};
    }

    result<std::string> read_small(std::uint64_t size, std::string_view what) {
        if (size > limits_.max_metadata_size) {
            return make_error(error_kind::too_large, "the sdist's " + std::string(what) + " is " + with_bytes(size) +
                                                         ", past the limit of " + with_bytes(limits_.max_metadata_size));
        }
        std::string data;
        if (auto read = read_data(size, &data); !read) return read.error();
        return data;
    }

    // The next member, its pax and GNU long-name headers applied; nullopt at the end marker.
    result<std::optional<member>> next_member() {
        std::optional<std::string> long_name, long_link, pax_path, pax_link;
        std::optional<std::uint64_t> pax_size;
        for (int meta = 0; meta <= max_meta_headers; ++meta) {
            std::array<std::uint8_t, block> header{};
            auto got = gzip_.read(header.data(), block);
            if (!got) return got.error();
            if (*got != block || std::all_of(header.begin(), header.end(), [](auto b) { return b == 0; })) {
                if (*got != block || meta > 0) return missing_end();
                if (auto rest = read_to_end(); !rest) return rest.error();
                return std::optional<member>{};
            }
            if (!checksum_matches(header.data())) {
                return invalid("build the sdist again: a tar header is damaged (its checksum is wrong)",
                               "at byte " + std::to_string(gzip_.inflated() - block) + " of the tar");
            }
            const auto size = number(header.data(), 124, 12);
            if (!size) return invalid("build the sdist again: a tar header's size field is not a number");
            const char type = static_cast<char>(header[156]);
            if (type == 'x' || type == 'g') {
                auto records = read_small(*size, "pax header");
                if (!records) return records.error();
                if (type == 'g') continue;  // global defaults: nothing an sdist's reader needs
                if (auto parsed = parse_pax(*records, pax_path, pax_link, pax_size); !parsed) return parsed.error();
                continue;
            }
            if (type == 'L' || type == 'K') {
                auto text = read_small(*size, "GNU long name");
                if (!text) return text.error();
                text->erase(std::find(text->begin(), text->end(), '\0'), text->end());
                (type == 'L' ? long_name : long_link) = std::move(*text);
                continue;
            }
            member found;
            found.type = type;
            found.size = pax_size.value_or(*size);
            found.name = field(header.data(), 0, 100);
            // POSIX ustar splits long names into prefix and name; GNU's magic has no prefix.
            if (std::memcmp(header.data() + 257, "ustar\0", 6) == 0) {
                const auto prefix = field(header.data(), 345, 155);
                if (!prefix.empty()) found.name = prefix + "/" + found.name;
            }
            found.link = field(header.data(), 157, 100);
            if (long_name) found.name = *long_name;
            if (long_link) found.link = *long_link;
            if (pax_path) found.name = *pax_path;
            if (pax_link) found.link = *pax_link;
            return std::optional<member>{std::move(found)};
        }
        return invalid("build the sdist again: more than " + std::to_string(max_meta_headers) +
                       " pax or long-name headers precede one member");
    }

    // "%d key=value\n" records (POSIX pax); only path, linkpath and size matter here.
    static result<void> parse_pax(std::string_view records, std::optional<std::string>& path,
                                  std::optional<std::string>& link, std::optional<std::uint64_t>& size) {
        const auto bad = [] { return invalid("build the sdist again: a pax extended header is malformed"); };
        while (!records.empty()) {
            std::uint64_t length = 0;
            std::size_t digits = 0;
            while (digits < records.size() && records[digits] >= '0' && records[digits] <= '9' && digits < 12) {
                length = length * 10 + static_cast<std::uint64_t>(records[digits] - '0');
                ++digits;
            }
            if (digits == 0 || length <= digits + 1 || length > records.size() || records[digits] != ' ' ||
                records[length - 1] != '\n') {
                return bad();
            }
            const auto record = records.substr(digits + 1, length - digits - 2);
            const auto equals = record.find('=');
            if (equals == std::string_view::npos) return bad();
            const auto key = record.substr(0, equals);
            const auto value = record.substr(equals + 1);
            if (key == "path") path = std::string(value);
            if (key == "linkpath") link = std::string(value);
            if (key == "size") {
                std::uint64_t parsed = 0;
                if (value.empty() || value.size() > 19 ||
                    !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; })) {
                    return bad();
                }
                for (char c : value) parsed = parsed * 10 + static_cast<std::uint64_t>(c - '0');
                size = parsed;
            }
            records.remove_prefix(length);
        }
        return {};
    }

    error missing_end() const {
        return invalid("build the sdist again: its tar archive is cut short (no end-of-archive marker)",
                       "the tar ends after " + with_bytes(gzip_.inflated()) + " without its two zero blocks");
    }

    // After the end marker only zero padding may follow, to the end of the gzip stream.
    result<void> read_to_end() {
        std::array<std::uint8_t, 1 << 16> buffer{};
        for (;;) {
            auto got = gzip_.read(buffer.data(), buffer.size());
            if (!got) return got.error();
            if (!std::all_of(buffer.begin(), buffer.begin() + static_cast<std::ptrdiff_t>(*got), [](auto b) { return b == 0; })) {
                return invalid("rebuild the sdist: data follows its tar archive's end marker",
                               "a reader would stop at the marker and never see it");
            }
            if (*got < buffer.size()) return {};
        }
    }

    result<void> take(member& entry) {
        if (++out_.entry_count > limits_.max_entries) {
            return make_error(error_kind::too_large, "the sdist has more than " + std::to_string(limits_.max_entries) +
                                                         " members, past the limit");
        }
        const bool directory = entry.type == '5' || (entry.name.ends_with('/') && (entry.type == '0' || entry.type == '\0'));
        if (directory && !entry.name.ends_with('/')) entry.name.push_back('/');
        if (auto safe = check_entry_name(entry.name); !safe) return unsafe("a member", safe.error());
        if (auto placed = check_root(entry.name, directory); !placed) return placed.error();
        if (!names_.insert(entry.name).second) {
            return invalid("rebuild the sdist: a member appears twice in it", "member " + text::quoted(entry.name) +
                                                                                  "; an unpacker would keep only one");
        }
        if (entry.size > limits_.max_entry_uncompressed) {
            return make_error(error_kind::too_large, "member " + entry.name + " is " + with_bytes(entry.size) +
                                                         ", past the per-member limit of " +
                                                         with_bytes(limits_.max_entry_uncompressed));
        }
        switch (entry.type) {
            case '0': case '\0': case '7': case '5': break;
            case '1': if (auto link = check_hard_link(entry); !link) return link.error(); break;
            case '2': if (auto link = check_symlink(entry); !link) return link.error(); break;
            default:
                return invalid("rebuild the sdist with files, directories and links only",
                               "member " + text::quoted(entry.name) + " has tar type " + text::quoted(std::string(1, entry.type)) +
                                   " (a device, FIFO or sparse file)");
        }
        if (entry.name == out_.root + "/PKG-INFO") {
            if (entry.type != '0' && entry.type != '\0' && entry.type != '7') {
                return invalid("build the sdist again: its PKG-INFO must be a regular file, not a link or directory");
            }
            auto text = read_small(entry.size, "PKG-INFO");
            if (!text) return text.error();
            out_.pkg_info = std::move(*text);
            pkg_info_seen_ = true;
            return {};
        }
        // Links and directories carry no data, whatever their size field says.
        const bool has_data = entry.type == '0' || entry.type == '\0' || entry.type == '7';
        return has_data && !directory ? read_data(entry.size, nullptr) : result<void>{};
    }

    // Every member lies in one top-level directory, the first member's.
    result<void> check_root(std::string_view name, bool directory) {
        const auto slash = name.find('/');
        const auto top = name.substr(0, slash);
        if (slash == std::string_view::npos || (!directory && slash + 1 == name.size())) {
            return invalid("rebuild the sdist with every file inside its {name}-{version}/ directory",
                           "member " + text::quoted(name) + " lies at the top level");
        }
        if (out_.root.empty()) out_.root = std::string(top);
        if (top != out_.root) {
            return invalid("rebuild the sdist with exactly one top-level directory, {name}-{version}/",
                           "it holds both " + text::quoted(out_.root + "/") + " and " + text::quoted(std::string(top) + "/"));
        }
        return {};
    }

    result<void> check_symlink(const member& entry) {
        const auto what = "symbolic link " + text::quoted(entry.name) + " -> " + text::quoted(entry.link);
        if (entry.link.empty() || entry.link.front() == '/' || entry.link.find('\\') != std::string::npos ||
            (entry.link.size() >= 2 && entry.link[1] == ':')) {
            return invalid("rebuild the sdist without links that leave it", what + " is absolute or empty");
        }
        std::string_view directory = entry.name;
        directory = directory.substr(0, directory.rfind('/'));
        auto parent = resolve({}, directory);
        auto target = parent ? resolve(*parent, entry.link) : std::nullopt;
        if (!target || target->empty() || (*target)[0] != out_.root) {
            return invalid("rebuild the sdist without links that leave it", what + " points outside " + out_.root + "/");
        }
        return {};
    }

    result<void> check_hard_link(const member& entry) {
        if (auto safe = check_entry_name(entry.link); !safe) return unsafe("a hard link's target", safe.error());
        if (!entry.link.starts_with(out_.root + "/") || !names_.contains(entry.link)) {
            return invalid("rebuild the sdist without links that leave it",
                           "hard link " + text::quoted(entry.name) + " -> " + text::quoted(entry.link) +
                               " names no member before it in " + out_.root + "/");
        }
        return {};
    }

    gzip_reader& gzip_;
    const archive_limits& limits_;
    sdist_archive out_;
    std::unordered_set<std::string> names_;
    bool pkg_info_seen_ = false;
};

result<sdist_archive> read_from(byte_source source, const archive_limits& limits) {
    gzip_reader gzip(std::move(source), limits);
    return tar_reader(gzip, limits).run();
}

}  // namespace

result<sdist_archive> read_sdist_archive(const std::filesystem::path& path, const archive_limits& limits) {
    const int descriptor = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (descriptor < 0) {
        return make_error(error_kind::internal, "opening " + path.string() + ": " + std::system_category().message(errno));
    }
    struct closer {
        int descriptor;
        ~closer() { ::close(descriptor); }
    } close_at_end{descriptor};
    return read_from(
        [&](std::uint8_t* out, std::size_t size) -> result<std::size_t> {
            for (;;) {
                const ssize_t count = ::read(descriptor, out, size);
                if (count >= 0) return static_cast<std::size_t>(count);
                if (errno != EINTR) {
                    return make_error(error_kind::internal,
                                      "reading " + path.string() + ": " + std::system_category().message(errno));
                }
            }
        },
        limits);
}

result<sdist_archive> read_sdist_archive(std::span<const std::uint8_t> bytes, const archive_limits& limits) {
    std::size_t position = 0;
    return read_from(
        [&](std::uint8_t* out, std::size_t size) -> result<std::size_t> {
            const auto count = std::min(size, bytes.size() - position);
            if (count > 0) std::memcpy(out, bytes.data() + position, count);
            position += count;
            return count;
        },
        limits);
}

}  // namespace wheelhouse::ingest
