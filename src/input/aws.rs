//! Credentials and region where AWS's own tools look for them: the
//! `AWS_*` variables, then `~/.aws/credentials` and `~/.aws/config`
//! (or the files `AWS_SHARED_CREDENTIALS_FILE` and `AWS_CONFIG_FILE`
//! name), under a profile.

use std::collections::BTreeMap;
use std::path::PathBuf;

pub use crate::spec::object::StoreCredentials as AwsCredentials;

/// The key and secret for `profile` (None: the environment's, else the
/// `default` profile), or why there are none.
pub fn credentials(profile: Option<&str>) -> Result<AwsCredentials, String> {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    let profile_asked = profile.map(String::from).or_else(|| env("AWS_PROFILE"));
    if profile_asked.is_none()
        && let (Some(key), Some(secret)) = (env("AWS_ACCESS_KEY_ID"), env("AWS_SECRET_ACCESS_KEY"))
    {
        return Ok(AwsCredentials {
            key,
            secret,
            token: env("AWS_SESSION_TOKEN"),
            source: "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY".into(),
        });
    }
    let name = profile_asked.unwrap_or_else(|| "default".into());
    let path = credentials_file();
    if !path.exists() {
        return Err(format!(
            "no credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set, and there is no {}",
            path.display()
        ));
    }
    let text = crate::gate::read::text(&path, crate::gate::read::AWS_FILE).map_err(|e| e.0)?;
    let sections = ini_sections(&text);
    let section = sections
        .get(&name)
        .ok_or_else(|| format!("no profile '{name}' in {}", path.display()))?;
    let get = |k: &str| section.get(k).cloned().filter(|v| !v.is_empty());
    match (get("aws_access_key_id"), get("aws_secret_access_key")) {
        (Some(key), Some(secret)) => Ok(AwsCredentials {
            key,
            secret,
            token: get("aws_session_token"),
            source: format!("profile {name} of {}", path.display()),
        }),
        _ => Err(format!(
            "profile '{name}' of {} has no aws_access_key_id and aws_secret_access_key",
            path.display()
        )),
    }
}

/// The region: the profile's in `~/.aws/config`, else `AWS_REGION` or
/// `AWS_DEFAULT_REGION`, else us-east-1 (what most S3-compatible stores
/// take).
pub fn region(profile: Option<&str>) -> String {
    let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
    if let Some(r) = env("AWS_REGION").or_else(|| env("AWS_DEFAULT_REGION")) {
        return r;
    }
    let name = profile
        .map(String::from)
        .or_else(|| env("AWS_PROFILE"))
        .unwrap_or_else(|| "default".into());
    let path = config_file();
    let config = match path.exists() {
        true => crate::gate::read::text(&path, crate::gate::read::AWS_FILE).unwrap_or_default(),
        false => String::new(),
    };
    let sections = ini_sections(&config);
    // The config file names its sections "profile NAME", but "default".
    let section = sections
        .get(&format!("profile {name}"))
        .or_else(|| sections.get(&name));
    section
        .and_then(|s| s.get("region").cloned())
        .unwrap_or_else(|| "us-east-1".into())
}

fn home_file(var: &str, name: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(p) => PathBuf::from(p),
        None => {
            let home = std::env::var_os("HOME").unwrap_or_default();
            PathBuf::from(home).join(".aws").join(name)
        }
    }
}

fn credentials_file() -> PathBuf {
    home_file("AWS_SHARED_CREDENTIALS_FILE", "credentials")
}

fn config_file() -> PathBuf {
    home_file("AWS_CONFIG_FILE", "config")
}

/// `[section]` then `key = value` lines; `#` and `;` start comments.
fn ini_sections(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut out: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            let name = name.trim().to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
        } else if let (Some(section), Some((k, v))) = (&current, line.split_once('=')) {
            out.entry(section.clone())
                .or_default()
                .insert(k.trim().to_string(), v.trim().to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_are_read_from_the_ini_text() {
        let text = "[default]\naws_access_key_id = A\naws_secret_access_key=B\n# c\n[profile bench]\nregion = eu-west-1\n";
        let s = ini_sections(text);
        assert_eq!(s["default"]["aws_access_key_id"], "A");
        assert_eq!(s["default"]["aws_secret_access_key"], "B");
        assert_eq!(s["profile bench"]["region"], "eu-west-1");
    }
}
