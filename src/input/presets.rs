//! Presets: job files shipped inside the binary (`presets/*.toml`), run with
//! `fathom run --preset NAME TARGET...` and listed by `fathom presets`.

use crate::input::jobfile::{self, Overrides};
use crate::spec::WorkloadSpec;
use crate::util::error::UsageError;

#[derive(Debug)]
pub struct Preset {
    pub name: &'static str,
    pub text: &'static str,
}

pub const PRESETS: &[Preset] = &[
    Preset {
        name: "quick",
        text: include_str!("../../presets/quick.toml"),
    },
    Preset {
        name: "desktop",
        text: include_str!("../../presets/desktop.toml"),
    },
    Preset {
        name: "desktop-nvme",
        text: include_str!("../../presets/desktop-nvme.toml"),
    },
    Preset {
        name: "desktop-mix",
        text: include_str!("../../presets/desktop-mix.toml"),
    },
    Preset {
        name: "database",
        text: include_str!("../../presets/database.toml"),
    },
    Preset {
        name: "sas-sweep",
        text: include_str!("../../presets/sas-sweep.toml"),
    },
];

/// Certification profiles (`fathom certify --profile NAME`).
pub const PROFILES: &[Preset] = &[
    Preset {
        name: "act-3x",
        text: include_str!("../../presets/act-3x.toml"),
    },
    Preset {
        name: "act6-3x",
        text: include_str!("../../presets/act6-3x.toml"),
    },
];

impl Preset {
    /// The first comment paragraph of the job file.
    pub fn description(&self) -> String {
        self.text
            .lines()
            .take_while(|l| l.starts_with('#') && l.trim() != "#")
            .map(|l| l.trim_start_matches('#').trim())
            .collect::<Vec<_>>()
            .join(" ")
    }
}

pub fn find(name: &str) -> Result<&'static Preset, UsageError> {
    PRESETS.iter().find(|p| p.name == name).ok_or_else(|| {
        let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
        UsageError(format!(
            "--preset: unknown preset '{name}' (expected one of {})",
            names.join(", ")
        ))
    })
}

/// The preset's workloads on the given targets (the current directory when
/// none is given).
pub fn load(name: &str, overrides: &Overrides) -> Result<Vec<WorkloadSpec>, UsageError> {
    let preset = find(name)?;
    let mut overrides = overrides.clone();
    if overrides.targets.is_empty() {
        // Named by its path in reports and the history, not as ".".
        let here = std::env::current_dir()
            .ok()
            .map(|d| d.display().to_string())
            .filter(|d| !d.contains('='))
            .unwrap_or_else(|| ".".into());
        overrides.targets.push(here);
    }
    jobfile::parse(preset.text, &format!("preset {name}"), name, &overrides)
}

/// `fathom presets`: name, what it runs, and how long.
pub fn listing() -> String {
    let mut out = String::new();
    let w = PRESETS
        .iter()
        .chain(PROFILES)
        .map(|p| p.name.len())
        .max()
        .unwrap_or(0);
    for p in PRESETS {
        let plan = load(p.name, &Overrides::default())
            .map(|specs| crate::input::plan::summary(&specs))
            .unwrap_or_else(|e| format!("invalid: {e}"));
        out.push_str(&format!(
            "{:<w$} {}\n{:<w$} ({plan})\n",
            p.name,
            p.description(),
            ""
        ));
    }
    out.push_str("\ncertification profiles (fathom certify --profile NAME):\n");
    for p in PROFILES {
        out.push_str(&format!("{:<w$} {}\n", p.name, p.description()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Pick;

    #[test]
    fn every_preset_parses_and_validates() {
        for p in PRESETS {
            let specs = load(p.name, &Overrides::default()).unwrap();
            assert!(!specs.is_empty(), "{}", p.name);
            for s in &specs {
                s.validate().unwrap();
            }
            assert!(!p.description().is_empty());
            // A description is a sentence, not a lead-in to a list.
            assert!(
                !p.description().ends_with(':'),
                "{}: {}",
                p.name,
                p.description()
            );
        }
    }

    #[test]
    fn quick_is_about_twenty_seconds_and_desktop_has_eight_tests() {
        let quick = load("quick", &Overrides::default()).unwrap();
        let seconds: f64 = quick.iter().map(|s| s.runtime_s.unwrap() + s.ramp_s).sum();
        assert!((15.0..=25.0).contains(&seconds));
        let desktop = load("desktop", &Overrides::default()).unwrap();
        let names: Vec<&str> = desktop.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names.len(), 8);
        assert!(names.contains(&"RND4K-Q32T1-write"));
        let nvme = load("desktop-nvme", &Overrides::default()).unwrap();
        assert_eq!(nvme.len(), 8);
        assert!(
            nvme.iter()
                .any(|s| s.name == "RND4K-Q32T16-read" && s.numjobs == 16 && s.iodepth == 32)
        );
        let mix = load("desktop-mix", &Overrides::default()).unwrap();
        assert_eq!(mix.len(), 4);
        assert!(mix.iter().all(|s| s.rw.is_mixed() && s.rwmix_read == 70));
        // Best of five, as desktop benchmarks count; a flag overrides it.
        for preset in [&desktop, &nvme, &mix] {
            assert!(preset.iter().all(|s| s.repeat == 5 && s.pick == Pick::Best));
        }
        let once = Overrides {
            knobs: vec![("repeat".into(), "1".into())],
            ..Overrides::default()
        };
        assert!(
            load("desktop", &once)
                .unwrap()
                .iter()
                .all(|s| s.repeat == 1)
        );
        let db = load("database", &Overrides::default()).unwrap();
        assert!(db.iter().all(|s| s.bs == 8192 && s.iodepth == 128));
        assert!(find("nope").unwrap_err().0.contains("quick"));
    }
}
