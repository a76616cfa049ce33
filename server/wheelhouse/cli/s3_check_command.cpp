#include "wheelhouse/cli/s3_check_command.hpp"

#include <CLI/Option.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>

#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/s3/object_client.hpp"

namespace wheelhouse::cli {
namespace {

struct s3_check_options {
    bucket_options bucket;
    std::uint64_t probe_bytes = 64 * 1024;
};

constexpr std::size_t head_bytes = 64 * 1024;  // what the presigned download compares

int fail(std::string_view step, const error& failure) {
    std::fprintf(stderr, "wheelhouse s3-check: %s: %s\n", std::string(step).c_str(), describe(failure).c_str());
    return 1;
}

void passed(const std::string& what) { std::printf("ok  %s\n", what.c_str()); }

std::string rate(std::uint64_t bytes, std::chrono::steady_clock::duration took) {
    const double seconds = std::max(1e-6, std::chrono::duration<double>(took).count());
    char text[64];
    std::snprintf(text, sizeof text, "%.0f MiB/s", static_cast<double>(bytes) / (1 << 20) / seconds);
    return text;
}

// A probe file of random bytes, written a block at a time (a GiB probe is never in memory), so
// no earlier run's copy passes; removed with this object.
struct probe_file {
    std::filesystem::path path;
    std::string sha256;
    std::string head;  // its first head_bytes
    ~probe_file() {
        if (!path.empty()) std::filesystem::remove(path);
    }
};

result<void> write_probe(probe_file& probe, std::uint64_t size) {
    std::mt19937_64 random{std::random_device{}()};
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!hasher) return hasher.error();
    probe.path = std::filesystem::temp_directory_path() /
                 ("wheelhouse-s3-check-" + std::to_string(random()) + "-" + std::to_string(::getpid()));
    std::ofstream out(probe.path, std::ios::binary | std::ios::trunc);
    std::string block(1 << 20, '\0');
    for (std::uint64_t left = size; left > 0;) {
        for (std::size_t at = 0; at + 8 <= block.size(); at += 8) {
            const std::uint64_t word = random();
            std::memcpy(block.data() + at, &word, 8);
        }
        const auto piece = static_cast<std::size_t>(std::min<std::uint64_t>(left, block.size()));
        out.write(block.data(), static_cast<std::streamsize>(piece));
        hasher->update(std::string_view(block.data(), piece));
        if (probe.head.size() < head_bytes) probe.head.append(block.data(), std::min(piece, head_bytes - probe.head.size()));
        left -= piece;
    }
    out.close();
    if (!out) return make_error(error_kind::internal, "cannot write the probe file " + probe.path.string());
    probe.sha256 = hasher->finish_hex();
    return {};
}

// Size, presigned download (of its head), and the store's own check of the signed sha256.
int check_probe(s3::object_client& client, const probe_file& probe, const std::string& key, std::uint64_t size) {
    auto stored = client.look_up(key);
    if (!stored) return fail("reading the probe's size", stored.error());
    // The recorded sha256 may be absent (a store that keeps no user metadata: s3-push then copies
    // every file again on each run), never another.
    if (!*stored || (*stored)->size != size || !((*stored)->sha256.empty() || (*stored)->sha256 == probe.sha256)) {
        return fail("reading the probe's size",
                    make_error(error_kind::upstream, "the store says " + std::to_string(*stored ? (*stored)->size : 0) +
                                                         " bytes, sha256 '" + (*stored ? (*stored)->sha256 : "") + "'"));
    }
    passed((*stored)->sha256.empty() ? "its size reads back (the store keeps no x-amz-meta-sha256)"
                                     : "its size and recorded sha256 read back");
    const std::string range = "bytes=0-" + std::to_string(probe.head.size() - 1);
    auto served = client.get_url(client.presigned_get(key, std::chrono::minutes(5), std::chrono::system_clock::now()), head_bytes + 1, range);
    if (!served) return fail("downloading it by a presigned URL", served.error());
    if (*served != probe.head)
        return fail("downloading it by a presigned URL", make_error(error_kind::upstream, "other bytes came back"));
    passed("a presigned URL serves it without credentials");

    // Only the store's own verdict on the digest proves it checks digests: a 500, a 403 or a
    // dropped connection proves nothing.
    const std::string wrong = client.key_of(".wheelhouse-check/mismatch-" + probe.sha256);
    auto lied = client.try_put_file(wrong, probe.path, crypto::sha256_hex("other bytes"), nullptr);
    if (!lied) return fail("the integrity check", lied.error());
    if (lied->status / 100 == 2) (void)client.remove(wrong);
    if (lied->status != 400 || (lied->code != "XAmzContentSHA256Mismatch" && lied->code != "BadDigest")) {
        return fail("the integrity check",
                    make_error(error_kind::upstream,
                               "use a store that checks x-amz-content-sha256: a body whose sha256 is not the one signed "
                               "was answered HTTP " + std::to_string(lied->status) +
                                   (lied->code.empty() ? "" : " " + lied->code) +
                                   ", not 400 XAmzContentSHA256Mismatch or BadDigest"));
    }
    passed("a body whose sha256 is not the one signed is refused (" + lied->code + ")");
    return 0;
}

int check(const s3_check_options& options) {
    if (auto who = s3::credentials_from(options.bucket.credentials_file); !who) return fail("credentials", who.error());
    auto made = open_bucket(options.bucket);
    if (!made) return fail("settings", made.error());
    auto& client = **made;
    if (auto reached = client.check_bucket(); !reached) return fail("the bucket", reached.error());
    passed("bucket '" + client.settings().bucket + "' at " + client.settings().endpoint + " takes these credentials");

    probe_file probe;
    if (auto written = write_probe(probe, options.probe_bytes); !written) return fail("the probe", written.error());
    const std::string key = client.key_of(".wheelhouse-check/" + probe.sha256);
    const auto started = std::chrono::steady_clock::now();
    if (auto put = client.put_file(key, probe.path, probe.sha256, nullptr); !put) return fail("uploading a probe", put.error());
    const auto took = std::chrono::steady_clock::now() - started;
    // From here on, whichever step fails, the probe does not stay in the bucket.
    struct probe_removal {
        s3::object_client& client;
        const std::string& key;
        bool armed = true;
        ~probe_removal() {
            if (armed) (void)client.remove(key);
        }
    } removal{client, key};
    passed("put " + key + " (" + std::to_string(options.probe_bytes) + " bytes at " +
           rate(options.probe_bytes, took) + ", sha256 checked by the store)");
    if (int failed = check_probe(client, probe, key, options.probe_bytes)) return failed;

    removal.armed = false;
    if (auto removed = client.remove(key); !removed) return fail("removing the probe", removed.error());
    auto gone = client.look_up(key);
    if (!gone || *gone) return fail("removing the probe", make_error(error_kind::upstream, "it is still there"));
    passed("the probe is removed; the bucket will do");
    return 0;
}

}  // namespace

void add_s3_check_command(CLI::App& app) {
    auto options = std::make_shared<s3_check_options>();
    auto* command = app.add_subcommand("s3-check", "Check that an S3-compatible bucket will do for the blob store; "
                                                   "credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY "
                                                   "or --s3-credentials-file, never from the command line");
    add_bucket_options(*command, options->bucket);
    command->add_option("--probe-size", options->probe_bytes, "Bytes of the probe object; a large one measures the "
                                                              "upload rate (at most 5 GiB, S3's limit for one PUT)")
        ->capture_default_str()
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{5} << 30));
    command->callback([options] { set_exit_status(check(*options)); });
}

}  // namespace wheelhouse::cli
