// multipart/form-data (upload/multipart_parser). The input is three things: a line of chunk
// sizes (each byte one size, 1-64, used in turn), a line with the Content-Type value, and the
// body. Beside memory safety:
// - chunked feeding equals one feed: the same parts, bytes, outcome and error message whether
//   the body comes whole, in the chunks the input chose, or one byte at a time;
// - a body the parser completes told the sink end_body() once, after every part ended;
// - the upload form's collector, fed the same body, counts the content bytes it wrote.

#include <algorithm>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "wheelhouse/upload/multipart_parser.hpp"

namespace {

namespace upload = wheelhouse::upload;
using wheelhouse::result;

// Every call the parser makes, with adjacent data merged (chunking may split it anywhere).
class recording_sink final : public upload::part_sink {
public:
    result<void> begin_part(const upload::part_header& header) override {
        events.push_back("begin " + header.name + "|" + header.filename.value_or("<none>") + "|" + header.content_type);
        open = true;
        return {};
    }
    result<void> part_data(std::span<const char> bytes) override {
        if (!open) wheelhouse::fuzz::property_failed("part_data outside a part", "");
        if (events.empty() || !events.back().starts_with("data ")) events.emplace_back("data ");
        events.back().append(bytes.data(), bytes.size());
        return {};
    }
    result<void> end_part() override {
        events.emplace_back("end");
        open = false;
        return {};
    }
    result<void> end_body() override {
        if (open) wheelhouse::fuzz::property_failed("end_body inside a part", "");
        events.emplace_back("end body");
        return {};
    }
    std::vector<std::string> events;
    bool open = false;
};

struct outcome {
    std::vector<std::string> events;
    bool complete = false;
    std::string error;  // empty on success
};

outcome parse_in_chunks(const std::string& boundary, std::string_view body, std::string_view sizes) {
    recording_sink sink;
    upload::multipart_parser parser(boundary, sink, upload::multipart_limits{256});
    outcome out;
    std::size_t turn = 0;
    while (!body.empty()) {
        std::size_t size = body.size();
        if (!sizes.empty()) size = static_cast<unsigned char>(sizes[turn++ % sizes.size()]) % 64 + 1;
        size = std::min(size, body.size());
        if (auto fed = parser.feed(body.substr(0, size)); !fed) {
            out.error = fed.error().message;
            break;
        }
        body.remove_prefix(size);
    }
    if (out.error.empty()) {
        if (auto finished = parser.finish(); !finished) out.error = finished.error().message;
    }
    out.complete = parser.complete();
    out.events = std::move(sink.events);
    return out;
}

std::string describe(const outcome& o) {
    std::string out = o.error.empty() ? "ok" : "error: " + o.error;
    for (const auto& event : o.events) out += "\n  " + event;
    return out;
}

void check_same(const outcome& whole, const outcome& chunked, const char* how) {
    WHEELHOUSE_FUZZ_CHECK(whole.events == chunked.events && whole.error == chunked.error &&
                              whole.complete == chunked.complete,
                          std::string("fed whole: ") + describe(whole) + "\nfed " + how + ": " + describe(chunked));
}

void check_form(const std::string& boundary, std::string_view body) {
    std::uint64_t written = 0;
    upload::form_collector form(
        [&](std::span<const char> bytes) -> result<void> {
            written += bytes.size();
            return {};
        },
        upload::form_limits{512, 4096, {"description"}});
    upload::multipart_parser parser(boundary, form);
    if (!parser.feed(body) || !parser.finish()) return;
    WHEELHOUSE_FUZZ_CHECK(form.has_content() && form.content_size() == written, std::string(body));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    const auto first = text.find('\n');
    if (first == std::string_view::npos) return 0;
    const auto second = text.find('\n', first + 1);
    if (second == std::string_view::npos) return 0;
    const std::string_view sizes = text.substr(0, first);
    auto boundary = upload::boundary_from_content_type(text.substr(first + 1, second - first - 1));
    if (!boundary) return 0;
    const std::string_view body = text.substr(second + 1);

    const outcome whole = parse_in_chunks(*boundary, body, {});
    if (whole.complete) {
        WHEELHOUSE_FUZZ_CHECK(whole.error.empty() && !whole.events.empty() && whole.events.back() == "end body",
                              describe(whole));
    }
    check_same(whole, parse_in_chunks(*boundary, body, sizes), "in the input's chunks");
    check_same(whole, parse_in_chunks(*boundary, body, std::string_view("\0", 1)), "a byte at a time");
    check_form(*boundary, body);
    return 0;
}
