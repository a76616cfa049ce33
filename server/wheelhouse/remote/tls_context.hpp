#pragma once
// The OpenSSL client context every release-asset fetch shares: TLS 1.2 or later, peers verified
// against the system's CA store or a configured bundle.

#include <memory>
#include <string>

#include <boost/asio/ssl/context.hpp>

#include "wheelhouse/result.hpp"

namespace wheelhouse::remote {

// `ca_bundle`: a PEM file of trusted CAs, used instead of the system's store; empty: the system's.
// Thread safety: the context is configured here once and only read afterwards, so streams on
// any thread may share it.
result<std::unique_ptr<boost::asio::ssl::context>> make_tls_client_context(const std::string& ca_bundle);

}  // namespace wheelhouse::remote
