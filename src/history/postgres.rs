//! The history in PostgreSQL (`--history postgres://USER@HOST/DB`): one
//! store for a team's machines. The tables are made on first use, under
//! an advisory lock so that two fathoms starting at once do not race.

use super::{Db, Dialect, Value};
use postgres::types::{ToSql, Type};
use postgres::{Client, NoTls};
use std::time::Duration;

pub struct Postgres(Client);

/// libpq's connection keywords: a `key=value ...` string that starts with
/// one is a connection string, never a file name (one would have been
/// made, named after its password).
const KEYWORDS: &[&str] = &[
    "host",
    "hostaddr",
    "port",
    "dbname",
    "user",
    "password",
    "passfile",
    "connect_timeout",
    "options",
    "application_name",
    "sslmode",
    "sslcert",
    "sslkey",
    "sslrootcert",
    "service",
    "target_session_attrs",
];

/// Whether `location` names a PostgreSQL database (a URL, or libpq's
/// `key=value` connection string) rather than a file.
pub fn is_url(location: &str) -> bool {
    let keyword = location
        .split_whitespace()
        .next()
        .and_then(|w| w.split_once('='))
        .is_some_and(|(k, _)| KEYWORDS.contains(&k.trim()));
    location.starts_with("postgres://") || location.starts_with("postgresql://") || keyword
}

/// `url` with its password hidden, for messages: the user's part of a
/// URL, `password=` in its query, and a connection string's `password=`.
pub fn shown(url: &str) -> String {
    let hidden = |text: &str| -> String {
        let mut out = String::new();
        let mut rest = text;
        while let Some(at) = rest.find("password=") {
            let before = rest[..at].chars().last();
            let starts = before.is_none_or(|c| c == '?' || c == '&' || c.is_whitespace());
            out.push_str(&rest[..at + "password=".len()]);
            rest = &rest[at + "password=".len()..];
            if starts {
                let end = rest.find(['&', ' ', '\t']).unwrap_or(rest.len());
                out.push_str("***");
                rest = &rest[end..];
            }
        }
        out + rest
    };
    let url = hidden(url);
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            let user = &url[scheme + 3..at];
            match user.split_once(':') {
                Some((name, _)) => format!("{}{name}:***{}", &url[..scheme + 3], &url[at..]),
                None => url.to_string(),
            }
        }
        _ => url,
    }
}

impl Postgres {
    pub fn open(url: &str) -> Result<Postgres, String> {
        let mut config: postgres::Config = url
            .parse()
            .map_err(|e| format!("not a PostgreSQL URL ({e})"))?;
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(Duration::from_secs(5));
        }
        let client = config
            .connect(NoTls)
            .map_err(|e| format!("cannot connect ({e})"))?;
        Ok(Postgres(client))
    }
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

#[cfg(test)]
mod secret_tests {
    use super::*;

    #[test]
    fn passwords_are_hidden_wherever_a_connection_names_them() {
        assert_eq!(shown("postgres://me:s3cret@db/h"), "postgres://me:***@db/h");
        assert_eq!(
            shown("postgres://me@db/h?sslmode=off&password=s3cret&x=1"),
            "postgres://me@db/h?sslmode=off&password=***&x=1"
        );
        assert_eq!(
            shown("host=db user=me password=s3cret dbname=h"),
            "host=db user=me password=*** dbname=h"
        );
        assert!(is_url("host=db user=me password=s3cret"));
        assert!(is_url("postgresql://db/h"));
        assert!(!is_url("history.db"));
        assert!(!is_url("runs=1.db"));
    }
}
