#pragma once
// The options every command that talks to a bucket takes (s3-check, s3-push), and the client
// they make. Credentials come from the environment or --s3-credentials-file, never the command
// line, where `ps` shows them.

#include <CLI/App.hpp>

#include <memory>
#include <string>

#include "wheelhouse/result.hpp"
#include "wheelhouse/config/settings.hpp"
#include "wheelhouse/s3/bucket_blobs.hpp"
#include "wheelhouse/s3/object_client.hpp"

namespace wheelhouse::cli {

struct bucket_options {
    s3::bucket_settings bucket;
    std::string credentials_file;
    unsigned timeout_seconds = 30;
};

void add_bucket_options(CLI::App& command, bucket_options& options);

// The client of the bucket the options name, its credentials read; no request made.
result<std::unique_ptr<s3::object_client>> open_bucket(bucket_options options);

// The bucket that holds the index's own files by the settings (--s3-endpoint and the rest), its
// credentials read and its access checked now, so a wrong key stops a command or the server at
// its start; null when --s3-endpoint is not given.
result<std::shared_ptr<s3::bucket_blobs>> bucket_of(const config::settings& settings);

}  // namespace wheelhouse::cli
