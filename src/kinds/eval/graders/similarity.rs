//! Similarity graders: lexical metrics that need no model (`levenshtein` ratio, `rouge-l`
//! F-measure, sentence `bleu`), and `similar`, the cosine of two embeddings from the suite's
//! OpenAI-compatible `/embeddings` endpoint. Each gives its metric as the score and passes at
//! or above its threshold.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Value, json};

use super::{Answered, CheckError, Grade, Grader, GradingContext, Registration, Spec};
use crate::sut::{SutError, SutRequest};

pub(crate) const GRADERS: &[Registration] = &[
    Registration { name: "levenshtein", build: |s| metric(s, Metric::Levenshtein) },
    Registration { name: "rouge-l", build: |s| metric(s, Metric::RougeL) },
    Registration { name: "bleu", build: |s| metric(s, Metric::Bleu) },
    Registration { name: "similar", build: |s| metric(s, Metric::Embeddings) },
];

/// Pass marks when an assertion gives none (promptfoo's defaults for `similar`, `rouge-n` and
/// `bleu`; `levenshtein` takes the same as the other similarities).
const DEFAULT_THRESHOLD: f64 = 0.75;
const DEFAULT_BLEU_THRESHOLD: f64 = 0.5;

/// The quadratic metrics (edit distance, longest common subsequence) refuse inputs whose table
/// would exceed this many cells, rather than hold a worker for minutes: an error, not a score.
const MAX_CELLS: usize = 25_000_000;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
    Levenshtein,
    RougeL,
    Bleu,
    Embeddings,
}

impl Metric {
    fn name(self) -> &'static str {
        match self {
            Metric::Levenshtein => "levenshtein",
            Metric::RougeL => "rouge-l",
            Metric::Bleu => "bleu",
            Metric::Embeddings => "cosine similarity",
        }
    }
}

fn metric(spec: &Spec<'_>, metric: Metric) -> Result<Box<dyn Grader>, CheckError> {
    let value = spec.optional_value()?;
    let reference = spec.reference(value)?;
    let default = if metric == Metric::Bleu { DEFAULT_BLEU_THRESHOLD } else { DEFAULT_THRESHOLD };
    Ok(Box::new(Similarity { metric, reference, threshold: spec.unit_threshold(default)? }))
}

/// The answer compared with a reference text by one metric.
#[derive(Debug)]
struct Similarity {
    metric: Metric,
    reference: String,
    threshold: f64,
}

impl Grader for Similarity {
    fn grade(&self, answer: &Answered<'_>, ctx: &GradingContext) -> Grade {
        let score = match self.metric {
            Metric::Levenshtein => levenshtein(&answer.text, &self.reference),
            Metric::RougeL => rouge_l(&answer.text, &self.reference),
            Metric::Bleu => Ok(sentence_bleu(&answer.text, &self.reference)),
            Metric::Embeddings => embedding_similarity(&answer.text, &self.reference, answer.case.id.as_str(), ctx),
        };
        match score {
            Ok(score) => Grade::metric(score, self.threshold, || self.metric.name().to_string()),
            Err(message) => Grade::Error(message),
        }
    }

    fn threshold(&self) -> Option<f64> {
        Some(self.threshold)
    }

    fn prepare(&self, ctx: &GradingContext) -> Result<(), String> {
        if self.metric == Metric::Embeddings && ctx.embeddings.is_none() && !ctx.offline {
            return Err(
                "`similar` needs an embeddings endpoint: add a [suite.embeddings] table (see docs/evals.md)".into()
            );
        }
        Ok(())
    }
}

/// 1 − edit distance / the longer length, in characters (1 for two empty texts): rapidfuzz's
/// `Levenshtein.normalized_similarity`.
pub(crate) fn levenshtein(a: &str, b: &str) -> Result<f64, String> {
    let cells = a.chars().count().saturating_mul(b.chars().count());
    if cells > MAX_CELLS {
        return Err(format!("the texts are too long to compare by edit distance ({cells} cells > {MAX_CELLS})"));
    }
    Ok(strsim::normalized_levenshtein(a, b))
}

