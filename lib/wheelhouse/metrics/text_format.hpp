#pragma once
// The Prometheus text exposition format (version 0.0.4): what `GET /metrics` answers and what
// `promtool check metrics` reads. Pure string building; no sockets, no clock.

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace wheelhouse::metrics {

// The Content-Type of a page this writer produced.
inline constexpr std::string_view text_content_type = "text/plain; version=0.0.4; charset=utf-8";

enum class metric_type { counter, gauge, histogram };

struct label {
    std::string_view name;
    std::string_view value;
};

// Builds one exposition page. Each family() starts a metric family (HELP and TYPE lines); the
// samples that follow belong to it. Names are the caller's constants; label values are escaped.
class text_writer {
public:
    void family(std::string_view name, std::string_view help, metric_type type);
    // Integers are written exactly; counters of bytes pass 2^53 long before a double would notice.
    void sample(std::string_view name, std::span<const label> labels, std::uint64_t value);
    void sample(std::string_view name, std::span<const label> labels, double value);
    void sample(std::string_view name, std::initializer_list<label> labels, std::uint64_t value) {
        sample(name, std::span<const label>(labels.begin(), labels.size()), value);
    }
    void sample(std::string_view name, std::initializer_list<label> labels, double value) {
        sample(name, std::span<const label>(labels.begin(), labels.size()), value);
    }

    const std::string& text() const noexcept { return text_; }
    std::string take() noexcept { return std::move(text_); }

private:
    void begin_sample(std::string_view name, std::span<const label> labels);
    std::string text_;
};

// Backslash and newline escaped, as HELP text needs.
std::string escape_help(std::string_view help);
// Backslash, double quote and newline escaped, as a label value needs.
std::string escape_label_value(std::string_view value);
// A sample value: "+Inf", "-Inf", "NaN", integers without a fraction, otherwise the shortest
// form that reads back as the same double.
std::string format_value(double value);

}  // namespace wheelhouse::metrics
