//! Every run remembered: a store of whole result documents with the keys
//! that find them again (when, host, target and its facts, the workload,
//! fathom's version, labels and tags), so that a run can be checked
//! against the runs of the same workload on the same target before it.
//!
//! The store is SQLite (`sqlite.rs`, bundled, the default) or PostgreSQL
//! (`postgres.rs`, one store for many machines), behind one small
//! interface: the history's queries are written once. Each document is
//! written in one transaction, so a process killed mid-write leaves the
//! store as it was, and several fathoms write at once safely.

mod postgres;
#[cfg(feature = "postgres")]
mod postgres_client;
mod sqlite;

pub use postgres::is_url;

use crate::result::change;
use crate::result::{Document, RunResult};
use std::path::{Path, PathBuf};

/// The store's layout; a store of a later layout is refused.
pub const SCHEMA: u32 = 1;

/// What went wrong with a store, one kind per way it can.
#[derive(Debug)]
pub enum HistoryError {
    /// The store cannot be opened or made (unwritable directory, not a
    /// database, a server that cannot be reached, locked past the wait).
    Open { store: String, why: String },
    /// The store was written by a later fathom, in a layout this one does
    /// not know.
    Newer { store: String, schema: u32 },
    /// Reading or writing a store that opened (a full disk, corruption).
    Store(String),
    /// An id that is not in the store.
    NoSuchRun(i64),
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryError::Open { store, why } => write!(f, "history {store}: {why}"),
            HistoryError::Newer { store, schema } => write!(
                f,
                "history {store}: written by a later fathom (layout {schema}; this one knows {SCHEMA}): use that fathom, or another --history",
            ),
            HistoryError::Store(why) => write!(f, "history: {why}"),
            HistoryError::NoSuchRun(id) => write!(f, "history: no run {id}"),
        }
    }
}

impl std::error::Error for HistoryError {}

/// A value in or out of the store.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Value {
    fn int(&self) -> i64 {
        match self {
            Value::Int(i) => *i,
            Value::Real(r) => *r as i64,
            Value::Text(t) => t.parse().unwrap_or(0),
            Value::Null => 0,
        }
    }

    fn real(&self) -> f64 {
        match self {
            Value::Real(r) => *r,
            Value::Int(i) => *i as f64,
            _ => 0.0,
        }
    }

    fn text(&self) -> Option<String> {
        match self {
            Value::Text(t) => Some(t.clone()),
            Value::Null => None,
            Value::Int(i) => Some(i.to_string()),
            Value::Real(r) => Some(r.to_string()),
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Text(s.into())
    }
}

impl From<Option<String>> for Value {
    fn from(s: Option<String>) -> Value {
        s.map_or(Value::Null, Value::Text)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    Sqlite,
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
}

/// What the history asks of a database: statements with `$N`
/// parameters, rows of values back.
pub(crate) trait Db {
    fn dialect(&self) -> Dialect;
    fn batch(&mut self, sql: &str) -> Result<(), String>;
    fn execute(&mut self, sql: &str, params: &[Value]) -> Result<u64, String>;
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, String>;
}

/// Where the history is kept unless `--history` says: the XDG data
/// directory's `fathom/history.db`.
pub fn default_path() -> Option<PathBuf> {
    let data = std::env::var_os("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")))?;
    Some(data.join("fathom").join("history.db"))
}

/// A stored document's keys, as `fathom history` lists them.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Entry {
    pub id: i64,
    /// Seconds since the Unix epoch the run started.
    pub at_unix_s: f64,
    pub started_at: String,
    pub host: String,
    pub kind: String,
    /// The workloads' keys (pattern, block size, depth, jobs, O_DIRECT,
    /// rate), or the other kinds' names.
    pub workloads: Vec<String>,
    pub targets: Vec<String>,
    pub label: Option<String>,
    pub tags: Vec<(String, String)>,
    pub fathom_version: String,
    pub fathom_commit: Option<String>,
}

/// Which documents to list.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub target: Option<String>,
    pub workload: Option<String>,
    pub tags: Vec<(String, String)>,
    pub since_unix_s: Option<f64>,
    pub host: Option<String>,
}

