#pragma once
// A Beast body over an immutable string shared between responses: a cached page is written to
// every client without being copied.

#include <memory>
#include <boost/optional.hpp>
#include <string>
#include <utility>

#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::transport {

struct shared_string_body {
    using value_type = std::shared_ptr<const std::string>;

    static std::uint64_t size(const value_type& body) noexcept { return body ? body->size() : 0; }

    class writer {
    public:
        using const_buffers_type = net::const_buffer;

        template <bool is_request, class Fields>
        writer(const http::header<is_request, Fields>&, const value_type& body) : body_(body) {}

        void init(error_code& ec) { ec = {}; }

        boost::optional<std::pair<const_buffers_type, bool>> get(error_code& ec) {
            ec = {};
            if (!body_ || body_->empty()) return boost::none;
            return std::make_pair(net::const_buffer(body_->data(), body_->size()), false);
        }

    private:
        const value_type& body_;
    };
};

}  // namespace wheelhouse::transport
