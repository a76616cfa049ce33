// The zip tail and the range reader (ingest/zip_tail, ingest/range_cache). The input's first
// line is a plan of reads and seeds, the rest the file. Beside memory safety:
// - a ranged reader never reads past the end: no fetch leaves the file, and a read that would
//   is refused without fetching;
// - every read returns exactly the file's bytes there, whatever was seeded or cached before,
//   and no byte is fetched twice;
// - a located central directory lies inside the file, before its end records.

#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/ingest/range_cache.hpp"
#include "wheelhouse/ingest/zip_tail.hpp"

namespace {

namespace ingest = wheelhouse::ingest;

// Reads the plan a few bytes at a time; zeros once it runs out.
class plan_reader {
public:
    explicit plan_reader(std::string_view plan) : plan_(plan) {}
    bool done() const { return position_ >= plan_.size(); }
    std::uint64_t next(unsigned bytes) {
        std::uint64_t value = 0;
        for (unsigned i = 0; i < bytes; ++i) {
            value <<= 8;
            if (position_ < plan_.size()) value |= static_cast<unsigned char>(plan_[position_++]);
        }
        return value;
    }

private:
    std::string_view plan_;
    std::size_t position_ = 0;
};

class checked_file {
public:
    explicit checked_file(std::string_view bytes) : bytes_(bytes), fetched_(bytes.size(), false) {}

    wheelhouse::result<std::string> fetch(std::uint64_t offset, std::uint64_t length) {
        const std::uint64_t size = bytes_.size();
        WHEELHOUSE_FUZZ_CHECK(offset <= size && length <= size - offset,
                              "fetch of " + std::to_string(length) + " at " + std::to_string(offset) + " of " +
                                  std::to_string(size));
        for (std::uint64_t i = offset; i < offset + length; ++i) {
            WHEELHOUSE_FUZZ_CHECK(!fetched_[i], "byte " + std::to_string(i) + " fetched twice");
            fetched_[i] = true;
        }
        return std::string(bytes_.substr(offset, length));
    }
    // A seed makes its bytes known: fetching them again would be waste, but a seed may replace
    // a cached range, so they are no longer counted as fetched.
    void seeded(std::uint64_t offset, std::uint64_t length) {
        for (std::uint64_t i = offset; i < std::min<std::uint64_t>(offset + length, bytes_.size()); ++i) fetched_[i] = true;
    }
    std::string_view bytes() const { return bytes_; }

private:
    std::string_view bytes_;
    std::vector<bool> fetched_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    const auto newline = text.find('\n');
    if (newline == std::string_view::npos) return 0;
    plan_reader plan(text.substr(0, newline));
    checked_file file(text.substr(newline + 1));
    const std::uint64_t file_size = file.bytes().size();
    ingest::range_cache cache(
        file_size, [&](std::uint64_t offset, std::uint64_t length) { return file.fetch(offset, length); },
        plan.next(1) * 16);

    while (!plan.done()) {
        const auto action = plan.next(1);
        const std::uint64_t offset = plan.next(2), length = plan.next(2);
        if (action % 4 == 0) {
            const std::string_view known = offset < file_size ? file.bytes().substr(offset, length) : std::string_view{};
            file.seeded(offset, known.size());
            cache.seed(offset, std::string(known));
            continue;
        }
        auto read = cache.read(offset, length);
        const bool inside = offset <= file_size && length <= file_size - offset;
        WHEELHOUSE_FUZZ_CHECK(read.has_value() == inside, "read of " + std::to_string(length) + " at " +
                                                              std::to_string(offset) + " of " + std::to_string(file_size));
        if (read) {
            WHEELHOUSE_FUZZ_CHECK(*read == file.bytes().substr(offset, length),
                                  "read of " + std::to_string(length) + " at " + std::to_string(offset) + " differs");
        }
    }

    auto directory = ingest::locate_central_directory(cache, 1 << 20, 1 << 16);
    if (directory) {
        WHEELHOUSE_FUZZ_CHECK(directory->offset <= directory->end_offset &&
                                  directory->size <= directory->end_offset - directory->offset &&
                                  directory->end_offset <= file_size && directory->size <= (1 << 20) &&
                                  directory->entries <= (1 << 16),
                              "directory at " + std::to_string(directory->offset) + " of " +
                                  std::to_string(directory->size) + " bytes, end records at " +
                                  std::to_string(directory->end_offset) + ", file " + std::to_string(file_size));
    }
    return 0;
}
