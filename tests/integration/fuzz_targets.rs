//! The fuzz targets (`fuzz/`, `fcorr::fuzzing`) on every `cargo test`, bounded: each target over
//! its seed corpus (`fuzz/corpus/<target>/`), a fixed number of pseudo-random mutations of the
//! seeds, and hostile inputs (deep nesting, huge attributes and lines). The inputs are the same on
//! every run, so a failure reproduces; the input that failed is written under `target/`, to run
//! again with `cargo +nightly fuzz run <target> <file>` (or this test).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use fcorr::fuzzing;

/// Mutated inputs per target, shared between its seeds: few, so the test stays in the seconds
/// of a normal `cargo test` (debug build, 2 cores). `FCORR_FUZZ_MUTATIONS=5000` for a longer
/// local run; libFuzzer (`cargo +nightly fuzz run`) is the deep search.
fn mutations_per_target() -> usize {
    std::env::var("FCORR_FUZZ_MUTATIONS").ok().and_then(|n| n.parse().ok()).unwrap_or(40)
}

fn fuzz_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The seeds of a target, by file name.
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = fuzz_dir().join("corpus").join(target);
    let mut seeds: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && !generated(path))
        .map(|path| (path.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&path).unwrap()))
        .collect();
    seeds.sort();
    seeds
}

/// An input libFuzzer added to the directory (named by its SHA-1, and left out of git by
/// fuzz/.gitignore): a local run's growth, not a seed.
fn generated(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    name.len() == 40 && name.bytes().all(|b| b.is_ascii_hexdigit())
}

/// xorshift64*: a fixed sequence per target, no dependency.
struct Rng(u64);

impl Rng {
    fn for_target(target: &str) -> Rng {
        // FNV-1a of the name: each target its own sequence, the same on every run.
        let hash =
            target.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
        Rng(hash | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 { 0 } else { (self.next() % n as u64) as usize }
    }
}

/// Pieces that matter to the readers: markup, JSON, TAP and shell syntax, odd numbers.
const DICTIONARY: &[&[u8]] = &[
    b"<",
    b">",
    b"/>",
    b"</",
    b"=\"",
    b"\"",
    b"'",
    b"&",
    b"&amp;",
    b"&#x0;",
    b"<![CDATA[",
    b"]]>",
    b"<!--",
    b"-->",
    b"<?xml version=\"1.0\"?>",
    b"<testsuite>",
    b"<testcase name=\"t\">",
    b"</testcase>",
    b"<failure>",
    b"<skipped/>",
    b"<system-out>",
    b"time=\"",
    b"\xEF\xBB\xBF",
    b"{",
    b"}",
    b"[",
    b"]",
    b":",
    b",",
    b"null",
    b"\"status\":",
    b"\"duration\":",
    b"\"Action\":\"fail\"",
    b"\"Test\":",
    b"\n",
    b"\r\n",
    b"\t",
    b"ok 1 - ",
    b"not ok 2 - ",
    b"1..3",
    b"  ---\n",
    b"  ...\n",
    b"# Subtest: ",
    b"# SKIP",
    b"# TODO",
    b"Bail out!",
    b"test result: ",
    b" ... ok\n",
    b" ... FAILED\n",
    b"---- ",
    b"     Running ",
    b"panicked at ",
    b"$(",
    b"${",
    b"`",
    b"\\",
    b"|",
    b"&&",
    b";",
    b"<<",
    b"((",
    b"#",
    b"-rf /",
    b"\0",
    b"\xFF",
    b"\xC3",
    b"\xE2\x82",
    b"-1",
    b"0",
    b"1e308",
    b"1e309",
    b"NaN",
    b"inf",
    b"-0",
    b"4294967296",
    b"18446744073709551616",
    b"1.5e-400",
    b"\"\"\"",
    b"[[",
    b"]]",
    b"- ",
    b"? ",
    b"*a",
    b"&a ",
    b"!!",
    b"~",
];

/// A mutation of `seed`: one to four edits, some borrowing from another seed.
fn mutate(rng: &mut Rng, seed: &[u8], others: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut data = seed.to_vec();
    for _ in 0..1 + rng.below(4) {
        let at = rng.below(data.len() + 1);
        match rng.below(8) {
            0 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] ^= 1 << rng.below(8);
            }
            1 if !data.is_empty() => {
                let i = rng.below(data.len());
                data[i] = [0, b'<', b'>', b'"', b'{', b'\n', b'9', 0xFF][rng.below(8)];
            }
            2 | 3 => {
                let piece = DICTIONARY[rng.below(DICTIONARY.len())];
                data.splice(at..at, piece.iter().copied());
            }
            4 => {
                let end = (at + 1 + rng.below(32)).min(data.len());
                data.drain(at.min(end)..end);
            }
            5 => {
                let end = (at + 1 + rng.below(128)).min(data.len());
                let piece = data[at.min(end)..end].to_vec();
                let to = rng.below(data.len() + 1);
                data.splice(to..to, piece);
            }
            6 => data.truncate(at),
            _ => {
                let (_, other) = &others[rng.below(others.len())];
                let from = rng.below(other.len() + 1);
                let end = (from + 1 + rng.below(256)).min(other.len());
                data.splice(at..at, other[from.min(end)..end].iter().copied());
            }
        }
    }
    data
}

