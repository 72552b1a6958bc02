//! How a request to an object store ended: its times to the answer's
//! first and last byte, or its failure (an error status and the S3 code
//! its body named, or no answer), the same for every S3 engine; and the
//! one way an object request is sent, whatever connection carries it.

use crate::util::stop::StopFlag;
use std::time::Instant;

/// The requests a worker makes of objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectMethod {
    Get,
    Put,
    Head,
    Delete,
}

impl ObjectMethod {
    pub fn as_str(self) -> &'static str {
        match self {
            ObjectMethod::Get => "GET",
            ObjectMethod::Put => "PUT",
            ObjectMethod::Head => "HEAD",
            ObjectMethod::Delete => "DELETE",
        }
    }
}

/// How a worker's object requests reach the store: each S3 operation is
/// written once, over this, and a connection of each kind (plain HTTP/1.1,
/// ureq's for TLS) implements it.
pub trait ObjectTransport: Send {
    /// Requests from now on end by `until` (the run's end, with its
    /// grace) and at `stop`; one cut there is [`Failure::Unfinished`].
    fn bound(&mut self, until: Option<Instant>, stop: &StopFlag);
    /// Sends `method` to the signed `url` (the bytes `range` of the object,
    /// `body` as its content), the answer's body read into `sink` and
    /// dropped, and times it.
    fn send(
        &mut self,
        method: ObjectMethod,
        url: &str,
        range: Option<(u64, u64)>,
        body: &[u8],
        sink: &mut [u8],
    ) -> Outcome;
}

/// How a request ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// The store answered with an error status, and the S3 error code
    /// its body named (`SignatureDoesNotMatch`), when it named one.
    Status { status: u16, code: Option<String> },
    /// No answer: refused, reset, timed out, TLS.
    Transport(String),
    /// Cut at the run's end, or by a stop, before its answer ended: a
    /// request the store held past the runtime is unfinished, not failed.
    Unfinished,
}

impl Failure {
    /// How errors are counted: by status and code ("403
    /// SignatureDoesNotMatch"), or "transport".
    pub fn key(&self) -> String {
        match self {
            Failure::Status {
                status,
                code: Some(c),
            } => format!("{status} {c}"),
            Failure::Status { status, code: None } => status.to_string(),
            Failure::Transport(_) => "transport".into(),
            Failure::Unfinished => "unfinished".into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Status {
                status,
                code: Some(c),
            } => write!(f, "HTTP {status} {c}"),
            Failure::Status { status, code: None } => write!(f, "HTTP {status}"),
            Failure::Transport(why) => f.write_str(why),
            Failure::Unfinished => f.write_str("unfinished at the run's end"),
        }
    }
}

/// A request that succeeded: its times from before it was sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    /// To the response's status line and headers.
    pub first_byte_ns: u64,
    /// To the body's last byte.
    pub last_byte_ns: u64,
    /// Object bytes moved (read or sent).
    pub bytes: u64,
    /// Requests sent again after a kept-alive connection the store had
    /// closed failed before any answer.
    pub retries: u32,
}

pub type Outcome = Result<Timing, Failure>;

/// The failure an error answer is: its status and the `<Code>` its body
/// names.
pub fn status_failure(status: u16, body: &str) -> Failure {
    let code = body
        .split_once("<Code>")
        .and_then(|(_, rest)| rest.split_once("</Code>"))
        .map(|(code, _)| code.trim().to_string())
        .filter(|c| !c.is_empty());
    Failure::Status { status, code }
}
