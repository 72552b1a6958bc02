//! A real S3 server on 127.0.0.1 for a test (tests/support/s3-server
//! starts it): SeaweedFS or s3s-fs, with one bucket and one key pair.
#![allow(dead_code)]

use std::process::Command;

pub const KEY: &str = "AKIDFATHOMTEST";
pub const SECRET: &str = "fathom-test-secret";
pub const BUCKET: &str = "bench";

/// A server of `kind` on 127.0.0.1, stopped (its whole process group)
/// when dropped.
pub struct Server {
    pub endpoint: String,
    pgid: i32,
    _dir: tempfile::TempDir,
}

impl Server {
    pub fn start(kind: &str) -> Option<Server> {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/support/s3-server"
        ))
        .args([kind, dir.path().to_str().unwrap(), BUCKET, KEY, SECRET])
        .output()
        .expect("the script runs");
        if !out.status.success() {
            eprintln!(
                "skipped: {kind} did not start: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            );
            return None;
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let mut parts = text.split_whitespace();
        let port = parts.next().unwrap().to_string();
        let pgid: i32 = parts.next().unwrap().parse().unwrap();
        Some(Server {
            endpoint: format!("http://127.0.0.1:{port}"),
            pgid,
            _dir: dir,
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        unsafe {
            libc::kill(-self.pgid, libc::SIGKILL);
        }
    }
}
