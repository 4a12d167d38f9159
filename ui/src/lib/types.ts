// The control API's JSON shapes (crates/hooklab-server/src/control/api.rs and the store types in
// crates/hooklab-core/src/store/mod.rs). Times are Unix milliseconds.
// TODO(desktop issue): generate these from the Rust types (ts-rs) instead of mirroring them.

export type Verdict = "valid" | "invalid" | "unsigned";
export type KeyStatus = "processing" | "completed" | "failed";

export interface DeliverySummary {
  id: number;
  received_at: number;
  source: string;
  provider: string | null;
  method: string;
  path: string;
  query: string | null;
  verdict: Verdict;
  reason: string | null;
  event_id: string | null;
  event_type: string | null;
  response_status: number;
  body_size: number;
  idempotency_key: string | null;
  duplicate_of: number | null;
}

export interface Page<T> {
  items: T[];
  next_before: number | null;
}

export interface Diagnosis {
  finding: { kind: string; [field: string]: unknown } | null;
  message: string;
}

export interface VerdictDetail {
  verdict: Verdict;
  reason: string | null;
  matched_secret: number | null;
  signed_at: number | null;
  summary: string;
  diagnosis: Diagnosis | null;
}

export interface HeaderView {
  name: string;
  value: string;
  value_base64?: string;
}

export interface Attempt {
  job: number;
  delivery: number;
  attempt: number;
  started_at: number;
  duration_ms: number;
  target: string | null;
  status: number | null;
  response_headers: unknown[];
  response_body: unknown;
  error: string | null;
}

export interface DeliveryDetail {
  id: number;
  received_at: number;
  source: string;
  provider: string | null;
  method: string;
  path: string;
  query: string | null;
  headers: HeaderView[];
  body_base64: string;
  body_text: string | null;
  body_size: number;
  body_refused: boolean;
  remote_addr: string | null;
  verdict: VerdictDetail;
  metadata: {
    event_id: string | null;
    event_type: string | null;
    object_id: string | null;
    provider_time: number | null;
    idempotency_key: string | null;
  };
  response_status: number;
  duplicate_of: number | null;
  attempts: Attempt[];
}

export interface KeyOutcome {
  first_delivery: number;
  duplicate: boolean;
  process: boolean;
  [field: string]: unknown;
}

export type BusEvent =
  | {
      kind: "delivery";
      delivery: DeliverySummary;
      verdict_summary: string;
      diagnosis: string | null;
      body_refused: boolean;
      remote_addr: string | null;
      key: KeyOutcome | null;
    }
  | { kind: "attempt" | "dead_letter" | "transition" | "key_status" | "tunnel"; [field: string]: unknown };

export interface StreamBatch {
  events: BusEvent[];
  missed: number;
}

export interface KeyRecord {
  scope: string;
  key: string;
  status: KeyStatus;
  first_delivery: number;
  deliveries: number;
  first_seen: number;
  last_seen: number;
}

export interface ObjectRecord {
  machine: string;
  object_id: string;
  state: string | null;
  state_time: number | null;
  flags: string[];
  data: string;
  updated_at: number;
}

export interface TimelineEntry {
  machine: string;
  object_id: string;
  from: string | null;
  to: string | null;
  delivery: number | null;
  provider_time: number | null;
  received_at: number | null;
  decision: string;
  reason: string;
  at: number;
}

export interface DeadLetter {
  job: number;
  delivery: number;
  source: string;
  event_id: string | null;
  event_type: string | null;
  scope: string | null;
  key: string | null;
  reason: string;
  attempts: number;
  dead_at: number;
}

export type TunnelStatus =
  | { status: "off" }
  | {
      provider: string;
      status: "starting" | "up" | "down" | "reconnecting" | "stopped";
      url?: string;
      reason?: string;
      attempt?: number;
      delay_ms?: number;
      public_url: string | null;
      plain_http: boolean;
      url_changes: number;
    };

export interface SourceView {
  name: string;
  provider: string;
  secrets: number;
  path: string;
  forward_to: string | null;
}

export interface TestEventSent {
  source: string;
  event_id: string;
  event_type: string;
  signed: boolean;
  status: number;
}
