// The access log: one whole line a request, none dropped under load or a slow destination,
// lost lines counted, the tail written on drain.

#include <catch2/catch.hpp>

#include <atomic>
#include <csignal>
#include <ctime>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_server.hpp"
#include "wheelhouse/metrics/server_metrics.hpp"
#include "wheelhouse/transport/access_log.hpp"

namespace wheelhouse::testing {
namespace {

using namespace std::chrono_literals;

// `2026-11-24T23:47:36.123456Z 127.0.0.1 "GET /simple/" 200 1234 56us`, as the README documents it.
struct access_line {
    std::chrono::system_clock::time_point time;
    std::string peer, method, target;
    unsigned status = 0;
    std::uint64_t bytes = 0;
    std::int64_t microseconds = 0;
};

bool digits_at(std::string_view text, std::size_t from, std::size_t count) {
    if (text.size() < from + count) return false;
    for (std::size_t i = from; i < from + count; ++i)
        if (text[i] < '0' || text[i] > '9') return false;
    return true;
}

int number_at(std::string_view text, std::size_t from, std::size_t count) {
    return std::stoi(std::string(text.substr(from, count)));
}

// The line's fields, or nothing when it is not exactly one well-formed line.
std::optional<access_line> parse_line(std::string_view line) {
    constexpr std::string_view shape = "0000-00-00T00:00:00.000000Z ";
    if (line.size() <= shape.size()) return std::nullopt;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        if (shape[i] == '0' ? !digits_at(line, i, 1) : line[i] != shape[i]) return std::nullopt;
    }
    std::tm utc{};
    utc.tm_year = number_at(line, 0, 4) - 1900;
    utc.tm_mon = number_at(line, 5, 2) - 1;
    utc.tm_mday = number_at(line, 8, 2);
    utc.tm_hour = number_at(line, 11, 2);
    utc.tm_min = number_at(line, 14, 2);
    utc.tm_sec = number_at(line, 17, 2);
    access_line parsed;
    parsed.time = std::chrono::system_clock::from_time_t(::timegm(&utc)) + std::chrono::microseconds(number_at(line, 20, 6));

    std::istringstream rest{std::string(line.substr(shape.size()))};
    std::string quoted_method, quoted_target, elapsed, extra;
    if (!(rest >> parsed.peer >> quoted_method >> quoted_target >> parsed.status >> parsed.bytes >> elapsed) ||
        (rest >> extra))
        return std::nullopt;
    if (quoted_method.size() < 2 || quoted_method.front() != '"' || quoted_target.size() < 2 ||
        quoted_target.back() != '"' || elapsed.size() < 3 || !elapsed.ends_with("us") ||
        !digits_at(elapsed, 0, elapsed.size() - 2))
        return std::nullopt;
    parsed.method = quoted_method.substr(1);
    parsed.target = quoted_target.substr(0, quoted_target.size() - 1);
    parsed.microseconds = std::stoll(elapsed.substr(0, elapsed.size() - 2));
    return parsed;
}

std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    while (start < text.size()) {
        const auto end = text.find('\n', start);
        if (end == std::string::npos) {
            lines.push_back(text.substr(start));  // a last line without its end
            break;
        }
        lines.push_back(text.substr(start, end - start));
        start = end + 1;
    }
    return lines;
}

// Sends `count` GETs of `target_of(i)` on one kept-alive connection.
template <class Target>
void keep_alive_gets(unsigned short port, int count, Target target_of) {
    namespace net = boost::asio;
    net::io_context context;
    net::ip::tcp::socket socket(context);
    socket.connect({net::ip::make_address("127.0.0.1"), port});
    boost::beast::flat_buffer buffer;
    for (int i = 0; i < count; ++i) {
        http::request<http::empty_body> request{http::verb::get, target_of(i), 11};
        request.set(http::field::host, "127.0.0.1");
        http::write(socket, request);
        http::response<http::string_body> response;
        http::read(socket, buffer, response);
    }
}

}  // namespace

