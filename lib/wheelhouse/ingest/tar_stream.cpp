#include "wheelhouse/ingest/tar_stream.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <string_view>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::ingest {
namespace {

constexpr std::size_t block = 512;
using header_block = std::array<std::uint8_t, block>;

std::string with_bytes(std::uint64_t count) { return std::to_string(count) + " bytes"; }

std::uint64_t padded(std::uint64_t size) { return (size + block - 1) / block * block; }

// Every refusal of a header leads with the same fix: a build tool writes none of these.
error misread(std::string_view what, std::string_view detail) {
    return invalid("rebuild the sdist with python -m build: " + std::string(what), detail);
}

// A text field as both read it: up to its first NUL.
std::string_view text_field(const header_block& header, std::size_t offset, std::size_t length) {
    const auto* start = reinterpret_cast<const char*>(header.data() + offset);
    return {start, strnlen(start, length)};
}

bool all_zero(std::string_view bytes) {
    return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == '\0'; });
}

// A numeric field read only where tarfile (nts, strip, int(s, 8), or base-256 after 0x80) and
// GNU tar (leading spaces, octal digits, a NUL or space) agree: all NUL for zero, or leading
// spaces, octal digits, then only NULs and spaces. tarfile alone takes "+7", "0_7" and "\t7",
// and reads "\0007" as 0 where GNU tar reads 7. Base-256 only where `base256`, positive.
std::optional<std::uint64_t> number_field(const header_block& header, std::size_t offset, std::size_t length,
                                          bool base256 = false) {
    const std::uint8_t* digits = header.data() + offset;
    std::uint64_t value = 0;
    if (digits[0] & 0x80) {
        if (!base256 || digits[0] != 0x80) return std::nullopt;
        for (std::size_t i = 1; i < length; ++i) {
            if (value >> 55) return std::nullopt;
            value = (value << 8) | digits[i];
        }
        return value;
    }
    if (std::all_of(digits, digits + length, [](std::uint8_t b) { return b == 0; })) return 0;
    std::size_t i = 0;
    while (i < length && digits[i] == ' ') ++i;
    const std::size_t first = i;
    for (; i < length && digits[i] >= '0' && digits[i] <= '7'; ++i) value = value * 8 + (digits[i] - '0');
    if (i == first) return std::nullopt;
    for (; i < length; ++i) {
        if (digits[i] != ' ' && digits[i] != 0) return std::nullopt;
    }
    return value;  // at most 12 octal digits: 36 bits
}

// tarfile and GNU tar both accept the sum of the header's bytes as unsigned or as signed chars
// (some old tars), the checksum field counted as eight spaces.
bool checksum_matches(const header_block& header) {
    const auto stored = number_field(header, 148, 8);
    if (!stored) return false;
    std::uint64_t unsigned_sum = 0;
    std::int64_t signed_sum = 0;
    for (std::size_t i = 0; i < block; ++i) {
        const std::uint8_t byte = (i >= 148 && i < 156) ? ' ' : header[i];
        unsigned_sum += byte;
        signed_sum += static_cast<std::int8_t>(byte);
    }
    return *stored == unsigned_sum || static_cast<std::int64_t>(*stored) == signed_sum;
}

enum class magic { ustar, gnu, unknown };

magic magic_of(const header_block& header) {
    if (std::memcmp(header.data() + 257, "ustar\0", 6) == 0) return magic::ustar;
    if (std::memcmp(header.data() + 257, "ustar  \0", 8) == 0) return magic::gnu;
    return magic::unknown;
}

std::string type_text(char type) { return text::quoted(std::string(1, type)); }

