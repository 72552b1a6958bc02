//! Watching a run while it runs: the live figures (`measure::live`) served
//! to Prometheus from a thread of their own (`--metrics-listen`), written
//! as JSON lines (`--live`) and pushed to a Pushgateway (`--metrics-push`).
//! The workers never see any of it: the coordinator hands each completed
//! second to the board, and these threads read the board.

pub mod endpoint;
pub mod jsonl;
pub mod openmetrics;

use crate::measure::live::{LiveBoard, Update};
use crate::util::error::UsageError;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Where the live figures go.
#[derive(Clone, Debug, Default)]
pub struct WatchOptions {
    /// `ADDR:PORT` to serve `/metrics` on.
    pub listen: Option<String>,
    /// A file for the JSON lines, or `-` for standard output.
    pub lines: Option<PathBuf>,
    /// A Pushgateway's URL (`http://HOST:9091`), or a full push URL
    /// (`.../metrics/job/NAME[/LABEL/VALUE...]`).
    pub push: Option<String>,
    /// The `host` label of every series (this host's name, or a rank's).
    pub host: String,
}

impl WatchOptions {
    pub fn any(&self) -> bool {
        self.listen.is_some() || self.lines.is_some() || self.push.is_some()
    }
}

/// The threads that show a board, stopped (the last figures pushed, the
/// last line written) when dropped.
pub struct Watch {
    board: Arc<LiveBoard>,
    server: Option<endpoint::Endpoint>,
    publisher: Option<JoinHandle<()>>,
    done: Option<mpsc::Sender<Update>>,
    /// The address served, with the port the system chose for port 0.
    pub listening: Option<std::net::SocketAddr>,
    /// The first push that failed, said once the run is over.
    trouble: Arc<std::sync::Mutex<Option<String>>>,
}

/// Pushes at most this often: a second of many streams is one push.
const PUSH_EVERY: Duration = Duration::from_secs(1);

impl Watch {
    /// Starts what `options` asks for; a bad address, file or URL is a
    /// usage error before anything runs.
    pub fn start(options: &WatchOptions) -> Result<Watch, UsageError> {
        let board = Arc::new(LiveBoard::new());
        let mut listening = None;
        let server = match &options.listen {
            None => None,
            Some(given) => {
                let addr = &listen_address(given);
                let (b, host) = (board.clone(), options.host.clone());
                let render = Arc::new(move || {
                    (
                        openmetrics::render(&b.snapshot(), &host),
                        openmetrics::CONTENT_TYPE,
                    )
                });
                let server = endpoint::Endpoint::start(addr, render).map_err(|e| {
                    UsageError(format!("--metrics-listen {addr}: cannot listen: {e}"))
                })?;
                listening = Some(server.addr);
                Some(server)
            }
        };
        let lines: Option<Box<dyn Write + Send>> = match &options.lines {
            None => None,
            Some(p) if p.as_os_str() == "-" => Some(Box::new(std::io::stdout())),
            Some(p) => Some(Box::new(crate::gate::write::Growing::create(
                p,
                jsonl::OUTPUT,
                false,
            )?)),
        };
        let push = options.push.as_deref().map(push_url).transpose()?;
        let push = push.map(|url| url_with_instance(&url, &options.host));
        if let Some(url) = &push {
            // A gateway that cannot be reached is bad input, found before
            // any I/O; one that stops answering later is a note.
            push_to(url, &openmetrics::render(&board.snapshot(), &options.host)).map_err(|e| {
                UsageError(format!(
                    "--metrics-push {}: cannot push: {e}",
                    options.push.as_deref().unwrap_or_default()
                ))
            })?;
        }
        let trouble: Arc<std::sync::Mutex<Option<String>>> = Arc::default();
        let (publisher, done) = if lines.is_some() || push.is_some() {
            let (tx, rx) = mpsc::channel::<Update>();
            board.listen(tx.clone());
            let (b, host, t) = (board.clone(), options.host.clone(), trouble.clone());
            let thread = std::thread::Builder::new()
                .name("fathom-live".into())
                .spawn(move || publish(rx, lines, push, &b, &host, &t))
                .map_err(|e| UsageError(format!("--live: {e}")))?;
            (Some(thread), Some(tx))
        } else {
            (None, None)
        };
        Ok(Watch {
            board,
            server,
            publisher,
            done,
            listening,
            trouble,
        })
    }

    /// Ends the watching (the last push made, the last line written) and
    /// says what went wrong with it, if anything did.
    pub fn finish(mut self) -> Option<String> {
        self.stop();
        self.trouble.lock().expect("not poisoned").take()
    }

    fn stop(&mut self) {
        self.board.finished();
        // The publisher's last push carries fathom_up 0; it ends when every
        // sender is gone (ours and the board's).
        drop(self.done.take());
        self.board.stop_listening();
        if let Some(thread) = self.publisher.take() {
            let _ = thread.join();
        }
        if let Some(mut server) = self.server.take() {
            server.stop();
        }
    }

    pub fn board(&self) -> Arc<LiveBoard> {
        self.board.clone()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop();
    }
}

/// `PORT` alone binds to 127.0.0.1: serving beyond this host is asked for
/// by giving the address (`0.0.0.0:9500`).
fn listen_address(given: &str) -> String {
    match given.parse::<u16>() {
        Ok(port) => format!("127.0.0.1:{port}"),
        Err(_) => given.to_string(),
    }
}

