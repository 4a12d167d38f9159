//! What the desktop tests share: an X server of their own (Xvfb), driving the window with
//! xdotool, HTTP to the receiver and the control API, and (in `notifications`) a private
//! D-Bus session bus with a minimal notification server.

pub(crate) mod notifications;

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpStream;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// An Xvfb server on a free display number; killed on drop.
pub(crate) struct Display {
    child: Child,
    /// Kept open: a write to a closed pipe would end the server.
    _stdout: BufReader<ChildStdout>,
    pub(crate) name: String,
}

impl Display {
    /// Xvfb picks the display number itself (`-displayfd`): it takes a free one (or one whose
    /// lock file a dead server left behind), and writes the number on its standard output only
    /// once it accepts connections. Guessing a number instead raced with the stale lock files
    /// and sockets that killed servers leave in /tmp: a test could see an old socket and start
    /// the app before the new server listened. `-noreset`: by default an X server resets
    /// when its last client leaves, and a client that connects meanwhile is refused — the
    /// test's own `xwininfo` polls leaving just as the app connected killed the app's GTK.
    pub(crate) fn start() -> Self {
        // One start at a time: two servers taking over the same stale lock file at once can
        // both believe they own its display (each removes the lock it read as stale, which may
        // be the other's fresh one).
        static STARTING: Mutex<()> = Mutex::new(());
        let _one_at_a_time = STARTING.lock().unwrap_or_else(|e| e.into_inner());
        let mut child = Command::new("Xvfb")
            .args([
                "-displayfd",
                "1",
                "-screen",
                "0",
                "1280x800x24",
                "-nolisten",
                "tcp",
                "-noreset",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect(
                "`Xvfb` is not installed: `apt-get install xvfb` (scripts/setup-deps.sh does it)",
            );
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut number = String::new();
        let read = stdout.read_line(&mut number);
        let number = number.trim();
        if read.is_err() || number.is_empty() || !number.bytes().all(|b| b.is_ascii_digit()) {
            let _ = child.kill();
            let status = child.wait();
            panic!("Xvfb did not start (it printed {number:?} for its display; {status:?})");
        }
        Self {
            child,
            _stdout: stdout,
            name: format!(":{number}"),
        }
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

/// Waits for the app to exit after `what` (killing it and failing past `within`); its status.
pub(crate) fn exit_status(app: &mut Child, within: Duration, what: &str) -> ExitStatus {
    let started = Instant::now();
    loop {
        if let Some(status) = app.try_wait().unwrap() {
            return status;
        }
        if started.elapsed() > within {
            let _ = app.kill();
            panic!("the app did not exit within {within:?} of {what}");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}
