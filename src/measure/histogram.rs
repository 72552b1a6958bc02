//! Latency histograms: HDR (3 significant digits) in nanoseconds, so every
//! percentile up to p99.99 and the max are exact to 0.1%, and histograms of
//! several workers or files merge without loss.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use hdrhistogram::Histogram;
use hdrhistogram::serialization::{Deserializer, Serializer, V2DeflateSerializer};
use serde::{Deserialize, Serialize};

/// Completion latency (submission to completion) in nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencySummary {
    pub min: u64,
    pub mean: f64,
    pub max: u64,
    pub stddev: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
}

/// One hour: a single I/O slower than that is recorded as one hour.
pub const MAX_TRACKABLE_NS: u64 = 3_600_000_000_000;
const SIGNIFICANT_DIGITS: u8 = 3;

/// The counts are made at the first value recorded or added: an HDR
/// histogram of this range holds about 270 KiB, and a job keeps dozens
/// (each direction, each second, each slice), most never recorded into
/// (a reader's writes and trims). 1,024 jobs would otherwise take 11 GiB.
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram(Option<Histogram<u64>>);

fn empty_hdr() -> Histogram<u64> {
    Histogram::new_with_bounds(1, MAX_TRACKABLE_NS, SIGNIFICANT_DIGITS)
        .expect("valid histogram bounds")
}

impl LatencyHistogram {
    pub fn new() -> Self {
        LatencyHistogram(None)
    }

    /// The counts, made now if they were not yet.
    #[inline]
    fn counts(&mut self) -> &mut Histogram<u64> {
        self.0.get_or_insert_with(empty_hdr)
    }

    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.counts().saturating_record(ns.max(1));
    }

    /// Records `count` values of `ns` at once.
    pub fn record_n(&mut self, ns: u64, count: u64) {
        self.counts().saturating_record_n(ns.max(1), count);
    }

    /// Every recorded value with its count, lowest first; each value is the
    /// highest one equal to it at the histogram's precision.
    pub fn recorded(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.0.iter().flat_map(|h| {
            h.iter_recorded()
                .map(|v| (v.value_iterated_to(), v.count_at_value()))
        })
    }

    pub fn add(&mut self, other: &LatencyHistogram) {
        if let Some(theirs) = &other.0 {
            self.counts()
                .add(theirs)
                .expect("histograms share bounds, so adding cannot fail");
        }
    }

    /// The counts, where any value was recorded.
    fn recorded_into(&self) -> Option<&Histogram<u64>> {
        self.0.as_ref().filter(|h| !h.is_empty())
    }

    pub fn count(&self) -> u64 {
        self.0.as_ref().map_or(0, |h| h.len())
    }

    pub fn value_at_percentile(&self, percentile: f64) -> u64 {
        self.recorded_into()
            .map_or(0, |h| h.value_at_percentile(percentile))
    }

    /// Share (0..=1) of recorded values above `threshold_ns`.
    pub fn share_above(&self, threshold_ns: u64) -> f64 {
        let Some(h) = self.recorded_into() else {
            return 0.0;
        };
        let at_or_below = h.count_between(0, threshold_ns);
        (h.len() - at_or_below) as f64 / h.len() as f64
    }

    pub fn summary(&self) -> LatencySummary {
        let Some(h) = self.recorded_into() else {
            return LatencySummary::default();
        };
        LatencySummary {
            min: h.min(),
            mean: h.mean(),
            max: h.max(),
            stddev: h.stdev(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            p99_99: h.value_at_quantile(0.9999),
        }
    }

    /// HdrHistogram's standard compressed V2 encoding, in base64: readable by
    /// the Java, Go, C and Rust HdrHistogram libraries.
    pub fn encode(&self) -> String {
        static EMPTY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
        let serialized = |h: &Histogram<u64>| {
            let mut bytes = Vec::new();
            V2DeflateSerializer::new()
                .serialize(h, &mut bytes)
                .expect("serializing to memory cannot fail");
            BASE64.encode(bytes)
        };
        match &self.0 {
            Some(h) => serialized(h),
            None => EMPTY.get_or_init(|| serialized(&empty_hdr())).clone(),
        }
    }

    /// Decodes what `encode` produced; an empty text is an empty histogram
    /// (a direction a result leaves out). The text may come from a file
    /// anyone wrote, so sizes claimed inside it are checked before anything
    /// is allocated (the decoder would otherwise trust a header asking for
    /// 4 GiB).
    pub fn decode(text: &str) -> Result<Self, String> {
        if text.is_empty() {
            // A direction a result leaves out (no trims) has no histogram.
            return Ok(LatencyHistogram::new());
        }
        if text.len() > MAX_ENCODED_LEN {
            return Err(format!(
                "histogram is {} bytes of text, more than fathom ever writes",
                text.len()
            ));
        }
        let bytes = BASE64
            .decode(text)
            .map_err(|e| format!("histogram is not base64: {e}"))?;
        let plain = inflate_v2(&bytes)?;
        let h: Histogram<u64> = Deserializer::new()
            .deserialize(&mut plain.as_slice())
            .map_err(|e| format!("histogram cannot be decoded: {e:?}"))?;
        let mut out = LatencyHistogram::new();
        if !h.is_empty() {
            out.counts()
                .add(&h)
                .map_err(|e| format!("histogram out of range: {e:?}"))?;
        }
        Ok(out)
    }
}

