//! A throwaway OpenSSH server on 127.0.0.1 (TESTING.md's recipe): host and client keys made
//! with ssh-keygen in a temp dir, key login only, remote forwarding allowed; optionally a
//! `ForceCommand` (the fake localhost.run). Stopping kills the listener and every session
//! process it forked, as a crashed or restarted server would.

use super::support::descendants;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

pub(crate) struct Sshd {
    pub(crate) port: u16,
    pub(crate) client_key: PathBuf,
    pub(crate) user: String,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl Sshd {
    /// Starts sshd on a free port; `force_command` runs in place of any session's command.
    pub(crate) fn start(force_command: Option<&str>) -> Self {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} is missing: the tunnel tests need OpenSSH's server. Install it with \
             `apt-get install -y openssh-server openssh-client` (scripts/setup-deps.sh does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let keygen = |name: &str| {
            let status = Command::new("ssh-keygen")
                .args(["-q", "-t", "ed25519", "-N", "", "-C", "hooklab-test", "-f"])
                .arg(dir.path().join(name))
                .status()
                .expect("ssh-keygen runs (package openssh-client)");
            assert!(status.success(), "ssh-keygen made {name}");
        };
        keygen("host_key");
        keygen("client_key");
        std::fs::copy(
            dir.path().join("client_key.pub"),
            dir.path().join("authorized_keys"),
        )
        .unwrap();
        // sshd's privilege separation directory (Debian creates it only when the service runs).
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut config = format!(
            "ListenAddress 127.0.0.1:{port}\n\
             HostKey {dir}/host_key\n\
             AuthorizedKeysFile {dir}/authorized_keys\n\
             PidFile none\n\
             UsePAM no\n\
             StrictModes no\n\
             AllowTcpForwarding remote\n\
             PasswordAuthentication no\n\
             KbdInteractiveAuthentication no\n\
             PermitRootLogin prohibit-password\n\
             ClientAliveInterval 5\n",
            dir = dir.path().display()
        );
        if let Some(command) = force_command {
            let script = dir.path().join("force_command.sh");
            std::fs::write(&script, format!("#!/bin/sh\n{command}")).unwrap();
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
            config.push_str(&format!("ForceCommand {}\n", script.display()));
        }
        std::fs::write(dir.path().join("sshd_config"), config).unwrap();
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        let mut sshd = Self {
            port,
            client_key: dir.path().join("client_key"),
            user,
            dir,
            child: None,
        };
        sshd.run();
        sshd
    }

    fn run(&mut self) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join("sshd.log"))
            .unwrap();
        let child = Command::new(SSHD)
            .args(["-D", "-e", "-f"])
            .arg(self.dir.path().join("sshd_config"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("sshd starts");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "sshd did not listen on {}; its log: {}",
                self.port,
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The server's log (for failure messages).
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("sshd.log")).unwrap_or_default()
    }

    /// Kills the server and every session it forked: connections drop as in a crash.
    pub(crate) fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let mut pids = descendants(child.id());
            pids.push(child.id());
            for pid in pids {
                super::support::signal(pid, "KILL");
            }
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port, with the same keys.
    pub(crate) fn restart(&mut self) {
        self.stop();
        self.run();
    }

    /// `listen` flags for a tunnel through this server.
    pub(crate) fn flags(&self) -> Vec<String> {
        vec![
            "--ssh".into(),
            format!("{}@127.0.0.1:{}", self.user, self.port),
            "--ssh-identity".into(),
            self.client_key.display().to_string(),
            "--ssh-option".into(),
            "StrictHostKeyChecking=no".into(),
            "--ssh-option".into(),
            "UserKnownHostsFile=/dev/null".into(),
        ]
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        self.stop();
    }
}
