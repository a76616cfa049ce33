#pragma once
// A tar archive's members as the two programs that unpack sdists read them: GNU tar (1.34) and
// Python's tarfile (3.11, which pip and build use). Where the two would read a header
// differently, the member is refused with the difference named, rather than read one way.
// What is accepted:
// - headers with ustar ("ustar\0") or GNU ("ustar  \0") magic whose checksum is the unsigned or
//   the signed sum; numeric fields in octal (leading spaces, then digits, then NULs or spaces;
//   all NUL for zero) or positive base-256;
// - types '0' and '\0' (files), '5' (directories), '2' (symbolic links) and '1' (hard links),
//   links and directories without data; a name ending in '/' only on a directory (tarfile reads
//   a '0' member named "x/" as a file, GNU tar as a directory);
// - before a member, at most one each of: a pax extended header ('x') of path, linkpath, size
//   and keys that move nothing (times, owners, comment), a GNU long name ('L'), a GNU long link
//   ('K'), a pax global header ('g') of keys that move nothing; never a long name with a pax
//   path, or a long link with a pax linkpath (tarfile takes the first header, GNU tar the pax);
// - the ustar prefix only under ustar magic (tarfile reads it under any magic, GNU tar not);
// - after the first zero block, nothing but zeros (tarfile stops at one zero block).
// Memory: one header block, one pending name and link (each at most max_name_length), and one
// pax header (at most extended_header_limit()) at a time.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "wheelhouse/result.hpp"

namespace wheelhouse::ingest {

// What the names in an archive may cost. Nothing keeps a whole name past its member: the
// extraction tree keeps one copy of each path component and of each link's unresolved rest.
struct tar_name_limits {
    std::size_t max_name_length = 4096;              // a path or link target, in bytes (Linux's PATH_MAX)
    std::size_t max_component_length = 255;          // one part of a path (NAME_MAX)
    std::uint64_t max_kept_bytes = 16ULL << 20;      // components and link rests kept for the whole archive
    std::uint64_t max_implied_directories = 100'000;  // directories that only the names below them make
};

enum class tar_entry_type { file, directory, symlink, hard_link };

// "file", "directory", "symlink", "hardlink".
const char* describe(tar_entry_type type) noexcept;

struct tar_entry {
    tar_entry_type type = tar_entry_type::file;
    std::string name;        // as both read it; a directory's without its trailing '/'
    std::string link;        // a link's target, as written
    std::uint64_t size = 0;  // bytes of data that follow a file; 0 for the other types
};

// Thread safety: one archive, read start to end on one thread at a time.
class tar_stream {
public:
    // Fills `out` whole, or less only at the end of the stream (0 at the end).
    using byte_source = std::function<result<std::size_t>(std::uint8_t* out, std::size_t size)>;

    tar_stream(byte_source source, const tar_name_limits& limits);

    // The next member, its pax and GNU headers applied; nullopt at the end marker, after the
    // zeros that follow it were read to the end of the stream. The previous member's data is
    // skipped when it was not read.
    result<std::optional<tar_entry>> next();

    // The data of the file next() returned, whole: the caller checks its size first.
    result<std::string> read_data();

    // The largest pax header read: room for a path, a link and the keys that move nothing.
    std::size_t extended_header_limit() const noexcept { return 2 * limits_.max_name_length + 4096; }

private:
    result<void> read_exact(std::uint8_t* out, std::size_t size);
    result<void> skip(std::uint64_t size);
    result<std::string> read_meta(std::uint64_t size, std::size_t max, std::string_view what);
    result<void> read_to_end();

    byte_source source_;
    const tar_name_limits& limits_;
    std::uint64_t position_ = 0;     // bytes of tar read, for messages
    std::uint64_t unread_ = 0;       // the last file's data, padded, not read yet
    std::uint64_t unread_size_ = 0;  // and without its padding
};

}  // namespace wheelhouse::ingest
