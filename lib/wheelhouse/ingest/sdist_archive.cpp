#include "wheelhouse/ingest/sdist_archive.hpp"

#include <fcntl.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <functional>
#include <system_error>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/ingest/extraction_tree.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::ingest {
namespace {


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

// The members of the tar, each read by tar_stream and placed in the extraction tree, under one
// top-level directory whose PKG-INFO is kept.
class tar_reader {
public:
    tar_reader(gzip_reader& gzip, const archive_limits& limits, const tar_name_limits& names,
               const sdist_member_visitor& on_member)
        : gzip_(gzip),
          limits_(limits),
          stream_([&gzip](std::uint8_t* out, std::size_t size) { return gzip.read(out, size); }, names),
          tree_(names),
          on_member_(on_member) {}

    result<sdist_archive> run() {
        for (;;) {
            auto next = stream_.next();
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
    result<void> take(const tar_entry& entry) {
        if (++out_.entry_count > limits_.max_entries) {
            return make_error(error_kind::too_large, "the sdist has more than " + std::to_string(limits_.max_entries) +
                                                         " members, past the limit");
        }
        if (entry.size > limits_.max_entry_uncompressed) {
            return make_error(error_kind::too_large,
                              "rebuild the sdist without the bulk data: a member is past the per-member limit of " +
                                  with_bytes(limits_.max_entry_uncompressed),
                              "member " + text::quoted(entry.name) + " is " + with_bytes(entry.size));
        }
        std::string resolved;
        if (auto placed = tree_.place(entry, on_member_ ? &resolved : nullptr); !placed) return placed.error();
        if (auto rooted = check_root(entry); !rooted) return rooted.error();
        if (entry.name == out_.root + "/PKG-INFO") {
            if (entry.type != tar_entry_type::file) {
                return invalid("build the sdist again: its PKG-INFO must be a regular file, not a link or directory");
            }
            if (entry.size > limits_.max_metadata_size) {
                return make_error(error_kind::too_large, "the sdist's PKG-INFO is " + with_bytes(entry.size) +
                                                             ", past the limit of " + with_bytes(limits_.max_metadata_size));
            }
            auto text = stream_.read_data();
            if (!text) return text.error();
            out_.pkg_info = std::move(*text);
            pkg_info_seen_ = true;
        }
        if (on_member_) on_member_(sdist_member{entry.type, entry.name, entry.link, resolved, entry.size});
        return {};
    }

    // Every member lies in one top-level directory, the first member's; only that directory
    // itself may be a member at the top level.
    result<void> check_root(const tar_entry& entry) {
        const std::string_view name = entry.name;
        const auto slash = name.find('/');
        const auto top = name.substr(0, slash);
        if (slash == std::string_view::npos && entry.type != tar_entry_type::directory) {
            return invalid("rebuild the sdist with every file inside its {name}-{version}/ directory",
                           "member " + text::quoted(name) + " lies at the top level");
        }
        if (out_.root.empty()) out_.root = std::string(top);
        if (top != out_.root) {
            return invalid("rebuild the sdist with exactly one top-level directory, {name}-{version}/",
                           "it holds both " + text::quoted(out_.root + "/") + " and " +
                               text::quoted(std::string(top) + "/"));
        }
        return {};
    }

    gzip_reader& gzip_;
    const archive_limits& limits_;
    tar_stream stream_;
    extraction_tree tree_;
    const sdist_member_visitor& on_member_;
    sdist_archive out_;
    bool pkg_info_seen_ = false;
};

result<sdist_archive> read_from(byte_source source, const archive_limits& limits, const tar_name_limits& names,
                                const sdist_member_visitor& on_member) {
    gzip_reader gzip(std::move(source), limits);
    return tar_reader(gzip, limits, names, on_member).run();
}

}  // namespace

result<sdist_archive> read_sdist_archive(const std::filesystem::path& path, const archive_limits& limits,
                                         const tar_name_limits& names, const sdist_member_visitor& on_member) {
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
        limits, names, on_member);
}

result<sdist_archive> read_sdist_archive(std::span<const std::uint8_t> bytes, const archive_limits& limits,
                                         const tar_name_limits& names, const sdist_member_visitor& on_member) {
    std::size_t position = 0;
    return read_from(
        [&](std::uint8_t* out, std::size_t size) -> result<std::size_t> {
            const auto count = std::min(size, bytes.size() - position);
            if (count > 0) std::memcpy(out, bytes.data() + position, count);
            position += count;
            return count;
        },
        limits, names, on_member);
}

}  // namespace wheelhouse::ingest