TEST_CASE("server: under concurrent load each request is one whole access-log line, all of them written by the drain",
          "[server][access-log]") {
    temp_dir logs;
    const auto log_path = logs.path() / "access.log";
    server_settings settings;
    settings.access_log = log_path.string();
    auto server = std::make_unique<test_server>(settings);

    constexpr int clients = 8;
    constexpr int requests_each = 400;
    const auto target_of = [](int client, int i) {
        // Page hits (written from prepared bytes), 404s and /healthz take different paths out.
        switch (i % 3) {
            case 0: return std::string("/healthz");
            case 1: return "/simple/missing-" + std::to_string(client) + "-" + std::to_string(i) + "/";
            default: return std::string("/simple/");
        }
    };
    std::vector<std::thread> threads;
    for (int client = 0; client < clients; ++client)
        threads.emplace_back([&, client] {
            keep_alive_gets(server->port(), requests_each, [&](int i) { return target_of(client, i); });
        });
    for (auto& thread : threads) thread.join();
    server->drain(5000ms);
    server->wait();  // well within the writer's one-second round: the tail is written by the drain

    const auto lines = split_lines(read_file(log_path));
    REQUIRE(lines.size() == static_cast<std::size_t>(clients * requests_each));
    std::multiset<std::string> expected, seen;
    for (int client = 0; client < clients; ++client)
        for (int i = 0; i < requests_each; ++i) expected.insert(target_of(client, i));
    for (const auto& line : lines) {
        const auto parsed = parse_line(line);
        INFO(line);
        REQUIRE(parsed);
        CHECK(parsed->peer == "127.0.0.1");
        CHECK(parsed->method == "GET");
        CHECK(parsed->status == (parsed->target.starts_with("/simple/missing-") ? 404u : 200u));
        seen.insert(parsed->target);
    }
    CHECK(seen == expected);
}

TEST_CASE("access log: a destination slower than the traffic makes recording wait, and loses no line",
          "[server][access-log]") {
    temp_dir folder;
    const auto fifo = folder.path() / "slow-reader";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    metrics::server_metrics metrics;
    constexpr int threads = 4;
    // About 15 MB of lines: more than the writer's queue and the pipe together hold.
    constexpr int lines_each = 50'000;
    std::atomic<bool> recorded_all{false};
    std::string received;
    int read_error = 0;  // Catch2's assertions belong to the test's own thread
    std::thread reader([&] {
        storage::descriptor pipe{::open(fifo.c_str(), O_RDONLY | O_CLOEXEC)};  // waits for the log to open it
        if (!pipe) {
            read_error = errno;
            return;
        }
        // Read nothing until recording has had to wait, or has finished (as a log that drops lines would).
        while (metrics.access_log_waits() == 0 && !recorded_all) std::this_thread::sleep_for(1ms);
        std::array<char, 65536> chunk{};
        // Until the log closes the pipe; a log that never does is given up on after 30 s of silence.
        for (pollfd readable{pipe.get(), POLLIN, 0}; ::poll(&readable, 1, 30'000) > 0;) {
            const auto got = ::read(pipe.get(), chunk.data(), chunk.size());
            if (got == 0) break;
            if (got < 0 && errno == EINTR) continue;
            if (got < 0) {
                read_error = errno;
                return;
            }
            received.append(chunk.data(), static_cast<std::size_t>(got));
        }
    });
    {
        transport::access_log log(fifo.string(), &metrics);
        REQUIRE(log.ready());
        std::vector<std::thread> recorders;
        for (int t = 0; t < threads; ++t)
            recorders.emplace_back([&log, t] {
                for (int i = 0; i < lines_each; ++i)
                    log.record("127.0.0.1", "GET", "/t/" + std::to_string(t) + "/" + std::to_string(i),
                               metrics::route::other, 200, 1234, 56us);
            });
        for (auto& recorder : recorders) recorder.join();
        recorded_all = true;
        log.flush();
    }  // the log closes the pipe: the reader sees its end
    reader.join();

    REQUIRE(read_error == 0);
    const auto lines = split_lines(received);
    CHECK(lines.size() == static_cast<std::size_t>(threads * lines_each));
    CHECK(metrics.access_log_waits() > 0);
    CHECK(metrics.access_log_lines_lost() == 0);
    std::vector<int> next(threads, 0);  // each thread's lines arrive whole and in its own order
    for (const auto& line : lines) {
        const auto parsed = parse_line(line);
        INFO(line);
        REQUIRE(parsed);
        const auto slash = parsed->target.rfind('/');
        const auto thread = std::stoi(parsed->target.substr(3, slash - 3));
        REQUIRE(std::stoi(parsed->target.substr(slash + 1)) == next.at(thread));
        ++next.at(thread);
    }
}

TEST_CASE("access log: lines that cannot be written are counted as lost", "[server][access-log]") {
    metrics::server_metrics metrics;
    {
        transport::access_log log("/dev/full", &metrics);  // every write fails with ENOSPC
        REQUIRE(log.ready());
        for (int i = 0; i < 1000; ++i) log.record("127.0.0.1", "GET", "/simple/", metrics::route::other, 200, 10, 5us);
        log.flush();
        CHECK(metrics.access_log_lines_lost() == 1000);
        log.record("127.0.0.1", "GET", "/simple/", metrics::route::other, 200, 10, 5us);
    }  // and the last line, written when the log closes
    CHECK(metrics.access_log_lines_lost() == 1001);
}

TEST_CASE("access log: a write that stops part-way loses whole lines only, and the next write starts a line",
          "[server][access-log]") {
    temp_dir folder;
    const auto path = folder.path() / "access.log";
    metrics::server_metrics metrics;
    constexpr int before = 3000;
    constexpr int after = 10;
    // A file-size limit makes a block's write stop part-way through a line, then fail (EFBIG).
    rlimit unlimited{};
    REQUIRE(::getrlimit(RLIMIT_FSIZE, &unlimited) == 0);
    const auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
    {
        transport::access_log log(path.string(), &metrics);
        rlimit capped = unlimited;
        capped.rlim_cur = 100'000;
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &capped) == 0);
        for (int i = 0; i < before; ++i)
            log.record("127.0.0.1", "GET", "/before/" + std::to_string(i), metrics::route::other, 200, 1, 1us);
        log.flush();
        REQUIRE(::setrlimit(RLIMIT_FSIZE, &unlimited) == 0);
        for (int i = 0; i < after; ++i)
            log.record("127.0.0.1", "GET", "/after/" + std::to_string(i), metrics::route::other, 200, 1, 1us);
    }
    std::signal(SIGXFSZ, previous_handler);

    const auto lines = split_lines(read_file(path));
    std::vector<std::string> whole, torn;
    for (const auto& line : lines) (parse_line(line) ? whole : torn).push_back(line);
    CHECK(torn.size() == 1);  // the line the limit cut, ended before the next block
    CHECK(metrics.access_log_lines_lost() > 0);
    CHECK(whole.size() + metrics.access_log_lines_lost() == static_cast<std::size_t>(before + after));
    REQUIRE(whole.size() >= static_cast<std::size_t>(after));
    for (int i = 0; i < after; ++i)
        CHECK(parse_line(whole[whole.size() - after + static_cast<std::size_t>(i)])->target ==
              "/after/" + std::to_string(i));
}

