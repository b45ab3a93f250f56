//! The `fcorr` binary: parse arguments, run the subcommand, exit with its code.

use clap::Parser;

fn main() {
    // Rust ignores SIGPIPE, which turns `fcorr ... | head` into a panic on the next print.
    // Dying quietly on a closed pipe is what shell users expect; results files are written
    // before anything is printed, so nothing computed is lost.
    // SAFETY: setting a signal disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = fcorr::cli::Cli::parse();
    let code = match cli.command.execute() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fcorr: error: {error}");
            error.exit_code()
        }
    };
    std::process::exit(code);
}
