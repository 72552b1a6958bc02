//! Object stores as targets (`s3://BUCKET[/PREFIX]`): the operations a
//! run mixes, the sizes of its objects, and the knobs that say where the
//! store is and how to sign for it.

use crate::util::units::parse_size;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The keys a store's requests are signed with, and where they came from
/// (for the result, which names the source and never the keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreCredentials {
    pub key: String,
    pub secret: String,
    pub token: Option<String>,
    /// "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", "profile bench of
    /// ~/.aws/credentials".
    pub source: String,
}

/// The scheme that makes a target an object store.
pub const SCHEME: &str = "s3://";

/// S3's smallest part but the last (`EntityTooSmall` below it).
pub const MIN_PART_BYTES: u64 = 5 << 20;

/// S3's most parts in one upload.
pub const MAX_PARTS: u64 = 10_000;

/// Whether a target names an object store.
pub fn is_object_target(target: &str) -> bool {
    target.starts_with(SCHEME)
}

/// One kind of request a run makes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ObjectOp {
    /// GET of a whole object, or of a range of it.
    Get,
    /// PUT of a new object, in one request or in parts.
    Put,
    /// HEAD of an object (warp's "stat").
    Stat,
    /// One page of ListObjectsV2 under the run's prefix.
    List,
    /// DELETE of an object the run made.
    Delete,
}

impl ObjectOp {
    pub const ALL: [ObjectOp; 5] = [
        ObjectOp::Get,
        ObjectOp::Put,
        ObjectOp::Stat,
        ObjectOp::List,
        ObjectOp::Delete,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ObjectOp::Get => "get",
            ObjectOp::Put => "put",
            ObjectOp::Stat => "stat",
            ObjectOp::List => "list",
            ObjectOp::Delete => "delete",
        }
    }

    /// Whether the request carries object data (its bytes count).
    pub fn moves_data(self) -> bool {
        matches!(self, ObjectOp::Get | ObjectOp::Put)
    }
}

impl fmt::Display for ObjectOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ObjectOp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ObjectOp::ALL
            .into_iter()
            .find(|op| op.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = ObjectOp::ALL.iter().map(|o| o.name()).collect();
                format!("'{s}' is not an operation ({})", names.join(", "))
            })
    }
}

/// The operations of a run and each one's share of the requests
/// (`--mix get=45,put=15,stat=30,delete=10`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mix(pub Vec<(ObjectOp, u32)>);

impl Mix {
    pub fn only(op: ObjectOp) -> Mix {
        Mix(vec![(op, 1)])
    }

    pub fn has(&self, op: ObjectOp) -> bool {
        self.0.iter().any(|(o, w)| *o == op && *w > 0)
    }

    pub fn total(&self) -> u32 {
        self.0.iter().map(|(_, w)| w).sum()
    }

    /// `op`'s share of the requests, from 0 to 1.
    pub fn share(&self, op: ObjectOp) -> f64 {
        let weight: u32 = self
            .0
            .iter()
            .filter(|(o, _)| *o == op)
            .map(|(_, w)| w)
            .sum();
        f64::from(weight) / f64::from(self.total().max(1))
    }
}

impl FromStr for Mix {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let mut out: Vec<(ObjectOp, u32)> = Vec::new();
        for part in s.split(',').filter(|p| !p.is_empty()) {
            let (op, weight) = part
                .split_once('=')
                .ok_or_else(|| format!("'{part}' is not OP=SHARE"))?;
            let op: ObjectOp = op.trim().parse()?;
            let weight: u32 = weight
                .trim()
                .parse()
                .map_err(|_| format!("'{weight}' is not a whole share"))?;
            if out.iter().any(|(o, _)| *o == op) {
                return Err(format!("{op} is given twice"));
            }
            out.push((op, weight));
        }
        let mix = Mix(out);
        if mix.total() == 0 {
            return Err("no operation has a share".into());
        }
        Ok(mix)
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self.0.iter().map(|(o, w)| format!("{o}={w}")).collect();
        f.write_str(&parts.join(","))
    }
}

/// The sizes of the objects a run writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ObjectSizes {
    Fixed(u64),
    /// Drawn so that each power of two between the two is as likely (warp's
    /// `--obj.randsize`): small objects are as common as large ones.
    LogUniform {
        low: u64,
        high: u64,
    },
    /// Sizes with their shares of the objects (`4k/60:1m/40`).
    Split(Vec<(u64, u32)>),
}

impl ObjectSizes {
    pub fn largest(&self) -> u64 {
        match self {
            ObjectSizes::Fixed(n) => *n,
            ObjectSizes::LogUniform { high, .. } => *high,
            ObjectSizes::Split(parts) => parts.iter().map(|(s, _)| *s).max().unwrap_or(0),
        }
    }

