//! The directions of I/O: one table for read, write and trim that every
//! per-direction array is indexed by. It sits with the measurements, the
//! lowest layer that counts by direction; `spec::direction` is the same.

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Read = 0,
    Write = 1,
    /// Discards the blocks: BLKDISCARD on a device, a punched hole in a file.
    Trim = 2,
}

impl Direction {
    /// Every direction, in the order per-direction arrays are indexed.
    pub const ALL: [Direction; 3] = [Direction::Read, Direction::Write, Direction::Trim];

    /// The direction a load with `read_percent` reads mostly issues: the one
    /// a rated stream is judged on, and the one its not yet issued I/Os are
    /// counted in.
    pub fn other(self) -> Direction {
        match self {
            Direction::Read => Direction::Write,
            Direction::Write => Direction::Read,
            Direction::Trim => Direction::Trim,
        }
    }

    pub fn mostly(read_percent: u8) -> Direction {
        if read_percent >= 50 {
            Direction::Read
        } else {
            Direction::Write
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Direction::Read => "read",
            Direction::Write => "write",
            Direction::Trim => "trim",
        }
    }
}
