//! The fathom command: its command line (`cli`) over the library.

mod cli;

fn main() {
    // Behave like other Unix tools when the reader of stdout goes away
    // (`fathom ... | head`): end quietly instead of panicking on EPIPE.
    // SAFETY: resetting a signal disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    std::process::exit(cli::main());
}
