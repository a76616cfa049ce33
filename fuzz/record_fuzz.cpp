// RECORD (ingest/record). Beside memory safety, for text that parses:
// - the rows written back as CSV (every field quoted, quotes doubled) parse to the same rows;
// - no path is empty or listed twice, and every hash has an algorithm of sha256 or stronger.

#include <set>
#include <string>

#include "fuzz_support.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/ingest/record.hpp"

namespace {

using wheelhouse::ingest::record_row;

std::string quoted(std::string_view field) {
    std::string out = "\"";
    for (char c : field) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string written(const std::vector<record_row>& rows) {
    std::string out;
    for (const auto& row : rows) {
        std::string hash;
        if (row.algorithm) hash = std::string(wheelhouse::crypto::name_of(*row.algorithm)) + "=" + row.digest;
        out += quoted(row.path) + "," + quoted(hash) + "," + (row.size ? std::to_string(*row.size) : "") + "\r\n";
    }
    return out;
}

bool same_rows(const std::vector<record_row>& a, const std::vector<record_row>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i].path != b[i].path || a[i].algorithm != b[i].algorithm || a[i].digest != b[i].digest ||
            a[i].size != b[i].size)
            return false;
    }
    return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto text = wheelhouse::fuzz::as_text(data, size);
    auto parsed = wheelhouse::ingest::parse_record(text);
    if (!parsed) {
        WHEELHOUSE_FUZZ_CHECK(!parsed.error().message.empty(), std::string(text));
        return 0;
    }
    std::set<std::string> paths;
    for (const auto& row : *parsed) {
        WHEELHOUSE_FUZZ_CHECK(!row.path.empty() && paths.insert(row.path).second, row.path);
        if (row.algorithm) {
            using wheelhouse::crypto::hash_algorithm;
            WHEELHOUSE_FUZZ_CHECK(*row.algorithm == hash_algorithm::sha256 || *row.algorithm == hash_algorithm::sha384 ||
                                      *row.algorithm == hash_algorithm::sha512,
                                  row.path);
        }
    }
    const std::string again_text = written(*parsed);
    auto again = wheelhouse::ingest::parse_record(again_text);
    WHEELHOUSE_FUZZ_CHECK(again.has_value(), std::string(text) + " written back as " + again_text + " is refused: " +
                                                 (again ? "" : again.error().message));
    WHEELHOUSE_FUZZ_CHECK(same_rows(*parsed, *again), std::string(text) + " written back as " + again_text);
    return 0;
}
