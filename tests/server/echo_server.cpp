#include "echo_server.hpp"

#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "wheelhouse/transport/responses.hpp"

namespace wheelhouse::testing {
namespace {

using namespace wheelhouse::transport;

class counting_sink : public body_sink {
public:
    explicit counting_sink(bool throws) : throws_(throws) {}
    result<void> write(std::span<const char> bytes) override {
        if (throws_) throw std::runtime_error("the sink threw, as the test asked");
        bytes_ += bytes.size();
        return {};
    }
    result<void> finish() override { return {}; }
    std::uint64_t bytes() const { return bytes_; }

private:
    bool throws_;
    std::uint64_t bytes_ = 0;
};

class echo_handler : public request_handler {
public:
    body_plan plan_body(const http::request_header<>& header) override {
        const auto target = header.target();
        if (target == "/throw/plan") throw std::runtime_error("plan_body threw, as the test asked");
        if (target == "/block") std::this_thread::sleep_for(std::chrono::milliseconds(500));
        if (target == "/hold") std::this_thread::sleep_for(std::chrono::milliseconds(3000));
        body_plan plan;
        plan.limit = 1 << 20;
        if (target == "/stream" || target == "/throw/sink") {
            plan.how = body_plan::kind::stream;
            plan.sink = std::make_shared<counting_sink>(target == "/throw/sink");
        } else {
            plan.how = body_plan::kind::in_memory;
        }
        return plan;
    }

    void handle(incoming_request request, responder respond) override {
        if (request.header.target() == "/throw/handle") throw std::runtime_error("handle threw, as the test asked");
        if (request.header.target() == "/file") return respond(file_answer(request.header));
        std::string names;
        for (const auto& field : request.header) names += (names.empty() ? "" : ",") + std::string(field.name_string());
        const auto bytes = request.sink ? static_cast<counting_sink&>(*request.sink).bytes() : request.body.size();
        respond(make_text_response(request.header, http::status::ok,
                                   "fields: " + names + "\nbody: " + std::to_string(bytes)));
    }

    ~echo_handler() override {
        std::error_code ignored;
        if (!path_.empty()) std::filesystem::remove(path_, ignored);
    }

    static constexpr std::uint64_t file_bytes = 4 << 20;

private:

    outgoing_response file_answer(const http::request_header<>& request) {
        auto file = std::make_shared<storage::descriptor>(::open(file_path().c_str(), O_RDONLY | O_CLOEXEC));
        REQUIRE(file->get() >= 0);
        http::response<http::empty_body> head(http::status::ok, request.version());
        head.set(http::field::content_type, "application/octet-stream");
        head.keep_alive(wants_keep_alive(request));
        return make_file_response(std::move(head), file_span{std::move(file), 0, file_bytes});
    }

    // Written once, on first use, beside the test binary's other temporary files.
    const std::string& file_path() {
        std::call_once(written_, [this] {
            path_ = (std::filesystem::temp_directory_path() / ("echo-server-file-" + std::to_string(::getpid())))
                        .string();
            std::string bytes(file_bytes, '\0');
            for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<char>(i % 251);
            std::ofstream(path_, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        });
        return path_;
    }

    std::once_flag written_;
    std::string path_;
};

}  // namespace

echo_server::echo_server(transport::session_limits limits, unsigned threads,
                         std::shared_ptr<const transport::tls_certificate> tls)
    : handler_(std::make_unique<echo_handler>()) {
    transport::server_options options;
    options.tls = std::move(tls);
    options.port = 0;
    options.threads = threads;
    options.limits = limits;
    options.access_log = "off";
    server_ = std::make_unique<transport::server>(options, *handler_);
    REQUIRE(server_->open());
    port_ = server_->local_endpoint().port();
    server_->start();
}

echo_server::~echo_server() {
    server_->drain(std::chrono::milliseconds(2000));
    server_->wait();
}

}  // namespace wheelhouse::testing
