#include "wheelhouse/transport/access_log.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <system_error>
#include <utility>

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <spdlog/spdlog.h>

#include "wheelhouse/metrics/server_metrics.hpp"

namespace wheelhouse::transport {
namespace {

std::atomic<std::uint64_t> next_log_id{1};

std::string describe(int error_number) { return std::system_category().message(error_number); }

result<storage::descriptor> open_destination(const std::string& destination) {
    const auto refused = [&](const std::string& what) {
        return make_error(error_kind::internal, "give --access-log a file this user may append to, '-' for standard "
                                                "output or 'off': cannot open " + what + " (" + describe(errno) + ")");
    };
    if (destination == "-") {
        // Its own descriptor, so the log's writes do not depend on who else closes or reopens 1.
        storage::descriptor out{::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0)};
        if (!out) return refused("standard output");
        return out;
    }
    const std::filesystem::path path(destination);
    std::error_code ignored;  // a folder that cannot be made shows in open()'s error
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ignored);
    // O_APPEND: every block lands at the end, also after logrotate's copytruncate.
    storage::descriptor file{::open(destination.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666)};
    if (!file) return refused(destination);
    return file;
}

// All of `bytes`, waiting out EINTR and a non-blocking pipe; how many went, and errno if not all.
std::pair<std::size_t, int> write_fully(int fd, std::string_view bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
        const auto wrote = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (wrote > 0) {
            done += static_cast<std::size_t>(wrote);
        } else if (wrote < 0 && errno == EINTR) {
            continue;
        } else if (wrote < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            pollfd writable{fd, POLLOUT, 0};
            ::poll(&writable, 1, -1);
        } else {
            return {done, wrote == 0 ? EIO : errno};
        }
    }
    return {done, 0};
}

template <class Integer>
void append_number(std::string& out, Integer value) {
    std::array<char, 24> digits{};
    const auto end = std::to_chars(digits.data(), digits.data() + digits.size(), value).ptr;
    out.append(digits.data(), end);
}

// `value` in exactly `width` digits at `at`, zero-padded (the time stamp's fields).
void put_digits(char* at, std::size_t width, std::int64_t value) {
    for (std::size_t i = width; i-- > 0; value /= 10) at[i] = static_cast<char>('0' + value % 10);
}

// "YYYY-MM-DDTHH:MM:SS." of a second since the epoch, in UTC.
void spell_second(std::int64_t second, std::array<char, 20>& stamp) {
    const auto seconds = static_cast<std::time_t>(second);
    std::tm utc{};
    ::gmtime_r(&seconds, &utc);
    constexpr std::string_view shape = "0000-00-00T00:00:00.";
    std::copy(shape.begin(), shape.end(), stamp.begin());
    put_digits(&stamp[0], 4, utc.tm_year + 1900);
    put_digits(&stamp[5], 2, utc.tm_mon + 1);
    put_digits(&stamp[8], 2, utc.tm_mday);
    put_digits(&stamp[11], 2, utc.tm_hour);
    put_digits(&stamp[14], 2, utc.tm_min);
    put_digits(&stamp[17], 2, utc.tm_sec);
}

}  // namespace

access_log::access_log(const std::string& destination, metrics::server_metrics* metrics)
    : id_(next_log_id.fetch_add(1)),
      destination_(destination == "-" ? "standard output" : destination),
      metrics_(metrics) {
    if (destination == "off") return;
    auto opened = open_destination(destination);
    if (!opened) {
        failure_ = opened.error();
        return;
    }
    file_ = std::move(opened).value();
    writer_ = std::thread([this] { run_writer(); });
}

access_log::~access_log() {
    if (!writer_.joinable()) return;
    {
        std::lock_guard lock(queue_mutex_);
        stopping_ = true;
    }
    wake_writer_.notify_one();
    writer_.join();  // the writer's last round writes every block
}

result<void> access_log::ready() const {
    if (failure_) return *failure_;
    return {};
}

void access_log::record(std::string_view peer, std::string_view method, std::string_view target,
                        metrics::route route, unsigned status, std::uint64_t bytes,
                        std::chrono::microseconds elapsed) {
    if (metrics_) metrics_->record_request(route, status, bytes, elapsed);
    if (!file_) return;
    auto& buffer = buffer_of_this_thread();
    {
        std::lock_guard lock(buffer.mutex);  // taken by the writer only once a second
        append_line(buffer, peer, method, target, status, bytes, elapsed);
        if (buffer.pending.bytes.size() < block_bytes) return;
        queue(std::exchange(buffer.pending, {}));
    }
    wait_for_room();
}

void access_log::flush() {
    if (!writer_.joinable()) return;
    std::unique_lock lock(queue_mutex_);
    const auto ticket = ++flushes_asked_;
    wake_writer_.notify_one();
    written_.wait(lock, [&] { return flushes_done_ >= ticket; });
}

