//! What a run cost the drive: write amplification (what it wrote to its
//! media over what the host asked it to write) and the endurance left at
//! the run's write rate. Both come from the drive's own lifetime counts
//! read at each end of the run, so both are as coarse as those counts:
//! a figure is given only once each count moved by [`MIN_UNITS`] of its
//! step, where its rounding is within 2%.

use super::{Count, Health};
use serde::{Deserialize, Serialize};

/// The steps a count must move before a ratio of it is given.
pub const MIN_UNITS: u128 = 50;

/// The days the drive's rated endurance lasts at a run's write rate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Endurance {
    pub days: f64,
    /// How it was projected, in a line.
    pub basis: String,
}

/// How far `then` moved to `now`, in units; None where either is absent
/// or the unit changed between them.
fn moved(then: Option<Count>, now: Option<Count>) -> Option<u128> {
    let (then, now) = (then?, now?);
    (then.unit_bytes == now.unit_bytes).then(|| now.units.saturating_sub(then.units))
}

fn enough(what: &str, units: u128, step: Option<u64>) -> Result<(), String> {
    if units >= MIN_UNITS {
        return Ok(());
    }
    let step = step.map_or("its own unit".to_string(), |b| {
        crate::util::units::format_bytes(b)
    });
    Err(format!(
        "the drive counted too little to say: {what} moved {units} of its steps of {step}, and {MIN_UNITS} are needed for a figure within 2%"
    ))
}

/// Media writes over host writes between two readings.
pub fn amplification(before: &Health, after: &Health) -> Result<f64, String> {
    let media = moved(before.media_written, after.media_written).ok_or(
        "the drive does not count what it writes to its media (it lists no OCP C0h log; no NAND-writes attribute)",
    )?;
    let step = after.media_written.and_then(|c| c.unit_bytes);
    enough("its media writes", media, step)?;
    if let Some(host) = moved(before.host_programmed, after.host_programmed) {
        // Both in the drive's program pages: no unit to convert.
        enough("the host's program pages", host, None)?;
        return Ok(media as f64 / host as f64);
    }
    let host = moved(before.host_written, after.host_written)
        .ok_or("the drive does not count the host's writes")?;
    let host_step = after.host_written.and_then(|c| c.unit_bytes);
    enough("the host's writes", host, host_step)?;
    let bytes = |units: u128, step: Option<u64>| units as f64 * step.unwrap_or(1) as f64;
    Ok(bytes(media, step) / bytes(host, host_step))
}

/// The drive's lifetime media writes over host writes, for a reading on
/// its own.
pub fn lifetime_amplification(h: &Health) -> Option<f64> {
    let media = h.media_written?;
    let host = match h.host_programmed {
        Some(pages) => pages.units as f64,
        None => h.host_written?.in_bytes()? as f64,
    };
    let media = match h.host_programmed {
        Some(_) => media.units as f64,
        None => media.in_bytes()? as f64,
    };
    (host > 0.0).then(|| media / host)
}

