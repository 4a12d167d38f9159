//! The events bus as Server-Sent Events, batched so a flood never floods the UI.

use super::*;

/// Counts one open stream while it lives.
struct StreamGuard(Arc<std::sync::atomic::AtomicUsize>);

impl StreamGuard {
    fn new(count: &Arc<std::sync::atomic::AtomicUsize>) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        Self(Arc::clone(count))
    }
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
    }
}

/// The events bus as Server-Sent Events, batched every [`BATCH_EVERY`].
pub(super) fn stream(data: &DataState) -> Answer {
    let (mut tx, body) = http_body_util::channel::Channel::<Bytes>::new(4);
    let mut events = data.events.subscribe();
    let guard = StreamGuard::new(&data.streams);
    tokio::spawn(async move {
        let _open = guard;
        // Tell the client at once that the stream is open.
        if tx
            .send_data(Bytes::from_static(b": open\n\n"))
            .await
            .is_err()
        {
            return;
        }
        let mut tick = tokio::time::interval(BATCH_EVERY);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut batch: Vec<Event> = Vec::new();
        let mut missed: u64 = 0;
        let mut idle_ticks = 0u32;
        loop {
            tokio::select! {
                received = events.recv() => match received {
                    Ok(event) if batch.len() < BATCH_MAX => batch.push(event),
                    Ok(_) => missed += 1,
                    Err(broadcast::error::RecvError::Lagged(n)) => missed += n,
                    Err(broadcast::error::RecvError::Closed) => break,
                },
                _ = tick.tick() => {
                    let message = if batch.is_empty() && missed == 0 {
                        idle_ticks += 1;
                        // A comment every ~15 s keeps proxies and the client's timer happy.
                        if idle_ticks < 300 {
                            continue;
                        }
                        Bytes::from_static(b": keep-alive\n\n")
                    } else {
                        sse_message(&std::mem::take(&mut batch), std::mem::take(&mut missed))
                    };
                    idle_ticks = 0;
                    if tx.send_data(message).await.is_err() {
                        break;
                    }
                }
            }
        }
    });
    let mut response = Response::new(Body::new(body));
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

/// `event: batch` with `{"events": […], "missed": N}` as its data (one line: JSON never
/// contains a raw newline).
pub(super) fn sse_message(batch: &[Event], missed: u64) -> Bytes {
    #[derive(Serialize)]
    struct Message<'a> {
        events: &'a [Event],
        missed: u64,
    }
    // The shape documented as `StreamBatch` in the OpenAPI description.
    let data = serde_json::to_string(&Message {
        events: batch,
        missed,
    })
    .unwrap_or_default();
    Bytes::from(format!("event: batch\ndata: {data}\n\n"))
}
