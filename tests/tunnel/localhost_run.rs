//! `--tunnel localhost.run` against a fake localhost.run: an sshd whose `ForceCommand` prints
//! the real service's banner and its `… tunneled with tls termination, https://….lhr.life`.

use crate::sshd::Sshd;
use crate::support::Listen;

const BANNER: &str = r#"echo "==============================================================================="
echo "Welcome to localhost.run!"
echo ""
echo "Follow your favourite reverse tunnel at [https://twitter.com/localhost_run]."
echo ""
echo "To set up and manage custom domains go to https://admin.localhost.run/"
echo ""
echo "** your connection id is 4f1c2b9e-6a0d-4f3e-9c41-0d9b1e7a2c55, please mention it if you send me a message about an issue. **"
echo ""
echo "3b1e4f2a9c7d21.lhr.life tunneled with tls termination, https://3b1e4f2a9c7d21.lhr.life"
exec cat
"#;

#[test]
fn the_localhost_run_url_is_read_from_its_session_output() {
    let sshd = Sshd::start(Some(BANNER));
    let mut args = vec!["--tunnel".to_string()];
    args.extend(sshd.flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut listen = Listen::start(&args);
    let up = listen.tunnel("up");
    assert_eq!(up["provider"], "localhost.run", "the default provider");
    assert_eq!(
        up["url"],
        "https://3b1e4f2a9c7d21.lhr.life",
        "the tunneled URL, not the banner's; sshd log: {}",
        sshd.log()
    );
    let status: serde_json::Value =
        serde_json::from_slice(&listen.cli(&["tunnel", "status", "--json"])).unwrap();
    assert_eq!(status["plain_http"], false, "localhost.run terminates TLS");
    assert!(listen.terminate().success());
}
