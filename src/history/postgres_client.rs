//! PostgreSQL's client for the history (the `postgres` feature, on by
//! default): a connection, and the store's few statements with their
//! parameters typed as the server expects them.

use super::{Db, Dialect, Value};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The most fathom waits for the server's answer to one step (the
/// connection and its log-in, or one statement): a server that accepts
/// and never answers is given up, not waited for.
const ANSWER_WITHIN: Duration = Duration::from_secs(10);

type Step = Box<dyn FnOnce(&mut Client) + Send>;

/// The connection lives on a thread of its own, and every step waits
/// for its answer within a bound and yields to SIGINT and SIGTERM: the
/// postgres client's own calls have no time limit past the socket's
/// connect. A step given up leaves that thread behind, blocked on the
/// server, and the connection is not used again.
pub struct Postgres {
    steps: Option<mpsc::Sender<Step>>,
}

impl Postgres {
    pub fn open(url: &str) -> Result<Postgres, String> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL ({e})"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        let (steps, inbox) = mpsc::channel::<Step>();
        let (opened, outcome) = mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("fathom-postgres".into())
            .spawn(move || {
                let client = config
                    .connect(NoTls)
                    // The server's own words (a wrong password, a database
                    // that is not there): the error's Display is only "db
                    // error".
                    .map_err(|e| format!("cannot connect ({})", said(e)))
                    .and_then(|mut client| refuse_foreign(&mut client).map(|()| client));
                let mut client = match client {
                    Ok(client) => {
                        let _ = opened.send(Ok(()));
                        client
                    }
                    Err(e) => return drop(opened.send(Err(e))),
                };
                for step in inbox {
                    step(&mut client);
                }
            })
            .map_err(|e| format!("cannot start the connection's thread ({e})"))?;
        answer(&outcome, "the connection")??;
        Ok(Postgres { steps: Some(steps) })
    }

    /// Runs `step` on the connection and waits for its answer.
    fn call<R: Send + 'static>(
        &mut self,
        what: &str,
        step: impl FnOnce(&mut Client) -> Result<R, String> + Send + 'static,
    ) -> Result<R, String> {
        let steps = self
            .steps
            .as_ref()
            .ok_or("the connection was given up after a step the server did not answer")?;
        let (done, outcome) = mpsc::sync_channel(1);
        steps
            .send(Box::new(move |client| drop(done.send(step(client)))))
            .map_err(|_| "the connection is closed".to_string())?;
        answer(&outcome, what).inspect_err(|_| self.steps = None)?
    }
}

/// The server's answer on `outcome` (itself a success or its error),
/// or why it was given up: past `ANSWER_WITHIN`, or at a signal.
fn answer<R>(outcome: &mpsc::Receiver<R>, what: &str) -> Result<R, String> {
    let began = Instant::now();
    loop {
        match outcome.recv_timeout(Duration::from_millis(100)) {
            Ok(answer) => return Ok(answer),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(format!("{what}: the connection's thread ended"));
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if crate::util::stop::signalled() {
            return Err(format!("{what}: interrupted waiting for the server"));
        }
        if began.elapsed() >= ANSWER_WITHIN {
            return Err(format!(
                "{what}: the server did not answer within {} s",
                ANSWER_WITHIN.as_secs()
            ));
        }
    }
}

/// Refuses a database whose schema has tables and none of them fathom's:
/// another program's database is left as it was, no tables or indexes of
/// fathom's added to it (as a SQLite history refuses one).
fn refuse_foreign(client: &mut postgres::Client) -> Result<(), String> {
    let rows = client
        .query(
            "SELECT table_name::text FROM information_schema.tables
             WHERE table_schema = current_schema() ORDER BY table_name",
            &[],
        )
        .map_err(said)?;
    let tables: Vec<String> = rows.iter().map(|r| r.get(0)).collect();
    if !tables.is_empty() && !tables.iter().any(|t| t == "fathom") {
        return Err(format!(
            "not a fathom history: a PostgreSQL database with tables of its own ({}); fathom writes only to its own (CREATE DATABASE fathom_history, and name that one)",
            tables.join(", ")
        ));
    }
    Ok(())
}

/// The values as the statement's parameters, each of the type the
/// server expects there (a NULL too has one).
fn params(values: &[Value], types: &[Type]) -> Vec<Box<dyn ToSql + Sync>> {
    values
        .iter()
        .zip(types)
        .map(|(v, ty)| -> Box<dyn ToSql + Sync> {
            match (v, ty) {
                (Value::Null, &Type::INT8) => Box::new(None::<i64>),
                (Value::Null, &Type::FLOAT8) => Box::new(None::<f64>),
                (Value::Null, _) => Box::new(None::<String>),
                (Value::Int(i), &Type::FLOAT8) => Box::new(*i as f64),
                (Value::Int(i), _) => Box::new(*i),
                (Value::Real(r), _) => Box::new(*r),
                (Value::Text(t), _) => Box::new(t.clone()),
            }
        })
        .collect()
}

fn said(e: postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => db.message().to_string(),
        None => e.to_string(),
    }
}

impl Db for Postgres {
    fn dialect(&self) -> Dialect {
        Dialect::Postgres
    }

    fn batch(&mut self, sql: &str) -> Result<(), String> {
        let sql = sql.to_string();
        self.call("a statement", move |c| c.batch_execute(&sql).map_err(said))
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64, String> {
        let (sql, values) = (sql.to_string(), values.to_vec());
        self.call("a statement", move |c| {
            let stmt = c.prepare(&sql).map_err(said)?;
            let owned = params(&values, stmt.params());
            let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
            c.execute(&stmt, &refs).map_err(said)
        })
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let (sql, values) = (sql.to_string(), values.to_vec());
        self.call("a query", move |c| {
            let stmt = c.prepare(&sql).map_err(said)?;
            let owned = params(&values, stmt.params());
            let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
            let rows = c.query(&stmt, &refs).map_err(said)?;
            rows.iter().map(row_values).collect()
        })
    }
}

/// One row's values, each as the type its column holds.
fn row_values(row: &postgres::Row) -> Result<Vec<Value>, String> {
    (0..row.len())
        .map(|i| {
            let v = match *row.columns()[i].type_() {
                Type::INT8 => row.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int)),
                Type::INT4 => row
                    .try_get::<_, Option<i32>>(i)
                    .map(|v| v.map(|n| Value::Int(n as i64))),
                Type::FLOAT8 => row.try_get::<_, Option<f64>>(i).map(|v| v.map(Value::Real)),
                _ => row
                    .try_get::<_, Option<String>>(i)
                    .map(|v| v.map(Value::Text)),
            };
            v.map(|v| v.unwrap_or(Value::Null)).map_err(said)
        })
        .collect()
}
