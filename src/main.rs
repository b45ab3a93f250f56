//! The `fcorr` binary: parse arguments, run the subcommand, exit with its code.

use clap::Parser;

fn main() {
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
