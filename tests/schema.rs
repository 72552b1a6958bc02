//! The JSON result matches docs/json-schema.md and the typed reader.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;
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

/// A document of each other kind: a metadata run and a short
/// certification, both labelled.
fn other_kinds() -> Vec<Value> {
    let dir = tempdir();
    let d = dir.path().to_str().unwrap();
    // The verdict (and so the exit code) of a certification on a busy
    // machine does not matter here: only the document's shape.
    let json = |args: &[&str]| -> Value {
        let mut full = args.to_vec();
        full.extend_from_slice(&["--label", "box", "--output-format", "json"]);
        serde_json::from_slice(&run(&full).stdout).unwrap()
    };
    let target = dir.path().join("c");
    let certify = json(&[
        "certify",
        target.to_str().unwrap(),
        "--size",
        "16m",
        "--duration",
        "2s",
        "--interval",
        "1s",
    ]);
    let data = dir.path().join("s");
    let streams = json(&[
        "run",
        data.to_str().unwrap(),
        "--size",
        "1m",
        "--runtime",
        "300ms",
        "--stream",
        "r:rw=randread,rate-iops=100",
        "--stream",
        "w:rw=write,fsync=2",
        // Trims: the `trim` direction of targets and totals.
        "--stream",
        "t:rw=randtrim,bs=64k",
    ]);
    // A short search of a target of known speed (4 slots of 1 ms), with
    // the null engine's service time in its spec.
    let capacity = json(&[
        "capacity",
        dir.path().join("k").to_str().unwrap(),
        "--engine",
        "null",
        "--null-latency",
        "1ms",
        "--iodepth",
        "4",
        "--size",
        "1m",
        "--ramp",
        "0s",
        "--runtime",
        "200ms",
        "--slo",
        "p90:50ms",
        "--start",
        "1000",
        "--growth",
        "4",
        "--precision",
        "50%",
    ]);
    // A replay of a trace with its own latencies, at a speed.
    let trace = dir.path().join("t.csv");
    std::fs::write(
        &trace,
        "time,offset,length,rw,latency_ns\n0,0,4096,read,90000\n0.001,4096,4096,write,120000\n0.002,0,0,sync,1000\n",
    )
    .unwrap();
    let replay = json(&[
        "replay",
        trace.to_str().unwrap(),
        dir.path().join("r").to_str().unwrap(),
        "--speed",
        "2x",
    ]);
    let mut kinds = vec![
        replay,
        json(&["meta", d, "-n", "1", "--block", "1m"]),
        json(&[
            "tree",
            d,
            "--depth",
            "1",
            "--width",
            "2",
            "--files",
            "3",
            "--file-size",
            "1k",
            "--phase-time",
            "10s",
        ]),
        certify,
        streams,
        capacity,
    ];
    // A SNIA PTS test, where a loop device can be had.
    if let Some(dev) = LoopDevice::new(8 << 20, 4096) {
        kinds.push(json(&[
            "pts",
            "latency",
            &dev.path,
            "--round",
            "1s",
            "--max-rounds",
            "5",
            "--block-sizes",
            "4k",
            "--mixes",
            "0",
            "--i-know-this-destroys-data",
        ]));
    }
    kinds
}

#[test]
fn every_field_is_documented() {
    let docs = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/json-schema.md"))
        .unwrap();
    let mut keys = Default::default();
    for doc in std::iter::once(document()).chain(other_kinds()) {
        assert_eq!(doc["results"].as_array().unwrap().len(), 1, "{doc}");
        collect_keys(&doc, &mut keys);
    }
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
    let target = &doc["results"][0]["targets"][0];
    assert!(target["sync"]["count"].as_u64().unwrap() > 0, "{target}");
    assert!(
        target["read"]["unanswered"].as_u64().unwrap() > 0,
        "{target}"
    );
    let typed = fathom::result::Document::from_json(&doc.to_string()).unwrap();
    assert_eq!(typed.workloads().count(), 1);
    assert_eq!(
        serde_json::to_value(&typed).unwrap(),
        doc,
        "round trip loses nothing"
    );
    // Fields added later within the same schema are ignored by older readers.
    let mut extra = doc.clone();
    extra["results"][0]["total"]["read"]["added_later"] = Value::from(1);
    assert!(fathom::result::Document::from_json(&extra.to_string()).is_ok());
    // A missing field is an error naming it.
    let mut missing = doc.clone();
    missing["results"][0]["total"]["read"]
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

/// Files written by fathom before schema 2 (a run, a metadata run and a
/// certification) still read, report and compare.
#[test]
fn schema_1_files_stay_readable() {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/schema1");
    for (file, kind, shows) in [
        ("run.json", "workload", "IOPS"),
        ("meta.json", "meta", "create seq"),
        ("certify.json", "certify", "verdict"),
    ] {
        let path = format!("{fixtures}/{file}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"schema\": 1"), "{file} is a schema 1 file");
        let doc = fathom::result::Document::from_json(&text).unwrap();
        assert_eq!(doc.schema, fathom::result::SCHEMA);
        let kinds: Vec<String> = doc
            .results
            .iter()
            .map(|r| {
                serde_json::to_value(r).unwrap()["kind"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(kinds, [kind], "{file}");
        let report = run_ok(&["report", &path]);
        let out = String::from_utf8(report.stdout).unwrap();
        assert!(out.contains(shows), "{file}: {out}");
        let compared = run_ok(&["compare", &path, &path]);
        assert!(
            String::from_utf8(compared.stdout)
                .unwrap()
                .contains("1 result in both"),
            "{file}"
        );
    }
}
