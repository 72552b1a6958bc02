//! PostgreSQL's client for the history (the `postgres` feature, on by
//! default): a connection, and the store's few statements with their
//! parameters typed as the server expects them.

use super::{Db, Dialect, Value};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::time::Duration;

pub struct Postgres(Client);

impl Postgres {
    pub fn open(url: &str) -> Result<Postgres, String> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL ({e})"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        let mut client = config
            .connect(NoTls)
            // The server's own words (a wrong password, a database that
            // is not there): the error's Display is only "db error".
            .map_err(|e| format!("cannot connect ({})", said(e)))?;
        refuse_foreign(&mut client)?;
        Ok(Postgres(client))
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
        self.0.batch_execute(sql).map_err(said)
    }

    fn execute(&mut self, sql: &str, values: &[Value]) -> Result<u64, String> {
        let stmt = self.0.prepare(sql).map_err(said)?;
        let owned = params(values, stmt.params());
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        self.0.execute(&stmt, &refs).map_err(said)
    }

    fn query(&mut self, sql: &str, values: &[Value]) -> Result<Vec<Vec<Value>>, String> {
        let stmt = self.0.prepare(sql).map_err(said)?;
        let owned = params(values, stmt.params());
        let refs: Vec<&(dyn ToSql + Sync)> = owned.iter().map(|b| b.as_ref()).collect();
        let rows = self.0.query(&stmt, &refs).map_err(said)?;
        rows.iter()
            .map(|row| {
                (0..row.len())
                    .map(|i| {
                        let ty = row.columns()[i].type_().clone();
                        let v = match ty {
                            Type::INT8 => {
                                row.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int))
                            }
                            Type::INT4 => row
                                .try_get::<_, Option<i32>>(i)
                                .map(|v| v.map(|n| Value::Int(n as i64))),
                            Type::FLOAT8 => {
                                row.try_get::<_, Option<f64>>(i).map(|v| v.map(Value::Real))
                            }
                            _ => row
                                .try_get::<_, Option<String>>(i)
                                .map(|v| v.map(Value::Text)),
                        };
                        v.map(|v| v.unwrap_or(Value::Null)).map_err(said)
                    })
                    .collect()
            })
            .collect()
    }
}
