// The control API's shapes, generated from the Rust types: crates/hooklab-server/src/control/
// openapi.rs → docs/openapi.json → `npm run types` (openapi-typescript) → api-types.ts. Nothing
// here is written by hand but the names.
import type { components } from "./api-types";

type Schemas = components["schemas"];

export type Verdict = Schemas["Status"];
export type KeyStatus = Schemas["KeyStatus"];
export type DeliverySummary = Schemas["DeliverySummary"];
export type Page = Schemas["Page_for_DeliverySummary"];
export type DeliveryDetail = Schemas["DeliveryView"];
export type HeaderView = Schemas["HeaderView"];
export type Attempt = Schemas["Attempt"];
export type BusEvent = Schemas["Event"];
export type StreamBatch = Schemas["StreamBatch"];
export type KeyRecord = Schemas["IdempotencyRecord"];
export type ObjectRecord = Schemas["ObjectRecord"];
export type TimelineEntry = Schemas["TimelineEntry"];
export type Timeline = Schemas["Timeline"];
export type DeadLetter = Schemas["DeadLetter"];
export type Resolved = Schemas["Resolved"];
export type TunnelStatus = Schemas["TunnelAnswer"];
export type SourceView = Schemas["SourceView"];
export type TestEventSent = Schemas["TestEventSent"];
export type Health = Schemas["Health"];
export type SourceInput = Schemas["SourceInput"];
export type ProviderInfo = Schemas["ProviderInfo"];
export type DeliveryDiff = Schemas["DeliveryDiff"];
export type TunnelRequest = Schemas["TunnelRequest"];
export type TunnelStopped = Schemas["TunnelStopped"];
export type TemplateSet = Schemas["TemplateSet"];
export type TemplateOverride = Schemas["Override"];
export type InjectRequest = Schemas["InjectRequest"];
export type InjectAnswer = Schemas["InjectAnswer"];
export type CopyResult = Schemas["CopyResult"];
export type ReplayRequest = Schemas["ReplayRequest"];
export type ReplayAnswer = Schemas["ReplayAnswer"];
export type SequenceRequest = Schemas["SequenceRequest"];
export type SequenceAnswer = Schemas["SequenceAnswer"];
export type Imported = Schemas["Imported"];
export type Scenario = Schemas["Scenario"];
export type ScenarioStep = Schemas["Step"];
export type ScenarioToml = Schemas["ScenarioToml"];
export type UiSettings = Schemas["UiSettings"];
export type Theme = Schemas["Theme"];
