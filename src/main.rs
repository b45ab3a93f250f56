//! The `fcorr` binary: parse arguments, run the subcommand, exit with its code. Inside GitHub
//! Actions it masks fcorr's token and fences all output against workflow-command injection first.

#![warn(clippy::print_stdout, clippy::print_stderr)]

use fcorr::cli::Command;
use fcorr::publish::guard;

/// The released Linux binaries are static musl builds, and musl's malloc made them 1.6-1.8x
/// slower than a glibc build on a 100,000- to 1,000,000-case import (docs/benchmarks.md §17):
/// fcorr parses and writes reports on every core, allocating all the while.
#[cfg(target_env = "musl")]
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc keeps freed memory for a second and commits its arenas whole by default: +25 % peak
/// at a million cases. Freed memory goes back at once and arenas are committed as used, so the
/// peak stays that of the glibc build. Each option is set only while it holds mimalloc v3's
/// default: a `MIMALLOC_*` variable the user set wins, and another mimalloc version (other
/// option numbers, other defaults) is left as it is.
#[cfg(target_env = "musl")]
fn tune_allocator() {
    use libmimalloc_sys::{mi_option_get, mi_option_set, mi_option_t};
    // (option number in v3's `mi_option_e` (mimalloc.h), v3's default, the value wanted)
    const OPTIONS: [(mi_option_t, std::ffi::c_long, std::ffi::c_long); 2] = [
        (4, 2, 0),     // arena_eager_commit: 2 = on where the OS overcommits
        (15, 1000, 0), // purge_delay, in ms
    ];
    for (option, default, wanted) in OPTIONS {
        // SAFETY: reading and setting an option touch only mimalloc's option table, at any time.
        unsafe {
            if mi_option_get(option) == default {
                mi_option_set(option, wanted);
            }
        }
    }
}

fn main() {
    // SIGPIPE stays ignored, as Rust leaves it: a child that exits without reading its input
    // (a system under test that ignores stdin) or a reader of fcorr's own output that goes away
    // (`fcorr run | head -1`) is a failed write, never the death of the run. fcorr prints only
    // through `fcorr::console`, which stops printing to a stream once a write to it fails.
    #[cfg(target_env = "musl")]
    tune_allocator();
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
