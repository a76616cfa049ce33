#include "wheelhouse/cli/s3_push_command.hpp"

#include <cstdio>
#include <fstream>
#include <iterator>

#include "wheelhouse/cli/commands.hpp"
#include "wheelhouse/cli/data_option.hpp"
#include "wheelhouse/cli/existing_data.hpp"
#include "wheelhouse/cli/s3_options.hpp"
#include "wheelhouse/crypto/hasher.hpp"
#include "wheelhouse/error_text.hpp"
#include "wheelhouse/storage/blob_path.hpp"

namespace wheelhouse::cli {
namespace {

struct s3_push_options {
    std::string data;
    bucket_options bucket;
};

struct push_counts {
    std::size_t copied = 0;
    std::uint64_t bytes = 0;
    std::size_t present = 0;
    std::size_t refused = 0;
};

int fail(const error& failure) {
    std::fprintf(stderr, "wheelhouse s3-push: %s\n", describe(failure).c_str());
    return failure.kind == error_kind::internal ? 2 : 1;
}

// A blob's sha256 is its name; a .metadata file's is computed (it is small).
result<std::string> sha256_of(const std::filesystem::path& file, const storage::blob_path_parts& parts) {
    if (!parts.metadata) return parts.sha256;
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!in.eof() && in.fail()) return make_error(error_kind::internal, "cannot read " + file.string());
    return crypto::sha256_hex(bytes);
}

// One file: skipped when the bucket has it at this size, else put. A refusal by the store is
// counted and reported (a local file that no longer matches its name); a failure to reach it
// ends the run.
result<void> push_one(s3::object_client& client, const std::filesystem::path& file, const std::string& relative,
                      const storage::blob_path_parts& parts, push_counts& counts) {
    std::error_code gone;
    const std::uint64_t size = std::filesystem::file_size(file, gone);
    if (gone) return {};  // removed meanwhile (a file deleted through the running server)
    const std::string key = client.key_of(relative);
    auto there = client.size_of(key);
    if (!there) return there.error();
    if (*there == size) return (++counts.present, result<void>{});
    auto sha256 = sha256_of(file, parts);
    if (!sha256) return sha256.error();
    auto put = client.try_put_file(key, file, *sha256);
    if (!put) return put.error();
    if (!put->refusal) {
        ++counts.copied;
        counts.bytes += size;
        return {};
    }
    if (put->status / 100 != 4) return *put->refusal;  // the store failing, not this file
    ++counts.refused;
    std::fprintf(stderr, "wheelhouse s3-push: %s was refused (%s): run wheelhouse fsck --data on this folder\n",
                 relative.c_str(), put->code.empty() ? ("HTTP " + std::to_string(put->status)).c_str() : put->code.c_str());
    return {};
}

int push(const s3_push_options& options) {
    auto data = open_existing_data(options.data);
    if (!data) return fail(data.error());
    auto client = open_bucket(options.bucket);
    if (!client) return fail(client.error());
    if (auto reached = (*client)->check_bucket(); !reached) return fail(reached.error());

    const auto root = std::filesystem::path(options.data);
    push_counts counts;
    std::error_code walk_error;
    for (std::filesystem::recursive_directory_iterator it(root / "blobs", walk_error), end; !walk_error && it != end;
         it.increment(walk_error)) {
        if (!it->is_regular_file()) continue;
        const std::string relative = it->path().lexically_relative(root).generic_string();
        const auto parts = storage::parse_blob_path(relative);
        if (!parts) continue;  // not a file of the store's layout (a stray copy, an editor's backup)
        if (auto pushed = push_one(**client, it->path(), relative, *parts, counts); !pushed) return fail(pushed.error());
    }
    if (walk_error) return fail(make_error(error_kind::internal, "cannot list " + (root / "blobs").string() + ": " +
                                                                    walk_error.message()));
    std::printf("copied %zu files (%llu bytes) to bucket '%s'; %zu were there already; %zu refused\n", counts.copied,
                static_cast<unsigned long long>(counts.bytes), (*client)->settings().bucket.c_str(), counts.present,
                counts.refused);
    return counts.refused == 0 ? 0 : 1;
}

}  // namespace

void add_s3_push_command(CLI::App& app) {
    auto options = std::make_shared<s3_push_options>();
    auto* command = app.add_subcommand("s3-push", "Copy the blob store's files into an S3-compatible bucket "
                                                  "(checked by sha256, resumable, safe beside a running server)");
    add_data_option(*command, options->data);
    add_bucket_options(*command, options->bucket);
    command->callback([options] { set_exit_status(push(*options)); });
}

}  // namespace wheelhouse::cli
