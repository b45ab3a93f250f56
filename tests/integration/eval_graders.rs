//! Eval graders end to end (#23 points 1–6): the real fcorr binary runs datasets whose answers
//! come from a real command SUT and are judged by script graders in Python and Node (real
//! processes, one hanging, one printing garbage), a grader model and an embeddings endpoint on a
//! loopback HTTP server, lexical metrics and JSON Schema checked against independent Python
//! implementations (rapidfuzz, rouge-score, sacrebleu, jsonschema from PyPI), weighted
//! thresholds and `not-`.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command as StdCommand;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::support::{fcorr, repo};
use fcorr::model::{AssertionOutcome, Case, CaseStatus, Run};
use serde_json::{Value, json};

/// A suite directory: fcorr.toml (the suite's plain `keys`, its SUT, then `tables` such as
/// `[suite.grader]`), the dataset, a SUT answering plain text by case id, and extra files.
fn suite_dir(
    keys: &str,
    tables: &str,
    dataset: &str,
    answers: &[(&str, &str)],
    files: &[(&str, &str)],
) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let mut sut = String::from("#!/bin/sh\ncase \"$1\" in\n");
    for (id, answer) in answers {
        sut.push_str(&format!("  {id}) printf '%s\\n' '{}' ;;\n", answer.replace('\'', "'\\''")));
    }
    sut.push_str("esac\n");
    std::fs::write(dir.path().join("sut.sh"), sut).unwrap();
    std::fs::write(dir.path().join("cases.toml"), dataset).unwrap();
    for (name, text) in files {
        let path = dir.path().join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let config = format!(
        "[[suite]]\nname = \"graded\"\nkind = \"eval\"\ndataset = \"cases.toml\"\n{keys}\n\n[suite.sut]\ntype = \"command\"\ncommand = \"sh ./sut.sh {{id}}\"\nstdin = \"none\"\nanswer = \"text\"\ntimeout = 10\nretries = 0\n{tables}\n"
    );
    std::fs::write(dir.path().join("fcorr.toml"), config).unwrap();
    dir
}

/// Runs fcorr on the directory; the run and fcorr's stderr.
fn run_fcorr(dir: &Path) -> (Run, String) {
    let out = dir.join("out");
    let output = fcorr()
        .args(["run", "--no-cache", "--config"])
        .arg(dir.join("fcorr.toml"))
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    let text = std::fs::read_to_string(out.join("results.json"))
        .unwrap_or_else(|e| panic!("no results.json ({e}); stderr:\n{stderr}"));
    (serde_json::from_str(&text).unwrap(), stderr)
}

fn case<'a>(run: &'a Run, id: &str) -> &'a Case {
    run.suites[0].cases.iter().find(|c| c.name == id).unwrap_or_else(|| panic!("case {id}: {:#?}", run.suites[0]))
}

fn outcome<'a>(case: &'a Case, kind: &str) -> &'a AssertionOutcome {
    case.extra()
        .eval()
        .assertions
        .iter()
        .find(|a| a.kind == kind)
        .unwrap_or_else(|| panic!("{kind} in {:#?}", case.extra().eval().assertions))
}

const PYTHON_GRADER: &str = r#"import json, sys
data = json.load(sys.stdin)
expected = data["case"]["tags"]["city"]
answer = data["answer"]
ok = expected.lower() in answer.lower()
print(json.dumps({"pass": ok, "score": 1.0 if ok else 0.25, "reason": f"python: {expected!r} {'in' if ok else 'not in'} {answer!r}"}))
"#;

const NODE_GRADER: &str = r#"let input = "";
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
  const data = JSON.parse(input);
  const words = String(data.answer).split(/\s+/).length;
  const pass = words <= 3;
  console.log(JSON.stringify({ pass, score: pass ? 1 : 0, reason: `node: ${words} words` }));
});
"#;

