// The release-asset HTTP client against the fake GitHub (tests/e2e/fake_github.py) on loopback:
// real TLS with a CA the fake makes, real redirects to its storage host, real faults.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>

#include "test_support.hpp"
#include "wheelhouse/remote/http_client.hpp"

using namespace wheelhouse;
using wheelhouse::remote::client_settings;
using wheelhouse::remote::fetch_request;
using wheelhouse::remote::http_client;

namespace {

std::string random_bytes(std::size_t size, unsigned seed) {
    std::mt19937 generator(seed);
    std::string bytes(size, '\0');
    for (auto& byte : bytes) byte = static_cast<char>(generator() & 0xFF);
    return bytes;
}

std::string json_field(const std::string& line, const std::string& key) {
    const auto at = line.find("\"" + key + "\": \"");
    REQUIRE(at != std::string::npos);
    const auto start = at + key.size() + 5;
    return line.substr(start, line.find('"', start) - start);
}

// The fake as a child process: python3 from PATH, its stdin a pipe whose closing ends it.
class fake_github {
public:
    explicit fake_github(const std::filesystem::path& setup, const std::filesystem::path& dir) {
        int to_child[2];
        int from_child[2];
        REQUIRE(::pipe(to_child) == 0);
        REQUIRE(::pipe(from_child) == 0);
        pid_ = ::fork();
        REQUIRE(pid_ >= 0);
        if (pid_ == 0) {
            ::dup2(to_child[0], 0);
            ::dup2(from_child[1], 1);
            ::close(to_child[1]);
            ::close(from_child[0]);
            const std::string script = WHEELHOUSE_FAKE_GITHUB;
            const std::string dir_text = dir.string();
            const std::string setup_text = setup.string();
            ::execlp("python3", "python3", script.c_str(), "--dir", dir_text.c_str(), "--setup", setup_text.c_str(),
                     static_cast<char*>(nullptr));
            ::_exit(127);
        }
        ::close(to_child[0]);
        ::close(from_child[1]);
        stdin_ = to_child[1];
        FILE* out = ::fdopen(from_child[0], "r");
        std::string line;
        for (int c; (c = std::fgetc(out)) != EOF && c != '\n';) line.push_back(static_cast<char>(c));
        std::fclose(out);
        REQUIRE_FALSE(line.empty());
        github = json_field(line, "github");
        storage = json_field(line, "storage");
        ca = json_field(line, "ca");
    }
    fake_github(const fake_github&) = delete;
    fake_github& operator=(const fake_github&) = delete;
    ~fake_github() {
        ::close(stdin_);
        ::kill(pid_, SIGTERM);
        int status = 0;
        ::waitpid(pid_, &status, 0);
    }

    std::string download(const std::string& name) const { return github + "/o/r/releases/download/v1/" + name; }

    std::string github, storage, ca;

private:
    pid_t pid_ = -1;
    int stdin_ = -1;
};

// One fake for the whole file: each asset carries its own fault.
struct world {
    testing::temp_dir dir;
    std::string good = random_bytes(300 * 1000, 1);
    std::string small = random_bytes(5000, 2);
    std::unique_ptr<fake_github> fake;

    world() {
        std::ofstream(dir / "good.whl", std::ios::binary) << good;
        std::ofstream(dir / "small.whl", std::ios::binary) << small;
        const std::string good_path = (dir / "good.whl").string();
        const std::string small_path = (dir / "small.whl").string();
        auto asset = [&](const std::string& name, const std::string& path, const std::string& fault) {
            return "{\"name\": \"" + name + "\", \"path\": \"" + path + "\", \"fault\": " + fault + "}";
        };
        std::ofstream(dir / "setup.json")
            << "{\"releases\": [{\"owner\": \"o\", \"repo\": \"r\", \"tag\": \"v1\", \"assets\": ["
            << asset("good.whl", good_path, "{}") << ","
            << asset("stall.whl", good_path, "{\"stall_after\": 1000, \"stall_seconds\": 20}") << ","
            << asset("lie.whl", small_path, "{\"lie_length\": 4000}") << ","
            << asset("loop.whl", small_path, "{\"redirect_loop\": true}") << ","
            << asset("offsite.whl", small_path, "{\"redirect_to\": \"https://evil.example/x.whl\"}") << ","
            << asset("broken.whl", small_path, "{\"status\": 503}") << ","
            << asset("slow.whl", good_path, "{\"slow_bps\": 50000}") << ","
            << asset("slow_small.whl", small_path, "{\"slow_bps\": 2500}") << "]}]}";
        fake = std::make_unique<fake_github>(dir / "setup.json", dir / "certs");
    }

