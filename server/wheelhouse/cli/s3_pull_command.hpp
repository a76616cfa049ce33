#pragma once
// wheelhouse s3-pull --data DIR --s3-endpoint URL --s3-bucket NAME [--s3-* ...] [--leave-bucket]
// The way back from a bucket (issue 29): copies every file the index holds itself (rows of mode
// local) out of the bucket into DATA/blobs/, each checked against its sha256 and size and linked
// into place whole, skipping those already there, so it is resumable and safe beside a running
// server. With --leave-bucket it refuses to start while any process uses the bucket, copies
// what is left, and, once every row's file is in the folder, removes DATA/bucket: the folder
// then serves without the s3-* settings. Nothing is removed from the bucket.
// Exit status: 0 done; 1 files the bucket lacks or holds corrupt (listed; the folder is not left
// on its own); 2 could not run.

#include <CLI/App.hpp>

namespace wheelhouse::cli {

void add_s3_pull_command(CLI::App& app);

}  // namespace wheelhouse::cli
