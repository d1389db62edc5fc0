#include "db/postgres.h"

#include <spdlog/spdlog.h>

#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <vector>

namespace tf::db {
namespace {

constexpr Oid kByteaOid = 17;  // from the server's catalog/pg_type.h
// The advisory lock that the one writer holds: "tuneflt1".
constexpr const char* kWriterLockKey = "8391171394009592881";

std::string Shortened(std::string_view sql) {
  std::string s(sql);
  return s.size() <= 60 ? s : s.substr(0, 57) + "...";
}

// A PostgreSQL error as a Status: constraint violations as kAlreadyExists
// (as SQLite's), what may pass (a lost connection, a full disk, a server
// shutting down, a conflict) as kUnavailable.
Status PostgresError(const PGresult* result, PGconn* conn, std::string_view what) {
  std::string message = result ? PQresultErrorMessage(result) : PQerrorMessage(conn);
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  message = std::string(what) + ": " + message;
  const char* field = result ? PQresultErrorField(result, PG_DIAG_SQLSTATE) : nullptr;
  std::string_view state = field ? field : "08000";  // no result: the connection failed
  if (state.starts_with("23")) return Status(Code::kAlreadyExists, message);
  if (state.starts_with("08") || state.starts_with("53") || state.starts_with("57P") ||
      state.starts_with("40") || state == "25006") {
    return Status::Unavailable("tuning database: " + message);
  }
  return Status::Internal("tuning database: " + message);
}

// SQLite's `?` placeholders as PostgreSQL's $1, $2, ... (none are inside
// quoted strings or identifiers, which are skipped).
std::string NumberedPlaceholders(std::string_view sql, int* count) {
  std::string out;
  char quote = 0;
  *count = 0;
  for (char c : sql) {
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == '?') {
      out += "$" + std::to_string(++*count);
      continue;
    }
    out += c;
  }
  return out;
}

// PostgreSQL's text holds valid UTF-8 without NUL bytes; SQLite's holds any
// bytes, and a compiler's or a candidate's output may have any. Others
// become U+FFFD.
std::string ValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t length = c < 0x80           ? 1
                    : (c >> 5) == 0x6  ? 2
                    : (c >> 4) == 0xe  ? 3
                    : (c >> 3) == 0x1e ? 4
                                       : 0;
    bool valid = length > 0 && c != 0 && i + length <= text.size() && !(length == 2 && c < 0xc2);
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (static_cast<unsigned char>(text[i + k]) & 0xc0) == 0x80;
    }
    if (valid) {
      out.append(text.substr(i, length));
      i += length;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

// NOTICEs ("relation already exists, skipping") are not for the operator.
void IgnoreNotice(void*, const char*) {}

class PostgresCursor : public Cursor {
 public:
  PostgresCursor(PostgresDatabase& db, std::string name, int params, std::string_view sql)
      : db_(db), name_(std::move(name)), sql_(sql), values_(params), binary_(params, 0) {}
  ~PostgresCursor() override { PQclear(result_); }

  void BindInt(int index, int64_t value) override { Set(index, std::to_string(value), false); }
  void BindDouble(int index, double value) override {
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", value);  // round-trips exactly
    Set(index, text, false);
  }
  void BindText(int index, std::string_view text) override { Set(index, ValidUtf8(text), false); }
  void BindBlob(int index, std::string_view bytes) override {
    Set(index, std::string(bytes), true);
  }
  void BindNull(int index) override {
    if (Fits(index)) values_[index - 1].reset();
  }

  Result<bool> Step() override {
    if (result_ != nullptr) return ++row_ < PQntuples(result_);
    std::vector<const char*> values(values_.size());
    std::vector<int> lengths(values_.size());
    for (size_t i = 0; i < values_.size(); ++i) {
      values[i] = values_[i] ? values_[i]->data() : nullptr;
      lengths[i] = values_[i] ? static_cast<int>(values_[i]->size()) : 0;
    }
    result_ = PQexecPrepared(db_.conn(), name_.c_str(), static_cast<int>(values.size()),
                             values.data(), lengths.data(), binary_.data(), /*text results*/ 0);
    Status status = db_.Check(result_, Shortened(sql_));
    if (!status.ok()) {
      PQclear(result_);
      result_ = nullptr;
      return status;
    }
    row_ = 0;
    return row_ < PQntuples(result_);
  }
  void Reset() override {
    PQclear(result_);
    result_ = nullptr;
    for (auto& v : values_) v.reset();
  }

  int64_t Int(int column) const override {
    const char* text = Value(column);
    if (text[0] == 't' || text[0] == 'f') return text[0] == 't';  // booleans
    return std::strtoll(text, nullptr, 10);
  }
  double Double(int column) const override { return std::strtod(Value(column), nullptr); }
  std::string Text(int column) const override {
    if (PQftype(result_, column) != kByteaOid) return Value(column);
    size_t size = 0;
    unsigned char* bytes =
        PQunescapeBytea(reinterpret_cast<const unsigned char*>(Value(column)), &size);
    if (bytes == nullptr) return "";
    std::string out(reinterpret_cast<const char*>(bytes), size);
    PQfreemem(bytes);
    return out;
  }
  bool IsNull(int column) const override {
    return result_ == nullptr || PQgetisnull(result_, row_, column);
  }

 private:
  bool Fits(int index) const { return index >= 1 && index <= static_cast<int>(values_.size()); }
  void Set(int index, std::string value, bool binary) {
    if (!Fits(index)) return;  // as SQLite: an index out of range binds nothing
    values_[index - 1] = std::move(value);
    binary_[index - 1] = binary ? 1 : 0;
  }
  // "" for NULL, as PQgetvalue gives it.
  const char* Value(int column) const {
    return result_ == nullptr ? "" : PQgetvalue(result_, row_, column);
  }

  PostgresDatabase& db_;
  std::string name_;
  std::string sql_;
  std::vector<std::optional<std::string>> values_;
  std::vector<int> binary_;
  PGresult* result_ = nullptr;
  int row_ = 0;
};

}  // namespace