// The fields tarfile parses in every header (frombuf): one it cannot parse ends its reading
// there, silently, where GNU tar skips to the next header.
result<std::uint64_t> check_header(const header_block& header, std::uint64_t offset) {
    const auto at = "at byte " + std::to_string(offset) + " of the tar";
    if (!checksum_matches(header)) {
        return invalid("build the sdist again: a tar header is damaged (its checksum is wrong)", at);
    }
    if (magic_of(header) == magic::unknown) {
        return misread("a tar header has no ustar or GNU magic",
                       at + ": an old (v7) header, read differently by tarfile and GNU tar");
    }
    struct numeric { std::size_t offset, length; const char* name; };
    for (const numeric field : {numeric{100, 8, "mode"}, {108, 8, "uid"}, {116, 8, "gid"}, {136, 12, "mtime"},
                                {329, 8, "devmajor"}, {337, 8, "devminor"}}) {
        if (!number_field(header, field.offset, field.length)) {
            const std::string written(text_field(header, field.offset, field.length));
            return misread("a tar header's number field is malformed", at + ": its " + field.name + " field " +
                                                                           text::quoted(written) +
                                                                           " reads differently in tarfile and GNU tar");
        }
    }
    const auto size = number_field(header, 124, 12, true);
    if (!size) {
        return misread("a tar header's size field is malformed", at + ": tarfile and GNU tar would skip different data");
    }
    return *size;
}

// The pax keys a member may carry: those that name it or size it, and those that move nothing.
// Anything else (GNU sparse maps, hdrcharset, extended attributes, vendor keys) is refused: one
// of the two readers acts on it and the other does not, or neither is modelled here.
enum class pax_value { name, size, time, id, text };

struct pax_key {
    std::string_view name;
    pax_value value;
    bool moves;  // names or sizes a member: never in a global header
};

constexpr std::array<pax_key, 11> pax_keys{{
    {"path", pax_value::name, true}, {"linkpath", pax_value::name, true}, {"size", pax_value::size, true},
    {"mtime", pax_value::time, false}, {"atime", pax_value::time, false}, {"ctime", pax_value::time, false},
    {"uid", pax_value::id, false}, {"gid", pax_value::id, false}, {"uname", pax_value::text, false},
    {"gname", pax_value::text, false}, {"comment", pax_value::text, false},
}};

