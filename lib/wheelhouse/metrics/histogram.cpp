#include "wheelhouse/metrics/histogram.hpp"

#include <algorithm>
#include <cassert>
#include <string>

namespace wheelhouse::metrics {

histogram::histogram(std::vector<std::uint64_t> bounds)
    : bounds_(std::move(bounds)), buckets_(std::make_unique<std::atomic<std::uint64_t>[]>(bounds_.size() + 1)) {
    assert(std::adjacent_find(bounds_.begin(), bounds_.end(), std::greater_equal<>()) == bounds_.end());
}

void histogram::observe(std::uint64_t value) noexcept {
    // Prometheus buckets are "less than or equal": the first bound not below the value.
    const auto bucket = std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin();
    buckets_[static_cast<std::size_t>(bucket)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
}

histogram::snapshot histogram::read() const {
    snapshot out;
    out.cumulative.reserve(bounds_.size() + 1);
    std::uint64_t running = 0;
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
        running += buckets_[i].load(std::memory_order_relaxed);
        out.cumulative.push_back(running);
    }
    out.sum = sum_.load(std::memory_order_relaxed);
    return out;
}

void histogram::render(text_writer& out, std::string_view name, std::initializer_list<label> labels,
                       double units_per_base) const {
    const auto counts = read();
    const std::string bucket_name = std::string(name) + "_bucket";
    // `le` goes after the caller's labels.
    std::vector<label> with_le(labels.begin(), labels.end());
    with_le.push_back({"le", {}});
    for (std::size_t i = 0; i <= bounds_.size(); ++i) {
        const std::string bound =
            i < bounds_.size() ? format_value(static_cast<double>(bounds_[i]) / units_per_base) : std::string("+Inf");
        with_le.back().value = bound;
        out.sample(bucket_name, with_le, counts.cumulative[i]);
    }
    out.sample(std::string(name) + "_sum", std::span<const label>(labels.begin(), labels.size()), static_cast<double>(counts.sum) / units_per_base);
    out.sample(std::string(name) + "_count", std::span<const label>(labels.begin(), labels.size()), counts.count());
}

}  // namespace wheelhouse::metrics
