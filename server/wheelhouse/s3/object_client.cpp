#include "wheelhouse/s3/object_client.hpp"

#include <boost/asio/ssl.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/url/parse.hpp>
#include <openssl/ssl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <mutex>
#include <thread>
#include <unordered_set>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/crypto/hmac.hpp"
#include "wheelhouse/remote/tls_context.hpp"
#include "wheelhouse/s3/part_upload.hpp"
#include "wheelhouse/transport/net.hpp"

namespace wheelhouse::s3 {
namespace {

namespace ssl = boost::asio::ssl;
using response = http::response<http::string_body>;

struct endpoint_parts {
    bool tls = false;
    std::string host;
    std::string port;
    std::string host_header;  // host, or host:port when not the scheme's
};

result<endpoint_parts> parse_endpoint(const std::string& text) {
    const auto parsed = boost::urls::parse_absolute_uri(text);
    // Echoed only when nothing in it can be a secret (a user, a password, a query, a fragment),
    // and as printable ASCII: a message is logged and shown.
    const bool plain = text.size() <= 200 && text.find_first_of("@?#") == std::string::npos &&
                       std::all_of(text.begin(), text.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
    const std::string shown = plain ? "'" + text + "'" : std::string("the URL given");
    const auto wrong = [&](std::string_view why) {
        return invalid("give s3-endpoint as the store's base URL, such as https://s3.example.com or "
                       "http://127.0.0.1:7480: " + shown + " " + std::string(why));
    };
    if (!parsed) return wrong("is not a URL");
    endpoint_parts parts;
    const auto scheme = parsed->scheme();
    if (scheme != "http" && scheme != "https") return wrong("is neither http nor https");
    if (parsed->has_userinfo()) return wrong("has credentials in it (give them in the environment)");
    if (parsed->has_query() || parsed->has_fragment() || (parsed->path() != "" && parsed->path() != "/"))
        return wrong("has a path, query or fragment (the bucket is its own setting)");
    parts.tls = scheme == "https";
    parts.host = parsed->encoded_host().decode();
    if (parts.host.empty()) return wrong("has no host");
    parts.port = parsed->has_port() ? std::string(parsed->port()) : (parts.tls ? "443" : "80");
    const std::string host_text = std::string(parsed->encoded_host_and_port());
    parts.host_header = parsed->has_port() && parts.port != (parts.tls ? "443" : "80") ? host_text
                                                                                       : std::string(parsed->encoded_host());
    return parts;
}

std::string trimmed(std::string_view text) {
    const auto first = text.find_first_not_of(" \t\r");
    if (first == std::string_view::npos) return {};
    const auto last = text.find_last_not_of(" \t\r");
    return std::string(text.substr(first, last - first + 1));
}

// Runs one asynchronous step to its end on the call's own io_context.
template <typename Start>
error_code await(net::io_context& io, Start&& start) {
    error_code result = net::error::would_block;
    start([&](error_code ec, auto&&...) { result = ec; });
    io.restart();
    io.run();
    return result;
}

error transport_failure(const endpoint_parts& where, std::string_view step, error_code ec) {
    const bool late = ec == beast::error::timeout;
    return make_error(late ? error_kind::timeout : error_kind::unavailable,
                      "the object store at " + where.host_header + " failed while " + std::string(step) + ": " +
                          (late ? std::string("no answer in time (s3-timeout)") : ec.message()));
}

// Files above this go up in parts, several at once: one PUT holds at most 5 GiB, and one
// connection does not use what a store can take.
constexpr std::uint64_t single_put_limit = 16ull << 20;
// A byte range of a file as a request body, read a block at a time.
struct file_range_body {
    struct value_type {
        beast::file file;
        std::uint64_t offset = 0;
        std::uint64_t length = 0;
    };
    static std::uint64_t size(const value_type& body) { return body.length; }

    class writer {
    public:
        using const_buffers_type = net::const_buffer;
        template <bool is_request, class Fields>
        writer(http::header<is_request, Fields>&, value_type& body) : body_(body), remaining_(body.length) {}
        void init(error_code& ec) { body_.file.seek(body_.offset, ec); }
        boost::optional<std::pair<const_buffers_type, bool>> get(error_code& ec) {
            ec = {};
            if (remaining_ == 0) return boost::none;
            const auto got = body_.file.read(block_.data(), std::min<std::uint64_t>(remaining_, block_.size()), ec);
            if (ec) return boost::none;
            if (got == 0) {  // the file is shorter than it was: never send a part short
                ec = boost::system::errc::make_error_code(boost::system::errc::io_error);
                return boost::none;
            }
            remaining_ -= got;
            return std::pair<const_buffers_type, bool>(net::const_buffer(block_.data(), got), remaining_ > 0);
        }

    private:
        value_type& body_;
        std::uint64_t remaining_;
        std::vector<char> block_ = std::vector<char>(64 << 10);
    };
};

}  // namespace

struct object_client::impl {
    bucket_settings settings;
    endpoint_parts where;
    std::unique_ptr<ssl::context> tls;
    std::unique_ptr<const signer> signs;  // settings.who in settings.region

