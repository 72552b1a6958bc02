//! The I/O priority a workload's workers run at (`--ioprio CLASS:LEVEL`,
//! fio's `prioclass` and `prio`): the kernel's scheduling class and level
//! of the block I/O each worker issues (ioprio_set(2)).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The kernel's I/O scheduling classes (linux/ioprio.h).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoClass {
    RealTime,
    BestEffort,
    Idle,
}

impl IoClass {
    /// The class's number in the kernel's `IOPRIO_PRIO_VALUE` (and fio's
    /// `prioclass`).
    pub fn number(self) -> u16 {
        match self {
            IoClass::RealTime => 1,
            IoClass::BestEffort => 2,
            IoClass::Idle => 3,
        }
    }

    pub fn of_number(n: u16) -> Option<IoClass> {
        match n {
            1 => Some(IoClass::RealTime),
            2 => Some(IoClass::BestEffort),
            3 => Some(IoClass::Idle),
            _ => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            IoClass::RealTime => "rt",
            IoClass::BestEffort => "be",
            IoClass::Idle => "idle",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct IoPriority {
    pub class: IoClass,
    /// 0 (highest) to 7; the idle class has none.
    pub level: u8,
}

impl IoPriority {
    /// The value ioprio_set(2) takes: class in the top bits, level below.
    pub fn value(self) -> u16 {
        (self.class.number() << 13) | u16::from(self.level)
    }
}

impl FromStr for IoPriority {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (class, level) = match s.split_once(':') {
            Some((c, l)) => (c, Some(l)),
            None => (s, None),
        };
        let class = match class {
            "rt" | "realtime" | "1" => IoClass::RealTime,
            "be" | "best-effort" | "2" => IoClass::BestEffort,
            "idle" | "3" => IoClass::Idle,
            _ => {
                return Err(format!("'{class}' is not an I/O class (rt, be or idle)"));
            }
        };
        let level = match level {
            None => 4,
            Some(l) => l
                .parse::<u8>()
                .ok()
                .filter(|l| *l <= 7)
                .ok_or_else(|| format!("'{l}' is not a level from 0 to 7"))?,
        };
        Ok(IoPriority {
            class,
            level: if class == IoClass::Idle { 0 } else { level },
        })
    }
}

impl fmt::Display for IoPriority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.class {
            IoClass::Idle => write!(f, "idle"),
            class => write!(f, "{}:{}", class.name(), self.level),
        }
    }
}

impl From<IoPriority> for String {
    fn from(p: IoPriority) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for IoPriority {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

/// A share of a workload's I/Os issued at a priority of their own
/// (`--cmdprio PCT:CLASS[:LEVEL]`, fio's `cmdprio_percentage` and
/// `cmdprio_class`/`cmdprio`), or a share for each block size
/// (`SIZE/PCT,SIZE/PCT:CLASS[:LEVEL]`, fio's `cmdprio_bssplit`): their
/// latency is reported apart from the others'.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct CommandPriority {
    /// Percent of the I/Os, 1 to 100 (of every size, when `by_size` is
    /// empty).
    pub percent: u8,
    /// Percent of the I/Os of each block size; other sizes have none.
    pub by_size: Vec<(u64, u8)>,
    pub priority: IoPriority,
}

impl CommandPriority {
    /// The percent of the I/Os of `len` bytes that go out at the priority.
    #[inline]
    pub fn percent_of(&self, len: u64) -> u8 {
        match self.by_size.is_empty() {
            true => self.percent,
            false => self
                .by_size
                .iter()
                .find(|(size, _)| *size == len)
                .map_or(0, |(_, pct)| *pct),
        }
    }
}

/// A share from 0 to 100, with or without its `%`.
pub(crate) fn share(pct: &str) -> Result<u8, String> {
    pct.trim_end_matches('%')
        .parse::<u8>()
        .ok()
        .filter(|p| *p <= 100)
        .ok_or_else(|| format!("'{pct}' is not a share from 0 to 100%"))
}

impl FromStr for CommandPriority {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let (shares, priority) = s.split_once(':').ok_or_else(|| {
            format!("'{s}' is not PCT:CLASS[:LEVEL] (20:rt:0) or SIZE/PCT,...:CLASS[:LEVEL] (64k/100,1m/0:rt:0)")
        })?;
        let priority = priority.parse()?;
        if !shares.contains('/') {
            let percent = share(shares)?;
            if percent == 0 {
                return Err(format!("'{shares}' is not a share from 1 to 100%"));
            }
            return Ok(CommandPriority {
                percent,
                by_size: Vec::new(),
                priority,
            });
        }
        let mut by_size: Vec<(u64, u8)> = Vec::new();
        for entry in shares.split(',') {
            let (size, pct) = entry
                .split_once('/')
                .ok_or_else(|| format!("'{entry}' is not SIZE/PCT (64k/100)"))?;
            let size = crate::util::units::parse_size(size)?;
            if size == 0 {
                return Err(format!("{entry}: a block size of 0 bytes has no I/Os"));
            }
            let pct = share(pct)?;
            match by_size.iter_mut().find(|(s, _)| *s == size) {
                Some(_) => return Err(format!("{entry}: block size given twice")),
                None => by_size.push((size, pct)),
            }
        }
        Ok(CommandPriority {
            percent: by_size.iter().map(|(_, p)| *p).max().unwrap_or(0),
            by_size,
            priority,
        })
    }
}

