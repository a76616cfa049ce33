#pragma once
// The transport alone, in process on 127.0.0.1 port 0, with a request handler that says what
// it received, or throws where a test asks it to:
//   /throw/plan     plan_body throws
//   /throw/handle   handle throws
//   /throw/sink     the body streams to a sink whose write throws
//   /stream         the body streams to a sink that counts it
//   /block          plan_body holds its I/O thread for 500 ms (and with a one-thread server, the
//                   listener too), then reads the body into memory
//   /hold           the same for 3 s
//   /file           answers 4 MiB of a file (byte i is i % 251), sent as file responses are
//   anything else   the body is read into memory (at most 1 MiB)
// The answer is 200, text: "fields: name,name,...\nbody: <bytes>\n".

#include <memory>

#include "wheelhouse/transport/server.hpp"

namespace wheelhouse::testing {

class echo_server {
public:
    // `tls`: serve HTTPS with this certificate; null: plain HTTP.
    explicit echo_server(transport::session_limits limits = {}, unsigned threads = 2,
                         std::shared_ptr<const transport::tls_certificate> tls = nullptr);
    ~echo_server();

    unsigned short port() const { return port_; }
    transport::server& server() { return *server_; }

private:
    std::unique_ptr<transport::request_handler> handler_;
    std::unique_ptr<transport::server> server_;
    unsigned short port_ = 0;
};

}  // namespace wheelhouse::testing
