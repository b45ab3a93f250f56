//! Files fcorr writes stay whole and files it reads stay bounded (issue #21 points 7 and 8, and
//! the smaller ones on inputs): real full file systems (a tmpfs mounted and filled by the test),
//! real device files and FIFOs, real runs of the fcorr binary.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::support::disk::Tmpfs;
use crate::support::{copy_project, fcorr, repo};

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `cmd`, killing it and failing the test if it has not finished within `secs` (the bugs
/// these tests pin include hangs and unbounded memory growth).
fn within(mut cmd: Command, secs: u64) -> Output {
    let mut child = cmd.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Output { status, stdout: stdout.join().unwrap(), stderr: stderr.join().unwrap() }
}

/// A workspace with an eval suite: `sut.sh` prints `answer` for every prompt, the dataset is
/// `dataset` (file name and bytes), and `sut_extra` adds keys to the SUT table.
fn eval_workspace(answer: &str, dataset: (&str, &[u8]), sut_extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let sut = dir.path().join("sut.sh");
    std::fs::write(&sut, format!("#!/bin/sh\ncat >/dev/null\nprintf '%s\\n' '{answer}'\n")).unwrap();
    std::fs::set_permissions(&sut, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::write(dir.path().join(dataset.0), dataset.1).unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        format!(
            "[[suite]]\nname = \"e\"\nkind = \"eval\"\ndataset = \"{}\"\nsut = {{ type = \"command\", command = \"./sut.sh\"{sut_extra} }}\n",
            dataset.0
        ),
    )
    .unwrap();
    dir
}

fn run_eval(dir: &Path, extra: &[&str]) -> (fcorr::model::Run, Output) {
    let mut cmd = fcorr();
    cmd.current_dir(dir).args(["run", "--config", "fcorr.toml", "--out", "out", "--json"]).args(extra);
    let output = within(cmd, 120);
    let run = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("not a run ({e}): {}\n{}", text(&output.stdout), text(&output.stderr)));
    (run, output)
}

// ---- point 7: files a later run reads are whole or absent ----

#[test]
fn calibrate_on_a_full_disk_exits_3_naming_the_file_and_leaves_no_history_file_behind() {
    let Some(disk) = Tmpfs::mount("calibrate_on_a_full_disk", 256) else { return };
    let ws = tempfile::tempdir().unwrap();
    copy_project(&repo().join("examples/banks"), ws.path());
    // The bank's history lives on the small disk, which then fills up.
    let history = disk.path().join("history");
    copy_project(&ws.path().join("semantic/history"), &history);
    let before = disk.names("history");
    disk.fill();
    std::fs::write(
        ws.path().join("calibrator.py"),
        "import json, sys\nq = json.load(sys.stdin)\ne = q['expectations']\ne['expected_secondary'].append('biff_response')\nprint(json.dumps({'updated': e}))\n",
    )
    .unwrap();
    let calibrate = |extra: &[&str]| {
        let mut cmd = fcorr();
        cmd.current_dir(ws.path())
            .args(["calibrate", "retrieval", "--config", "fcorr.toml", "--calibrator", "python3 calibrator.py"])
            .arg("--history")
            .arg(&history)
            .args(["--scope", "single", "--test", "V2-MIX-001"])
            .args(extra);
        within(cmd, 120)
    };
    let output = calibrate(&["--write"]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "a harness failure, not a usage error: {stderr}");
    let today = time::OffsetDateTime::now_utc().date();
    let target = history.join(format!("expectations_{today}.json"));
    assert!(stderr.contains(&target.display().to_string()), "names the file: {stderr}");
    assert!(stderr.contains("No space left on device"), "names the OS error: {stderr}");
    assert_eq!(disk.names("history"), before, "nothing new left behind, not even a temporary file");
    // Once there is room again, the bank still reads, and the calibration can be written.
    disk.free();
    let dry = calibrate(&[]);
    assert_eq!(dry.status.code(), Some(0), "{}", text(&dry.stderr));
    let wrote = calibrate(&["--write"]);
    assert_eq!(wrote.status.code(), Some(0), "{}", text(&wrote.stderr));
    assert_eq!(disk.names("history").len(), before.len() + 1);
}

