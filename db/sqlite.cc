#include "db/sqlite.h"

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

Statement::~Statement() {
  if (stmt_ == nullptr) return;
  if (in_use_ == nullptr) {
    sqlite3_finalize(stmt_);
    return;
  }
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  *in_use_ = false;
}

Statement& Statement::Bind(int index, int64_t value) {
  sqlite3_bind_int64(stmt_, index, value);
  return *this;
}
Statement& Statement::Bind(int index, double value) {
  sqlite3_bind_double(stmt_, index, value);
  return *this;
}
Statement& Statement::Bind(int index, std::string_view text) {
  sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindBlob(int index, std::string_view bytes) {
  sqlite3_bind_blob(stmt_, index, bytes.data(), static_cast<int>(bytes.size()), SQLITE_TRANSIENT);
  return *this;
}
Statement& Statement::BindNull(int index) {
  sqlite3_bind_null(stmt_, index);
  return *this;
}

Result<bool> Statement::Step() {
  int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  return SqliteError(db_, rc, sqlite3_sql(stmt_));
}

Status Statement::Run() {
  auto stepped = Step();
  Reset();
  return stepped.status();
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
}

std::string Statement::Text(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  int size = sqlite3_column_bytes(stmt_, column);
  return data ? std::string(static_cast<const char*>(data), size) : std::string();
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& path, bool synchronous_full) {
  sqlite3* raw = nullptr;
  int rc =
      sqlite3_open_v2(path.c_str(), &raw,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    Status status = SqliteError(raw, rc, "cannot open " + path);
    sqlite3_close(raw);
    return status;
  }
  std::unique_ptr<Database> db(new Database(raw, path, synchronous_full));
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
  return db;
}

Database::~Database() {
  for (auto& [sql, cached] : cache_) sqlite3_finalize(cached.stmt);
  sqlite3_close(db_);
}

Status Database::Exec(std::string_view sql) {
  std::string owned(sql);
  char* error = nullptr;
  int rc = sqlite3_exec(db_, owned.c_str(), nullptr, nullptr, &error);
  if (rc == SQLITE_OK) return Status::Ok();
  sqlite3_free(error);  // the same text as sqlite3_errmsg, which SqliteError adds
  return SqliteError(db_, rc, owned.size() <= 40 ? owned : owned.substr(0, 37) + "...");
}

Result<Statement> Database::Prepare(std::string_view sql) {
  Cached& cached = cache_[std::string(sql)];
  if (cached.stmt != nullptr && !cached.in_use) {
    cached.in_use = true;
    return Statement(db_, cached.stmt, &cached.in_use);
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db_, rc, "prepare " + std::string(sql));
  if (cached.stmt != nullptr) return Statement(db_, stmt);  // the cached one is busy
  cached.stmt = stmt;
  cached.in_use = true;
  return Statement(db_, stmt, &cached.in_use);
}

namespace {

Status RelaxSync(Database& db, bool relax) {
  return relax ? db.Exec("PRAGMA synchronous=NORMAL") : Status::Ok();
}

}  // namespace

Transaction::Transaction(Database& db, bool fsync)
    : db_(db), relaxed_(!fsync && db.synchronous_full()) {
  begin_ = RelaxSync(db, relaxed_);
  if (begin_.ok()) begin_ = db.Exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  if (!done_ && begin_.ok()) (void)db_.Exec("ROLLBACK");
  if (relaxed_) (void)db_.Exec("PRAGMA synchronous=FULL");
}

Status Transaction::Commit() {
  TF_RETURN_IF_ERROR(begin_);
  Status status = db_.Exec("COMMIT");
  if (status.ok()) done_ = true;
  return status;
}

}  // namespace tf::db