/// ROUGE-L's tokens: lower-cased, split at every character that is not a letter or digit.
/// For ASCII text this is rouge-score's tokenizer (without stemming); rouge-score drops letters
/// outside a–z (`café` → `caf`), these keep them.
fn rouge_tokens(text: &str) -> Vec<String> {
    text.to_lowercase().split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()).map(str::to_string).collect()
}

/// ROUGE-L F-measure of the answer against the reference: the longest common subsequence of
/// tokens, precision over the answer, recall over the reference (0 when either has no token).
pub(crate) fn rouge_l(answer: &str, reference: &str) -> Result<f64, String> {
    let (candidate, target) = (rouge_tokens(answer), rouge_tokens(reference));
    if candidate.is_empty() || target.is_empty() {
        return Ok(0.0);
    }
    let cells = candidate.len().saturating_mul(target.len());
    if cells > MAX_CELLS {
        return Err(format!("the texts are too long for ROUGE-L ({cells} cells > {MAX_CELLS})"));
    }
    // Two rows of the LCS table.
    let mut previous = vec![0usize; candidate.len() + 1];
    let mut current = vec![0usize; candidate.len() + 1];
    for t in &target {
        for (j, c) in candidate.iter().enumerate() {
            current[j + 1] = if t == c { previous[j] + 1 } else { previous[j + 1].max(current[j]) };
        }
        std::mem::swap(&mut previous, &mut current);
    }
    let lcs = previous[candidate.len()] as f64;
    let precision = lcs / candidate.len() as f64;
    let recall = lcs / target.len() as f64;
    Ok(if precision + recall > 0.0 { 2.0 * precision * recall / (precision + recall) } else { 0.0 })
}

/// The `13a` tokenizer of sacrebleu (mteval-v13a, WMT's standard): punctuation and symbols split
/// off, `.` and `,` kept inside numbers, a dash after a digit split off.
fn tokens_13a(line: &str) -> Vec<String> {
    static RULES: LazyLock<Vec<(regex::Regex, &'static str)>> = LazyLock::new(|| {
        [
            (r"([\{-~\[-`\x20-&\(-\+:-@/])", " ${1} "),
            (r"([^0-9])([\.,])", "${1} ${2} "),
            (r"([\.,])([^0-9])", " ${1} ${2}"),
            (r"([0-9])(-)", "${1} ${2} "),
        ]
        .into_iter()
        // The patterns are constants, checked by the unit tests.
        .map(|(pattern, replacement)| (regex::Regex::new(pattern).expect("a valid 13a pattern"), replacement))
        .collect()
    });
    let mut line = line.replace("<skipped>", "").replace("-\n", "").replace('\n', " ");
    if line.contains('&') {
        line = line.replace("&quot;", "\"").replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">");
    }
    let mut line = format!(" {line} ");
    for (re, replacement) in RULES.iter() {
        line = re.replace_all(&line, *replacement).into_owned();
    }
    line.split_whitespace().map(str::to_string).collect()
}

/// Sentence BLEU 0–1, as sacrebleu's `sentence_bleu(answer, [reference])` / 100: BLEU-4, `13a`
/// tokens, case-sensitive, `exp` smoothing (an order with no match counts 1/(2^k · total), k
/// counting such orders), effective order (orders the answer is too short to have are left out)
/// and the brevity penalty; 0 when no unigram matches.
pub(crate) fn sentence_bleu(answer: &str, reference: &str) -> f64 {
    const ORDER: usize = 4;
    let hypothesis = tokens_13a(answer.trim_end());
    let reference = tokens_13a(reference.trim_end());
    let mut correct = [0usize; ORDER];
    let mut total = [0usize; ORDER];
    for n in 1..=ORDER {
        let (ours, theirs) = (ngrams(&hypothesis, n), ngrams(&reference, n));
        correct[n - 1] = ours.iter().map(|(gram, count)| (*count).min(theirs.get(gram).copied().unwrap_or(0))).sum();
        total[n - 1] = hypothesis.len().saturating_sub(n - 1);
    }
    let (sys_len, ref_len) = (hypothesis.len() as f64, reference.len() as f64);
    let brevity =
        if sys_len < ref_len { if sys_len > 0.0 { (1.0 - ref_len / sys_len).exp() } else { 0.0 } } else { 1.0 };
    if correct.iter().all(|&c| c == 0) {
        return 0.0;
    }
    let mut precisions = [0.0f64; ORDER];
    let mut smooth = 1.0;
    let mut effective = ORDER;
    for n in 1..=ORDER {
        if total[n - 1] == 0 {
            break;
        }
        effective = n;
        precisions[n - 1] = if correct[n - 1] == 0 {
            smooth *= 2.0;
            100.0 / (smooth * total[n - 1] as f64)
        } else {
            100.0 * correct[n - 1] as f64 / total[n - 1] as f64
        };
    }
    let log = |p: f64| if p == 0.0 { -9_999_999_999.0 } else { p.ln() };
    let mean = precisions[..effective].iter().map(|&p| log(p)).sum::<f64>() / effective as f64;
    // exp(mean of logs of 100s) is 100 give or take the last bit; an exact copy scores 1, so a
    // threshold of 1 can be met.
    (brevity * mean.exp() / 100.0).min(1.0)
}

