// The SQLite backend of Database: one file in WAL mode with foreign keys on,
// statements compiled once per connection and kept.
#pragma once

#include <sqlite3.h>

#include <string>
#include <unordered_map>

#include "db/database.h"

namespace tf::db {

class SqliteDatabase : public Database {
 public:
  static Result<std::unique_ptr<Database>> Open(const std::string& path, bool synchronous_full);
  ~SqliteDatabase() override;

  Status Exec(std::string_view sql) override;
  // A statement still in use when asked for again is compiled afresh for
  // the second user.
  Result<Statement> Prepare(std::string_view sql) override;
  int64_t Changes() const override { return sqlite3_changes64(db_); }
  Status Begin(bool fsync) override;
  Status Commit() override;
  void Rollback() override;
  std::string SchemaSql(std::string_view sqlite_schema) const override {
    return std::string(sqlite_schema);
  }
  // An SQLite file has one coordinator: a second is refused, not made to
  // wait. The hold is an flock on PATH.lock (beside the -wal file), which
  // names the holder's pid, and ends with this object or the process.
  Status HoldAsOnlyWriter(const std::function<Status()>&) override;

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  SqliteDatabase(sqlite3* db, const std::string& path, bool synchronous_full)
      : Database(path, synchronous_full), db_(db) {}
  // synchronous=NORMAL for one transaction of a synchronous=FULL database,
  // and back.
  Status RelaxSync(bool relax);

  sqlite3* db_;
  int writer_lock_fd_ = -1;
  bool relaxed_ = false;                           // the open transaction runs synchronous=NORMAL
  std::unordered_map<std::string, Cached> cache_;  // node-based: in_use stays put
};

// Maps an SQLite error to a Status whose message names the operation.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace tf::db
