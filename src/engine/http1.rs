//! One kept-alive HTTP/1.1 connection over plain TCP, for an S3 worker's
//! object requests (GET, PUT, HEAD, DELETE) to an `http://` endpoint:
//! a request is one `writev`, its answer as few `recv`s as its bytes
//! need. ureq, which the S3 engine uses for TLS and the store's other
//! requests, spends ten system calls a request on such a connection
//! (a probe of the pooled socket, its time limits set again), which
//! is most of the client's cost on a small GET. Answers are parsed by
//! httparse.

use super::request::{Failure, ObjectMethod, ObjectTransport, Outcome, Timing, status_failure};
use crate::util::stop::StopFlag;
use std::io::{IoSlice, Read, Write};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

/// A store that neither sends nor takes a byte for this long has
/// stalled: the request fails, whatever time it has left.
pub const SILENT_AT_MOST: Duration = Duration::from_secs(10);

/// The most header bytes an answer may have.
const MAX_HEAD: usize = 64 << 10;

/// An error answer's body is kept (for its `<Code>`) up to this.
const MAX_ERROR_BODY: usize = 64 << 10;

pub struct Http1Connection {
    address: SocketAddr,
    host: String,
    timeout: Duration,
    /// Requests end by then, and at a stop (`bound`).
    until: Option<Instant>,
    stop: Option<StopFlag>,
    /// The stream's read and write time limits as last set.
    limits: [Option<Duration>; 2],
    stream: Option<TcpStream>,
    head: Vec<u8>,
    input: Vec<u8>,
}

impl ObjectTransport for Http1Connection {
    fn bound(&mut self, until: Option<Instant>, stop: &StopFlag) {
        Http1Connection::bound(self, until, Some(stop.clone()));
    }

    fn send(
        &mut self,
        method: ObjectMethod,
        url: &str,
        range: Option<(u64, u64)>,
        body: &[u8],
        sink: &mut [u8],
    ) -> Outcome {
        self.request(method.as_str(), path_and_query(url), range, body, sink)
    }
}

/// The path and query of a signed URL: what an HTTP/1.1 request line names.
fn path_and_query(url: &str) -> &str {
    let after_scheme = url.find("://").map(|i| i + 3).unwrap_or(0);
    match url[after_scheme..].find('/') {
        Some(i) => &url[after_scheme + i..],
        None => "/",
    }
}

/// What an answer's head says of its body.
enum Framing {
    None,
    Length(u64),
    Chunked,
    /// To the connection's close.
    Close,
}

impl Http1Connection {
    /// A connection to the host and port of `endpoint` (http://HOST:PORT),
    /// made at its first request.
    /// Requests from now on end by `until` (the run's end), and at a stop
    /// within half a second: a store that holds a request, or sends its
    /// answer a byte a second, holds the run no longer.
    pub fn bound(&mut self, until: Option<Instant>, stop: Option<StopFlag>) {
        self.until = until;
        self.stop = stop;
    }

    pub fn new(endpoint: &url::Url, timeout: Duration) -> Result<Http1Connection, String> {
        let host = endpoint
            .host_str()
            .ok_or_else(|| format!("{endpoint}: no host"))?;
        let port = endpoint.port_or_known_default().unwrap_or(80);
        let address = (host, port)
            .to_socket_addrs()
            .map_err(|e| format!("{endpoint}: {e}"))?
            .next()
            .ok_or_else(|| format!("{endpoint}: the name has no address"))?;
        let host = match endpoint.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        Ok(Http1Connection {
            address,
            host,
            timeout,
            until: None,
            stop: None,
            limits: [None, None],
            stream: None,
            head: Vec::with_capacity(1024),
            input: vec![0; MAX_HEAD],
        })
    }

    fn connect(&mut self) -> Result<(), Failure> {
        if self.stream.is_none() {
            let transport =
                |e: std::io::Error| Failure::Transport(format!("{}: {e}", self.address));
            let stream =
                TcpStream::connect_timeout(&self.address, self.timeout.min(SILENT_AT_MOST))
                    .map_err(transport)?;
            stream.set_nodelay(true).map_err(transport)?;
            self.limits = [None, None];
            self.stream = Some(stream);
        }
        Ok(())
    }

