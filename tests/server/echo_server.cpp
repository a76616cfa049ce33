#include "echo_server.hpp"

#include <catch2/catch.hpp>

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
        std::string names;
        for (const auto& field : request.header) names += (names.empty() ? "" : ",") + std::string(field.name_string());
        const auto bytes = request.sink ? static_cast<counting_sink&>(*request.sink).bytes() : request.body.size();
        respond(make_text_response(request.header, http::status::ok,
                                   "fields: " + names + "\nbody: " + std::to_string(bytes)));
    }
};

}  // namespace

echo_server::echo_server(transport::session_limits limits, unsigned threads)
    : handler_(std::make_unique<echo_handler>()) {
    transport::server_options options;
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