bool all_digits(std::string_view text, std::size_t max_digits) {
    return !text.empty() && text.size() <= max_digits &&
           std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// What both read the same way: decimal digits (tarfile's int() also takes "+5" and "0_5", GNU
// tar refuses them); times as digits with an optional sign and fraction.
bool valid_pax_value(pax_value kind, std::string_view value) {
    switch (kind) {
        case pax_value::name:
            // Empty means "unset" to GNU tar and "" to tarfile; a NUL ends the name for GNU tar only.
            return !value.empty() && value.find('\0') == std::string_view::npos;
        case pax_value::size: return all_digits(value, 19);
        case pax_value::id: return all_digits(value, 9);
        case pax_value::time: {
            if (value.starts_with('-')) value.remove_prefix(1);
            const auto dot = value.find('.');
            const bool fraction = dot == std::string_view::npos || all_digits(value.substr(dot + 1), 19);
            return all_digits(value.substr(0, dot), 19) && fraction;
        }
        case pax_value::text: return true;
    }
    return false;
}

std::uint64_t decimal(std::string_view digits) {
    std::uint64_t value = 0;
    for (char c : digits) value = value * 10 + static_cast<std::uint64_t>(c - '0');
    return value;
}

// What a pax extended header says of the member after it.
struct pax_values {
    std::optional<std::string> path, link;
    std::optional<std::uint64_t> size;
};

// "%d key=value\n" records (POSIX pax); `global` for a 'g' header, whose keys tarfile applies
// to every later member: only those that move nothing.
result<pax_values> parse_pax(std::string_view records, bool global, std::size_t max_name_length) {
    const auto bad = [](std::string_view why) { return misread("a pax extended header is malformed", why); };
    pax_values out;
    std::uint32_t seen = 0;  // a bit per pax_keys entry
    while (!records.empty()) {
        std::size_t digits = 0;
        while (digits < records.size() && digits < 19 && records[digits] >= '0' && records[digits] <= '9') ++digits;
        if (digits == 0 || digits >= records.size() || records[digits] != ' ') {
            return bad("a record does not start with its length and one space");
        }
        const auto length = decimal(records.substr(0, digits));
        if (length < digits + 4 || length > records.size() || records[length - 1] != '\n') {
            return bad("a record's length does not frame it");
        }
        const auto record = records.substr(digits + 1, length - digits - 2);
        records.remove_prefix(length);
        const auto equals = record.find('=');
        if (equals == 0 || equals == std::string_view::npos) return bad("a record has no key=value");
        const auto name = record.substr(0, equals);
        const auto value = record.substr(equals + 1);
        const auto* key =
            std::find_if(pax_keys.begin(), pax_keys.end(), [&](const pax_key& known) { return known.name == name; });
        if (key == pax_keys.end() || (global && key->moves)) {
            return misread("it has a pax key wheelhouse does not read",
                           std::string(global ? "global " : "") + "key " + text::quoted(std::string(name)) +
                               ": tarfile and GNU tar may act on it differently");
        }
        const auto bit = std::uint32_t{1} << (key - pax_keys.begin());
        if (seen & bit) return bad("key " + text::quoted(std::string(name)) + " is given twice");
        seen |= bit;
        if (key->value == pax_value::name && value.size() > max_name_length) {
            return invalid("rebuild the sdist with shorter names: a path or link is longer than " +
                               std::to_string(max_name_length) + " bytes",
                           "pax key " + text::quoted(std::string(name)) + " holds " + with_bytes(value.size()));
        }
        if (!valid_pax_value(key->value, value)) {
            return bad("key " + text::quoted(std::string(name)) + " has the value " + text::quoted(std::string(value)) +
                       ", which tarfile and GNU tar read differently");
        }
        if (key->name == "path") out.path = std::string(value);
        if (key->name == "linkpath") out.link = std::string(value);
        if (key->name == "size") out.size = decimal(value);
    }
    return out;
}

// A GNU long name or link: the name, then a NUL within its size.
result<std::string> long_name_of(std::string data, std::string_view what) {
    const auto nul = data.find('\0');
    if (nul == std::string::npos || !all_zero(std::string_view(data).substr(nul))) {
        return misread("a GNU " + std::string(what) + " is not one NUL-terminated name",
                       "tarfile reads it on into its padding, GNU tar stops at its size");
    }
    data.resize(nul);
    return data;
}

// What the headers before a member said.
struct pending_headers {
    std::uint64_t offset = 0;
    bool extended = false, global = false;
    pax_values pax;
    std::optional<std::string> long_name, long_link;

    bool empty() const noexcept { return !extended && !global && !long_name && !long_link; }
};

error file_named_like_a_directory(std::string_view name, char type, std::string_view who) {
    return misread("a file's name ends in '/'", "member " + text::quoted(std::string(name)) + " has type " +
                                                     type_text(type) + ": " + std::string(who));
}

// The member a header describes, with what the headers before it said.
result<tar_entry> make_entry(const header_block& header, std::uint64_t header_size, const pending_headers& before) {
    const char type = static_cast<char>(header[156]);
    tar_entry entry;
    switch (type) {
        case '0': case '\0': entry.type = tar_entry_type::file; break;
        case '5': entry.type = tar_entry_type::directory; break;
        case '2': entry.type = tar_entry_type::symlink; break;
        case '1': entry.type = tar_entry_type::hard_link; break;
        default:
            return invalid("rebuild the sdist with files, directories and links only",
                           "the member at byte " + std::to_string(before.offset) + " of the tar has type " +
                               type_text(type) + " (a device, FIFO, sparse or contiguous file, or a type tarfile "
                                                 "and GNU tar do not read alike)");
    }
    const auto name_field = text_field(header, 0, 100);
    std::string name(name_field);
    if (header[345] != 0) {
        if (magic_of(header) != magic::ustar) {
            return misread("a tar header has a prefix field under GNU magic",
                           "member " + text::quoted(name) + ": tarfile puts the prefix " +
                               text::quoted(std::string(text_field(header, 345, 155))) +
                               " before its name, GNU tar reads a prefix only under ustar magic");
        }
        name = std::string(text_field(header, 345, 155)) + "/" + name;
    }
    // tarfile turns an old-style file ('\0') named "x/" into a directory by its header's name
    // alone; GNU tar by the full name, after any long name or pax path.
    if (type == '\0' && name_field.ends_with('/')) {
        return file_named_like_a_directory(name, type, "tarfile unpacks it as a directory, GNU tar by its full name");
    }
    if (before.long_name && before.pax.path) {
        return misread("a member has both a GNU long name and a pax path",
                       "at byte " + std::to_string(before.offset) +
                           ": tarfile takes the first header's, GNU tar the pax path");
    }
    if (before.long_link && before.pax.link) {
        return misread("a member has both a GNU long link and a pax linkpath",
                       "at byte " + std::to_string(before.offset) +
                           ": tarfile takes the first header's, GNU tar the pax linkpath");
    }
    entry.name = before.pax.path ? *before.pax.path : before.long_name ? *before.long_name : std::move(name);
    if (entry.type == tar_entry_type::directory) {
        if (entry.name.ends_with('/')) entry.name.pop_back();
    } else if (entry.name.ends_with('/')) {
        return file_named_like_a_directory(entry.name, type, "tarfile unpacks it as a file, GNU tar as a directory");
    }
    if (entry.type == tar_entry_type::symlink || entry.type == tar_entry_type::hard_link) {
        entry.link = before.pax.link    ? *before.pax.link
                     : before.long_link ? *before.long_link
                                        : std::string(text_field(header, 157, 100));
    }
    const auto size = before.pax.size.value_or(header_size);
    if (entry.type != tar_entry_type::file && (size != 0 || header_size != 0)) {
        return misread("a link or directory carries data", "member " + text::quoted(entry.name) + " says " +
                                                               with_bytes(std::max(size, header_size)) +
                                                               ": GNU tar skips data after a link, tarfile does not");
    }
    entry.size = size;
    return entry;
}

}  // namespace

