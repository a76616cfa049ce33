#include "wheelhouse/ingest/range_cache.hpp"

#include <algorithm>
#include <utility>

namespace wheelhouse::ingest {

range_cache::range_cache(std::uint64_t size, range_fetch fetch, std::uint64_t readahead)
    : size_(size), fetch_(std::move(fetch)), readahead_(std::max<std::uint64_t>(readahead, 1)) {}

void range_cache::seed(std::uint64_t offset, std::string bytes) {
    if (bytes.empty() || offset >= size_) return;
    if (offset + bytes.size() > size_) bytes.resize(static_cast<std::size_t>(size_ - offset));
    // Keep the map free of overlaps: a seed replaces whatever it covers.
    const std::uint64_t end = offset + bytes.size();
    auto first = segments_.upper_bound(offset);
    if (first != segments_.begin()) {
        auto before = std::prev(first);
        if (before->first + before->second.size() > offset) first = before;
    }
    auto last = segments_.lower_bound(end);
    for (auto it = first; it != last; ++it) {
        // Keep the parts of overlapped segments that stick out on either side.
        const std::uint64_t start = it->first;
        const std::uint64_t stop = start + it->second.size();
        if (start < offset) bytes.insert(0, it->second, 0, static_cast<std::size_t>(offset - start));
        if (stop > end) bytes.append(it->second, static_cast<std::size_t>(end - start), std::string::npos);
        if (start < offset) offset = start;
    }
    segments_.erase(first, last);
    segments_.emplace(offset, std::move(bytes));
}

result<std::string> range_cache::read(std::uint64_t offset, std::uint64_t length) {
    if (offset > size_ || length > size_ - offset) {
        return invalid("a read of " + std::to_string(length) + " bytes at offset " + std::to_string(offset) +
                       " runs past the end of the " + std::to_string(size_) + "-byte file: the zip archive is truncated "
                       "or its directory points outside it");
    }
    std::string out;
    out.reserve(static_cast<std::size_t>(length));
    const std::uint64_t end = offset + length;
    std::uint64_t position = offset;
    while (position < end) {
        auto next = segments_.upper_bound(position);
        if (next != segments_.begin()) {
            const auto& [start, bytes] = *std::prev(next);
            if (position < start + bytes.size()) {
                const std::uint64_t stop = std::min<std::uint64_t>(end, start + bytes.size());
                out.append(bytes, static_cast<std::size_t>(position - start), static_cast<std::size_t>(stop - position));
                position = stop;
                continue;
            }
        }
        std::uint64_t fetch_end = std::min(size_, std::max(end, position + readahead_));
        if (next != segments_.end()) fetch_end = std::min(fetch_end, next->first);
        auto fetched = fetch_(position, fetch_end - position);
        if (!fetched) return fetched.error();
        if (fetched->size() != fetch_end - position) {
            return make_error(error_kind::upstream, "asked for " + std::to_string(fetch_end - position) +
                                                        " bytes at offset " + std::to_string(position) + " and received " +
                                                        std::to_string(fetched->size()));
        }
        ++fetch_count_;
        bytes_fetched_ += fetched->size();
        segments_.emplace(position, std::move(fetched).value());
    }
    return out;
}

}  // namespace wheelhouse::ingest
