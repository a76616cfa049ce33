#pragma once
// A read-only copy of a large in-memory page as a file: what the page is sent from with
// sendfile(2), which hands the file's pages to the socket instead of copying them in, as writev
// does. Linux only, as the rest of the server.
//
// The copy is an unlinked file (O_TMPFILE) in a folder of the data disk, reopened read-only; a
// sealed memory file (memfd) where no folder is given or the file system has no O_TMPFILE. The
// disk's page cache is the first choice because sendfile from it is faster than from shmem
// here: a 230 KB page at 26-30k req/s against 23k (kernel 6.18, bench/README.md). Nothing is
// synced; an unlinked file's pages go with its last descriptor.
//
// Thread safety: free function; any thread. The descriptor is read with offsets (pread,
// sendfile with an offset), never with its own position, so many responses may share it.

#include <filesystem>
#include <memory>
#include <string_view>

#include "wheelhouse/storage/descriptor.hpp"

namespace wheelhouse::storage {

// Bytes at or over this are worth a second copy as a file. Measured against the CPU wrk spends a
// request (bench/README.md, "Logging every request"): a 14.7 KB page by sendfile costs 4% less
// CPU a request than by one writev; below a few KiB the head's own send would cost more.
inline constexpr std::size_t page_file_threshold = 8 * 1024;

// At most this many page files are open at once, whoever asked: anyone may name a new variant
// page, and each would otherwise hold a descriptor that downloads and connections need. A
// sixteenth of the process's descriptor limit when first asked, from 8 to 4096 (64 under the
// usual soft limit of 1024); the server reserves them among its descriptors
// (transport::default_max_connections).
std::size_t most_page_files() noexcept;

// A read-only file holding `bytes`, unlinked in `folder` (or a sealed memory file), its
// descriptor closed with the last owner; null when most_page_files() are open or the kernel
// refuses both kinds (the caller keeps sending from memory).
std::shared_ptr<descriptor> page_file(std::string_view bytes, const std::filesystem::path& folder = {});

}  // namespace wheelhouse::storage