    // The multipart uploads this client is running: abort_uploads() leaves them alone (a deletion
    // of bytes that are being uploaded again must not abort that upload).
    std::mutex running_mutex;
    std::unordered_set<std::string> running_uploads;
    bool spares(const std::string& upload_id) {
        std::lock_guard lock(running_mutex);
        return running_uploads.contains(upload_id);
    }
    void stop_sparing(const std::string& upload_id) {
        std::lock_guard lock(running_mutex);
        running_uploads.erase(upload_id);
    }

    // One request on a new connection: the answer's status, headers and body (≤ max_body).
    template <typename Body>
    result<response> exchange(const endpoint_parts& to, http::request<Body>& request, std::uint64_t max_body) {
        return exchange(to, request, [&](net::io_context& io, auto& stream, beast::flat_buffer& buffer) {
            return read_answer(io, stream, buffer, to, request.method(), max_body);
        });
    }

    // The same with the answer read by `receive(io, stream, buffer)` once the request is sent.
    template <typename Body, typename Receive>
    auto exchange(const endpoint_parts& to, http::request<Body>& request, Receive&& receive)
        -> decltype(receive(std::declval<net::io_context&>(), std::declval<beast::tcp_stream&>(),
                            std::declval<beast::flat_buffer&>())) {
        net::io_context io;
        tcp::resolver resolver(io);
        tcp::resolver::results_type found;
        // The resolver has no deadline of its own: a timer cancels it.
        net::steady_timer deadline(io, settings.timeout);
        bool late = false;
        deadline.async_wait([&](error_code ec) {
            if (!ec) late = true, resolver.cancel();
        });
        const auto resolved = await(io, [&](auto handler) {
            resolver.async_resolve(to.host, to.port, [&, handler](error_code ec, tcp::resolver::results_type r) {
                deadline.cancel();
                found = std::move(r);
                handler(ec);
            });
        });
        if (resolved) return transport_failure(to, "resolving its name", late ? beast::error::timeout : resolved);
        beast::tcp_stream tcp_stream(io);
        tcp_stream.expires_after(settings.timeout);
        if (auto ec = await(io, [&](auto handler) { tcp_stream.async_connect(found, handler); }))
            return transport_failure(to, "connecting", ec);
        beast::flat_buffer buffer;
        if (!to.tls) {
            if (auto sent = send(io, tcp_stream, to, request); !sent) return sent.error();
            return receive(io, tcp_stream, buffer);
        }
        beast::ssl_stream<beast::tcp_stream> stream(std::move(tcp_stream), *tls);
        error_code not_an_address;
        (void)net::ip::make_address(to.host, not_an_address);
        if (not_an_address) SSL_set_tlsext_host_name(stream.native_handle(), to.host.c_str());  // SNI names hosts only
        stream.set_verify_callback(ssl::host_name_verification(to.host));
        beast::get_lowest_layer(stream).expires_after(settings.timeout);
        if (auto ec = await(io, [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); }))
            return transport_failure(to, "negotiating TLS (is s3-ca-bundle right?)", ec);
        if (auto sent = send(io, stream, to, request); !sent) return sent.error();
        return receive(io, stream, buffer);
    }

    template <typename Stream, typename Body>
    result<void> send(net::io_context& io, Stream& stream, const endpoint_parts& to, http::request<Body>& request) {
        http::request_serializer<Body> serializer(request);
        // Each chunk of a large body renews the deadline: the timeout bounds a stall, not a file.
        while (!serializer.is_done()) {
            beast::get_lowest_layer(stream).expires_after(settings.timeout);
            if (auto ec = await(io, [&](auto handler) { http::async_write_some(stream, serializer, handler); }))
                return transport_failure(to, "sending the request", ec);
        }
        return {};
    }

