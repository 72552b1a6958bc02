//! A text table cut to the terminal's width: the least telling columns
//! leave first, and the table says which went.

use comfy_table::Table;
use comfy_table::presets::UTF8_FULL_CONDENSED;

/// Cells longer than this in a list column are cut ("12 workloads").
pub const LIST_CELL_CHARS: usize = 48;

/// How much a column says, by its heading: the higher, the later it
/// leaves. Names (workloads, tests, swept knobs) never leave.
fn worth(heading: &str) -> u8 {
    // compare's columns: B's p99 against A's says least, as each p99 and
    // the verdict on it stand beside it.
    match heading {
        "p99 B/A" => return 2,
        "p99 A" | "p99 B" => return 3,
        _ => {}
    }
    let figure = heading
        .rsplit_once(' ')
        .map_or(heading, |(_, figure)| figure);
    let direction = heading.split_once(' ').map(|(d, _)| d);
    let sync = direction == Some("sync") || heading == "sync/s";
    let worth: u8 = match figure {
        "IOPS" | "sync/s" | "bandwidth" | "MB/s" => 8,
        "p99" => 7,
        "dir" => 7,
        "MiB/s" => 8,
        "target" | "system" => 6,
        "p50" | "mean" => 5,
        "max" => 4,
        "p99.9" => 3,
        "p99.99" => 1,
        _ => return u8::MAX,
    };
    if sync { worth.saturating_sub(1) } else { worth }
}

/// The width the table of `header` and `rows` takes in fathom's style:
/// a border, then each column's widest cell with a space either side and
/// a border.
fn width(header: &[String], rows: &[Vec<String>]) -> usize {
    let widest = |c: usize| {
        rows.iter()
            .filter_map(|r| r.get(c))
            .chain(std::iter::once(&header[c]))
            .map(|cell| cell.lines().map(|l| l.chars().count()).max().unwrap_or(0))
            .max()
            .unwrap_or(0)
    };
    1 + (0..header.len()).map(|c| widest(c) + 3).sum::<usize>()
}

/// The table of `header` and `rows` in fathom's style, no wider than
/// `fit` when given (the least telling columns left out, and named in the
/// line returned); `right` says which columns (by heading) align right.
pub fn table(
    mut header: Vec<String>,
    mut rows: Vec<Vec<String>>,
    fit: Option<usize>,
    right: impl Fn(&str) -> bool,
) -> (Table, Option<String>) {
    let mut dropped = Vec::new();
    if let Some(limit) = fit {
        while width(&header, &rows) > limit {
            let weakest = (0..header.len())
                .map(|c| (worth(&header[c]), c))
                .filter(|(w, _)| *w < u8::MAX)
                // The weakest; of equals, the rightmost.
                .min_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)));
            let Some((_, c)) = weakest else { break };
            dropped.push(header.remove(c));
            for row in &mut rows {
                if c < row.len() {
                    row.remove(c);
                }
            }
        }
    }
    let mut table = Table::new();
    table.load_style(UTF8_FULL_CONDENSED);
    let aligned: Vec<bool> = header.iter().map(|h| right(h)).collect();
    table.set_header(header);
    for row in rows {
        table.add_row(row);
    }
    for (c, right) in aligned.into_iter().enumerate() {
        if right && let Some(column) = table.column_mut(c) {
            column.set_cell_alignment(comfy_table::CellAlignment::Right);
        }
    }
    narrow(&mut table, fit);
    let said = (!dropped.is_empty()).then(|| {
        format!(
            "{} column{} left out to fit {} characters: {} (--wide shows every column)",
            dropped.len(),
            if dropped.len() == 1 { "" } else { "s" },
            fit.unwrap_or(0),
            dropped.join(", ")
        )
    });
    (table, said)
}

/// `table` no wider than `fit` when given: its cells wrapped where every
/// column must stay (names, and tables whose columns all tell).
pub fn narrow(table: &mut Table, fit: Option<usize>) {
    if let Some(limit) = fit {
        table
            .set_content_arrangement(comfy_table::ContentArrangement::Dynamic)
            .set_width(limit.min(u16::MAX as usize) as u16);
    }
}

/// A list for one cell: itself when short or of one item, else its count
/// and first item ("12 workloads: rr-4k, …").
pub fn list_cell(items: &[String], noun: &str, sep: &str) -> String {
    let joined = items.join(sep);
    if items.len() <= 1 || joined.chars().count() <= LIST_CELL_CHARS {
        return joined;
    }
    let room = LIST_CELL_CHARS - noun.len() - 8;
    let first = items
        .first()
        .map_or(String::new(), |f| match f.chars().count() > room {
            true => f.chars().take(room).collect::<String>() + "…",
            false => f.clone(),
        });
    format!("{} {noun}: {first}, …", items.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(cells: &[&str]) -> Vec<String> {
        cells.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_table_that_fits_is_left_whole() {
        let (table, said) = table(
            strings(&["workload", "IOPS"]),
            vec![strings(&["rr", "1,000"])],
            Some(100),
            |_| false,
        );
        assert!(said.is_none());
        assert!(table.to_string().contains("IOPS"));
    }

    #[test]
    fn the_least_telling_columns_leave_first_and_are_named() {
        let header = crate::report::table::detail_header("workload");
        let row = strings(&[
            "randread 4k QD32",
            "/var/lib/db",
            "read",
            "64,139",
            "501 MiB/s",
            "436 µs",
            "407 µs",
            "688 µs",
            "3.87 ms",
            "7.22 ms",
            "9.03 ms",
        ]);
        let full = width(&header, std::slice::from_ref(&row));
        let (table, said) = table(header, vec![row], Some(full - 5), |_| false);
        let said = said.expect("something left");
        assert!(said.starts_with("1 column left out"), "{said}");
        assert!(said.contains("p99.99"), "{said}");
        let text = table.to_string();
        assert!(
            text.lines().all(|l| l.chars().count() <= full - 5),
            "{text}"
        );
        assert!(text.contains("p99 ") && text.contains("IOPS"), "{text}");
    }

    #[test]
    fn names_stay_however_narrow_the_terminal() {
        let (table, said) = table(
            strings(&["test", "read IOPS", "read p99.9"]),
            vec![strings(&["SEQ1M Q8T1", "1,000", "1 ms"])],
            Some(10),
            |_| false,
        );
        // Past the last column that may leave, the name is wrapped, whole.
        let shown = table.to_string();
        assert!(shown.contains("SEQ1M") && shown.contains("Q8T1"), "{shown}");
        assert!(said.unwrap().contains("read IOPS"));
    }

    #[test]
    fn long_lists_in_a_cell_are_counted() {
        let many: Vec<String> = (0..12).map(|i| format!("randread-4k-qd{i}")).collect();
        assert_eq!(
            list_cell(&many, "workloads", ", "),
            "12 workloads: randread-4k-qd0, …"
        );
        assert_eq!(
            list_cell(&many[..2], "workloads", ", "),
            many[..2].join(", ")
        );
        let one = vec!["drive QEMU NVMe Ctrl serial FATHOM0001 namespace 1 and more".to_string()];
        assert_eq!(list_cell(&one, "targets", ", "), one[0]);
    }
}