    /// Sends `method` of `path_and_query` (signed in its query) with
    /// `body`, and reads the answer to its end, its body into `sink`;
    /// once more on a fresh connection when a kept-alive one was closed
    /// under it before any answer.
    pub fn request(
        &mut self,
        method: &str,
        path_and_query: &str,
        range: Option<(u64, u64)>,
        body: &[u8],
        sink: &mut [u8],
    ) -> Outcome {
        self.head.clear();
        let _ = write!(
            self.head,
            "{method} {path_and_query} HTTP/1.1\r\nHost: {}\r\n",
            self.host
        );
        if let Some((off, len)) = range {
            let _ = write!(self.head, "Range: bytes={off}-{}\r\n", off + len - 1);
        }
        if method == "PUT" || method == "POST" || !body.is_empty() {
            let _ = write!(self.head, "Content-Length: {}\r\n", body.len());
        }
        self.head.extend_from_slice(b"\r\n");
        let reused = self.stream.is_some();
        let closed = || Failure::Transport("the connection closed before any answer".into());
        let outcome = match self.exchange(method, body, sink) {
            Ok(outcome) => outcome,
            Err(Stale) if reused => {
                self.stream = None;
                match self.exchange(method, body, sink) {
                    Ok(Ok(mut timing)) => {
                        timing.retries += 1;
                        Ok(timing)
                    }
                    Ok(Err(f)) => Err(f),
                    Err(Stale) => Err(closed()),
                }
            }
            Err(Stale) => Err(closed()),
        };
        // After a failure without an answer, the connection's state is
        // unknown: the next request gets a new one.
        if matches!(outcome, Err(Failure::Transport(_))) {
            self.stream = None;
        }
        outcome
    }