const char* describe(tar_entry_type type) noexcept {
    switch (type) {
        case tar_entry_type::file: return "file";
        case tar_entry_type::directory: return "directory";
        case tar_entry_type::symlink: return "symlink";
        case tar_entry_type::hard_link: return "hardlink";
    }
    return "file";
}

tar_stream::tar_stream(byte_source source, const tar_name_limits& limits)
    : source_(std::move(source)), limits_(limits) {}

result<void> tar_stream::read_exact(std::uint8_t* out, std::size_t size) {
    auto got = source_(out, size);
    if (!got) return got.error();
    position_ += *got;
    if (*got != size) {
        return invalid("build the sdist again: its tar archive is cut short",
                       "the tar ends inside a member, after " + with_bytes(position_));
    }
    return {};
}

result<void> tar_stream::skip(std::uint64_t size) {
    std::array<std::uint8_t, 1 << 16> buffer{};
    while (size > 0) {
        const auto chunk = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size));
        if (auto read = read_exact(buffer.data(), chunk); !read) return read.error();
        size -= chunk;
    }
    return {};
}

// A pax or GNU header's data, which both read with its padding: the padding must be zeros
// (tarfile parses pax records on into it, GNU tar stops at the size).
result<std::string> tar_stream::read_meta(std::uint64_t size, std::size_t max, std::string_view what) {
    // A name no file system takes is a malformed sdist (400), however few bytes it compresses to.
    if (size > max) {
        return invalid("rebuild the sdist with shorter names: a " + std::string(what) + " is too long",
                       with_bytes(size) + " at byte " + std::to_string(position_) + " of the tar, past the limit of " +
                           with_bytes(max));
    }
    std::string data(padded(size), '\0');
    if (auto read = read_exact(reinterpret_cast<std::uint8_t*>(data.data()), data.size()); !read) return read.error();
    if (!all_zero(std::string_view(data).substr(size))) {
        return misread("a " + std::string(what) + " has data in its padding",
                       "tarfile reads a pax header on past its size, GNU tar does not");
    }
    data.resize(size);
    return data;
}

