#include "wheelhouse/storage/memory_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>

#include <atomic>

namespace wheelhouse::storage {
namespace {

std::atomic<std::size_t> open_memory_files{0};

// A place among the most_memory_files, given back when the file it held closes.
bool take_place() noexcept {
    auto open = open_memory_files.load(std::memory_order_relaxed);
    while (open < most_memory_files) {
        if (open_memory_files.compare_exchange_weak(open, open + 1, std::memory_order_relaxed)) return true;
    }
    return false;
}

void give_back_place() noexcept { open_memory_files.fetch_sub(1, std::memory_order_relaxed); }

descriptor filled(std::string_view bytes) {
    descriptor file(::memfd_create("wheelhouse-page", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!file) return {};
    std::size_t written = 0;
    while (written < bytes.size()) {
        const ssize_t wrote = ::write(file.get(), bytes.data() + written, bytes.size() - written);
        if (wrote < 0 && errno == EINTR) continue;
        if (wrote <= 0) return {};
        written += static_cast<std::size_t>(wrote);
    }
    if (::fcntl(file.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) return {};
    return file;
}

}  // namespace

std::shared_ptr<descriptor> sealed_memory_file(std::string_view bytes) {
    if (!take_place()) return nullptr;
    auto file = filled(bytes);
    if (!file) {
        give_back_place();
        return nullptr;
    }
    return std::shared_ptr<descriptor>(new descriptor(std::move(file)), [](descriptor* closing) {
        delete closing;
        give_back_place();
    });
}

}  // namespace wheelhouse::storage
