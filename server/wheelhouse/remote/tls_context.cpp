#include "wheelhouse/remote/tls_context.hpp"

#include <openssl/ssl.h>

namespace wheelhouse::remote {

namespace ssl = boost::asio::ssl;

result<std::unique_ptr<ssl::context>> make_tls_client_context(const std::string& ca_bundle) {
    auto context = std::make_unique<ssl::context>(ssl::context::tls_client);
    boost::system::error_code ec;
    context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                             ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1,
                         ec);
    if (ec || SSL_CTX_set_min_proto_version(context->native_handle(), TLS1_2_VERSION) != 1)
        return make_error(error_kind::internal, "could not require TLS 1.2 or later in OpenSSL");
    context->set_verify_mode(ssl::verify_peer, ec);
    if (ec) return make_error(error_kind::internal, "could not turn on certificate verification: " + ec.message());
    if (!ca_bundle.empty()) {
        context->load_verify_file(ca_bundle, ec);
        if (ec) {
            return invalid("CA bundle '" + ca_bundle + "' could not be loaded (" + ec.message() +
                           "); ca-bundle must name a readable PEM file of CA certificates");
        }
    } else {
        context->set_default_verify_paths(ec);
        if (ec) {
            return make_error(error_kind::internal, "the system's CA store could not be loaded (" + ec.message() +
                                                        "); install ca-certificates or set ca-bundle");
        }
    }
    return context;
}

}  // namespace wheelhouse::remote
