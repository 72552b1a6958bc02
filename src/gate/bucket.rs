//! The gate for object stores: fathom writes and deletes only keys it
//! made, under a run prefix of its own, inside a prefix that holds
//! nothing but fathom's (its marker object says so) unless the user said
//! `--overwrite`.

/// What the gate asks of a store: the S3 engine's client answers.
pub trait Keys {
    /// The first `max` keys under `prefix`, and whether more follow.
    fn keys_under(&mut self, prefix: &str, max: u32) -> Result<(Vec<String>, bool), String>;
    fn holds(&mut self, key: &str) -> bool;
    /// The body of `key`, at most `max` bytes (more is an error).
    fn read_small(&mut self, key: &str, max: u64) -> Result<Vec<u8>, String>;
    fn put_small(&mut self, key: &str, body: &[u8]) -> Result<(), String>;
    /// Deletes `key`; a key already gone is deleted too.
    fn delete_key(&mut self, key: &str) -> Result<(), String>;
    /// Deletes `keys` in one request (S3's DeleteObjects).
    fn delete_keys(&mut self, keys: &[String]) -> Result<(), String>;
}

/// The object that marks a prefix as fathom's.
pub use super::marked::MARKER;

/// A prefix fathom may work in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrefixClaim {
    /// The user's prefix (empty, or ending in `/`).
    pub prefix: String,
    /// Where this run's keys go, under `prefix`.
    pub run_prefix: String,
    /// The marker was already there (a kept run's): it stays.
    pub marker_found: bool,
}

impl PrefixClaim {
    pub fn marker_key(&self) -> String {
        format!("{}{MARKER}", self.prefix)
    }

    /// The key of the run's object `id`.
    pub fn key(&self, id: u64) -> String {
        format!("{}o{id:010}", self.run_prefix)
    }

    /// Whether a key is one this run may delete.
    pub fn owns(&self, key: &str) -> bool {
        key.starts_with(&self.run_prefix) && key.len() > self.run_prefix.len()
    }
}

/// The marker's body: it names the bucket and prefix it marks, so that
/// an object of that name with other content (a user's, or fathom's
/// marker copied from elsewhere) is not taken for it.
pub fn marker_body(bucket: &str, claim: &PrefixClaim) -> String {
    serde_json::json!({
        "fathom_marker": 1,
        "bucket": bucket,
        "prefix": claim.prefix,
        "fathom_version": env!("CARGO_PKG_VERSION"),
        "run_prefix": claim.run_prefix,
    })
    .to_string()
        + "\n"
}

/// Whether `body` is fathom's marker of `prefix` in `bucket`.
fn is_marker_of(body: &[u8], bucket: &str, prefix: &str) -> bool {
    let Ok(v) = serde_json::from_slice::<serde_json::Value>(body) else {
        return false;
    };
    v["fathom_marker"] == 1 && v["bucket"] == bucket && v["prefix"] == prefix
}

/// Looks under `prefix` of `bucket` and says whether fathom may work
/// there: empty, or holding fathom's marker (checked by its content, not
/// its name), or `overwrite`. Writes nothing.
pub fn check_prefix(
    client: &mut impl Keys,
    (bucket, prefix): (&str, &str),
    run_id: &str,
    overwrite: bool,
    shown: &str,
) -> Result<PrefixClaim, String> {
    let marker = format!("{prefix}{MARKER}");
    let (keys, more) = client
        .keys_under(prefix, 1000)
        .map_err(|e| format!("{shown}: listing the prefix failed: {e}"))?;
    let named = keys.contains(&marker) || (more && client.holds(&marker));
    let ours = named
        && client
            .read_small(&marker, 64 << 10)
            .is_ok_and(|body| is_marker_of(&body, bucket, prefix));
    if named && !ours && !overwrite {
        return Err(format!(
            "{shown}: {marker} is not fathom's marker of this prefix (its content does not name it): give --overwrite to work beside it (fathom deletes only what it made), or another prefix"
        ));
    }
    // A foreign object of the marker's name is left as it is: with
    // --overwrite it stays, neither replaced nor deleted.
    let marker_found = named;
    if !keys.is_empty() && !marker_found && !overwrite {
        let count = if more {
            "more than 1000 objects".to_string()
        } else {
            format!(
                "{} object{}",
                keys.len(),
                if keys.len() == 1 { "" } else { "s" }
            )
        };
        return Err(format!(
            "{shown} holds {count} fathom did not make ({} first): give --overwrite to work beside them (fathom deletes only what it made), or another prefix",
            keys[0]
        ));
    }
    Ok(PrefixClaim {
        prefix: prefix.to_string(),
        run_prefix: format!("{prefix}fathom-{run_id}/"),
        marker_found,
    })
}

/// Writes the marker of `claim`'s prefix in `bucket` (unless one was
/// there).
pub fn mark(client: &mut impl Keys, bucket: &str, claim: &PrefixClaim) -> Result<(), String> {
    if claim.marker_found {
        return Ok(());
    }
    client.put_small(&claim.marker_key(), marker_body(bucket, claim).as_bytes())
}

/// Whether every key is one this run made (and may delete).
pub fn check_owned(claim: &PrefixClaim, keys: &[String]) -> Result<(), String> {
    match keys.iter().find(|k| !claim.owns(k)) {
        Some(other) => Err(format!(
            "{other}: not under this run's prefix {}",
            claim.run_prefix
        )),
        None => Ok(()),
    }
}

/// Deletes keys this run made, many a request (one at a time where the
/// store has no DeleteObjects); any other key is refused.
pub fn delete_many(
    client: &mut impl Keys,
    claim: &PrefixClaim,
    keys: &[String],
) -> Result<(), String> {
    check_owned(claim, keys)?;
    if client.delete_keys(keys).is_ok() {
        return Ok(());
    }
    keys.iter().try_for_each(|k| client.delete_key(k))
}

/// Removes the marker this run wrote, once its keys are gone.
pub fn unmark(client: &mut impl Keys, claim: &PrefixClaim) -> Result<(), String> {
    if claim.marker_found {
        return Ok(());
    }
    client.delete_key(&claim.marker_key())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_owns_only_keys_under_its_own_prefix() {
        let claim = PrefixClaim {
            prefix: "bench/".into(),
            run_prefix: "bench/fathom-1a/".into(),
            marker_found: false,
        };
        assert!(claim.owns(&claim.key(7)));
        assert_eq!(claim.key(7), "bench/fathom-1a/o0000000007");
        assert!(!claim.owns("bench/fathom-1a/"));
        assert!(!claim.owns("bench/data.csv"));
        assert!(!claim.owns("bench/fathom-1b/o0000000007"));
        assert_eq!(claim.marker_key(), "bench/fathom.marker");
    }

    #[test]
    fn a_marker_is_ours_only_for_its_own_bucket_and_prefix() {
        let claim = PrefixClaim {
            prefix: "p/".into(),
            run_prefix: "p/fathom-1/".into(),
            marker_found: false,
        };
        let body = marker_body("bench", &claim);
        assert!(is_marker_of(body.as_bytes(), "bench", "p/"));
        assert!(!is_marker_of(body.as_bytes(), "other", "p/"));
        assert!(!is_marker_of(body.as_bytes(), "bench", "q/"));
        assert!(!is_marker_of(b"whatever it holds", "bench", "p/"));
        assert!(!is_marker_of(
            b"{\"fathom_version\":\"0.1.0\",\"run_prefix\":\"p/fathom-1/\"}",
            "bench",
            "p/"
        ));
    }
}
