#include "wheelhouse/cli/s3_check_command.hpp"

#include <CLI/Option.hpp>

#include <cstdio>
#include <fstream>
#include <random>

#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/s3/object_client.hpp"

namespace wheelhouse::cli {
namespace {

struct s3_check_options {
    s3::bucket_settings bucket;
    std::string credentials_file;
    unsigned timeout_seconds = 30;
};

std::string random_bytes(std::size_t count) {
    std::random_device device;
    std::string bytes(count, '\0');
    for (auto& byte : bytes) byte = static_cast<char>(device() & 0xff);
    return bytes;
}

int fail(std::string_view step, const error& failure) {
    std::fprintf(stderr, "wheelhouse s3-check: %s: %s\n", std::string(step).c_str(), describe(failure).c_str());
    return 1;
}

void passed(const std::string& what) { std::printf("ok  %s\n", what.c_str()); }

int check(s3_check_options options) {
    auto who = s3::credentials_from(options.credentials_file);
    if (!who) return fail("credentials", who.error());
    options.bucket.who = std::move(*who);
    options.bucket.timeout = std::chrono::seconds(options.timeout_seconds);
    auto made = s3::object_client::create(options.bucket);
    if (!made) return fail("settings", made.error());
    auto& client = **made;
    const auto& bucket = client.settings().bucket;

    if (auto reached = client.check_bucket(); !reached) return fail("the bucket", reached.error());
    passed("bucket '" + bucket + "' at " + client.settings().endpoint + " takes these credentials");

    // A probe object beside the store's keys, its bytes random so no earlier run's copy passes.
    const std::string body = random_bytes(64 * 1024);
    const std::string sha256 = crypto::sha256_hex(body);
    const std::string key = client.key_of(".wheelhouse-check/" + sha256);
    const auto file = std::filesystem::temp_directory_path() / ("wheelhouse-s3-check-" + sha256.substr(0, 16));
    std::ofstream(file, std::ios::binary) << body;
    struct cleanup {
        std::filesystem::path path;
        ~cleanup() { std::filesystem::remove(path); }
    } remove_file{file};

    if (auto put = client.put_file(key, file, sha256); !put) return fail("uploading a probe", put.error());
    // From here on, whichever step fails, the probe does not stay in the bucket.
    struct probe_removal {
        s3::object_client& client;
        const std::string& key;
        bool armed = true;
        ~probe_removal() {
            if (armed) (void)client.remove(key);
        }
    } removal{client, key};
    passed("put " + key + " (" + std::to_string(body.size()) + " bytes, sha256 checked by the store)");
    auto size = client.size_of(key);
    if (!size) return fail("reading the probe's size", size.error());
    if (*size != body.size())
        return fail("reading the probe's size", make_error(error_kind::upstream, "the store says " +
                                                               std::to_string(size->value_or(0)) + " bytes"));
    passed("its size reads back");
    auto served = client.get_url(client.presigned_get(key, std::chrono::minutes(5)), body.size() + 1);
    if (!served) return fail("downloading it by a presigned URL", served.error());
    if (*served != body)
        return fail("downloading it by a presigned URL", make_error(error_kind::upstream, "other bytes came back"));
    passed("a presigned URL serves it without credentials");

    const std::string wrong = client.key_of(".wheelhouse-check/mismatch-" + sha256);
    if (auto lied = client.put_file(wrong, file, crypto::sha256_hex("other bytes")); lied) {
        (void)client.remove(wrong);
        return fail("the integrity check", make_error(error_kind::upstream,
                                                      "the store took a body whose sha256 is not the one signed; "
                                                      "wheelhouse relies on the store refusing it"));
    } else {
        passed("a body whose sha256 is not the one signed is refused (" + lied.error().message + ")");
    }

    removal.armed = false;
    if (auto removed = client.remove(key); !removed) return fail("removing the probe", removed.error());
    auto gone = client.size_of(key);
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
    command->add_option("--s3-endpoint", options->bucket.endpoint, "The store's base URL: https://s3.example.com")
        ->required();
    command->add_option("--s3-bucket", options->bucket.bucket, "The bucket")->required();
    command->add_option("--s3-region", options->bucket.region, "The region the signature names")
        ->capture_default_str();
    command->add_option("--s3-prefix", options->bucket.prefix, "Where in the bucket the keys go, e.g. wheelhouse/");
    command->add_option("--s3-ca-bundle", options->bucket.ca_bundle, "PEM file of the CAs an https endpoint is checked "
                                                                     "against (default: the system's)");
    command->add_option("--s3-credentials-file", options->credentials_file,
                        "An AWS credentials file (aws_access_key_id = ..., its first profile)");
    command->add_option("--s3-timeout", options->timeout_seconds, "Seconds each connect, send or read may take")
        ->capture_default_str()
        ->check(CLI::Range(1u, 3600u));
    command->callback([options] { set_exit_status(check(*options)); });
}

}  // namespace wheelhouse::cli
