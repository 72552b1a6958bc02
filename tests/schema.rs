//! The JSON result matches docs/json-schema.md and the typed reader.

mod common;
use common::*;
use serde_json::Value;

fn collect_keys(value: &Value, out: &mut std::collections::BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                out.insert(k.clone());
                collect_keys(v, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|v| collect_keys(v, out)),
        _ => {}
    }
}

fn document() -> Value {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    run_json(&[
        d,
        "--rw",
        "randrw",
        "--size",
        "1m",
        "--random-distribution",
        "zipf:1.2",
        // Flushes, and a rate far above what one I/O at a time delivers:
        // the sync figures, scheduled latency and unanswered I/Os appear.
        "--fsync",
        "4",
        "--rate-iops",
        "2000000",
        "--runtime",
        "300ms",
    ])
}

#[test]
fn every_field_is_documented() {
    let doc = document();
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.md"))
        .unwrap();
    let mut keys = Default::default();
    collect_keys(&doc, &mut keys);
    let missing: Vec<_> = keys
        .iter()
        .filter(|k| !docs.contains(&format!("`{k}`")))
        .collect();
    assert!(missing.is_empty(), "undocumented fields: {missing:?}");
}

#[test]
fn document_reads_back_strictly() {
    let doc = document();
    assert_eq!(doc["schema"], fathom::result::SCHEMA);
    let target = &doc["workloads"][0]["targets"][0];
    assert!(target["sync"]["count"].as_u64().unwrap() > 0, "{target}");
    assert!(
        target["read"]["unanswered"].as_u64().unwrap() > 0,
        "{target}"
    );
    let typed = fathom::result::Document::from_json(&doc.to_string()).unwrap();
    assert_eq!(typed.workloads.len(), 1);
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        doc,
        "round trip loses nothing"
    );
    // Fields added later within the same schema are ignored by older readers.
    let mut extra = doc.clone();
    extra["workloads"][0]["total"]["read"]["added_later"] = Value::from(1);
    assert!(fathom::result::Document::from_json(&extra.to_string()).is_ok());
    // A missing field is an error naming it.
    let mut missing = doc.clone();
    missing["workloads"][0]["total"]["read"]
        .as_object_mut()
        .unwrap()
        .remove("ios");
    let err = fathom::result::Document::from_json(&missing.to_string()).unwrap_err();
    assert!(err.contains("ios"), "{err}");
    let mut newer = doc;
    newer["schema"] = Value::from(99);
    let err = fathom::result::Document::from_json(&newer.to_string()).unwrap_err();
    assert!(err.contains("newer"), "{err}");
}
