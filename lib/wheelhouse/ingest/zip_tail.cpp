#include "wheelhouse/ingest/zip_tail.hpp"

#include <algorithm>
#include <string>

#include "wheelhouse/ingest/range_cache.hpp"

namespace wheelhouse::ingest {
namespace {

constexpr std::uint32_t end_signature = 0x06054b50;
constexpr std::uint32_t zip64_locator_signature = 0x07064b50;
constexpr std::uint32_t zip64_end_signature = 0x06064b50;
constexpr std::uint64_t end_record_size = 22;
constexpr std::uint64_t zip64_locator_size = 20;
constexpr std::uint64_t zip64_end_size = 56;

std::uint64_t little_endian(std::string_view bytes, std::size_t at, int width) {
    std::uint64_t value = 0;
    for (int i = width - 1; i >= 0; --i) {
        value = (value << 8) | static_cast<unsigned char>(bytes[at + static_cast<std::size_t>(i)]);
    }
    return value;
}

std::string bytes_text(std::uint64_t count) { return std::to_string(count) + " bytes"; }

}  // namespace

result<central_directory> locate_central_directory(range_cache& file, std::uint64_t max_size,
                                                   std::uint64_t max_entries) {
    const std::uint64_t file_size = file.size();
    if (file_size < end_record_size) {
        return invalid("the file is " + bytes_text(file_size) + " long, too short to be a zip archive");
    }
    const std::uint64_t tail_offset = file_size - std::min(file_size, zip_tail_size);
    auto tail = file.read(tail_offset, file_size - tail_offset);
    if (!tail) return tail.error();

    // The last end record whose comment fits in what follows it.
    std::size_t at = tail->size() - end_record_size + 1;
    bool found = false;
    while (at-- > 0) {
        if (little_endian(*tail, at, 4) == end_signature &&
            at + end_record_size + little_endian(*tail, at + 20, 2) <= tail->size()) {
            found = true;
            break;
        }
    }
    if (!found) {
        return invalid("not a zip archive: no end-of-central-directory record in its last " +
                       bytes_text(tail->size()) + " (a wheel is a zip file; was it truncated?)");
    }
    central_directory directory;
    directory.end_offset = tail_offset + at;
    const auto disk = little_endian(*tail, at + 4, 2);
    const auto directory_disk = little_endian(*tail, at + 6, 2);
    directory.entries = little_endian(*tail, at + 10, 2);
    directory.size = little_endian(*tail, at + 12, 4);
    directory.offset = little_endian(*tail, at + 16, 4);

    if (at >= zip64_locator_size && little_endian(*tail, at - zip64_locator_size, 4) == zip64_locator_signature) {
        const std::size_t locator = at - zip64_locator_size;
        const std::uint64_t record_offset = little_endian(*tail, locator + 8, 8);
        if (record_offset > directory.end_offset - zip64_locator_size ||
            directory.end_offset - zip64_locator_size - record_offset < zip64_end_size) {
            return invalid("the ZIP64 end-of-central-directory locator points to offset " + std::to_string(record_offset) +
                           ", outside the " + bytes_text(file_size) + " archive: it is truncated or corrupt");
        }
        auto record = file.read(record_offset, zip64_end_size);
        if (!record) return record.error();
        if (little_endian(*record, 0, 4) != zip64_end_signature) {
            return invalid("no ZIP64 end-of-central-directory record at offset " + std::to_string(record_offset) +
                           ", where its locator points: the archive is corrupt");
        }
        if (little_endian(*record, 16, 4) != 0 || little_endian(*record, 20, 4) != 0) {
            return invalid("a multi-disk zip archive cannot be a wheel");
        }
        directory.entries = little_endian(*record, 32, 8);
        directory.size = little_endian(*record, 40, 8);
        directory.offset = little_endian(*record, 48, 8);
        directory.end_offset = record_offset;
        directory.zip64 = true;
    } else if (disk != 0 || directory_disk != 0) {
        return invalid("a multi-disk zip archive cannot be a wheel");
    }

    if (directory.size > max_size) {
        return make_error(error_kind::too_large, "the zip central directory is " + bytes_text(directory.size) +
                                                     ", past the limit of " + bytes_text(max_size) +
                                                     ": a wheel with that many entries is refused");
    }
    if (directory.entries > max_entries) {
        return make_error(error_kind::too_large, "the archive has " + std::to_string(directory.entries) +
                                                     " entries, past the limit of " + std::to_string(max_entries));
    }
    if (directory.offset > directory.end_offset || directory.end_offset - directory.offset < directory.size) {
        return invalid("the zip central directory is truncated: the end record says it spans " +
                       bytes_text(directory.size) + " from offset " + std::to_string(directory.offset) +
                       ", but the end record itself starts at offset " + std::to_string(directory.end_offset) +
                       " of the " + bytes_text(file_size) + " file; the asset is damaged or was cut short");
    }
    if (directory.entries == 0) return invalid("the zip archive is empty");
    return directory;
}

}  // namespace wheelhouse::ingest
