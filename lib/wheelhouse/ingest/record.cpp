#include "wheelhouse/ingest/record.hpp"

#include <charconv>
#include <unordered_set>

namespace wheelhouse::ingest {
namespace {

// Splits one CSV record off the front of `text`. Returns false on an unterminated quote.
bool next_csv_row(std::string_view& text, std::vector<std::string>& fields, std::size_t& line) {
    fields.assign(1, std::string());
    bool quoted = false;
    std::size_t i = 0;
    for (; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"') {
                if (i + 1 < text.size() && text[i + 1] == '"') {
                    fields.back().push_back('"');
                    ++i;
                } else {
                    quoted = false;
                }
            } else {
                if (c == '\n') ++line;
                fields.back().push_back(c);
            }
        } else if (c == '"' && fields.back().empty()) {
            quoted = true;
        } else if (c == ',') {
            fields.emplace_back();
        } else if (c == '\n') {
            break;
        } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            ++i;
            break;
        } else {
            fields.back().push_back(c);
        }
    }
    if (quoted) return false;
    text.remove_prefix(i < text.size() ? i + 1 : text.size());
    return true;
}

std::string where(std::size_t line) { return "RECORD line " + std::to_string(line) + ": "; }

}  // namespace

result<std::vector<record_row>> parse_record(std::string_view text) {
    std::vector<record_row> rows;
    std::unordered_set<std::string> seen;
    std::vector<std::string> fields;
    std::size_t line = 1;
    while (!text.empty()) {
        const std::size_t row_line = line;
        if (!next_csv_row(text, fields, line)) return invalid(where(row_line) + "a quoted field is never closed");
        ++line;
        if (fields.size() == 1 && fields[0].empty()) continue;  // blank line
        if (fields.size() != 3) {
            return invalid(where(row_line) + "has " + std::to_string(fields.size()) +
                           " fields; each row must be path,hash,size");
        }
        record_row row;
        row.line = row_line;
        row.path = std::move(fields[0]);
        if (row.path.empty()) return invalid(where(row_line) + "has an empty path");

        const std::string& hash = fields[1];
        if (!hash.empty()) {
            const auto equals = hash.find('=');
            // A digest of padding alone ("sha256==") is as empty as none.
            if (equals == std::string::npos || equals == 0 || hash.find_first_not_of('=', equals + 1) == std::string::npos) {
                return invalid(where(row_line) + "the hash of " + row.path + " is \"" + hash +
                               "\"; expected algorithm=digest, as sha256=<urlsafe base64>");
            }
            const std::string_view name(hash.data(), equals);
            const auto algorithm = crypto::algorithm_named(name);
            if (!algorithm || (*algorithm != crypto::hash_algorithm::sha256 && *algorithm != crypto::hash_algorithm::sha384 &&
                               *algorithm != crypto::hash_algorithm::sha512)) {
                return invalid(where(row_line) + row.path + " is hashed with " + std::string(name) +
                               "; wheels must use sha256 or stronger (sha384, sha512)");
            }
            row.algorithm = algorithm;
            std::string_view digest(hash);
            digest.remove_prefix(equals + 1);
            while (digest.ends_with('=')) digest.remove_suffix(1);  // tolerate padding some tools write
            row.digest = std::string(digest);
        }

        const std::string& size = fields[2];
        if (!size.empty()) {
            std::uint64_t value = 0;
            auto [end, code] = std::from_chars(size.data(), size.data() + size.size(), value);
            if (code != std::errc{} || end != size.data() + size.size()) {
                return invalid(where(row_line) + "the size of " + row.path + " is \"" + size +
                               "\"; expected a number of bytes");
            }
            row.size = value;
        }
        if (!seen.insert(row.path).second) return invalid(where(row_line) + "lists " + row.path + " a second time");
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace wheelhouse::ingest
