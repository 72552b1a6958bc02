//! A run's figures so far, as a document: what the live board has counted
//! for each workload since it started (fio's `--status-interval`, which
//! dumps the cumulative report every so often while the jobs run).

use super::assemble::direction_result;
use crate::measure::intervals::DirectionSample;
use crate::measure::live::{Board, Series};
use crate::result::streams::StreamsResult;
use crate::result::{CpuUsage, DirectionPair, Document, RunResult, WorkloadResult};
use crate::spec::WorkloadSpec;

/// `base` (the session's empty document: host, start) with a result for
/// each of `specs` that has counted anything on `board`, in plan order.
/// Rates are over each stream's measured seconds so far; what the board
/// does not keep (CPU, per-target figures, flushes) is left out.
pub fn so_far(specs: &[WorkloadSpec], board: &Board, base: &Document) -> Document {
    let mut document = base.clone();
    for spec in specs {
        let of_workload: Vec<&Series> = board
            .series
            .iter()
            .filter(|s| s.workload == spec.name)
            .collect();
        if of_workload.is_empty() {
            continue;
        }
        if spec.streams.is_empty() {
            document
                .results
                .push(RunResult::Workload(stream_so_far(spec, &of_workload)));
            continue;
        }
        let streams = spec
            .streams
            .iter()
            .map(|stream| stream_so_far(stream, &of_workload))
            .collect();
        if let Ok(result) = StreamsResult::new(spec.clone(), streams) {
            document.results.push(RunResult::Streams(result));
        }
    }
    document
}

/// The result of stream `spec` from its series among `series`.
fn stream_so_far(spec: &WorkloadSpec, series: &[&Series]) -> WorkloadResult {
    let ours: Vec<&&Series> = series.iter().filter(|s| s.stream == spec.name).collect();
    let runtime_s = ours
        .iter()
        .filter_map(|s| s.last.as_ref())
        .map(|last| last.index as f64 + last.dur_s)
        .fold(0.0, f64::max);
    let direction = |name: &str| {
        let mut sample = DirectionSample::default();
        if let Some(s) = ours.iter().find(|s| s.direction == name) {
            sample.ios = s.ios;
            sample.bytes = s.bytes;
            sample.errors = s.errors;
            sample.unanswered = s.unanswered;
            sample.latency = s.run.clone();
        }
        direction_result(sample, runtime_s, Vec::new())
    };
    WorkloadResult::of(
        spec.clone(),
        Vec::new(),
        DirectionPair {
            read: direction("read"),
            write: direction("write"),
            trim: direction("trim"),
        },
        CpuUsage::default(),
        runtime_s,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::intervals::CompletedSecond;
    use crate::measure::live::LiveBoard;

    fn second(index: u64, reads: u64) -> CompletedSecond {
        let mut s = CompletedSecond {
            index,
            dur_s: 1.0,
            directions: Default::default(),
        };
        s.directions[0].ios = reads;
        s.directions[0].bytes = reads * 4096;
        for ns in 0..reads {
            s.directions[0].latency.record(100_000 + ns);
        }
        s
    }

    #[test]
    fn the_figures_so_far_add_every_second_and_rate_over_them() {
        let spec = WorkloadSpec::defaults(vec!["/tmp/x".into()]);
        let board = LiveBoard::new();
        board.workload(&spec.name);
        board.second(&spec.name, &second(0, 100));
        board.second(&spec.name, &second(1, 300));
        let base = Document::new(crate::measure::facts::host_facts(), None);
        let doc = so_far(std::slice::from_ref(&spec), &board.snapshot(), &base);
        let [RunResult::Workload(w)] = doc.results.as_slice() else {
            panic!("one workload: {:?}", doc.results.len())
        };
        assert_eq!(w.total.read.ios, 400);
        assert_eq!(w.total.read.bytes, 400 * 4096);
        assert!((w.runtime_s - 2.0).abs() < 1e-9);
        assert!((w.total.read.iops - 200.0).abs() < 1e-9);
        assert_eq!(w.total.write.ios, 0);
    }

    #[test]
    fn a_workload_not_started_is_left_out() {
        let first = WorkloadSpec::defaults(vec!["/tmp/x".into()]);
        let mut second_spec = first.clone();
        second_spec.name = "later".into();
        let board = LiveBoard::new();
        board.workload(&first.name);
        board.second(&first.name, &second(0, 10));
        let base = Document::new(crate::measure::facts::host_facts(), None);
        let doc = so_far(&[first, second_spec], &board.snapshot(), &base);
        assert_eq!(doc.results.len(), 1);
    }
}