#[test]
fn an_answer_cache_on_a_full_disk_warns_once_and_leaves_no_entry_or_temporary_file() {
    let Some(disk) = Tmpfs::mount("answer_cache_on_a_full_disk", 64) else { return };
    let cache = disk.path().join("answers");
    std::fs::create_dir(&cache).unwrap();
    disk.fill();
    let cases = b"{\"id\": \"a\", \"prompt\": \"p\", \"expected\": \"ls\"}\n{\"id\": \"b\", \"prompt\": \"q\", \"expected\": \"ls\"}\n";
    let extra = format!(", cache = true, cache-dir = \"{}\"", cache.display());
    let ws = eval_workspace("ls", ("cases.jsonl", cases), &extra);
    let (run, output) = run_eval(ws.path(), &[]);
    let stderr = text(&output.stderr);
    // The run itself is unaffected: both answers judged.
    assert_eq!(output.status.code(), Some(0), "{stderr}");
    assert_eq!(run.totals.passed, 2);
    assert_eq!(stderr.matches("the answer cache cannot be written").count(), 1, "{stderr}");
    assert!(stderr.contains(&cache.display().to_string()) && stderr.contains("No space left on device"), "{stderr}");
    assert_eq!(disk.names("answers"), Vec::<String>::new(), "no partial entry, no temporary file");
}

#[test]
fn an_unwritable_answer_cache_warns_with_the_real_cause() {
    let Some(read_only) = Tmpfs::read_only("an_unwritable_answer_cache_warns") else { return };
    let cache = read_only.path().join("answers");
    let cases = b"{\"id\": \"a\", \"prompt\": \"p\", \"expected\": \"ls\"}\n";
    let extra = format!(", cache = true, cache-dir = \"{}\"", cache.display());
    let ws = eval_workspace("ls", ("cases.jsonl", cases), &extra);
    let (run, output) = run_eval(ws.path(), &[]);
    let stderr = text(&output.stderr);
    assert_eq!((output.status.code(), run.totals.passed), (Some(0), 1), "{stderr}");
    assert!(stderr.contains("the answer cache cannot be written"), "{stderr}");
    assert!(stderr.contains("Read-only file system") && !stderr.contains("No such file"), "{stderr}");
}

#[test]
fn an_unwritable_cache_directory_names_the_real_cause_not_a_missing_file() {
    // The virtualenv cache on a read-only mount: creating its directory fails with the real
    // cause (permission denied for a user, a read-only file system here); opening the lock
    // file inside the directory that could not be made would only say "No such file".
    let Some(cache) = Tmpfs::read_only("an_unwritable_cache_directory") else { return };
    let out = tempfile::tempdir().unwrap();
    let mut cmd = fcorr();
    cmd.env("FCORR_CACHE_DIR", cache.path().join("fcorr"))
        .arg("run")
        .arg(repo().join("examples/python-calculator"))
        .arg("--out")
        .arg(out.path());
    let output = within(cmd, 120);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    assert!(!stderr.contains("No such file or directory"), "{stderr}");
    assert!(stderr.contains(&cache.path().join("fcorr").display().to_string()), "names the directory: {stderr}");
}

// ---- point 8: every input file is bounded; special files are refused ----

/// `cmd` under a 2 GiB address-space limit, so a reader that never stops (the bug) dies of it
/// instead of taking the test machine down; the fixed reader never gets near it.
fn bounded(cmd: &Command) -> Command {
    let mut wrapped = Command::new("sh");
    wrapped.args(["-c", "ulimit -v 2097152 && exec \"$@\"", "sh"]).arg(cmd.get_program()).args(cmd.get_args());
    for (key, value) in cmd.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    if let Some(dir) = cmd.get_current_dir() {
        wrapped.current_dir(dir);
    }
    wrapped
}

fn mkfifo(path: &Path) {
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

/// A workspace whose `fcorr.toml` has a benchmark suite over `tasks.jsonl`, and `extra` on top.
fn benchmark_workspace(extra: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("fcorr.toml"),
        format!(
            "{extra}\n[[suite]]\nname = \"bench\"\nkind = \"benchmark\"\npath = \"tasks.jsonl\"\nexecutor = \"true\"\n"
        ),
    )
    .unwrap();
    dir
}

