#include "wheelhouse/text/file_name.hpp"

#include <string>

#include "wheelhouse/error_text.hpp"
#include "wheelhouse/text/quoted.hpp"

namespace wheelhouse::text {
namespace {

std::string reason_line(std::string_view kind, std::string_view reason) {
    return std::string(kind) + " filename: " + std::string(reason);
}

}  // namespace

error refuse_file_name(std::string_view kind, std::string_view filename, std::string_view reason,
                       std::string_view detail) {
    std::string particulars = detail.empty() ? std::string() : std::string(detail) + "; ";
    return invalid(reason_line(kind, reason), particulars + "the filename is " + quoted(filename));
}

bool fits_status_line(std::string_view kind, std::string_view reason) noexcept {
    return kind.size() + std::string_view(" filename: ").size() + reason.size() <= reason_budget;
}

std::optional<error> check_file_name_bytes(std::string_view kind, std::string_view filename,
                                           std::string_view ascii_hint) {
    const auto fail = [&](const std::string& reason) { return refuse_file_name(kind, filename, reason); };
    if (filename.size() > longest_file_name) {
        return fail("it is " + std::to_string(filename.size()) + " bytes long; at most " +
                    std::to_string(longest_file_name) + " are allowed");
    }
    for (std::size_t i = 0; i < filename.size(); ++i) {
        const char c = filename[i];
        const auto byte = static_cast<unsigned char>(c);
        if (byte > 0x20 && byte < 0x7f && c != '/' && c != '\\') continue;
        const std::string where = " at position " + std::to_string(i + 1);
        if (byte >= 0x80) {
            const std::string hint = ascii_hint.empty() ? std::string() : " " + std::string(ascii_hint);
            return fail("non-ASCII " + describe_byte(c) + where + "; " + std::string(kind) + " filenames are ASCII" + hint);
        }
        if (byte < 0x20 || byte == 0x7f) return fail("control character " + describe_byte(c) + where);
        if (c == ' ') return fail("a space" + where + "; " + std::string(kind) + " filenames have no spaces");
        return fail("path separator " + describe_byte(c) + where + "; give a file name, not a path");
    }
    return std::nullopt;
}

}  // namespace wheelhouse::text
