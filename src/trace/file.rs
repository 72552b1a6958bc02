//! A trace file as a replay uses it: read through once when the replay is
//! planned, to learn what it holds (its devices, each one's I/Os, how far
//! they reach and how they align, the time span, how far out of order it
//! is), then streamed again in time order for each pass of each target.
//! Never held whole: a trace of any length fits in the memory of its
//! summary and of its disorder (`order.rs`).

use super::event::{Answer, Event};
use super::order::{Disorder, Ordered};
use super::read::Reader;
use super::{At, Op, TraceError, TraceIo};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// What one device of a trace (within the window played) holds.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceIos {
    /// I/Os, sync points included.
    pub ios: u64,
    pub reads: u64,
    pub writes: u64,
    pub trims: u64,
    /// Bytes of its reads, writes and trims.
    pub data_bytes: u64,
    /// The end of its furthest I/O.
    pub extent: u64,
    /// Its longest I/O: what a buffer must hold.
    pub largest: u32,
    /// Its first I/O (in file order) whose offset or length is not a
    /// multiple of 512 bytes: O_DIRECT cannot play it.
    pub first_unaligned: Option<TraceIo>,
}

impl DeviceIos {
    pub fn data_ios(&self) -> u64 {
        self.reads + self.writes + self.trims
    }

    /// Share of its data I/Os that read, in percent.
    pub fn read_percent(&self) -> u8 {
        match self.data_ios() {
            0 => 0,
            d => (self.reads * 100 / d) as u8,
        }
    }

    fn add(&mut self, io: &TraceIo) {
        self.ios += 1;
        match io.op {
            Op::Read => self.reads += 1,
            Op::Write => self.writes += 1,
            Op::Trim => self.trims += 1,
            Op::Sync => return,
        }
        self.data_bytes += u64::from(io.len);
        self.extent = self.extent.max(io.offset + u64::from(io.len));
        self.largest = self.largest.max(io.len);
        if self.first_unaligned.is_none()
            && (!io.offset.is_multiple_of(512) || !io.len.is_multiple_of(512))
        {
            self.first_unaligned = Some(*io);
        }
    }
}

/// What identifies the file read: a replay refuses one changed since.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Identity {
    dev: u64,
    ino: u64,
    len: u64,
    mtime_ns: i128,
}

impl Identity {
    fn of(meta: &std::fs::Metadata) -> Identity {
        Identity {
            dev: meta.dev(),
            ino: meta.ino(),
            len: meta.len(),
            mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }
}

/// The part of a trace played, on the file's own clock: from (inclusive),
/// to (exclusive).
#[derive(Debug, Clone, Copy, PartialEq)]
struct Window {
    from_ns: u64,
    to_ns: Option<u64>,
}

impl Window {
    fn holds(self, t_ns: u64) -> bool {
        t_ns >= self.from_ns && self.to_ns.is_none_or(|to| t_ns < to)
    }
}

/// What is ordered by the time its I/O was issued.
trait Timed {
    fn t_ns(&self) -> u64;
    fn t_ns_mut(&mut self) -> &mut u64;
}

impl Timed for TraceIo {
    fn t_ns(&self) -> u64 {
        self.t_ns
    }
    fn t_ns_mut(&mut self) -> &mut u64 {
        &mut self.t_ns
    }
}

impl Timed for Answer {
    fn t_ns(&self) -> u64 {
        self.t_ns
    }
    fn t_ns_mut(&mut self) -> &mut u64 {
        &mut self.t_ns
    }
}

/// A trace file, summarized, and the part of it a replay plays.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    path: PathBuf,
    identity: Identity,
    /// What the trace's format is called in reports.
    pub format: &'static str,
    pub devices: Vec<String>,
    /// The format records no times (fio's version 2 iologs): every I/O is
    /// at time 0, so the trace can only be played as fast as possible.
    pub timeless: bool,
    /// The window played, on the file's own clock.
    window: Window,
    /// How far out of time order its I/Os, and all its events, are.
    io_disorder_ns: u64,
    event_disorder_ns: u64,
    per_device: Vec<DeviceIos>,
    /// The window's first and last I/O, from the window's start.
    first_ns: u64,
    last_ns: u64,
    /// Every offset and length of the window OR-ed: their common alignment.
    align_bits: u64,
    /// I/Os of the window with a recorded latency.
    answers: u64,
}

