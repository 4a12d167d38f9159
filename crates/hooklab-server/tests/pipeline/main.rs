//! The pipeline over real sockets and real SQLite files: the forward handler against a real
//! HTTP app, the worker's retries and dead-letter queue under paused time, and the receiver
//! enqueueing and forwarding end to end. One module per capability.

mod support;

mod end_to_end;
mod forward;
mod retries;
