//! The baseline: an axum server that reads the whole body and answers 200, storing nothing.
//! Same HTTP stack (axum 0.8, hyper, tokio multi-thread runtime) as `hooklab listen`.

use axum::Router;
use axum::body::Bytes;
use axum::http::StatusCode;

/// Binds `host:port`, prints `{"ready":{"receiver":"http://ADDR"}}` (the same line as
/// `hooklab listen --json`), then serves until killed.
pub(crate) fn serve(host: &str, port: u16) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind((host, port)).await?;
        let addr = listener.local_addr()?;
        println!("{{\"ready\":{{\"receiver\":\"http://{addr}\"}}}}");
        let app = Router::new().fallback(accept);
        axum::serve(listener, app).await?;
        Ok(())
    })
}

/// Takes the body (so the bytes are read, as a recorder must) and acknowledges.
async fn accept(body: Bytes) -> StatusCode {
    std::hint::black_box(body.len());
    StatusCode::OK
}