#[test]
fn a_config_quarantine_tasks_or_dataset_file_that_is_a_device_or_fifo_is_refused_at_once() {
    for special in ["/dev/zero", "fifo"] {
        // The quarantine file: a configuration error (exit 2) at its line (`suites list` does
        // not read it).
        let ws = benchmark_workspace(&format!("quarantine-file = \"{special}\""));
        std::fs::write(ws.path().join("tasks.jsonl"), "{\"id\": \"a\", \"repo\": \".\"}\n").unwrap();
        mkfifo(&ws.path().join("fifo"));
        let kind = if special == "fifo" { "a FIFO" } else { "a character device" };
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "o"]);
        let output = within(bounded(&cmd), 60);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{special}: {stderr}");
        assert!(stderr.contains("fcorr.toml: line 1") && stderr.contains(kind), "{special}: {stderr}");
        assert!(stderr.contains("not a regular file"), "{stderr}");
        // The configuration file itself.
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args(["suites", "list", "--config", special]);
        let output = within(bounded(&cmd), 60);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{special}: {stderr}");
        assert!(stderr.contains(kind) && stderr.contains("a configuration file only from a regular file"), "{stderr}");
        // The tasks file: `suites list` names it; a run makes it the suite's input error.
        let ws = benchmark_workspace("");
        let tasks = ws.path().join("tasks.jsonl");
        if special == "fifo" {
            mkfifo(&tasks);
        } else {
            std::os::unix::fs::symlink(special, &tasks).unwrap();
        }
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args(["suites", "list", "--config", "fcorr.toml"]);
        let output = within(bounded(&cmd), 60);
        let all = format!("{}{}", text(&output.stdout), text(&output.stderr));
        assert!(all.contains("tasks.jsonl") && all.contains(kind), "{special}: {all}");
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "o", "--json"]);
        let output = within(bounded(&cmd), 60);
        let run: fcorr::model::Run = serde_json::from_slice(&output.stdout).unwrap();
        let error = run.suites[0].error.as_ref().expect("an input error");
        assert!(error.message.contains(kind), "{special}: {}", error.message);
        assert_eq!(output.status.code(), Some(2));
        // An eval dataset: a configuration error that says what the file is.
        let ws = eval_workspace("ls", ("cases.jsonl", b""), "");
        let dataset = ws.path().join("cases.jsonl");
        std::fs::remove_file(&dataset).unwrap();
        if special == "fifo" {
            mkfifo(&dataset);
        } else {
            std::os::unix::fs::symlink(special, &dataset).unwrap();
        }
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args(["run", "--config", "fcorr.toml", "--out", "o"]);
        let output = within(bounded(&cmd), 60);
        let stderr = text(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("cases.jsonl: not a regular file"), "{special}: {stderr}");
    }
}

