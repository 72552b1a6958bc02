//! Property tests over untrusted input: size and duration flags, and result
//! files given back to fathom. Whatever the bytes, the parsers return a value
//! or an error; they never panic and never allocate what the input claims.
//! Case counts are bounded so the suite stays within seconds in CI.

// Tests make their fixtures by hand, around the gate.
#![allow(clippy::disallowed_methods)]

use crate::common;

use fathom::input::jobfile::{self, Overrides};
use fathom::measure::histogram::LatencyHistogram;
use fathom::result::Document;
use fathom::util::units::{parse_duration, parse_size};
use proptest::prelude::*;
use std::sync::OnceLock;

const JOB: &str = r#"
[defaults]
targets = ["data=/tmp/fathom-fuzz"]
runtime = "1s"
size = "1m"

[sweep]
rw = ["randread", "randwrite"]
bs = ["4k", "8k"]
iodepth = [1, 4]

[workload.w]
name = "w-${rw}-${bs}-${iodepth}"
"#;

/// A real result document, made once by a short null-engine run.
fn sample_document() -> &'static str {
    static DOC: OnceLock<String> = OnceLock::new();
    DOC.get_or_init(|| {
        let dir = common::tempdir();
        let target = dir.path().join("t");
        let out = common::run(&[
            "run",
            target.to_str().unwrap(),
            "--engine",
            "null",
            "--size",
            "1m",
            "--runtime",
            "1500ms",
            "--output-format",
            "json",
        ]);
        assert!(out.status.success());
        String::from_utf8(out.stdout).unwrap()
    })
}

fn check_document(text: &str) {
    if let Ok(doc) = Document::from_json(text) {
        for w in doc.workloads() {
            for d in w
                .targets
                .iter()
                .flat_map(|t| [&t.io.read, &t.io.write])
                .chain([&w.total.read, &w.total.write])
            {
                let _ = LatencyHistogram::decode(&d.histogram);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn size_parser_never_panics(text in "\\PC{0,24}") {
        let _ = parse_size(&text);
    }

    #[test]
    fn sizes_parse_exactly_or_fail_on_overflow(n in 0u64..(1 << 44), unit in 0usize..5) {
        let (suffix, shift) = [("", 0), ("k", 10), ("m", 20), ("g", 30), ("t", 40)][unit];
        let text = format!("{n}{suffix}");
        match n.checked_mul(1 << shift) {
            Some(bytes) => prop_assert_eq!(parse_size(&text), Ok(bytes)),
            None => prop_assert!(parse_size(&text).is_err()),
        }
    }

    #[test]
    fn duration_parser_never_panics(text in "[0-9.a-z ]{0,20}|\\PC{0,20}") {
        let _ = parse_duration(&text);
    }

    #[test]
    fn result_reader_survives_arbitrary_text(text in "\\PC{0,200}") {
        check_document(&text);
    }

    #[test]
    fn result_reader_survives_damaged_documents(
        cut in 0.0f64..1.0,
        flips in proptest::collection::vec((0.0f64..1.0, any::<u8>()), 1..6),
    ) {
        let doc = sample_document();
        let mut bytes = doc.as_bytes().to_vec();
        for (at, byte) in flips {
            let i = ((bytes.len() - 1) as f64 * at) as usize;
            bytes[i] = byte;
        }
        let damaged = String::from_utf8_lossy(&bytes).into_owned();
        check_document(&damaged);
        let truncated = &doc[..doc.floor_char_boundary((doc.len() as f64 * cut) as usize)];
        check_document(truncated);
    }

    #[test]
    fn job_file_parser_survives_arbitrary_text(text in "\\PC{0,300}") {
        let _ = jobfile::parse(&text, "fuzz.toml", "fuzz", &Overrides::default());
    }

    #[test]
    fn job_file_parser_survives_damaged_job_files(
        flips in proptest::collection::vec((0.0f64..1.0, "[\\[\\]=\"{}$a-z0-9,. \n]"), 1..6),
    ) {
        let mut text = JOB.to_string();
        for (at, s) in flips {
            let i = text.floor_char_boundary((text.len() as f64 * at) as usize);
            text.insert_str(i, &s);
        }
        if let Err(e) = jobfile::parse(&text, "fuzz.toml", "fuzz", &Overrides::default()) {
            prop_assert!(e.0.starts_with("fuzz.toml"), "error names the file: {}", e.0);
            prop_assert!(!e.0.contains('\n'), "one line: {}", e.0);
        }
    }

    #[test]
    fn histogram_decoder_survives_arbitrary_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        use base64::Engine as _;
        let _ = LatencyHistogram::decode(&base64::engine::general_purpose::STANDARD.encode(&bytes));
    }
}

#[test]
fn an_untouched_document_reads_back() {
    let doc = Document::from_json(sample_document()).unwrap();
    assert_eq!(doc.workloads().count(), 1);
    let h =
        LatencyHistogram::decode(&doc.workloads().next().unwrap().total.read.histogram).unwrap();
    assert_eq!(h.count(), doc.workloads().next().unwrap().total.read.ios);
}
