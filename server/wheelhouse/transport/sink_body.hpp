#pragma once
// A Beast body that hands each piece of a request body to a body_sink as it arrives, so an
// upload is never held in memory.

#include <boost/optional.hpp>

#include "wheelhouse/transport/net.hpp"
#include "wheelhouse/transport/request_handler.hpp"

namespace wheelhouse::transport {

// The error the parser reports when the sink refused bytes; the sink's `failure` says why.
inline error_code sink_refused() { return http::error::bad_chunk; }

struct sink_body {
    using value_type = std::shared_ptr<body_sink>;

    class reader {
    public:
        template <bool is_request, class Fields>
        reader(http::header<is_request, Fields>&, value_type& sink) : sink_(sink) {}

        void init(const boost::optional<std::uint64_t>&, error_code& ec) { ec = {}; }

        template <class ConstBufferSequence>
        std::size_t put(const ConstBufferSequence& buffers, error_code& ec) {
            std::size_t taken = 0;
            for (const auto buffer : beast::buffers_range_ref(buffers)) {
                const std::span<const char> bytes(static_cast<const char*>(buffer.data()), buffer.size());
                if (auto written = sink_->write(bytes); !written) {
                    sink_->failure = written.error();
                    ec = sink_refused();
                    return taken;
                }
                taken += buffer.size();
            }
            ec = {};
            return taken;
        }

        void finish(error_code& ec) {
            if (auto finished = sink_->finish(); !finished) {
                sink_->failure = finished.error();
                ec = sink_refused();
                return;
            }
            ec = {};
        }

    private:
        value_type& sink_;
    };
};

}  // namespace wheelhouse::transport