    client_settings settings() const {
        client_settings out;
        out.policy.allowed_hosts = {"127.0.0.1", "localhost"};
        out.policy.allow_private_addresses = true;
        out.ca_bundle = fake->ca;
        out.connect_timeout = std::chrono::seconds(5);
        out.read_timeout = std::chrono::seconds(5);
        out.total_timeout = std::chrono::seconds(60);
        return out;
    }
};

world& shared_world() {
    static world instance;
    return instance;
}

}  // namespace

TEST_CASE("remote client: follows GitHub's redirect to storage and returns the bytes", "[remote][network]") {
    auto& w = shared_world();
    http_client client(w.settings());
    auto fetched = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, true, {}});
    REQUIRE(fetched);
    CHECK(fetched->status == 200);
    CHECK(fetched->body == w.good);
    CHECK(fetched->bytes_read == w.good.size());
    CHECK(fetched->final_url.rfind(w.fake->storage + "/", 0) == 0);
    CHECK(fetched->header("content-length") == std::to_string(w.good.size()));

    SECTION("a suffix range reads only the tail") {
        auto tail = client.fetch(fetch_request{w.fake->download("good.whl"), {{"Range", "bytes=-100"}}, 1u << 20, true, {}});
        REQUIRE(tail);
        CHECK(tail->status == 206);
        CHECK(tail->body == w.good.substr(w.good.size() - 100));
        CHECK(tail->bytes_read == 100);
    }
    SECTION("without following redirects the 302 itself comes back") {
        auto first = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, false, {}});
        REQUIRE(first);
        CHECK(first->status == 302);
        CHECK(std::string(first->header("location")).rfind(w.fake->storage, 0) == 0);
    }
    SECTION("a status of 400 or more is the caller's to judge") {
        auto broken = client.fetch(fetch_request{w.fake->download("broken.whl"), {}, 1u << 20, true, {}});
        REQUIRE(broken);
        CHECK(broken->status == 503);
    }
}

TEST_CASE("remote client: fetch_to streams the body in chunks after the head", "[remote][network]") {
    auto& w = shared_world();
    http_client client(w.settings());
    std::string received;
    int heads = 0;
    std::size_t chunks = 0;
    auto fetched = client.fetch_to(
        fetch_request{w.fake->download("good.whl"), {}, 1000, true, {}},  // max_body does not apply to a sink
        [&](std::span<const char> chunk) -> result<void> {
            CHECK(heads == 1);
            received.append(chunk.data(), chunk.size());
            ++chunks;
            return {};
        },
        [&](const remote::fetch_response& head) -> result<void> {
            ++heads;
            CHECK(head.status == 200);
            CHECK(head.body.empty());
            return {};
        });
    REQUIRE(fetched);
    CHECK(received == w.good);
    CHECK(chunks > 1);
    CHECK(fetched->body.empty());
    CHECK(fetched->bytes_read == w.good.size());

    SECTION("a sink's error stops the fetch with that error") {
        auto stopped = client.fetch_to(fetch_request{w.fake->download("good.whl"), {}, 0, true, {}},
                                       [](std::span<const char>) -> result<void> {
                                           return make_error(error_kind::internal, "disk full");
                                       });
        REQUIRE_FALSE(stopped);
        CHECK(stopped.error().message == "disk full");
    }
}

TEST_CASE("remote client: the Authorization header stays with the first host", "[remote][network]") {
    auto& w = shared_world();
    http_client client(w.settings());
    const std::string marker = "Bearer marker-" + std::to_string(std::random_device{}());
    REQUIRE(client.fetch(fetch_request{w.fake->download("good.whl"),
                                       {{"Authorization", marker}}, 1u << 20, true, {}}));
    auto log = client.fetch(fetch_request{w.fake->github + "/_control/log", {}, 16u << 20, true, {}});
    REQUIRE(log);
    const auto& text = log->body;
    const auto at = text.find(marker);
    REQUIRE(at != std::string::npos);  // the github host saw it
    CHECK(text.find(marker, at + 1) == std::string::npos);  // storage did not
    CHECK(text.find("\"host\": \"storage\"", at) != std::string::npos);
}