/// How often each `n`-gram occurs in `tokens`.
fn ngrams(tokens: &[String], n: usize) -> HashMap<&[String], usize> {
    let mut counts: HashMap<&[String], usize> = HashMap::new();
    for gram in tokens.windows(n) {
        *counts.entry(gram).or_default() += 1;
    }
    counts
}

/// The cosine similarity of the answer's and the reference's embeddings.
fn embedding_similarity(answer: &str, reference: &str, id: &str, ctx: &GradingContext) -> Result<f64, String> {
    if ctx.offline {
        return Err("not called offline".into());
    }
    let Some(embeddings) = &ctx.embeddings else {
        return Err("no [suite.embeddings] endpoint".into());
    };
    let embed = |text: &str| -> Result<Vec<f64>, String> {
        let request = SutRequest { id: id.to_string(), prompt: text.to_string(), case: json!({}) };
        let vector = embeddings.call(&request).map_err(|e| match e {
            SutError::Timeout { after } => format!("embeddings: no answer within {}s", after.as_secs_f64()),
            other => format!("embeddings: {other}"),
        })?;
        match vector.output {
            Value::Array(items) => Ok(items.iter().filter_map(Value::as_f64).collect()),
            other => Err(format!("embeddings: not a vector: {}", super::text::shown(&other.to_string()))),
        }
    };
    let (a, b) = (embed(answer)?, embed(reference)?);
    if a.len() != b.len() {
        return Err(format!("embeddings of different lengths ({} and {})", a.len(), b.len()));
    }
    let dot: f64 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
    let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
    let (na, nb) = (norm(&a), norm(&b));
    if na == 0.0 || nb == 0.0 {
        return Err("an embedding is the zero vector: no direction to compare".into());
    }
    Ok((dot / (na * nb)).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexical_metrics_on_known_values() {
        assert_eq!(levenshtein("kitten", "sitting").unwrap(), 1.0 - 3.0 / 7.0);
        assert_eq!(levenshtein("", "").unwrap(), 1.0);
        assert_eq!(rouge_l("the cat sat", "the cat sat").unwrap(), 1.0);
        assert_eq!(rouge_l("", "x").unwrap(), 0.0);
        // LCS "the cat on mat" (4) of 6 and 6 tokens.
        let f = rouge_l("The cat sat on the mat.", "the cat lay on a mat").unwrap();
        assert!((f - 4.0 / 6.0).abs() < 1e-12, "{f}");
        assert_eq!(sentence_bleu("the cat sat on the mat", "the cat sat on the mat"), 1.0);
        assert_eq!(sentence_bleu("dog", "the cat"), 0.0);
        assert_eq!(
            tokens_13a("Hello, world. It costs $3.50-ish!"),
            ["Hello", ",", "world", ".", "It", "costs", "$", "3.50", "-", "ish", "!"]
        );
    }

    #[test]
    fn quadratic_metrics_refuse_huge_inputs() {
        let long = "a ".repeat(6000);
        assert!(rouge_l(&long, &long).unwrap_err().contains("too long"));
        assert!(levenshtein(&long, &long).unwrap_err().contains("too long"));
    }
}