    /// The size for a uniform draw `u` in [0, 1).
    pub fn at(&self, u: f64) -> u64 {
        match self {
            ObjectSizes::Fixed(n) => *n,
            ObjectSizes::LogUniform { low, high } => {
                let (l, h) = ((*low as f64).ln(), (*high as f64).ln());
                ((l + u * (h - l)).exp().round() as u64).clamp(*low, *high)
            }
            ObjectSizes::Split(parts) => {
                let total: u32 = parts.iter().map(|(_, w)| w).sum();
                let mut at = u * f64::from(total);
                for (size, weight) in parts {
                    if at < f64::from(*weight) {
                        return *size;
                    }
                    at -= f64::from(*weight);
                }
                parts.last().map_or(0, |(s, _)| *s)
            }
        }
    }
}

impl FromStr for ObjectSizes {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s.contains('/') {
            let mut parts = Vec::new();
            for part in s.split(':') {
                let (size, share) = part
                    .split_once('/')
                    .ok_or_else(|| format!("'{part}' is not SIZE/SHARE"))?;
                let share: u32 = share
                    .parse()
                    .map_err(|_| format!("'{share}' is not a whole share"))?;
                parts.push((parse_size(size)?, share));
            }
            if parts.iter().map(|(_, w)| w).sum::<u32>() == 0 {
                return Err(format!("'{s}': no size has a share"));
            }
            return Ok(ObjectSizes::Split(parts));
        }
        match s.split_once('-') {
            Some((low, high)) => {
                let (low, high) = (parse_size(low)?, parse_size(high)?);
                if low == 0 || low > high {
                    return Err(format!("'{s}': LOW-HIGH with 0 < LOW <= HIGH"));
                }
                Ok(ObjectSizes::LogUniform { low, high })
            }
            None => Ok(ObjectSizes::Fixed(parse_size(s)?)),
        }
    }
}

impl fmt::Display for ObjectSizes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::util::units::format_bytes;
        match self {
            ObjectSizes::Fixed(n) => f.write_str(&format_bytes(*n)),
            ObjectSizes::LogUniform { low, high } => {
                write!(f, "{}-{}", format_bytes(*low), format_bytes(*high))
            }
            ObjectSizes::Split(parts) => {
                let each: Vec<String> = parts
                    .iter()
                    .map(|(s, w)| format!("{}/{w}", format_bytes(*s)))
                    .collect();
                f.write_str(&each.join(":"))
            }
        }
    }
}

/// The knobs of a workload that only an object-store target reads.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ObjectKnobs {
    /// `--s3-endpoint`: one URL, or several (each worker keeps to one, in
    /// turn), for several gateways of one store.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// A profile of `~/.aws/credentials` and `~/.aws/config`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// BUCKET.HOST addressing instead of HOST/BUCKET.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub virtual_host: bool,
    /// GETs read `bs` ranges (in `rw`'s order), not whole objects.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ranges: bool,
    /// Parts of one multipart upload in flight at once, per worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connections: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mix: Option<Mix>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object_size: Option<ObjectSizes>,
    /// Objects uploaded before the timed run, for it to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objects: Option<u64>,
    /// Multipart uploads with parts this large.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_size: Option<u64>,
    /// Keys a LIST asks for in one page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_keys: Option<u32>,
    /// Objects a DELETE takes at once (DeleteObjects above 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete_batch: Option<u32>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub create_bucket: bool,
}

impl ObjectKnobs {
    pub fn is_default(&self) -> bool {
        *self == ObjectKnobs::default()
    }

    /// The flags given, for a workload whose targets are not an object
    /// store (where they would do nothing).
    pub fn given(&self) -> Vec<&'static str> {
        let mut out = Vec::new();
        let flags: [(&str, bool); 13] = [
            ("--s3-endpoint", !self.endpoints.is_empty()),
            ("--s3-region", self.region.is_some()),
            ("--s3-profile", self.profile.is_some()),
            ("--s3-virtual-host", self.virtual_host),
            ("--s3-ranges", self.ranges),
            ("--s3-connections", self.connections.is_some()),
            ("--mix", self.mix.is_some()),
            ("--object-size", self.object_size.is_some()),
            ("--objects", self.objects.is_some()),
            ("--part-size", self.part_size.is_some()),
            ("--list-keys", self.list_keys.is_some()),
            ("--delete-batch", self.delete_batch.is_some()),
            ("--create-bucket", self.create_bucket),
        ];
        for (flag, given) in flags {
            if given {
                out.push(flag);
            }
        }
        out
    }
}

