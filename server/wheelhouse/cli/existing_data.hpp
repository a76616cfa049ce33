#pragma once
// Opening a data folder that must already exist: the commands that read one (backup, fsck,
// export) must not create an empty catalog where --data names the wrong folder.

#include <filesystem>
#include <memory>
#include <optional>

#include "wheelhouse/catalog/catalog.hpp"
#include "wheelhouse/result.hpp"
#include "wheelhouse/storage/blob_store.hpp"

namespace wheelhouse::cli {

struct existing_data {
    std::unique_ptr<catalog::catalog> catalog;
    std::optional<storage::blob_store> store;
};

// not_found when `data` holds no catalog.db, naming the folder and the --data option. A folder
// whose files are in a bucket (DATA/bucket) is refused unless `use` leaves them alone: these
// commands take no bucket settings.
// `bucket` holds its files when given (null: they are under blobs/).
result<existing_data> open_existing_data(const std::filesystem::path& data,
                                         std::shared_ptr<storage::object_store> bucket = {},
                                         storage::owned_bytes use = storage::owned_bytes::touched);
// The same check alone, for a command that only reads the folder's files and must create none.
result<void> require_data_folder(const std::filesystem::path& data);

}  // namespace wheelhouse::cli
