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

}  // namespace wheelhouse::sqlite
