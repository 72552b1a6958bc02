//! The gate for object stores: fathom writes and deletes only keys it
//! made, under a run prefix of its own, inside a prefix that holds
//! nothing but fathom's (its marker object says so) unless the user said
//! `--overwrite`.

/// What the gate asks of a store: the S3 engine's client answers.
pub trait Keys {
    /// The first `max` keys under `prefix`, and whether more follow.
    fn keys_under(&mut self, prefix: &str, max: u32) -> Result<(Vec<String>, bool), String>;
    fn holds(&mut self, key: &str) -> bool;
    fn put_small(&mut self, key: &str, body: &[u8]) -> Result<(), String>;
    /// Deletes `key`; a key already gone is deleted too.
    fn delete_key(&mut self, key: &str) -> Result<(), String>;
    /// Deletes `keys` in one request (S3's DeleteObjects).
    fn delete_keys(&mut self, keys: &[String]) -> Result<(), String>;
}

/// The object that marks a prefix as fathom's.
pub const MARKER: &str = "fathom.marker";

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

/// Looks under `prefix` and says whether fathom may work there: empty, or
/// holding fathom's marker, or `overwrite`. Writes nothing.
pub fn check_prefix(
    client: &mut impl Keys,
    prefix: &str,
    run_id: &str,
    overwrite: bool,
    shown: &str,
) -> Result<PrefixClaim, String> {
    let marker = format!("{prefix}{MARKER}");
    let (keys, more) = client
        .keys_under(prefix, 1000)
        .map_err(|e| format!("{shown}: listing the prefix failed: {e}"))?;
    let marker_found = keys.contains(&marker) || (more && client.holds(&marker));
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

/// Writes the marker (unless it was there).
pub fn mark(client: &mut impl Keys, claim: &PrefixClaim) -> Result<(), String> {
    if claim.marker_found {
        return Ok(());
    }
    let body = format!(
        "{{\"fathom_version\":\"{}\",\"run_prefix\":\"{}\"}}\n",
        env!("CARGO_PKG_VERSION"),
        claim.run_prefix
    );
    client.put_small(&claim.marker_key(), body.as_bytes())
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
}
