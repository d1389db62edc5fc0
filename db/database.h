// One connection to a tuning database: an SQLite file (the embedded default)
// or a PostgreSQL server (for fleets, and for a standby coordinator). Callers
// write SQL once, in the subset both accept: `?` placeholders, INSERT ...
// ON CONFLICT, RETURNING, window functions; schema text (migrations) in
// SQLite's type names, which SchemaSql() turns into the server's own.
//
// Not thread-safe: one owner at a time.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace tf::db {

// What a backend implements for one prepared statement (see Statement).
class Cursor {
 public:
  virtual ~Cursor() = default;
  virtual void BindInt(int index, int64_t value) = 0;
  virtual void BindDouble(int index, double value) = 0;
  virtual void BindText(int index, std::string_view text) = 0;
  virtual void BindBlob(int index, std::string_view bytes) = 0;
  virtual void BindNull(int index) = 0;
  virtual Result<bool> Step() = 0;
  virtual void Reset() = 0;
  virtual int64_t Int(int column) const = 0;
  virtual double Double(int column) const = 0;
  virtual std::string Text(int column) const = 0;  // TEXT and BLOB columns alike
  virtual bool IsNull(int column) const = 0;
};

// A prepared statement with typed binding. Binds are 1-based, columns
// 0-based; NULL reads as 0 or "".
class Statement {
 public:
  explicit Statement(std::unique_ptr<Cursor> cursor) : cursor_(std::move(cursor)) {}

  Statement& Bind(int index, int64_t value) { return cursor_->BindInt(index, value), *this; }
  Statement& Bind(int index, double value) { return cursor_->BindDouble(index, value), *this; }
  Statement& Bind(int index, std::string_view text) {
    return cursor_->BindText(index, text), *this;
  }
  Statement& BindBlob(int index, std::string_view bytes) {
    return cursor_->BindBlob(index, bytes), *this;
  }
  Statement& BindNull(int index) { return cursor_->BindNull(index), *this; }

  // Runs the statement on the first call; true while a row is available.
  Result<bool> Step() { return cursor_->Step(); }
  // Runs a statement whose rows are not wanted; resets it for reuse.
  Status Run() {
    auto stepped = cursor_->Step();
    cursor_->Reset();
    return stepped.status();
  }
  // Forgets the bindings and any result: ready to run again.
  void Reset() { cursor_->Reset(); }

  int64_t Int(int column) const { return cursor_->Int(column); }
  double Double(int column) const { return cursor_->Double(column); }
  std::string Text(int column) const { return cursor_->Text(column); }
  bool IsNull(int column) const { return cursor_->IsNull(column); }

 private:
  std::unique_ptr<Cursor> cursor_;
};

class Database {
 public:
  // `location`: a PostgreSQL connection URI (postgresql://USER@HOST:PORT/DB,
  // postgres://...; libpq's PG* variables and ~/.pgpass supply the rest), or
  // else the path of an SQLite file, created if missing.
  // `synchronous_full`: a commit survives a power loss of the database's
  // host (else it survives a crash of this process only).
  static Result<std::unique_ptr<Database>> Open(const std::string& location, bool synchronous_full);
  static bool IsPostgresUrl(std::string_view location);
  // `location` as messages show it: without a URI's password.
  static std::string DisplayName(const std::string& location);

  virtual ~Database() = default;

  // Runs one or more statements without parameters.
  virtual Status Exec(std::string_view sql) = 0;
  // Compiled once per connection and kept: the coordinator runs the same
  // few statements thousands of times a second.
  virtual Result<Statement> Prepare(std::string_view sql) = 0;
  // Rows inserted, updated or deleted by the statement run last.
  virtual int64_t Changes() const = 0;

  // Transactions (see Transaction). `fsync` false: this commit need not
  // reach the disk by itself; it becomes durable with the next one that
  // does. For writes whose loss on power failure is harmless.
  virtual Status Begin(bool fsync) = 0;
  virtual Status Commit() = 0;
  virtual void Rollback() = 0;

  // A migration's schema text, written in SQLite's type names (INTEGER,
  // REAL, BLOB, INTEGER PRIMARY KEY AUTOINCREMENT), in this database's.
  virtual std::string SchemaSql(std::string_view sqlite_schema) const = 0;

  // Returns once this connection is the only writer of the database among
  // those that ask: a PostgreSQL database is shared by an active coordinator
  // and its standbys, which wait here (calling `waiting` once, first, and
  // returning its error instead of waiting if it fails) until the active
  // one's connection ends. The hold lasts as long as this connection;
  // losing that connection ends the process (exit status 75), since a
  // standby may have taken over. An SQLite file has one coordinator.
  virtual Status HoldAsOnlyWriter(const std::function<Status()>& waiting) = 0;

  // For messages: the path, or the URI without its password.
  const std::string& name() const { return name_; }
  bool synchronous_full() const { return synchronous_full_; }

 protected:
  Database(std::string name, bool synchronous_full)
      : name_(std::move(name)), synchronous_full_(synchronous_full) {}

 private:
  std::string name_;
  bool synchronous_full_;
};

// Begins on construction; rolls back on destruction unless committed.
class Transaction {
 public:
  explicit Transaction(Database& db, bool fsync = true) : db_(db), begin_(db.Begin(fsync)) {}
  ~Transaction() {
    if (!done_ && begin_.ok()) db_.Rollback();
  }
  Transaction(const Transaction&) = delete;
  Status begin_status() const { return begin_; }
  Status Commit() {
    TF_RETURN_IF_ERROR(begin_);
    Status status = db_.Commit();
    if (status.ok()) done_ = true;
    return status;
  }

 private:
  Database& db_;
  Status begin_;
  bool done_ = false;
};

}  // namespace tf::db
