// Pure helpers for the views. Everything returns text: the views render it as text only.
import type { DeliveryDetail, KeyStatus } from "./types";

/** An idempotency key's statuses, as the filters offer them (typed by the API's own enum). */
export const KEY_STATUSES: readonly { value: KeyStatus; label: string }[] = [
  { value: "processing", label: "Processing" },
  { value: "completed", label: "Completed" },
  { value: "failed", label: "Failed" },
];

export function time(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

export function dateTime(ms: number): string {
  return new Date(ms).toISOString();
}

export function bytesOf(base64: string): Uint8Array {
  const text = atob(base64);
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}

/// `hexdump -C` style: offset, 16 bytes in hex, the printable ASCII.
export function hexDump(bytes: Uint8Array, max = 64 * 1024): string {
  const lines: string[] = [];
  const end = Math.min(bytes.length, max);
  for (let offset = 0; offset < end; offset += 16) {
    const row = bytes.subarray(offset, Math.min(offset + 16, end));
    const hex = Array.from(row, (b) => b.toString(16).padStart(2, "0")).join(" ");
    const ascii = Array.from(row, (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex.padEnd(47, " ")}  |${ascii}|`);
  }
  if (bytes.length > end) lines.push(`… ${bytes.length - end} more bytes`);
  return lines.join("\n");
}

/// The body as indented JSON, or null when it is not JSON.
export function prettyJson(text: string | null): string | null {
  if (text == null) return null;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return null;
  }
}

/// A POSIX shell word, single-quoted.
function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

const HOP_BY_HOP = new Set(["host", "content-length", "connection", "transfer-encoding"]);

/// A curl command that replays the delivery at `baseUrl` with its headers and exact body
/// (sent from a file when the body is not text).
export function curlCommand(d: DeliveryDetail, baseUrl: string): string {
  const target = `${baseUrl.replace(/\/$/, "")}${d.path}${d.query ? `?${d.query}` : ""}`;
  const parts = [`curl -X ${d.method} ${shellQuote(target)}`];
  for (const h of d.headers) {
    if (HOP_BY_HOP.has(h.name.toLowerCase())) continue;
    parts.push(`-H ${shellQuote(`${h.name}: ${h.value}`)}`);
  }
  if (d.body_text != null) {
    if (d.body_text.length > 0) parts.push(`--data-binary ${shellQuote(d.body_text)}`);
  } else {
    parts.push(`--data-binary @delivery-${d.id}.bin  # GET /api/events/${d.id}/raw`);
  }
  return parts.join(" \\\n  ");
}
