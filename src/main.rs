fn main() {
    std::process::exit(fathom::cli::main());
}
