//! Sources: listing them (never their secrets), adding, changing and removing the ones added in
//! the UI, the provider catalogue for the picker, and signed test events sent through the
//! receiver.

use super::*;

/// A source as the UI shows it: never its secrets, only how many there are.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct SourceView {
    name: String,
    provider: String,
    /// How many secrets are configured (the secrets themselves are write-only).
    secrets: usize,
    /// The signature tolerance in seconds (`null`: the provider's default).
    tolerance: Option<u64>,
    /// The status and delay of the receiver's answer.
    response_status: u16,
    response_delay_ms: u64,
    /// Where the gateway sends (the receiver's local URL; the UI shows the tunnel's when up).
    path: String,
    forward_to: Option<String>,
    /// Added in the UI, so the UI may change or remove it (the others come from the
    /// configuration file or `--source` flags).
    editable: bool,
}

pub(super) async fn list_sources(data: &DataState) -> Answer {
    let managed = match &data.sources_file {
        Some(file) => file.managed.lock().await.clone(),
        None => Vec::new(),
    };
    let views: Vec<SourceView> = data
        .source_configs()
        .into_iter()
        .map(|s| SourceView {
            editable: managed.contains(&s.name),
            secrets: s.secrets.len(),
            tolerance: s.tolerance,
            response_status: s.response.status,
            response_delay_ms: s.response.delay_ms,
            path: format!("/{}", s.name),
            provider: s.provider.as_str().to_string(),
            forward_to: s.forward_to,
            name: s.name,
        })
        .collect();
    ok(&views)
}

/// A source to add, or the new settings of one (`PUT`: `secrets` absent keeps the current
/// ones; present replaces them).
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SourceInput {
    /// Letters, digits, `-` and `_`: the first path segment the gateway posts to.
    name: Option<String>,
    provider: String,
    /// Write-only: never returned.
    secrets: Option<Vec<String>>,
    /// Seconds; `null`: the provider's default.
    tolerance: Option<u64>,
    /// The status the receiver answers (default 200).
    response_status: Option<u16>,
    /// A delay before answering, to provoke a gateway's timeout and retry (default 0).
    response_delay_ms: Option<u64>,
    /// Your app's URL (`http://…`): trusted deliveries are forwarded there, with retries and
    /// the DLQ. Absent or empty: not forwarded (the configuration's global target, if any,
    /// still applies).
    forward_to: Option<String>,
}

/// One provider's test-event templates, as `hooklab trigger --list` shows them.
#[derive(Serialize, schemars::JsonSchema)]
pub(crate) struct TemplateSet {
    provider: String,
    /// The event types it can make; the first is the default.
    event_types: Vec<String>,
}

/// Every provider's test-event templates (for the UI's trigger form).
pub(super) async fn list_templates() -> Answer {
    let sets: Vec<TemplateSet> = hooklab_core::templates::catalogue()
        .into_iter()
        .map(|(provider, types)| TemplateSet {
            provider: provider.as_str().to_string(),
            event_types: types.into_iter().map(str::to_string).collect(),
        })
        .collect();
    ok(&sets)
}

