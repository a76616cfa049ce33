#pragma once
// A copy of bytes held in memory as a file (memfd), sealed so no one can change it: what a large
// in-memory page is sent from with sendfile(2), which hands its pages to the socket instead of
// copying them in, as writev does. Linux only, as the rest of the server.
//
// Thread safety: free function; any thread. The descriptor is read with offsets (pread,
// sendfile with an offset), never with its own position, so many responses may share it.

#include <memory>
#include <string_view>

#include "wheelhouse/storage/descriptor.hpp"

namespace wheelhouse::storage {

// Bytes at or over this are worth a second copy as a memory file; below it, one writev costs less
// than a sendfile beside the head's send.
inline constexpr std::size_t memory_file_threshold = 64 * 1024;

// At most this many memory files are open at once, whoever asked: anyone may name a new variant
// page, and each would otherwise hold a descriptor that downloads and connections need. The
// server reserves them among its descriptors (transport::default_max_connections).
inline constexpr std::size_t most_memory_files = 64;

// A sealed memory file holding `bytes`, its descriptor closed with the last owner; null when
// most_memory_files are open or the kernel refuses one (the caller keeps sending from memory).
std::shared_ptr<descriptor> sealed_memory_file(std::string_view bytes);

}  // namespace wheelhouse::storage
