// The tuning database's schema as an ordered list of migrations, written
// once (in SQLite's type names, see Database::SchemaSql) for every backend.
// A database records the version it is at; opening it applies the missing
// migrations in one transaction each, and refuses a database newer than this
// code.
#pragma once

#include "db/database.h"

namespace tf::db {

// The version this code writes.
int LatestSchemaVersion();

// Brings `db` from its version up to `target` (LatestSchemaVersion() in
// production; tests stop earlier to check upgrades).
Status Migrate(Database& db, int target);

Result<int> SchemaVersion(Database& db);

}  // namespace tf::db
