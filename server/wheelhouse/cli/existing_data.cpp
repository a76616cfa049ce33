#include "wheelhouse/cli/existing_data.hpp"

namespace wheelhouse::cli {

result<void> require_data_folder(const std::filesystem::path& data) {
    const auto database = data / "catalog.db";
    std::error_code failure;
    if (!std::filesystem::is_regular_file(database, failure)) {
        return make_error(error_kind::not_found, "no catalog at " + database.string() +
                                                     "; --data (or WHEELHOUSE_DATA) must name a wheelhouse data folder");
    }
    return {};
}

result<existing_data> open_existing_data(const std::filesystem::path& data,
                                         std::shared_ptr<storage::object_store> bucket, storage::owned_bytes use) {
    if (auto found = require_data_folder(data); !found) return found.error();
    auto catalog = catalog::catalog::open(data / "catalog.db");
    if (!catalog) return catalog.error();
    auto store = storage::blob_store::open(data, std::move(bucket), use);
    if (!store) return store.error();
    return existing_data{std::move(catalog).value(), std::move(store).value()};
}

}  // namespace wheelhouse::cli
