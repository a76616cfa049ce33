#pragma once
// An open file descriptor that closes itself; -1 when the open failed. And the one loop that
// writes all of a buffer to one.
//
// Thread safety: one owner.

#include <unistd.h>

#include <cerrno>
#include <string_view>
#include <utility>

namespace wheelhouse::storage {

class descriptor {
public:
    descriptor() noexcept = default;
    explicit descriptor(int value) noexcept : value_(value) {}
    descriptor(descriptor&& other) noexcept : value_(std::exchange(other.value_, -1)) {}
    descriptor& operator=(descriptor&& other) noexcept {
        if (this != &other) {
            (void)close();
            value_ = std::exchange(other.value_, -1);
        }
        return *this;
    }
    descriptor(const descriptor&) = delete;
    descriptor& operator=(const descriptor&) = delete;
    ~descriptor() { (void)close(); }

    int get() const noexcept { return value_; }
    explicit operator bool() const noexcept { return value_ >= 0; }
    // Closes now and reports the error close() saw (NFS reports write errors here); 0 when fine
    // or when nothing was open.
    int close() noexcept {
        if (value_ < 0) return 0;
        const int closed = ::close(value_);
        value_ = -1;
        return closed == 0 ? 0 : errno;
    }

private:
    int value_ = -1;
};

// Writes all of `bytes` to the blocking file `fd`, waiting out EINTR: 0 when all went, else the
// errno of the write that failed (EIO for one that wrote nothing).
inline int write_all(int fd, std::string_view bytes) noexcept {
    while (!bytes.empty()) {
        const ssize_t written = ::write(fd, bytes.data(), bytes.size());
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return written == 0 ? EIO : errno;
        bytes.remove_prefix(static_cast<std::size_t>(written));
    }
    return 0;
}

}  // namespace wheelhouse::storage
