//! The `fcorr` binary: parse arguments, run the subcommand, exit with its code. Inside GitHub
//! Actions it masks fcorr's token and fences all output against workflow-command injection first.

#![warn(clippy::print_stdout, clippy::print_stderr)]

use fcorr::cli::Command;
use fcorr::publish::guard;

fn main() {
    // SIGPIPE stays ignored, as Rust leaves it: a child that exits without reading its input
    // (a system under test that ignores stdin) or a reader of fcorr's own output that goes away
    // (`fcorr run | head -1`) is a failed write, never the death of the run. fcorr prints only
    // through `fcorr::console`, which stops printing to a stream once a write to it fails.
    let cli = fcorr::cli::parse();

    // Test names and failure messages are printed from here on: nothing may act as a runner
    // command. A panic must still lift the fence, or the job's later steps lose their commands.
    guard::start(stdout_is_a_document(&cli.command));
    // A stop signal that ends fcorr at once (before a run has anything to cancel) lifts the
    // fence first; once suites run, it cancels them and fcorr ends below, 128 + the signal.
    fcorr::cli::handle_stop_signals(guard::finish);
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        guard::finish_after_panic();
    }));

    let code = match cli.command.execute() {
        Ok(code) => code,
        Err(error) => {
            fcorr::errln!("fcorr: error: {}", fcorr::errors::chain(&error));
            error.exit_code()
        }
    };
    guard::finish();
    std::process::exit(fcorr::cli::exit_code(code));
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
