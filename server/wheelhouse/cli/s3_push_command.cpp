#include "wheelhouse/cli/s3_push_command.hpp"

#include <cstdio>
#include <fstream>

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

// A blob's sha256 is its name; a .metadata file's is computed, a block at a time.
result<std::string> sha256_of(const std::filesystem::path& file, const storage::blob_path_parts& parts) {
    if (!parts.metadata) return parts.sha256;
    auto hasher = crypto::hasher::create(crypto::hash_algorithm::sha256);
    if (!hasher) return hasher.error();
    std::ifstream in(file, std::ios::binary);
    if (!in) return make_error(error_kind::not_found, "cannot open " + file.string());
    std::string block(1 << 20, '\0');
    while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0)
        hasher->update(std::string_view(block.data(), static_cast<std::size_t>(in.gcount())));
    if (in.bad()) return make_error(error_kind::internal, "cannot read " + file.string());
    return hasher->finish_hex();
}

// Only the store's verdict on the digest is this file's fault; any other refusal (access, the
// bucket, a size) is the run's, and ends it with its own fix.
bool digest_refused(const s3::put_answer& put) {
    return put.status == 400 && (put.code == "XAmzContentSHA256Mismatch" || put.code == "BadDigest");
}

// One file: skipped when the bucket's copy was put with this sha256 at this size, else put. A
// file that vanished meanwhile (deleted through the running server) is passed over.
result<void> push_one(s3::object_client& client, const std::filesystem::path& file, const std::string& relative,
                      const storage::blob_path_parts& parts, push_counts& counts) {
    std::error_code gone;
    const auto vanished = [&] { return !std::filesystem::exists(file, gone); };
    const std::uint64_t size = std::filesystem::file_size(file, gone);
    if (gone) return {};
    auto sha256 = sha256_of(file, parts);
    if (!sha256) return vanished() ? result<void>{} : result<void>(sha256.error());
    // An object of the same size and other bytes, or one another tool wrote, is put again.
    const std::string key = client.key_of(relative);
    auto there = client.look_up(key);
    if (!there) return there.error();
    if (*there && (*there)->size == size && (*there)->sha256 == *sha256) return (++counts.present, result<void>{});
    auto put = client.try_put_file(key, file, *sha256, nullptr);
    if (!put) return vanished() ? result<void>{} : result<void>(put.error());
    if (!put->refusal) {
        ++counts.copied;
        counts.bytes += size;
        return {};
    }
    if (!digest_refused(*put)) return *put->refusal;
    ++counts.refused;
    std::fprintf(stderr, "wheelhouse s3-push: %s was refused (%s): run wheelhouse fsck --data on this folder\n",
                 relative.c_str(), put->code.c_str());
    return {};
}

// Every file of the store's layout under DATA/blobs/, in the walk's order.
result<void> push_folder(s3::object_client& client, const std::filesystem::path& root, push_counts& counts) {
    std::error_code walk_error;
    if (!std::filesystem::exists(root / "blobs", walk_error)) return {};  // nothing stored yet
    for (std::filesystem::recursive_directory_iterator it(root / "blobs", walk_error), end; !walk_error && it != end;
         it.increment(walk_error)) {
        // Symbolic links are not followed: what goes into the bucket is the folder's own files.
        std::error_code unreadable;
        if (!std::filesystem::is_regular_file(it->symlink_status(unreadable)) || unreadable) continue;
        const std::string relative = it->path().lexically_relative(root).generic_string();
        const auto parts = storage::parse_blob_path(relative);
        if (!parts) continue;  // not a file of the store's layout (a stray copy, an editor's backup)
        if (auto pushed = push_one(client, it->path(), relative, *parts, counts); !pushed) return pushed;
    }
    if (walk_error)
        return make_error(error_kind::internal, "cannot list " + (root / "blobs").string() + ": " + walk_error.message());
    return {};
}

int push(const s3_push_options& options) {
    if (auto found = require_data_folder(options.data); !found) return fail(found.error());
    auto client = open_bucket(options.bucket);
    if (!client) return fail(client.error());
    if (auto reached = (*client)->check_bucket(); !reached) return fail(reached.error());
    push_counts counts;
    if (auto pushed = push_folder(**client, options.data, counts); !pushed) return fail(pushed.error());
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