#[test]
fn script_graders_in_python_and_node_judge_and_their_failures_are_errors_naming_them() {
    let dataset = r#"
[[test_cases]]
id = "short"
prompt = "capital of France?"
tags = { city = "Paris" }
assert = [
  { type = "script", command = "python3 graders/check.py" },
  { type = "script", command = ["node", "graders/short.js"] },
]

[[test_cases]]
id = "long"
prompt = "capital of France?"
tags = { city = "Paris" }
assert = [
  { type = "script", command = "python3 graders/check.py" },
  { type = "script", command = ["node", "graders/short.js"] },
]

[[test_cases]]
id = "hang"
prompt = "p"
assert = [{ type = "script", command = "python3 -c 'import time; time.sleep(60)'", timeout = 1 }]

[[test_cases]]
id = "garbage"
prompt = "p"
assert = [{ type = "script", command = "echo this-is-not-a-grade" }]

[[test_cases]]
id = "crash"
prompt = "p"
assert = [{ type = "script", command = "echo 'grader broke' >&2; exit 4" }]
"#;
    let dir = suite_dir(
        "",
        "",
        dataset,
        &[
            ("short", "It is Paris"),
            ("long", "The capital of France is the city of Lyon"),
            ("hang", "x"),
            ("garbage", "x"),
            ("crash", "x"),
        ],
        &[("graders/check.py", PYTHON_GRADER), ("graders/short.js", NODE_GRADER)],
    );
    let started = Instant::now();
    let (run, stderr) = run_fcorr(dir.path());
    assert!(
        started.elapsed() < Duration::from_secs(40),
        "the hanging grader was killed at 1 s: {:?}",
        started.elapsed()
    );

    let short = case(&run, "short");
    assert_eq!(short.status, CaseStatus::Passed, "{short:#?}\n{stderr}");
    assert_eq!(short.extra().eval().assertions.len(), 2);
    assert!(
        short.extra().eval().assertions[0].reason.as_deref().unwrap().starts_with("python: 'Paris' in"),
        "{short:#?}"
    );
    assert_eq!(short.extra().eval().assertions[1].reason.as_deref(), Some("node: 3 words"));

    let long = case(&run, "long");
    assert_eq!(long.status, CaseStatus::Failed);
    assert_eq!((long.extra().eval().assertions[0].pass, long.extra().eval().assertions[0].score), (false, 0.25));
    assert_eq!(
        (long.extra().eval().assertions[1].pass, long.extra().eval().assertions[1].reason.as_deref()),
        (false, Some("node: 9 words"))
    );
    assert_eq!(long.extra().score, Some(12.5), "(0.25 + 0) / 2");
    assert!(long.message().unwrap().starts_with("incorrect (script): python:"), "{:?}", long.message());
    assert!(long.details().as_deref().unwrap().contains("✗ script (weight 1, score 0.00): node: 9 words"), "{long:#?}");

    let hang = case(&run, "hang");
    assert_eq!(hang.status, CaseStatus::Error);
    assert_eq!(hang.extra().eval().reasons[0].code, "grader-error");
    let message = hang.extra().eval().reasons[0].message.as_deref().unwrap();
    assert!(message.contains("time.sleep(60)") && message.contains("no grade within 1s"), "{message}");

    let garbage = case(&run, "garbage");
    assert_eq!(garbage.status, CaseStatus::Error);
    let message = garbage.extra().eval().reasons[0].message.as_deref().unwrap();
    assert!(message.contains("echo this-is-not-a-grade") && message.contains("`this-is-not-a-grade`"), "{message}");
    assert!(garbage.extra().eval().assertions[0].error && !garbage.extra().eval().assertions[0].pass);

    let crash = case(&run, "crash");
    let message = crash.extra().eval().reasons[0].message.as_deref().unwrap();
    assert!(message.contains("exited with code 4") && message.contains("grader broke"), "{message}");
}

