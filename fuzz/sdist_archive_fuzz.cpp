// Source distribution archives (ingest/sdist_archive). The input is read twice: gzipped here,
// as the tar stream inside an sdist (so the fuzzer works on tar headers, pax records, names and
// links rather than on deflate), and as it is, as a .tar.gz (gzip framing, truncation, trailing
// bytes). Beside memory safety, whatever is accepted:
// - stays within the limits it was given (members, PKG-INFO size, bytes inflated);
// - has one top-level directory, and PKG-INFO no larger than the limit;
// - read from the gzipped tar, was inflated to exactly the input: nothing after the end marker
//   is left unread, and nothing is invented.

#include <zlib.h>

#include <cstdlib>
#include <span>
#include <string>

#include "archive_limits.hpp"
#include "fuzz_support.hpp"
#include "wheelhouse/ingest/sdist_archive.hpp"

namespace {

namespace ingest = wheelhouse::ingest;

const auto& limits = wheelhouse::fuzz::small_archive_limits;

std::string gzip(std::string_view bytes) {
    z_stream stream{};
    if (deflateInit2(&stream, 1, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK) std::abort();
    std::string out(deflateBound(&stream, static_cast<uLong>(bytes.size())) + 64, '\0');
    stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
    stream.avail_in = static_cast<uInt>(bytes.size());
    stream.next_out = reinterpret_cast<Bytef*>(out.data());
    stream.avail_out = static_cast<uInt>(out.size());
    if (deflate(&stream, Z_FINISH) != Z_STREAM_END) std::abort();
    out.resize(stream.total_out);
    deflateEnd(&stream);
    return out;
}

wheelhouse::result<ingest::sdist_archive> read(std::string_view bytes) {
    return ingest::read_sdist_archive(std::span(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()),
                                      limits);
}

void check_within_limits(const ingest::sdist_archive& archive, std::string_view input) {
    const std::string shown(input.substr(0, 200));
    WHEELHOUSE_FUZZ_CHECK(archive.entry_count >= 1 && archive.entry_count <= limits.max_entries, shown);
    WHEELHOUSE_FUZZ_CHECK(archive.pkg_info.size() <= limits.max_metadata_size, shown);
    WHEELHOUSE_FUZZ_CHECK(archive.uncompressed_size <= limits.max_total_uncompressed, shown);
    WHEELHOUSE_FUZZ_CHECK(!archive.root.empty() && archive.root.find('/') == std::string::npos, archive.root);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto tar = wheelhouse::fuzz::as_text(data, size);
    if (auto archive = read(gzip(tar))) {
        check_within_limits(*archive, tar);
        WHEELHOUSE_FUZZ_CHECK(archive->uncompressed_size == tar.size(),
                              std::to_string(archive->uncompressed_size) + " of " + std::to_string(tar.size()));
    }
    if (auto archive = read(tar)) check_within_limits(*archive, tar);
    return 0;
}
