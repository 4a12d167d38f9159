//! What the desktop tests share: an X server of their own (Xvfb), driving the window with
//! xdotool, HTTP to the receiver and the control API, and (in `notifications`) a private
//! D-Bus session bus with a minimal notification server.

pub(crate) mod notifications;

use std::io::{Read as _, Write as _};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// An Xvfb server on a free display number; killed on drop.
pub(crate) struct Display {
    child: Child,
    pub(crate) name: String,
}

impl Display {
    pub(crate) fn start() -> Self {
        for n in 90..140 {
            // A display is in use while the process its lock file names runs; a stale lock
            // (its server was killed) is Xvfb's to take over.
            let holder = std::fs::read_to_string(format!("/tmp/.X{n}-lock")).unwrap_or_default();
            let holder = holder.trim();
            if !holder.is_empty() && Path::new(&format!("/proc/{holder}")).exists() {
                continue;
            }
            let name = format!(":{n}");
            let mut child = Command::new("Xvfb")
                .args([&name, "-screen", "0", "1280x800x24", "-nolisten", "tcp"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("`Xvfb` is not installed: `apt-get install xvfb` (scripts/setup-deps.sh does it)");
            // Tests run in parallel: the display is this test's only when its lock file names
            // this Xvfb (another test's may have taken the number meanwhile; then this one
            // exits, and the next number is tried).
            let started = Instant::now();
            let ours = child.id().to_string();
            let mut taken = false;
            while started.elapsed() < Duration::from_secs(10) {
                let lock = std::fs::read_to_string(format!("/tmp/.X{n}-lock")).unwrap_or_default();
                if lock.trim() == ours && Path::new(&format!("/tmp/.X11-unix/X{n}")).exists() {
                    return Self { child, name };
                }
                if child.try_wait().unwrap().is_some() {
                    taken = true;
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
            if !taken {
                panic!("Xvfb {name} did not start");
            }
        }
        panic!("no free X display number between :90 and :139 (each runs an Xvfb)");
    }
}

impl Drop for Display {
    /// SIGTERM first, so that Xvfb removes its lock file and socket; SIGKILL if it lingers.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let asked = Instant::now();
        while asked.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(crate) fn window_titles(display: &str) -> String {
    let out = Command::new("xwininfo")
        .args(["-display", display, "-root", "-tree"])
        .output()
        .expect("`xwininfo` is not installed: `apt-get install x11-utils`");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `GET path` on the control API with the token; the JSON answer.
pub(crate) fn get_json(addr: &str, path: &str, token: &str) -> serde_json::Value {
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {token}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    let body = response.split("\r\n\r\n").nth(1).unwrap_or("");
    serde_json::from_str(body).unwrap_or_default()
}

pub(crate) fn stripe_signature(secret: &str, body: &str) -> String {
    use hmac::Mac as _;
    use std::time::{SystemTime, UNIX_EPOCH};
    let t = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let mut mac = hmac::Hmac::<sha2::Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{t}.{body}").as_bytes());
    format!("t={t},v1={}", hex::encode(mac.finalize().into_bytes()))
}

/// POSTs `body` to the receiver with a Stripe signature header; the answer's status line.
pub(crate) fn post_stripe(receiver: &str, body: &str, signature: &str) -> String {
    let addr = receiver.trim_start_matches("http://");
    let mut s = TcpStream::connect(addr).unwrap();
    write!(
        s,
        "POST /stripe HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nStripe-Signature: {signature}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    s.read_to_string(&mut response).unwrap();
    response.lines().next().unwrap_or_default().to_string()
}

/// Runs `xdotool` on the display (keys go to the window under the pointer), then lets the
/// app react.
pub(crate) fn xdotool(display: &Display, args: &[&str]) {
    let done = Command::new("xdotool")
        .args(args)
        .env("DISPLAY", &display.name)
        .status()
        .expect("`xdotool` is not installed: `apt-get install xdotool`");
    assert!(done.success(), "xdotool {args:?}");
    std::thread::sleep(Duration::from_millis(300));
}

/// How many of the app's windows are mapped (the main window, an open menu, a dialog).
pub(crate) fn visible_windows(display: &Display) -> usize {
    let out = Command::new("xdotool")
        .args(["search", "--onlyvisible", "--class", "hooklab-desktop"])
        .env("DISPLAY", &display.name)
        .output()
        .expect("`xdotool` is not installed: `apt-get install xdotool`");
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Opens the window's "Hooklab" menu with F10 and waits until it is on screen.
pub(crate) fn open_menu(display: &Display) {
    let before = visible_windows(display);
    for _ in 0..3 {
        xdotool(display, &["key", "F10"]);
        let opened = Instant::now();
        while opened.elapsed() < Duration::from_secs(5) {
            if visible_windows(display) > before {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    panic!("F10 did not open the window's menu");
}

/// The pids of `pid`'s child processes.
pub(crate) fn children(pid: u32) -> Vec<u32> {
    let out = Command::new("pgrep")
        .args(["-P", &pid.to_string()])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Waits up to `limit` for `check` to hold.
pub(crate) fn wait_for(limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
    let started = Instant::now();
    while !check() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}