TEST_CASE("access log: a destination that cannot be opened is refused with the fix first", "[server][access-log]") {
    temp_dir folder;
    write_file(folder.path() / "a-file", "not a folder");
    transport::access_log log((folder.path() / "a-file" / "access.log").string());
    const auto ready = log.ready();
    REQUIRE_FALSE(ready);
    CHECK(ready.error().message.starts_with("give --access-log a file"));
    CHECK(ready.error().message.find("Not a directory") != std::string::npos);
    log.record("127.0.0.1", "GET", "/", metrics::route::other, 200, 1, 1us);  // records nothing, and does not wait
    log.flush();
}

TEST_CASE("access log: a line's time stamp is the UTC time it was recorded, to the microsecond",
          "[server][access-log]") {
    temp_dir folder;
    const auto path = folder.path() / "access.log";
    std::vector<std::pair<std::chrono::system_clock::time_point, std::chrono::system_clock::time_point>> windows;
    {
        transport::access_log log(path.string());
        for (int i = 0; i < 200; ++i) {
            const auto start = std::chrono::floor<std::chrono::microseconds>(std::chrono::system_clock::now());
            log.record("::1", "HEAD", "/files/x", metrics::route::other, 304, 0, 7us);
            windows.emplace_back(start, std::chrono::system_clock::now());
            if (i % 50 == 0) std::this_thread::sleep_for(3ms);  // some lines in other milliseconds
        }
    }
    const auto lines = split_lines(read_file(path));
    REQUIRE(lines.size() == windows.size());
    for (std::size_t i = 0; i < lines.size(); ++i) {
        const auto parsed = parse_line(lines[i]);
        INFO(lines[i]);
        REQUIRE(parsed);
        CHECK(parsed->time >= windows[i].first);
        CHECK(parsed->time <= windows[i].second);
        CHECK(parsed->peer == "::1");
        CHECK(parsed->status == 304);
        CHECK(parsed->microseconds == 7);
    }
}

}  // namespace wheelhouse::testing
