#include "wheelhouse/transport/session_limits.hpp"

#include <algorithm>

#include <sys/resource.h>

#include "wheelhouse/storage/page_file.hpp"

namespace wheelhouse::transport {

std::size_t default_max_connections(unsigned io_threads) {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return 4096;
    const auto descriptors = static_cast<std::size_t>(limit.rlim_cur);
    // The server's own: per I/O thread its event descriptors and catalog readers (with their WAL
    // and shared-memory files), about as many ingest workers with a zip and a blob each, and the
    // large pages' copies (storage/page_file.hpp).
    const std::size_t reserved =
        64 + 8 * static_cast<std::size_t>(std::max(1u, io_threads)) + storage::most_page_files();
    // Two a connection: its socket, and a spool file, a blob or a remote fetch at most; and as
    // many for those past the cap that may be giving way (most_giving_way: a sixteenth, or 2).
    const std::size_t open_at_most = descriptors > reserved ? (descriptors - reserved) / 2 : 1;
    return std::max<std::size_t>(1, open_at_most > 2 ? (open_at_most - 2) * 16 / 17 : 1);
}

}  // namespace wheelhouse::transport