/// Every provider, with what it signs and how (for the provider picker).
pub(super) async fn list_providers() -> Answer {
    ok(&hooklab_core::provider::catalog())
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Adds (`name: None`) or changes a UI-managed source, then applies every source to the
/// receiver and saves the managed ones. Nothing changes when the settings are refused.
pub(super) async fn change_source(data: &DataState, req: Request, editing: Option<&str>) -> Answer {
    let (Some(file), Some(receiver)) = (&data.sources_file, &data.receiver) else {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "read_only",
            "this Hooklab keeps no sources file, so sources cannot be changed from the UI",
        ));
    };
    let input: SourceInput = read_json(req, "not a source").await?;
    let provider: hooklab_core::provider::ProviderId = input.provider.parse().map_err(|_| {
        Problem::bad(format!(
            "unknown provider `{}` (see /api/providers)",
            input.provider
        ))
    })?;
    let mut managed = file.managed.lock().await;
    let mut all = receiver.source_configs();
    let name = match (editing, &input.name) {
        (Some(name), _) => {
            if !managed.iter().any(|m| m == name) {
                return Err(if all.iter().any(|s| s.name == name) {
                    Problem::new(
                        StatusCode::CONFLICT,
                        "read_only",
                        format!(
                            "`{name}` comes from the configuration file or --source: change it there"
                        ),
                    )
                } else {
                    Problem::not_found("source")
                });
            }
            name.to_string()
        }
        (None, Some(name)) => {
            if !valid_name(name) {
                return Err(Problem::bad(
                    "a source's name is 1 to 64 letters, digits, `-` or `_` (it is the URL's first segment)",
                ));
            }
            if all.iter().any(|s| &s.name == name) {
                return Err(Problem::new(
                    StatusCode::CONFLICT,
                    "exists",
                    format!("a source named `{name}` exists"),
                ));
            }
            name.clone()
        }
        (None, None) => return Err(Problem::bad("a new source needs a `name`")),
    };
    let previous = all.iter().position(|s| s.name == name);
    let secrets = match (&input.secrets, previous) {
        (Some(secrets), _) => secrets
            .iter()
            .filter(|s| !s.is_empty())
            .map(hooklab_core::secret::Secret::new)
            .collect(),
        (None, Some(i)) => all[i].secrets.clone(),
        (None, None) => Vec::new(),
    };
    let mut source = match previous {
        Some(i) => all[i].clone(),
        None => SourceConfig::new(name.clone(), provider, Vec::new()),
    };
    source.provider = provider;
    source.secrets = secrets;
    source.tolerance = input.tolerance;
    source.response.status = input.response_status.unwrap_or(200);
    source.response.delay_ms = input.response_delay_ms.unwrap_or(0);
    if !(100..=599).contains(&source.response.status) {
        return Err(Problem::bad(
            "the response status must be between 100 and 599",
        ));
    }
    if source.response.delay_ms > crate::config::MAX_DELAY_MS {
        return Err(Problem::bad(format!(
            "the response delay is at most {} ms",
            crate::config::MAX_DELAY_MS
        )));
    }
    source.forward_to = match input.forward_to.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(url) => {
            crate::config::check_forward_url(url).map_err(Problem::bad)?;
            Some(url.to_string())
        }
    };
    if source.forward_to.is_some() && data.forwarding.is_none() {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "no_worker",
            "this instance runs no outbox worker, so it cannot forward",
        ));
    }
    let changed = source.clone();
    match previous {
        Some(i) => all[i] = source,
        None => all.push(source),
    }
    // The worker's route first: a delivery the receiver enqueues under the new settings
    // finds its route ready.
    if let Some(forwarding) = &data.forwarding {
        forwarding.apply(&changed).map_err(Problem::bad)?;
    }
    receiver
        .set_sources(&all)
        .map_err(|e| Problem::bad(e.to_string()))?;
    if editing.is_none() {
        managed.push(name.clone());
    }
    save_managed(file, &all, &managed)?;
    ok(&serde_json::json!({ "saved": name }))
}

pub(super) async fn delete_source(data: &DataState, name: &str) -> Answer {
    let (Some(file), Some(receiver)) = (&data.sources_file, &data.receiver) else {
        return Err(Problem::new(
            StatusCode::CONFLICT,
            "read_only",
            "sources cannot be changed from the UI here",
        ));
    };
    let mut managed = file.managed.lock().await;
    if !managed.iter().any(|m| m == name) {
        return Err(Problem::not_found("source added in the UI"));
    }
    let all: Vec<SourceConfig> = receiver
        .source_configs()
        .into_iter()
        .filter(|s| s.name != name)
        .collect();
    receiver
        .set_sources(&all)
        .map_err(|e| Problem::bad(e.to_string()))?;
    if let Some(forwarding) = &data.forwarding {
        forwarding.remove(name);
    }
    managed.retain(|m| m != name);
    save_managed(file, &all, &managed)?;
    ok(&serde_json::json!({ "deleted": name }))
}

