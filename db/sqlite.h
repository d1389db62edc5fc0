// A thin RAII layer over the SQLite C API: a connection, prepared statements
// with typed binding, and transactions. Not thread-safe: one owner at a time.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tf::db {

class Statement {
 public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  Statement(Statement&& other) noexcept : db_(other.db_), stmt_(other.stmt_) {
    other.stmt_ = nullptr;
  }
  Statement(const Statement&) = delete;
  ~Statement() { sqlite3_finalize(stmt_); }

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
};

class Database {
 public:
  // Opens (creating if needed) in WAL mode with foreign keys on.
  // `synchronous_full`: fsync every commit (survives power loss), else only
  // process crashes are survived.
  static Result<std::unique_ptr<Database>> Open(const std::string& path, bool synchronous_full);
  ~Database();

  Status Exec(std::string_view sql);
  Result<Statement> Prepare(std::string_view sql);
  int64_t LastInsertId() const { return sqlite3_last_insert_rowid(db_); }
  int Changes() const { return sqlite3_changes(db_); }
  const std::string& path() const { return path_; }

 private:
  Database(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
  sqlite3* db_;
  std::string path_;
};

// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Database& db);
  ~Transaction();
  Status begin_status() const { return begin_; }
  Status Commit();

 private:
  Database& db_;
  Status begin_;
  bool done_ = false;
};

// Maps an SQLite error to a Status whose message names the operation.
Status SqliteError(sqlite3* db, int rc, std::string_view what);

}  // namespace tf::db
