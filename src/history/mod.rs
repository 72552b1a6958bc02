//! Every run remembered: a store of whole result documents with the keys
//! that find them again (when, host, target and its facts, the workload,
//! fathom's version, labels and tags), so that a run can be checked
//! against the runs of the same workload on the same target before it.
//!
//! The store is SQLite (bundled): one file, written in one transaction per
//! document, in WAL mode with a wait for the lock, so that several fathoms
//! on one host write safely and a process killed mid-write leaves the
//! store as it was.

use crate::result::change;
use crate::result::{Document, RunResult, WorkloadResult};
use rusqlite::{Connection, OptionalExtension, params};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The store's layout; a store of a later layout is refused.
pub const SCHEMA: u32 = 1;

/// What went wrong with a store, one kind per way it can.
#[derive(Debug)]
pub enum HistoryError {
    /// The store cannot be opened or made (unwritable directory, not a
    /// database, locked past the wait).
    Open { path: PathBuf, why: String },
    /// The store was written by a later fathom, in a layout this one does
    /// not know.
    Newer { path: PathBuf, schema: u32 },
    /// Reading or writing a store that opened (a full disk, corruption).
    Store(String),
    /// An id that is not in the store.
    NoSuchRun(i64),
}

impl std::fmt::Display for HistoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HistoryError::Open { path, why } => {
                write!(f, "history {}: {why}", path.display())
            }
            HistoryError::Newer { path, schema } => write!(
                f,
                "history {}: written by a later fathom (layout {schema}; this one knows {SCHEMA}): use that fathom, or another --history",
                path.display()
            ),
            HistoryError::Store(why) => write!(f, "history: {why}"),
            HistoryError::NoSuchRun(id) => write!(f, "history: no run {id}"),
        }
    }
}

impl std::error::Error for HistoryError {}