std::string RedactPostgresUrl(const std::string& url) {
  std::string out = url;
  size_t start = out.find("://");
  if (start != std::string::npos) {
    start += 3;
    size_t at = out.find('@', start);
    size_t path = out.find_first_of("/?", start);
    if (at != std::string::npos && (path == std::string::npos || at < path)) {
      size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.erase(colon, at - colon);
    }
  }
  for (size_t p = out.find("password="); p != std::string::npos; p = out.find("password=")) {
    size_t end = out.find('&', p);
    bool first = p > 0 && out[p - 1] == '?';
    out.erase(first ? p : p - 1,
              end == std::string::npos ? std::string::npos : end - p + (first ? 1 : 0));
  }
  return out;
}

Result<std::unique_ptr<Database>> PostgresDatabase::Open(const std::string& url,
                                                         bool synchronous_full) {
  // The URL may name its own application_name; "tunefleet" otherwise, as
  // pg_stat_activity shows it.
  const char* keywords[] = {"dbname", "fallback_application_name", nullptr};
  const char* values[] = {url.c_str(), "tunefleet", nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, /*expand_dbname=*/1);
  std::string name = RedactPostgresUrl(url);
  if (conn == nullptr || PQstatus(conn) != CONNECTION_OK) {
    Status status = Status::Unavailable("cannot connect to tuning database " + name + ": " +
                                        (conn ? PQerrorMessage(conn) : "out of memory"));
    PQfinish(conn);
    return status;
  }
  PQsetNoticeProcessor(conn, IgnoreNotice, nullptr);
  std::unique_ptr<PostgresDatabase> db(new PostgresDatabase(conn, name, synchronous_full));
  if (!synchronous_full) TF_RETURN_IF_ERROR(db->Exec("SET synchronous_commit TO off"));
  return std::unique_ptr<Database>(std::move(db));
}

Status PostgresDatabase::Check(const PGresult* result, std::string_view what) {
  ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) {
    changes_ = std::strtoll(PQcmdTuples(const_cast<PGresult*>(result)), nullptr, 10);
    return Status::Ok();
  }
  if (holds_writer_lock_ && PQstatus(conn_) == CONNECTION_BAD) {
    // The advisory lock went with the connection: a standby may be the
    // writer now, and this process's memory is no longer the truth.
    spdlog::critical(
        "lost the connection to tuning database {} that made this coordinator its writer: {}; "
        "exiting so that a standby takes over (restarted, this one becomes a standby)",
        name(), PQerrorMessage(conn_));
    std::_Exit(75);
  }
  return PostgresError(result, conn_, what);
}

