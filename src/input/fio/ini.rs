//! fio's INI files as fio reads them: sections and options, `include`,
//! `${VAR}` and `$(( ))` arithmetic, comments; bounded in size and depth.

use crate::util::error::UsageError;
use std::path::Path;

/// `include` nesting deeper than this is a loop.
pub(super) const MAX_INCLUDE_DEPTH: usize = 8;

/// A job file or an included one, through the gate: a regular file (a
/// FIFO or /dev/zero is refused at once), within a job file's bound.
pub(super) fn read_limited(path: &Path) -> Result<String, String> {
    crate::gate::read::text(path, crate::gate::read::JOB_FILE).map_err(|e| {
        e.0.strip_prefix(&format!("{}: ", path.display()))
            .map_or(e.0.clone(), str::to_string)
    })
}

/// One `key[=value]` line, where it came from.
#[derive(Debug, Clone)]
pub(super) struct Opt {
    pub(super) key: String,
    pub(super) value: Option<String>,
    pub(super) at: String,
}

#[derive(Debug)]
pub(super) struct Section {
    pub(super) name: String,
    pub(super) opts: Vec<Opt>,
    /// The first line of it that could not be read (`${VAR}` of a variable
    /// that is not set): said only if the section is run, since fio reads
    /// no section that `--section` leaves out.
    pub(super) unreadable: Option<String>,
}

/// The first problem of the sections that are run, if any.
pub(super) fn check_readable(sections: &[Section]) -> Result<(), UsageError> {
    match sections.iter().find_map(|s| s.unreadable.clone()) {
        Some(problem) => Err(UsageError(problem)),
        None => Ok(()),
    }
}

/// Reads `path` and the files it includes into sections, with `${VAR}`
/// expanded from the environment.
pub(super) fn read_sections(
    path: &Path,
    depth: usize,
    out: &mut Vec<Section>,
) -> Result<(), UsageError> {
    let name = path.display().to_string();
    if depth > MAX_INCLUDE_DEPTH {
        return Err(UsageError(format!(
            "{name}: included more than {MAX_INCLUDE_DEPTH} deep (an include loop?)"
        )));
    }
    let text = read_limited(path).map_err(|e| UsageError(format!("job file {name}: {e}")))?;
    for (i, raw) in text.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        let line = raw.trim();
        if line.is_empty() || line.starts_with(['#', ';']) {
            continue;
        }
        let line = match expand_env(strip_comment(line)).and_then(|l| expand_expressions(&l)) {
            Ok(line) => line,
            Err(m) => match out.last_mut() {
                Some(section) if !line.starts_with('[') => {
                    section.unreadable.get_or_insert(format!("{at}: {m}"));
                    continue;
                }
                _ => return Err(UsageError(format!("{at}: {m}"))),
            },
        };
        if let Some(file) = line.strip_prefix("include ") {
            let file = Path::new(file.trim());
            let file = if file.is_relative() {
                path.parent().unwrap_or(Path::new(".")).join(file)
            } else {
                file.to_path_buf()
            };
            read_sections(&file, depth + 1, out)?;
            continue;
        }
        if let Some(section) = line.strip_prefix('[') {
            let section = section
                .strip_suffix(']')
                .ok_or_else(|| UsageError(format!("{at}: a section line is [NAME]")))?;
            out.push(Section {
                name: section.trim().to_string(),
                opts: Vec::new(),
                unreadable: None,
            });
            continue;
        }
        let section = out
            .last_mut()
            .ok_or_else(|| UsageError(format!("{at}: option before any [section]")))?;
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim().to_string())),
            None => (line.as_str(), None),
        };
        section.opts.push(Opt {
            key: key.to_ascii_lowercase(),
            value,
            at,
        });
    }
    Ok(())
}

/// The line without a trailing `; comment` or `# comment` (one that
/// follows blank space, so that a `#` inside a file name stays).
pub(super) fn strip_comment(line: &str) -> &str {
    let cut = line
        .char_indices()
        .zip(line.chars().skip(1))
        .find(|((_, c), next)| c.is_whitespace() && matches!(next, ';' | '#'))
        .map(|((i, _), _)| i);
    cut.map_or(line, |i| line[..i].trim_end())
}