impl Filter {
    /// Whether it lets every document through.
    pub fn is_everything(&self) -> bool {
        self.target.is_none()
            && self.workload.is_none()
            && self.tags.is_empty()
            && self.since_unix_s.is_none()
            && self.host.is_none()
    }
}

pub struct History {
    db: Box<dyn Db>,
}

/// A result's keys in the store.
struct ResultKeys {
    kind: String,
    workload: Option<String>,
    target: Option<String>,
    model: Option<String>,
    filesystem: Option<String>,
}

fn keys_of(result: &RunResult) -> ResultKeys {
    let kind = result.kind_name().to_string();
    let mut keys = ResultKeys {
        kind,
        workload: None,
        target: None,
        model: None,
        filesystem: None,
    };
    let kind = result.kind();
    keys.workload = kind.workload_key();
    keys.target = kind.target_key();
    if let Some(place) = kind.place() {
        (keys.filesystem, keys.model) = (place.filesystem, place.model);
    }
    keys
}

/// The document's start, in seconds since the Unix epoch (RFC 3339 in
/// the document).
fn started_unix_s(doc: &Document) -> f64 {
    humantime::parse_rfc3339_weak(doc.started_at.trim_end_matches('Z'))
        .or_else(|_| humantime::parse_rfc3339(&doc.started_at))
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The tables, in each database's words.
fn layout_sql(dialect: Dialect) -> String {
    let (id, real, int) = match dialect {
        Dialect::Sqlite => ("INTEGER PRIMARY KEY", "REAL", "INTEGER"),
        Dialect::Postgres => ("BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "BIGINT"),
    };
    format!(
        "CREATE TABLE IF NOT EXISTS fathom (key TEXT PRIMARY KEY, value TEXT NOT NULL);
         INSERT INTO fathom (key, value) VALUES ('schema', '{SCHEMA}') ON CONFLICT DO NOTHING;
         CREATE TABLE IF NOT EXISTS documents (
             id {id},
             at_unix_s {real} NOT NULL,
             started_at TEXT NOT NULL,
             host TEXT NOT NULL,
             kernel TEXT NOT NULL,
             fathom_version TEXT NOT NULL,
             fathom_commit TEXT,
             label TEXT,
             json TEXT NOT NULL);
         CREATE TABLE IF NOT EXISTS results (
             document {int} NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
             idx {int} NOT NULL,
             kind TEXT NOT NULL,
             workload TEXT,
             target TEXT,
             model TEXT,
             filesystem TEXT,
             PRIMARY KEY (document, idx));
         CREATE TABLE IF NOT EXISTS tags (
             document {int} NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
             key TEXT NOT NULL,
             value TEXT NOT NULL);
         CREATE INDEX IF NOT EXISTS results_by_workload ON results (workload, target);
         CREATE INDEX IF NOT EXISTS documents_by_time ON documents (at_unix_s);
         CREATE INDEX IF NOT EXISTS tags_by_key ON tags (key, value);"
    )
}

/// Checks, writing nothing, that results could be kept at `location`
/// (a PostgreSQL URL is checked when it is opened).
pub fn check(location: &Path) -> Result<(), HistoryError> {
    let text = location.to_string_lossy();
    if postgres::is_url(&text) {
        #[cfg(not(feature = "postgres"))]
        return Err(HistoryError::Open {
            store: postgres::shown(&text),
            why: postgres::WITHOUT_CLIENT.into(),
        });
        #[cfg(feature = "postgres")]
        return Ok(());
    }
    sqlite::check(location).map_err(|why| HistoryError::Open {
        store: location.display().to_string(),
        why,
    })
}

impl History {
    /// Opens the store at `location` (a file, or a `postgres://` URL),
    /// making it (and its directory, or its tables) when it is not there.
    pub fn open(location: &Path) -> Result<History, HistoryError> {
        let text = location.to_string_lossy();
        let (store, db): (String, Result<Box<dyn Db>, String>) = match postgres::is_url(&text) {
            true => (postgres::shown(&text), postgres::open(&text)),
            false => (
                location.display().to_string(),
                sqlite::Sqlite::open(location).map(|s| Box::new(s) as Box<dyn Db>),
            ),
        };
        let fail = |why: String| HistoryError::Open {
            store: store.clone(),
            why,
        };
        let mut history = History {
            db: db.map_err(fail)?,
        };
        let layout = |h: &mut History| {
            h.db.query("SELECT value FROM fathom WHERE key = 'schema'", &[])
                .ok()
                .and_then(|rows| rows.first().and_then(|r| r[0].text()))
        };
        // The tables are made only when they are not there: making them
        // again would lock them against the writers of a store in use.
        let schema = match layout(&mut history) {
            Some(schema) => schema,
            None => {
                if let Err(why) = history.make_layout() {
                    let _ = history.db.batch("ROLLBACK");
                    return Err(fail(why));
                }
                layout(&mut history).unwrap_or_default()
            }
        };
        match schema.parse::<u32>() {
            Ok(s) if s <= SCHEMA => Ok(history),
            Ok(s) => Err(HistoryError::Newer { store, schema: s }),
            Err(_) => Err(fail(format!(
                "not a fathom history (its layout is '{schema}')"
            ))),
        }
    }

    /// Makes the tables, once: of several fathoms starting on a new store
    /// at once, one makes them and the others find them made.
    fn make_layout(&mut self) -> Result<(), String> {
        let dialect = self.db.dialect();
        match dialect {
            // The write lock keeps every other writer out meanwhile.
            Dialect::Sqlite => self.db.batch("BEGIN IMMEDIATE")?,
            Dialect::Postgres => {
                self.db
                    .batch("BEGIN; SELECT pg_advisory_xact_lock(7460616)")?;
                let made = self
                    .db
                    .query("SELECT to_regclass('fathom')::text", &[])?
                    .first()
                    .and_then(|r| r[0].text())
                    .is_some();
                if made {
                    return self.db.batch("COMMIT");
                }
            }
        }
        self.db.batch(&layout_sql(dialect))?;
        self.db.batch("COMMIT")
    }

    /// Runs `f` in a transaction that writes: all of it lands, or none.
    fn writing<T>(
        &mut self,
        f: impl FnOnce(&mut dyn Db) -> Result<T, String>,
    ) -> Result<T, HistoryError> {
        let begin = match self.db.dialect() {
            // Takes the write lock now, waiting for it, rather than
            // failing when a read turns into a write.
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        };
        self.db.batch(begin).map_err(HistoryError::Store)?;
        match f(self.db.as_mut()) {
            Ok(v) => {
                self.db.batch("COMMIT").map_err(HistoryError::Store)?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.db.batch("ROLLBACK");
                Err(HistoryError::Store(e))
            }
        }
    }

    /// Stores `doc` whole, with its keys and `tags`; returns its id.
    pub fn record(
        &mut self,
        doc: &Document,
        tags: &[(String, String)],
    ) -> Result<i64, HistoryError> {
        let json = serde_json::to_string(doc).map_err(|e| HistoryError::Store(e.to_string()))?;
        self.writing(|db| {
            let id = db
                .query(
                    "INSERT INTO documents (at_unix_s, started_at, host, kernel, fathom_version, fathom_commit, label, json)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
                    &[
                        Value::Real(started_unix_s(doc)),
                        doc.started_at.as_str().into(),
                        doc.host.hostname.as_str().into(),
                        doc.host.kernel.as_str().into(),
                        doc.fathom_version.as_str().into(),
                        doc.fathom_commit.clone().into(),
                        doc.label.clone().into(),
                        Value::Text(json),
                    ],
                )?
                .first()
                .map(|r| r[0].int())
                .ok_or("the store gave no id")?;
            for (i, result) in doc.results.iter().enumerate() {
                let k = keys_of(result);
                db.execute(
                    "INSERT INTO results (document, idx, kind, workload, target, model, filesystem)
                     VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    &[
                        Value::Int(id),
                        Value::Int(i as i64),
                        Value::Text(k.kind),
                        k.workload.into(),
                        k.target.into(),
                        k.model.into(),
                        k.filesystem.into(),
                    ],
                )?;
            }
            for (key, value) in tags {
                db.execute(
                    "INSERT INTO tags (document, key, value) VALUES ($1, $2, $3)",
                    &[Value::Int(id), key.as_str().into(), value.as_str().into()],
                )?;
            }
            Ok(id)
        })
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Vec<Value>>, HistoryError> {
        self.db.query(sql, params).map_err(HistoryError::Store)
    }

    /// The documents `filter` lets through, oldest first.
    pub fn list(&mut self, filter: &Filter) -> Result<Vec<Entry>, HistoryError> {
        let mut sql = String::from(
            "SELECT d.id, d.at_unix_s, d.started_at, d.host, d.fathom_version, d.label, d.fathom_commit FROM documents d WHERE 1 = 1",
        );
        let mut args: Vec<Value> = Vec::new();
        let mut arg = |v: Value| {
            args.push(v);
            format!("${}", args.len())
        };
        if let Some(t) = &filter.target {
            // A drive is kept by its serial: its device's name today finds
            // it under whatever name it had then.
            let drive = crate::measure::drive::history_key_of_device(t).unwrap_or_default();
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM results r WHERE r.document = d.id AND (r.target = {} OR r.target = {}))",
                arg(t.as_str().into()),
                arg(Value::Text(drive))
            );
        }
        if let Some(w) = &filter.workload {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM results r WHERE r.document = d.id AND (r.workload LIKE {} OR r.kind = {}))",
                arg(Value::Text(format!("%{w}%"))),
                arg(w.as_str().into())
            );
        }
        for (k, v) in &filter.tags {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM tags g WHERE g.document = d.id AND g.key = {} AND g.value = {})",
                arg(k.as_str().into()),
                arg(v.as_str().into())
            );
        }
        if let Some(since) = filter.since_unix_s {
            sql += &format!(" AND d.at_unix_s >= {}", arg(Value::Real(since)));
        }
        if let Some(h) = &filter.host {
            sql += &format!(" AND d.host = {}", arg(h.as_str().into()));
        }
        sql += " ORDER BY d.at_unix_s, d.id";
        let rows = self.query(&sql, &args)?;
        rows.into_iter()
            .map(|r| {
                self.filled(Entry {
                    id: r[0].int(),
                    at_unix_s: r[1].real(),
                    started_at: r[2].text().unwrap_or_default(),
                    host: r[3].text().unwrap_or_default(),
                    fathom_version: r[4].text().unwrap_or_default(),
                    label: r[5].text(),
                    fathom_commit: r[6].text(),
                    kind: String::new(),
                    workloads: Vec::new(),
                    targets: Vec::new(),
                    tags: Vec::new(),
                })
            })
            .collect()
    }

    /// An entry with its results' and tags' keys.
    fn filled(&mut self, mut e: Entry) -> Result<Entry, HistoryError> {
        let results = self.query(
            "SELECT kind, workload, target FROM results WHERE document = $1 ORDER BY idx",
            &[Value::Int(e.id)],
        )?;
        let mut kinds: Vec<String> = Vec::new();
        for r in results {
            let kind = r[0].text().unwrap_or_default();
            if !kinds.contains(&kind) {
                kinds.push(kind.clone());
            }
            let w = r[1].text().unwrap_or(kind);
            if !e.workloads.contains(&w) {
                e.workloads.push(w);
            }
            if let Some(t) = r[2].text().filter(|t| !e.targets.contains(t)) {
                e.targets.push(t);
            }
        }
        e.kind = kinds.join("+");
        e.tags = self
            .query(
                "SELECT key, value FROM tags WHERE document = $1 ORDER BY key, value",
                &[Value::Int(e.id)],
            )?
            .into_iter()
            .map(|r| {
                (
                    r[0].text().unwrap_or_default(),
                    r[1].text().unwrap_or_default(),
                )
            })
            .collect();
        Ok(e)
    }

    /// Document `id`, whole.
    pub fn document(&mut self, id: i64) -> Result<Document, HistoryError> {
        let rows = self.query(
            "SELECT json FROM documents WHERE id = $1",
            &[Value::Int(id)],
        )?;
        let json = rows
            .first()
            .and_then(|r| r[0].text())
            .ok_or(HistoryError::NoSuchRun(id))?;
        Document::from_json(&json).map_err(|e| HistoryError::Store(format!("run {id}: {e}")))
    }

    /// The id `doc` is kept under, if it is kept (the same host's run
    /// that started at the same moment).
    pub fn id_of(&mut self, doc: &Document) -> Result<Option<i64>, HistoryError> {
        Ok(self
            .query(
                "SELECT id FROM documents WHERE host = $1 AND started_at = $2 ORDER BY id LIMIT 1",
                &[
                    doc.host.hostname.as_str().into(),
                    doc.started_at.as_str().into(),
                ],
            )?
            .first()
            .map(|r| r[0].int()))
    }

    /// Removes the documents `ids` (all of them, or none when one is not
    /// there); returns how many.
    pub fn remove(&mut self, ids: &[i64]) -> Result<usize, HistoryError> {
        // Whether each is there, without reading the documents themselves.
        for &id in ids {
            let kept = self.query("SELECT 1 FROM documents WHERE id = $1", &[Value::Int(id)])?;
            if kept.is_empty() {
                return Err(HistoryError::NoSuchRun(id));
            }
        }
        self.writing(|db| {
            // Results and tags go with their document (cascade), said
            // here too for a store whose foreign keys are off. A run named
            // twice is removed once, and counted once.
            let mut removed = 0;
            for id in ids {
                for table in ["tags", "results"] {
                    db.execute(
                        &format!("DELETE FROM {table} WHERE document = $1"),
                        &[Value::Int(*id)],
                    )?;
                }
                removed += db.execute("DELETE FROM documents WHERE id = $1", &[Value::Int(*id)])?;
            }
            Ok(removed as usize)
        })
    }

    /// The last `n` results of `result`'s workload on its target (from
    /// `host`), most recent last, leaving out document `except` (the run
    /// itself).
    pub fn last_runs(
        &mut self,
        result: &RunResult,
        host: &str,
        n: usize,
        except: Option<i64>,
    ) -> Result<Vec<(i64, RunResult)>, HistoryError> {
        let kind = result.kind();
        let Some(key) = kind.workload_key() else {
            return Ok(Vec::new());
        };
        let found = self.query(
            "SELECT d.id, r.idx FROM results r JOIN documents d ON d.id = r.document
             WHERE r.kind = $1 AND r.workload = $2 AND r.target IS NOT DISTINCT FROM $3
               AND d.host = $4 AND d.id IS DISTINCT FROM $5
             ORDER BY d.at_unix_s DESC, d.id DESC LIMIT $6",
            &[
                Value::Text(result.kind_name().into()),
                Value::Text(key),
                kind.target_key().into(),
                host.into(),
                except.map_or(Value::Null, Value::Int),
                Value::Int(n as i64),
            ],
        )?;
        let mut out = Vec::new();
        for r in found.into_iter().rev() {
            let (id, idx) = (r[0].int(), r[1].int());
            if let Some(earlier) = self.document(id)?.results.into_iter().nth(idx as usize)
                && earlier.kind_name() == result.kind_name()
            {
                out.push((id, earlier));
            }
        }
        Ok(out)
    }

    /// The ids of the documents tagged `key=value`.
    pub fn tagged(&mut self, key: &str, value: &str) -> Result<Vec<i64>, HistoryError> {
        Ok(self
            .query(
                "SELECT DISTINCT document FROM tags WHERE key = $1 AND value = $2 ORDER BY document",
                &[key.into(), value.into()],
            )?
            .iter()
            .map(|r| r[0].int())
            .collect())
    }
}