/// Writes each second as a line and pushes the board, at most once a
/// second and once more at the end.
fn publish(
    rx: mpsc::Receiver<Update>,
    mut lines: Option<Box<dyn Write + Send>>,
    push: Option<String>,
    board: &LiveBoard,
    host: &str,
    trouble: &std::sync::Mutex<Option<String>>,
) {
    let mut pushed: Option<Instant> = None;
    let mut warned = false;
    let push_now = |warned: &mut bool| {
        if let Some(url) = &push
            && let Err(e) = push_to(url, &openmetrics::render(&board.snapshot(), host))
            && !std::mem::replace(warned, true)
        {
            let said = format!("--metrics-push {url}: a push failed ({e}); the run went on");
            eprintln!("fathom: {said}");
            *trouble.lock().expect("not poisoned") = Some(said);
        }
    };
    for update in rx {
        if let Some(out) = lines.as_mut() {
            // One write per line: a reader never sees half of one. A
            // line that cannot be written (a full disk, /dev/full) is
            // said once and noted in the result; the run goes on.
            let wrote = out
                .write_all(jsonl::line(&update, host).as_bytes())
                .and_then(|()| out.flush());
            if let Err(e) = wrote {
                let said = format!(
                    "--live: a line could not be written ({e}); the run went on without the rest"
                );
                eprintln!("fathom: {said}");
                *trouble.lock().expect("not poisoned") = Some(said);
                lines = None;
            }
        }
        if pushed.is_none_or(|at| at.elapsed() >= PUSH_EVERY) {
            push_now(&mut warned);
            pushed = Some(Instant::now());
        }
    }
    push_now(&mut warned);
}

/// `ADDR:PORT` with the port moved up by `rank` (port 0 stays 0: any free
/// port), so that the ranks of one host each serve their own.
pub fn port_plus(addr: &str, rank: u32) -> String {
    if let Ok(port) = addr.parse::<u32>() {
        return match port {
            0 => addr.to_string(),
            _ => (port + rank).to_string(),
        };
    }
    match addr.rsplit_once(':').map(|(h, p)| (h, p.parse::<u32>())) {
        Some((host, Ok(port))) if port > 0 => format!("{host}:{}", port + rank),
        _ => addr.to_string(),
    }
}

/// A rank's file of JSON lines: `live.jsonl` is `live.rank3.jsonl` for
/// rank 3 (`-`, standard output, stays as it is).
pub fn per_rank(path: &std::path::Path, rank: u32) -> PathBuf {
    if path.as_os_str() == "-" {
        return path.to_path_buf();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = match path.extension() {
        Some(ext) => format!("{stem}.rank{rank}.{}", ext.to_string_lossy()),
        None => format!("{stem}.rank{rank}"),
    };
    path.with_file_name(name)
}

/// The Pushgateway's URL as given, checked.
fn push_url(url: &str) -> Result<String, UsageError> {
    let rest = url.strip_prefix("http://").ok_or_else(|| {
        UsageError(format!(
            "--metrics-push {url}: an http:// URL (a Pushgateway, http://HOST:9091)"
        ))
    })?;
    if rest.is_empty() || rest.starts_with('/') {
        return Err(UsageError(format!("--metrics-push {url}: no host in it")));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// `http://HOST:9091` becomes the grouping key fathom pushes under
/// (`/metrics/job/fathom/instance/HOST`); a URL that names its own job is
/// kept as given.
fn url_with_instance(url: &str, host: &str) -> String {
    if url.contains("/metrics/job/") {
        url.to_string()
    } else {
        format!("{url}/metrics/job/fathom/instance/{host}")
    }
}

fn push_to(url: &str, body: &str) -> Result<(), String> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(5)))
        .build()
        .into();
    agent
        .put(url)
        .header("Content-Type", openmetrics::CONTENT_TYPE)
        .send(body)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn a_port_alone_is_served_on_this_host_only() {
        assert_eq!(listen_address("9500"), "127.0.0.1:9500");
        assert_eq!(listen_address("0.0.0.0:9500"), "0.0.0.0:9500");
    }

    #[test]
    fn each_rank_gets_its_own_port_and_file() {
        assert_eq!(port_plus("127.0.0.1:9500", 3), "127.0.0.1:9503");
        assert_eq!(port_plus("[::1]:9500", 1), "[::1]:9501");
        assert_eq!(port_plus("127.0.0.1:0", 3), "127.0.0.1:0");
        assert_eq!(port_plus("9500", 2), "9502", "a port alone moves too");
        assert_eq!(port_plus("0", 2), "0");
        assert_eq!(
            per_rank(Path::new("/tmp/live.jsonl"), 2),
            Path::new("/tmp/live.rank2.jsonl")
        );
        assert_eq!(per_rank(Path::new("-"), 2), Path::new("-"));
    }

    #[test]
    fn a_push_url_gets_fathoms_grouping_key_unless_it_has_one() {
        assert_eq!(
            push_url("http://127.0.0.1:9091/").unwrap(),
            "http://127.0.0.1:9091"
        );
        assert!(push_url("https://x").unwrap_err().0.contains("http://"));
        assert!(push_url("127.0.0.1:9091").is_err());
        assert_eq!(
            url_with_instance("http://h:9091", "node1"),
            "http://h:9091/metrics/job/fathom/instance/node1"
        );
        assert_eq!(
            url_with_instance("http://h:9091/metrics/job/db/tier/ssd", "node1"),
            "http://h:9091/metrics/job/db/tier/ssd"
        );
    }
}
