#include "ordo/service/store/sqlite.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <utility>

namespace ordo::service::store {

Result<Db> Db::Open(const std::string& path, bool create, bool read_only) {
  sqlite3* db = nullptr;
  int flags = SQLITE_OPEN_NOMUTEX;  // one connection per thread (see the header)
  flags |= read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE;
  if (create && !read_only) {
    flags |= SQLITE_OPEN_CREATE;
    // SQLite would create the file 0644 (less the umask), readable by every local user, and gives
    // its -wal and -shm files the database's mode: created here first, 0600, all three are the
    // owner's alone. An existing file keeps its mode.
    if (!path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
      if (fd >= 0) ::close(fd);
    }
  }
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return Fail(Error{ErrorCode::kIo, "db", "cannot open database \"" + path + "\": " + message});
  }
  sqlite3_extended_result_codes(db, 1);
  // A reader meeting the writer's checkpoint waits instead of failing at once.
  sqlite3_busy_timeout(db, 5000);
  return Db(db);
}

Db::Db(Db&& other) noexcept : db_(std::exchange(other.db_, nullptr)) {}

Db& Db::operator=(Db&& other) noexcept {
  if (this != &other) {
    if (db_ != nullptr) sqlite3_close_v2(db_);
    db_ = std::exchange(other.db_, nullptr);
  }
  return *this;
}

Db::~Db() {
  if (db_ != nullptr) sqlite3_close_v2(db_);
}

Result<void> Db::Exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    return Fail(Error{ErrorCode::kIo, "db", "SQLite: " + text});
  }
  return {};
}

Result<Statement> Db::Prepare(std::string_view sql) {
  sqlite3_stmt* stmt = nullptr;
  const int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK) return Fail(LastError("prepare"));
  return Statement(db_, stmt);
}

Result<std::string> Db::PragmaValue(const char* pragma) {
  auto stmt = Prepare(std::string("PRAGMA ") + pragma);
  if (!stmt) return Fail(stmt.error());
  auto row = stmt->Step();
  if (!row) return Fail(row.error());
  if (!*row) return std::string();
  return stmt->Text(0);
}

int64_t Db::LastInsertRowId() const { return sqlite3_last_insert_rowid(db_); }

Error Db::LastError(std::string_view what) const {
  return Error{ErrorCode::kIo, "db", "SQLite " + std::string(what) + ": " + sqlite3_errmsg(db_)};
}

Statement::Statement(Statement&& other) noexcept
    : db_(std::exchange(other.db_, nullptr)),
      stmt_(std::exchange(other.stmt_, nullptr)),
      bind_error_(other.bind_error_) {}

Statement& Statement::operator=(Statement&& other) noexcept {
  if (this != &other) {
    if (stmt_ != nullptr) sqlite3_finalize(stmt_);
    db_ = std::exchange(other.db_, nullptr);
    stmt_ = std::exchange(other.stmt_, nullptr);
    bind_error_ = other.bind_error_;
  }
  return *this;
}

Statement::~Statement() {
  if (stmt_ != nullptr) sqlite3_finalize(stmt_);
}

namespace {
void Note(int rc, int& first_error) {
  if (rc != SQLITE_OK && first_error == 0) first_error = rc;
}
}  // namespace

Statement& Statement::Bind(int index, int64_t value) {
  Note(sqlite3_bind_int64(stmt_, index, value), bind_error_);
  return *this;
}

Statement& Statement::Bind(int index, double value) {
  Note(sqlite3_bind_double(stmt_, index, value), bind_error_);
  return *this;
}

Statement& Statement::Bind(int index, std::string_view value) {
  // SQLITE_TRANSIENT: SQLite copies the text, so the caller's buffer may go away before Step.
  Note(sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
       bind_error_);
  return *this;
}

Statement& Statement::Bind(int index, std::optional<int64_t> value) {
  return value ? Bind(index, *value) : BindNull(index);
}

Statement& Statement::BindNull(int index) {
  Note(sqlite3_bind_null(stmt_, index), bind_error_);
  return *this;
}

Result<bool> Statement::Step() {
  if (bind_error_ != 0) {
    const int rc = std::exchange(bind_error_, 0);
    return Fail(
        Error{ErrorCode::kInternal, "db", std::string("SQLite bind: ") + sqlite3_errstr(rc)});
  }
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  Error error{ErrorCode::kIo, "db", std::string("SQLite step: ") + sqlite3_errmsg(db_)};
  sqlite3_reset(stmt_);
  return Fail(std::move(error));
}

Result<void> Statement::Run() {
  for (;;) {
    auto row = Step();
    if (!row) {
      Reset();
      return Fail(row.error());
    }
    if (!*row) break;
  }
  Reset();
  return {};
}

void Statement::Reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  bind_error_ = 0;
}

bool Statement::IsNull(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

int64_t Statement::Int(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::Double(int column) const { return sqlite3_column_double(stmt_, column); }

std::string Statement::Text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  const int bytes = sqlite3_column_bytes(stmt_, column);
  return text == nullptr ? std::string() : std::string(reinterpret_cast<const char*>(text), bytes);
}

std::optional<int64_t> Statement::OptionalInt(int column) const {
  if (IsNull(column)) return std::nullopt;
  return Int(column);
}

}  // namespace ordo::service::store