    /// One request and its answer; Err(Stale) when the connection ended
    /// before the answer's first byte.
    fn exchange(&mut self, method: &str, body: &[u8], sink: &mut [u8]) -> Result<Outcome, Stale> {
        let started = Instant::now();
        if let Err(f) = self.connect() {
            return Ok(Err(f));
        }
        let until = match self.until {
            Some(end) => end.min(started + self.timeout),
            None => started + self.timeout,
        };
        let bounded = self.until.is_some() || self.stop.is_some();
        let stop = self.stop.as_ref();
        // A failure at the bound (the run's end, a stop) is an unfinished
        // request, not a failed one.
        let cut = |e: &std::io::Error| {
            bounded
                && e.kind() == std::io::ErrorKind::TimedOut
                && (Instant::now() >= until || stop.is_some_and(StopFlag::is_set))
        };
        let mut stream = Bounded {
            stream: self.stream.as_mut().expect("connected above"),
            until,
            moved: Instant::now(),
            stop,
            limits: &mut self.limits,
        };
        if let Err(e) = write_all_vectored(&mut stream, &self.head, body) {
            return match e.kind() {
                _ if cut(&e) => Ok(Err(Failure::Unfinished)),
                std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset => Err(Stale),
                _ => Ok(Err(Failure::Transport(format!("sending: {e}")))),
            };
        }
        // Bytes of the answer in `input` so far (its head, and what of the
        // body came with it); `input` is never cleared or grown, so no
        // request pays for zeroing it.
        let mut filled = 0;
        let mut first_byte_ns = None;
        // The head.
        let (status, head_len, framing, close) = loop {
            if filled == self.input.len() {
                self.stream = None;
                return Ok(Err(Failure::Transport(
                    "an answer's head over 64 KiB".into(),
                )));
            }
            let n = match stream.read(&mut self.input[filled..]) {
                Ok(0) if first_byte_ns.is_none() => return Err(Stale),
                Ok(0) => return Ok(Err(Failure::Transport("the answer broke off".into()))),
                Ok(n) => n,
                Err(e) if cut(&e) => return Ok(Err(Failure::Unfinished)),
                Err(e)
                    if first_byte_ns.is_none()
                        && e.kind() == std::io::ErrorKind::ConnectionReset =>
                {
                    return Err(Stale);
                }
                Err(e) => return Ok(Err(Failure::Transport(format!("receiving: {e}")))),
            };
            filled += n;
            first_byte_ns.get_or_insert_with(|| started.elapsed().as_nanos() as u64);
            let mut headers = [httparse::EMPTY_HEADER; 48];
            let mut response = httparse::Response::new(&mut headers);
            match response.parse(&self.input[..filled]) {
                Ok(httparse::Status::Complete(len)) => {
                    let status = response.code.unwrap_or(0);
                    let (framing, close) = framing_of(&response, method, status);
                    break (status, len, framing, close);
                }
                Ok(httparse::Status::Partial) => continue,
                Err(e) => {
                    self.stream = None;
                    return Ok(Err(Failure::Transport(format!(
                        "an answer fathom cannot read: {e}"
                    ))));
                }
            }
        };
        let first_byte_ns = first_byte_ns.unwrap_or(0);
        let ok = (200..300).contains(&status);
        let mut error_body = Vec::new();
        let buffered = filled - head_len;
        let read = match framing {
            Framing::None => Ok(0),
            Framing::Length(len) => {
                let first = buffered.min(len as usize);
                if !ok {
                    error_body.extend_from_slice(&self.input[head_len..head_len + first]);
                }
                read_exactly(
                    &mut stream,
                    len - first as u64,
                    sink,
                    (!ok).then_some(&mut error_body),
                )
                .map(|n| n + first as u64)
            }
            Framing::Chunked => {
                let pending = self.input[head_len..filled].to_vec();
                read_chunked(&mut stream, pending, sink, (!ok).then_some(&mut error_body))
            }
            Framing::Close => {
                let first = buffered;
                if !ok {
                    error_body.extend_from_slice(&self.input[head_len..filled]);
                }
                read_to_end(&mut stream, sink, (!ok).then_some(&mut error_body))
                    .map(|n| n + first as u64)
            }
        };
        let bytes = match read {
            Ok(n) => n,
            Err(e) => {
                let unfinished = cut(&e);
                self.stream = None;
                return Ok(Err(match unfinished {
                    true => Failure::Unfinished,
                    false => Failure::Transport(format!("the body broke off: {e}")),
                }));
            }
        };
        if close || matches!(framing, Framing::Close) {
            self.stream = None;
        }
        if !ok {
            let text = String::from_utf8_lossy(&error_body);
            return Ok(Err(status_failure(status, &text)));
        }
        Ok(Ok(Timing {
            first_byte_ns,
            last_byte_ns: started.elapsed().as_nanos() as u64,
            bytes,
            retries: 0,
        }))
    }
}

/// A connection's stream during one request: each read and write waits
/// at most until the request's bound, and notices a stop within half a
/// second; the stream's time limits are set only when they change.
struct Bounded<'a> {
    stream: &'a mut TcpStream,
    until: Instant,
    /// When a byte last moved: a store silent for `SILENT_AT_MOST` fails
    /// the request whatever its bound.
    moved: Instant,
    stop: Option<&'a StopFlag>,
    limits: &'a mut [Option<Duration>; 2],
}

impl Bounded<'_> {
    /// How long the next read (0) or write (1) may wait: an error once
    /// the bound has passed or a stop was asked.
    fn limit(&mut self, which: usize) -> std::io::Result<()> {
        let now = Instant::now();
        let left = self.until.saturating_duration_since(now);
        if left.is_zero() || self.stop.is_some_and(StopFlag::is_set) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the request's time ran out",
            ));
        }
        if now.duration_since(self.moved) >= SILENT_AT_MOST {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the store sent and took nothing for {} s",
                    SILENT_AT_MOST.as_secs()
                ),
            ));
        }
        let wait = left.min(Duration::from_millis(500));
        // Within 10 ms of the last limit set: no call to set it again.
        let near = self.limits[which].is_some_and(|l| l.abs_diff(wait) < Duration::from_millis(10));
        if !near {
            match which {
                0 => self.stream.set_read_timeout(Some(wait))?,
                _ => self.stream.set_write_timeout(Some(wait))?,
            }
            self.limits[which] = Some(wait);
        }
        Ok(())
    }

    /// `moved` is now when a read or write moved a byte.
    fn moving(&mut self, r: std::io::Result<usize>) -> std::io::Result<usize> {
        if matches!(r, Ok(n) if n > 0) {
            self.moved = Instant::now();
        }
        r
    }
}