/// A loopback OpenAI-compatible server: `/chat/completions` grades (deterministically, from the
/// prompt it is sent) and `/embeddings` answers letter-frequency vectors. It records every body.
struct Loopback {
    url: String,
    bodies: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Loopback {
    fn start() -> Loopback {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = bodies.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let seen = seen.clone();
                std::thread::spawn(move || {
                    let mut reader = BufReader::new(stream.try_clone().unwrap());
                    let mut request_line = String::new();
                    reader.read_line(&mut request_line).unwrap();
                    let path = request_line.split_whitespace().nth(1).unwrap_or("").to_string();
                    let mut length = 0;
                    loop {
                        let mut line = String::new();
                        reader.read_line(&mut line).unwrap();
                        if line.trim().is_empty() {
                            break;
                        }
                        if let Some((name, value)) = line.split_once(':')
                            && name.eq_ignore_ascii_case("content-length")
                        {
                            length = value.trim().parse().unwrap();
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    let body: Value = serde_json::from_slice(&body).unwrap();
                    seen.lock().unwrap().push((path.clone(), body.clone()));
                    let answer = if path.ends_with("/embeddings") {
                        let text = body["input"][0].as_str().unwrap().to_lowercase();
                        let vector: Vec<f64> =
                            ('a'..='z').map(|l| text.chars().filter(|c| *c == l).count() as f64).collect();
                        json!({"data": [{"index": 0, "embedding": vector}], "model": body["model"]})
                    } else {
                        let prompt = body["messages"].as_array().unwrap().last().unwrap()["content"].as_str().unwrap();
                        let content = grade(prompt);
                        json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                               "usage": {"prompt_tokens": 50, "completion_tokens": 20, "total_tokens": 70}})
                    };
                    let text = answer.to_string();
                    let _ = write!(
                        stream,
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                        text.len()
                    );
                });
            }
        });
        Loopback { url, bodies }
    }
}

fn between<'a>(text: &'a str, open: &str, close: &str) -> &'a str {
    let start = text.find(open).map(|i| i + open.len()).unwrap_or(0);
    let end = text[start..].find(close).map(|i| start + i).unwrap_or(text.len());
    text[start..end].trim()
}

/// The loopback grader: a rubric `mentions X` passes when the output contains X; a factuality
/// question passes when the submission contains the expert answer; a custom prompt
/// `CUSTOM rubric=… answer=…` is graded like a rubric. Replies in a code fence, as models do.
fn grade(prompt: &str) -> String {
    let (needle, answer) = if let Some(custom) = prompt.strip_prefix("CUSTOM ") {
        (between(custom, "rubric=", ";").trim_start_matches("mentions ").to_string(), between(custom, "answer=", "\n"))
    } else if prompt.contains("<expert>") {
        (between(prompt, "<expert>", "</expert>").to_string(), between(prompt, "<submission>", "</submission>"))
    } else {
        (
            between(prompt, "<rubric>", "</rubric>").trim_start_matches("mentions ").to_string(),
            between(prompt, "<output>", "</output>"),
        )
    };
    let pass = answer.to_lowercase().contains(&needle.to_lowercase());
    let score = if pass { 0.9 } else { 0.1 };
    format!(
        "Here is my grade:\n```json\n{}\n```",
        json!({"reason": format!("looked for {needle:?} in {answer:?}"), "pass": pass, "score": score})
    )
}

#[test]
fn llm_rubric_factuality_and_similar_use_the_suite_grader_and_embeddings_on_loopback() {
    let server = Loopback::start();
    let dataset = r#"
[[test_cases]]
id = "paris"
prompt = "capital of France?"
expected = "Paris"
assert = [
  { type = "llm-rubric", value = "mentions Paris" },
  { type = "factuality" },
  { type = "similar", value = "paris", threshold = 0.99 },
]

[[test_cases]]
id = "lyon"
prompt = "capital of France?"
expected = "Paris"
assert = [
  { type = "llm-rubric", value = "mentions Paris" },
  { type = "factuality", value = "Paris" },
  { type = "not-similar", value = "paris", threshold = 0.9 },
]
"#;
    let keys = format!(
        "\n[suite.grader]\ntype = \"openai\"\nbase-url = \"{url}\"\nmodel = \"grader\"\ntimeout = 10\n\n[suite.embeddings]\nbase-url = \"{url}\"\nmodel = \"letters\"\n",
        url = server.url
    );
    let dir = suite_dir("", &keys, dataset, &[("paris", "Paris"), ("lyon", "Lyon")], &[]);
    let (run, stderr) = run_fcorr(dir.path());

    let paris = case(&run, "paris");
    assert_eq!(paris.status, CaseStatus::Passed, "{paris:#?}\n{stderr}");
    let rubric = outcome(paris, "llm-rubric");
    assert_eq!((rubric.pass, rubric.score), (true, 0.9));
    assert_eq!(rubric.reason.as_deref(), Some("looked for \"Paris\" in \"Paris\""), "the grader's reasoning is kept");
    assert!(outcome(paris, "factuality").pass);
    let similar = outcome(paris, "similar");
    assert_eq!((similar.score, similar.threshold), (1.0, Some(0.99)), "`Paris` and `paris` have the same letters");

    let lyon = case(&run, "lyon");
    assert_eq!(lyon.status, CaseStatus::Failed);
    assert!(!outcome(lyon, "llm-rubric").pass && !outcome(lyon, "factuality").pass);
    // Cosine of the letter counts of `lyon` and `paris`: they share no letter.
    let not_similar = outcome(lyon, "not-similar");
    assert_eq!((not_similar.pass, not_similar.score), (true, 1.0));
    // `expected` is itself a check (equals), first in order; the others are named after it.
    assert_eq!(
        lyon.message(),
        Some("incorrect (equals): expected `Paris`, got `Lyon` (also failed: llm-rubric, factuality)")
    );
    assert_eq!(outcome(lyon, "llm-rubric").reason.as_deref(), Some("looked for \"Paris\" in \"Lyon\""));

    let bodies = server.bodies.lock().unwrap().clone();
    let chats: Vec<&Value> = bodies.iter().filter(|(p, _)| p == "/v1/chat/completions").map(|(_, b)| b).collect();
    assert_eq!(chats.len(), 4, "two model-graded assertions per case");
    assert!(chats.iter().all(|b| b["model"] == "grader"));
    let factuality = chats.iter().find(|b| b.to_string().contains("<expert>")).unwrap().to_string();
    assert!(factuality.contains("capital of France?"), "the question is in the factuality prompt: {factuality}");
    let embeddings: Vec<&Value> = bodies.iter().filter(|(p, _)| p == "/v1/embeddings").map(|(_, b)| b).collect();
    assert_eq!(embeddings.len(), 4);
    assert!(embeddings.iter().all(|b| b["model"] == "letters"));
}

