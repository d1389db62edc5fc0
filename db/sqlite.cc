#include "db/sqlite.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace tf::db {

Status SqliteError(sqlite3* db, int rc, std::string_view what) {
  std::string message = std::string(what) + ": " + (db ? sqlite3_errmsg(db) : sqlite3_errstr(rc));
  switch (rc & 0xff) {
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_READONLY:
    case SQLITE_CANTOPEN:
      return Status::Unavailable("tuning database: " + message);
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return Status::Unavailable("tuning database busy: " + message);
    case SQLITE_CONSTRAINT:
      return Status(Code::kAlreadyExists, message);
    default:
      return Status::Internal("tuning database: " + message);
  }
}

namespace {

class SqliteCursor : public Cursor {
 public:
  // `in_use`: set when the statement belongs to its database's cache, which
  // gets it back (reset, not finalized) when this cursor goes away.
  SqliteCursor(sqlite3* db, sqlite3_stmt* stmt, bool* in_use)
      : db_(db), stmt_(stmt), in_use_(in_use) {}
  ~SqliteCursor() override {
    if (in_use_ == nullptr) {
      sqlite3_finalize(stmt_);
      return;
    }
    Reset();
    *in_use_ = false;
  }

  void BindInt(int index, int64_t value) override { sqlite3_bind_int64(stmt_, index, value); }
  void BindDouble(int index, double value) override { sqlite3_bind_double(stmt_, index, value); }
  void BindText(int index, std::string_view text) override {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  }
  void BindBlob(int index, std::string_view bytes) override {
    sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  }
  void BindNull(int index) override { sqlite3_bind_null(stmt_, index); }

  Result<bool> Step() override {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return SqliteError(db_, rc, sqlite3_sql(stmt_));
  }
  void Reset() override {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

  int64_t Int(int column) const override { return sqlite3_column_int64(stmt_, column); }
  double Double(int column) const override { return sqlite3_column_double(stmt_, column); }
  std::string Text(int column) const override {
    const void* data = sqlite3_column_blob(stmt_, column);
    int size = sqlite3_column_bytes(stmt_, column);
    return data ? std::string(static_cast<const char*>(data), size) : std::string();
  }
  bool IsNull(int column) const override {
    return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
  }

 private:
  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool* in_use_;
};

}  // namespace

Result<std::unique_ptr<Database>> SqliteDatabase::Open(const std::string& path,
                                                       bool synchronous_full) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(raw, rc, "cannot open " + path);
    sqlite3_close(raw);
    return status;
  }
  std::unique_ptr<SqliteDatabase> db(new SqliteDatabase(raw, path, synchronous_full));
  // SQLite quietly opens what it cannot write read-only; every write would
  // then fail. Say so now.
  if (sqlite3_db_readonly(raw, "main") == 1) {
    return Status::Unavailable("tuning database " + path +
                               " is read-only (read-only file system or no write permission)");
  }
  sqlite3_busy_timeout(raw, 5000);
  TF_RETURN_IF_ERROR(db->Exec("PRAGMA journal_mode=WAL"));
  TF_RETURN_IF_ERROR(
      db->Exec(synchronous_full ? "PRAGMA synchronous=FULL" : "PRAGMA synchronous=NORMAL"));
  TF_RETURN_IF_ERROR(db->Exec("PRAGMA foreign_keys=ON"));
  return std::unique_ptr<Database>(std::move(db));
}

SqliteDatabase::~SqliteDatabase() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close(db_);
  if (writer_lock_fd_ >= 0) close(writer_lock_fd_);
}

Status SqliteDatabase::HoldAsOnlyWriter(const std::function<Status()>&) {
  const std::string lock_path = name() + ".lock";
  const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::Unavailable("cannot open " + lock_path + ": " + std::strerror(errno));
  }
  if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    char holder[32] = {};
    const ssize_t got = pread(fd, holder, sizeof holder - 1, 0);
    close(fd);
    if (error != EWOULDBLOCK) {
      return Status::Unavailable("cannot lock " + lock_path + ": " + std::strerror(error));
    }
    return Status::FailedPrecondition(
        "tuning database " + name() + " has another coordinator (process " +
        (got > 0 ? std::string(holder, got) : std::string("unknown")) + " holds " + lock_path +
        "): an SQLite database has one; a standby needs PostgreSQL (docs/deploy.md)");
  }
  const std::string pid = std::to_string(getpid());
  if (ftruncate(fd, 0) != 0 ||
      pwrite(fd, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    close(fd);
    return Status::Unavailable("cannot write " + lock_path + ": " + std::strerror(error));
  }
  writer_lock_fd_ = fd;
  return Status::Ok();
}

Status SqliteDatabase::Exec(std::string_view sql) {
  std::string owned(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  sqlite3_free(error);  // the same text as sqlite3_errmsg, which SqliteError adds
  return SqliteError(db_, rc, owned.size() <= 40 ? owned : owned.substr(0, 37) + "...");
}

Result<Statement> SqliteDatabase::Prepare(std::string_view sql) {
  Cached& cached = cache_[std::string(sql)];
  if (cached.stmt != nullptr && !cached.in_use) {
    cached.in_use = true;
    return Statement(std::make_unique<SqliteCursor>(db_, cached.stmt, &cached.in_use));
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare " + std::string(sql));
  if (cached.stmt != nullptr) {  // the cached one is busy
    return Statement(std::make_unique<SqliteCursor>(db_, stmt, nullptr));
  }
  cached.stmt = stmt;
  cached.in_use = true;
  return Statement(std::make_unique<SqliteCursor>(db_, stmt, &cached.in_use));
}

Status SqliteDatabase::RelaxSync(bool relax) {
  relaxed_ = relax;
  return Exec(relax ? "PRAGMA synchronous=NORMAL" : "PRAGMA synchronous=FULL");
}

Status SqliteDatabase::Begin(bool fsync) {
  if (!fsync && synchronous_full()) TF_RETURN_IF_ERROR(RelaxSync(true));
  Status begun = Exec("BEGIN IMMEDIATE");
  if (!begun.ok() && relaxed_) (void)RelaxSync(false);
  return begun;
}

Status SqliteDatabase::Commit() {
  TF_RETURN_IF_ERROR(Exec("COMMIT"));  // else Rollback() follows
  if (relaxed_) (void)RelaxSync(false);
  return Status::Ok();
}

void SqliteDatabase::Rollback() {
  (void)Exec("ROLLBACK");
  if (relaxed_) (void)RelaxSync(false);
}

}  // namespace tf::db
