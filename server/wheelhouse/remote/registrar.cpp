#include "wheelhouse/remote/registrar.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/distribution/file_name.hpp"
#include "wheelhouse/ingest/range_cache.hpp"
#include "wheelhouse/ingest/wheel_validation.hpp"
#include "wheelhouse/ingest/zip_tail.hpp"
#include "wheelhouse/pep427/wheel_filename.hpp"
#include "wheelhouse/remote/github_release.hpp"
#include "wheelhouse/storage/blob_store.hpp"
#include "wheelhouse/text/ascii.hpp"

namespace wheelhouse::remote {
namespace {

struct content_range {
    std::uint64_t first = 0;
    std::uint64_t last = 0;
    std::uint64_t total = 0;
};

// "bytes 100-199/1000"
std::optional<content_range> parse_content_range(std::string_view text) {
    if (!text.starts_with("bytes ")) return std::nullopt;
    text.remove_prefix(6);
    content_range range;
    const char* at = text.data();
    const char* end = text.data() + text.size();
    auto read = [&](std::uint64_t& value, char stop) {
        auto [next, code] = std::from_chars(at, end, value);
        if (code != std::errc{} || (stop != '\0' && (next == end || *next != stop)) || (stop == '\0' && next != end)) {
            return false;
        }
        at = stop == '\0' ? next : next + 1;
        return true;
    };
    if (!read(range.first, '-') || !read(range.last, '/') || !read(range.total, '\0')) return std::nullopt;
    if (range.first > range.last || range.last >= range.total) return std::nullopt;
    return range;
}

using text::to_lower;

// An upstream answer that is not the asset: the status says whose fault it is.
error status_error(unsigned status, std::string_view url) {
    const std::string where = "the asset URL " + std::string(url);
    if (status == 404 || status == 410) {
        return invalid(where + " answered " + std::to_string(status) +
                       ": there is no such asset, or it is a private repository's, which needs a GitHub token that "
                       "can read it (--github-token); check the URL");
    }
    if (status == 401 || status == 403) {
        return invalid(where + " answered " + std::to_string(status) +
                       ": the asset is not public; a private repository's asset needs a GitHub token that can read "
                       "it (--github-token)");
    }
    return make_error(error_kind::upstream, where + " answered " + std::to_string(status) + "; try again later");
}

// Per registration: the asset's requests and what they transferred.
class asset_reader {
public:
    // `url` names the asset and is read first, without credentials. Only when it refuses them
    // (a private repository's asset) are the bytes read from `api_url` with `api_headers` (the
    // asset's API URL and the token): an API download counts against the token's rate limit,
    // so a public asset must never be proxied through it.
    asset_reader(http_client& client, std::string url, std::string api_url, header_list api_headers)
        : client_(client), url_(std::move(url)), fetch_url_(url_), api_url_(std::move(api_url)),
          api_headers_(std::move(api_headers)) {}

    // The final bytes and the total size, from a suffix Range request.
    result<std::pair<std::uint64_t, std::string>> probe_tail(std::uint64_t tail_size) {
        const auto suffix = "bytes=-" + std::to_string(tail_size);
        auto response = ranged(tail_size, suffix, fetch_url_, headers_);
        if (!response && use_api_after_refusal()) response = ranged(tail_size, suffix, fetch_url_, headers_);
        if (!response) {
            if (response.error().kind == error_kind::too_large) {
                ignored_range_ = true;
                return make_error(error_kind::upstream,
                                  "the server of " + url_ + " ignored the Range request and began sending the whole "
                                  "file (200, not 206): with a digest given, the wheel's parts are not worth "
                                  "downloading all of it. Register it without --sha256 (it is then read once, whole, "
                                  "and checked as an upload), from a host that supports Range requests, or upload it");
            }
            return response.error();
        }
        // Later ranges go straight to where the redirects led (GitHub's signed storage URL).
        read_url_ = response->final_url.empty() ? url_ : response->final_url;
        if (response->status == 200) {  // a small file sent whole: that is the asset
            const auto size = response->body.size();
            total_ = size;
            return std::pair{std::uint64_t{size}, std::move(response->body)};
        }
        auto range = parse_content_range(response->header("content-range"));
        if (!range || range->last + 1 != range->total || response->body.size() != range->last - range->first + 1) {
            return make_error(error_kind::upstream, "the server of " + url_ + " answered the Range request with " +
                                                        "Content-Range \"" + std::string(response->header("content-range")) +
                                                        "\" and " + std::to_string(response->body.size()) +
                                                        " bytes, which do not describe the file's end");
        }
        total_ = range->total;
        return std::pair{range->total, std::move(response->body)};
    }