/// A workload of a run against its runs before.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub workload: String,
    /// The earlier runs it was checked against.
    pub runs: usize,
    pub changes: Vec<change::DirectionChange>,
    /// Earlier runs of it left out because their settings differ, and
    /// how ("completion wait auto vs sleep").
    pub set_apart: usize,
    pub differing: Vec<String>,
}

/// Each result of `doc` (stored as `id`) against the last `n` runs of the
/// same workload on the same target from the same host before it;
/// results never run before, and kinds with no per-second figures, are
/// left out.
pub fn against_earlier(
    history: &mut History,
    doc: &Document,
    id: i64,
    n: usize,
    settings: change::Bootstrap,
) -> Result<Vec<Earlier>, HistoryError> {
    let mut out = Vec::new();
    for r in doc.results.iter().filter(|r| !r.kind().series().is_empty()) {
        // Runs of other settings are looked past, up to a few times as
        // many as are compared.
        let earlier = history.last_runs(r, &doc.host.hostname, n * 4, Some(id))?;
        if earlier.is_empty() {
            continue;
        }
        let mut base: Vec<RunResult> = Vec::new();
        let (mut set_apart, mut differing) = (0, Vec::new());
        for (earlier_id, e) in earlier.into_iter().rev() {
            let then = history.document(earlier_id)?;
            let differ = crate::result::settings::of_runs((&then, e.kind()), (doc, r.kind()));
            if differ.is_empty() {
                if base.len() < n {
                    base.push(e);
                }
            } else {
                set_apart += 1;
                for d in differ {
                    if !differing.contains(&d) {
                        differing.push(d);
                    }
                }
            }
        }
        base.reverse();
        let base: Vec<&dyn crate::result::kind::Kind> = base.iter().map(RunResult::kind).collect();
        out.push(Earlier {
            workload: r.kind().described(),
            runs: base.len(),
            changes: match base.is_empty() {
                true => Vec::new(),
                false => change::compare(&base, r.kind(), settings),
            },
            set_apart,
            differing,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(latency_us: u64) -> Document {
        let mut d = Document::new(crate::measure::facts::host_facts(), None);
        let mut w = crate::result::test_support::empty_workload();
        w.spec.null_latency_ns = latency_us * 1000;
        d.results.push(RunResult::Workload(w));
        d
    }

    #[test]
    fn documents_come_back_whole_and_filtered_by_tag() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        let mut h = History::open(&path).unwrap();
        let a = h
            .record(&doc(100), &[("kernel".into(), "6.1".into())])
            .unwrap();
        let b = h.record(&doc(150), &[]).unwrap();
        let again = doc_with_time(&mut h, a);
        assert_eq!(h.document(a).unwrap(), again);
        let all = h.list(&Filter::default()).unwrap();
        assert_eq!(all.iter().map(|e| e.id).collect::<Vec<_>>(), [a, b]);
        let tagged = h
            .list(&Filter {
                tags: vec![("kernel".into(), "6.1".into())],
                ..Filter::default()
            })
            .unwrap();
        assert_eq!(tagged.len(), 1);
        assert_eq!(tagged[0].tags, [("kernel".to_string(), "6.1".to_string())]);
        let w = doc(100).results[0].clone();
        let host = crate::measure::facts::host_facts().hostname;
        assert_eq!(h.last_runs(&w, &host, 5, Some(b)).unwrap().len(), 1);
        assert_eq!(h.remove(&[a]).unwrap(), 1);
        assert!(matches!(h.document(a), Err(HistoryError::NoSuchRun(_))));
    }

    fn doc_with_time(h: &mut History, id: i64) -> Document {
        h.document(id).unwrap()
    }

    #[test]
    fn a_store_of_a_later_layout_or_not_a_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        drop(History::open(&path).unwrap());
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute("UPDATE fathom SET value = '99' WHERE key = 'schema'", [])
            .unwrap();
        drop(conn);
        let e = History::open(&path).err().unwrap();
        assert!(matches!(e, HistoryError::Newer { schema: 99, .. }), "{e}");
        let junk = dir.path().join("junk.db");
        std::fs::write(&junk, vec![b'x'; 8192]).unwrap();
        let e = History::open(&junk).err().unwrap();
        assert!(e.to_string().contains("not a fathom history"), "{e}");
    }
}