fn waited(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
    )
}

impl Read for Bounded<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        loop {
            self.limit(0)?;
            match self.stream.read(buf) {
                Err(e) if waited(&e) => continue,
                r => return self.moving(r),
            }
        }
    }
}

impl Write for Bounded<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.write_vectored(&[IoSlice::new(buf)])
    }

    fn write_vectored(&mut self, bufs: &[IoSlice<'_>]) -> std::io::Result<usize> {
        loop {
            self.limit(1)?;
            match self.stream.write_vectored(bufs) {
                Err(e) if waited(&e) => continue,
                r => return self.moving(r),
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.stream.flush()
    }
}

/// The connection closed under a request before any answer.
struct Stale;

fn framing_of(response: &httparse::Response, method: &str, status: u16) -> (Framing, bool) {
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_ascii_lowercase())
    };
    let close =
        header("connection").is_some_and(|v| v.contains("close")) || response.version == Some(0);
    let framing =
        if method == "HEAD" || status == 204 || status == 304 || (100..200).contains(&status) {
            Framing::None
        } else if header("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
            Framing::Chunked
        } else if let Some(len) = header("content-length").and_then(|v| v.parse::<u64>().ok()) {
            Framing::Length(len)
        } else {
            Framing::Close
        };
    (framing, close)
}

fn write_all_vectored(stream: &mut impl Write, head: &[u8], body: &[u8]) -> std::io::Result<()> {
    let (mut head, mut body) = (head, body);
    while !head.is_empty() || !body.is_empty() {
        let n = stream.write_vectored(&[IoSlice::new(head), IoSlice::new(body)])?;
        if n == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let from_head = n.min(head.len());
        head = &head[from_head..];
        body = &body[n - from_head..];
    }
    Ok(())
}