/// `${VAR}` replaced by the variable's value, as fio does.
pub(super) fn expand_env(line: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let end = rest[start..]
            .find('}')
            .ok_or_else(|| format!("'{}' has no closing brace", &rest[start..]))?;
        let var = &rest[start + 2..start + end];
        let value =
            std::env::var(var).map_err(|_| format!("environment variable {var} is not set"))?;
        out.push_str(&value);
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// fio's keywords (`$ncpus`, `$mb_memory`, `$pagesize`) replaced by this
/// machine's values, and a value that is arithmetic (`(8*1024)`,
/// `5*1024*1024*$mb_memory/8`) replaced by its result, as fio evaluates
/// them.
pub(super) fn expand_expressions(line: &str) -> Result<String, String> {
    let Some((key, value)) = line.split_once('=').filter(|_| !line.starts_with('[')) else {
        return Ok(line.to_string());
    };
    let mut value = value.trim().to_string();
    let mut keyword_used = false;
    for (keyword, amount) in [
        ("$ncpus", machine::cpus()),
        ("$mb_memory", machine::memory_mb()),
        ("$pagesize", machine::page_size()),
    ] {
        keyword_used |= value.contains(keyword);
        value = value.replace(keyword, &amount.to_string());
    }
    if let Some(bad) = value.find('$').map(|i| &value[i..]) {
        let word: String = bad
            .chars()
            .take_while(|c| *c == '$' || c.is_alphanumeric() || *c == '_')
            .collect();
        return Err(format!(
            "{word}: fio's keywords are $ncpus, $mb_memory and $pagesize"
        ));
    }
    // fio evaluates an expression in parentheses, or one around a keyword
    // (its keyword replacement adds them); `bssplit=64k/100` is a split.
    if (keyword_used || value.starts_with('(')) && arithmetic::is_expression(&value) {
        value = arithmetic::evaluate(&value).map_err(|m| format!("{}={value}: {m}", key.trim()))?;
    }
    Ok(format!("{}={value}", key.trim()))
}

/// What fio's keywords stand for on this machine.
pub(super) mod machine {
    pub fn cpus() -> u64 {
        std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
    }

    pub fn memory_mb() -> u64 {
        // SAFETY: sysconf reads a constant of the running system.
        let (pages, size) = unsafe {
            (
                libc::sysconf(libc::_SC_PHYS_PAGES),
                libc::sysconf(libc::_SC_PAGESIZE),
            )
        };
        (pages.max(0) as u64 * size.max(0) as u64) >> 20
    }

    pub fn page_size() -> u64 {
        // SAFETY: as above.
        unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(0) as u64
    }
}

/// fio's arithmetic in option values: + - * / % ^, parentheses, and
/// numbers with k/m/g/t/p suffixes (powers of 1024).
pub(super) mod arithmetic {
    /// Whether `v` is arithmetic rather than a plain value, a range
    /// (`4k-64k`), a list or a name.
    pub fn is_expression(v: &str) -> bool {
        let allowed = |c: char| c.is_ascii_digit() || " .+-*/%^()kKmMgGtTpPiIbB".contains(c);
        // `25%` is a share, not a remainder.
        v.chars().all(allowed)
            && !v.ends_with('%')
            && (v.starts_with('(') || v.contains(['*', '/', '%', '^', '+']))
    }

    pub fn evaluate(v: &str) -> Result<String, String> {
        let tokens: Vec<char> = v.chars().filter(|c| !c.is_whitespace()).collect();
        let mut p = Parser { t: &tokens, i: 0 };
        let x = p.expr()?;
        if p.i != tokens.len() {
            return Err(format!(
                "cannot read the expression from '{}'",
                tokens[p.i..].iter().collect::<String>()
            ));
        }
        if !x.is_finite() {
            return Err("the expression has no finite value".into());
        }
        Ok(if x.fract() == 0.0 && x.abs() < 1e18 {
            format!("{}", x as i64)
        } else {
            format!("{x}")
        })
    }

    struct Parser<'a> {
        t: &'a [char],
        i: usize,
    }

    impl Parser<'_> {
        fn peek(&self) -> Option<char> {
            self.t.get(self.i).copied()
        }

        fn expr(&mut self) -> Result<f64, String> {
            let mut x = self.term()?;
            while let Some(op @ ('+' | '-')) = self.peek() {
                self.i += 1;
                let y = self.term()?;
                x = if op == '+' { x + y } else { x - y };
            }
            Ok(x)
        }

        fn term(&mut self) -> Result<f64, String> {
            let mut x = self.power()?;
            while let Some(op @ ('*' | '/' | '%')) = self.peek() {
                self.i += 1;
                let y = self.power()?;
                x = match op {
                    '*' => x * y,
                    '/' if y == 0.0 => return Err("division by zero".into()),
                    '/' => x / y,
                    _ if y == 0.0 => return Err("division by zero".into()),
                    _ => x % y,
                };
            }
            Ok(x)
        }

        fn power(&mut self) -> Result<f64, String> {
            let base = self.unary()?;
            if self.peek() == Some('^') {
                self.i += 1;
                return Ok(base.powf(self.power()?));
            }
            Ok(base)
        }

        fn unary(&mut self) -> Result<f64, String> {
            if self.peek() == Some('-') {
                self.i += 1;
                return Ok(-self.unary()?);
            }
            if self.peek() == Some('(') {
                self.i += 1;
                let x = self.expr()?;
                if self.peek() != Some(')') {
                    return Err("a '(' has no ')'".into());
                }
                self.i += 1;
                return Ok(x);
            }
            self.number()
        }

        fn number(&mut self) -> Result<f64, String> {
            let start = self.i;
            while self.peek().is_some_and(|c| c.is_ascii_digit() || c == '.') {
                self.i += 1;
            }
            let text: String = self.t[start..self.i].iter().collect();
            let n: f64 = text.parse().map_err(|_| match self.peek() {
                Some(c) => format!("expected a number at '{c}'"),
                None => "the expression ends early".to_string(),
            })?;
            let scale = match self.peek().map(|c| c.to_ascii_lowercase()) {
                Some('k') => 1u64 << 10,
                Some('m') => 1 << 20,
                Some('g') => 1 << 30,
                Some('t') => 1 << 40,
                Some('p') => 1 << 50,
                _ => return Ok(n),
            };
            self.i += 1;
            // 4KiB, 4kb: the suffix's tail says nothing more.
            while self
                .peek()
                .is_some_and(|c| matches!(c.to_ascii_lowercase(), 'i' | 'b'))
            {
                self.i += 1;
            }
            Ok(n * scale as f64)
        }
    }
}
