#include "db/database.h"

#include "db/postgres.h"
#include "db/sqlite.h"

namespace tf::db {

bool Database::IsPostgresUrl(std::string_view location) {
  return location.starts_with("postgresql://") || location.starts_with("postgres://");
}

std::string Database::DisplayName(const std::string& location) {
  return IsPostgresUrl(location) ? RedactPostgresUrl(location) : location;
}

Result<std::unique_ptr<Database>> Database::Open(const std::string& location,
                                                 bool synchronous_full) {
  if (IsPostgresUrl(location)) return PostgresDatabase::Open(location, synchronous_full);
  return SqliteDatabase::Open(location, synchronous_full);
}

}  // namespace tf::db
