//! A production service running Hooklab's pipeline with its own business logic.
//!
//! The same core the desktop app and `hooklab listen` run: the receiver verifies every Stripe
//! delivery on its raw bytes, records it durably and claims its idempotency key in one
//! transaction, writes an outbox job, and answers 2xx only after the commit. The worker then
//! runs *this service's* [`Handler`] — here, "fulfil the order" — with retries and a
//! dead-letter queue, and the Stripe state machine follows each PaymentIntent.
//!
//! ```sh
//! STRIPE_WEBHOOK_SECRET=whsec_... cargo run --example production        # serve on :8788
//! cargo run --example production -- --demo    # send itself one signed event, then exit
//! ```

use hooklab_core::clock::UnixMillis;
use hooklab_core::provider::{self, ProviderId, SignInput};
use hooklab_core::retry::RetrySchedule;
use hooklab_core::secret::Secret;
use hooklab_core::store::sqlite::SqliteStore;
use hooklab_core::store::{AttemptRecord, BoxFuture, KeyFilter, KeyStatus, Store};
use hooklab_server::axum::{self, Router, routing::get};
use hooklab_server::clock::Clock;
use hooklab_server::config::{Config, SourceConfig};
use hooklab_server::pipeline::{
    Handler, HandlerContext, HandlerResult, Route, Worker, WorkerOptions,
};
use hooklab_server::receiver::{Receiver, TapConnection, TapListener};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The service's business logic: runs once per event (duplicates never reach it).
struct FulfilOrders {
    fulfilled: AtomicUsize,
}

impl Handler for FulfilOrders {
    fn handle<'a>(&'a self, ctx: &'a HandlerContext<'a>) -> BoxFuture<'a, HandlerResult> {
        Box::pin(async move {
            let event: serde_json::Value =
                serde_json::from_slice(&ctx.delivery.record.body).unwrap_or_default();
            if event["type"] == "payment_intent.succeeded" {
                // A real service would write its order table here, in its own transaction.
                self.fulfilled.fetch_add(1, Ordering::SeqCst);
                println!("fulfilled order for {}", event["data"]["object"]["id"]);
            }
            HandlerResult {
                record: AttemptRecord {
                    started_at: ctx.started_at,
                    duration_ms: 0,
                    target: Some("fulfil-orders".into()),
                    status: None,
                    response_headers: Vec::new(),
                    response_body: Vec::new(),
                    error: None,
                },
                success: true,
            }
        })
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let demo = std::env::args().any(|a| a == "--demo");
    let secret = std::env::var("STRIPE_WEBHOOK_SECRET").unwrap_or_else(|_| "whsec_demo".into());
    let dir = tempfile_dir()?;
    let stripe = SourceConfig::new("stripe", ProviderId::Stripe, vec![Secret::new(&secret)]);
    let config = Config {
        port: if demo { 0 } else { 8788 },
        sources: vec![stripe.clone()],
        ..Config::default()
    };

    let store: Arc<dyn Store> = Arc::new(SqliteStore::open(&dir.join("service.db"))?);
    let (events, _) = tokio::sync::broadcast::channel(1024);
    let clock = Clock::system();
    let handler = Arc::new(FulfilOrders {
        fulfilled: AtomicUsize::new(0),
    });
    let worker = Worker::new(
        Arc::clone(&store),
        clock.clone(),
        events.clone(),
        WorkerOptions::default(),
    )
    .route(
        "stripe",
        Route {
            handler: handler.clone(),
            schedule: RetrySchedule::preset("stripe")
                .unwrap_or_else(RetrySchedule::default_forward),
            source: stripe,
        },
    );
    let receiver = Receiver::new(&config, Arc::clone(&store), events, clock)?
        .with_worker_for_every_source()
        .with_job_waker(worker.waker());

    // The service's own routes sit beside the receiver; every other path is a webhook source.
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .merge(receiver.router());
    let listener = tokio::net::TcpListener::bind((config.host.as_str(), config.port)).await?;
    let addr = listener.local_addr()?;
    println!("webhooks: http://{addr}/stripe   health: http://{addr}/health");

    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let worker = tokio::spawn(worker.run(async move {
        let _ = stopped.await;
    }));
    let server = tokio::spawn(async move {
        axum::serve(
            TapListener::new(listener),
            app.into_make_service_with_connect_info::<TapConnection>(),
        )
        .await
    });

    if demo {
        // Send one signed event twice: the handler runs once, the second is a duplicate.
        let body = br#"{"id":"evt_demo","type":"payment_intent.succeeded","created":1700000000,"data":{"object":{"id":"pi_demo"}}}"#;
        let signed = provider::sign(
            ProviderId::Stripe,
            &Default::default(),
            &Secret::new(&secret),
            &SignInput::new(body, UnixMillis::now()),
        )?;
        for _ in 0..2 {
            let mut s = tokio::net::TcpStream::connect(addr).await?;
            let (name, value) = &signed.headers[0];
            let head = format!(
                "POST /stripe HTTP/1.1\r\nHost: {addr}\r\n{name}: {value}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            s.write_all(head.as_bytes()).await?;
            s.write_all(body).await?;
            let mut response = String::new();
            s.read_to_string(&mut response).await?;
            println!("answered: {}", response.lines().next().unwrap_or_default());
        }
        let mut keys = store.keys(KeyFilter::default()).await?;
        for _ in 0..100 {
            if keys
                .first()
                .is_some_and(|k| k.status == KeyStatus::Completed)
            {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            keys = store.keys(KeyFilter::default()).await?;
        }
        println!(
            "handler ran {} time(s); key {} seen {} time(s), status {}",
            handler.fulfilled.load(Ordering::SeqCst),
            keys[0].key,
            keys[0].deliveries,
            keys[0].status.as_str()
        );
    } else {
        tokio::signal::ctrl_c().await?;
    }
    server.abort();
    let _ = stop.send(());
    let _ = worker.await;
    Ok(())
}

/// A fresh folder for the example's database.
fn tempfile_dir() -> anyhow::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("hooklab-production-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}
