//! A PostgreSQL cluster of the suite's own (`initdb`, `pg_ctl`), which a scenario may stop and
//! start; the machine's own server is never touched.

use std::path::PathBuf;
use std::process::Command;

/// A private cluster on a free loopback port, removed when dropped.
pub struct PrivatePostgres {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// Where `initdb` and `pg_ctl` are: `pg_config --bindir`, else Debian's layout.
fn bindir() -> Option<PathBuf> {
    if let Ok(o) = Command::new("pg_config").arg("--bindir").output()
        && o.status.success()
    {
        let dir = PathBuf::from(String::from_utf8_lossy(&o.stdout).trim());
        if dir.join("initdb").exists() {
            return Some(dir);
        }
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists())
        .collect();
    found.sort();
    found.pop()
}

impl PrivatePostgres {
    /// Initializes and starts a cluster; `None` (said on stderr) when PostgreSQL's server
    /// programs are not installed, which fails the test under `CI=true`.
    pub fn start() -> Option<Self> {
        let Some(bin) = bindir() else {
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "initdb and pg_ctl are needed (CI=true)"
            );
            eprintln!("SKIPPED: no initdb/pg_ctl (install PostgreSQL's server package)");
            return None;
        };
        let dir = std::env::temp_dir().join(format!("a2a-faults-pg-{}", a2a_types::new_id()));
        std::fs::create_dir_all(&dir).unwrap();
        // initdb refuses to run as root: the cluster is then the postgres user's.
        let as_postgres = nix_is_root();
        if as_postgres {
            run(Command::new("chown").arg("postgres").arg(&dir));
        }
        let pg = Self {
            bin,
            dir,
            port: super::free_port(),
            as_postgres,
        };
        let data = pg.dir.join("data");
        run(pg
            .cmd("initdb")
            .args(["-A", "trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data));
        pg.start_again();
        Some(pg)
    }

    fn cmd(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// The URL of its `postgres` database.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Stops it (`pg_ctl stop -m fast`: sessions are terminated, as in a restart).
    pub fn stop(&self) {
        run(self
            .cmd("pg_ctl")
            .args(["-m", "fast", "-w", "stop", "-D"])
            .arg(self.dir.join("data")));
    }

    /// Starts it (again), waiting until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            self.port,
            self.dir.display()
        );
        run(self
            .cmd("pg_ctl")
            .args(["-w", "-o", &options, "-l"])
            .arg(self.dir.join("log"))
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("start"));
    }
}

impl Drop for PrivatePostgres {
    fn drop(&mut self) {
        let _ = self
            .cmd("pg_ctl")
            .args(["-m", "immediate", "-w", "stop", "-D"])
            .arg(self.dir.join("data"))
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn nix_is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
