//! How help is shown: `-h` a screen to find a flag in, each flag's first
//! sentence; `--help` every word of it.

/// `-h` gives each flag's first sentence and `--help` all of it, as
/// ripgrep's do: a screenful to find a flag in, then the whole story.
pub fn short_and_long(cmd: clap::Command) -> clap::Command {
    let cmd = cmd.mut_args(|arg| {
        if arg.get_long_help().is_some() {
            return arg;
        }
        let Some(full) = arg.get_help().map(ToString::to_string) else {
            return arg;
        };
        match first_sentence(&full) {
            Some(first) => arg.help(first).long_help(full),
            None => arg,
        }
    });
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|s| s.get_name().to_string())
        .collect();
    names
        .iter()
        .fold(cmd, |cmd, name| cmd.mut_subcommand(name, short_and_long))
}

/// The text up to its first full stop that ends a sentence (one followed
/// by a capital) or its first semicolon, outside parentheses, when more
/// follows.
pub fn first_sentence(text: &str) -> Option<String> {
    let mut depth = 0usize;
    for (i, c) in text.char_indices() {
        let rest = &text[i + c.len_utf8()..];
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ';' if depth == 0 && rest.starts_with(' ') => return Some(text[..i].to_string()),
            '.' if depth == 0
                && rest.starts_with(' ')
                && rest[1..].starts_with(char::is_uppercase) =>
            {
                return Some(text[..i].to_string());
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::first_sentence;

    #[test]
    fn the_first_sentence_ends_at_a_full_stop_or_a_semicolon_outside_parentheses() {
        assert_eq!(
            first_sentence("Block size; k/m suffixes. More here.").as_deref(),
            Some("Block size")
        );
        assert_eq!(
            first_sentence("Spread (a; b. C) of offsets. More.").as_deref(),
            Some("Spread (a; b. C) of offsets")
        );
        assert_eq!(first_sentence("e.g. 4k. then").as_deref(), None);
        assert_eq!(first_sentence("One sentence only."), None);
    }
}