    result<std::string> read(std::uint64_t offset, std::uint64_t length) {
        const auto last = offset + length - 1;
        auto response = ranged(length, "bytes=" + std::to_string(offset) + "-" + std::to_string(last), read_url_, {});
        if (!response) return response.error();
        auto range = parse_content_range(response->header("content-range"));
        if (response->status != 206 || !range || range->first != offset || range->last != last ||
            range->total != total_ || response->body.size() != length) {
            return make_error(error_kind::upstream,
                              "the server of " + url_ + " answered a request for bytes " + std::to_string(offset) + "-" +
                                  std::to_string(last) + " with status " + std::to_string(response->status) +
                                  " and Content-Range \"" + std::string(response->header("content-range")) +
                                  "\": it does not serve the ranges it was asked for, or the file changed");
        }
        return std::move(response->body);
    }

    // One pass over the whole asset: its sha256 and size; each chunk also goes to `copy`. More
    // than `limit` bytes, announced or sent, stop it with too_large before they are read.
    result<std::pair<std::string, std::uint64_t>> hash_all(std::uint64_t limit, const body_chunk_sink& copy = {}) {
        auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
        if (!hasher) return hasher.error();
        std::uint64_t size = 0;
        last_status_ = 0;  // until the answer's head arrives
        fetch_request request;
        request.url = fetch_url_;
        request.headers = headers_;
        // "<url> announces N bytes": the caller says whose limit it is.
        const auto past_limit = [&](const std::string& what) { return make_error(error_kind::too_large, url_ + " " + what); };
        auto response = client_.fetch_to(
            request,
            [&](std::span<const char> chunk) -> result<void> {
                size += chunk.size();
                if (size > limit) return past_limit("sent more than " + std::to_string(limit) + " bytes");
                hasher->update(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(chunk.data()), chunk.size()));
                if (copy) return copy(chunk);
                return {};
            },
            [&](const fetch_response& head) -> result<void> {
                last_status_ = head.status;
                if (head.status != 200) return status_error(head.status, url_);
                const auto announced = head.header("content-length");
                std::uint64_t length = 0;
                const auto [end, code] = std::from_chars(announced.data(), announced.data() + announced.size(), length);
                if (code == std::errc{} && end == announced.data() + announced.size() && length > limit)
                    return past_limit("announces " + std::string(announced) + " bytes");
                return {};
            });
        ++requests_;
        if (!response) {
            bytes_ += size;  // what arrived before it stopped: a report of the traffic, not of success
            return response.error();
        }
        bytes_ += response->bytes_read;
        if (response->status != 200) return status_error(response->status, url_);
        return std::pair{hasher->finish_hex(), size};
    }

    // After the asset's URL refused a request without credentials: whether there is the API
    // URL to read it from instead, which later requests then use.
    bool use_api_after_refusal() {
        const bool refused = last_status_ == 401 || last_status_ == 403 || last_status_ == 404;
        if (!refused || api_url_.empty() || fetch_url_ == api_url_) return false;
        fetch_url_ = api_url_;
        headers_ = api_headers_;
        return true;
    }

    // Where the bytes came from when that was not the asset's own URL: the API URL to keep.
    std::string api_url_used() const { return fetch_url_ == url_ ? std::string() : fetch_url_; }
    bool ignored_range() const noexcept { return ignored_range_; }
    std::uint64_t bytes() const noexcept { return bytes_; }
    std::uint64_t requests() const noexcept { return requests_; }

private:
    result<fetch_response> ranged(std::uint64_t length, std::string range, const std::string& url,
                                  const header_list& headers) {
        fetch_request request;
        request.url = url;
        request.headers = headers;
        request.headers.emplace_back("Range", std::move(range));
        request.headers.emplace_back("Accept-Encoding", "identity");
        request.max_body = length;
        auto response = client_.fetch(request);
        ++requests_;
        last_status_ = response ? response->status : 0;
        if (!response) return response.error();
        bytes_ += response->bytes_read;
        if (response->status != 206 && response->status != 200) return status_error(response->status, url_);
        return response;
    }

