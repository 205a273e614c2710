// A thin RAII layer over SQLite's C API: a connection, prepared statements with typed binds and
// columns, savepoints. Every query the service runs is a prepared statement with bound parameters;
// this layer offers no way to run SQL text built from input (Exec takes only literals in the
// callers: schema migrations and pragmas).
//
// Not thread-safe: one Db per thread (SQLite is built serialized on Debian, but the service keeps a
// connection per thread anyway so statements never interleave).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "ordo/core/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace ordo::service::store {

class Statement;

/// One SQLite connection.
class Db {
 public:
  /// Opens (creating when `create`) the database file at `path`. `read_only` opens it read-only.
  static Result<Db> Open(const std::string& path, bool create, bool read_only = false);

  Db(Db&& other) noexcept;
  Db& operator=(Db&& other) noexcept;
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;
  ~Db();

  /// Runs SQL without parameters (schema, pragmas, BEGIN/COMMIT). Never pass text built from input.
  [[nodiscard]] Result<void> Exec(const char* sql);

  /// Compiles one statement. The Statement must not outlive this Db.
  [[nodiscard]] Result<Statement> Prepare(std::string_view sql);

  /// A pragma's single value as text ("wal", "2"), for checks and tests.
  [[nodiscard]] Result<std::string> PragmaValue(const char* pragma);

  [[nodiscard]] int64_t LastInsertRowId() const;
  [[nodiscard]] sqlite3* handle() const { return db_; }

  /// An Error (kIo) with SQLite's message for the last failure on this connection.
  [[nodiscard]] Error LastError(std::string_view what) const;

 private:
  explicit Db(sqlite3* db) : db_(db) {}
  sqlite3* db_ = nullptr;
};

/// A prepared statement. Bind parameters are 1-based, as in SQLite.
class Statement {
 public:
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&& other) noexcept;
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  ~Statement();

  Statement& Bind(int index, int64_t value);
  Statement& Bind(int index, double value);
  Statement& Bind(int index, std::string_view value);
  Statement& Bind(int index, std::optional<int64_t> value);
  Statement& BindNull(int index);

  /// Steps once: true when a row is available, false when done. Errors carry SQLite's message.
  [[nodiscard]] Result<bool> Step();
  /// Steps until done (for statements that return no rows) and resets for reuse.
  [[nodiscard]] Result<void> Run();
  /// Resets the statement and clears its bindings so it can run again.
  void Reset();

  [[nodiscard]] bool IsNull(int column) const;
  [[nodiscard]] int64_t Int(int column) const;
  [[nodiscard]] double Double(int column) const;
  [[nodiscard]] std::string Text(int column) const;
  [[nodiscard]] std::optional<int64_t> OptionalInt(int column) const;

 private:
  friend class Db;
  Statement(sqlite3* db, sqlite3_stmt* stmt) : db_(db), stmt_(stmt) {}
  sqlite3* db_ = nullptr;
  sqlite3_stmt* stmt_ = nullptr;
  int bind_error_ = 0;  // the first failed bind, reported by Step
};

}  // namespace ordo::service::store