#[test]
fn the_rubric_prompt_can_be_replaced_and_a_missing_grader_is_a_suite_error() {
    let server = Loopback::start();
    let dataset =
        "[[test_cases]]\nid = \"a\"\nprompt = \"q\"\nassert = [{ type = \"llm-rubric\", value = \"mentions blue\" }]\n";
    let keys = format!(
        "\n[suite.grader]\ntype = \"openai\"\nbase-url = \"{}\"\nmodel = \"grader\"\nrubric-prompt = \"grader.j2\"\n",
        server.url
    );
    let dir = suite_dir(
        "",
        &keys,
        dataset,
        &[("a", "the sky is blue")],
        &[("grader.j2", "CUSTOM rubric={{ rubric }}; answer={{ answer }}\n")],
    );
    let (run, stderr) = run_fcorr(dir.path());
    assert_eq!(case(&run, "a").status, CaseStatus::Passed, "{stderr}");
    let bodies = server.bodies.lock().unwrap();
    assert_eq!(bodies[0].1["messages"][0]["content"], "CUSTOM rubric=mentions blue; answer=the sky is blue");
    drop(bodies);

    let dir = suite_dir("", "", dataset, &[("a", "blue")], &[]);
    let (run, _) = run_fcorr(dir.path());
    let error = run.suites[0].error.as_ref().expect("a suite error");
    assert!(error.message.contains("case `a`") && error.message.contains("[suite.grader]"), "{error:?}");
}