impl Trace {
    /// Reads the trace at `path` through, summarizing the I/Os from
    /// `from_ns` after its first one, up to `to_ns` after it (the whole
    /// trace by default).
    pub fn open(path: &Path, from_ns: u64, to_ns: Option<u64>) -> Result<Trace, TraceError> {
        let name = path.display().to_string();
        let identity = Identity::of(
            &std::fs::metadata(path)
                .map_err(|e| At { file: &name }.line(0, format!("cannot read: {e}")))?,
        );
        let mut reader = Reader::open(path)?;
        let (mut ios, mut events) = (Disorder::default(), Disorder::default());
        let mut start = u64::MAX;
        let whole = from_ns == 0 && to_ns.is_none();
        let mut summary = Summary::default();
        for event in reader.by_ref() {
            let event = event?;
            events.see(event.t_ns());
            if let Event::Io(io) = &event {
                ios.see(io.t_ns);
                start = start.min(io.t_ns);
            }
            if whole {
                summary.see(&event);
            }
        }
        let mut trace = Trace {
            path: path.to_path_buf(),
            identity,
            format: reader.format(),
            devices: reader.devices().to_vec(),
            timeless: reader.timeless(),
            window: Window {
                from_ns: start.saturating_add(from_ns),
                to_ns: to_ns.map(|t| start.saturating_add(t)),
            },
            io_disorder_ns: ios.ns,
            event_disorder_ns: events.ns,
            per_device: Vec::new(),
            first_ns: 0,
            last_ns: 0,
            align_bits: 0,
            answers: 0,
        };
        if !whole {
            summary = Summary::default();
            for event in trace.reopen()? {
                let event = event?;
                if trace.window.holds(event.t_ns()) {
                    summary.see(&event);
                }
            }
        }
        trace.per_device = summary.per_device;
        trace
            .per_device
            .resize(trace.devices.len(), DeviceIos::default());
        if summary.first_ns <= summary.last_ns {
            trace.first_ns = summary.first_ns - trace.window.from_ns;
            trace.last_ns = summary.last_ns - trace.window.from_ns;
        }
        trace.align_bits = summary.align_bits;
        trace.answers = summary.answers;
        Ok(trace)
    }

    /// The file as given.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file opened again, refused if it changed since it was read.
    fn reopen(&self) -> Result<Reader, TraceError> {
        let reader = Reader::open(&self.path)?;
        self.unchanged()?;
        Ok(reader)
    }

    /// Whether the file is still the one first read (device, inode, length
    /// and modification time): a same-size rewrite, a line added or the
    /// file cut short is not.
    pub fn unchanged(&self) -> Result<(), TraceError> {
        let now = std::fs::metadata(&self.path).map(|m| Identity::of(&m));
        match now.ok().as_ref() == Some(&self.identity) {
            true => Ok(()),
            false => Err(self.changed("its size or time is not what it was")),
        }
    }

    /// The error of a file changed since it was first read.
    pub fn changed(&self, how: &str) -> TraceError {
        let name = self.path.display().to_string();
        At { file: &name }.line(
            0,
            format!("changed since fathom first read it ({how}): start the replay again"),
        )
    }

    /// The window's I/Os in time order, their times from the window's
    /// start, read from the file.
    pub fn ios(
        &self,
    ) -> Result<impl Iterator<Item = Result<TraceIo, TraceError>> + Send + use<>, TraceError> {
        self.stream(
            |e| match e {
                Event::Io(io) => Some(io),
                Event::Answered(_) => None,
            },
            self.io_disorder_ns,
        )
    }

    /// The recorded latencies of the window's I/Os, in the time order of
    /// those I/Os, their times from the window's start.
    pub fn answers(
        &self,
    ) -> Result<impl Iterator<Item = Result<Answer, TraceError>> + Send + use<>, TraceError> {
        self.stream(
            |e| match e {
                Event::Answered(a) => Some(a),
                Event::Io(_) => None,
            },
            self.event_disorder_ns,
        )
    }