impl fmt::Display for CommandPriority {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.by_size.is_empty() {
            return write!(f, "{}%:{}", self.percent, self.priority);
        }
        let shares: Vec<String> = self
            .by_size
            .iter()
            .map(|(size, pct)| format!("{}/{pct}%", crate::util::units::format_block_size(*size)))
            .collect();
        write!(f, "{}:{}", shares.join(","), self.priority)
    }
}

impl From<CommandPriority> for String {
    fn from(p: CommandPriority) -> String {
        p.to_string()
    }
}

impl TryFrom<String> for CommandPriority {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        s.parse()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_read_and_print_as_ionice_names_them() {
        let p: IoPriority = "rt:2".parse().unwrap();
        assert_eq!(
            (p.class, p.level, p.value()),
            (IoClass::RealTime, 2, (1 << 13) | 2)
        );
        assert_eq!("be".parse::<IoPriority>().unwrap().to_string(), "be:4");
        assert_eq!("idle:5".parse::<IoPriority>().unwrap().to_string(), "idle");
        assert!("be:8".parse::<IoPriority>().is_err());
        assert!("high".parse::<IoPriority>().is_err());
    }

    #[test]
    fn a_command_priority_is_a_share_and_a_priority() {
        let c: CommandPriority = "20:rt:0".parse().unwrap();
        assert_eq!(
            (c.percent, c.priority.to_string()),
            (20, "rt:0".to_string())
        );
        assert_eq!(c.to_string(), "20%:rt:0");
        assert_eq!("20%:rt:0".parse::<CommandPriority>().unwrap(), c);
        assert!("0:rt".parse::<CommandPriority>().is_err());
        assert!("0/50:be".parse::<CommandPriority>().is_err());
        assert!("rt".parse::<CommandPriority>().is_err());
        // fio's cmdprio_bssplit: a share per block size, none for the rest.
        let c: CommandPriority = "64k/100,1m/0:rt:0".parse().unwrap();
        assert_eq!(
            (
                c.percent_of(64 << 10),
                c.percent_of(1 << 20),
                c.percent_of(4096)
            ),
            (100, 0, 0)
        );
        assert_eq!(c.to_string(), "64k/100%,1m/0%:rt:0");
        assert_eq!(c.to_string().parse::<CommandPriority>().unwrap(), c);
        assert!("64k/100,64k/5:rt".parse::<CommandPriority>().is_err());
        assert!("64k/101:rt".parse::<CommandPriority>().is_err());
    }
}
