//! Standard Webhooks verification: Hooklab's verifier against the `svix` crate's, on identical
//! inputs (same secret, message id, timestamp, body and signature header).
//!
//! Rows:
//! * `hooklab_core::verify::verify`: what a caller of the library does; it builds the
//!   provider's scheme on every call.
//! * `hooklab_core::verify::verify_with`: the scheme built once, as the receiver does.
//! * `svix::webhooks::Webhook::verify`: the reference (key decoded once in `Webhook::new`).
//! * raw HMAC-SHA256 (`hmac` + `sha2`) over the same signed content: the floor.
//!
//! Each is run for several rounds; the median round is reported.

use anyhow::{Context, ensure};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hmac::{Hmac, Mac};
use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, ProviderId, ProviderOptions};
use hooklab_core::request::RawRequest;
use hooklab_core::secret::Secret;
use hooklab_core::verify::{VerifyConfig, verify, verify_with};
use sha2::Sha256;
use std::hint::black_box;
use std::time::Instant;

const ROUNDS: usize = 7;

pub(crate) struct Row {
    pub(crate) name: &'static str,
    pub(crate) ns_per_op: f64,
}

pub(crate) fn run(iters: u32, body_size: usize) -> anyhow::Result<Vec<Row>> {
    let key: Vec<u8> = (0u8..32)
        .map(|i| i.wrapping_mul(37).wrapping_add(11))
        .collect();
    let secret = format!("whsec_{}", STANDARD.encode(&key));
    let msg_id = "msg_2KWPBgLlAfxdpx2AI54pPJ85f4W";
    let ts = crate::events::unix_now();
    let body =
        crate::events::StripeEvents::new("unused", body_size, crate::events::DEFAULT_EVENT_TYPE)
            .body(1, ts);

    let mut mac = Hmac::<Sha256>::new_from_slice(&key)?;
    mac.update(format!("{msg_id}.{ts}.").as_bytes());
    mac.update(&body);
    let signature = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));

    // Hooklab's inputs.
    let request = RawRequest::post(
        "/hooks",
        [
            ("webhook-id", msg_id.as_bytes().to_vec()),
            ("webhook-timestamp", ts.to_string().into_bytes()),
            ("webhook-signature", signature.clone().into_bytes()),
        ],
        body.clone(),
    );
    let config = VerifyConfig::new(ProviderId::StandardWebhooks, vec![Secret::new(&secret)]);
    let now = UnixMillis::from_secs(ts);
    let scheme = provider::scheme(ProviderId::StandardWebhooks, &ProviderOptions::default())
        .map_err(|e| anyhow::anyhow!("{e}"))?;

    // svix's inputs.
    let svix_hook = svix::webhooks::Webhook::new(&secret).context("svix rejects the secret")?;
    let mut headers = http::HeaderMap::new();
    headers.insert("webhook-id", msg_id.parse()?);
    headers.insert("webhook-timestamp", ts.to_string().parse()?);
    headers.insert("webhook-signature", signature.parse()?);

    // Both must accept the input, and reject a tampered one, or the timings mean nothing.
    let verdict = verify(&config, &request, now);
    ensure!(
        verdict.is_valid(),
        "hooklab rejects the benchmark input: {verdict:?}"
    );
    svix_hook
        .verify(&body, &headers)
        .map_err(|e| anyhow::anyhow!("svix rejects the benchmark input: {e:?}"))?;
    let mut tampered = request.clone();
    tampered.body[20] ^= 1;
    ensure!(
        !verify(&config, &tampered, now).is_valid(),
        "hooklab accepts a tampered body"
    );
    ensure!(
        svix_hook.verify(&tampered.body, &headers).is_err(),
        "svix accepts a tampered body"
    );

    let raw_key = Hmac::<Sha256>::new_from_slice(&key)?;
    let prefix = format!("{msg_id}.{ts}.");
    Ok(vec![
        Row {
            name: "hooklab `verify` (scheme built per call)",
            ns_per_op: time(iters, || {
                verify(black_box(&config), black_box(&request), now).is_valid()
            }),
        },
        Row {
            name: "hooklab `verify_with` (scheme built once)",
            ns_per_op: time(iters, || {
                verify_with(
                    scheme.as_ref(),
                    black_box(&config),
                    black_box(&request),
                    now,
                )
                .is_valid()
            }),
        },
        Row {
            name: "svix 2.9.1 `Webhook::verify`",
            ns_per_op: time(iters, || {
                svix_hook
                    .verify(black_box(&body), black_box(&headers))
                    .is_ok()
            }),
        },
        Row {
            name: "raw HMAC-SHA256 + base64 (floor)",
            ns_per_op: time(iters, || {
                let mut m = raw_key.clone();
                m.update(prefix.as_bytes());
                m.update(black_box(&body));
                STANDARD.encode(m.finalize().into_bytes()).len() == 44
            }),
        },
    ])
}

/// Median over [`ROUNDS`] rounds of `iters` calls, in ns per call. Every call must succeed.
fn time(iters: u32, mut f: impl FnMut() -> bool) -> f64 {
    // Warm caches and the branch predictor.
    for _ in 0..iters / 10 {
        assert!(black_box(f()));
    }
    let mut rounds: Vec<f64> = (0..ROUNDS)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..iters {
                assert!(black_box(f()), "a verification failed mid-benchmark");
            }
            start.elapsed().as_nanos() as f64 / f64::from(iters)
        })
        .collect();
    rounds.sort_by(f64::total_cmp);
    rounds[ROUNDS / 2]
}

pub(crate) fn print_table(rows: &[Row]) {
    let svix = rows
        .iter()
        .find(|r| r.name.starts_with("svix"))
        .map_or(f64::NAN, |r| r.ns_per_op);
    println!("## Standard Webhooks verification (valid signature, same inputs)\n");
    println!("| Verifier | ns/op | relative to svix |");
    println!("|---|---:|---:|");
    for r in rows {
        println!(
            "| {} | {:.0} | {:.2}× |",
            r.name,
            r.ns_per_op,
            r.ns_per_op / svix
        );
    }
    println!();
}