fn store_error(e: rusqlite::Error) -> HistoryError {
    HistoryError::Store(e.to_string())
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

pub struct History {
    conn: Connection,
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
    let kind = serde_json::to_value(result)
        .ok()
        .and_then(|v| v.get("kind").and_then(|k| k.as_str()).map(String::from))
        .unwrap_or_else(|| "unknown".into());
    match result {
        RunResult::Workload(w) => {
            let target = w.targets.first();
            ResultKeys {
                kind,
                workload: Some(change::workload_key(&w.spec)),
                target: target.map(|t| t.name.clone()),
                model: target
                    .and_then(|t| t.facts.device.as_ref())
                    .and_then(|d| d.model.clone()),
                filesystem: target.and_then(|t| t.facts.filesystem.clone()),
            }
        }
        RunResult::Tree(t) => ResultKeys {
            kind,
            workload: None,
            target: Some(t.spec.dir.clone()),
            model: None,
            filesystem: t.filesystem.clone(),
        },
        _ => ResultKeys {
            kind,
            workload: None,
            target: None,
            model: None,
            filesystem: None,
        },
    }
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

impl History {
    /// Opens the store at `path`, making it (and its directory) when it
    /// is not there.
    pub fn open(path: &Path) -> Result<History, HistoryError> {
        let fail = |why: String| HistoryError::Open {
            path: path.to_path_buf(),
            why,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| fail(e.to_string()))?;
        }
        let conn = Connection::open(path).map_err(|e| fail(e.to_string()))?;
        conn.busy_timeout(Duration::from_secs(10))
            .map_err(|e| fail(e.to_string()))?;
        let said = |e: rusqlite::Error| match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::NotADatabase) => {
                fail("not a fathom history (the file is not a database)".into())
            }
            _ => fail(e.to_string()),
        };
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(said)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(said)?;
        let history = History { conn };
        history.layout(path)?;
        Ok(history)
    }

    /// Makes the tables of a new store; refuses a later layout.
    fn layout(&self, path: &Path) -> Result<(), HistoryError> {
        let fail = |e: rusqlite::Error| HistoryError::Open {
            path: path.to_path_buf(),
            why: e.to_string(),
        };
        self.conn
            .execute_batch(
                "BEGIN IMMEDIATE;
                 CREATE TABLE IF NOT EXISTS fathom (key TEXT PRIMARY KEY, value TEXT NOT NULL);
                 INSERT OR IGNORE INTO fathom (key, value) VALUES ('schema', '1');
                 CREATE TABLE IF NOT EXISTS documents (
                     id INTEGER PRIMARY KEY,
                     at_unix_s REAL NOT NULL,
                     started_at TEXT NOT NULL,
                     host TEXT NOT NULL,
                     kernel TEXT NOT NULL,
                     fathom_version TEXT NOT NULL,
                     label TEXT,
                     json TEXT NOT NULL);
                 CREATE TABLE IF NOT EXISTS results (
                     document INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                     idx INTEGER NOT NULL,
                     kind TEXT NOT NULL,
                     workload TEXT,
                     target TEXT,
                     model TEXT,
                     filesystem TEXT,
                     PRIMARY KEY (document, idx));
                 CREATE TABLE IF NOT EXISTS tags (
                     document INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
                     key TEXT NOT NULL,
                     value TEXT NOT NULL);
                 CREATE INDEX IF NOT EXISTS results_by_workload ON results (workload, target);
                 CREATE INDEX IF NOT EXISTS documents_by_time ON documents (at_unix_s);
                 CREATE INDEX IF NOT EXISTS tags_by_key ON tags (key, value);
                 COMMIT;",
            )
            .map_err(|e| {
                let _ = self.conn.execute_batch("ROLLBACK");
                match e.sqlite_error_code() {
                    Some(rusqlite::ErrorCode::NotADatabase) => HistoryError::Open {
                        path: path.to_path_buf(),
                        why: "not a fathom history (the file is not a database)".into(),
                    },
                    _ => fail(e),
                }
            })?;
        let schema: String = self
            .conn
            .query_row("SELECT value FROM fathom WHERE key = 'schema'", [], |r| {
                r.get(0)
            })
            .map_err(fail)?;
        match schema.parse::<u32>() {
            Ok(s) if s <= SCHEMA => Ok(()),
            Ok(s) => Err(HistoryError::Newer {
                path: path.to_path_buf(),
                schema: s,
            }),
            Err(_) => Err(HistoryError::Open {
                path: path.to_path_buf(),
                why: format!("not a fathom history (its layout is '{schema}')"),
            }),
        }
    }

    /// Stores `doc` whole, with its keys and `tags`; returns its id.
    pub fn record(
        &mut self,
        doc: &Document,
        tags: &[(String, String)],
    ) -> Result<i64, HistoryError> {
        let json = serde_json::to_string(doc).map_err(|e| HistoryError::Store(e.to_string()))?;
        let tx = self.conn.transaction().map_err(store_error)?;
        tx.execute(
            "INSERT INTO documents (at_unix_s, started_at, host, kernel, fathom_version, label, json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            params![
                started_unix_s(doc),
                doc.started_at,
                doc.host.hostname,
                doc.host.kernel,
                doc.fathom_version,
                doc.label,
                json
            ],
        )
        .map_err(store_error)?;
        let id = tx.last_insert_rowid();
        for (i, result) in doc.results.iter().enumerate() {
            let k = keys_of(result);
            tx.execute(
                "INSERT INTO results (document, idx, kind, workload, target, model, filesystem)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    id,
                    i as i64,
                    k.kind,
                    k.workload,
                    k.target,
                    k.model,
                    k.filesystem
                ],
            )
            .map_err(store_error)?;
        }
        for (key, value) in tags {
            tx.execute(
                "INSERT INTO tags (document, key, value) VALUES (?1, ?2, ?3)",
                params![id, key, value],
            )
            .map_err(store_error)?;
        }
        tx.commit().map_err(store_error)?;
        Ok(id)
    }

    /// The documents `filter` lets through, oldest first.
    pub fn list(&self, filter: &Filter) -> Result<Vec<Entry>, HistoryError> {
        let mut sql = String::from(
            "SELECT d.id, d.at_unix_s, d.started_at, d.host, d.fathom_version, d.label FROM documents d WHERE 1 = 1",
        );
        let mut args: Vec<rusqlite::types::Value> = Vec::new();
        let mut arg = |v: rusqlite::types::Value| {
            args.push(v);
            format!("?{}", args.len())
        };
        if let Some(t) = &filter.target {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM results r WHERE r.document = d.id AND r.target = {})",
                arg(t.clone().into())
            );
        }
        if let Some(w) = &filter.workload {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM results r WHERE r.document = d.id AND (r.workload LIKE {} OR r.kind = {}))",
                arg(format!("%{w}%").into()),
                arg(w.clone().into())
            );
        }
        for (k, v) in &filter.tags {
            sql += &format!(
                " AND EXISTS (SELECT 1 FROM tags g WHERE g.document = d.id AND g.key = {} AND g.value = {})",
                arg(k.clone().into()),
                arg(v.clone().into())
            );
        }
        if let Some(since) = filter.since_unix_s {
            sql += &format!(" AND d.at_unix_s >= {}", arg(since.into()));
        }
        if let Some(h) = &filter.host {
            sql += &format!(" AND d.host = {}", arg(h.clone().into()));
        }
        sql += " ORDER BY d.at_unix_s, d.id";
        let mut stmt = self.conn.prepare(&sql).map_err(store_error)?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(args), |r| {
                Ok(Entry {
                    id: r.get(0)?,
                    at_unix_s: r.get(1)?,
                    started_at: r.get(2)?,
                    host: r.get(3)?,
                    fathom_version: r.get(4)?,
                    label: r.get(5)?,
                    kind: String::new(),
                    workloads: Vec::new(),
                    targets: Vec::new(),
                    tags: Vec::new(),
                })
            })
            .map_err(store_error)?
            .collect::<Result<Vec<Entry>, _>>()
            .map_err(store_error)?;
        rows.into_iter().map(|e| self.filled(e)).collect()
    }

    /// An entry with its results' and tags' keys.
    fn filled(&self, mut e: Entry) -> Result<Entry, HistoryError> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT kind, workload, target FROM results WHERE document = ?1 ORDER BY idx",
            )
            .map_err(store_error)?;
        let results = stmt
            .query_map([e.id], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })
            .map_err(store_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(store_error)?;
        let mut kinds: Vec<String> = Vec::new();
        for (kind, workload, target) in results {
            if !kinds.contains(&kind) {
                kinds.push(kind.clone());
            }
            let w = workload.unwrap_or(kind);
            if !e.workloads.contains(&w) {
                e.workloads.push(w);
            }
            if let Some(t) = target.filter(|t| !e.targets.contains(t)) {
                e.targets.push(t);
            }
        }
        e.kind = kinds.join("+");
        let mut stmt = self
            .conn
            .prepare_cached("SELECT key, value FROM tags WHERE document = ?1 ORDER BY rowid")
            .map_err(store_error)?;
        e.tags = stmt
            .query_map([e.id], |r| Ok((r.get(0)?, r.get(1)?)))
            .map_err(store_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(store_error)?;
        Ok(e)
    }

    /// Document `id`, whole.
    pub fn document(&self, id: i64) -> Result<Document, HistoryError> {
        let json: Option<String> = self
            .conn
            .query_row("SELECT json FROM documents WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()
            .map_err(store_error)?;
        let json = json.ok_or(HistoryError::NoSuchRun(id))?;
        Document::from_json(&json).map_err(|e| HistoryError::Store(format!("run {id}: {e}")))
    }

    /// Removes the documents `ids`; returns how many there were.
    pub fn remove(&mut self, ids: &[i64]) -> Result<usize, HistoryError> {
        let tx = self.conn.transaction().map_err(store_error)?;
        let mut removed = 0;
        for id in ids {
            let n = tx
                .execute("DELETE FROM documents WHERE id = ?1", [id])
                .map_err(store_error)?;
            if n == 0 {
                return Err(HistoryError::NoSuchRun(*id));
            }
            removed += n;
        }
        tx.commit().map_err(store_error)?;
        Ok(removed)
    }

    /// The last `n` results of `workload` on `target` (from `host`), most
    /// recent last, leaving out document `except` (the run itself).
    pub fn last_runs(
        &self,
        workload: &WorkloadResult,
        host: &str,
        n: usize,
        except: Option<i64>,
    ) -> Result<Vec<(i64, WorkloadResult)>, HistoryError> {
        let key = change::workload_key(&workload.spec);
        let target = workload.targets.first().map(|t| t.name.clone());
        let mut stmt = self
            .conn
            .prepare(
                "SELECT d.id, r.idx FROM results r JOIN documents d ON d.id = r.document
                 WHERE r.workload = ?1 AND r.target IS ?2 AND d.host = ?3 AND d.id IS NOT ?4
                 ORDER BY d.at_unix_s DESC, d.id DESC LIMIT ?5",
            )
            .map_err(store_error)?;
        let found = stmt
            .query_map(params![key, target, host, except, n as i64], |r| {
                Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?))
            })
            .map_err(store_error)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(store_error)?;
        let mut out = Vec::new();
        for (id, idx) in found.into_iter().rev() {
            if let Some(RunResult::Workload(w)) =
                self.document(id)?.results.into_iter().nth(idx as usize)
            {
                out.push((id, w));
            }
        }
        Ok(out)
    }

    /// The ids of the documents tagged `key=value`.
    pub fn tagged(&self, key: &str, value: &str) -> Result<Vec<i64>, HistoryError> {
        let mut stmt = self
            .conn
            .prepare("SELECT DISTINCT document FROM tags WHERE key = ?1 AND value = ?2 ORDER BY document")
            .map_err(store_error)?;
        stmt.query_map([key, value], |r| r.get(0))
            .map_err(store_error)?
            .collect::<Result<Vec<i64>, _>>()
            .map_err(store_error)
    }
}