    // Reads the rest of an answer a step at a time. A small answer has one deadline for the whole
    // (a store that trickles is cut); a file's download renews it at each step (`per_step`), so
    // the timeout bounds a stall, not a file.
    enum class read_deadline { whole, per_step };
    template <typename Stream, typename Parser>
    error_code read_rest(net::io_context& io, Stream& stream, beast::flat_buffer& buffer, Parser& parser,
                         read_deadline renewal = read_deadline::whole) {
        beast::get_lowest_layer(stream).expires_after(settings.timeout);
        while (!parser.is_done()) {
            if (renewal == read_deadline::per_step) beast::get_lowest_layer(stream).expires_after(settings.timeout);
            if (auto ec = await(io, [&](auto handler) { http::async_read_some(stream, buffer, parser, handler); }))
                return ec;
        }
        return {};
    }

    template <typename Stream>
    result<response> read_answer(net::io_context& io, Stream& stream, beast::flat_buffer& buffer,
                                 const endpoint_parts& to, http::verb method, std::uint64_t max_body) {
        http::response_parser<http::string_body> parser;
        parser.body_limit(max_body);
        parser.skip(method == http::verb::head);
        if (auto ec = read_rest(io, stream, buffer, parser)) {
            if (ec == http::error::body_limit)
                return make_error(error_kind::upstream, "the object store answered more than " +
                                                            std::to_string(max_body) + " bytes");
            return transport_failure(to, "reading the answer", ec);
        }
        return parser.release();
    }

    // `extra` are headers sent and signed beside Host and the x-amz- ones SigV4 adds.
    template <typename Body>
    void sign(http::request<Body>& request, http::verb verb, std::string_view path, name_value_list query,
              std::string_view payload_sha256, const name_value_list& extra) const {
        const std::string method(http::to_string(verb));
        const request_line line{method, where.host_header, path, std::move(query)};
        request.method(verb);
        request.target(request_target(line));
        request.version(11);
        request.set(http::field::host, where.host_header);
        request.set(http::field::user_agent, "wheelhouse");
        for (const auto& [name, value] : extra) request.set(name, value);
        for (const auto& [name, value] : signs->sign_headers(line, extra, payload_sha256, std::chrono::system_clock::now()))
            request.set(name, value);
        request.prepare_payload();
    }

    template <typename Body>
    result<response> signed_call(http::verb verb, std::string_view path, name_value_list query,
                                 http::request<Body> request, std::string_view payload_sha256,
                                 std::uint64_t max_body = 1 << 20, const name_value_list& extra = {}) {
        sign(request, verb, path, std::move(query), payload_sha256, extra);
        return exchange(where, request, max_body);
    }

