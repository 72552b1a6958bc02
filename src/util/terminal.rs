//! Words that fit the terminal: its width, and prose lines wrapped to it
//! (tables are narrowed where they are drawn; a pipe or a file gets every
//! line whole, for grep).

use std::os::fd::{AsFd, AsRawFd, BorrowedFd};

/// The columns of the terminal `fd` is, or None when it is not one.
pub fn columns(fd: BorrowedFd<'_>) -> Option<usize> {
    if !std::io::IsTerminal::is_terminal(&fd) {
        return None;
    }
    let mut size: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes a winsize into the one given.
    let asked = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TIOCGWINSZ, &mut size) };
    (asked == 0 && size.ws_col > 0).then_some(size.ws_col as usize)
}

/// Standard error's columns, when it is a terminal.
pub fn stderr_columns() -> Option<usize> {
    columns(std::io::stderr().as_fd())
}

/// Standard output's columns, when it is a terminal.
pub fn stdout_columns() -> Option<usize> {
    columns(std::io::stdout().as_fd())
}

/// Whether `line` is a row or border of a drawn table: those are
/// narrowed by dropping or wrapping cells, never broken here.
fn drawn(line: &str) -> bool {
    line.trim_start()
        .starts_with(['│', '┌', '└', '╞', '├', '┆', '|', '+'])
}

/// `text` with each prose line wider than `width` broken at spaces, its
/// continuation indented two past the line's own indent, so a warning's
/// second line reads as part of it.
pub fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 32);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        if line.chars().count() <= width || drawn(line) || line.contains('\r') {
            out.push_str(line);
            continue;
        }
        let indent: String = line.chars().take_while(|c| *c == ' ').collect();
        let more = format!("{indent}  ");
        let options = textwrap::Options::new(width)
            .subsequent_indent(&more)
            .break_words(true);
        out.push_str(&textwrap::wrap(line, options).join("\n"));
    }
    out
}

/// `text` wrapped at `width` when one is given, else as it is.
pub fn wrap_at(text: String, width: Option<usize>) -> String {
    match width {
        Some(w) => wrap(&text, w),
        None => text,
    }
}

/// `line` on standard error, wrapped at its terminal's width.
pub fn say(line: &str) {
    eprintln!("{}", wrap_at(line.to_string(), stderr_columns()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_wraps_with_its_continuation_indented_and_tables_do_not() {
        let warning = "warning: buffered reads of a region that fits in free memory: likely served from the page cache, not the disk";
        let table = format!("│ {} │", "x".repeat(120));
        let text = format!(
            "{warning}\n{table}\n  limited by: {}\nshort",
            "word ".repeat(30)
        );
        let wrapped = wrap(&text, 60);
        for line in wrapped.lines().filter(|l| !l.starts_with('│')) {
            assert!(line.chars().count() <= 60, "{line}");
        }
        assert!(wrapped.contains(&table), "tables are narrowed where drawn");
        let second = wrapped.lines().nth(1).unwrap();
        assert!(
            second.starts_with("  ") && !second.starts_with("   "),
            "{wrapped}"
        );
        assert!(wrapped.contains("\n    word"), "{wrapped}");
        assert!(wrapped.ends_with("\nshort"));
        assert_eq!(wrap("as it is\n", 60), "as it is\n");
    }
}
