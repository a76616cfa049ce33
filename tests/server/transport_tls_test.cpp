// The transport over TLS (issue 25 item 1), in process so the ASan build covers it: requests,
// bodies read into memory and streamed, pipelining, a file sent in pieces, and what arrives at
// a TLS port that is not TLS. The e2e tests (tests/e2e/test_tls.py) drive real clients.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include <boost/asio/ssl.hpp>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include "echo_server.hpp"
#include "test_server.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;
using namespace std::chrono_literals;
namespace ssl = boost::asio::ssl;

namespace {

// A self-signed P-256 certificate for 127.0.0.1, valid for a day, written as PEM files.
struct test_certificate {
    std::filesystem::path folder;
    std::filesystem::path certificate;
    std::filesystem::path key;

    test_certificate() {
        folder = std::filesystem::temp_directory_path() / ("tls-test-" + std::to_string(::getpid()));
        std::filesystem::create_directories(folder);
        certificate = folder / "server.pem";
        key = folder / "server.key";
        EVP_PKEY* pkey = EVP_EC_gen("P-256");
        X509* x509 = X509_new();
        ASN1_INTEGER_set(X509_get_serialNumber(x509), 1);
        X509_gmtime_adj(X509_getm_notBefore(x509), -60);
        X509_gmtime_adj(X509_getm_notAfter(x509), 24 * 3600);
        X509_set_pubkey(x509, pkey);
        X509_NAME* name = X509_get_subject_name(x509);
        X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("127.0.0.1"), -1,
                                   -1, 0);
        X509_set_issuer_name(x509, name);
        REQUIRE(X509_sign(x509, pkey, EVP_sha256()) > 0);
        FILE* out = std::fopen(certificate.c_str(), "w");
        PEM_write_X509(out, x509);
        std::fclose(out);
        out = std::fopen(key.c_str(), "w");
        PEM_write_PrivateKey(out, pkey, nullptr, nullptr, 0, nullptr, nullptr);
        std::fclose(out);
        X509_free(x509);
        EVP_PKEY_free(pkey);
    }
    ~test_certificate() {
        std::error_code ignored;
        std::filesystem::remove_all(folder, ignored);
    }
};

std::shared_ptr<const transport::tls_certificate> load(const test_certificate& files) {
    auto loaded = transport::tls_certificate::load(files.certificate.string(), files.key.string());
    REQUIRE(loaded);
    return *loaded;
}

// A TLS client that sends bytes as given and reads until the server closes or `wait` passes.
class tls_client {
public:
    explicit tls_client(unsigned short port) : context_(ssl::context::tls_client), stream_(io_, context_) {
        context_.set_verify_mode(ssl::verify_none);  // the server's certificate is self-signed
        stream_.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
        stream_.handshake(ssl::stream_base::client);
    }

    void send(std::string_view bytes) { net::write(stream_, net::buffer(bytes.data(), bytes.size())); }

    // What arrives until it ends with `ending` (empty: until `wait` passes), the server closes, or
    // `wait` passes.
    std::string receive_until(std::string_view ending, std::chrono::milliseconds wait = 5s) {
        std::string received;
        const auto deadline = std::chrono::steady_clock::now() + wait;
        ::timeval timeout{0, 200 * 1000};
        ::setsockopt(stream_.next_layer().native_handle(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
        std::array<char, 65536> piece{};
        while (std::chrono::steady_clock::now() < deadline && (ending.empty() || !received.ends_with(ending))) {
            error_code ec;
            const auto got = stream_.read_some(net::buffer(piece), ec);
            received.append(piece.data(), got);
            if (ec && ec != net::error::would_block && ec != net::error::try_again) break;
        }
        return received;
    }

private:
    net::io_context io_;
    ssl::context context_;
    ssl::stream<tcp::socket> stream_;
};

}  // namespace

TEST_CASE("server: requests over TLS are answered as over plain HTTP", "[server][transport][tls]") {
    const test_certificate files;
    echo_server server({}, 2, load(files));

    SECTION("a body read into memory, and a streamed one") {
        tls_client client(server.port());
        client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello");
        CHECK_THAT(client.receive_until("body: 5\n"), Catch::Contains("HTTP/1.1 200") && Catch::EndsWith("body: 5\n"));
        const std::string large(300 * 1024, 'z');
        client.send("POST /stream HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(large.size()) + "\r\n\r\n" +
                    large);
        CHECK_THAT(client.receive_until("body: 307200\n"), Catch::EndsWith("body: 307200\n"));
    }
    SECTION("pipelined requests in one write") {
        tls_client client(server.port());
        std::string three;
        for (int i = 0; i < 3; ++i) three += "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n";
        client.send(three);
        std::string all;
        for (int i = 0; i < 3 && count_responses(all) < 3; ++i) all += client.receive_until("body: 0\n");
        CHECK(count_responses(all) == 3);
    }
    SECTION("a file sent in pieces arrives whole") {
        tls_client client(server.port());
        client.send("GET /file HTTP/1.1\r\nHost: x\r\n\r\n");
        const auto answer = client.receive_until("", 3s);
        const auto head_end = answer.find("\r\n\r\n");
        REQUIRE(head_end != std::string::npos);
        CHECK_THAT(answer.substr(0, head_end), Catch::Contains("Content-Length: 4194304"));
        const auto body = answer.substr(head_end + 4);
        REQUIRE(body.size() == (4u << 20));
        bool pattern = true;
        for (std::size_t i = 0; i < body.size() && pattern; ++i) pattern = body[i] == static_cast<char>(i % 251);
        CHECK(pattern);
    }
    SECTION("plain HTTP to the TLS port hears to use https") {
        const auto answer = raw_exchange(server.port(), "GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 400") && Catch::Contains("use https://"));
    }
    SECTION("bytes that are neither end the connection, and the server serves on") {
        raw_client junk(server.port());
        junk.send(std::string("\x16\x03\x01\x00\x05hello", 10));
        junk.finish_sending();
        const auto answer = junk.receive(2s);  // at most a TLS alert (7 bytes), then the close
        CHECK(answer.size() <= 7);
        CHECK_THAT(answer, !Catch::StartsWith("HTTP/"));
        tls_client client(server.port());
        client.send("GET /echo HTTP/1.1\r\nHost: x\r\n\r\n");
        CHECK_THAT(client.receive_until("body: 0\n"), Catch::StartsWith("HTTP/1.1 200"));
    }
}

