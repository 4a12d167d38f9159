//! Native notifications: which bus events raise one (a new dead letter, an invalid signature,
//! each behind its own setting), what it says (plain text, no secret: the source, the event's
//! type and id, why), and coalescing, so a flood of 1,000 invalid requests makes two
//! notifications, not 1,000: the first at once, then at most one per [`WINDOW`] per kind that
//! says how many more came ("999 more invalid signatures").

#[cfg(target_os = "linux")]
pub(crate) mod dbus;

use crate::prefs::{NotifyPrefs, SharedPrefs};
use hooklab_core::verdict::Status;
use hooklab_server::events::Event;
use std::time::Duration;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio::time::Instant;

/// After a notification of a kind, others of that kind wait this long and are summed up.
pub(crate) const WINDOW: Duration = Duration::from_secs(10);

/// The kinds of notification, each coalesced on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    DeadLetter,
    InvalidSignature,
}

impl Kind {
    const ALL: [Kind; 2] = [Kind::DeadLetter, Kind::InvalidSignature];

    fn index(self) -> usize {
        self as usize
    }

    fn plural(self, n: u64) -> String {
        match (self, n) {
            (Kind::DeadLetter, 1) => "1 more dead letter".into(),
            (Kind::DeadLetter, n) => format!("{n} more dead letters"),
            (Kind::InvalidSignature, 1) => "1 more invalid signature".into(),
            (Kind::InvalidSignature, n) => format!("{n} more invalid signatures"),
        }
    }
}

/// One notification: a title and a line of plain text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Note {
    pub(crate) kind: Kind,
    pub(crate) summary: String,
    pub(crate) body: String,
}

/// The notification an event asks for, if its kind is switched on.
pub(crate) fn decide(event: &Event, prefs: NotifyPrefs) -> Option<Note> {
    match event {
        Event::DeadLetter(dead) if prefs.dead_letter => Some(Note {
            kind: Kind::DeadLetter,
            summary: format!("Dead letter from {}", dead.source),
            body: clip(&format!(
                "{} {}: {}",
                dead.event_type.as_deref().unwrap_or("event"),
                dead.event_id.as_deref().unwrap_or("(no id)"),
                redact_userinfo(&dead.reason)
            )),
        }),
        Event::Delivery(delivery)
            if prefs.invalid_signature && delivery.delivery.verdict == Status::Invalid =>
        {
            let d = &delivery.delivery;
            Some(Note {
                kind: Kind::InvalidSignature,
                summary: format!("Invalid signature on {}", d.source),
                body: clip(&format!(
                    "{} {} {}: {}",
                    d.method,
                    d.path,
                    d.event_id.as_deref().unwrap_or("(no event id)"),
                    d.reason.as_deref().unwrap_or(&delivery.verdict_summary)
                )),
            })
        }
        _ => None,
    }
}

/// At most this many characters of text in a notification.
const MAX_BODY: usize = 200;

fn clip(s: &str) -> String {
    let one_line: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match one_line.char_indices().nth(MAX_BODY) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    }
}

/// `scheme://user:password@host` → `scheme://***@host` in free text (a forward target's error
/// may quote its URL).
fn redact_userinfo(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(at) = rest.find("://") {
        let (head, tail) = rest.split_at(at + 3);
        out.push_str(head);
        let authority_end = tail
            .find(|c: char| c == '/' || c == '?' || c == '#' || c.is_whitespace())
            .unwrap_or(tail.len());
        match tail[..authority_end].rfind('@') {
            Some(userinfo_end) => {
                out.push_str("***");
                rest = &tail[userinfo_end..];
            }
            None => rest = tail,
        }
    }
    out.push_str(rest);
    out
}

/// Per kind: quiet until when, and what came meanwhile.
#[derive(Debug, Default, Clone)]
struct Quiet {
    until: Option<Instant>,
    pending: u64,
    latest: Option<Note>,
}

/// Coalesces notes: the first of a kind passes at once; the next ones within [`WINDOW`] are
/// counted and come out as one summary when the window ends (which opens another window).
#[derive(Debug)]
pub(crate) struct Coalescer {
    window: Duration,
    kinds: [Quiet; 2],
}

impl Coalescer {
    pub(crate) fn new(window: Duration) -> Self {
        Self {
            window,
            kinds: Default::default(),
        }
    }

    /// A new note at `now`: `Some` when it is to be shown now.
    pub(crate) fn push(&mut self, note: Note, now: Instant) -> Option<Note> {
        let quiet = &mut self.kinds[note.kind.index()];
        if quiet.until.is_some_and(|until| now < until) {
            quiet.pending += 1;
            quiet.latest = Some(note);
            None
        } else {
            quiet.until = Some(now + self.window);
            quiet.pending = 0;
            Some(note)
        }
    }

    /// When [`Coalescer::flush`] has something to say.
    pub(crate) fn next_flush(&self) -> Option<Instant> {
        self.kinds
            .iter()
            .filter(|q| q.pending > 0)
            .filter_map(|q| q.until)
            .min()
    }

    /// The summaries whose window ended by `now`.
    pub(crate) fn flush(&mut self, now: Instant) -> Vec<Note> {
        let mut out = Vec::new();
        for kind in Kind::ALL {
            let quiet = &mut self.kinds[kind.index()];
            if quiet.pending == 0 || quiet.until.is_some_and(|until| now < until) {
                continue;
            }
            let latest = quiet.latest.take();
            out.push(Note {
                kind,
                summary: kind.plural(quiet.pending),
                body: latest
                    .map(|n| format!("Latest: {}: {}", n.summary, n.body))
                    .unwrap_or_default(),
            });
            quiet.pending = 0;
            quiet.until = Some(now + self.window);
        }
        out
    }
}

/// Reads the events bus and hands the notifications to `show`, coalesced, until the bus closes.
pub(crate) async fn run(
    mut events: broadcast::Receiver<Event>,
    prefs: SharedPrefs,
    window: Duration,
    show: impl Fn(Note),
) {
    let mut coalescer = Coalescer::new(window);
    loop {
        let flush_at = coalescer.next_flush();
        tokio::select! {
            received = events.recv() => match received {
                Ok(event) => {
                    if let Some(note) = decide(&event, prefs.get().notify) {
                        if let Some(now) = coalescer.push(note, Instant::now()) {
                            show(now);
                        }
                    }
                }
                // A flood outran this subscriber: what it missed is not worth a notification
                // each, and the next events still come.
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!("notifications: {missed} bus events missed");
                }
                Err(RecvError::Closed) => break,
            },
            () = tokio::time::sleep_until(flush_at.unwrap_or_else(Instant::now)), if flush_at.is_some() => {
                for note in coalescer.flush(Instant::now()) {
                    show(note);
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
