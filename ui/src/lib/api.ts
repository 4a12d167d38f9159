// The only way the UI talks to Hooklab: the loopback control API, with the bearer token of this
// start. The token arrives in the page's fragment (`#token=…`, never sent to a server), is kept
// for this tab only, and is removed from the address bar.
import type {
  DeadLetter,
  DeliveryDetail,
  DeliveryDiff,
  KeyRecord,
  ObjectRecord,
  Page,
  StreamBatch,
  Timeline,
  Resolved,
  Health,
  SourceView,
  SourceInput,
  UiSettings,
  ProviderInfo,
  TestEventSent,
  TemplateSet,
  InjectRequest,
  InjectAnswer,
  ReplayRequest,
  ReplayAnswer,
  SequenceRequest,
  SequenceAnswer,
  Imported,
  Scenario,
  ScenarioToml,
  TemplateOverride,
  TunnelStatus,
  TunnelRequest,
  TunnelStopped,
} from "./types";

const TOKEN_KEY = "hooklab.token";

export function takeToken(): string | null {
  const match = /(?:^#|&)token=([0-9a-fA-F]+)/.exec(location.hash);
  if (match) {
    sessionStorage.setItem(TOKEN_KEY, match[1]);
    // Keep the route (`#/events/12&token=…` → `#/events/12`), drop the token.
    const rest = location.hash.replace(match[0], "").replace(/^#?&/, "#");
    history.replaceState(null, "", location.pathname + location.search + (rest === "#" ? "" : rest));
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export class Api {
  constructor(private readonly token: string) {}

  private async call<T>(path: string, init: RequestInit = {}): Promise<T> {
    const response = await fetch(path, {
      ...init,
      headers: { ...(init.headers ?? {}), Authorization: `Bearer ${this.token}` },
    });
    const body: unknown = await response.json().catch(() => null);
    if (!response.ok) {
      const problem = (body ?? {}) as { code?: string; message?: string };
      throw new ApiError(
        response.status,
        problem.code ?? "error",
        problem.message ?? `the control API answered ${response.status}`,
      );
    }
    return body as T;
  }

  events(params: {
    before?: number | null;
    source?: string;
    verdict?: string;
    limit?: number;
    /** Full-text search on the server (body, headers, path, ids, type, key). */
    q?: string;
    duplicates?: boolean;
    key_status?: string;
  }) {
    const q = new URLSearchParams();
    if (params.before) q.set("before", String(params.before));
    if (params.source) q.set("source", params.source);
    if (params.verdict) q.set("verdict", params.verdict);
    if (params.q) q.set("q", params.q);
    if (params.duplicates) q.set("duplicates", "true");
    if (params.key_status) q.set("key_status", params.key_status);
    q.set("limit", String(params.limit ?? 500));
    return this.call<Page>(`/api/events?${q}`);
  }

  event(id: number) {
    return this.call<DeliveryDetail>(`/api/events/${id}`);
  }

  diff(a: number, b: number) {
    return this.call<DeliveryDiff>(`/api/diff?a=${a}&b=${b}`);
  }

  keys(params: { status?: string; duplicates?: boolean; key?: string; scope?: string }) {
    const q = new URLSearchParams({ limit: "1000" });
    if (params.status) q.set("status", params.status);
    if (params.duplicates) q.set("duplicates", "true");
    if (params.key) q.set("key", params.key);
    if (params.scope) q.set("scope", params.scope);
    return this.call<KeyRecord[]>(`/api/keys?${q}`);
  }

  objects(params: { state?: string }) {
    const q = new URLSearchParams({ limit: "1000" });
    if (params.state) q.set("state", params.state);
    return this.call<ObjectRecord[]>(`/api/objects?${q}`);
  }

  timeline(objectId: string) {
    return this.call<Timeline>(
      `/api/objects/${encodeURIComponent(objectId)}/timeline`,
    );
  }

  /** The UI's own settings, kept beside the database (the defaults when none are kept). */
  uiSettings() {
    return this.call<UiSettings>("/api/ui-settings");
  }

  saveUiSettings(settings: UiSettings) {
    return this.call<UiSettings>("/api/ui-settings", {
      method: "PUT",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(settings),
    });
  }

  deadLetters() {
    return this.call<DeadLetter[]>("/api/dlq?limit=1000");
  }

  resolveDead(action: "redrive" | "discard", jobs: number[] | "all") {
    const body = jobs === "all" ? { all: true } : { jobs };
    return this.call<Resolved>(`/api/dlq/${action}`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
  }

  sources() {
    return this.call<SourceView[]>("/api/sources");
  }

  providers() {
    return this.call<ProviderInfo[]>("/api/providers");
  }

  saveSource(input: SourceInput, editing: string | null) {
    return this.call<{ saved: string }>(editing ? `/api/sources/${encodeURIComponent(editing)}` : "/api/sources", {
      method: editing ? "PUT" : "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(editing ? { ...input, name: undefined } : input),
    });
  }

  deleteSource(name: string) {
    return this.call<{ deleted: string }>(`/api/sources/${encodeURIComponent(name)}`, { method: "DELETE" });
  }

  sendTestEvent(source: string, eventType?: string, overrides: TemplateOverride[] = []) {
    return this.call<TestEventSent>("/api/test-event", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ source, event_type: eventType || undefined, overrides }),
    });
  }

  inject(request: InjectRequest) {
    return this.call<InjectAnswer>("/api/inject", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request),
    });
  }

  replay(id: number, request: ReplayRequest) {
    return this.call<ReplayAnswer>(`/api/events/${id}/replay`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request),
    });
  }

  sequence(request: SequenceRequest) {
    return this.call<SequenceAnswer>("/api/sequence", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request),
    });
  }

  importFile(bytes: ArrayBuffer, params: { format?: string; source?: string }) {
    const q = new URLSearchParams();
    if (params.format) q.set("format", params.format);
    if (params.source) q.set("source", params.source);
    return this.call<Imported>(`/api/import?${q}`, {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: bytes,
    });
  }

  /** One delivery as a file (HAR, curl, JSON, raw HTTP), fetched with the token. */
  async exportDelivery(id: number, format: string): Promise<Blob> {
    const response = await fetch(`/api/deliveries/${id}/export?format=${encodeURIComponent(format)}`, {
      headers: { Authorization: `Bearer ${this.token}` },
    });
    if (!response.ok) throw new ApiError(response.status, "export", `the export failed (${response.status})`);
    return response.blob();
  }

  scenario(scenario: Scenario) {
    return this.call<ScenarioToml>("/api/scenario", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(scenario),
    });
  }

  templates() {
    return this.call<TemplateSet[]>("/api/templates");
  }

  tunnel() {
    return this.call<TunnelStatus>("/api/tunnel");
  }

  startTunnel(request: TunnelRequest) {
    return this.call<TunnelStatus>("/api/tunnel", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(request),
    });
  }

  stopTunnel() {
    return this.call<TunnelStopped>("/api/tunnel", { method: "DELETE" });
  }

  health() {
    return this.call<Health>("/api/health");
  }

  /// Reads the events stream until `signal` aborts; calls `onBatch` per message. Reconnects
  /// after a pause when the connection drops.
  async stream(onBatch: (batch: StreamBatch) => void, onState: (open: boolean) => void, signal: AbortSignal) {
    while (!signal.aborted) {
      try {
        const response = await fetch("/api/stream", {
          headers: { Authorization: `Bearer ${this.token}` },
          signal,
        });
        if (!response.ok || !response.body) throw new Error(`stream answered ${response.status}`);
        onState(true);
        const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
        let buffer = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += value;
          let end: number;
          while ((end = buffer.indexOf("\n\n")) >= 0) {
            const message = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const data = message
              .split("\n")
              .filter((line) => line.startsWith("data: "))
              .map((line) => line.slice(6))
              .join("\n");
            if (data) onBatch(JSON.parse(data) as StreamBatch);
          }
        }
      } catch {
        if (signal.aborted) return;
      }
      onState(false);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  }
}
