//! What a trace says, one event at a time, and what a format's reader
//! fills in as it reads: shared by the reader (`read.rs`) and each format.

use super::{Op, TraceIo};
use std::collections::{HashMap, VecDeque};

/// One thing a trace says: an I/O was issued, or an earlier one was
/// answered (its latency when recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    Io(TraceIo),
    Answered(Answer),
}

impl Event {
    /// When the I/O it is about was issued: the time a trace is ordered by.
    pub fn t_ns(&self) -> u64 {
        match self {
            Event::Io(io) => io.t_ns,
            Event::Answered(a) => a.t_ns,
        }
    }
}

/// The recorded latency of an I/O of the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    /// Which I/O: its place among the trace's I/Os, in file order.
    pub io: u64,
    /// When that I/O was issued.
    pub t_ns: u64,
    pub device: u32,
    pub op: Op,
    pub latency_ns: u64,
}

/// The device names of a trace, in the order first seen.
#[derive(Debug, Default)]
pub struct Devices {
    names: Vec<String>,
    index: HashMap<String, u32>,
}

impl Devices {
    /// The index of `name`, added when new.
    pub fn of(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        let i = self.names.len() as u32;
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), i);
        i
    }

    /// Adds `name` as the next device even if already named: a recording
    /// numbers its targets itself, and two streams may share a file.
    pub fn push(&mut self, name: &str) {
        self.index
            .entry(name.to_string())
            .or_insert(self.names.len() as u32);
        self.names.push(name.to_string());
    }

    pub fn names(&self) -> &[String] {
        &self.names
    }
}

/// Where a format's reader puts what a line says.
#[derive(Debug, Default)]
pub struct Out {
    pub devices: Devices,
    pub(super) events: VecDeque<Event>,
    ios: u64,
    /// The line being read (1-based; 0 for a recording).
    pub line: u32,
}

impl Out {
    /// An I/O issued; returns its place among the trace's I/Os.
    pub fn io(&mut self, t_ns: u64, device: u32, op: Op, offset: u64, len: u32) -> u64 {
        self.events.push_back(Event::Io(TraceIo {
            t_ns,
            device,
            op,
            offset,
            len,
            line: self.line,
        }));
        self.ios += 1;
        self.ios - 1
    }

    pub fn answered(&mut self, answer: Answer) {
        self.events.push_back(Event::Answered(answer));
    }
}

/// What a text format does with each line of its trace.
pub trait TextFormat: Send {
    /// What the format is called in reports.
    fn name(&self) -> &'static str;
    /// The format records no times (fio's version 2 iologs).
    fn timeless(&self) -> bool {
        false
    }
    fn line(&mut self, text: &str, out: &mut Out) -> Result<(), String>;
    /// After the last line: a problem of the whole file.
    fn end(&mut self, _out: &mut Out) -> Result<(), String> {
        Ok(())
    }
}
