//! The `/metrics` endpoint (`--metrics-listen`): a scrape is one small GET,
//! so the server holds nothing a client can grow. At most
//! [`MAX_CONNECTIONS`] are answered at once (past them, the one that has
//! waited longest without asking is closed for the newcomer), a
//! request's head is at most [`MAX_HEAD`] bytes, and a connection has
//! [`DEADLINE`] to send it and take the answer. Its threads end within
//! that deadline of [`Endpoint::stop`], so a client that stays connected
//! never holds fathom after its run (one held it 97 s, deaf to signals,
//! and 513 connections used every descriptor, when a thread per
//! connection read headers without bound).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Connections answered at once.
pub const MAX_CONNECTIONS: usize = 16;
/// The most bytes of a request's line and headers.
pub const MAX_HEAD: usize = 8 << 10;
/// The time a connection has for its request and the answer.
pub const DEADLINE: Duration = Duration::from_secs(1);
/// How often the accepting thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(50);

/// What the endpoint answers `GET /metrics` with: the body and its type.
pub type Render = dyn Fn() -> (String, &'static str) + Send + Sync;

pub struct Endpoint {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Endpoint {
    /// Listens on `addr` and answers scrapes with `render` from a thread
    /// of its own.
    pub fn start(addr: &str, render: Arc<Render>) -> std::io::Result<Endpoint> {
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fathom-metrics".into())
            .spawn(move || accept(&listener, &s, &render))?;
        Ok(Endpoint {
            addr,
            stop,
            thread: Some(thread),
        })
    }

    /// Stops accepting; the connections being answered end within
    /// [`DEADLINE`] on their own.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A connection being answered: a second handle on its socket, to close
/// it from the accepting thread, and whether its request has come.
struct Open {
    id: u64,
    socket: TcpStream,
    asked: Arc<AtomicBool>,
}

fn accept(listener: &TcpListener, stop: &AtomicBool, render: &Arc<Render>) {
    let open: Arc<Mutex<Vec<Open>>> = Arc::new(Mutex::new(Vec::new()));
    let mut next_id = 0u64;
    while !stop.load(Ordering::SeqCst) {
        let stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(POLL);
                continue;
            }
            // Out of descriptors, a connection reset before it was taken:
            // the next one may do.
            Err(_) => {
                std::thread::sleep(POLL);
                continue;
            }
        };
        let Ok(socket) = stream.try_clone() else {
            continue;
        };
        let asked = Arc::new(AtomicBool::new(false));
        let id = next_id;
        next_id += 1;
        {
            let mut table = open.lock().unwrap_or_else(|e| e.into_inner());
            if table.len() >= MAX_CONNECTIONS {
                // Clients that connect and say nothing must not lock a
                // scraper out (20 of them, reconnecting as they were
                // closed, failed 15 of 16 scrapes): the one that has
                // waited longest without asking is closed for the new one
                // (the table is in the order they came).
                let idlest = table.iter().position(|c| !c.asked.load(Ordering::SeqCst));
                match idlest {
                    Some(i) => {
                        let _ = table.remove(i).socket.shutdown(std::net::Shutdown::Both);
                    }
                    None => continue,
                }
            }
            table.push(Open {
                id,
                socket,
                asked: asked.clone(),
            });
        }
        let (table, render) = (open.clone(), render.clone());
        let spawned = std::thread::Builder::new()
            .name("fathom-scrape".into())
            .spawn(move || {
                let _ = answer(stream, render.as_ref(), &asked);
                let mut table = table.lock().unwrap_or_else(|e| e.into_inner());
                table.retain(|c| c.id != id);
            });
        if spawned.is_err() {
            let mut table = open.lock().unwrap_or_else(|e| e.into_inner());
            table.retain(|c| c.id != id);
        }
    }
}

/// Reads one request's head within the bounds and answers it; the
/// connection is closed after.
fn answer(mut stream: TcpStream, render: &Render, asked: &AtomicBool) -> std::io::Result<()> {
    let deadline = Instant::now() + DEADLINE;
    stream.set_nonblocking(false)?;
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && !head.windows(2).any(|w| w == b"\n\n") {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() || head.len() > MAX_HEAD {
            return respond(
                &mut stream,
                deadline,
                "431 Request Header Fields Too Large",
                "",
                "text/plain",
            );
        }
        stream.set_read_timeout(Some(left))?;
        match stream.read(&mut buf)? {
            0 => return Ok(()),
            n => head.extend_from_slice(&buf[..n]),
        }
    }
    asked.store(true, Ordering::SeqCst);
    let line = String::from_utf8_lossy(&head);
    let mut words = line.lines().next().unwrap_or("").split_whitespace();
    match (words.next(), words.next()) {
        (Some("GET"), Some("/metrics")) => {
            let (body, kind) = render();
            respond(&mut stream, deadline, "200 OK", &body, kind)
        }
        _ => respond(
            &mut stream,
            deadline,
            "404 Not Found",
            "fathom serves /metrics\n",
            "text/plain",
        ),
    }
}

fn respond(
    stream: &mut TcpStream,
    deadline: Instant,
    status: &str,
    body: &str,
    kind: &str,
) -> std::io::Result<()> {
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(10));
    stream.set_write_timeout(Some(left))?;
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes())?;
    stream.write_all(body.as_bytes())?;
    stream.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn serve() -> Endpoint {
        Endpoint::start(
            "127.0.0.1:0",
            Arc::new(|| ("up 1\n".to_string(), "text/plain")),
        )
        .unwrap()
    }

    fn get(addr: SocketAddr, request: &[u8]) -> String {
        let mut s = TcpStream::connect(addr).unwrap();
        s.write_all(request).unwrap();
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        out
    }

    #[test]
    fn a_scrape_is_answered_and_everything_else_bounded() {
        let mut e = serve();
        let ok = get(e.addr, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        assert!(
            ok.starts_with("HTTP/1.1 200") && ok.ends_with("up 1\n"),
            "{ok}"
        );
        assert!(get(e.addr, b"GET / HTTP/1.1\r\n\r\n").starts_with("HTTP/1.1 404"));
        // Headers without end: refused at the bound, not buffered.
        let mut big = b"GET /metrics HTTP/1.1\r\n".to_vec();
        big.extend(std::iter::repeat_n(b'x', 64 << 10));
        let mut s = TcpStream::connect(e.addr).unwrap();
        let _ = s.write_all(&big);
        let mut out = String::new();
        let _ = s.read_to_string(&mut out);
        assert!(out.is_empty() || out.starts_with("HTTP/1.1 431"), "{out}");
        // Clients that connect and say nothing, more than the bound and
        // reopened as they are closed, do not lock a scraper out; and
        // stopping does not wait for the ones held.
        let mut held: Vec<TcpStream> = (0..MAX_CONNECTIONS + 4)
            .map(|_| TcpStream::connect(e.addr).unwrap())
            .collect();
        std::thread::sleep(POLL * 3);
        for _ in 0..MAX_CONNECTIONS {
            let ok = get(e.addr, b"GET /metrics HTTP/1.1\r\n\r\n");
            assert!(
                ok.starts_with("HTTP/1.1 200"),
                "a scrape beside idle clients: {ok:?}"
            );
            held.push(TcpStream::connect(e.addr).unwrap());
        }
        let started = Instant::now();
        e.stop();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{:?}",
            started.elapsed()
        );
        drop(held);
    }
}