    http_client& client_;
    std::string url_;
    std::string fetch_url_;
    header_list headers_;
    std::string api_url_;
    header_list api_headers_;
    unsigned last_status_ = 0;
    std::string read_url_;
    std::uint64_t total_ = 0;
    bool ignored_range_ = false;
    std::uint64_t bytes_ = 0;
    std::uint64_t requests_ = 0;
};

struct listed_asset {
    repository_name repository;
    release_asset asset;
};

// GitHub's record of the release asset that `url` downloads: its size, digest and id. nullopt
// for a URL that is no release download, or an asset its release does not list.
result<std::optional<listed_asset>> find_listed_asset(github_api& github, const std::string& url) {
    auto download = parse_release_download_url(url, github.settings().api_url);
    if (!download) return std::optional<listed_asset>();
    auto found = github.release_by_tag(download->repository, download->tag);
    if (!found) return found.error();
    for (auto& asset : found->assets) {
        if (asset.name == download->filename)
            return std::optional<listed_asset>(listed_asset{download->repository, std::move(asset)});
    }
    return std::optional<listed_asset>();
}

// The report of a refusal: what was wrong.
registration_report rejected(registration_report report, error failure) {
    report.outcome = registration_outcome::rejected;
    report.failure = std::move(failure);
    return report;
}

// What the asset's requests transferred so far, for the report whatever its outcome.
void record_traffic(const asset_reader& reader, registration_report& report) {
    report.bytes_transferred = reader.bytes();
    report.requests = reader.requests();
}

// What is refused before any request to the host: the mode, the URL's filename and host, the
// digest's spelling. The report takes the filename and the digest.
result<distribution::archive_name> check_request(const registration_request& request, const host_policy& policy,
                                                 registration_report& report) {
    if (report.mode == catalog::download_mode::local) {
        return invalid("mode 'local' is for uploaded files; a remote asset is served by redirect, proxy or cache");
    }
    auto filename = url_filename(request.url);
    if (!filename) return filename.error();
    report.filename = *filename;
    auto name = distribution::parse_archive_name(*filename);
    if (!name) {
        return invalid("the URL must end in a wheel's or an sdist's filename (PEP 427, PEP 625): " +
                       name.error().message);
    }
    if (auto allowed = policy.check_url(request.url); !allowed) return allowed.error();
    if (request.sha256) {
        if (!crypto::is_sha256_hex(to_lower(*request.sha256))) {
            return invalid("sha256 \"" + *request.sha256 + "\" is not 64 hexadecimal digits");
        }
        report.sha256 = to_lower(*request.sha256);
        report.sha256_source = request.sha256_source;
    }
    return name;
}

// Where the reader goes when the asset's URL refuses it, and GitHub's record of the asset when
// it was asked.
struct asset_source {
    std::string fetch_url;
    header_list fetch_headers;
    std::optional<listed_asset> listed;
    bool asked_github = false;
};

// With a token the asset may be a private repository's, whose bytes come only through the
// API: its id names it there (the reader goes there only if the asset's URL refuses it).
// GitHub's record then also gives the digest (take_github_digest).
result<asset_source> find_source(github_api& github, const registration_request& request) {
    asset_source source{request.fetch_url, request.fetch_headers, std::nullopt, false};
    if (!source.fetch_url.empty() || !request.ask_github || github.settings().token.empty()) return source;
    auto found = find_listed_asset(github, request.url);
    if (!found) return found.error();
    source.asked_github = true;
    source.listed = std::move(*found);
    if (source.listed) {
        const auto& listed = *source.listed;
        source.fetch_url = release_asset_api_url(github.settings().api_url, listed.repository, listed.asset.id);
        source.fetch_headers = asset_download_headers(github.settings().token);
    }
    return source;
}

// The whole asset, read once into a spool file as it is hashed; its size is unknown until then,
// so the upload limit bounds the spool. The report takes the size; the sha256 is returned.
struct spooled_asset {
    storage::spool_file spool;
    std::string sha256;
};

result<spooled_asset> spool_whole(asset_reader& reader, const storage::blob_store& store,
                                  const registrar_settings& settings, registration_report& report) {
    auto spool = store.create_spool();
    if (!spool) return spool.error();
    const auto copy_into_spool = [&]() {
        std::ofstream out(spool->path(), std::ios::binary | std::ios::trunc);
        auto hashed = reader.hash_all(settings.max_file_bytes, [&](std::span<const char> chunk) -> result<void> {
            out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
            if (!out) return make_error(error_kind::internal, "writing " + spool->path().string() + " failed");
            return {};
        });
        out.close();
        return hashed;
    };
    auto hashed = copy_into_spool();
    if (!hashed && reader.use_api_after_refusal()) hashed = copy_into_spool();
    record_traffic(reader, report);
    if (!hashed && hashed.error().kind == error_kind::too_large) {
        return make_error(error_kind::too_large, "the whole asset has to be read, but " + hashed.error().message +
                                                     ": more than this index takes for a file (max-upload-size: " +
                                                     std::to_string(settings.max_file_bytes) +
                                                     " bytes, as for uploads); nothing was registered");
    }
    if (!hashed) return hashed.error();
    report.size = hashed->second;
    return spooled_asset{std::move(*spool), std::move(hashed->first)};
}

// For a host that ignores Range requests when no digest is given: the whole asset has to be
// read for its sha256 anyway, so it is read once and checked as an upload is checked (RECORD's
// hashes included). The report takes the digest and the size.
result<ingest::validated_wheel> validate_whole(asset_reader& reader, const storage::blob_store& store,
                                               const registrar_settings& settings, const pep427::wheel_filename& wheel,
                                               registration_report& report) {
    auto spooled = spool_whole(reader, store, settings, report);
    if (!spooled) return spooled.error();
    report.sha256 = spooled->sha256;
    report.sha256_source = digest_source::computed;
    return ingest::validate_wheel(spooled->spool.path(), wheel, settings.limits);
}

// The wheel's directory and dist-info files by Range requests, those in the probed `tail`
// served from it. The report takes the size.
result<ingest::validated_wheel> validate_by_ranges(asset_reader& reader,
                                                   result<std::pair<std::uint64_t, std::string>> tail,
                                                   const pep427::wheel_filename& wheel,
                                                   const ingest::archive_limits& limits, registration_report& report) {
    if (!tail) {
        record_traffic(reader, report);
        return tail.error();
    }
    report.size = tail->first;
    ingest::range_cache cache(report.size, [&](std::uint64_t offset, std::uint64_t length) { return reader.read(offset, length); });
    const std::uint64_t tail_offset = report.size - tail->second.size();
    cache.seed(tail_offset, std::move(tail->second));
    auto validated = ingest::validate_remote_wheel(cache, wheel, limits);
    record_traffic(reader, report);
    return validated;
}

// GitHub's digest for a release asset it lists (asked now unless find_source asked already);
// a size other than the download's refuses the asset.
result<void> take_github_digest(github_api& github, asset_source& source, const std::string& url,
                                registration_report& report) {
    if (!source.asked_github) {
        auto found = find_listed_asset(github, url);
        if (!found) return found.error();
        source.listed = std::move(*found);
    }
    if (!source.listed) return {};
    const auto& asset = source.listed->asset;
    if (asset.size != report.size) {
        return make_error(error_kind::upstream, "GitHub's API says " + asset.name + " is " + std::to_string(asset.size) +
                                                    " bytes, but its download is " + std::to_string(report.size) +
                                                    " bytes; was the asset replaced? Try again");
    }
    if (asset.sha256) {
        report.sha256 = *asset.sha256;
        report.sha256_source = digest_source::github_api;
    }
    return {};
}

// The digest of the asset's bytes held to the one known, if any; without one it is the report's.
result<void> settle_digest(const std::string& computed, registration_report& report) {
    if (!report.sha256.empty() && computed != report.sha256) {
        return invalid("the asset's bytes hash to sha256 " + computed + ", but the digest from " +
                       std::string(to_string(report.sha256_source)) + " is " + report.sha256 +
                       ": the asset is not what its digest says; nothing was registered");
    }
    if (report.sha256.empty()) report.sha256_source = digest_source::computed;
    report.sha256 = computed;
    return {};
}

// One streamed pass over the asset, held to the size its Range answers gave and to the digest
// when one is known; without one, the pass gives it.
result<void> hash_and_compare(asset_reader& reader, registration_report& report) {
    auto hashed = reader.hash_all(report.size);
    record_traffic(reader, report);
    if (!hashed && hashed.error().kind == error_kind::too_large) {
        return make_error(error_kind::upstream, hashed.error().message + ", but its Range answers said " +
                                                    std::to_string(report.size) +
                                                    "; it changed or the server lies; nothing was registered");
    }
    if (!hashed) return hashed.error();
    if (hashed->second != report.size) {
        return make_error(error_kind::upstream, "the asset's download held " + std::to_string(hashed->second) +
                                                    " bytes, but its Range answers said " + std::to_string(report.size) +
                                                    "; it changed or the server lies");
    }
    return settle_digest(hashed->first, report);
}

// An sdist is a gzip stream, with no end to read first as a wheel's zip has: it is read once,
// whole, held to the digest given or GitHub's, and checked as an upload is (each tar member as
// Python's tarfile would extract it, PKG-INFO against the filename).
result<ingest::validated_sdist> validate_sdist_whole(asset_reader& reader, github_api& github, asset_source& source,
                                                     const registration_request& request,
                                                     const registrar_settings& settings,
                                                     const storage::blob_store& store,
                                                     const pep625::sdist_filename& sdist, registration_report& report) {
    auto spooled = spool_whole(reader, store, settings, report);
    if (!spooled) return spooled.error();
    if (report.sha256.empty() && request.ask_github) {
        if (auto taken = take_github_digest(github, source, request.url, report); !taken) return taken.error();
    }
    if (auto settled = settle_digest(spooled->sha256, report); !settled) return settled.error();
    return ingest::validate_sdist(spooled->spool.path(), sdist, settings.limits);
}

}  // namespace