/// `s3://BUCKET[/PREFIX]` taken apart.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObjectTarget {
    pub bucket: String,
    /// Empty, or ending in `/`.
    pub prefix: String,
}

impl ObjectTarget {
    pub fn parse(target: &str) -> Result<ObjectTarget, String> {
        let rest = target
            .strip_prefix(SCHEME)
            .ok_or_else(|| format!("{target}: not s3://BUCKET[/PREFIX]"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid = (3..=63).contains(&bucket.len())
            && bucket
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
            && !bucket.starts_with(['-', '.'])
            && !bucket.ends_with(['-', '.']);
        if !valid {
            return Err(format!(
                "{target}: '{bucket}' is not a bucket name (3 to 63 lower-case letters, digits, '-' and '.')"
            ));
        }
        let prefix = prefix.trim_matches('/');
        // A store (or a proxy before it) normalizes the request's path: a
        // `..` would take the run out of the prefix that was checked, into
        // another one or another bucket.
        if let Some(bad) = prefix
            .split('/')
            .find(|s| matches!(*s, "" | "." | ".."))
            .filter(|_| !prefix.is_empty())
        {
            let said = if bad.is_empty() {
                "an empty segment (//)".to_string()
            } else {
                format!("a '{bad}' segment")
            };
            return Err(format!(
                "{target}: the prefix has {said}, which a store may resolve to another prefix or bucket than the one checked: name the prefix as it is"
            ));
        }
        Ok(ObjectTarget {
            bucket: bucket.to_string(),
            prefix: if prefix.is_empty() {
                String::new()
            } else {
                format!("{prefix}/")
            },
        })
    }
}

impl fmt::Display for ObjectTarget {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{SCHEME}{}/{}", self.bucket, self.prefix)
    }
}

/// How a GET reads its object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GetRange {
    Whole,
    /// Ranges of this many bytes, one after the other through the object.
    Sequential(u64),
    /// A range of this many bytes at a random aligned offset.
    Random(u64),
}

fn one() -> u32 {
    1
}

/// One object-store run, resolved from a workload's knobs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ObjectSpec {
    pub name: String,
    pub target: ObjectTarget,
    pub endpoints: Vec<String>,
    pub region: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    pub virtual_host: bool,
    pub mix: Mix,
    pub object_size: ObjectSizes,
    pub objects: u64,
    /// `--rate-iops`: requests a second for the whole run, each worker
    /// its share on an even schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// `--number-ios`: the requests the run makes between its workers
    /// (with `--runtime`, at most these).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part_size: Option<u64>,
    pub connections: u32,
    pub get_range: GetRange,
    pub list_keys: u32,
    /// Objects one delete request takes (1: DELETE; more: DeleteObjects).
    #[serde(default = "one")]
    pub delete_batch: u32,
    /// Workers, each one request at a time on a keep-alive connection.
    pub workers: u32,
    /// Time-bound; None: every worker does its share of `objects`
    /// requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_s: Option<f64>,
    pub create_bucket: bool,
    pub keep: bool,
    /// Work beside objects fathom did not make under the prefix (it still
    /// deletes only its own).
    #[serde(default)]
    pub overwrite: bool,
    pub seed: u64,
    /// What PUTs carry: the disk path's data content (`--compress`,
    /// `--dedupe`, `--buffer-pattern`).
    #[serde(default)]
    pub content: crate::spec::content::DataContent,
    /// Keys given with the workload (an fio http job's), never written
    /// out; None: the environment's or a profile's.
    #[serde(skip)]
    pub credentials: Option<StoreCredentials>,
}

impl ObjectSpec {
    /// Whether the mix needs objects there before it starts: those are
    /// uploaded first, untimed.
    pub fn reads_objects(&self) -> bool {
        [
            ObjectOp::Get,
            ObjectOp::Stat,
            ObjectOp::Delete,
            ObjectOp::List,
        ]
        .into_iter()
        .any(|op| self.mix.has(op))
    }