fn keep(kept: &mut Option<&mut Vec<u8>>, bytes: &[u8]) {
    if let Some(k) = kept
        && k.len() < MAX_ERROR_BODY
    {
        let room = MAX_ERROR_BODY - k.len();
        k.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

fn read_exactly(
    stream: &mut impl Read,
    mut left: u64,
    sink: &mut [u8],
    mut kept: Option<&mut Vec<u8>>,
) -> std::io::Result<u64> {
    let mut total = 0;
    while left > 0 {
        let want = (left as usize).min(sink.len());
        let n = stream.read(&mut sink[..want])?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        keep(&mut kept, &sink[..n]);
        left -= n as u64;
        total += n as u64;
    }
    Ok(total)
}

fn read_to_end(
    stream: &mut impl Read,
    sink: &mut [u8],
    mut kept: Option<&mut Vec<u8>>,
) -> std::io::Result<u64> {
    let mut total = 0;
    loop {
        let n = stream.read(sink)?;
        if n == 0 {
            return Ok(total);
        }
        keep(&mut kept, &sink[..n]);
        total += n as u64;
    }
}

/// A chunked body: its data bytes, counted (and kept, for an error).
fn read_chunked(
    stream: &mut impl Read,
    mut pending: Vec<u8>,
    sink: &mut [u8],
    mut kept: Option<&mut Vec<u8>>,
) -> std::io::Result<u64> {
    let mut total = 0u64;
    let mut pos = 0usize;
    loop {
        let size_line = line(stream, &mut pending, &mut pos)?;
        let hex = size_line.split(';').next().unwrap_or("").trim();
        let size = u64::from_str_radix(hex, 16)
            .map_err(|_| std::io::Error::other(format!("a chunk size '{hex}'")))?;
        if size == 0 {
            // Trailers, then the empty line.
            while !line(stream, &mut pending, &mut pos)?.is_empty() {}
            return Ok(total);
        }
        let buffered = (pending.len() - pos).min(size as usize);
        keep(&mut kept, &pending[pos..pos + buffered]);
        pos += buffered;
        total += buffered as u64;
        let rest = size - buffered as u64;
        if rest > 0 {
            total += read_exactly(stream, rest, sink, kept.as_deref_mut())?;
        }
        // The chunk's CRLF.
        if !line(stream, &mut pending, &mut pos)?.is_empty() {
            return Err(std::io::Error::other("a chunk longer than its size"));
        }
    }
}

/// A line of a chunked body (a chunk's size, a trailer), read through
/// more input as needed.
fn line(stream: &mut impl Read, pending: &mut Vec<u8>, pos: &mut usize) -> std::io::Result<String> {
    loop {
        if let Some(end) = pending[*pos..].windows(2).position(|w| w == b"\r\n") {
            let text = String::from_utf8_lossy(&pending[*pos..*pos + end]).to_string();
            *pos += end + 2;
            return Ok(text);
        }
        let mut more = [0u8; 4096];
        let n = stream.read(&mut more)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        pending.extend_from_slice(&more[..n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    /// A server that answers each request on one connection with the
    /// next of `answers`, then closes.
    fn serve(answers: Vec<&'static [u8]>) -> url::Url {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut conn, _) = listener.accept().unwrap();
            for answer in answers {
                let mut buf = [0u8; 4096];
                let mut got = Vec::new();
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    let n = conn.read(&mut buf).unwrap();
                    if n == 0 {
                        return;
                    }
                    got.extend_from_slice(&buf[..n]);
                }
                conn.write_all(answer).unwrap();
            }
        });
        format!("http://127.0.0.1:{port}").parse().unwrap()
    }

    #[test]
    fn lengths_chunks_and_errors_are_read_to_their_ends_on_one_connection() {
        let url = serve(vec![
            b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
            b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\n",
            b"HTTP/1.1 403 Forbidden\r\nContent-Length: 47\r\n\r\n<Error><Code>SignatureDoesNotMatch</Code></Error>",
        ]);
        let mut c = Http1Connection::new(&url, Duration::from_secs(5)).unwrap();
        let mut sink = vec![0u8; 4];
        let t = c.request("GET", "/b/k", None, &[], &mut sink).unwrap();
        assert_eq!(t.bytes, 5);
        assert!(t.first_byte_ns <= t.last_byte_ns);
        assert_eq!(
            c.request("GET", "/b/k", Some((0, 4)), &[], &mut sink)
                .unwrap()
                .bytes,
            5
        );
        // A HEAD's Content-Length is the object's, not a body.
        assert_eq!(
            c.request("HEAD", "/b/k", None, &[], &mut sink)
                .unwrap()
                .bytes,
            0
        );
        let e = c
            .request("PUT", "/b/k", None, b"data", &mut sink)
            .unwrap_err();
        assert_eq!(e.key(), "403 SignatureDoesNotMatch");
    }

    #[test]
    fn a_kept_connection_the_server_closed_is_made_again_once() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        std::thread::spawn(move || {
            for close_after in [true, false] {
                let (mut conn, _) = listener.accept().unwrap();
                let mut buf = [0u8; 4096];
                let _ = conn.read(&mut buf).unwrap();
                conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                    .unwrap();
                if close_after {
                    drop(conn);
                } else {
                    let _ = conn.read(&mut buf);
                }
            }
        });
        let url: url::Url = format!("http://127.0.0.1:{port}").parse().unwrap();
        let mut c = Http1Connection::new(&url, Duration::from_secs(5)).unwrap();
        let mut sink = vec![0u8; 16];
        assert_eq!(
            c.request("GET", "/", None, &[], &mut sink).unwrap().retries,
            0
        );
        std::thread::sleep(Duration::from_millis(50));
        let again = c.request("GET", "/", None, &[], &mut sink).unwrap();
        assert_eq!((again.bytes, again.retries), (2, 1));
    }
}