Status PostgresDatabase::Exec(std::string_view sql) {
  PGresult* result = PQexec(conn_, std::string(sql).c_str());
  Status status = Check(result, Shortened(sql));
  PQclear(result);
  return status;
}

Result<Statement> PostgresDatabase::Prepare(std::string_view sql) {
  auto it = prepared_.find(std::string(sql));
  if (it == prepared_.end()) {
    Prepared prepared;
    prepared.name = "tf" + std::to_string(prepared_.size() + 1);
    std::string text = NumberedPlaceholders(sql, &prepared.params);
    PGresult* result = PQprepare(conn_, prepared.name.c_str(), text.c_str(), 0, nullptr);
    Status status = Check(result, "prepare " + Shortened(sql));
    PQclear(result);
    TF_RETURN_IF_ERROR(status);
    it = prepared_.emplace(std::string(sql), std::move(prepared)).first;
  }
  return Statement(
      std::make_unique<PostgresCursor>(*this, it->second.name, it->second.params, sql));
}

Status PostgresDatabase::Begin(bool fsync) {
  TF_RETURN_IF_ERROR(Exec("BEGIN"));
  if (!fsync && synchronous_full()) return Exec("SET LOCAL synchronous_commit TO off");
  return Status::Ok();
}

Status PostgresDatabase::Commit() {
  PGresult* result = PQexec(conn_, "COMMIT");
  Status status = Check(result, "COMMIT");
  // A transaction in which a statement failed ends in ROLLBACK, not an error.
  if (status.ok() && std::string_view(PQcmdStatus(result)) == "ROLLBACK") {
    status = Status::Internal("tuning database: the transaction was rolled back");
  }
  PQclear(result);
  return status;
}

void PostgresDatabase::Rollback() { (void)Exec("ROLLBACK"); }

std::string PostgresDatabase::SchemaSql(std::string_view sqlite_schema) const {
  static const std::pair<std::string_view, std::string_view> kTypes[] = {
      {"INTEGER PRIMARY KEY AUTOINCREMENT", "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"},
      {"INTEGER", "BIGINT"},  // SQLite's integers have 64 bits
      {"REAL", "DOUBLE PRECISION"},
      {"BLOB", "BYTEA"},
  };
  auto is_word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::string out;
  size_t i = 0;
  while (i < sqlite_schema.size()) {
    bool replaced = false;
    if (i == 0 || !is_word(sqlite_schema[i - 1])) {
      for (const auto& [from, to] : kTypes) {
        size_t end = i + from.size();
        if (sqlite_schema.substr(i, from.size()) == from &&
            (end == sqlite_schema.size() || !is_word(sqlite_schema[end]))) {
          out += to;
          i = end;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += sqlite_schema[i++];
  }
  return out;
}

Status PostgresDatabase::HoldAsOnlyWriter(const std::function<Status()>& waiting) {
  // A writer whose host vanished without closing its connection keeps the
  // lock until the server notices: within about 25 s with these keepalives
  // (TCP only; a Unix socket's peer is on the server's host).
  TF_RETURN_IF_ERROR(
      Exec("SET tcp_keepalives_idle = 10; SET tcp_keepalives_interval = 5; "
           "SET tcp_keepalives_count = 3"));
  PGresult* result =
      PQexec(conn_, (std::string("SELECT pg_try_advisory_lock(") + kWriterLockKey + ")").c_str());
  Status status = Check(result, "pg_try_advisory_lock");
  bool held = status.ok() && std::string_view(PQgetvalue(result, 0, 0)) == "t";
  PQclear(result);
  TF_RETURN_IF_ERROR(status);
  if (!held) {
    if (waiting) TF_RETURN_IF_ERROR(waiting());
    TF_RETURN_IF_ERROR(Exec(std::string("SELECT pg_advisory_lock(") + kWriterLockKey + ")"));
  }
  holds_writer_lock_ = true;
  return Status::Ok();
}

}  // namespace tf::db
