#include "wheelhouse/metrics/text_format.hpp"

#include <charconv>
#include <cmath>

namespace wheelhouse::metrics {
namespace {

std::string_view type_name(metric_type type) {
    switch (type) {
    case metric_type::counter: return "counter";
    case metric_type::gauge: return "gauge";
    case metric_type::histogram: return "histogram";
    }
    return "untyped";
}

void append_escaped(std::string& out, std::string_view text, bool quote) {
    for (char c : text) {
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (quote && c == '"') out += "\\\"";
        else out.push_back(c);
    }
}

}  // namespace

std::string escape_help(std::string_view help) {
    std::string out;
    append_escaped(out, help, false);
    return out;
}

std::string escape_label_value(std::string_view value) {
    std::string out;
    append_escaped(out, value, true);
    return out;
}

std::string format_value(double value) {
    if (std::isnan(value)) return "NaN";
    if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
    char buffer[64];
    const auto written = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, written.ptr);
}

void text_writer::family(std::string_view name, std::string_view help, metric_type type) {
    text_ += "# HELP ";
    text_ += name;
    text_.push_back(' ');
    append_escaped(text_, help, false);
    text_ += "\n# TYPE ";
    text_ += name;
    text_.push_back(' ');
    text_ += type_name(type);
    text_.push_back('\n');
}

void text_writer::begin_sample(std::string_view name, std::span<const label> labels) {
    text_ += name;
    if (!labels.empty()) {
        text_.push_back('{');
        bool first = true;
        for (const auto& [label_name, value] : labels) {
            if (!first) text_.push_back(',');
            first = false;
            text_ += label_name;
            text_ += "=\"";
            append_escaped(text_, value, true);
            text_.push_back('"');
        }
        text_.push_back('}');
    }
    text_.push_back(' ');
}

void text_writer::sample(std::string_view name, std::span<const label> labels, std::uint64_t value) {
    begin_sample(name, labels);
    text_ += std::to_string(value);
    text_.push_back('\n');
}

void text_writer::sample(std::string_view name, std::span<const label> labels, double value) {
    begin_sample(name, labels);
    text_ += format_value(value);
    text_.push_back('\n');
}

}  // namespace wheelhouse::metrics
