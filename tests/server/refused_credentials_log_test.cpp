#include <catch2/catch.hpp>

#include <memory>
#include <sstream>
#include <string>

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "test_server.hpp"
#include "test_support.hpp"
#include "wheelhouse/auth/token_store.hpp"

using namespace wheelhouse;
using namespace wheelhouse::testing;

namespace {

// The server's log while it lives. Construct it before the server and let it outlive it: the
// server's threads read the default logger without a lock.
class log_capture {
public:
    log_capture() : previous_(spdlog::default_logger()) {
        auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
        spdlog::set_default_logger(std::make_shared<spdlog::logger>("capture", std::move(sink)));
    }
    ~log_capture() { spdlog::set_default_logger(previous_); }
    log_capture(const log_capture&) = delete;
    log_capture& operator=(const log_capture&) = delete;

    // What was logged since the last call. A refusal is logged before its answer is sent.
    std::string take() {
        auto taken = text_.str();
        text_.str({});
        return taken;
    }

private:
    std::ostringstream text_;
    std::shared_ptr<spdlog::logger> previous_;
};

std::string make_token(test_server& server, std::string_view name, auth::scope scope,
                       std::optional<std::chrono::seconds> lifetime = std::nullopt) {
    auth::token_store tokens(server.catalog());
    auto created = tokens.create(name, scope, {}, lifetime, "test");
    REQUIRE(created);
    return created->secret;
}

std::string basic(const std::string& user_pass) { return "Basic " + testing::base64(user_pass); }

std::size_t count(const std::string& text, std::string_view what) {
    std::size_t found = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++found;
    return found;
}

}  // namespace

TEST_CASE("server: each refused credential is logged once, with the reason and never the secret",
          "[server][auth]") {
    log_capture log;
    test_server server;
    const auto reader = make_token(server, "reader", auth::scope::read);
    const auto old_ci = make_token(server, "old-ci", auth::scope::upload);
    const auto lapsed = make_token(server, "lapsed", auth::scope::upload, std::chrono::seconds(0));
    const auto uploader = make_token(server, "ci", auth::scope::upload);
    REQUIRE(auth::token_store(server.catalog()).revoke("old-ci", "test"));
    const std::string unknown = "wh_" + std::string(40, 'Q') + "xyz";
    const std::string pypi = "pypi-AgEIcHlwaS5vcmcSecretPart";
    // A password a user might paste in by mistake: letters only, so it could pass for a scheme.
    const std::string password = "Hunter-Secret-Pass";

    struct row {
        std::string authorization;
        unsigned status;
        std::string reason;  // as the log says it
        std::string secret;  // must appear nowhere in the log
    };
    const row table[] = {
        {basic("alice:" + uploader), 401, "Basic username other than __token__", uploader},
        {basic(uploader + ":__token__"), 401, "Basic username other than __token__", uploader},  // swapped
        {"Basic !!" + unknown, 401, "Basic credentials not valid base64", unknown},
        {basic("__token__" + unknown), 401, "Basic credentials without ':'", unknown},
        {"Token " + uploader, 401, "Authorization scheme neither Basic nor Bearer", uploader},
        {password + " more", 401, "Authorization scheme neither Basic nor Bearer", password},
        {uploader, 401, "Authorization scheme neither Basic nor Bearer", uploader},
        {"Bearer " + uploader + " " + uploader, 401, "Bearer token with whitespace in it", uploader},
        {"Bearer " + unknown, 401, "unknown wheelhouse token", unknown},
        {basic("__token__:" + unknown), 401, "unknown wheelhouse token", unknown},
        {"Bearer " + pypi, 401, "a PyPI token (pypi-...), not a wheelhouse one", pypi.substr(5)},
        {"Bearer " + old_ci, 401, "token 'old-ci' is revoked", old_ci},
        {"Bearer " + lapsed, 401, "token 'lapsed' has expired", lapsed},
        {"Bearer " + reader, 403, "token 'reader' has scope read; uploads need upload or admin", reader},
    };
    const std::string target = "/api/v1/files/einops-0.8.1-py3-none-any.whl";
    for (const auto& [authorization, status, reason, secret] : table) {
        CAPTURE(authorization, reason);
        const auto response =
            server.request(http::verb::put, target, {{http::field::authorization, authorization}}, "bytes");
        CHECK(response.result_int() == status);
        const auto logged = log.take();
        CAPTURE(logged);
        CHECK(count(logged, "uploads refused: ") == 1);
        CHECK(count(logged, "uploads refused: " + reason + " (PUT " + target + ")") == 1);
        CHECK(logged.find(secret) == std::string::npos);
        // not even a piece of it
        CHECK(logged.find(secret.substr(3, 12)) == std::string::npos);
    }

    // A token that is good is no refusal (the upload itself then fails on its bytes).
    const auto accepted = server.request(http::verb::put, target, {{http::field::authorization, "Bearer " + uploader}},
                                         "bytes");
    CHECK(accepted.result_int() == 400);
    CHECK(count(log.take(), "refused") == 0);
}