/// Inputs that cost a careless reader its stack, its memory or its time.
fn hostile() -> Vec<(&'static str, Vec<u8>)> {
    // Deep enough to overflow a recursive reader's 8 MiB stack (about 400 bytes a frame in a
    // debug build), big enough to pass the readers' text caps; larger sizes only cost time.
    let deep = 30_000;
    let big = 1 << 16;
    let text = |s: String| s.into_bytes();
    vec![
        ("deep XML", text("<testsuites>".to_string() + &"<testsuite><testcase>".repeat(deep / 2))),
        ("deep closed XML", text("<a>".repeat(deep) + &"</a>".repeat(deep))),
        ("deep JSON arrays", text("[".repeat(deep))),
        ("deep JSON objects", text("{\"results\":".repeat(deep))),
        ("deep JSON values", text(format!("{{\"id\":\"a\",\"prompt\":\"p\",\"expected\":{}", "[".repeat(deep)))),
        ("deep TOML", text(format!("[[test_cases]]\nid='a'\nprompt='p'\nexpected={}", "[".repeat(deep)))),
        ("deep YAML", text(format!("test_cases:\n- id: a\n  prompt: p\n  expected: {}", "[".repeat(deep)))),
        ("deep YAML blocks", text((0..500).map(|i| format!("{}- x\n", " ".repeat(i))).collect())),
        ("deep TAP subtests", text((0..500).map(|i| format!("{}# Subtest: s\n", "    ".repeat(i))).collect())),
        ("deep shell", text("$(".repeat(deep / 4) + &"(".repeat(deep / 4) + &"${".repeat(deep / 4))),
        ("huge attribute", text(format!("<testsuite name=\"{}\"><testcase name=\"t\"/></testsuite>", "a".repeat(big)))),
        (
            "huge text",
            text(format!(
                "<testsuite><testcase name=\"t\"><system-out>{}</system-out></testcase></testsuite>",
                "x&amp;".repeat(big / 5)
            )),
        ),
        ("huge line", text(format!("ok 1 - {}\n1..1\n", "x".repeat(big)))),
        (
            "huge JSON string",
            text(format!("{{\"Action\":\"output\",\"Test\":\"T\",\"Output\":\"{}\"}}\n", "x".repeat(big))),
        ),
        ("many cases", text("<testsuite>".to_string() + &"<testcase name=\"t\"/>".repeat(2_000) + "</testsuite>")),
        ("many lines", text("ok 1 - t\n".repeat(2_000))),
    ]
}

/// One failing input of a target.
struct Failure {
    target: String,
    input: String,
    message: String,
    saved: PathBuf,
}

/// Runs `target` on `data`; a panic becomes a `Failure`, its input saved for replaying.
fn attempt(target: &str, label: &str, data: &[u8]) -> Option<Failure> {
    let outcome = std::panic::catch_unwind(|| fuzzing::run(target, data));
    let panic = outcome.err()?;
    let message = panic
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target").join("fuzz-failures");
    std::fs::create_dir_all(&dir).unwrap();
    let saved = dir.join(format!("{target}-{}", label.replace(['/', ' '], "_")));
    std::fs::write(&saved, data).unwrap();
    Some(Failure { target: target.into(), input: label.into(), message, saved })
}

