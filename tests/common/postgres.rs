//! A real PostgreSQL server for a test (Debian's `postgresql`): a new
//! cluster in a temporary directory on a free port of 127.0.0.1, trust
//! authentication, stopped when dropped. As root, the server runs as the
//! `postgres` user (it refuses to run as root).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Server {
    _dir: tempfile::TempDir,
    data: PathBuf,
    bin: PathBuf,
    pub port: u16,
}

fn bin_dir() -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(|e| Some(e.ok()?.path().join("bin")))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `program args`, as the postgres user when this is root.
fn as_server_user(program: &Path) -> Command {
    match is_root() {
        true => {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(program);
            c
        }
        false => Command::new(program),
    }
}

impl Server {
    /// Starts a server, or says why not (no PostgreSQL installed).
    pub fn start() -> Result<Server, String> {
        let bin = bin_dir().ok_or("no PostgreSQL here (apt-get install postgresql)")?;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let data = dir.path().join("data");
        std::fs::create_dir(&data).map_err(|e| e.to_string())?;
        if is_root() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(|e| e.to_string())?;
            let ok = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(&data)
                .status()
                .is_ok_and(|s| s.success());
            if !ok {
                return Err("cannot give the data directory to the postgres user".into());
            }
        }
        let out = as_server_user(&bin.join("initdb"))
            .args(["-U", "postgres", "--auth=trust", "-E", "UTF8", "-D"])
            .arg(&data)
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            return Err(format!("initdb: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let port = crate::common::free_port();
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off",
            data.display()
        );
        let out = as_server_user(&bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .args(["-o", &options, "-l"])
            .arg(data.join("log"))
            .args(["-w", "-t", "60", "start"])
            .output()
            .map_err(|e| e.to_string())?;
        if !out.status.success() {
            let log = std::fs::read_to_string(data.join("log")).unwrap_or_default();
            return Err(format!(
                "pg_ctl start: {}{log}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(Server {
            _dir: dir,
            data,
            bin,
            port,
        })
    }

    /// A new database, and its URL.
    pub fn database(&self, name: &str) -> String {
        let ok = Command::new(self.bin.join("createdb"))
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-U",
                "postgres",
                name,
            ])
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "createdb {name}");
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }
}

/// Starts a server, or prints why not and returns None.
pub fn skip_or_start() -> Option<Server> {
    if !cfg!(feature = "postgres") {
        eprintln!(
            "SKIP: the fathom under test was built without PostgreSQL's client (cargo test --features postgres)"
        );
        return None;
    }
    match Server::start() {
        Ok(s) => Some(s),
        Err(why) => {
            eprintln!("SKIP: {why}");
            None
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = as_server_user(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-m", "immediate", "-w", "stop"])
            .output();
    }
}
