//! Zoned block devices written zone by zone (`--zonemode zbd`, fio's
//! `zonemode=zbd`): the options that say how.

use serde::{Deserialize, Serialize};

/// How a workload treats a zoned device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZoneMode {
    /// As any device: a host-managed one refuses writes.
    #[default]
    None,
    /// Each write at its zone's write pointer, reads below it, full zones
    /// reset before they are written again.
    Zbd,
}

/// `--zonemode` and the options that go with `zbd`.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct ZoneSpec {
    pub mode: ZoneMode,
    /// Zones open for writing at once on the device (`--max-open-zones`);
    /// None: the device's own limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_open: Option<u32>,
    /// Zones open for writing at once by one worker
    /// (`--job-max-open-zones`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_max_open: Option<u32>,
    /// `--zone-reset THRESHOLD:FREQUENCY`: once the valid data reaches
    /// THRESHOLD of the region, every 1/FREQUENCY-th write resets its zone
    /// first (fio's `zone_reset_threshold` and `zone_reset_frequency`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset: Option<(f64, f64)>,
    /// `--read-beyond-wp`: reads go anywhere, written or not.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_beyond_wp: bool,
    /// The zone size the workload expects (fio's `zonesize` under zbd): a
    /// device whose zones differ is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zone_bytes: Option<u64>,
}

impl ZoneSpec {
    pub fn is_default(&self) -> bool {
        *self == ZoneSpec::default()
    }

    pub fn is_zbd(&self) -> bool {
        self.mode == ZoneMode::Zbd
    }

    /// The options given without `--zonemode zbd`, which would do nothing.
    pub fn check(&self) -> Result<(), String> {
        if self.is_zbd() {
            if let Some((threshold, frequency)) = self.reset
                && !((0.0..=1.0).contains(&threshold) && (0.0..=1.0).contains(&frequency))
            {
                return Err(format!(
                    "--zone-reset {threshold}:{frequency}: both are shares from 0 to 1"
                ));
            }
            return Ok(());
        }
        let given = [
            (self.max_open.is_some(), "--max-open-zones"),
            (self.worker_max_open.is_some(), "--job-max-open-zones"),
            (self.reset.is_some(), "--zone-reset"),
            (self.read_beyond_wp, "--read-beyond-wp"),
            (self.zone_bytes.is_some(), "--zone-size"),
        ];
        match given.iter().find(|(set, _)| *set) {
            Some((_, flag)) => Err(format!("{flag} needs --zonemode zbd")),
            None => Ok(()),
        }
    }
}

impl std::str::FromStr for ZoneMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(ZoneMode::None),
            "zbd" => Ok(ZoneMode::Zbd),
            "strided" => Err("--zonemode strided: strided zones are --zones IO:RANGE:SKIP".into()),
            _ => Err(format!("--zonemode {s}: none or zbd")),
        }
    }
}

/// `THRESHOLD:FREQUENCY`, two shares from 0 to 1.
pub fn parse_reset(v: &str) -> Result<(f64, f64), String> {
    let bad =
        || format!("--zone-reset '{v}': THRESHOLD:FREQUENCY, two shares from 0 to 1 (0.7:0.125)");
    let (t, f) = v.split_once(':').ok_or_else(bad)?;
    let share = |x: &str| x.parse::<f64>().ok().filter(|x| (0.0..=1.0).contains(x));
    Ok((share(t).ok_or_else(bad)?, share(f).ok_or_else(bad)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_without_zbd_are_refused_by_name() {
        let spec = ZoneSpec {
            max_open: Some(4),
            ..ZoneSpec::default()
        };
        assert_eq!(
            spec.check().unwrap_err(),
            "--max-open-zones needs --zonemode zbd"
        );
        let spec = ZoneSpec {
            mode: ZoneMode::Zbd,
            ..spec
        };
        assert!(spec.check().is_ok());
        assert_eq!(parse_reset("0.7:0.125"), Ok((0.7, 0.125)));
        assert!(parse_reset("2:0.1").is_err());
        assert!(
            "strided"
                .parse::<ZoneMode>()
                .unwrap_err()
                .contains("--zones")
        );
    }
}
