//! `--tunnel ssh` through a real OpenSSH server on 127.0.0.1 (`ssh -R`): signed events at the
//! public side are recorded byte-exact and valid, Twilio's URL signature verifies against the
//! tunnel's public URL, and a server that goes away and comes back takes the tunnel down and
//! up again, with the new URL announced.

use crate::common::BIN;
use crate::sshd::Sshd;
use crate::support::{
    Listen, all_gone, assert_recorded_valid, authority, descendants, post_stripe, request,
};
use serde_json::Value;
use std::process::Command;

const STRIPE: &str = "whsec_ssh_tunnel_test";
const TWILIO: &str = "twilio_auth_token_ssh_test";

fn listen_through(sshd: &Sshd) -> Listen {
    let mut args = vec![
        "--source".to_string(),
        format!("stripe=stripe:{STRIPE}"),
        "--source".into(),
        format!("tw=twilio:{TWILIO}"),
        "--tunnel".into(),
        "ssh".into(),
    ];
    args.extend(sshd.flags());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Listen::start(&args)
}

/// The `X-Twilio-Signature` header `hooklab sign` makes for a form body sent to `url`.
fn twilio_signature(url: &str, body: &str) -> String {
    let out = Command::new(BIN)
        .args([
            "sign",
            "--provider",
            "twilio",
            "--secret",
            TWILIO,
            "--url",
            url,
        ])
        .args([
            "--content-type",
            "application/x-www-form-urlencoded",
            "--body",
            body,
        ])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn signed_events_through_ssh_are_recorded_and_twilio_verifies_against_the_public_url() {
    let sshd = Sshd::start(None);
    let listen = listen_through(&sshd);
    let up = listen.tunnel("up");
    let url = up["url"].as_str().expect("tunnel.url").to_string();
    let public = authority(&url).to_string();
    assert!(public.starts_with("127.0.0.1:"), "{url}");
    assert_ne!(
        public,
        format!("127.0.0.1:{}", listen.port),
        "the port sshd allocated"
    );

    let body = "{\"id\":\"evt_ssh_1\",\"type\":\"charge.succeeded\",\"created\":1700000000,\r\n  \"data\":{\"object\":{\"id\":\"ch_1\",\"note\":\"tabs\\tand ✓\"}}}\n";
    assert_eq!(post_stripe(&public, "/stripe", STRIPE, body), 200);
    let line = listen.delivery();
    assert_eq!(line["verdict"], "valid", "{line}");
    assert_recorded_valid(&listen, line["id"].as_i64().unwrap(), body.as_bytes());

    // Twilio signs the URL it calls: the tunnel's public URL. The Host header here names a
    // front end that is neither, so only the tunnel's URL can make the signature verify.
    let form = "Body=hello+there&From=%2B15551234567&MessageSid=SM123";
    let signed_url = format!("{url}/tw/sms?kind=inbound");
    let signature = twilio_signature(&signed_url, form);
    assert!(signature.starts_with("X-Twilio-Signature: "), "{signature}");
    let head = format!(
        "POST /tw/sms?kind=inbound HTTP/1.1\r\nHost: edge.tunnel.invalid\r\n\
         Content-Type: application/x-www-form-urlencoded\r\n{signature}"
    );
    let (status, text) = request(&public, &head, form.as_bytes());
    assert_eq!(status, 200, "{text}");
    let line = listen.delivery();
    assert_eq!(
        line["verdict"], "valid",
        "Twilio's signature verifies against {signed_url}: {line}"
    );
    assert_recorded_valid(&listen, line["id"].as_i64().unwrap(), form.as_bytes());
}

#[test]
fn a_server_that_goes_away_takes_the_tunnel_down_and_up_again_with_the_new_url_announced() {
    let mut sshd = Sshd::start(None);
    let mut listen = listen_through(&sshd);
    let first = listen.tunnel("up")["url"].as_str().unwrap().to_string();

    sshd.stop();
    let down = listen.tunnel("down");
    assert_eq!(down["provider"], "ssh");
    assert!(
        !down["reason"].as_str().unwrap_or("").is_empty(),
        "down says why: {down}"
    );
    let reconnecting = listen.tunnel("reconnecting");
    assert!(
        reconnecting["delay_ms"].as_u64().unwrap() > 0,
        "{reconnecting}"
    );
    let status: Value =
        serde_json::from_slice(&listen.cli(&["tunnel", "status", "--json"])).unwrap();
    assert_ne!(status["status"], "up", "{status}");
    assert_eq!(status["public_url"], first.as_str(), "the last URL is kept");

    sshd.restart();
    let up = listen.tunnel("up");
    let second = up["url"].as_str().unwrap().to_string();
    if second != first {
        // sshd allocates a fresh port: the new URL is announced loudly.
        assert_eq!(up["previous_url"], first.as_str(), "{up}");
        assert!(
            up["warning"].as_str().unwrap_or("").contains("gateway"),
            "the change tells the user to update the gateway: {up}"
        );
    }
    let body = r#"{"id":"evt_after_reconnect","type":"charge.succeeded","created":1700000001}"#;
    assert_eq!(
        post_stripe(authority(&second), "/stripe", STRIPE, body),
        200
    );
    let line = listen.delivery();
    assert_eq!(line["verdict"], "valid", "{line}");

    let tunnel_processes = descendants(listen.child.id());
    assert!(
        !tunnel_processes.is_empty(),
        "ssh runs as a child of listen"
    );
    assert!(listen.terminate().success());
    all_gone(&tunnel_processes, "ssh does not outlive hooklab listen");
}
