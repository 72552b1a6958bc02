//! The knobs of a workload by name, as flags and job files spell them. Both
//! the command line and job files set a spec through this one table, so a
//! knob means the same everywhere.

use crate::spec::{VerifyMode, WorkloadSpec};
use crate::units::{parse_duration, parse_size};

/// Every knob, with `-` in flags and `_` in job files both accepted.
pub const KNOBS: &[&str] = &[
    "name",
    "rw",
    "rwmix_read",
    "bs",
    "iodepth",
    "numjobs",
    "size",
    "offset",
    "runtime",
    "ramp",
    "direct",
    "buffered",
    "engine",
    "fsync",
    "random_distribution",
    "seed",
    "keep",
    "overwrite",
    "i_know_this_destroys_data",
    "verify",
    "continue_on_error",
    "rate_iops",
    "rate_bw",
    "steady_state",
];

/// Knobs that `--flag a,b,c` on the command line sweeps over.
pub const SWEEPABLE_FLAGS: &[&str] = &["rw", "bs", "iodepth", "numjobs", "rwmix_read"];

pub fn normalize(key: &str) -> String {
    key.trim().replace('-', "_")
}

pub fn is_knob(key: &str) -> bool {
    KNOBS.contains(&normalize(key).as_str())
}

/// A spec being assembled knob by knob; `finish` resolves knobs that depend
/// on each other (the read share depends on the mode).
#[derive(Debug, Clone)]
pub struct SpecBuilder {
    pub spec: WorkloadSpec,
    rwmix_read: u8,
}

impl SpecBuilder {
    pub fn new(spec: WorkloadSpec) -> Self {
        SpecBuilder {
            rwmix_read: if spec.rw.is_mixed() {
                spec.rwmix_read
            } else {
                50
            },
            spec,
        }
    }

    /// Sets `key` from its text form; the error names neither key nor
    /// source, which the caller adds.
    pub fn set(&mut self, key: &str, value: &str) -> Result<(), String> {
        let s = &mut self.spec;
        let v = value.trim();
        match normalize(key).as_str() {
            "name" => s.name = v.to_string(),
            "rw" => s.rw = v.parse()?,
            "rwmix_read" => {
                self.rwmix_read = v
                    .parse::<u8>()
                    .ok()
                    .filter(|p| *p <= 100)
                    .ok_or_else(|| format!("'{v}' is not a percentage from 0 to 100"))?
            }
            "bs" => s.bs = parse_size(v)?,
            "iodepth" => s.iodepth = parse_count(v)?,
            "numjobs" => s.numjobs = parse_count(v)?,
            "size" => s.size = Some(parse_size(v)?),
            "offset" => s.offset = parse_size(v)?,
            "runtime" => s.runtime_s = Some(parse_duration(v)?.as_secs_f64()),
            "ramp" => s.ramp_s = parse_duration(v)?.as_secs_f64(),
            "direct" => s.direct = parse_bool(v)?,
            "buffered" => s.direct = !parse_bool(v)?,
            "engine" => s.engine = v.parse()?,
            "fsync" => s.fsync = parse_count(v)?,
            "random_distribution" => s.random_distribution = v.parse()?,
            "seed" => {
                s.seed = v
                    .parse()
                    .map_err(|_| format!("'{v}' is not a whole number"))?
            }
            "keep" => s.keep = parse_bool(v)?,
            "overwrite" => s.overwrite = parse_bool(v)?,
            "i_know_this_destroys_data" => s.destroy_data = parse_bool(v)?,
            "verify" => {
                s.verify = match v {
                    "true" | "after-write" => VerifyMode::AfterWrite,
                    "interleaved" => VerifyMode::Interleaved,
                    "false" | "off" => VerifyMode::Off,
                    _ => {
                        return Err(format!(
                            "'{v}' is not one of true, false, after-write, interleaved"
                        ));
                    }
                }
            }
            "continue_on_error" => s.continue_on_error = parse_bool(v)?,
            "rate_iops" => {
                s.rate_iops = Some(
                    v.parse::<f64>()
                        .ok()
                        .filter(|r| r.is_finite() && *r > 0.0)
                        .ok_or_else(|| format!("'{v}' is not a positive rate"))?,
                )
            }
            "steady_state" => s.steady_state = Some(v.parse()?),
            "rate_bw" => {
                let bytes = v.strip_suffix("/s").unwrap_or(v);
                s.rate_bw = Some(parse_size(bytes)?);
            }
            other => return Err(format!("unknown setting '{other}'")),
        }
        Ok(())
    }

    pub fn finish(mut self) -> WorkloadSpec {
        self.spec.rwmix_read = self.spec.rw.read_percent(self.rwmix_read);
        self.spec
    }
}

fn parse_count(v: &str) -> Result<u32, String> {
    v.parse()
        .map_err(|_| format!("'{v}' is not a whole number"))
}

fn parse_bool(v: &str) -> Result<bool, String> {
    match v {
        "true" | "yes" | "1" => Ok(true),
        "false" | "no" | "0" => Ok(false),
        _ => Err(format!("'{v}' is not true or false")),
    }
}

/// A target as given: `PATH`, or `LABEL=PATH` to name it in reports.
pub fn split_label(target: &str) -> (Option<&str>, &str) {
    if let Some((label, path)) = target.split_once('=') {
        let simple = !label.is_empty()
            && label
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'));
        if simple && !path.is_empty() {
            return (Some(label), path);
        }
    }
    (None, target)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::RwMode;

    #[test]
    fn knobs_set_and_resolve() {
        let mut b = SpecBuilder::new(crate::plan::default_spec(vec!["x".into()]));
        b.set("rw", "randrw").unwrap();
        b.set("rwmix-read", "70").unwrap();
        b.set("bs", "8k").unwrap();
        b.set("runtime", "2m").unwrap();
        b.set("buffered", "true").unwrap();
        let s = b.finish();
        assert_eq!((s.rw, s.rwmix_read, s.bs), (RwMode::RandRw, 70, 8192));
        assert_eq!((s.runtime_s, s.direct), (Some(120.0), false));
    }

    #[test]
    fn bad_values_and_keys_are_named() {
        let mut b = SpecBuilder::new(crate::plan::default_spec(vec!["x".into()]));
        assert!(b.set("iodepth", "deep").unwrap_err().contains("deep"));
        assert!(b.set("colour", "blue").unwrap_err().contains("colour"));
        assert!(b.set("rwmix_read", "150").is_err());
        assert!(b.set("direct", "maybe").is_err());
    }

    #[test]
    fn labels_split_only_when_simple() {
        assert_eq!(split_label("logs=/var/log"), (Some("logs"), "/var/log"));
        assert_eq!(split_label("/data/a=b"), (None, "/data/a=b"));
        assert_eq!(split_label("/dev/sdb"), (None, "/dev/sdb"));
    }
}
