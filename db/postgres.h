// The PostgreSQL backend of Database, over libpq: statements prepared once
// per connection on the server, values sent as text (blobs as bytes),
// commits synchronous unless `synchronous_full` is off. The only writer
// holds a session advisory lock (HoldAsOnlyWriter); everyone may read.
#pragma once

#include <libpq-fe.h>

#include <string>
#include <unordered_map>

#include "db/database.h"

namespace tf::db {

class PostgresDatabase : public Database {
 public:
  static Result<std::unique_ptr<Database>> Open(const std::string& url, bool synchronous_full);
  ~PostgresDatabase() override { PQfinish(conn_); }

  Status Exec(std::string_view sql) override;
  Result<Statement> Prepare(std::string_view sql) override;
  int64_t Changes() const override { return changes_; }
  Status Begin(bool fsync) override;
  Status Commit() override;
  void Rollback() override;
  std::string SchemaSql(std::string_view sqlite_schema) const override;
  Status HoldAsOnlyWriter(const std::function<Status()>& waiting) override;

  // Checks what a statement returned: OK, or the error as a Status naming
  // `what` (and ending the process if the writer's connection is gone).
  // Records the rows changed.
  Status Check(const PGresult* result, std::string_view what);
  PGconn* conn() { return conn_; }

 private:
  PostgresDatabase(PGconn* conn, std::string name, bool synchronous_full)
      : Database(std::move(name), synchronous_full), conn_(conn) {}

  PGconn* conn_;
  bool holds_writer_lock_ = false;
  int64_t changes_ = 0;
  struct Prepared {
    std::string name;
    int params = 0;
  };
  std::unordered_map<std::string, Prepared> prepared_;  // by the caller's SQL
};

// `url` without its password (user:password@ or password=...), for messages.
std::string RedactPostgresUrl(const std::string& url);

}  // namespace tf::db
