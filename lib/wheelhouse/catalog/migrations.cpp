#include "wheelhouse/catalog/migrations.hpp"

#include <string>

#include "wheelhouse/sqlite/connection.hpp"
#include "wheelhouse/sqlite/transaction.hpp"

namespace wheelhouse::catalog {

result<std::int64_t> migrate(sqlite::connection& db, std::span<const migration> migrations) {
    const std::int64_t known = migrations.empty() ? 0 : migrations.back().number;
    for (;;) {
        auto transaction = sqlite::transaction::begin(db, sqlite::transaction_mode::immediate);
        if (!transaction) return transaction.error();
        // Read inside the write lock: another process may have migrated while we waited for it.
        auto current = db.query_int64("PRAGMA user_version");
        if (!current) return current.error();
        if (*current > known) {
            return make_error(error_kind::internal,
                              db.path().string() + " is at schema version " + std::to_string(*current) +
                                  ", newer than this wheelhouse understands (" + std::to_string(known) +
                                  "); run the newer wheelhouse that wrote it, or restore a backup");
        }
        if (*current == known) return known;

        const migration& next = migrations[static_cast<std::size_t>(*current)];
        if (next.number != *current + 1) {
            return make_error(error_kind::internal, "schema migration " + std::string(next.name) +
                                                        " is out of order: expected number " +
                                                        std::to_string(*current + 1));
        }
        if (auto applied = db.execute(next.sql); !applied) {
            return make_error(applied.error().kind,
                              "applying schema/" + std::string(next.name) + ": " + applied.error().message);
        }
        // PRAGMA takes no bound parameters; the number is ours, not input.
        if (auto set = db.execute("PRAGMA user_version = " + std::to_string(next.number)); !set) return set.error();
        if (auto committed = transaction->commit(); !committed) return committed.error();
    }
}

}  // namespace wheelhouse::catalog
