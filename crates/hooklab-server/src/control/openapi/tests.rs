//! The OpenAPI document: complete, and the committed copy up to date.

use super::*;

/// `docs/openapi.json` is this document. Regenerate it with
/// `HOOKLAB_UPDATE_OPENAPI=1 cargo test -p hooklab-server openapi`.
#[test]
fn the_committed_openapi_document_is_up_to_date() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
    let generated = serde_json::to_string_pretty(&document()).unwrap() + "\n";
    if std::env::var_os("HOOKLAB_UPDATE_OPENAPI").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/openapi.json is out of date: run `HOOKLAB_UPDATE_OPENAPI=1 cargo test -p \
         hooklab-server openapi` and commit it (then `npm --prefix ui run types`)"
    );
}

#[test]
fn every_route_and_the_main_types_are_described() {
    let doc = document();
    for path in [
        "/api/events",
        "/api/events/{id}",
        "/api/stream",
        "/api/dlq/redrive",
        "/api/test-event",
        "/api/inject",
        "/api/events/{id}/replay",
        "/api/sequence",
        "/api/scenario",
        "/api/import",
        "/api/deliveries/{id}/export",
    ] {
        assert!(doc["paths"][path].is_object(), "{path}");
    }
    for schema in [
        "DeliverySummary",
        "DeliveryView",
        "Verdict",
        "Event",
        "TunnelStatus",
        "Problem",
        "StreamBatch",
        "InjectAnswer",
        "OracleReport",
        "Scenario",
        "Imported",
        "Ingested",
    ] {
        assert!(doc["components"]["schemas"][schema].is_object(), "{schema}");
    }
}