TEST_CASE("remote client: refuses what the policy refuses", "[remote][network]") {
    auto& w = shared_world();
    SECTION("a first URL off the allow-list, before any connection") {
        http_client client(w.settings());
        auto refused = client.fetch(fetch_request{"https://evil.example/x.whl", {}, 1u << 20, true, {}});
        REQUIRE_FALSE(refused);
        CHECK(refused.error().kind == error_kind::invalid);
        CHECK_THAT(refused.error().message, Catch::Contains("allow-list"));
    }
    SECTION("a redirect to a host off the allow-list") {
        http_client client(w.settings());
        auto refused = client.fetch(fetch_request{w.fake->download("offsite.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(refused);
        CHECK(refused.error().kind == error_kind::invalid);
        CHECK_THAT(refused.error().message, Catch::Contains("evil.example") && Catch::Contains("allow-list"));
    }
    SECTION("GitHub's storage host when only the API host is allowed") {
        auto settings = w.settings();
        settings.policy.allowed_hosts = {"127.0.0.1"};
        http_client client(settings);
        auto refused = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("'localhost'"));
    }
    SECTION("loopback addresses unless private addresses are allowed") {
        auto settings = w.settings();
        settings.policy.allow_private_addresses = false;
        http_client client(settings);
        auto refused = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(refused);
        CHECK(refused.error().kind == error_kind::invalid);
        CHECK_THAT(refused.error().message, Catch::Contains("refusing to connect to 127.0.0.1") &&
                                                Catch::Contains("loopback"));
    }
    SECTION("plain http unless allowed") {
        http_client client(w.settings());
        std::string plain = w.fake->github;
        plain.replace(0, 5, "http");
        auto refused = client.fetch(fetch_request{plain + "/o/r", {}, 1u << 20, true, {}});
        REQUIRE_FALSE(refused);
        CHECK_THAT(refused.error().message, Catch::Contains("only https://"));
    }
}

TEST_CASE("remote client: upstream faults are precise errors", "[remote][network]") {
    auto& w = shared_world();
    SECTION("a redirect loop") {
        http_client client(w.settings());
        auto failed = client.fetch(fetch_request{w.fake->download("loop.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::upstream);
        CHECK_THAT(failed.error().message, Catch::Contains("redirect loop"));
    }
    SECTION("more redirects than allowed") {
        auto settings = w.settings();
        settings.max_redirects = 0;
        http_client client(settings);
        auto failed = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::upstream);
        CHECK_THAT(failed.error().message, Catch::Contains("more than 0 redirects"));
    }
    SECTION("a Content-Length the upstream does not honour") {
        http_client client(w.settings());
        auto failed = client.fetch(fetch_request{w.fake->download("lie.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::upstream);
        CHECK_THAT(failed.error().message, Catch::Contains("closed the connection after 5000 of the 9000 bytes"));
        std::string streamed;
        auto streamed_failed = client.fetch_to(fetch_request{w.fake->download("lie.whl"), {}, 0, true, {}},
                                               [&](std::span<const char> chunk) -> result<void> {
                                                   streamed.append(chunk.data(), chunk.size());
                                                   return {};
                                               });
        REQUIRE_FALSE(streamed_failed);
        CHECK(streamed == w.small);
    }
    SECTION("a stall past the read deadline") {
        auto settings = w.settings();
        settings.read_timeout = std::chrono::seconds(1);
        http_client client(settings);
        const auto start = std::chrono::steady_clock::now();
        auto failed = client.fetch(fetch_request{w.fake->download("stall.whl"), {}, 1u << 20, true, {}});
        const auto took = std::chrono::steady_clock::now() - start;
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::timeout);
        CHECK_THAT(failed.error().message, Catch::Contains("timed out after 1s reading the body from localhost") && Catch::Contains("remote-read-timeout"));
        CHECK(took < std::chrono::seconds(8));
    }
    SECTION("a slow upstream past the total deadline") {
        auto settings = w.settings();
        settings.total_timeout = std::chrono::seconds(1);
        http_client client(settings);
        auto failed = client.fetch(fetch_request{w.fake->download("slow.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::timeout);
        CHECK_THAT(failed.error().message, Catch::Contains("total deadline of 1s"));
    }
    SECTION("a streamed body has no total deadline: it goes at its reader's pace") {
        auto settings = w.settings();
        settings.total_timeout = std::chrono::seconds(1);
        http_client client(settings);
        // 5000 bytes at 2500 a second: about 2 s, past the total deadline of a bounded fetch.
        REQUIRE_FALSE(client.fetch(fetch_request{w.fake->download("slow_small.whl"), {}, 1u << 20, true, {}}));
        std::string streamed;
        const auto start = std::chrono::steady_clock::now();
        auto fetched = client.fetch_to(fetch_request{w.fake->download("slow_small.whl"), {}, 0, true, {}},
                                       [&](std::span<const char> chunk) -> result<void> {
                                           streamed.append(chunk.data(), chunk.size());
                                           return {};
                                       });
        REQUIRE(fetched);
        CHECK(std::chrono::steady_clock::now() - start > std::chrono::seconds(1));
        CHECK(streamed == w.small);
    }
    SECTION("a body past max_body") {
        http_client client(w.settings());
        auto failed = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1000, true, {}});
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::too_large);
    }
    SECTION("a certificate from a CA we do not trust") {
        auto settings = w.settings();
        settings.ca_bundle.clear();  // the system's store: the fake's CA is not in it
        http_client client(settings);
        auto failed = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(failed);
        CHECK(failed.error().kind == error_kind::upstream);
        CHECK_THAT(failed.error().message, Catch::Contains("TLS with 127.0.0.1") &&
                                               Catch::Contains("certificate verify failed"));
    }
    SECTION("a CA bundle that is no PEM file") {
        auto settings = w.settings();
        settings.ca_bundle = (w.dir / "good.whl").string();
        http_client client(settings);
        auto failed = client.fetch(fetch_request{w.fake->download("good.whl"), {}, 1u << 20, true, {}});
        REQUIRE_FALSE(failed);
        CHECK_THAT(failed.error().message, Catch::Contains("CA bundle"));
    }
}

// A figure, not a check: `server_tests "[.bench]"` prints the client's streaming throughput
// from the fake's storage host (the fake itself serves curl at about 350 MB/s here).
TEST_CASE("remote client: streaming throughput of a 256 MiB asset", "[.bench][remote]") {
    testing::temp_dir dir;
    {
        std::ofstream big(dir / "big.whl", std::ios::binary);
        const std::string block = random_bytes(1 << 20, 3);
        for (int i = 0; i < 256; ++i) big << block;
    }
    std::ofstream(dir / "setup.json") << "{\"releases\": [{\"owner\": \"o\", \"repo\": \"r\", \"tag\": \"v1\", "
                                         "\"assets\": [{\"name\": \"big.whl\", \"path\": \""
                                      << (dir / "big.whl").string() << "\"}]}]}";
    fake_github fake(dir / "setup.json", dir / "certs");
    client_settings settings;
    settings.policy.allowed_hosts = {"127.0.0.1", "localhost"};
    settings.policy.allow_private_addresses = true;
    settings.ca_bundle = fake.ca;
    http_client client(settings);
    std::uint64_t total = 0;
    const auto start = std::chrono::steady_clock::now();
    auto fetched = client.fetch_to(fetch_request{fake.download("big.whl"), {}, 0, true, {}},
                                   [&](std::span<const char> chunk) -> result<void> {
                                       total += chunk.size();
                                       return {};
                                   });
    const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
    REQUIRE(fetched);
    CHECK(total == 256ull << 20);
    std::printf("remote client: %llu bytes in %.3f s, %.1f MB/s\n", static_cast<unsigned long long>(total),
                took.count(), static_cast<double>(total) / took.count() / 1e6);
}

TEST_CASE("remote client: a cancelled fetch ends at once, even while the host is silent", "[remote][network]") {
    auto& w = shared_world();
    auto settings = w.settings();
    settings.read_timeout = std::chrono::seconds(30);  // far past the test: only the cancel ends it
    http_client client(settings);
    auto cancellation = std::make_shared<remote::fetch_cancellation>();
    const fetch_request request{w.fake->download("stall.whl"), {}, 0, true, cancellation};
    std::thread canceller;
    std::size_t received = 0;
    const auto started = std::chrono::steady_clock::now();
    auto stopped = client.fetch_to(request, [&](std::span<const char> chunk) -> result<void> {
        if (received == 0) {  // the first bytes came; the host now goes quiet for 20 s
            canceller = std::thread([cancellation] {
                std::this_thread::sleep_for(std::chrono::milliseconds(300));
                cancellation->cancel();
            });
        }
        received += chunk.size();
        return {};
    });
    canceller.join();
    REQUIRE_FALSE(stopped);
    CHECK(stopped.error().kind == error_kind::upstream);
    CHECK_THAT(stopped.error().message, Catch::Contains("was cancelled"));
    CHECK(received == 1000);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));

    // A fetch cancelled before it starts never connects.
    auto again = client.fetch_to(request, [](std::span<const char>) -> result<void> { return {}; });
    REQUIRE_FALSE(again);
    CHECK_THAT(again.error().message, Catch::Contains("was cancelled"));
}
