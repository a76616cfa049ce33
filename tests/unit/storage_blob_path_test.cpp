#include <catch2/catch.hpp>

#include "wheelhouse/storage/blob_path.hpp"

using namespace wheelhouse;

TEST_CASE("storage blob_path: which relative paths are blob store names", "[storage]") {
    const std::string digest = "ab12" + std::string(60, 'f');
    struct row {
        std::string path;
        bool valid;
        bool metadata;
    };
    const std::vector<row> table = {
        {"blobs/sha256/ab/12/" + digest, true, false},
        {"blobs/sha256/ab/12/" + digest + ".metadata", true, true},
        {"blobs/sha256/ab/13/" + digest, false, false},          // folders must be the digest's first digits
        {"blobs/sha256/ab/12/" + digest + ".tmp", false, false},
        {"blobs/sha256/AB/12/ab12" + std::string(60, 'F'), false, false},  // lower-case only
        {"blobs/sha256/ab/12/" + digest.substr(1), false, false},
        {"blobs/sha256/ab12/" + digest, false, false},
        {"../sha256/ab/12/" + digest, false, false},
        {"/blobs/sha256/ab/12/" + digest, false, false},
        {"blobs/sha512/ab/12/" + digest, false, false},
        {"", false, false},
    };
    for (const auto& entry : table) {
        CAPTURE(entry.path);
        const auto parts = storage::parse_blob_path(entry.path);
        REQUIRE(parts.has_value() == entry.valid);
        if (!parts) continue;
        CHECK(parts->sha256 == digest);
        CHECK(parts->metadata == entry.metadata);
        if (!entry.metadata) CHECK(storage::relative_blob_path(digest) == entry.path);
    }
}
