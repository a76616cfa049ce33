#include "wheelhouse/storage/page_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <string>

namespace wheelhouse::storage {
namespace {

std::atomic<std::size_t> open_page_files{0};

// A place among the most_page_files(), given back when the file it held closes.
bool take_place() noexcept {
    const auto most = most_page_files();
    auto open = open_page_files.load(std::memory_order_relaxed);
    while (open < most) {
        if (open_page_files.compare_exchange_weak(open, open + 1, std::memory_order_relaxed)) return true;
    }
    return false;
}

void give_back_place() noexcept { open_page_files.fetch_sub(1, std::memory_order_relaxed); }

// An unlinked file in `folder` holding `bytes`, reopened read-only: no one, this process
// included, can change what responses are being sent from.
descriptor unlinked_copy(std::string_view bytes, const std::filesystem::path& folder) {
    if (folder.empty()) return {};
    descriptor writable(::open(folder.c_str(), O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600));
    if (!writable || write_all(writable.get(), bytes) != 0) return {};
    const std::string self = "/proc/self/fd/" + std::to_string(writable.get());
    return descriptor(::open(self.c_str(), O_RDONLY | O_CLOEXEC));
}

descriptor sealed_memory_copy(std::string_view bytes) {
    descriptor file(::memfd_create("wheelhouse-page", MFD_CLOEXEC | MFD_ALLOW_SEALING));
    if (!file || write_all(file.get(), bytes) != 0) return {};
    if (::fcntl(file.get(), F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) return {};
    return file;
}

std::size_t page_files_for_this_process() noexcept {
    // A copy only saves work (memory is its fallback), so it never takes a connection's
    // descriptor: under a small limit it gets a sixteenth, not a floor that could pass the limit.
    constexpr std::size_t fewest = 8;
    constexpr std::size_t most = 4096;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return fewest;
    if (limit.rlim_cur == RLIM_INFINITY) return most;
    return std::clamp<std::size_t>(static_cast<std::size_t>(limit.rlim_cur) / 16, fewest, most);
}

}  // namespace

std::size_t most_page_files() noexcept {
    static const std::size_t budget = page_files_for_this_process();
    return budget;
}

std::shared_ptr<descriptor> page_file(std::string_view bytes, const std::filesystem::path& folder) {
    if (!take_place()) return nullptr;
    auto file = unlinked_copy(bytes, folder);
    if (!file) file = sealed_memory_copy(bytes);
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
