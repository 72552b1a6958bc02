//! The history in a SQLite file (the default): bundled, so nothing is
//! needed on the host. WAL mode and a wait for the lock let several
//! fathoms on one host write at once.

use super::{Db, Dialect, Value};
use crate::gate::write::Output;
use rusqlite::types::{ToSqlOutput, ValueRef};
use rusqlite::{Connection, ErrorCode};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a writer waits for the store's lock.
const LOCK_WAIT: Duration = Duration::from_secs(10);

pub struct Sqlite(Connection);

/// SQLite numbers parameters `?N`; the history writes `$N` as PostgreSQL does.
fn positional(sql: &str) -> String {
    sql.replace('$', "?")
}

impl rusqlite::ToSql for Value {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match self {
            Value::Null => ToSqlOutput::Owned(rusqlite::types::Value::Null),
            Value::Int(i) => ToSqlOutput::Owned((*i).into()),
            Value::Real(r) => ToSqlOutput::Owned((*r).into()),
            Value::Text(t) => ToSqlOutput::Borrowed(ValueRef::Text(t.as_bytes())),
        })
    }
}

fn said(e: rusqlite::Error) -> String {
    match e.sqlite_error_code() {
        Some(ErrorCode::NotADatabase) => "not a fathom history (the file is not a database)".into(),
        _ => e.to_string(),
    }
}

/// The store, as the write gate knows it: a regular file (never a
/// device, a FIFO or a file this run reads), and if it exists, a SQLite
/// database; that it is fathom's is checked by its tables before anything
/// is written.
const STORE: Output = Output {
    flag: "--history",
    what: "a fathom history",
    streams: false,
    ours: is_sqlite,
    overwrite_hint: None,
};

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

fn is_sqlite(path: &Path) -> bool {
    crate::gate::read::head(path, SQLITE_MAGIC.len()).is_some_and(|h| h == SQLITE_MAGIC)
}

/// The gate's refusal of `path`, without the flag and path it starts
/// with: the history's own error names the store.
fn refused(path: &Path, e: crate::util::error::UsageError) -> String {
    let prefix = format!("--history {}: ", path.display());
    e.0.strip_prefix(&prefix)
        .map_or(e.0.clone(), str::to_string)
}

/// Refuses a database with tables and none of them fathom's.
fn refuse_foreign(conn: &Connection) -> Result<(), String> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .map_err(said)?;
    if !tables.is_empty() && !tables.iter().any(|t| t == "fathom") {
        return Err(format!(
            "not a fathom history: a SQLite database with tables of its own ({}); fathom writes only to its own",
            tables.join(", ")
        ));
    }
    Ok(())
}

/// Only the default history's directory is made: a `--history` named in a
/// directory that is not there is a typo, not a place to make one.
fn refuse_missing_directory(path: &Path) -> Result<(), String> {
    let dir = crate::util::directory_of(path);
    if Some(path) != super::default_path().as_deref() && !dir.is_dir() {
        return Err(format!(
            "its directory {} does not exist (fathom makes only the default history's)",
            dir.display()
        ));
    }
    Ok(())
}

/// Checks, before a run and writing nothing, that a result could be kept
/// at `path`: the refusals of [`Sqlite::open`], read-only.
pub fn check(path: &Path) -> Result<(), String> {
    refuse_missing_directory(path)?;
    let real = crate::gate::write::check_database(path, STORE).map_err(|e| refused(path, e))?;
    if !is_sqlite(&real) {
        return Ok(());
    }
    let conn = Connection::open_with_flags(&real, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .map_err(said)?;
    refuse_foreign(&conn)
}

impl Sqlite {
    pub fn open(path: &Path) -> Result<Sqlite, String> {
        refuse_missing_directory(path)?;
        let real = crate::gate::write::database(path, STORE).map_err(|e| refused(path, e))?;
        let conn = Connection::open(&real).map_err(said)?;
        conn.busy_timeout(LOCK_WAIT).map_err(said)?;
        // Another program's database is left as it was: no tables of
        // fathom's added, its journal not turned to WAL.
        refuse_foreign(&conn)?;
        crate::gate::claims::claim(&real, STORE.what);
        // Turning a new store to WAL takes its lock without the busy
        // handler's wait: of several fathoms opening a new store at once,
        // all but one were told "database is locked". They wait here.
        let deadline = Instant::now() + LOCK_WAIT;
        while let Err(e) = conn.pragma_update(None, "journal_mode", "WAL") {
            let busy = matches!(
                e.sqlite_error_code(),
                Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
            );
            if !busy || Instant::now() >= deadline {
                return Err(said(e));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(said)?;
        Ok(Sqlite(conn))
    }
}

impl Db for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        self.0.execute_batch(sql).map_err(said)
    }

    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String> {
        self.0
            .execute(&positional(sql), rusqlite::params_from_iter(params))
            .map(|n| n as u64)
            .map_err(said)
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let mut stmt = self.0.prepare_cached(&positional(sql)).map_err(said)?;
        let columns = stmt.column_count();
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params), |row| {
                (0..columns)
                    .map(|i| {
                        Ok(match row.get_ref(i)? {
                            ValueRef::Null => Value::Null,
                            ValueRef::Integer(n) => Value::Int(n),
                            ValueRef::Real(r) => Value::Real(r),
                            ValueRef::Text(t) | ValueRef::Blob(t) => {
                                Value::Text(String::from_utf8_lossy(t).into_owned())
                            }
                        })
                    })
                    .collect::<rusqlite::Result<Vec<Value>>>()
            })
            .map_err(said)?;
        rows.collect::<rusqlite::Result<Vec<_>>>().map_err(said)
    }
}
