//! The desktop app for real, on a virtual X display (Xvfb) with a session bus of its own: it
//! starts the receiver and the control API, its tray icon (with no tray host to show it) and
//! its window (a WebKitGTK webview on the control API's UI, which must load, authenticate and
//! open the live stream), records a signed delivery sent to it, sends native notifications
//! for the dead letter that delivery becomes and — coalesced — for a burst of invalid
//! signatures, and on SIGTERM shuts down gracefully (the delivery committed, the discovery
//! file removed, the settings remembered, no process left behind).
//!
//! Needs `Xvfb`, `xwininfo`, ImageMagick, `xdotool`, `xclip`, `dbus-daemon` and
//! libayatana-appindicator3 (scripts/setup-deps.sh installs them). Missing any fails with what to install. The
//! screenshot of the window is left in the target folder
//! (`CARGO_TARGET_TMPDIR/desktop-window.png`).

mod support;

use support::notifications::{NotificationServer, SessionBus, Shown};
use support::*;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hooklab-desktop");
const SECRET: &str = "whsec_desktop_test";

#[test]
fn the_desktop_app_opens_its_window_records_notifies_and_shuts_down_gracefully() {
    let display = Display::start();
    let bus = SessionBus::start();
    let notifications = NotificationServer::start(&bus);
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let config = dir.path().join("hooklab.toml");
    // Deliveries are forwarded to a port where nothing listens: after two attempts, a dead
    // letter.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    std::fs::write(
        &config,
        format!(
            "[[source]]\nname = \"stripe\"\nprovider = \"stripe\"\nsecret = \"{SECRET}\"\n\
             forward_to = \"http://127.0.0.1:{closed_port}/hook\"\nretry_schedule = \"0.2s\"\n\
             [tunnel]\nprovider = \"custom\"\n\
             command = \"echo https://tunnel-{{port}}.hooklab.test; exec sleep 600\"\n\
             url_regex = \"https://[a-z0-9.-]+\"\n"
        ),
    )
    .unwrap();
    // A remembered window size and notification choices (invalid signatures on) from an
    // earlier run.
    let window_state = dir.path().join("window.json");
    std::fs::write(
        &window_state,
        r#"{"width": 900.0, "height": 640.0, "notify": {"dead_letter": true, "invalid_signature": true}}"#,
    )
    .unwrap();
    let log = dir.path().join("desktop.log");
    let mut app = Command::new(BIN)
        .arg("--window-state")
        .arg(&window_state)
        .arg("--db")
        .arg(&db)
        .arg("--config")
        .arg(&config)
        .args(["--port", "0", "--print-ready"])
        .current_dir(dir.path())
        .env("DISPLAY", &display.name)
        .env("DBUS_SESSION_BUS_ADDRESS", &bus.address)
        // WebKit's folders (Tauri's default web context makes them) go to the test's folder.
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .env("XDG_CACHE_HOME", dir.path().join("cache"))
        .env("WEBKIT_DISABLE_COMPOSITING_MODE", "1")
        .env("RUST_LOG", "warn,hooklab_desktop=info")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("hooklab-desktop starts");
    let mut lines = BufReader::new(app.stdout.take().unwrap()).lines();
    let ready: serde_json::Value =
        serde_json::from_str(&lines.next().expect("a ready line").unwrap()).unwrap();
    let receiver = ready["ready"]["receiver"].as_str().unwrap().to_string();
    let discovery = dir.path().join("hooklab.db.control.json");
    assert!(
        discovery.exists(),
        "the CLI can find the app (`hooklab ui`)"
    );

    // The window appears, titled Hooklab.
    let started = Instant::now();
    loop {
        if window_titles(&display.name).contains("\"Hooklab\"") {
            break;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let exited = app.try_wait().unwrap();
            let _ = app.kill();
            panic!(
                "no Hooklab window on {} (the app {}):\n{}\napp's log:\n{}",
                display.name,
                exited.map_or("still runs".to_string(), |s| format!("exited: {s}")),
                window_titles(&display.name),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }

    // It opens at the remembered size (once GTK has applied it: under load that may follow
    // the window's first appearance).
    let mut info = String::new();
    let sized = Instant::now();
    while !(info.contains("Width: 900") && info.contains("Height: 640")) {
        assert!(
            sized.elapsed() < Duration::from_secs(10),
            "the remembered size is restored:\n{info}"
        );
        std::thread::sleep(Duration::from_millis(100));
        let out = Command::new("xwininfo")
            .args(["-display", &display.name, "-name", "Hooklab"])
            .output()
            .unwrap();
        info = String::from_utf8_lossy(&out.stdout).into_owned();
    }
    // Spoil the file: what it holds after exit can only be the app's own write.
    std::fs::write(&window_state, "spoiled").unwrap();

    // The window runs the UI: WebKit loaded it from the control API, the UI read its token
    // and opened the live stream (the API counts open streams in /api/health).
    let found: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&discovery).unwrap()).unwrap();
    let control = found["url"]
        .as_str()
        .unwrap()
        .trim_start_matches("http://")
        .to_string();
    let token = found["token"].as_str().unwrap().to_string();
    let started = Instant::now();
    loop {
        let health = get_json(&control, "/api/health", &token);
        if health["ui_streams"].as_u64().unwrap_or(0) >= 1 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the window's UI never opened the live stream: {health}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    // A screenshot of the display shows real content, not a blank window: the UI's header,
    // theme colours and text make hundreds of distinct colours; a blank window has a handful.
    // Only the webview's part is counted: below the window's menu bar (the window is at the
    // top left, 900×640).
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("desktop-window.png");
    let started = Instant::now();
    let colours = loop {
        let captured = Command::new("import")
            .args(["-display", &display.name, "-window", "root"])
            .arg(&shot)
            .status()
            .expect("`import` is not installed: `apt-get install imagemagick`");
        assert!(captured.success(), "import could not capture the display");
        let out = Command::new("convert")
            .arg(&shot)
            .args(["-crop", "900x590+0+50", "-format", "%k", "info:"])
            .output()
            .expect("convert runs");
        let colours: u32 = String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0);
        // The first paint may follow the stream by a moment (software rendering).
        if colours > 50 || started.elapsed() > Duration::from_secs(30) {
            break colours;
        }
        std::thread::sleep(Duration::from_millis(300));
    };
    assert!(
        colours > 50,
        "the window looks blank ({colours} colours); see {}",
        shot.display()
    );
    eprintln!("desktop screenshot: {} ({colours} colours)", shot.display());

    // The tray icon was made (no tray host shows it here, and that is no failure).
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("tray icon ready"),
        "no tray icon:\n{logged}"
    );
    assert!(!logged.contains("panicked"), "{logged}");

    // The receiver records a signed delivery; forwarding it fails twice: a dead letter, and a
    // native notification that says which event.
    let body = r#"{"id":"evt_desktop","type":"charge.succeeded","created":1700000000}"#;
    let status = post_stripe(&receiver, body, &stripe_signature(SECRET, body));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    wait_for(
        Duration::from_secs(20),
        "a dead-letter notification",
        || {
            notifications
                .shown()
                .iter()
                .any(|n| n.summary == "Dead letter from stripe")
        },
    );
    let dead = notifications.shown()[0].clone();
    assert_eq!(dead.app, "Hooklab");
    assert!(
        dead.body
            .starts_with("charge.succeeded evt_desktop: gave up after 2 attempts"),
        "{dead:?}"
    );

    // Thirty forged deliveries in a burst: one notification at once, then one summary when
    // the quiet window (10 s) ends, replacing it — not thirty.
    for i in 0..30 {
        let forged =
            format!(r#"{{"id":"evt_forged_{i}","type":"charge.succeeded","created":1700000000}}"#);
        let status = post_stripe(&receiver, &forged, "t=1700000000,v1=00");
        assert!(status.starts_with("HTTP/1.1 "), "{status}");
    }
    let invalid = |n: &Shown| {
        n.summary.contains("invalid signature") || n.summary.starts_with("Invalid signature")
    };
    wait_for(
        Duration::from_secs(10),
        "an invalid-signature notification",
        || notifications.shown().iter().any(invalid),
    );
    let first = notifications.shown().into_iter().find(invalid).unwrap();
    assert_eq!(first.summary, "Invalid signature on stripe");
    assert!(
        first.body.starts_with("POST /stripe evt_forged_0"),
        "{first:?}"
    );
    wait_for(Duration::from_secs(15), "the summary of the burst", || {
        notifications.shown().iter().filter(|n| invalid(n)).count() >= 2
    });
    let shown: Vec<_> = notifications.shown().into_iter().filter(invalid).collect();
    assert_eq!(shown.len(), 2, "{shown:#?}");
    assert_eq!(shown[1].summary, "29 more invalid signatures");
    assert!(shown[1].body.contains("evt_forged_29"), "{:?}", shown[1]);
    assert_ne!(
        shown[1].replaces, 0,
        "the summary replaces the first notification"
    );

    // The window's own menu (F10 opens it; keys go to the window under the pointer, there being
    // no window manager). The tunnel (a custom command that prints a URL and waits) is up, so
    // its first item, "Copy public URL", can be chosen: the URL is then on the clipboard.
    let xdotool = |args: &[&str]| xdotool(&display, args);
    let mut public_url = String::new();
    wait_for(Duration::from_secs(20), "the tunnel up", || {
        let tunnel = get_json(&control, "/api/tunnel", &token);
        public_url = tunnel["url"].as_str().unwrap_or_default().to_string();
        tunnel["status"] == "up"
    });
    assert!(public_url.starts_with("https://tunnel-"), "{public_url}");
    // The menus follow the bus at most every 500 ms.
    std::thread::sleep(Duration::from_secs(2));
    xdotool(&["mousemove", "450", "400"]);
    open_menu(&display);
    xdotool(&["key", "Down", "Return"]);
    wait_for(
        Duration::from_secs(10),
        "the public URL on the clipboard",
        || {
            let clipboard = Command::new("xclip")
                .args(["-o", "-selection", "clipboard"])
                .env("DISPLAY", &display.name)
                .stderr(Stdio::null())
                .output()
                .expect("`xclip` is not installed: `apt-get install xclip`");
            clipboard.stdout == public_url.as_bytes()
        },
    );

    // "Notify on invalid signatures" is the fifth item that can be chosen; switching it off is
    // remembered at once.
    open_menu(&display);
    xdotool(&["key", "Down", "Down", "Down", "Down", "Down", "Return"]);
    wait_for(Duration::from_secs(5), "the choice written", || {
        std::fs::read(&window_state)
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .is_some_and(|v| v["notify"]["invalid_signature"] == false)
    });

    // "Export database…": the native save dialog opens in the app's working folder (the test's
    // folder) with the name `hooklab-export.jsonl`; accepting it writes the database as
    // `hooklab export` does. (Typing a path instead races the name entry's completion.)
    let exported = dir.path().join("hooklab-export.jsonl");
    open_menu(&display);
    xdotool(&["key", "Down", "Down", "Return"]);
    let dialog_open = || {
        let out = Command::new("xdotool")
            .args(["search", "--onlyvisible", "--name", "Export the database"])
            .env("DISPLAY", &display.name)
            .output()
            .unwrap();
        !out.stdout.is_empty()
    };
    wait_for(Duration::from_secs(10), "the save dialog", dialog_open);
    // Return accepts the name (again while the dialog is still there: it may not have taken
    // the keyboard yet).
    for _ in 0..5 {
        xdotool(&["key", "Return"]);
        std::thread::sleep(Duration::from_secs(1));
        if exported.exists() || !dialog_open() {
            break;
        }
    }
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("desktop-export.png");
    let asked = Instant::now();
    while !exported.exists() {
        if asked.elapsed() > Duration::from_secs(20) {
            let _ = Command::new("import")
                .args(["-display", &display.name, "-window", "root"])
                .arg(&shot)
                .status();
            panic!(
                "no export written within 20 s; the display: {}",
                shot.display()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let export = std::fs::read_to_string(&exported).unwrap();
    let mut export_lines = export.lines();
    assert!(
        export_lines
            .next()
            .unwrap()
            .starts_with(r#"{"hooklab_export":1,"#),
        "{export}"
    );
    let delivery_rows = export_lines
        .filter(|l| l.starts_with(r#"{"table":"deliveries""#))
        .count();
    assert_eq!(delivery_rows, 31, "every delivery exported");
    assert!(export.contains(r#""table":"attempts""#), "attempts too");

    // SIGTERM: a graceful exit.
    let pid = app.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let status = exit_status(&mut app, Duration::from_secs(20), "SIGTERM");
    assert!(status.success(), "exit status {status}");
    assert!(!discovery.exists(), "the discovery file is removed on exit");
    let remembered: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&window_state).unwrap()).unwrap();
    assert_eq!(
        (remembered["width"].as_f64(), remembered["height"].as_f64()),
        (Some(900.0), Some(640.0)),
        "the size is remembered on exit"
    );
    assert_eq!(
        remembered["notify"],
        serde_json::json!({"dead_letter": true, "invalid_signature": false}),
        "the notification choices are remembered"
    );
    let leftover = Command::new("pgrep").args(["-P", &pid]).output().unwrap();
    assert!(
        leftover.stdout.is_empty(),
        "children left: {:?}",
        String::from_utf8_lossy(&leftover.stdout)
    );

    // The delivery is in the database, with a valid verdict.
    let store = hooklab_core::store::sqlite::SqliteStore::open_read_only(&db).unwrap();
    let listed = store
        .list(&hooklab_core::store::DeliveryFilter {
            verdict: Some(hooklab_core::verdict::Status::Valid),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].event_id.as_deref(), Some("evt_desktop"));
    let forged = store
        .list(&hooklab_core::store::DeliveryFilter {
            verdict: Some(hooklab_core::verdict::Status::Invalid),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(forged.len(), 30);
}

/// Quit in the window's menu is the same clean exit as SIGTERM. With no session bus at all (no
/// notification server, no tray host), a dead letter's notification only logs a warning, and
/// WebKit's processes run with the lean environment the app sets for them.
#[test]
fn quit_from_the_menu_exits_cleanly_and_no_session_bus_is_no_failure() {
    let display = Display::start();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooklab.db");
    let config = dir.path().join("hooklab.toml");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    std::fs::write(
        &config,
        format!(
            "[[source]]\nname = \"stripe\"\nprovider = \"stripe\"\nsecret = \"{SECRET}\"\n\
             forward_to = \"http://127.0.0.1:{closed_port}/hook\"\nretry_schedule = \"0.1s\"\n"
        ),
    )
    .unwrap();
    let log = dir.path().join("desktop.log");
    let mut app = Command::new(BIN)
        .arg("--window-state")
        .arg(dir.path().join("window.json"))
        .arg("--db")
        .arg(&db)
        .arg("--config")
        .arg(&config)
        .args(["--port", "0", "--print-ready"])
        .env("DISPLAY", &display.name)
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .env_remove("JSC_useJIT")
        .env_remove("WEBKIT_DISABLE_DMABUF_RENDERER")
        .env_remove("GDK_GL")
        .env_remove("WEBKIT_WEB_RENDER_DEVICE_FILE")
        .env_remove("HOOKLAB_WEBKIT_ENV")
        .env("RUST_LOG", "warn,hooklab_desktop=info")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("hooklab-desktop starts");
    let mut lines = BufReader::new(app.stdout.take().unwrap()).lines();
    let ready: serde_json::Value =
        serde_json::from_str(&lines.next().expect("a ready line").unwrap()).unwrap();
    let receiver = ready["ready"]["receiver"].as_str().unwrap().to_string();
    wait_for(Duration::from_secs(60), "the Hooklab window", || {
        if let Some(status) = app.try_wait().unwrap() {
            panic!(
                "the app exited ({status}):\n{}",
                std::fs::read_to_string(&log).unwrap()
            );
        }
        window_titles(&display.name).contains("\"Hooklab\"")
    });

    // WebKit's web process inherited the lean environment (set by the app's re-exec: the test
    // set none of it).
    let pid = app.id();
    let mut web_process = None;
    wait_for(Duration::from_secs(30), "WebKit's web process", || {
        web_process = children(pid).into_iter().find(|child| {
            std::fs::read_to_string(format!("/proc/{child}/comm"))
                .is_ok_and(|comm| comm.starts_with("WebKitWebProces"))
        });
        web_process.is_some()
    });
    let environ = std::fs::read(format!("/proc/{}/environ", web_process.unwrap())).unwrap();
    let environ: Vec<&[u8]> = environ.split(|b| *b == 0).collect();
    assert!(environ.contains(&&b"JSC_useJIT=0"[..]), "no JSC_useJIT=0");
    for lean in [
        &b"WEBKIT_DISABLE_DMABUF_RENDERER=1"[..],
        b"GDK_GL=disable",
        b"HOOKLAB_WEBKIT_ENV=JSC_useJIT,WEBKIT_DISABLE_DMABUF_RENDERER,GDK_GL,WEBKIT_WEB_RENDER_DEVICE_FILE",
    ] {
        assert!(environ.contains(&lean), "no {}", String::from_utf8_lossy(lean));
    }
    assert!(
        environ
            .iter()
            .any(|var| var.starts_with(b"WEBKIT_WEB_RENDER_DEVICE_FILE=/dev/dri/")),
        "no WEBKIT_WEB_RENDER_DEVICE_FILE"
    );
    // With them the app's own process, which only shows the web process's pictures, loads no
    // GL driver (Mesa's and its LLVM: ~25 MB, docs/benchmarks.md); the web process does.
    let maps = |pid: u32| std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    wait_for(
        Duration::from_secs(30),
        "the web process's GL driver",
        || maps(web_process.unwrap()).contains("_dri.so"),
    );
    assert!(
        !maps(pid).contains("_dri.so"),
        "the app's process loaded a GL driver"
    );

    // A dead letter with nowhere to notify: a warning, and the app goes on.
    let body = r#"{"id":"evt_quit","type":"charge.succeeded","created":1700000000}"#;
    let status = post_stripe(&receiver, body, &stripe_signature(SECRET, body));
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    wait_for(Duration::from_secs(20), "the warning", || {
        std::fs::read_to_string(&log).is_ok_and(|l| l.contains("no desktop notifications"))
    });
    assert!(app.try_wait().unwrap().is_none(), "the app still runs");

    // Quit is the last item of the window's menu (Up from the top wraps to it).
    xdotool(&display, &["mousemove", "450", "400"]);
    open_menu(&display);
    xdotool(&display, &["key", "Up", "Return"]);
    let status = exit_status(&mut app, Duration::from_secs(20), "Quit");
    assert!(status.success(), "exit status {status}");
    assert!(
        !dir.path().join("hooklab.db.control.json").exists(),
        "the discovery file is removed on exit"
    );
    assert!(children(pid).is_empty(), "no child process left");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(!logged.contains("panicked"), "{logged}");
    let store = hooklab_core::store::sqlite::SqliteStore::open_read_only(&db).unwrap();
    let listed = store.list(&Default::default()).unwrap();
    assert_eq!(listed.len(), 1, "the delivery is committed");
}
