//! The history in PostgreSQL (`--history postgres://USER@HOST/DB`): one
//! store for a team's machines. The tables are made on first use, under
//! an advisory lock so that two fathoms starting at once do not race.

use super::Db;

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

/// Why a build without the `postgres` feature keeps no history there.
#[cfg(not(feature = "postgres"))]
pub const WITHOUT_CLIENT: &str = "this fathom was built without PostgreSQL's client (the .deb and the static binary have it; or build it with: cargo install --locked --path . --features postgres)";

/// The store at `url`. PostgreSQL's client is an opt-in feature
/// (`postgres`): a build without it says so here.
pub fn open(url: &str) -> Result<Box<dyn Db>, String> {
    #[cfg(feature = "postgres")]
    return super::postgres_client::Postgres::open(url).map(|p| Box::new(p) as Box<dyn Db>);
    #[cfg(not(feature = "postgres"))]
    {
        let _ = url;
        Err(WITHOUT_CLIENT.into())
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
