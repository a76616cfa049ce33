#include "wheelhouse/sqlite/transaction.hpp"

#include <utility>

#include "wheelhouse/sqlite/connection.hpp"

namespace wheelhouse::sqlite {

result<transaction> transaction::begin(connection& db, transaction_mode mode) {
    auto begun = db.execute(mode == transaction_mode::immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED");
    if (!begun) return begun.error();
    return transaction(db);
}

transaction::transaction(transaction&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

transaction::~transaction() { rollback(); }

result<void> transaction::commit() {
    if (db_ == nullptr) return make_error(error_kind::internal, "catalog database: commit of a finished transaction");
    auto committed = db_->execute("COMMIT");
    if (!committed) return committed;  // still open: the destructor rolls back
    db_ = nullptr;
    return {};
}

void transaction::rollback() noexcept {
    if (db_ == nullptr) return;
    // A failed COMMIT can leave SQLite already rolled back; ROLLBACK then errs, harmlessly.
    try {
        (void)db_->execute("ROLLBACK");
    } catch (...) {
        // execute() allocates; an allocation failure here must not escape a destructor.
    }
    db_ = nullptr;
}

result<savepoint> savepoint::begin(connection& db) {
    // One name serves every level: ROLLBACK TO and RELEASE act on the innermost of that name.
    auto begun = db.execute("SAVEPOINT batched_write");
    if (!begun) return begun.error();
    return savepoint(db);
}

savepoint::savepoint(savepoint&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

savepoint::~savepoint() {
    if (db_ == nullptr || !db_->in_transaction()) return;  // SQLite may have ended it all already
    try {
        (void)db_->execute("ROLLBACK TO batched_write; RELEASE batched_write");
    } catch (...) {
        // execute() allocates; an allocation failure here must not escape a destructor.
    }
}

result<void> savepoint::release() {
    if (db_ == nullptr) return make_error(error_kind::internal, "catalog database: release of a finished savepoint");
    auto released = db_->execute("RELEASE batched_write");
    if (!released) return released;  // still open: the destructor rolls back to it
    db_ = nullptr;
    return {};
}

}  // namespace wheelhouse::sqlite
