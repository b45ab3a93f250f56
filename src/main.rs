//! The `fcorr` binary: parse arguments, run the subcommand, exit with its code. Inside GitHub
//! Actions it masks fcorr's token and fences all output against workflow-command injection first.

use clap::Parser;
use fcorr::cli::Command;
use fcorr::publish::guard;

fn main() {
    // Rust ignores SIGPIPE, which turns `fcorr ... | head` into a panic on the next print.
    // Dying quietly on a closed pipe is what shell users expect; results files are written
    // before anything is printed, so nothing computed is lost.
    #[cfg(unix)]
    // SAFETY: setting a signal disposition to its default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = fcorr::cli::Cli::parse();

    // Test names and failure messages are printed from here on: nothing may act as a runner
    // command. A panic must still lift the fence, or the job's later steps lose their commands.
    guard::start(stdout_is_a_document(&cli.command));
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        guard::finish_after_panic();
    }));

    let code = match cli.command.execute() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("fcorr: error: {error}");
            error.exit_code()
        }
    };
    guard::finish();
    std::process::exit(code);
}

/// True when stdout carries one JSON document another program reads: the fence then goes to
/// stderr, which the runner reads for commands too.
fn stdout_is_a_document(command: &Command) -> bool {
    match command {
        Command::Run(args) => args.json,
        Command::Ci(args) => args.run.json,
        Command::Import(args) => args.judge.json,
        Command::Merge(args) => args.judge.json,
        Command::Compare(args) => args.json,
        Command::Detect(args) => args.json,
        Command::Schema => true,
        Command::Suites(args) => {
            let fcorr::commands::suites::SuitesAction::List(list) = &args.action;
            list.json
        }
        Command::Report(_) | Command::Publish(_) | Command::Calibrate(_) => false,
    }
}