access_log::thread_buffer& access_log::buffer_of_this_thread() {
    struct cached {
        std::uint64_t log = 0;
        thread_buffer* buffer = nullptr;
    };
    thread_local cached last;
    if (last.log == id_) return *last.buffer;
    std::lock_guard lock(buffers_mutex_);
    auto& slot = buffers_[std::this_thread::get_id()];
    if (!slot) slot = std::make_unique<thread_buffer>();
    last = {id_, slot.get()};
    return *slot;
}

void access_log::append_line(thread_buffer& buffer, std::string_view peer, std::string_view method,
                             std::string_view target, unsigned status, std::uint64_t bytes,
                             std::chrono::microseconds elapsed) {
    using namespace std::chrono;
    const auto now = duration_cast<microseconds>(system_clock::now().time_since_epoch()).count();
    const auto second = now / 1'000'000;
    if (second != buffer.stamped_second) {  // once a second per thread, not once a line
        spell_second(second, buffer.stamp);
        buffer.stamped_second = second;
    }
    auto& out = buffer.pending.bytes;
    if (out.empty()) out.reserve(block_bytes + 1024);
    out.append(buffer.stamp.data(), buffer.stamp.size());
    std::array<char, 8> fraction{};  // "123456Z ": the stamp ends with the point
    put_digits(fraction.data(), 6, now % 1'000'000);
    fraction[6] = 'Z';
    fraction[7] = ' ';
    out.append(fraction.data(), fraction.size());
    out.append(peer).append(" \"").append(method).append(" ").append(target).append("\" ");
    append_number(out, status);
    out += ' ';
    append_number(out, bytes);
    out += ' ';
    append_number(out, elapsed.count());
    out.append("us\n");
    ++buffer.pending.lines;
}

void access_log::queue(block&& full) {
    std::lock_guard lock(queue_mutex_);
    queued_bytes_ += full.bytes.size();
    queued_.push_back(std::move(full));
    wake_writer_.notify_one();
}

void access_log::wait_for_room() {
    std::unique_lock lock(queue_mutex_);
    if (queued_bytes_ < queued_limit) return;
    // Back-pressure: this thread's connections wait for the disk rather than lose their lines.
    if (metrics_) metrics_->record_access_log_wait();
    written_.wait(lock, [this] { return queued_bytes_ < queued_limit; });
}

void access_log::run_writer() {
    using clock = std::chrono::steady_clock;
    auto next_sweep = clock::now() + flush_interval;
    std::unique_lock lock(queue_mutex_);
    for (;;) {
        wake_writer_.wait_until(lock, next_sweep, [this] {
            return !queued_.empty() || flushes_asked_ != flushes_done_ || stopping_;
        });
        const auto now = clock::now();
        const bool last_round = stopping_;
        const bool sweep = now >= next_sweep || flushes_asked_ != flushes_done_ || last_round;
        const auto answering = flushes_asked_;
        if (sweep) {
            lock.unlock();
            queue_partial_blocks();
            lock.lock();
            next_sweep = now + flush_interval;
        }
        auto taken = std::exchange(queued_, {});
        lock.unlock();
        std::size_t bytes = 0;
        for (const auto& lines : taken) {
            write_out(lines);
            bytes += lines.bytes.size();
        }
        taken.clear();  // frees the blocks outside the lock
        lock.lock();
        queued_bytes_ -= bytes;  // only now: the bound is on memory held, written or not
        if (sweep) flushes_done_ = answering;
        written_.notify_all();
        if (last_round) return;
    }
}

void access_log::queue_partial_blocks() {
    std::lock_guard all(buffers_mutex_);
    for (auto& [thread, buffer] : buffers_) {
        std::lock_guard lock(buffer->mutex);
        if (buffer->pending.lines > 0) queue(std::exchange(buffer->pending, {}));
    }
}

void access_log::write_out(const block& lines) {
    // A write that failed part-way left a line without its end: end it, so this block's first
    // line starts a line of its own.
    if (torn_line_) {
        if (const auto [_, failure] = write_fully(file_.get(), "\n"); failure != 0) return note_lost(lines.lines, failure);
        torn_line_ = false;
    }
    const auto [written, failure] = write_fully(file_.get(), lines.bytes);
    if (failure == 0) {
        if (lost_in_a_row_ > 0)
            spdlog::warn("access log: writing to {} again; {} lines were lost", destination_, lost_in_a_row_);
        lost_in_a_row_ = 0;
        return;
    }
    const auto sent = std::string_view(lines.bytes).substr(0, written);
    const auto whole_lines = static_cast<std::size_t>(std::count(sent.begin(), sent.end(), '\n'));
    torn_line_ = !sent.empty() && sent.back() != '\n';
    note_lost(lines.lines - whole_lines, failure);
}

void access_log::note_lost(std::size_t lines, int error_number) {
    if (metrics_) metrics_->record_access_log_lost(lines);
    if (lost_in_a_row_ == 0)
        spdlog::error("access log: cannot write to {} ({}); its lines are lost, and counted in "
                      "wheelhouse_access_log_lines_lost_total, until it can",
                      destination_, describe(error_number));
    lost_in_a_row_ += lines;
}

}  // namespace wheelhouse::transport
