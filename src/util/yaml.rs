//! YAML as Kubernetes manifests are written by hand: block mappings and
//! sequences, strings plain where YAML reads them back as the same string
//! and double-quoted (JSON's escapes, which YAML shares) where it might
//! not, a file's text as a literal block. Only written, never read: the
//! values come from fathom, so a writer of JSON values is all it needs.

use serde_json::Value;

/// `documents` as one YAML stream, each after a `---` line.
pub fn stream(documents: &[Value]) -> String {
    let mut out = String::new();
    for document in documents {
        out.push_str("---\n");
        block(document, 0, &mut out);
    }
    out
}

/// A value that starts on a line of its own at `indent`.
fn block(value: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, v) in map {
                out.push_str(&pad);
                out.push_str(&scalar_string(key));
                out.push(':');
                after_key(v, indent, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                out.push_str(&pad);
                out.push('-');
                match item {
                    // A mapping in a list starts on the dash's line, its
                    // keys lined up two columns in.
                    Value::Object(map) if !map.is_empty() => {
                        let mut inner = String::new();
                        block(item, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(&inner[indent + 2..]);
                    }
                    _ => after_key(item, indent, out),
                }
            }
        }
        other => {
            out.push_str(&pad);
            out.push_str(&inline(other, indent));
            out.push('\n');
        }
    }
}

/// What follows `key:` (or `-`): a nested block on the next lines, or the
/// value on the same line.
fn after_key(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push('\n');
            block(value, indent + 2, out);
        }
        Value::Array(items) if !items.is_empty() => {
            out.push('\n');
            block(value, indent + 2, out);
        }
        other => {
            out.push(' ');
            out.push_str(&inline(other, indent));
            out.push('\n');
        }
    }
}

fn inline(value: &Value, indent: usize) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => match literal_block(s, indent + 2) {
            Some(text) => text,
            None => scalar_string(s),
        },
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
    }
}

/// A text of several lines as `|` with its lines indented, when YAML reads
/// that back as exactly the text: printable, no line starting with a space
/// at the first, no carriage returns.
fn literal_block(s: &str, indent: usize) -> Option<String> {
    if !s.contains('\n')
        || s.starts_with([' ', '\n'])
        || s.chars()
            .any(|c| c == '\r' || c == '\t' || (c.is_control() && c != '\n'))
        || s.lines().any(|l| l.ends_with(' '))
    {
        return None;
    }
    let body = s.trim_end_matches('\n');
    let chomp = match s.len() - body.len() {
        0 => "-",
        1 => "",
        _ => "+",
    };
    let pad = " ".repeat(indent);
    let mut text = format!("|{chomp}");
    for line in body.split('\n') {
        text.push('\n');
        if !line.is_empty() {
            text.push_str(&pad);
            text.push_str(line);
        }
    }
    if chomp == "+" {
        for _ in 1..s.len() - body.len() {
            text.push('\n');
        }
    }
    Some(text)
}

/// A string plain when YAML 1.1 and 1.2 readers both take it back as this
/// string, double-quoted otherwise.
fn scalar_string(s: &str) -> String {
    if plain_is_safe(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_else(|_| format!("{s:?}"))
    }
}

fn plain_is_safe(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "null", "y", "n", "~",
    ];
    let Some(first) = s.chars().next() else {
        return false;
    };
    let looks_numeric = s
        .trim_start_matches(['+', '-', '.'])
        .starts_with(|c: char| c.is_ascii_digit())
        || s.starts_with('.');
    (first.is_ascii_alphanumeric() || first == '/' || first == '_')
        && !looks_numeric
        && !WORDS.contains(&s.to_ascii_lowercase().as_str())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=+@".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn maps_lists_and_scalars_as_kubernetes_writes_them() {
        let doc = json!({
            "apiVersion": "batch/v1",
            "metadata": {"name": "fathom", "labels": {"app.kubernetes.io/name": "fathom"}},
            "spec": {
                "completions": 3,
                "suspend": false,
                "containers": [{"name": "fathom", "args": ["k8s", "pod", "--x", "10"]}],
                "empty": {},
                "none": [],
            },
            "data": {"job.fio": "[global]\nrw=read\n\n[j]\n"}
        });
        let text = stream(&[doc]);
        assert_eq!(
            text,
            "---
apiVersion: batch/v1
metadata:
  name: fathom
  labels:
    app.kubernetes.io/name: fathom
spec:
  completions: 3
  suspend: false
  containers:
    - name: fathom
      args:
        - k8s
        - pod
        - \"--x\"
        - \"10\"
  empty: {}
  none: []
data:
  job.fio: |
    [global]
    rw=read

    [j]
"
        );
    }

    #[test]
    fn strings_yaml_would_read_as_something_else_are_quoted() {
        for s in [
            "true",
            "No",
            "on",
            "1.5",
            "10",
            "-",
            "--rw",
            "a: b",
            "x #y",
            "",
            " lead",
            "~",
            "{index}",
            "*",
            "&a",
            "!tag",
            "%",
            "@x",
            "`x`",
            "2026-12-07T10:00:00Z",
        ] {
            assert!(scalar_string(s).starts_with('"'), "{s} should be quoted");
        }
        for s in [
            "fathom",
            "kubernetes.io/hostname",
            "/data",
            "run",
            "ReadWriteOnce",
        ] {
            assert_eq!(scalar_string(s), s);
        }
        // Text that a block would change stays quoted: a first line that
        // starts with a space, trailing spaces, carriage returns.
        assert!(inline(&json!("  a\nb"), 0).starts_with('"'));
        assert!(inline(&json!("a \nb"), 0).starts_with('"'));
        assert!(inline(&json!("a\r\nb"), 0).starts_with('"'));
        assert_eq!(inline(&json!("a\nb"), 2), "|-\n    a\n    b");
        assert_eq!(inline(&json!("a\n\n"), 0), "|+\n  a\n");
    }
}