/// A workload of a run against its runs before.
#[derive(Debug, Clone)]
pub struct Earlier {
    pub workload: String,
    /// The earlier runs it was checked against.
    pub runs: usize,
    pub changes: Vec<change::DirectionChange>,
}

/// Each workload of `doc` (stored as `id`) against the last `n` runs of
/// the same workload on the same target from the same host before it;
/// workloads never run before are left out.
pub fn against_earlier(
    history: &History,
    doc: &Document,
    id: i64,
    n: usize,
    settings: change::Bootstrap,
) -> Result<Vec<Earlier>, HistoryError> {
    let mut out = Vec::new();
    for w in doc.workloads() {
        let earlier = history.last_runs(w, &doc.host.hostname, n, Some(id))?;
        if earlier.is_empty() {
            continue;
        }
        let base: Vec<&WorkloadResult> = earlier.iter().map(|(_, w)| w).collect();
        out.push(Earlier {
            workload: w.spec.title(),
            runs: base.len(),
            changes: change::compare(&base, w, settings),
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
        let path = dir.path().join("sub/history.db");
        let mut h = History::open(&path).unwrap();
        let a = h
            .record(&doc(100), &[("kernel".into(), "6.1".into())])
            .unwrap();
        let b = h.record(&doc(150), &[]).unwrap();
        assert_eq!(h.document(a).unwrap(), doc_with_time(&h, a));
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
        let w = match &doc(100).results[0] {
            RunResult::Workload(w) => w.clone(),
            _ => unreachable!(),
        };
        let host = crate::measure::facts::host_facts().hostname;
        assert_eq!(h.last_runs(&w, &host, 5, Some(b)).unwrap().len(), 1);
        assert_eq!(h.remove(&[a]).unwrap(), 1);
        assert!(matches!(h.document(a), Err(HistoryError::NoSuchRun(_))));
    }

    fn doc_with_time(h: &History, id: i64) -> Document {
        h.document(id).unwrap()
    }

    #[test]
    fn a_store_of_a_later_layout_or_not_a_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.db");
        drop(History::open(&path).unwrap());
        let conn = Connection::open(&path).unwrap();
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