result<std::string> tar_stream::read_data() {
    std::string data(unread_, '\0');
    if (auto read = read_exact(reinterpret_cast<std::uint8_t*>(data.data()), data.size()); !read) return read.error();
    unread_ = 0;
    data.resize(unread_size_);
    return data;
}

// After the first zero block only zeros, to the end of the stream: tarfile stops at that block,
// GNU tar at the second; neither may see a member the other does not.
result<void> tar_stream::read_to_end() {
    std::array<std::uint8_t, 1 << 16> buffer{};
    for (;;) {
        auto got = source_(buffer.data(), buffer.size());
        if (!got) return got.error();
        position_ += *got;
        if (!all_zero({reinterpret_cast<const char*>(buffer.data()), *got})) {
            return invalid("rebuild the sdist: data follows its tar archive's end marker",
                           "tarfile stops at the first zero block and would never see it");
        }
        if (*got < buffer.size()) return {};
    }
}

result<std::optional<tar_entry>> tar_stream::next() {
    if (unread_ > 0) {
        if (auto skipped = skip(unread_); !skipped) return skipped.error();
        unread_ = 0;
    }
    pending_headers before;
    before.offset = position_;
    for (;;) {
        header_block header{};
        auto got = source_(header.data(), block);
        if (!got) return got.error();
        position_ += *got;
        if (*got == block && all_zero({reinterpret_cast<const char*>(header.data()), block}) && before.empty()) {
            if (auto rest = read_to_end(); !rest) return rest.error();
            return std::optional<tar_entry>{};
        }
        if (*got != block || all_zero({reinterpret_cast<const char*>(header.data()), block})) {
            return invalid("build the sdist again: its tar archive is cut short (no end-of-archive marker)",
                           "the tar ends after " + with_bytes(position_) +
                               (before.empty() ? "" : ", after a pax or long-name header"));
        }
        const auto header_offset = position_ - block;
        auto size = check_header(header, header_offset);
        if (!size) return size.error();
        const char type = static_cast<char>(header[156]);
        const auto repeated = [&](std::string_view what) {
            return misread("two " + std::string(what) + "s precede one member",
                           "at byte " + std::to_string(header_offset) + ": tarfile and GNU tar keep different ones");
        };
        if (type == 'x' || type == 'g') {
            bool& seen = type == 'x' ? before.extended : before.global;
            if (seen) return repeated(type == 'x' ? "pax extended header" : "pax global header");
            seen = true;
            auto records = read_meta(*size, extended_header_limit(), "pax header");
            if (!records) return records.error();
            auto parsed = parse_pax(*records, type == 'g', limits_.max_name_length);
            if (!parsed) return parsed.error();
            if (type == 'x') before.pax = std::move(*parsed);
            continue;
        }
        if (type == 'L' || type == 'K') {
            auto& name = type == 'L' ? before.long_name : before.long_link;
            if (name) return repeated(type == 'L' ? "GNU long name" : "GNU long link");
            const auto* what = type == 'L' ? "long name" : "long link";
            auto data = read_meta(*size, limits_.max_name_length + 1, what);
            if (!data) return data.error();
            auto text = long_name_of(std::move(*data), what);
            if (!text) return text.error();
            name = std::move(*text);
            continue;
        }
        auto entry = make_entry(header, *size, before);
        if (!entry) return entry.error();
        if (entry->type == tar_entry_type::file) {
            unread_ = padded(entry->size);
            unread_size_ = entry->size;
        }
        return std::optional<tar_entry>{std::move(*entry)};
    }
}

}  // namespace wheelhouse::ingest
