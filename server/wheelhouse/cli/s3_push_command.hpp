#pragma once
// wheelhouse s3-push --data DIR --s3-endpoint URL --s3-bucket NAME [bucket options]
// Copies the blob store's files (wheels, sdists, their .metadata) into the bucket under the same
// names as on disk (PREFIX + "blobs/sha256/ab/cd/<sha256>"), each PUT carrying its sha256 for the
// store to check, and skips those the bucket holds already (put with that sha256): the first step of moving an
// index to object storage (issue 29), safe beside a running server (it only reads DATA) and
// resumable. Nothing is removed from DATA. A local file whose bytes no longer match its name
// is refused by the store, reported, and left for `wheelhouse fsck`; the command then exits 1.

#include <CLI/App.hpp>

namespace wheelhouse::cli {

void add_s3_push_command(CLI::App& app);

}  // namespace wheelhouse::cli
