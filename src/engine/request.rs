//! How a request to an object store ended: its times to the answer's
//! first and last byte, or its failure (an error status and the S3 code
//! its body named, or no answer), the same for every S3 engine.

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