    /// The checks that need nothing but the spec.
    pub fn check(&self) -> Result<(), String> {
        if self.endpoints.is_empty() {
            return Err(format!(
                "{}: an object store needs --s3-endpoint URL (http://HOST:PORT or https://...)",
                self.target
            ));
        }
        for given in &self.endpoints {
            let e = without_credentials(given);
            let url = url::Url::parse(given).map_err(|err| format!("--s3-endpoint {e}: {err}"))?;
            if !url.username().is_empty() || url.password().is_some() {
                return Err(format!(
                    "--s3-endpoint {e}: credentials in the URL are neither used nor kept (they would be printed, and stored with the result and in the history): give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
                ));
            }
            if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
                return Err(format!("--s3-endpoint {e}: not an http:// or https:// URL"));
            }
        }
        if self.workers == 0 {
            return Err("--numjobs 0: an object-store run needs a worker".into());
        }
        if self.object_size.largest() == 0 && self.mix.has(ObjectOp::Get) {
            return Err("--object-size 0: a GET needs bytes to read".into());
        }
        if let Some(part) = self.part_size {
            if part < MIN_PART_BYTES {
                return Err(format!(
                    "--part-size {}: S3 takes parts of 5 MiB at least (all but the last)",
                    crate::util::units::format_bytes(part)
                ));
            }
            let parts = self.object_size.largest().div_ceil(part);
            if parts > MAX_PARTS {
                return Err(format!(
                    "--part-size {}: {parts} parts for the largest object; S3 takes {MAX_PARTS} at most",
                    crate::util::units::format_bytes(part)
                ));
            }
        }
        if self.reads_objects() && self.objects == 0 {
            return Err(format!(
                "--objects 0: --mix {} reads objects, and needs some there first",
                self.mix
            ));
        }
        if self.connections == 0 {
            return Err("--s3-connections 0: a worker needs a connection".into());
        }
        Ok(())
    }
}

/// `endpoint` with whatever sits between its scheme and an `@` of its
/// authority shown as `***`: an endpoint is echoed in refusals, never with
/// a key or secret written into it.
fn without_credentials(endpoint: &str) -> String {
    let Some(scheme_end) = endpoint.find("://").map(|i| i + 3) else {
        return endpoint.to_string();
    };
    let authority_end = endpoint[scheme_end..]
        .find(['/', '?', '#'])
        .map_or(endpoint.len(), |i| scheme_end + i);
    match endpoint[scheme_end..authority_end].rfind('@') {
        Some(at) => format!(
            "{}***{}",
            &endpoint[..scheme_end],
            &endpoint[scheme_end + at..]
        ),
        None => endpoint.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warps_default_mix_parses_and_its_shares_add_up() {
        let mix: Mix = "get=45,put=15,stat=30,delete=10".parse().unwrap();
        assert_eq!(mix.total(), 100);
        assert!((mix.share(ObjectOp::Stat) - 0.30).abs() < 1e-9);
        assert_eq!(mix.to_string(), "get=45,put=15,stat=30,delete=10");
        assert!("get=1,get=2".parse::<Mix>().unwrap_err().contains("twice"));
        assert!(
            "copy=1"
                .parse::<Mix>()
                .unwrap_err()
                .contains("not an operation")
        );
        assert!("get=0".parse::<Mix>().is_err());
    }

    #[test]
    fn a_size_range_is_drawn_log_uniformly_within_its_ends() {
        let sizes: ObjectSizes = "4k-1m".parse().unwrap();
        assert_eq!(sizes.at(0.0), 4096);
        assert_eq!(sizes.at(1.0), 1 << 20);
        assert!(sizes.at(0.999_999) <= 1 << 20);
        // The middle of the logarithms: 64 KiB, not the arithmetic 514 KiB.
        assert_eq!(sizes.at(0.5), 64 << 10);
        assert!("1m-4k".parse::<ObjectSizes>().is_err());
        let split: ObjectSizes = "4k/60:1m/40".parse().unwrap();
        assert_eq!(split.at(0.59), 4096);
        assert_eq!(split.at(0.61), 1 << 20);
        assert_eq!(split.largest(), 1 << 20);
    }

    #[test]
    fn a_target_names_its_bucket_and_prefix() {
        let t = ObjectTarget::parse("s3://bench/runs/a/").unwrap();
        assert_eq!((t.bucket.as_str(), t.prefix.as_str()), ("bench", "runs/a/"));
        let t = ObjectTarget::parse("s3://bench").unwrap();
        assert_eq!(t.prefix, "");
        assert!(ObjectTarget::parse("s3://Bad_Bucket").is_err());
        for escape in [
            "s3://bench/../victim/x",
            "s3://bench/zz/../data",
            "s3://bench/a//b",
            "s3://bench/./a",
            "s3://bench/..",
        ] {
            let e = ObjectTarget::parse(escape).unwrap_err();
            assert!(e.contains("segment"), "{escape}: {e}");
        }
        assert!(ObjectTarget::parse("s3://bench/a..b/.c/").is_ok());
        assert_eq!(
            without_credentials("http://KEY:SECRET@host:9000/x"),
            "http://***@host:9000/x"
        );
        assert_eq!(
            without_credentials("http://host:9000/a@b"),
            "http://host:9000/a@b"
        );
        assert!(ObjectTarget::parse("s3://ab").is_err());
    }
}
