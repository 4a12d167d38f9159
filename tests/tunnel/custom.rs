//! `--tunnel custom` with a fake tunnel executable: `hooklab listen` announces its URL and,
//! on SIGTERM, leaves none of its processes (nor their background helpers) running.

use crate::support::{Listen, alive, all_gone, descendants};

#[test]
fn sigterm_leaves_no_tunnel_process_behind() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let command = format!(
        "sleep 1000 & echo $$ $! >> {pids}; echo 'tunnel ready: https://fake.example.dev/p{{port}}'; wait",
        pids = pids.display()
    );
    let mut listen = Listen::start(&["--tunnel", "custom", "--tunnel-command", &command]);
    let up = listen.tunnel("up");
    assert_eq!(
        up["url"],
        format!("https://fake.example.dev/p{}", listen.port),
        "{{port}} is the receiver's port and the URL is found in the output"
    );
    let started: Vec<u32> = std::fs::read_to_string(&pids)
        .unwrap()
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(started.len(), 2, "the command and its background helper");
    assert!(started.iter().all(|&p| alive(p)));
    let mut all = descendants(listen.child.id());
    all.extend(&started);
    assert!(!all.is_empty());

    let status = listen.terminate();
    assert!(status.success(), "{status:?}");
    all_gone(
        &all,
        "after SIGTERM, no process of the tunnel survives hooklab",
    );
}
