#pragma once
// A Beast body that writes one byte range of an open file: whole-file downloads and Range
// requests alike, read with pread in large chunks so the file is never held in memory.

#include <array>
#include <cstdint>
#include <memory>
#include <boost/optional.hpp>
#include <utility>

#include <unistd.h>

#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::transport {

// Owns a file descriptor; closes it when the response is done.
class file_descriptor {
public:
    file_descriptor() = default;
    explicit file_descriptor(int fd) noexcept : fd_(fd) {}
    file_descriptor(file_descriptor&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
    file_descriptor& operator=(file_descriptor&& other) noexcept {
        if (this != &other) {
            reset();
            fd_ = std::exchange(other.fd_, -1);
        }
        return *this;
    }
    file_descriptor(const file_descriptor&) = delete;
    file_descriptor& operator=(const file_descriptor&) = delete;
    ~file_descriptor() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    void reset() noexcept {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }

private:
    int fd_ = -1;
};

struct file_range_body {
    struct value_type {
        std::shared_ptr<file_descriptor> file;  // shared so the message stays copyable
        std::uint64_t offset = 0;
        std::uint64_t length = 0;
    };

    static std::uint64_t size(const value_type& body) noexcept { return body.length; }

    class writer {
    public:
        using const_buffers_type = net::const_buffer;
        static constexpr std::size_t chunk_size = 256 * 1024;

        template <bool is_request, class Fields>
        writer(const http::header<is_request, Fields>&, const value_type& body)
            : body_(body), position_(body.offset), remaining_(body.length) {}

        void init(error_code& ec) {
            ec = {};
            if (remaining_ > 0 && !(body_.file && *body_.file)) ec = net::error::bad_descriptor;
            if (remaining_ > 0) buffer_ = std::make_unique<std::array<char, chunk_size>>();
        }

        boost::optional<std::pair<const_buffers_type, bool>> get(error_code& ec) {
            ec = {};
            if (remaining_ == 0) return boost::none;
            const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, chunk_size));
            const ssize_t got = ::pread(body_.file->get(), buffer_->data(), want, static_cast<off_t>(position_));
            if (got < 0) {
                ec = error_code(errno, boost::system::system_category());
                return boost::none;
            }
            if (got == 0) {  // the file shrank under us: fail rather than send short content
                ec = net::error::eof;
                return boost::none;
            }
            position_ += static_cast<std::uint64_t>(got);
            remaining_ -= static_cast<std::uint64_t>(got);
            return std::make_pair(net::const_buffer(buffer_->data(), static_cast<std::size_t>(got)), remaining_ > 0);
        }

    private:
        const value_type& body_;
        std::uint64_t position_;
        std::uint64_t remaining_;
        std::unique_ptr<std::array<char, chunk_size>> buffer_;
    };
};

}  // namespace wheelhouse::transport