/// Every input of one target: seeds, mutations, hostile inputs. Stops at the first failure.
fn fuzz_one(target: &str, hostile: &[(&'static str, Vec<u8>)]) -> Option<Failure> {
    let started = std::time::Instant::now();
    let seeds = seeds(target);
    assert!(!seeds.is_empty(), "fuzz/corpus/{target}/ holds no seed");
    for (name, data) in &seeds {
        if let Some(failure) = attempt(target, &format!("seed {name}"), data) {
            return Some(failure);
        }
    }
    let mut rng = Rng::for_target(target);
    for n in 0..mutations_per_target() {
        let (name, seed) = &seeds[n % seeds.len()];
        let data = mutate(&mut rng, seed, &seeds);
        if let Some(failure) = attempt(target, &format!("mutation {n} of {name}"), &data) {
            return Some(failure);
        }
    }
    eprintln!("{target}: seeds and mutations in {:?}", started.elapsed());
    for (name, data) in hostile {
        let t = std::time::Instant::now();
        // Targets whose first byte picks a setting get the hostile text after it.
        for input in [data.clone(), [b"\x01".as_slice(), data].concat()] {
            if let Some(failure) = attempt(target, name, &input) {
                return Some(failure);
            }
        }
        eprintln!("{target}: {name} in {:?}", t.elapsed());
    }
    None
}

#[test]
fn every_target_holds_on_its_seeds_their_mutations_and_hostile_inputs() {
    let targets = fuzzing::targets();
    let hostile = hostile();
    let next = AtomicUsize::new(0);
    let failures = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(4);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            // Deep inputs must fail on their own limits, not on a test thread's small stack: the
            // main thread of `fcorr` (and of a libFuzzer run) has 8 MiB.
            let work = || {
                while let Some(target) = targets.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Some(failure) = fuzz_one(target, &hostile) {
                        failures.lock().unwrap().push(failure);
                    }
                }
            };
            std::thread::Builder::new().stack_size(8 << 20).spawn_scoped(scope, work).unwrap();
        }
    });
    let failures = failures.into_inner().unwrap();
    let report: Vec<String> = failures
        .iter()
        .map(|f| {
            format!(
                "{} on {}: {}\n  replay: cargo +nightly fuzz run {} {}",
                f.target,
                f.input,
                f.message,
                f.target,
                f.saved.display()
            )
        })
        .collect();
    assert!(report.is_empty(), "{} target(s) failed:\n{}", report.len(), report.join("\n"));
}

/// A target is a file in `fuzz/fuzz_targets/`, a `[[bin]]` in `fuzz/Cargo.toml` and a seed
/// directory, each named as `fcorr::fuzzing::targets()` names it; a report parser added to
/// `collect::PARSERS` is a target from there, and this test says what it still lacks.
#[test]
fn every_target_has_its_file_its_bin_and_seeds() {
    let dir = fuzz_dir();
    let targets: BTreeSet<String> = fuzzing::targets().into_iter().collect();
    let stems = |path: &Path| -> BTreeSet<String> {
        std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
            .collect()
    };
    assert_eq!(stems(&dir.join("fuzz_targets")), targets, "fuzz/fuzz_targets/*.rs and fcorr::fuzzing::targets()");
    assert_eq!(stems(&dir.join("corpus")), targets, "fuzz/corpus/* and fcorr::fuzzing::targets()");
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    for target in &targets {
        let source = std::fs::read_to_string(dir.join("fuzz_targets").join(format!("{target}.rs"))).unwrap();
        assert!(
            source.contains(&format!("fcorr::fuzzing::run(\"{target}\", data)")),
            "{target}.rs runs another target"
        );
        let bin = format!("[[bin]]\nname = \"{target}\"\npath = \"fuzz_targets/{target}.rs\"\n");
        assert!(manifest.contains(&bin), "fuzz/Cargo.toml has no [[bin]] for {target}");
    }
}
