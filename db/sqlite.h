// A thin RAII layer over the SQLite C API: a connection, prepared statements
// with typed binding, and transactions. Not thread-safe: one owner at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/status.h"

namespace tf::db {

class Statement {
 public:
  // `in_use`: set when the statement belongs to its database's cache, which
  // gets it back (reset, not finalized) when this object goes away.
  Statement(sqlite3* db, sqlite3_stmt* stmt, bool* in_use = nullptr)
      : db_(db), stmt_(stmt), in_use_(in_use) {}
  Statement(Statement&& other) noexcept
      : db_(other.db_), stmt_(other.stmt_), in_use_(other.in_use_) {
    other.stmt_ = nullptr;
    other.in_use_ = nullptr;
  }
  Statement(const Statement&) = delete;
  ~Statement();

  // Binds are 1-based, like SQLite's.
  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view text);
  Statement& BindBlob(int index, std::string_view bytes);
  Statement& BindNull(int index);

  // true while a row is available; errors become Status via Done().
  Result<bool> Step();
  // Runs a statement that returns no rows; resets it for reuse.
  Status Run();
  void Reset();

  int64_t Int(int column) const { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const { return sqlite3_column_double(stmt_, column); }
  std::string Text(int column) const;
  bool IsNull(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool* in_use_;
};

class Database {
 public:
  // Opens (creating if needed) in WAL mode with foreign keys on.
  // `synchronous_full`: fsync every commit (survives power loss), else only
  // process crashes are survived.
  static Result<std::unique_ptr<Database>> Open(const std::string& path, bool synchronous_full);
  ~Database();

  Status Exec(std::string_view sql);
  // Compiled once per connection and kept: the coordinator runs the same
  // few statements thousands of times a second. A statement still in use
  // when asked for again is compiled afresh for the second user.
  Result<Statement> Prepare(std::string_view sql);
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  const std::string& path() const { return path_; }
  bool synchronous_full() const { return synchronous_full_; }

 private:
  struct Cached {
    sqlite3_stmt* stmt = nullptr;
    bool in_use = false;
  };

  Database(sqlite3* db, std::string path, bool synchronous_full)
      : db_(db), path_(std::move(path)), synchronous_full_(synchronous_full) {}
  sqlite3* db_;
  std::string path_;
  bool synchronous_full_;
  std::unordered_map<std::string, Cached> cache_;  // node-based: in_use stays put
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
//
// `fsync` false: on a synchronous=FULL database this commit is not fsynced
// by itself; it becomes durable with the next one that is (the WAL is
// appended in order). For writes whose loss on power failure is harmless.
class Transaction {
 public:
  explicit Transaction(Database& db, bool fsync = true);
  ~Transaction();
  Status begin_status() const { return begin_; }
  Status Commit();

 private:
  Database& db_;
  const bool relaxed_;  // synchronous=NORMAL until the end
  Status begin_;
  bool done_ = false;
};

// Maps an SQLite error to a Status whose message names the operation.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace tf::db
