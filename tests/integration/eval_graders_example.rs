//! The graders example (`examples/evals-graders`) end to end: its one documented command runs
//! offline, asks six cases of two systems through a template, and each system passes exactly the
//! cases its README says, failing the others on the checks it names.

use std::collections::BTreeMap;

use crate::support::{fcorr, repo};
use serde_json::Value;

#[test]
fn graders_example_runs_offline_with_the_documented_outcome() {
    let out = tempfile::tempdir().unwrap();
    let output = fcorr()
        .args(["run", "--config"])
        .arg(repo().join("examples/evals-graders/fcorr.toml"))
        .args(["--fail-on", "none", "--out"])
        .arg(out.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(0), "stderr:\n{stderr}");
    let results: Value =
        serde_json::from_str(&std::fs::read_to_string(out.path().join("results.json")).unwrap()).unwrap();
    let cases = results["suites"][0]["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 12, "6 cases x 2 systems");
    let status: BTreeMap<String, String> = cases
        .iter()
        .map(|c| (c["name"].as_str().unwrap().to_string(), c["status"].as_str().unwrap().to_string()))
        .collect();
    let failing = ["australia@small", "canada@small", "brazil@large", "kenya@large"];
    for (name, status) in &status {
        let want = if failing.contains(&name.as_str()) { "failed" } else { "passed" };
        assert_eq!(status, want, "{name}: {status:?}");
    }
    // Each failure names the check the README says fails.
    let reasons = |name: &str| -> String {
        let case = cases.iter().find(|c| c["name"] == name).unwrap();
        case["assertions"].to_string()
    };
    assert!(reasons("canada@small").contains("adds commentary: note"), "{}", reasons("canada@small"));
    assert!(reasons("australia@small").contains("Sydney is not Canberra"), "{}", reasons("australia@small"));
}
