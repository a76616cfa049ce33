#pragma once
// Builds .tar.gz archives in memory (ustar headers, gzip by zlib), for the sdist tests: real
// sdists as python -m build writes them, and the malformed ones it never writes.

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace wheelhouse::testing {

struct tar_member {
    std::string name;
    std::string data;
    char type = '0';   // '5' directory, '2' symlink, '1' hard link, 'x' pax header, ...
    std::string link;  // of a link
};

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
    put(257, std::string_view("ustar\0" "00", 8), 8);
    std::memset(header.data() + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : header) sum += c;
    char text[8];
    std::snprintf(text, sizeof text, "%06o", sum);
    std::memcpy(header.data() + 148, text, 7);
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