    std::string bucket_path(std::string_view key) const { return "/" + settings.bucket + "/" + std::string(key); }
};

namespace {

// The user metadata each upload carries: the sha256 its bytes were checked against, so a later
// look can tell the object holds those bytes without reading them.
constexpr std::string_view sha256_meta = "x-amz-meta-sha256";
constexpr std::string_view empty_sha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// The store's words for a message: printable ASCII, at most `limit` bytes, every other byte '?'
// (an answer's &#27; must not reach an operator's terminal as an escape sequence).
std::string printable(std::string_view text, std::size_t limit) {
    std::string out(text.substr(0, limit));
    for (auto& c : out)
        if (c < 0x20 || c > 0x7E) c = '?';
    return out;
}

// A status outside 2xx as an error that names the store's own code and leads with the fix.
error refusal(const response& answer, std::string_view what) {
    std::string code, detail;
    if (auto parsed = error_of(answer.body()); parsed && !parsed->code.empty()) {
        code = printable(parsed->code, 64);
        detail = parsed->message.empty() ? "" : ": " + printable(parsed->message, 200);
    }
    const unsigned status = answer.result_int();
    std::string fix;
    if (code == "SignatureDoesNotMatch" || code == "InvalidAccessKeyId" || status == 403)
        fix = "check the access key pair (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or s3-credentials-file) and s3-region";
    else if (code == "NoSuchBucket")
        fix = "create the bucket, or correct s3-bucket";
    else if (status >= 500)
        fix = "the store is failing; try again later";
    const std::string said = code.empty() ? "HTTP " + std::to_string(status) : code + " (HTTP " + std::to_string(status) + ")";
    const auto kind = status == 403 || status == 401 ? error_kind::forbidden
                      : status == 404            ? error_kind::not_found
                      : status >= 500            ? error_kind::unavailable
                                                 : error_kind::upstream;
    return make_error(kind, (fix.empty() ? "" : fix + ": ") + "the object store refused " + std::string(what) +
                                " with " + said + detail);
}

bool ok(const response& answer) { return answer.result_int() / 100 == 2; }

// The store's answer to an upload (or a part of one) as try_put_file gives it back.
put_answer answer_of(const response& answer, std::string_view what) {
    put_answer put{answer.result_int(), {}, std::nullopt};
    if (!ok(answer)) {
        if (auto said = error_of(answer.body()); said) put.code = printable(said->code, 64);
        put.refusal = refusal(answer, what);
    }
    return put;
}

// An object that is more than was asked for is other bytes than expected, not a failing store.
error larger_than(std::uint64_t max_bytes, std::string_view key) {
    return make_error(error_kind::conflict, "the object store holds more than " + std::to_string(max_bytes) +
                                                " bytes as " + std::string(key));
}

std::string xml_escaped(std::string_view text) {
    std::string out;
    for (const char c : text) {
        if (c == '&') out += "&amp;";
        else if (c == '<') out += "&lt;";
        else if (c == '>') out += "&gt;";
        else out += c;
    }
    return out;
}

bool lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// S3's naming rules: 3 to 63 of a-z 0-9 . -, a letter or digit at each end, no "..", not an
// address. Checked here so a name never becomes a path (`..`) or a header (CR LF).
result<void> check_bucket_name(const std::string& name) {
    const bool charset = std::all_of(name.begin(), name.end(), [](char c) { return lower_alnum(c) || c == '.' || c == '-'; });
    error_code not_an_address;
    (void)net::ip::make_address(name, not_an_address);
    if (name.size() >= 3 && name.size() <= 63 && charset && lower_alnum(name.front()) && lower_alnum(name.back()) &&
        name.find("..") == std::string::npos && not_an_address)
        return {};
    const bool show = charset && name.size() <= 63;
    return invalid("s3-bucket must name one bucket: 3 to 63 of a-z, 0-9, '.' and '-', a letter or digit at each "
                   "end, no '..', not an address" + (show ? ": '" + name + "' is not one" : std::string()));
}

// Folders of a-z A-Z 0-9 . _ - (none empty, none "." or ".."), so no key can leave the prefix
// however a proxy in front of the store normalises paths.
result<void> check_prefix(const std::string& prefix) {
    // A folder of its own: "team" would put the keys at teamblobs/…, beside other folders.
    if (!prefix.empty() && prefix.back() != '/')
        return invalid("end s3-prefix with '/', as wheelhouse/ or team/wheels/: it names a folder of the bucket");
    std::size_t start = 0;
    while (start < prefix.size()) {
        const auto slash = prefix.find('/', start);
        const auto segment = std::string_view(prefix).substr(start, slash == std::string::npos ? slash : slash - start);
        const bool fine = !segment.empty() && segment != "." && segment != ".." &&
                          std::all_of(segment.begin(), segment.end(), [](char c) {
                              return lower_alnum(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '-';
                          });
        if (!fine) {
            return invalid("s3-prefix takes folders of letters, digits, '.', '_' and '-' (none empty, none '.' or "
                           "'..', no leading '/'), such as wheelhouse/ or team/wheels/");
        }
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    return {};
}

}  // namespace

result<put_answer> object_client::begin_parts(std::string_view key, std::string_view sha256, std::string& upload_id) {
    auto began = impl_->signed_call(http::verb::post, impl_->bucket_path(key), {{"uploads", ""}},
                                    http::request<http::empty_body>{}, empty_sha256, 1 << 20,
                                    {{std::string(sha256_meta), std::string(sha256)}});
    if (!began) return began.error();
    if (!ok(*began)) return answer_of(*began, "the upload of " + std::string(key));
    auto id = upload_id_of(began->body());
    if (!id) return make_error(error_kind::upstream, "the object store's answer: " + id.error().message);
    upload_id = std::move(*id);
    std::lock_guard lock(impl_->running_mutex);
    impl_->running_uploads.insert(upload_id);
    return put_answer{began->result_int(), {}, std::nullopt};
}

result<put_answer> object_client::put_part(std::string_view key, const std::string& upload_id, const file_part& part,
                                           std::string& etag) {
    http::request<file_range_body> request;
    error_code ec;
    request.body().file.open(part.file.c_str(), beast::file_mode::scan, ec);
    if (ec) return make_error(error_kind::internal, "cannot read " + part.file.string() + ": " + ec.message());
    request.body().offset = part.offset;
    request.body().length = part.length;
    const std::string path = impl_->bucket_path(key);
    auto answer = impl_->signed_call(http::verb::put, path,
                                     {{"partNumber", std::to_string(part.number)}, {"uploadId", upload_id}},
                                     std::move(request), part.sha256);
    if (!answer) return answer.error();
    auto put = answer_of(*answer, "part " + std::to_string(part.number) + " of the upload of " + path);
    if (!put.refusal) {
        etag = std::string(field_value(*answer, http::field::etag));
        if (etag.empty()) return make_error(error_kind::upstream, "the object store gave a part no ETag");
    }
    return put;
}

result<put_answer> object_client::complete_parts(std::string_view key, const std::string& upload_id,
                                                 const std::vector<std::string>& etags) {
    http::request<http::string_body> request;
    std::string& body = request.body();
    body = "<CompleteMultipartUpload>";
    for (std::size_t i = 0; i < etags.size(); ++i)
        body += "<Part><PartNumber>" + std::to_string(i + 1) + "</PartNumber><ETag>" + xml_escaped(etags[i]) +
                "</ETag></Part>";
    body += "</CompleteMultipartUpload>";
    const std::string body_sha256 = crypto::sha256_hex(body);
    const std::string path = impl_->bucket_path(key);
    auto answer = impl_->signed_call(http::verb::post, path, {{"uploadId", upload_id}}, std::move(request), body_sha256);
    if (answer && ok(*answer)) impl_->stop_sparing(upload_id);
    if (!answer) return answer.error();
    auto put = answer_of(*answer, "the completion of the upload of " + path);
    // S3 may answer 200 and then an <Error> in the body, when the completion failed after it began.
    if (put.refusal) return put;
    if (auto made = completion_of(answer->body()); !made) {
        auto said = error_of(answer->body());
        put.code = said && !said->code.empty() ? printable(said->code, 64) : "";
        put.refusal = make_error(error_kind::unavailable,
                                 "the object store failed to complete the upload of " + path + ": " +
                                     (put.code.empty() ? made.error().message : "it answered " + put.code));
    }
    return put;
}

bool object_client::abort_parts(std::string_view key, const std::string& upload_id) {
    impl_->stop_sparing(upload_id);
    auto aborted = impl_->signed_call(http::verb::delete_, impl_->bucket_path(key), {{"uploadId", upload_id}},
                                      http::request<http::empty_body>{}, empty_sha256);
    return aborted && (ok(*aborted) || aborted->result_int() == 404);  // 404: no such upload (any more)
}

result<credentials> credentials_from(const std::string& file) {
    credentials who;
    if (file.empty()) {
        const char* id = std::getenv("AWS_ACCESS_KEY_ID");
        const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
        const char* token = std::getenv("AWS_SESSION_TOKEN");
        who.access_key_id = id ? id : "";
        who.secret_access_key = secret ? secret : "";
        who.session_token = token ? token : "";
    } else {
        std::ifstream in(file);
        if (!in) return invalid("s3-credentials-file '" + file + "' cannot be read");
        std::string line;
        bool in_first_profile = true;
        int profiles = 0;
        while (std::getline(in, line)) {
            const std::string text = trimmed(line);
            if (text.starts_with("[")) in_first_profile = ++profiles == 1;
            const auto equals = text.find('=');
            if (!in_first_profile || equals == std::string::npos || text.starts_with("#")) continue;
            const std::string name = trimmed(std::string_view(text).substr(0, equals));
            const std::string value = trimmed(std::string_view(text).substr(equals + 1));
            if (name == "aws_access_key_id") who.access_key_id = value;
            else if (name == "aws_secret_access_key") who.secret_access_key = value;
            else if (name == "aws_session_token") who.session_token = value;
        }
    }
    // Printable ASCII without spaces, or a value could end a header and start another.
    const auto clean = [](const std::string& value) {
        return std::all_of(value.begin(), value.end(), [](char c) { return c > 0x20 && c < 0x7F; });
    };
    if (!clean(who.access_key_id) || who.access_key_id.find('/') != std::string::npos || !clean(who.secret_access_key) ||
        !clean(who.session_token)) {
        return invalid("give the access key id, secret and session token as printable ASCII without spaces (and no '/' "
                       "in the key id): one of them holds other characters");
    }
    if (who.access_key_id.empty() || who.secret_access_key.empty()) {
        return invalid(std::string("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, or give "
                                   "s3-credentials-file: no access key pair was found") +
                       (file.empty() ? "" : " in " + file));
    }
    return who;
}

object_client::object_client(std::unique_ptr<impl> state) noexcept : impl_(std::move(state)) {}
object_client::~object_client() = default;

result<std::unique_ptr<object_client>> object_client::create(bucket_settings settings) {
    auto where = parse_endpoint(settings.endpoint);
    if (!where) return where.error();
    if (auto named = check_bucket_name(settings.bucket); !named) return named.error();
    if (auto placed = check_prefix(settings.prefix); !placed) return placed.error();
    if (settings.region.empty()) return invalid("s3-region must not be empty (radosgw and MinIO take us-east-1)");
    if (!std::all_of(settings.region.begin(), settings.region.end(),
                     [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'; }))
        return invalid("s3-region takes a-z, 0-9 and '-' only, as eu-west-3 or us-east-1");
    if (!crypto::hmac_sha256_available())
        return make_error(error_kind::internal, "OpenSSL's configuration lacks HMAC-SHA256, which S3 signatures need");
    auto state = std::make_unique<impl>();
    // Made for an http endpoint too: a presigned URL may be https.
    auto context = remote::make_tls_client_context(settings.ca_bundle);
    if (!context) {
        return make_error(context.error().kind, "give s3-ca-bundle as a readable PEM file of CA certificates: '" +
                                                    settings.ca_bundle + "' will not do (" + context.error().message + ")");
    }
    state->tls = std::move(*context);
    state->settings = std::move(settings);
    state->signs = std::make_unique<const signer>(state->settings.who, state->settings.region);
    // One spelling of one endpoint (no trailing '/', no default port): DATA/bucket compares it.
    state->settings.endpoint = std::string(where->tls ? "https://" : "http://") + where->host_header;
    state->where = std::move(*where);
    return std::unique_ptr<object_client>(new object_client(std::move(state)));
}

const bucket_settings& object_client::settings() const noexcept { return impl_->settings; }

std::string object_client::key_of(std::string_view name) const { return impl_->settings.prefix + std::string(name); }

result<void> object_client::check_bucket() {
    auto answer = impl_->signed_call(http::verb::head, "/" + impl_->settings.bucket, {},
                                     http::request<http::empty_body>{}, empty_sha256);
    if (!answer) return answer.error();
    if (answer->result_int() == 404)
        return make_error(error_kind::not_found, "create the bucket, or correct s3-bucket: the object store has no "
                                                 "bucket '" + impl_->settings.bucket + "'");
    if (!ok(*answer)) return refusal(*answer, "access to bucket '" + impl_->settings.bucket + "'");
    return {};
}

result<put_answer> object_client::try_put_file(std::string_view key, const std::filesystem::path& file,
                                               std::string_view sha256, const storage::part_digests* written) {
    std::error_code unreadable;
    const std::uint64_t size = std::filesystem::file_size(file, unreadable);
    if (unreadable) return make_error(error_kind::internal, "cannot read " + file.string() + ": " + unreadable.message());
    if (size > single_put_limit) {
        const auto send = [size](part_upload& whole) {
            whole.grew_to(size);
            whole.ended();
            whole.complete();
            return whole.run();
        };
        // Digests of parts too small for this file, or of another file, are not used.
        if (written != nullptr && written->part_size >= part_size_for(size) && written->part_size <= largest_part &&
            written->sha256.size() == (size + written->part_size - 1) / written->part_size) {
            part_upload whole(*this, std::string(key), file, std::string(sha256), *written);
            return send(whole);
        }
        part_upload whole(*this, std::string(key), file, std::string(sha256), part_size_for(size));
        return send(whole);
    }
    http::request<http::file_body> request;
    error_code ec;
    request.body().open(file.c_str(), beast::file_mode::scan, ec);
    if (ec) return make_error(error_kind::internal, "cannot read " + file.string() + ": " + ec.message());
    auto answer = impl_->signed_call(http::verb::put, impl_->bucket_path(key), {}, std::move(request), sha256, 1 << 20,
                                     {{std::string(sha256_meta), std::string(sha256)}});
    if (!answer) return answer.error();
    return answer_of(*answer, "the upload of " + std::string(key));
}

result<void> object_client::put_file(std::string_view key, const std::filesystem::path& file,
                                     std::string_view sha256, const storage::part_digests* written) {
    auto put = try_put_file(key, file, sha256, written);
    if (!put) return put.error();
    if (put->refusal) return *put->refusal;
    return {};
}

result<std::optional<object_info>> object_client::look_up(std::string_view key) {
    auto answer = impl_->signed_call(http::verb::head, impl_->bucket_path(key), {}, http::request<http::empty_body>{},
                                     empty_sha256);
    if (!answer) return answer.error();
    if (answer->result_int() == 404) return std::optional<object_info>();
    if (!ok(*answer)) return refusal(*answer, "a look at " + std::string(key));
    const auto length = field_value(*answer, http::field::content_length);
    object_info info;
    const auto [end, failure] = std::from_chars(length.data(), length.data() + length.size(), info.size);
    if (failure != std::errc{} || end != length.data() + length.size() || length.empty())
        return make_error(error_kind::upstream, "the object store gave " + std::string(key) + " no length");
    const auto recorded = (*answer)[sha256_meta];
    if (crypto::is_sha256_hex(recorded)) info.sha256 = std::string(recorded);
    return std::optional(info);
}

result<std::string> object_client::get(std::string_view key, std::uint64_t max_bytes) {
    auto answer = impl_->signed_call(http::verb::get, impl_->bucket_path(key), {}, http::request<http::empty_body>{},
                                     empty_sha256, max_bytes);
    if (!answer) return answer.error();
    if (!ok(*answer)) return refusal(*answer, "the download of " + std::string(key));
    return std::move(answer->body());
}

result<void> object_client::get_file(std::string_view key, const std::filesystem::path& target,
                                     std::uint64_t max_bytes, unsigned mode) {
    http::request<http::empty_body> request;
    impl_->sign(request, http::verb::get, impl_->bucket_path(key), {}, empty_sha256, {});
    const auto what = "the download of " + std::string(key);
    bool created = false;
    auto got = impl_->exchange(impl_->where, request,
                               [&](net::io_context& io, auto& stream, beast::flat_buffer& buffer) -> result<void> {
        http::response_parser<http::empty_body> head;
        // Checked against Content-Length as the header is read, and not again after (Beast's
        // default, 8 MiB, would refuse every large file).
        head.body_limit(max_bytes);
        beast::get_lowest_layer(stream).expires_after(impl_->settings.timeout);
        if (auto ec = await(io, [&](auto handler) { http::async_read_header(stream, buffer, head, handler); })) {
            if (ec == http::error::body_limit) return larger_than(max_bytes, key);
            return transport_failure(impl_->where, "reading the answer", ec);
        }
        if (head.get().result_int() / 100 != 2) {
            http::response_parser<http::string_body> said(std::move(head));
            said.body_limit(1 << 20);
            if (auto ec = impl_->read_rest(io, stream, buffer, said))
                return transport_failure(impl_->where, "reading the answer", ec);
            return refusal(said.get(), what);
        }
        http::response_parser<http::file_body> body(std::move(head));
        body.body_limit(max_bytes);
        error_code ec;
        body.get().body().open(target.c_str(), beast::file_mode::write_new, ec);
        if (ec) return make_error(error_kind::internal, "cannot create " + target.string() + ": " + ec.message());
        created = true;
        ec = impl_->read_rest(io, stream, buffer, body, impl::read_deadline::per_step);
        const int fd = body.get().body().file().native_handle();
        if (!ec && (::fchmod(fd, mode) != 0 || ::fsync(fd) != 0))
            return make_error(error_kind::internal, "cannot write " + target.string() + ": " + std::strerror(errno));
        if (ec == http::error::body_limit) return larger_than(max_bytes, key);
        if (ec) return transport_failure(impl_->where, "reading the answer", ec);
        return {};
    });
    if (!got && created) {
        std::error_code ignored;
        std::filesystem::remove(target, ignored);
    }
    return got;
}

result<void> object_client::list(std::string_view prefix,
                                 const std::function<result<void>(const listed_object&)>& each) {
    std::string continuation;
    do {
        name_value_list query{{"list-type", "2"}, {"prefix", std::string(prefix)}};
        if (!continuation.empty()) query.emplace_back("continuation-token", continuation);
        // A page of 1000 keys of at most 1024 bytes each, and their sizes, dates and ETags.
        auto answer = impl_->signed_call(http::verb::get, "/" + impl_->settings.bucket, std::move(query),
                                         http::request<http::empty_body>{}, empty_sha256, 4u << 20);
        if (!answer) return answer.error();
        if (!ok(*answer)) return refusal(*answer, "the listing of " + std::string(prefix));
        auto page = list_page_of(answer->body());
        if (!page) return make_error(error_kind::upstream, "the object store's listing: " + page.error().message);
        for (const auto& object : page->objects) {
            if (auto done = each(object); !done) return done.error();
        }
        if (!page->next_continuation_token.empty() && page->next_continuation_token == continuation)
            return make_error(error_kind::upstream, "the object store's listing repeats its continuation token");
        continuation = std::move(page->next_continuation_token);
    } while (!continuation.empty());
    return {};
}

result<void> object_client::remove(std::string_view key) {
    auto answer = impl_->signed_call(http::verb::delete_, impl_->bucket_path(key), {},
                                     http::request<http::empty_body>{}, empty_sha256);
    if (!answer) return answer.error();
    if (!ok(*answer) && answer->result_int() != 404) return refusal(*answer, "the removal of " + std::string(key));
    return {};
}

// A listing answers at most 1000 uploads; the aborted ones leave it, so it is asked again until
// it names none of `key`'s. Bounded, for a store that keeps listing what it has aborted.
result<void> object_client::abort_uploads(std::string_view key) {
    constexpr int most_listings = 100;
    for (int listing = 0; listing < most_listings; ++listing) {
        auto answer = impl_->signed_call(http::verb::get, "/" + impl_->settings.bucket,
                                         {{"uploads", ""}, {"prefix", std::string(key)}},
                                         http::request<http::empty_body>{}, empty_sha256, 4u << 20);
        if (!answer) return answer.error();
        if (!ok(*answer)) return refusal(*answer, "the listing of the uploads of " + std::string(key));
        auto open = open_uploads_of(answer->body());
        if (!open) return make_error(error_kind::upstream, "the object store's listing of uploads: " + open.error().message);
        bool aborted_any = false;
        for (const auto& upload : *open) {
            if (upload.key != key) continue;  // the prefix of a longer key (a .metadata never goes up in parts)
            if (impl_->spares(upload.upload_id)) continue;
            auto aborted = impl_->signed_call(http::verb::delete_, impl_->bucket_path(key),
                                              {{"uploadId", upload.upload_id}}, http::request<http::empty_body>{},
                                              empty_sha256);
            if (!aborted) return aborted.error();
            if (!ok(*aborted) && aborted->result_int() != 404)
                return refusal(*aborted, "the abort of an upload of " + std::string(key));
            aborted_any = true;
        }
        if (!aborted_any) return {};
    }
    return make_error(error_kind::upstream, "the object store still lists uploads of " + std::string(key) +
                                                " after " + std::to_string(most_listings) + " rounds of aborts");
}

std::string object_client::presigned_get(std::string_view key, std::chrono::seconds expires,
                                        std::chrono::system_clock::time_point signed_at) const {
    const std::string path = impl_->bucket_path(key);
    const request_line line{"GET", impl_->where.host_header, path, {}};
    return std::string(impl_->where.tls ? "https://" : "http://") + impl_->where.host_header + uri_encode(path, true) +
           "?" + impl_->signs->presign_query(line, signed_at, expires);
}

result<std::string> object_client::get_url(const std::string& url, std::uint64_t max_bytes, const std::string& range) {
    const auto parsed = boost::urls::parse_absolute_uri(url);
    if (!parsed) return invalid("not a URL: " + url);
    auto where = parse_endpoint(std::string(parsed->scheme()) + "://" + std::string(parsed->encoded_authority()));
    if (!where) return where.error();
    http::request<http::empty_body> request{http::verb::get, std::string(parsed->encoded_target()), 11};
    request.set(http::field::host, where->host_header);
    request.set(http::field::user_agent, "wheelhouse");
    if (!range.empty()) request.set(http::field::range, range);
    auto answer = impl_->exchange(*where, request, max_bytes);
    if (!answer) return answer.error();
    if (!ok(*answer)) return refusal(*answer, "a presigned download");
    return std::move(answer->body());
}

}  // namespace wheelhouse::s3
