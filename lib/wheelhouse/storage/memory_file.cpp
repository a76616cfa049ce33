#include "wheelhouse/storage/memory_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>

namespace wheelhouse::storage {

std::shared_ptr<descriptor> sealed_memory_file(std::string_view bytes) {
    descriptor file(::memfd_create("wheelhouse-page", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!file) return nullptr;
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t wrote = ::write(file.get(), bytes.data() + written, bytes.size() - written);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return nullptr;
        written += static_cast<std::size_t>(wrote);
    }
    if (::fcntl(file.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) return nullptr;
    return std::make_shared<descriptor>(std::move(file));
}

}  // namespace wheelhouse::storage
