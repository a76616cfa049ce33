#pragma once
// Lock-free counters and fixed-bucket histograms for the request path: an observation is a
// few relaxed atomic additions, with no lock and no allocation.

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "wheelhouse/metrics/text_format.hpp"

namespace wheelhouse::metrics {

// A monotonically increasing count. Thread safety: any thread.
class counter {
public:
    void add(std::uint64_t amount = 1) noexcept { value_.fetch_add(amount, std::memory_order_relaxed); }
    std::uint64_t value() const noexcept { return value_.load(std::memory_order_relaxed); }

private:
    // Relaxed: a scrape needs each count eventually, not an order between counts.
    std::atomic<std::uint64_t> value_{0};
};

// Counts observations into buckets bounded by integer upper bounds in the caller's unit
// (microseconds, bytes), so observing needs no floating point; rendering scales the bounds
// and the sum into the metric's base unit (seconds).
// Thread safety: observe() from any thread; a scrape may see one observation's bucket before
// its sum, which Prometheus tolerates.
class histogram {
public:
    // `bounds` strictly increasing; a +Inf bucket follows them.
    explicit histogram(std::vector<std::uint64_t> bounds);

    void observe(std::uint64_t value) noexcept;

    struct snapshot {
        std::vector<std::uint64_t> cumulative;  // one per bound, then +Inf (the count)
        std::uint64_t sum = 0;
        std::uint64_t count() const noexcept { return cumulative.empty() ? 0 : cumulative.back(); }
    };
    snapshot read() const;
    std::span<const std::uint64_t> bounds() const noexcept { return bounds_; }

    // Writes the _bucket, _sum and _count samples of `name` with `labels` plus `le`.
    // Observations are divided by `units_per_base` (1e6: microseconds to seconds); dividing by
    // the exact count, not multiplying by its inexact inverse, keeps bounds like 0.0001 short.
    void render(text_writer& out, std::string_view name, std::initializer_list<label> labels, double units_per_base) const;

private:
    std::vector<std::uint64_t> bounds_;
    std::unique_ptr<std::atomic<std::uint64_t>[]> buckets_;  // per bucket, not cumulative
    std::atomic<std::uint64_t> sum_{0};
};

}  // namespace wheelhouse::metrics