#[test]
fn a_plain_baseline_over_the_cap_is_refused_by_its_size_before_it_is_read() {
    let ws = tempfile::tempdir().unwrap();
    let cases = b"{\"id\": \"a\", \"prompt\": \"p\", \"expected\": \"ls\"}\n";
    let eval = eval_workspace("ls", ("cases.jsonl", cases), "");
    let (_, output) = run_eval(eval.path(), &[]);
    assert_eq!(output.status.code(), Some(0));
    // A 3 GiB file that takes no disk (sparse): reading it whole would take 3 GiB of memory.
    let big = ws.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(3 << 30).unwrap();
    let results = eval.path().join("out");
    let commands: Vec<Vec<std::ffi::OsString>> = vec![
        vec!["compare".into(), "--results".into(), results.clone().into(), "--baseline".into(), big.clone().into()],
        vec!["merge".into(), big.clone().into(), "--out".into(), ws.path().join("m").into()],
        vec!["report".into(), big.clone().into(), "--out".into(), ws.path().join("r").into()],
    ];
    for args in commands {
        let mut cmd = fcorr();
        cmd.args(&args);
        // 200 MiB of address space on top of the binary's own: enough for anything but the file.
        let output = within(bounded(&cmd), 60);
        let stderr = text(&output.stderr);
        assert!(
            stderr.contains(&big.display().to_string())
                && stderr.contains("is 3 GiB (3221225472 bytes), over the 2 GiB cap for a results file"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("shard the suites"), "what to do: {stderr}");
    }
}

/// fcorr writes ~450 bytes of results.json per case (448 MB at a million cases) and must read
/// them back: a results file under the cap but over the memory a run may take is parsed as it
/// is read, never held whole — here 1 GiB of zeros (sparse) within 200 MiB of address space,
/// refused at its first byte as not a results file.
#[test]
fn a_results_file_larger_than_memory_allows_is_parsed_as_it_is_read() {
    let ws = tempfile::tempdir().unwrap();
    let big = ws.path().join("big.json");
    std::fs::File::create(&big).unwrap().set_len(1 << 30).unwrap();
    for args in [["report", "--out", "r"], ["merge", "--out", "m"]] {
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args([args[0]]).arg(&big).args(&args[1..]);
        let output = within(bounded(&cmd), 60);
        let stderr = text(&output.stderr);
        assert!(stderr.contains(&big.display().to_string()), "{args:?}: {stderr}");
        assert!(stderr.contains("line 1, column 1: not an fcorr results file"), "{args:?}: {stderr}");
        assert!(!stderr.contains("cap for a results file") && !stderr.contains("memory"), "{args:?}: {stderr}");
    }
}

#[test]
fn a_report_swapped_for_a_fifo_is_refused_instead_of_waiting_for_a_writer() {
    // Report paths expand to regular files only; a file replaced by a FIFO between the listing
    // and the parse (a test process's leftovers) reaches the parser, which must not block.
    let ws = tempfile::tempdir().unwrap();
    let fifo = ws.path().join("report.xml");
    mkfifo(&fifo);
    for format in [None, Some("junit")] {
        let (done, wait) = std::sync::mpsc::channel();
        let path = fifo.clone();
        std::thread::spawn(move || {
            let parsed = fcorr::collect::parse_file(&path, format, &Default::default());
            let _ = done.send(parsed.map(|_| ()).map_err(|e| e.message));
        });
        let result = wait.recv_timeout(Duration::from_secs(20)).expect("parsing a FIFO blocked");
        let message = result.expect_err("a FIFO is not a report");
        assert!(message.contains("a FIFO (named pipe), not a regular file"), "{format:?}: {message}");
    }
}

// ---- the smaller ones ----

#[test]
fn a_byte_order_mark_at_the_start_of_a_jsonl_dataset_or_a_bank_file_is_accepted() {
    let cases = b"\xef\xbb\xbf{\"id\": \"a\", \"prompt\": \"p\", \"expected\": \"ls\"}\n";
    let ws = eval_workspace("ls", ("cases.jsonl", cases), "");
    let (run, output) = run_eval(ws.path(), &[]);
    assert_eq!((output.status.code(), run.totals.passed), (Some(0), 1), "{}", text(&output.stderr));
    // A bank file (JSON) saved with a BOM by a Windows editor.
    let banks = tempfile::tempdir().unwrap();
    copy_project(&repo().join("examples/banks"), banks.path());
    let bank = banks.path().join("state/state_bank.json");
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    bytes.extend(std::fs::read(&bank).unwrap());
    std::fs::write(&bank, bytes).unwrap();
    let mut cmd = fcorr();
    cmd.current_dir(banks.path()).args([
        "run",
        "--config",
        "fcorr.toml",
        "--filter",
        "handlers",
        "--json",
        "--out",
        "o",
    ]);
    let output = within(cmd, 120);
    let run: fcorr::model::Run = serde_json::from_slice(&output.stdout).unwrap();
    assert!(run.suites[0].error.is_none(), "{:?}", run.suites[0].error);
    assert!(run.suites[0].counts.total > 0);
}

#[test]
fn an_empty_dataset_is_no_tests_which_only_the_empty_gate_fails() {
    let ws = eval_workspace("ls", ("cases.jsonl", b""), "");
    let (run, output) = run_eval(ws.path(), &["--fail-on", "none"]);
    assert_eq!(output.status.code(), Some(0), "{}", text(&output.stderr));
    let suite = &run.suites[0];
    assert_eq!(suite.status, fcorr::model::SuiteStatus::NoTests);
    assert!(suite.error.is_none(), "not an error about report files: {:?}", suite.error);
    assert!(suite.diagnostics.iter().any(|d| d.message.contains("no case to run")), "{:?}", suite.diagnostics);
    // Zero tests is never a pass under the default gates.
    let (_, output) = run_eval(ws.path(), &[]);
    assert_eq!(output.status.code(), Some(1));
}

#[test]
fn a_json_answer_whose_output_is_a_number_is_judged_as_that_number() {
    let cases = concat!(
        "{\"id\": \"json\", \"prompt\": \"p\", \"expected\": 5}\n",
        "{\"id\": \"text\", \"prompt\": \"p\", \"expected\": \"5\"}\n",
        "{\"id\": \"number\", \"prompt\": \"p\", \"assert\": [{\"type\": \"number\", \"value\": 5}]}\n",
        "{\"id\": \"wrong\", \"prompt\": \"p\", \"expected\": 6}\n",
    );
    let ws = eval_workspace("{\"output\": 5}", ("cases.jsonl", cases.as_bytes()), "");
    let (run, _) = run_eval(ws.path(), &[]);
    let status = |id: &str| run.suites[0].cases.iter().find(|c| c.name == id).unwrap().status;
    for id in ["json", "text", "number"] {
        assert_eq!(status(id), fcorr::model::CaseStatus::Passed, "{id}");
    }
    let wrong = run.suites[0].cases.iter().find(|c| c.name == "wrong").unwrap();
    assert_eq!(wrong.status, fcorr::model::CaseStatus::Failed);
    assert!(wrong.message().unwrap_or("").contains("got `5`"), "{:?}", wrong.message());
}

#[test]
fn merging_a_zip_says_zips_are_not_supported_and_what_to_do() {
    let cases = b"{\"id\": \"a\", \"prompt\": \"p\", \"expected\": \"ls\"}\n";
    let ws = eval_workspace("ls", ("cases.jsonl", cases), "");
    run_eval(ws.path(), &[]);
    let zip = Command::new("python3")
        .current_dir(ws.path())
        .args(["-c", "import shutil; shutil.make_archive('results', 'zip', 'out')"])
        .status()
        .unwrap();
    assert!(zip.success());
    for command in ["merge", "report"] {
        let mut cmd = fcorr();
        cmd.current_dir(ws.path()).args([command, "results.zip", "--out", "m"]);
        let output = within(cmd, 60);
        let stderr = text(&output.stderr);
        assert!(stderr.contains("results.zip: it is a zip archive, and zips are not supported here"), "{stderr}");
        assert!(stderr.contains("unzip it first") && stderr.contains("give the folder"), "{stderr}");
    }
}

#[test]
fn a_baseline_score_outside_0_to_100_is_refused_not_shown_as_an_infinite_change() {
    let cases = b"{\"id\": \"a\", \"prompt\": \"p\", \"expected\": \"ls\"}\n";
    let ws = eval_workspace("ls", ("cases.jsonl", cases), "");
    run_eval(ws.path(), &[]);
    let mut base: serde_json::Value =
        serde_json::from_slice(&std::fs::read(ws.path().join("out/results.json")).unwrap()).unwrap();
    base["suites"][0]["score"]["value"] = serde_json::json!(-1e308);
    std::fs::write(ws.path().join("base.json"), base.to_string()).unwrap();
    // `compare`: the baseline is the input, so an input error naming it, the suite and the value.
    let mut cmd = fcorr();
    cmd.current_dir(ws.path()).args(["compare", "--results", "out", "--baseline", "base.json"]);
    let output = within(cmd, 60);
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert_eq!(output.status.code(), Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("base.json") && stderr.contains("score -1e308 is not a score"), "{stderr}");
    assert!(!stdout.contains("inf"), "{stdout}");
    // `ci --baseline FILE`: the file was named, so the same input error, before anything runs
    // (no report can show an infinite delta: none is written).
    let mut cmd = fcorr();
    cmd.current_dir(ws.path()).args(["ci", "--config", "fcorr.toml", "--out", "o2", "--baseline", "base.json"]);
    let output = within(cmd, 120);
    assert_eq!(output.status.code(), Some(2), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("score -1e308 is not a score"), "{}", text(&output.stderr));
    assert!(!ws.path().join("o2/comment.md").exists());
}