fn save_managed(
    file: &SourcesFile,
    all: &[SourceConfig],
    managed: &[String],
) -> Result<(), Problem> {
    let keep: Vec<SourceConfig> = all
        .iter()
        .filter(|s| managed.contains(&s.name))
        .cloned()
        .collect();
    crate::config::sources_file::save(&file.path, &keep).map_err(|e| {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "storage",
            format!(
                "the change is live but could not be saved to {} ({e}); it will be lost on restart",
                file.path.display()
            ),
        )
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TestEventRequest {
    source: String,
    /// The event type, as `hooklab trigger --list` names it (default: the provider's first).
    #[serde(default)]
    event_type: Option<String>,
    /// Fields to set in the body before it is signed (e.g. `data.object.id` = `pi_X`).
    #[serde(default)]
    overrides: Vec<hooklab_core::templates::Override>,
}

/// Signs a test event of the source's provider with its first secret and sends it through
/// the receiver, so it is recorded, verified, deduplicated and processed like any delivery.
pub(super) async fn test_event(data: &DataState, req: Request) -> Answer {
    let wanted: TestEventRequest = read_json(
        req,
        "expected {\"source\": NAME, \"event_type\"?: TYPE, \"overrides\"?: [{\"path\", \"value\"}]}",
    )
    .await?;
    let source = data
        .source_configs()
        .into_iter()
        .find(|s| s.name == wanted.source)
        .ok_or_else(|| Problem::not_found("source"))?;
    let receiver = data.receiver_addr.ok_or_else(|| {
        Problem::new(
            StatusCode::CONFLICT,
            "no_receiver",
            "no receiver is running",
        )
    })?;
    let now = UnixMillis::now();
    let salt = format!("{}:{}", source.name, now.0);
    let event = hooklab_core::templates::generate(
        source.provider,
        wanted.event_type.as_deref(),
        &wanted.overrides,
        now,
        &salt,
    )
    .map_err(|e| Problem::new(StatusCode::UNPROCESSABLE_ENTITY, e.code(), e.to_string()))?;
    let path = format!("/{}", source.name);
    let endpoint = format!("http://{receiver}{path}");
    let request = event
        .request(&source.options, source.secrets.first(), &endpoint, now)
        .map_err(|e| {
            Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "cannot_sign",
                format!("cannot sign a {} test event: {e}", source.provider),
            )
        })?;
    let target = request
        .url
        .strip_prefix(&format!("http://{receiver}"))
        .unwrap_or(&path)
        .to_string();
    let status = send_to_receiver(receiver, &target, &request.headers, &request.body)
        .await
        .map_err(|e| {
            Problem::new(
                StatusCode::BAD_GATEWAY,
                "receiver_unreachable",
                format!("the test event could not be sent to the receiver: {e}"),
            )
        })?;
    ok(&crate::control::openapi::TestEventSent {
        source: source.name.clone(),
        event_id: event.event_id,
        event_type: event.event_type,
        template: event.template.to_string(),
        object_id: event.object_id,
        signed: request.signed,
        status,
    })
}

/// POSTs one request to the receiver over loopback; the status it answered.
async fn send_to_receiver(
    receiver: std::net::SocketAddr,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<u16> {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let mut head =
        format!("POST {path} HTTP/1.1\r\nHost: {receiver}\r\nUser-Agent: Hooklab-Test-Event\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    ));
    let mut stream = tokio::time::timeout(
        Duration::from_secs(5),
        tokio::net::TcpStream::connect(receiver),
    )
    .await
    .map_err(|_| std::io::Error::other("connecting timed out"))??;
    stream.write_all(head.as_bytes()).await?;
    stream.write_all(body).await?;
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut answer))
        .await
        .map_err(|_| std::io::Error::other("the receiver did not answer within 30 s"))??;
    let status = std::str::from_utf8(&answer)
        .ok()
        .and_then(|text| text.split_whitespace().nth(1))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| std::io::Error::other("the receiver's answer is not HTTP"))?;
    Ok(status)
}
