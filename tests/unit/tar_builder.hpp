#pragma once
// Builds .tar.gz archives in memory (ustar headers, gzip by zlib), for the sdist tests: real
// sdists as python -m build writes them, and the malformed ones it never writes.

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wheelhouse::testing {

inline constexpr std::string_view ustar_magic{"ustar\0" "00", 8};
inline constexpr std::string_view gnu_magic{"ustar  \0", 8};

struct tar_member {
    std::string name;
    std::string data;
    char type = '0';   // '5' directory, '2' symlink, '1' hard link, 'x' pax header, 'L' long name, ...
    std::string link = {};  // of a link
    // What real tars hold but a test may change: the magic, the ustar prefix field, and any
    // bytes of the finished header (the checksum is computed after them, unless they set it).
    std::string_view magic = ustar_magic;
    std::string prefix = {};
    std::function<void(std::string& header)> edit = {};
};

// One pax record, its length counting itself: "30 path=demo-1.0/src/x.py\n".
inline std::string pax_record(std::string_view key, std::string_view value) {
    const std::string body = " " + std::string(key) + "=" + std::string(value) + "\n";
    std::size_t length = body.size() + 1;
    while (std::to_string(length).size() + body.size() != length) ++length;
    return std::to_string(length) + body;
}

inline tar_member pax_header(const std::vector<std::pair<std::string, std::string>>& records, char type = 'x') {
    std::string data;
    for (const auto& [key, value] : records) data += pax_record(key, value);
    return {"././@PaxHeader", data, type, ""};
}

inline tar_member gnu_long_name(std::string_view name, char type = 'L') {
    return {"././@LongLink", std::string(name) + std::string(1, '\0'), type, "", gnu_magic};
}

// The header's checksum field rewritten for its bytes as they are now: the unsigned sum, or
// the signed one that some old tars wrote.
inline void set_checksum(std::string& header, bool signed_sum = false) {
    std::memset(header.data() + 148, ' ', 8);
    long sum = 0;
    for (char c : header) sum += signed_sum ? static_cast<signed char>(c) : static_cast<unsigned char>(c);
    char text[32];
    std::snprintf(text, sizeof text, "%06lo", static_cast<unsigned long>(sum) & 0777777);
    std::memcpy(header.data() + 148, text, 7);
}

inline std::string tar_header(const tar_member& member, std::size_t size) {
    std::string header(512, '\0');
    auto put = [&](std::size_t offset, std::string_view text, std::size_t width) {
        std::memcpy(header.data() + offset, text.data(), std::min(text.size(), width));
    };
    auto octal = [&](std::size_t offset, std::size_t width, unsigned long long value) {
        char text[32];
        std::snprintf(text, sizeof text, "%0*llo", static_cast<int>(width - 1), value);
        put(offset, text, width - 1);
    };
    put(0, member.name, 100);
    octal(100, 8, member.type == '5' ? 0755 : 0644);
    octal(108, 8, 0);
    octal(116, 8, 0);
    octal(124, 12, size);
    octal(136, 12, 1700000000);
    header[156] = member.type;
    put(157, member.link, 100);
    put(257, member.magic, 8);
    put(345, member.prefix, 155);
    set_checksum(header);
    if (member.edit) {
        const std::string checksum = header.substr(148, 8);
        member.edit(header);
        if (header.substr(148, 8) == checksum) set_checksum(header);
    }
    return header;
}

// The tar stream: each member's header and data padded to 512, then `end_blocks` zero blocks.
inline std::string build_tar(const std::vector<tar_member>& members, int end_blocks = 2) {
    std::string out;
    for (const auto& member : members) {
        out += tar_header(member, member.data.size());
        out += member.data;
        out.append((512 - member.data.size() % 512) % 512, '\0');
    }
    out.append(static_cast<std::size_t>(end_blocks) * 512, '\0');
    return out;
}

inline std::string gzip(std::string_view bytes) {
    z_stream stream{};
    if (deflateInit2(&stream, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("deflateInit2 failed");
    std::string out(deflateBound(&stream, static_cast<uLong>(bytes.size())) + 64, '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(bytes.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    if (deflate(&stream, Z_FINISH) != Z_STREAM_END) throw std::runtime_error("deflate did not finish");
    out.resize(stream.total_out);
    deflateEnd(&stream);
    return out;
}

inline std::string pkg_info(std::string_view name, std::string_view version,
                            std::string_view metadata_version = "2.1", std::string_view extra = "") {
    return "Metadata-Version: " + std::string(metadata_version) + "\nName: " + std::string(name) + "\nVersion: " +
           std::string(version) + "\nSummary: a demo\n" + std::string(extra) + "\n";
}

// An sdist as setuptools writes one: {root}/, PKG-INFO, setup.py, a package.
inline std::vector<tar_member> sdist_members(std::string_view root, std::string_view pkg_info_text) {
    const std::string top(root);
    return {
        {top + "/", "", '5', ""},
        {top + "/PKG-INFO", std::string(pkg_info_text), '0', ""},
        {top + "/setup.py", "from setuptools import setup\nsetup()\n", '0', ""},
        {top + "/src/", "", '5', ""},
        {top + "/src/demo.py", "VALUE = 1\n", '0', ""},
    };
}

inline std::string build_sdist(std::string_view root, std::string_view pkg_info_text) {
    return gzip(build_tar(sdist_members(root, pkg_info_text)));
}

}  // namespace wheelhouse::testing