const MAX_ENCODED_LEN: usize = 4 << 20;
// The base cookies with the word-size bits HdrHistogram sets for V2.
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
const V2_HEADER_LEN: usize = 40;

/// The `q`th percentile (0..=100) of latencies counted per value, `values`
/// sorted: as a histogram's own percentiles are (the lowest value with at
/// least that share of counts at or below it). The bootstrap of `check`
/// adds resampled seconds' counts and reads their percentiles through it.
pub fn percentile_of_counts(counts: &[u64], values: &[u64], q: f64) -> u64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((q / 100.0 * total as f64).ceil() as u64).clamp(1, total);
    let mut seen = 0;
    for (c, v) in counts.iter().zip(values) {
        seen += c;
        if seen >= rank {
            return *v;
        }
    }
    values.last().copied().unwrap_or(0)
}

/// Unpacks a compressed V2 histogram into the plain V2 form, at most
/// `MAX_ENCODED_LEN` bytes, and checks that its header asks for no more than
/// it holds.
fn inflate_v2(bytes: &[u8]) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let be32 = |b: &[u8], at: usize| {
        b.get(at..at + 4)
            .map(|s| u32::from_be_bytes(s.try_into().expect("4 bytes")))
            .ok_or_else(|| "histogram is truncated".to_string())
    };
    if be32(bytes, 0)? != V2_COMPRESSED_COOKIE {
        return Err("histogram is not an HdrHistogram V2 compressed encoding".into());
    }
    let mut plain = Vec::new();
    flate2::read::ZlibDecoder::new(&bytes[8.min(bytes.len())..])
        .take(MAX_ENCODED_LEN as u64 + 1)
        .read_to_end(&mut plain)
        .map_err(|e| format!("histogram cannot be inflated: {e}"))?;
    if plain.len() > MAX_ENCODED_LEN {
        return Err("histogram inflates beyond any fathom writes".into());
    }
    if be32(&plain, 0)? != V2_COOKIE || plain.len() < V2_HEADER_LEN {
        return Err("histogram has no V2 header".into());
    }
    let payload_len = be32(&plain, 4)? as usize;
    if payload_len > plain.len() - V2_HEADER_LEN {
        return Err("histogram header claims more data than it holds".into());
    }
    let digits = be32(&plain, 12)?;
    if digits > 5 {
        return Err(format!(
            "histogram precision of {digits} digits is not supported"
        ));
    }
    Ok(plain)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `plain` as HdrHistogram's compressed V2 text, whatever it holds.
    fn compressed(plain: &[u8]) -> String {
        use std::io::Write;
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(plain).unwrap();
        let body = z.finish().unwrap();
        let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bytes.extend_from_slice(&(body.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&body);
        BASE64.encode(bytes)
    }

    #[test]
    fn what_inflates_too_far_or_too_short_is_refused_without_panicking() {
        let header = |len: usize| {
            let mut plain = V2_COOKIE.to_be_bytes().to_vec();
            plain.resize(len, 0);
            plain
        };
        let e = LatencyHistogram::decode(&compressed(&header(MAX_ENCODED_LEN + 1))).unwrap_err();
        assert!(e.contains("inflates beyond"), "{e}");
        // Exactly the limit inflates; the empty header then fails later.
        let e = LatencyHistogram::decode(&compressed(&header(MAX_ENCODED_LEN))).unwrap_err();
        assert!(!e.contains("inflates beyond"), "{e}");
        // The right cookie with less than a header after it.
        let e = LatencyHistogram::decode(&compressed(&header(8))).unwrap_err();
        assert!(e.contains("no V2 header"), "{e}");
    }

    #[test]
    fn a_header_claiming_more_than_it_holds_or_too_many_digits_is_refused() {
        // A V2 header: cookie, payload length, ..., significant digits at 12.
        let header = |payload: u32, digits: u32, extra: usize| {
            let mut plain = V2_COOKIE.to_be_bytes().to_vec();
            plain.extend_from_slice(&payload.to_be_bytes());
            plain.resize(12, 0);
            plain.extend_from_slice(&digits.to_be_bytes());
            plain.resize(V2_HEADER_LEN + extra, 0);
            compressed(&plain)
        };
        let e = LatencyHistogram::decode(&header(9, 3, 8)).unwrap_err();
        assert!(e.contains("claims more data than it holds"), "{e}");
        let e = LatencyHistogram::decode(&header(8, 3, 8)).unwrap_err();
        assert!(!e.contains("claims more data"), "{e}");
        let e = LatencyHistogram::decode(&header(0, 6, 0)).unwrap_err();
        assert!(e.contains("precision of 6 digits"), "{e}");
        let e = LatencyHistogram::decode(&header(0, 5, 0)).unwrap_err();
        assert!(!e.contains("precision"), "{e}");
    }

    #[test]
    fn text_longer_than_fathom_writes_is_refused_before_decoding() {
        let too_long = "A".repeat(MAX_ENCODED_LEN + 1);
        let e = LatencyHistogram::decode(&too_long).unwrap_err();
        assert!(e.contains("more than fathom ever writes"), "{e}");
        // At the limit the text is decoded (and found wanting for what it
        // holds, not for its length).
        let at_limit = "A".repeat(MAX_ENCODED_LEN);
        let e = LatencyHistogram::decode(&at_limit).unwrap_err();
        assert!(!e.contains("more than fathom ever writes"), "{e}");
    }

    #[test]
    fn counted_values_give_the_histograms_own_percentiles() {
        let mut h = LatencyHistogram::new();
        for (i, ns) in [900u64, 1_000, 5_000, 20_000, 1_000_000].iter().enumerate() {
            h.record_n(*ns, (i as u64 + 1) * 37);
        }
        let (values, counts): (Vec<u64>, Vec<u64>) = h.recorded().unzip();
        for q in [1.0, 50.0, 90.0, 99.0, 99.9, 100.0] {
            assert_eq!(
                percentile_of_counts(&counts, &values, q),
                h.value_at_percentile(q),
                "p{q}"
            );
        }
        assert_eq!(percentile_of_counts(&[], &[], 50.0), 0);
    }

    #[test]
    fn percentiles_are_within_a_tenth_of_a_percent() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        let close = |got: u64, want: u64| (got as f64 - want as f64).abs() / want as f64 <= 0.001;
        assert!(close(s.p50, 50_000_000), "{}", s.p50);
        assert!(close(s.p99, 99_000_000), "{}", s.p99);
        assert!(close(s.p99_99, 99_990_000), "{}", s.p99_99);
        assert!(close(s.max, 100_000_000));
        assert!(close(s.min, 1000));
    }

    #[test]
    fn encode_decode_round_trip() {
        let mut h = LatencyHistogram::new();
        for v in [100, 2000, 2000, 50_000, 7_000_000_000] {
            h.record(v);
        }
        let back = LatencyHistogram::decode(&h.encode()).unwrap();
        assert_eq!(back.summary(), h.summary());
        assert_eq!(back.count(), 5);
    }

    #[test]
    fn decode_rejects_garbage() {
        assert!(LatencyHistogram::decode("not base64!").is_err());
        assert!(LatencyHistogram::decode("AAAA").is_err());
    }

    #[test]
    fn decode_refuses_a_header_that_lies_about_its_size() {
        use std::io::Write;
        let mut plain = Vec::new();
        plain.extend_from_slice(&V2_COOKIE.to_be_bytes());
        plain.extend_from_slice(&u32::MAX.to_be_bytes()); // 4 GiB payload claimed
        plain.extend_from_slice(&0u32.to_be_bytes());
        plain.extend_from_slice(&3u32.to_be_bytes());
        plain.extend_from_slice(&1u64.to_be_bytes());
        plain.extend_from_slice(&1000u64.to_be_bytes());
        plain.extend_from_slice(&1f64.to_be_bytes());
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&plain).unwrap();
        let deflated = z.finish().unwrap();
        let mut bytes = V2_COMPRESSED_COOKIE.to_be_bytes().to_vec();
        bytes.extend_from_slice(&(deflated.len() as u32).to_be_bytes());
        bytes.extend_from_slice(&deflated);
        let err = LatencyHistogram::decode(&BASE64.encode(bytes)).unwrap_err();
        assert!(err.contains("claims more"), "{err}");
    }

    #[test]
    fn decode_round_trips_through_the_guard() {
        let mut h = LatencyHistogram::new();
        for v in [1u64, 500, 70_000, 3_000_000_000] {
            h.record(v);
        }
        let back = LatencyHistogram::decode(&h.encode()).unwrap();
        assert_eq!(back.summary(), h.summary());
    }

    #[test]
    fn merge_equals_histogram_of_all_samples() {
        let (mut a, mut b, mut all) = (
            LatencyHistogram::new(),
            LatencyHistogram::new(),
            LatencyHistogram::new(),
        );
        for v in 0..5000u64 {
            let x = (v * 7919) % 100_000 + 1;
            if v % 3 == 0 { &mut a } else { &mut b }.record(x);
            all.record(x);
        }
        a.add(&b);
        assert_eq!(a.summary(), all.summary());
    }

    #[test]
    fn share_above_threshold() {
        let mut h = LatencyHistogram::new();
        for _ in 0..90 {
            h.record(500_000);
        }
        for _ in 0..10 {
            h.record(3_000_000);
        }
        assert!((h.share_above(1_000_000) - 0.10).abs() < 1e-9);
        assert_eq!(h.share_above(4_000_000), 0.0);
    }

    #[test]
    fn empty_summary_is_zero() {
        assert_eq!(LatencyHistogram::new().summary(), LatencySummary::default());
    }
}
