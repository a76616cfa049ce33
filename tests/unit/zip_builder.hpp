#pragma once
// Builds zip archives in memory with libzip, for the archive and ingest tests, and patches
// their headers to make the malformed ones real wheels never are.

#include <zip.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/text/base64.hpp"

namespace wheelhouse::testing {

struct zip_entry {
    std::string name;  // ends with '/' for a directory
    std::string data;
    bool stored = false;  // ZIP_CM_STORE instead of deflate
};

inline std::string build_zip(const std::vector<zip_entry>& entries) {
    zip_error_t failure;
    zip_error_init(&failure);
    zip_source_t* buffer = zip_source_buffer_create(nullptr, 0, 0, &failure);
    if (buffer == nullptr) throw std::runtime_error("zip_source_buffer_create failed");
    zip_t* archive = zip_open_from_source(buffer, ZIP_TRUNCATE, &failure);
    if (archive == nullptr) throw std::runtime_error("zip_open_from_source failed");
    zip_source_keep(buffer);
    for (const auto& entry : entries) {
        zip_int64_t index = -1;
        if (!entry.name.empty() && entry.name.back() == '/') {
            index = zip_dir_add(archive, entry.name.c_str(), ZIP_FL_ENC_UTF_8);
        } else {
            zip_source_t* data = zip_source_buffer(archive, entry.data.data(), entry.data.size(), 0);
            index = zip_file_add(archive, entry.name.c_str(), data, ZIP_FL_ENC_UTF_8);
            if (index < 0) zip_source_free(data);
        }
        if (index < 0) throw std::runtime_error("adding " + entry.name + ": " + zip_strerror(archive));
        zip_set_file_compression(archive, static_cast<zip_uint64_t>(index), entry.stored ? ZIP_CM_STORE : ZIP_CM_DEFLATE, 0);
        zip_file_set_mtime(archive, static_cast<zip_uint64_t>(index), 1700000000, 0);
    }
    if (zip_close(archive) != 0) throw std::runtime_error(std::string("zip_close: ") + zip_strerror(archive));

    std::string bytes;
    zip_stat_t stat;
    zip_stat_init(&stat);
    zip_source_stat(buffer, &stat);
    bytes.resize(static_cast<std::size_t>(stat.size));
    zip_source_open(buffer);
    zip_source_read(buffer, bytes.data(), bytes.size());
    zip_source_close(buffer);
    zip_source_free(buffer);
    return bytes;
}

inline std::string record_hash(std::string_view data) {
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    hasher->update(data);
    return "sha256=" + text::base64url_encode(hasher->finish());
}

// A well-formed wheel's entries: `files` plus dist-info METADATA, WHEEL and a RECORD that
// lists them all with true hashes.
struct wheel_spec {
    std::string dist_info = "demo-1.0.dist-info";
    std::string metadata = "Metadata-Version: 2.1\nName: demo\nVersion: 1.0\nSummary: A demo\n\nThe description.\n";
    std::string wheel = "Wheel-Version: 1.0\nGenerator: wheelhouse-tests\nRoot-Is-Purelib: false\nTag: py3-none-any\n";
    std::map<std::string, std::string> files = {{"demo/__init__.py", "VALUE = 1\n"}, {"demo/_native.so", std::string(5000, '\x7f')}};
};

inline std::vector<zip_entry> wheel_entries(const wheel_spec& spec) {
    std::vector<zip_entry> entries;
    std::string record;
    auto add = [&](const std::string& name, const std::string& data) {
        entries.push_back({name, data});
        record += name + "," + record_hash(data) + "," + std::to_string(data.size()) + "\n";
    };
    for (const auto& [name, data] : spec.files) add(name, data);
    add(spec.dist_info + "/METADATA", spec.metadata);
    add(spec.dist_info + "/WHEEL", spec.wheel);
    record += spec.dist_info + "/RECORD,,\n";
    entries.push_back({spec.dist_info + "/RECORD", record});
    return entries;
}

inline std::string build_wheel(const wheel_spec& spec = {}) { return build_zip(wheel_entries(spec)); }

// Rewrites every occurrence of `from` with `to` (same length) in the raw archive bytes: renames
// an entry in both its local header and the central directory.
inline std::string replace_bytes(std::string bytes, std::string_view from, std::string_view to) {
    if (from.size() != to.size()) throw std::logic_error("replace_bytes needs equal lengths");
    for (auto at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size())) {
        bytes.replace(at, from.size(), to);
    }
    return bytes;
}

inline void put_u32(std::string& bytes, std::size_t at, std::uint32_t value) {
    for (int i = 0; i < 4; ++i) bytes[at + static_cast<std::size_t>(i)] = static_cast<char>((value >> (8 * i)) & 0xff);
}

inline std::uint16_t get_u16(const std::string& bytes, std::size_t at) {
    return static_cast<std::uint16_t>(static_cast<unsigned char>(bytes[at]) | (static_cast<unsigned char>(bytes[at + 1]) << 8));
}

// Sets the uncompressed size an entry declares, in its local header and central directory
// record alike, so libzip's consistency check still passes.
inline std::string declare_size(std::string bytes, std::string_view entry_name, std::uint32_t size) {
    int patched = 0;
    for (std::size_t at = 0; at + 46 <= bytes.size(); ++at) {
        if (bytes.compare(at, 4, "PK\x03\x04") == 0 && at + 30 <= bytes.size()) {
            const auto name_length = get_u16(bytes, at + 26);
            if (bytes.compare(at + 30, name_length, entry_name) == 0 && name_length == entry_name.size()) {
                put_u32(bytes, at + 22, size);
                ++patched;
            }
        } else if (bytes.compare(at, 4, "PK\x01\x02") == 0) {
            const auto name_length = get_u16(bytes, at + 28);
            if (bytes.compare(at + 46, name_length, entry_name) == 0 && name_length == entry_name.size()) {
                put_u32(bytes, at + 24, size);
                ++patched;
            }
        }
    }
    if (patched != 2) throw std::logic_error("declare_size: entry " + std::string(entry_name) + " not found twice");
    return bytes;
}

}  // namespace wheelhouse::testing
