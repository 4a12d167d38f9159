//! bore, in-process: the `bore-cli` crate's client asks the server (bore.pub by default) for
//! a port and proxies each connection to the receiver. The public side is plain HTTP
//! (`http://SERVER:PORT`): bore forwards TCP and terminates no TLS.

use super::{AbortOnDrop, Session, Update, url_host};
use hooklab_core::secret::Secret;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Connects to `server` and forwards its allocated port to `127.0.0.1:local_port`.
pub(crate) fn open(server: &str, secret: Option<&Secret>, local_port: u16) -> Session {
    let (tx, updates) = mpsc::channel(4);
    let server = server.to_string();
    let secret = secret.cloned();
    let task =
        tokio::spawn(async move {
            let secret = secret.as_ref().map(Secret::expose);
            let client =
                match bore_cli::client::Client::new("127.0.0.1", local_port, &server, 0, secret)
                    .await
                {
                    Ok(client) => client,
                    Err(e) => {
                        let why = format!("cannot open a bore tunnel at {server}: {e:#}");
                        let _ = tx.send(Update::Ended(why)).await;
                        return;
                    }
                };
            let url = format!("http://{}:{}", url_host(&server), client.remote_port());
            let _ = tx.send(Update::Url(url)).await;
            let why = match client.listen().await {
                Ok(()) => format!("the bore server {server} closed the connection"),
                Err(e) => format!("the bore connection to {server} failed: {e:#}"),
            };
            let _ = tx.send(Update::Ended(why)).await;
        });
    Session {
        updates,
        recent: Arc::default(),
        group: None,
        _task: AbortOnDrop(task),
    }
}
