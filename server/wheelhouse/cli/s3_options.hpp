#pragma once
// The options every command that talks to a bucket takes (s3-check, s3-push), and the client
// they make. Credentials come from the environment or --s3-credentials-file, never the command
// line, where `ps` shows them.

#include <CLI/App.hpp>

#include <memory>
#include <string>

#include "wheelhouse/result.hpp"
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

}  // namespace wheelhouse::cli