TEST_CASE("server: a body that stops over TLS is answered 408 at the read deadline", "[server][transport][tls]") {
    const test_certificate files;
    transport::session_limits limits;
    limits.read_timeout = 300ms;
    echo_server server(limits, 2, load(files));
    tls_client client(server.port());
    client.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nhalf");
    const auto answer = client.receive_until("\n", 5s);
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 408") && Catch::Contains("Connection: close"));
}

namespace {

// One request over a fresh connection at `version`, offering `session` when given; what the
// connection ended with: whether it resumed, and the sessions (tickets) the server gave.
struct resumption {
    bool resumed = false;
    int tickets = 0;
    SSL_SESSION* last = nullptr;  // owned by the caller
};

resumption connect_once(unsigned short port, int version, SSL_SESSION* session) {
    net::io_context io;
    ssl::context context(ssl::context::tls_client);
    SSL_CTX* raw = context.native_handle();
    SSL_CTX_set_min_proto_version(raw, version);
    SSL_CTX_set_max_proto_version(raw, version);
    SSL_CTX_set_session_cache_mode(raw, SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE);
    static thread_local resumption* current = nullptr;
    resumption out;
    current = &out;
    SSL_CTX_sess_set_new_cb(raw, [](SSL*, SSL_SESSION* given) {
        ++current->tickets;
        if (current->last != nullptr) SSL_SESSION_free(current->last);
        current->last = given;
        return 1;  // kept: freed by the caller
    });
    ssl::stream<tcp::socket> stream(io, context);
    if (session != nullptr) SSL_set_session(stream.native_handle(), session);
    stream.next_layer().connect(tcp::endpoint(net::ip::make_address("127.0.0.1"), port));
    stream.handshake(ssl::stream_base::client);
    const std::string_view request = "GET /echo HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
    net::write(stream, net::buffer(request.data(), request.size()));
    std::string answer;
    error_code ec;
    std::array<char, 4096> piece{};
    while (!ec) answer.append(piece.data(), stream.read_some(net::buffer(piece), ec));  // tickets arrive as it reads
    CHECK_THAT(answer, Catch::StartsWith("HTTP/1.1 200"));
    out.resumed = SSL_session_reused(stream.native_handle()) == 1;
    stream.shutdown(ec);  // a client that ends without close_notify marks its session unresumable
    current = nullptr;
    return out;
}

}  // namespace

TEST_CASE("server: TLS sessions resume by ticket, one ticket a handshake", "[server][transport][tls]") {
    const test_certificate files;
    echo_server server({}, 2, load(files));
    for (const int version : {TLS1_2_VERSION, TLS1_3_VERSION}) {
        CAPTURE(version);
        const auto first = connect_once(server.port(), version, nullptr);
        CHECK_FALSE(first.resumed);
        CHECK(first.tickets == 1);  // TLS 1.3: one ticket a handshake, not OpenSSL's default two
        REQUIRE(first.last != nullptr);
        const auto second = connect_once(server.port(), version, first.last);
        CHECK(second.resumed);
        SSL_SESSION_free(first.last);
        if (second.last != nullptr) SSL_SESSION_free(second.last);
    }
}
