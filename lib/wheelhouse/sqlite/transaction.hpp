#pragma once
// A transaction, RAII: rolls back in its destructor unless committed. Writers begin IMMEDIATE
// so the write lock is taken up front; a DEFERRED transaction that later writes can fail with
// SQLITE_BUSY under WAL instead of waiting.

#include "wheelhouse/result.hpp"

namespace wheelhouse::sqlite {

class connection;

enum class transaction_mode {
    deferred,   // a consistent snapshot for several reads
    immediate,  // takes the database's write lock at once (waits up to the busy timeout)
};

class transaction {
public:
    static result<transaction> begin(connection& db, transaction_mode mode);

    transaction(transaction&& other) noexcept;
    transaction& operator=(transaction&&) = delete;
    transaction(const transaction&) = delete;
    transaction& operator=(const transaction&) = delete;
    ~transaction();  // rolls back when still open; never throws

    result<void> commit();
    // Explicit rollback; the destructor does the same.
    void rollback() noexcept;
    bool active() const noexcept { return db_ != nullptr; }

private:
    explicit transaction(connection& db) noexcept : db_(&db) {}

    connection* db_;
};

// A savepoint inside an open transaction, RAII: its changes are undone in its destructor unless
// released, and the transaction around it goes on. Lets several writes share one transaction
// (and one commit) while each one's failure undoes only its own changes.
class savepoint {
public:
    static result<savepoint> begin(connection& db);

    savepoint(savepoint&& other) noexcept;
    savepoint& operator=(savepoint&&) = delete;
    savepoint(const savepoint&) = delete;
    savepoint& operator=(const savepoint&) = delete;
    ~savepoint();  // rolls back to the savepoint when not released; never throws

    // Keeps the changes made since begin() in the enclosing transaction.
    result<void> release();

private:
    explicit savepoint(connection& db) noexcept : db_(&db) {}

    connection* db_;
};

}  // namespace wheelhouse::sqlite