#[test]
fn weights_thresholds_and_not_decide_the_case_and_every_outcome_is_recorded() {
    let dataset = r#"
[[test_cases]]
id = "weighted"
prompt = "p"
threshold = 0.75
assert = [
  { type = "contains", value = "Paris", weight = 3 },
  { type = "contains", value = "capital", weight = 1 },
  { type = "not-contains", value = "Lyon" },
]

[[test_cases]]
id = "short"
prompt = "p"
threshold = 0.9
assert = [
  { type = "contains", value = "Paris", weight = 3 },
  { type = "contains", value = "capital", weight = 1 },
  { type = "not-contains", value = "Lyon" },
]

[[test_cases]]
id = "structured"
prompt = "p"
assert = [
  { type = "is-json" },
  { type = "json-schema", file = "schema.json" },
  { type = "json-equal", path = "/answer/city", value = "Paris" },
  { type = "latency", threshold = 60000 },
]

[[test_cases]]
id = "legacy"
prompt = "p"
expected = "Paris"
"#;
    let dir = suite_dir(
        "threshold = 1.0",
        "",
        dataset,
        &[
            ("weighted", "Paris"),
            ("short", "Paris"),
            ("structured", r#"{"answer": {"city": "Paris"}}"#),
            ("legacy", "Lyon"),
        ],
        &[("schema.json", r#"{"type": "object", "required": ["answer"]}"#)],
    );
    let (run, stderr) = run_fcorr(dir.path());
    // 3 + 0 + 1 of 5 = 0.8.
    let weighted = case(&run, "weighted");
    assert_eq!((weighted.status, weighted.extra().score), (CaseStatus::Passed, Some(80.0)), "{weighted:#?}\n{stderr}");
    let kinds: Vec<(&str, bool, f64)> =
        weighted.extra().eval().assertions.iter().map(|a| (a.kind.as_str(), a.pass, a.weight)).collect();
    assert_eq!(kinds, [("contains", true, 3.0), ("contains", false, 1.0), ("not-contains", true, 1.0)]);
    let short = case(&run, "short");
    assert_eq!(short.status, CaseStatus::Failed);
    assert_eq!(
        short.message(),
        Some(
            "incorrect (score): weighted score 0.80 < threshold 0.9; failed: contains (`Paris` does not contain `capital`)"
        )
    );
    let structured = case(&run, "structured");
    assert_eq!(structured.status, CaseStatus::Passed, "{structured:#?}");
    assert_eq!(outcome(structured, "latency").threshold, Some(60000.0));
    // A case of today's shape under a suite threshold of 1 is scored too, with the same reason.
    let legacy = case(&run, "legacy");
    assert_eq!((legacy.status, legacy.extra().eval().reasons[0].code.as_str()), (CaseStatus::Failed, "incorrect"));
    assert_eq!(legacy.extra().eval().assertions.len(), 1);

    // The reports say which assertion failed and why.
    let summary = std::fs::read_to_string(dir.path().join("out/summary.md")).unwrap();
    assert!(
        summary.contains("weighted score 0.80 &lt; threshold 0.9")
            || summary.contains("weighted score 0.80 < threshold 0.9"),
        "{summary}"
    );
}

/// A Python with rapidfuzz, rouge-score, sacrebleu and jsonschema, from a venv under target/
/// (created once from PyPI). None, with a message, only when the venv or pip cannot be set up.
fn metrics_python() -> Option<PathBuf> {
    let venv = repo().join("target/eval-graders-venv");
    let python = venv.join("bin/python");
    let probe = "import rapidfuzz, rouge_score, sacrebleu, jsonschema";
    let has = |p: &Path| StdCommand::new(p).args(["-c", probe]).output().is_ok_and(|o| o.status.success());
    if has(&python) {
        return Some(python);
    }
    let made = StdCommand::new("python3").arg("-m").arg("venv").arg(&venv).output();
    let installed = made.is_ok_and(|o| o.status.success())
        && StdCommand::new(&python)
            .args([
                "-m",
                "pip",
                "install",
                "-q",
                "rapidfuzz==3.14.6",
                "rouge-score==0.1.2",
                "sacrebleu==2.6.0",
                "jsonschema==4.26.0",
            ])
            .output()
            .is_ok_and(|o| o.status.success());
    if installed && has(&python) {
        Some(python)
    } else {
        eprintln!(
            "SKIPPED the independent metric check: could not install the Python packages into {}",
            venv.display()
        );
        None
    }
}

/// Answer and reference pairs for the lexical metrics.
const PAIRS: &[(&str, &str)] = &[
    ("The cat sat on the mat.", "the cat is on the mat"),
    ("kitten", "sitting"),
    ("Paris is the capital of France.", "The capital of France is Paris."),
    ("It costs $3.50, roughly.", "The price is about $3.50."),
    ("completely different words here", "nothing in common at all"),
    ("a b c d e f g", "a b c d e f g"),
    ("git log --oneline -n 5", "git log -n 5 --oneline"),
    ("hello", "hello world, how are you today?"),
];

const REFERENCE_SCRIPT: &str = r#"import json, sys
from rapidfuzz.distance import Levenshtein
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU
import jsonschema
pairs, schemas = json.load(sys.stdin)
rouge = rouge_scorer.RougeScorer(["rougeL"])
bleu = BLEU(effective_order=True)  # sentence_bleu's settings: 13a, exp smoothing
out = {"metrics": [], "schemas": []}
for answer, reference in pairs:
    out["metrics"].append({
        "levenshtein": Levenshtein.normalized_similarity(answer, reference),
        "rouge-l": rouge.score(reference, answer)["rougeL"].fmeasure,
        "bleu": bleu.sentence_score(answer, [reference]).score / 100,
    })
for schema, instance in schemas:
    out["schemas"].append(jsonschema.Draft202012Validator(schema).is_valid(instance))
print(json.dumps(out))
"#;

#[test]
fn lexical_metrics_and_json_schema_agree_with_independent_python_implementations() {
    let schemas: Vec<(Value, Value)> = vec![
        (json!({"type": "object", "required": ["a"]}), json!({"a": 1})),
        (json!({"type": "object", "required": ["a"]}), json!({"b": 1})),
        (json!({"type": "array", "items": {"type": "integer"}, "minItems": 2}), json!([1, 2])),
        (json!({"type": "array", "items": {"type": "integer"}, "minItems": 2}), json!([1, "2"])),
        (json!({"prefixItems": [{"type": "string"}], "items": false}), json!(["a"])),
        (json!({"prefixItems": [{"type": "string"}], "items": false}), json!(["a", 1])),
        (json!({"$defs": {"n": {"type": "number", "minimum": 0}}, "$ref": "#/$defs/n"}), json!(-1)),
        (json!({"type": "string", "pattern": "^[a-z]+$"}), json!("abc")),
        (json!({"dependentRequired": {"a": ["b"]}}), json!({"a": 1})),
    ];
    let mut dataset = String::new();
    let mut answers: Vec<(String, String)> = Vec::new();
    for (i, (answer, reference)) in PAIRS.iter().enumerate() {
        let reference = Value::String(reference.to_string());
        dataset.push_str(&format!(
            "[[test_cases]]\nid = \"m{i}\"\nprompt = \"p\"\nassert = [\n  {{ type = \"levenshtein\", value = {reference}, threshold = 0 }},\n  {{ type = \"rouge-l\", value = {reference}, threshold = 0 }},\n  {{ type = \"bleu\", value = {reference}, threshold = 0 }},\n]\n\n"
        ));
        answers.push((format!("m{i}"), answer.to_string()));
    }
    for (i, (_, instance)) in schemas.iter().enumerate() {
        dataset.push_str(&format!(
            "[[test_cases]]\nid = \"s{i}\"\nprompt = \"p\"\nassert = [{{ type = \"json-schema\", file = \"s{i}.json\" }}]\n\n"
        ));
        answers.push((format!("s{i}"), instance.to_string()));
    }
    let files: Vec<(String, String)> =
        schemas.iter().enumerate().map(|(i, (schema, _))| (format!("s{i}.json"), schema.to_string())).collect();
    let answer_refs: Vec<(&str, &str)> = answers.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let file_refs: Vec<(&str, &str)> = files.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let dir = suite_dir("", "", &dataset, &answer_refs, &file_refs);
    let (run, stderr) = run_fcorr(dir.path());
    assert_eq!(run.suites[0].cases.len(), PAIRS.len() + schemas.len(), "{stderr}");

    let Some(python) = metrics_python() else { return };
    let mut child = StdCommand::new(python)
        .args(["-c", REFERENCE_SCRIPT])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = json!([PAIRS, schemas]);
    child.stdin.take().unwrap().write_all(input.to_string().as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    let reference: Value = serde_json::from_slice(&output.stdout).unwrap();
    for (i, expected) in reference["metrics"].as_array().unwrap().iter().enumerate() {
        let case = case(&run, &format!("m{i}"));
        for metric in ["levenshtein", "rouge-l", "bleu"] {
            let ours = outcome(case, metric).score;
            let theirs = expected[metric].as_f64().unwrap();
            // results.json keeps four decimals.
            assert!((ours - theirs).abs() <= 5e-5, "{metric} of {:?}: fcorr {ours}, Python {theirs}", PAIRS[i]);
        }
    }
    for (i, valid) in reference["schemas"].as_array().unwrap().iter().enumerate() {
        let case = case(&run, &format!("s{i}"));
        assert_eq!(
            case.status == CaseStatus::Passed,
            valid.as_bool().unwrap(),
            "schema {i}: {:?} {case:#?}",
            schemas[i]
        );
    }
}
