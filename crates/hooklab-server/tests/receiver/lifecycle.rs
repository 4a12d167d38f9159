//! Lifecycle: graceful shutdown finishes in-flight requests and stops accepting; a port in use
//! is reported with what to do.

use crate::support::{self, read_response, request};
use hooklab_server::error::ServerError;
use hooklab_server::runtime;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;

#[tokio::test]
async fn shutdown_finishes_an_in_flight_delayed_request() {
    let mut config = support::config();
    config.sources[1].response.delay_ms = 500;
    config.sources[1].response.body = "done".into();
    let mut server = support::start(config).await;
    let addr = server.addr;
    let mut stream = server.connect().await;
    stream
        .write_all(&request("POST", "/plain", &[], b"{}"))
        .await
        .unwrap();
    // Committed and announced: the handler is now in its configured delay.
    server.next_delivery().await;

    let running = server.running.take().unwrap();
    let shutdown = tokio::spawn(running.shutdown());
    let response = read_response(&mut stream, &mut Vec::new()).await.unwrap();
    assert_eq!((response.status, response.text().as_str()), (200, "done"));
    shutdown.await.unwrap().expect("a clean shutdown");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "no new connections after shutdown"
    );
}

#[tokio::test]
async fn run_until_serves_until_the_future_resolves() {
    let server = support::start(support::config()).await;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let mut server = server;
    let running = server.running.take().unwrap();
    let task = tokio::spawn(running.run_until(async {
        let _ = rx.await;
    }));
    assert_eq!(
        server
            .send(&request("POST", "/plain", &[], b""))
            .await
            .status,
        200
    );
    tx.send(()).unwrap();
    task.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_port_in_use_says_to_choose_another() {
    let server = support::start(support::config()).await;
    let mut config = support::config();
    config.port = server.addr.port();
    let store = Arc::clone(&server.sqlite);
    let err = runtime::start(config, store)
        .await
        .expect_err("the port is taken");
    assert!(matches!(err, ServerError::Bind { .. }), "{err:?}");
    assert!(err.to_string().contains("--port"), "{err}");
    server.shutdown().await;
}