    /// The events `pick` takes, within the window, in time order (no event
    /// comes more than `disorder_ns` after a later one), their times from
    /// the window's start.
    fn stream<T: Timed + Send + 'static>(
        &self,
        pick: fn(Event) -> Option<T>,
        disorder_ns: u64,
    ) -> Result<impl Iterator<Item = Result<T, TraceError>> + Send + use<T>, TraceError> {
        let window = self.window;
        let picked = self.reopen()?.filter_map(move |e| match e {
            Ok(e) => pick(e).filter(|x| window.holds(x.t_ns())).map(Ok),
            Err(e) => Some(Err(e)),
        });
        let name = self.path.display().to_string();
        Ok(
            Ordered::new(picked, T::t_ns, disorder_ns, &name).map(move |x| {
                x.map(|mut x| {
                    *x.t_ns_mut() -= window.from_ns;
                    x
                })
            }),
        )
    }

    /// The index of device `name`.
    pub fn device(&self, name: &str) -> Option<u32> {
        self.devices
            .iter()
            .position(|d| d == name)
            .map(|d| d as u32)
    }

    /// What device `device` holds in the window (nothing for one the trace
    /// does not name).
    pub fn of_device(&self, device: u32) -> DeviceIos {
        self.per_device
            .get(device as usize)
            .cloned()
            .unwrap_or_default()
    }

    /// Every device's I/Os in the window, added up.
    pub fn all(&self) -> DeviceIos {
        let mut all = DeviceIos::default();
        for d in &self.per_device {
            all.ios += d.ios;
            all.reads += d.reads;
            all.writes += d.writes;
            all.trims += d.trims;
            all.data_bytes += d.data_bytes;
            all.extent = all.extent.max(d.extent);
            all.largest = all.largest.max(d.largest);
        }
        all
    }

    /// From the window's first I/O to its last, in ns.
    pub fn span_ns(&self) -> u64 {
        self.last_ns - self.first_ns
    }

    /// When the window's last I/O is issued, from the window's start.
    pub fn last_ns(&self) -> u64 {
        self.last_ns
    }

    /// The largest power of two, up to 4096, that every offset and length
    /// is a multiple of: what O_DIRECT needs of a target to replay it.
    pub fn alignment(&self) -> u64 {
        match self.align_bits {
            0 => 4096,
            b => (1u64 << b.trailing_zeros()).min(4096),
        }
    }

    /// Whether the trace recorded any latency in the window.
    pub fn has_latencies(&self) -> bool {
        self.answers > 0
    }
}

/// What a pass over the trace learns of its window.
#[derive(Debug)]
struct Summary {
    per_device: Vec<DeviceIos>,
    first_ns: u64,
    last_ns: u64,
    align_bits: u64,
    answers: u64,
}

impl Default for Summary {
    fn default() -> Self {
        Summary {
            per_device: Vec::new(),
            first_ns: u64::MAX,
            last_ns: 0,
            align_bits: 0,
            answers: 0,
        }
    }
}

impl Summary {
    fn see(&mut self, event: &Event) {
        let io = match event {
            Event::Io(io) => io,
            Event::Answered(_) => {
                self.answers += 1;
                return;
            }
        };
        let d = io.device as usize;
        if self.per_device.len() <= d {
            self.per_device.resize(d + 1, DeviceIos::default());
        }
        self.per_device[d].add(io);
        self.first_ns = self.first_ns.min(io.t_ns);
        self.last_ns = self.last_ns.max(io.t_ns);
        if io.op != Op::Sync {
            self.align_bits |= io.offset | u64::from(io.len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(dir: &Path, rows: &str) -> PathBuf {
        let p = dir.join("t.csv");
        std::fs::write(&p, format!("time_ns,offset,length,rw,device\n{rows}")).unwrap();
        p
    }

    #[test]
    fn a_window_keeps_its_part_and_starts_it_at_zero() {
        let dir = tempfile::tempdir().unwrap();
        let rows: String = (0..10)
            .map(|i| format!("{},{},4096,r,d\n", 1_000 + i * 100, i * 4096))
            .collect();
        let path = csv(dir.path(), &rows);
        let t = Trace::open(&path, 0, None).unwrap();
        assert_eq!(t.span_ns(), 900);
        assert_eq!(t.of_device(0).extent, 40960);
        let w = Trace::open(&path, 200, Some(500)).unwrap();
        let times: Vec<u64> = w.ios().unwrap().map(|io| io.unwrap().t_ns).collect();
        assert_eq!(times, [0, 100, 200]);
        assert_eq!((w.of_device(0).ios, w.last_ns()), (3, 200));
    }

    #[test]
    fn out_of_order_rows_stream_in_order_and_alignment_is_what_every_io_shares() {
        let dir = tempfile::tempdir().unwrap();
        let path = csv(
            dir.path(),
            "30,8192,4096,w,a\n10,4096,8192,r,b\n20,512,1024,r,a\n",
        );
        let t = Trace::open(&path, 0, None).unwrap();
        let ios: Vec<(u64, u32)> = t
            .ios()
            .unwrap()
            .map(|io| io.map(|io| (io.t_ns, io.device)).unwrap())
            .collect();
        assert_eq!(ios, [(0, 1), (10, 0), (20, 0)]);
        assert_eq!(t.alignment(), 512);
        let a = t.of_device(0);
        assert_eq!((a.reads, a.writes, a.read_percent()), (1, 1, 50));
        assert_eq!(a.first_unaligned, None);
    }

    #[test]
    fn a_trace_changed_after_it_was_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = csv(dir.path(), "0,0,4096,r,a\n");
        let t = Trace::open(&path, 0, None).unwrap();
        std::fs::write(&path, "time_ns,offset,length,rw\n0,0,4096,w\n1,0,4096,w\n").unwrap();
        let e = t.ios().err().expect("a changed file");
        assert!(e.to_string().contains("changed since"), "{e}");
    }
}
