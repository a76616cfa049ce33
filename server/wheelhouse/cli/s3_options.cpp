#include "wheelhouse/cli/s3_options.hpp"

#include <CLI/Option.hpp>

namespace wheelhouse::cli {

void add_bucket_options(CLI::App& command, bucket_options& options) {
    command.add_option("--s3-endpoint", options.bucket.endpoint, "The store's base URL: https://s3.example.com")
        ->required();
    command.add_option("--s3-bucket", options.bucket.bucket, "The bucket")->required();
    command.add_option("--s3-region", options.bucket.region, "The region the signature names")->capture_default_str();
    command.add_option("--s3-prefix", options.bucket.prefix, "Where in the bucket the keys go, e.g. wheelhouse/");
    command.add_option("--s3-ca-bundle", options.bucket.ca_bundle,
                       "PEM file of the CAs an https endpoint is checked against (default: the system's)");
    command.add_option("--s3-credentials-file", options.credentials_file,
                       "An AWS credentials file (aws_access_key_id = ..., its first profile)");
    command.add_option("--s3-timeout", options.timeout_seconds, "Seconds each connect, send or read may take")
        ->capture_default_str()
        ->check(CLI::Range(1u, 3600u));
}

result<std::unique_ptr<s3::object_client>> open_bucket(bucket_options options) {
    auto who = s3::credentials_from(options.credentials_file);
    if (!who) return who.error();
    options.bucket.who = std::move(*who);
    options.bucket.timeout = std::chrono::seconds(options.timeout_seconds);
    return s3::object_client::create(std::move(options.bucket));
}

result<std::shared_ptr<s3::bucket_blobs>> bucket_of(const config::settings& settings) {
    if (settings.s3_endpoint.empty()) {
        if (!settings.s3_bucket.empty()) return invalid("give --s3-endpoint with --s3-bucket: the store's base URL");
        return std::shared_ptr<s3::bucket_blobs>();
    }
    auto who = s3::credentials_from(settings.s3_credentials_file);
    if (!who) return who.error();
    s3::bucket_settings bucket{settings.s3_endpoint, settings.s3_region, settings.s3_bucket, settings.s3_prefix,
                               settings.s3_ca_bundle, std::move(*who), settings.s3_timeout};
    auto client = s3::object_client::create(std::move(bucket));
    if (!client) return client.error();
    if (auto usable = (*client)->check_bucket(); !usable) return usable.error();
    return std::make_shared<s3::bucket_blobs>(std::move(*client), nullptr);
}

}  // namespace wheelhouse::cli