/// The days until "percentage used" reaches 100 at the write rate between
/// the readings, `elapsed_s` apart: the wear so far per unit written (media
/// writes where the drive counts them, else the host's) times what is
/// left.
pub fn endurance(before: &Health, after: &Health, elapsed_s: f64) -> Result<Endurance, String> {
    let used = after
        .percentage_used
        .ok_or("the drive does not say how much of its endurance it has used")?;
    if used >= 100 {
        return Ok(Endurance {
            days: 0.0,
            basis: format!("the drive says it has used {used}% of its rated endurance"),
        });
    }
    if used == 0 {
        return Err(
            "the drive has used under 1% of its rated endurance: no wear yet to project from"
                .into(),
        );
    }
    let (what, lifetime, rate_units, step) = match moved(before.media_written, after.media_written)
    {
        Some(units) => (
            "media writes",
            after.media_written,
            units,
            after.media_written.and_then(|c| c.unit_bytes),
        ),
        None => (
            "host writes",
            after.host_written,
            moved(before.host_written, after.host_written)
                .ok_or("the drive counts neither its media writes nor the host's")?,
            after.host_written.and_then(|c| c.unit_bytes),
        ),
    };
    enough(what, rate_units, step)?;
    let lifetime = lifetime.map_or(0, |c| c.units) as f64;
    let per_percent = lifetime / f64::from(used);
    let left = f64::from(100 - used) * per_percent;
    let per_second = rate_units as f64 / elapsed_s.max(1e-9);
    let days = left / per_second / 86_400.0;
    let amount = |units: f64| match step {
        Some(b) => crate::util::units::format_bytes((units * b as f64) as u64),
        None => format!("{units:.0} program pages"),
    };
    let assumed = if what == "host writes" {
        "; the drive does not count its media writes, so its past write amplification is assumed"
    } else {
        ""
    };
    Ok(Endurance {
        days,
        basis: format!(
            "{used}% used after {} of {what}; at this run's {}/s{assumed}",
            amount(lifetime),
            amount(per_second)
        ),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(units: u128, step: u64) -> Option<Count> {
        Some(Count::bytes(units, step))
    }

    #[test]
    fn amplification_is_media_bytes_over_host_bytes() {
        // C0h counts media bytes one by one; log 02h the host's in 512,000.
        let before = Health {
            host_written: bytes(1_000, 512_000),
            media_written: bytes(700_000_000, 1),
            ..Default::default()
        };
        let after = Health {
            host_written: bytes(1_200, 512_000),
            media_written: bytes(700_000_000 + 143_360_000, 1),
            ..Default::default()
        };
        let waf = amplification(&before, &after).unwrap();
        assert!((waf - 1.4).abs() < 1e-9, "{waf}");
    }

    #[test]
    fn program_pages_give_a_ratio_without_a_page_size() {
        let pages = |units| {
            Some(Count {
                units,
                unit_bytes: None,
            })
        };
        let before = Health {
            media_written: pages(1_000),
            host_programmed: pages(600),
            ..Default::default()
        };
        let after = Health {
            media_written: pages(1_300),
            host_programmed: pages(700),
            ..Default::default()
        };
        assert!((amplification(&before, &after).unwrap() - 3.0).abs() < 1e-9);
    }

    #[test]
    fn coarse_counts_that_barely_moved_give_no_figure() {
        let before = Health {
            host_written: bytes(10, 32 << 20),
            media_written: bytes(5, 1 << 30),
            ..Default::default()
        };
        let after = Health {
            host_written: bytes(200, 32 << 20),
            media_written: bytes(12, 1 << 30),
            ..Default::default()
        };
        let why = amplification(&before, &after).unwrap_err();
        assert!(why.contains("moved 7 of its steps of 1 GiB"), "{why}");
        let none = amplification(&Health::default(), &Health::default()).unwrap_err();
        assert!(
            none.contains("does not count what it writes to its media"),
            "{none}"
        );
    }

    #[test]
    fn endurance_projects_the_wear_so_far_at_the_runs_rate() {
        // 2% used after 100 TB of media writes; the run wrote 1 GB a second
        // to the media for 100 s: 98% left is 4.9 PB, 4.9e6 s, 56.7 days.
        let before = Health {
            percentage_used: Some(2),
            host_written: bytes(0, 512_000),
            media_written: bytes(100_000_000_000_000 - 100_000_000_000, 1),
            ..Default::default()
        };
        let after = Health {
            percentage_used: Some(2),
            media_written: bytes(100_000_000_000_000, 1),
            ..before
        };
        let e = endurance(&before, &after, 100.0).unwrap();
        assert!((e.days - 4.9e6 / 86_400.0).abs() < 1e-6, "{e:?}");
        assert!(
            e.basis
                .starts_with("2% used after 90.9 TiB of media writes"),
            "{}",
            e.basis
        );
        let fresh = Health {
            percentage_used: Some(0),
            ..after
        };
        assert!(
            endurance(&before, &fresh, 100.0)
                .unwrap_err()
                .contains("under 1%")
        );
        let worn = Health {
            percentage_used: Some(104),
            ..after
        };
        assert_eq!(endurance(&before, &worn, 100.0).unwrap().days, 0.0);
    }

    #[test]
    fn without_media_counts_endurance_rests_on_host_writes_and_says_so() {
        let before = Health {
            percentage_used: Some(10),
            host_written: bytes(1_000_000, 512_000),
            ..Default::default()
        };
        let after = Health {
            host_written: bytes(1_000_100, 512_000),
            ..before
        };
        let e = endurance(&before, &after, 1.0).unwrap();
        // 10% after 1,000,100 units: 90% left is 9,000,900 units, at 100 a
        // second.
        assert!((e.days - 90_009.0 / 86_400.0).abs() < 1e-9, "{e:?}");
        assert!(
            e.basis.contains("past write amplification is assumed"),
            "{}",
            e.basis
        );
    }
}