std::string_view to_string(registration_outcome outcome) noexcept {
    switch (outcome) {
        case registration_outcome::added: return "added";
        case registration_outcome::present: return "present";
        case registration_outcome::rejected: return "rejected";
    }
    return "rejected";
}

std::string_view to_string(digest_source source) noexcept {
    switch (source) {
        case digest_source::none: return "none";
        case digest_source::request: return "request";
        case digest_source::github_api: return "github_api";
        case digest_source::computed: return "computed";
    }
    return "none";
}

registration_report registrar::register_asset(const registration_request& request) {
    registration_report report;
    report.url = request.url;
    report.mode = request.mode.value_or(settings_.default_mode);
    auto name = check_request(request, client_.settings().policy, report);
    if (!name) return rejected(std::move(report), name.error());
    // Already there: answered before any request to the host (unless asked to verify).
    if (!report.sha256.empty() && !request.verify) {
        auto existing = ingester_.find_existing(report.filename, report.sha256);
        if (!existing) return rejected(std::move(report), existing.error());
        if (*existing) {
            report.outcome = registration_outcome::present;
            report.size = (*existing)->file.size;
            report.mode = (*existing)->file.mode;
            report.file = std::move((*existing)->file);
            return report;
        }
    }
    auto source = find_source(github_, request);
    if (!source) return rejected(std::move(report), source.error());

    asset_reader reader(client_, request.url, source->fetch_url, source->fetch_headers);
    if (const auto* sdist = std::get_if<pep625::sdist_filename>(&*name)) {
        auto validated = validate_sdist_whole(reader, github_, *source, request, settings_, ingester_.store(), *sdist, report);
        if (!validated) return rejected(std::move(report), validated.error());
        return finish(std::move(report), *sdist, *validated, request, reader.api_url_used());
    }
    const auto* wheel = &std::get<pep427::wheel_filename>(*name);
    // A little past the largest end a zip can have (libzip reads one byte more than the end
    // records), so that one request usually holds the directory and the dist-info files too.
    constexpr std::uint64_t probe_size = ingest::zip_tail_size + 4096;
    auto tail = reader.probe_tail(probe_size);
    if (!tail && reader.ignored_range() && report.sha256.empty()) {
        auto whole = validate_whole(reader, ingester_.store(), settings_, *wheel, report);
        if (!whole) return rejected(std::move(report), whole.error());
        return finish(std::move(report), *wheel, *whole, request, reader.api_url_used());
    }
    auto validated = validate_by_ranges(reader, std::move(tail), *wheel, settings_.limits, report);
    if (!validated) return rejected(std::move(report), validated.error());

    // The digest: given, else GitHub's for a release asset, else the bytes themselves.
    if (report.sha256.empty() && request.ask_github) {
        if (auto taken = take_github_digest(github_, *source, request.url, report); !taken)
            return rejected(std::move(report), taken.error());
    }
    if (report.sha256.empty() || request.verify) {
        if (auto hashed = hash_and_compare(reader, report); !hashed) return rejected(std::move(report), hashed.error());
    }
    return finish(std::move(report), *wheel, *validated, request, reader.api_url_used());
}

template <class ArchiveName, class Validated>
registration_report registrar::finish(registration_report report, const ArchiveName& name, const Validated& validated,
                                      const registration_request& request, const std::string& fetch_url) {
    ingest::remote_file remote;
    remote.url = request.url;
    if (!fetch_url.empty()) remote.fetch_url = fetch_url;
    remote.mode = report.mode;
    remote.sha256 = report.sha256;
    remote.size = report.size;
    remote.uploaded_by = request.actor;
    remote.in_same_commit = request.in_same_commit;
    auto registered = ingester_.register_remote(name, validated, remote);
    if (!registered) return rejected(std::move(report), registered.error());
    report.outcome = registered->outcome == ingest::ingest_outcome::created ? registration_outcome::added
                                                                             : registration_outcome::present;
    report.mode = registered->file.mode;
    report.file = std::move(registered->file);
    return report;
}

}  // namespace wheelhouse::remote
