//! `kind = "eval"`: runs a dataset against one or more systems under test, through the case's
//! own prompt or each of the suite's prompt templates, `concurrency` questions at a time, each
//! `repeat` times, and turns every (case, prompt, system) into a [`Case`] with one reason, its
//! category tag, usage and the answer kept for the report.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::dataset::{self, EvalCase};
use super::graders::{self, Answered, GraderConfig, GradingContext, Judged, Judgement};
use super::prompts::{PromptConfig, PromptError, Prompts};
use super::suts::SutList;
use crate::config::SuiteSite;
use crate::ecosystems::Collected;
use crate::errors::{ConfigError, PlanError};
use crate::model::{
    Attempt, Case, CaseStatus, Diagnostic, DiagnosticSource, ResultsSource, Severity, Suite, SuiteError,
    SuiteErrorKind, SuiteKind, SuiteStatus, Usage,
};
use crate::plan::SuitePlan;
use crate::runners::{ItemsError, PlanContext, RunContext, SuiteItem, SuiteRunner};
use crate::sut::config::SutConfigError;
use crate::sut::openai::EmbeddingsConfig;
use crate::sut::{Sut, SutContext, SutError, SutRequest};
use crate::text::cap_text;

/// The eval runner.
pub(crate) struct Eval;

/// The keys of an eval `[[suite]]`.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(default, deny_unknown_fields, rename_all = "kebab-case")]
pub(crate) struct EvalConfig {
    /// The dataset file (`.toml`, `.jsonl`, `.json`, `.yaml`, `.csv`), relative to the config file.
    pub dataset: PathBuf,
    /// Prompt templates each case is asked through (default: the case's own `prompt`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub prompts: Vec<PromptConfig>,
    /// Asks each case this many times (default 1).
    pub repeat: Option<u32>,
    /// Passes needed out of `repeat` for a case to count (default: all). Fewer passes than
    /// `repeat` but at least this many is `flaky`.
    pub min_pass: Option<u32>,
    /// Cases in flight at once (default 4).
    pub concurrency: Option<usize>,
    /// The systems under test: one `[suite.sut]` table or several named `[[suite.sut]]`.
    pub sut: Option<SutList>,
    /// Default pass mark (0–1) of a case's weighted score, for cases that set none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<f64>,
    /// The model behind `llm-rubric` and `factuality` (any SUT type, plus its prompts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grader: Option<GraderConfig>,
    /// The `/embeddings` endpoint behind `similar`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub embeddings: Option<EmbeddingsConfig>,
}

/// One eval suite, resolved.
#[derive(Debug)]
pub(crate) struct EvalPlan {
    dataset: PathBuf,
    /// The dataset path as written, for reports.
    dataset_shown: String,
    base_dir: PathBuf,
    repeat: u32,
    min_pass: u32,
    concurrency: usize,
    suts: SutList,
    prompts: Prompts,
    threshold: Option<f64>,
    grader: Option<GraderConfig>,
    embeddings: Option<EmbeddingsConfig>,
    /// `--shard K/N`: only this shard's cases are asked (by a hash of suite and case id).
    shard: Option<crate::shard::Shard>,
    /// `--no-cache`: every case asks the SUT, whatever the answer cache holds.
    no_cache: bool,
}

/// Cases in flight when `concurrency` is not set.
const DEFAULT_CONCURRENCY: usize = 4;
/// Longest answer kept in a case's `output`.
const ANSWER_CAP: usize = 4096;

impl SuiteRunner for Eval {
    type Config = EvalConfig;
    type Plan = EvalPlan;

    fn name(&self) -> &'static str {
        "eval"
    }

    fn suite_kind(&self) -> SuiteKind {
        SuiteKind::Eval
    }

    /// Each shard runs its own slice of the items (`Shard::keeps_item` in planning).
    fn splits_items(&self) -> bool {
        true
    }

    /// The dataset the items are cut from.
    fn inputs(&self, plan: &EvalPlan) -> Vec<PathBuf> {
        vec![plan.dataset.clone()]
    }

    fn about(&self) -> &'static str {
        "a dataset of prompts with expected answers, asked of a system under test"
    }

    fn validate(&self, config: &EvalConfig, site: &SuiteSite<'_>) -> Result<(), ConfigError> {
        if config.dataset.as_os_str().is_empty() {
            return Err(site.error("kind", "an eval suite needs `dataset = \"cases.toml\"`"));
        }
        let dataset = site.base_dir.join(&config.dataset);
        if !dataset.is_file() {
            // `/dev/zero` or a FIFO exists: saying "no such file" would send the user looking.
            let why = if dataset.exists() { "not a regular file" } else { "no such file" };
            return Err(site.error("dataset", format!("{}: {why}", config.dataset.display())));
        }
        let Some(suts) = &config.sut else {
            return Err(site.error("kind", "an eval suite needs a [suite.sut] table (see docs/sut.md)"));
        };
        if let Some(problem) = suts.name_problem() {
            return Err(site.error("sut", problem));
        }
        for (i, named) in suts.as_slice().iter().enumerate() {
            let key = if suts.is_listed() { format!("sut.{i}") } else { "sut".into() };
            unless_secret_unset(named.sut.build(&SutContext::new(site.base_dir))).map_err(|e| site.error(&key, e))?;
        }
        graders::case_threshold(None, config.threshold).map_err(|e| site.error("threshold", e))?;
        if let Some(grader) = &config.grader
            && unless_secret_unset(grader.sut.build(&SutContext::new(site.base_dir))).is_ok()
        {
            grader.build(&SutContext::new(site.base_dir)).map_err(|e| site.error("grader", e))?;
        }
        if let Some(embeddings) = &config.embeddings {
            unless_secret_unset(embeddings.build(None))
                .map_err(|e| site.error("embeddings", e.to_string().replace("[suite.sut]", "[suite.embeddings]")))?;
        }
        let inline_line = |i: usize| site.error(&format!("prompts.{i}.template"), "").line;
        let prompts = Prompts::compile(&config.prompts, site.base_dir, &inline_line)
            .map_err(|e| prompt_config_error(site, &config.prompts, e))?;
        // Every case through every prompt now, so an undefined variable is a configuration
        // error before anything is asked. A dataset that does not load is the run's to report.
        if let Ok(cases) = dataset::load(&dataset) {
            for case in &cases {
                ask_texts(&prompts, &case.case).map_err(|e| match e {
                    AskError::Prompt(e) => prompt_config_error(site, &config.prompts, e),
                    AskError::NoPrompt(id) => site.error("dataset", no_prompt(&config.dataset, &id)),
                })?;
            }
        }
        if config.repeat == Some(0) {
            return Err(site.error("repeat", "repeat must be at least 1"));
        }
        if config.concurrency == Some(0) {
            return Err(site.error("concurrency", "concurrency must be at least 1"));
        }
        if let Some(min) = config.min_pass {
            let repeat = config.repeat.unwrap_or(1);
            if min == 0 || min > repeat {
                return Err(site.error("min-pass", format!("min-pass must be between 1 and repeat ({repeat})")));
            }
        }
        Ok(())
    }

    fn plan(&self, config: EvalConfig, _suite: &SuitePlan, ctx: &PlanContext<'_>) -> Result<EvalPlan, PlanError> {
        let repeat = config.repeat.unwrap_or(1).max(1);
        let config_file = ctx.config.source.as_deref().unwrap_or(std::path::Path::new("fcorr.toml"));
        // Validated with the config; `sut` is present there and the prompts compile.
        let suts = config
            .sut
            .ok_or_else(|| ConfigError::new(config_file, (0, 1), "an eval suite needs a [suite.sut] table"))?;
        let prompts = Prompts::compile(&config.prompts, ctx.base, &|_| 0)
            .map_err(|e| ConfigError::new(config_file, (0, 1), e.to_string()))?;
        Ok(EvalPlan {
            dataset: ctx.base.join(&config.dataset),
            dataset_shown: config.dataset.to_string_lossy().replace('\\', "/"),
            base_dir: ctx.base.to_path_buf(),
            repeat,
            min_pass: config.min_pass.unwrap_or(repeat).clamp(1, repeat),
            concurrency: config.concurrency.unwrap_or(DEFAULT_CONCURRENCY).max(1),
            suts,
            prompts,
            threshold: config.threshold,
            grader: config.grader,
            embeddings: config.embeddings,
            shard: ctx.overrides.shard,
            no_cache: ctx.overrides.no_cache,
        })
    }

    /// The dataset's cases (this shard's, with `--shard`), for `fcorr suites list`: one item per
    /// (case, prompt, system), named as its result will be.
    fn items(&self, suite: &SuitePlan, plan: &EvalPlan) -> Option<Result<Vec<SuiteItem>, ItemsError>> {
        Some(dataset::load(&plan.dataset).map_err(Into::into).map(|cases| {
            let shape = Shape::of(plan);
            cases
                .into_iter()
                .filter(|c| crate::shard::Shard::keeps_item(plan.shard, &suite.id, &c.case.id))
                .flat_map(|c| {
                    let tags: Vec<String> = c.case.category.clone().into_iter().collect();
                    shape
                        .combinations()
                        .map(|(p, s)| SuiteItem {
                            id: shape.name(&c.case.id, p, s),
                            difficulty: None,
                            tags: tags.clone(),
                        })
                        .collect::<Vec<_>>()
                })
                .collect()
        }))
    }

    fn run(&self, suite: &SuitePlan, plan: &EvalPlan, ctx: &RunContext<'_>) -> Suite {
        let mut result = crate::runners::new_suite(suite);
        result.path = Some(plan.dataset_shown.clone());
        let fail = |mut result: Suite, kind: SuiteErrorKind, message: String, hint: Option<&str>| {
            result.status = SuiteStatus::Error;
            result.error = Some(SuiteError { kind, message, hint: hint.map(str::to_string) });
            result
        };
        let cases = match dataset::load(&plan.dataset) {
            Ok(cases) => cases,
            Err(e) => return fail(result, SuiteErrorKind::Input, e.to_string(), Some("fix the dataset file")),
        };
        let cases: Vec<_> =
            cases.into_iter().filter(|c| crate::shard::Shard::keeps_item(plan.shard, &suite.id, &c.case.id)).collect();
        let log = match crate::execute::suite_log(&ctx.exec.out_dir, &suite.id) {
            Ok((log, file)) => {
                result.log_file = Some(file);
                log
            }
            Err(message) => return fail(result, SuiteErrorKind::Harness, message, None),
        };
        let sut_ctx = SutContext {
            cache_dir: ctx.exec.cache_dir.join("sut-answers"),
            log: Some(log),
            no_cache: plan.no_cache,
            ..SutContext::new(&plan.base_dir)
        };
        // Each system is built on its own: its own rate limit, concurrency and cache identity.
        let mut suts = Vec::new();
        for named in plan.suts.as_slice() {
            match named.sut.build(&sut_ctx) {
                Ok(sut) => suts.push(sut),
                Err(e) => return fail(result, SuiteErrorKind::Input, e.to_string(), Some("fix [suite.sut]")),
            }
        }
        let suts: Vec<&dyn Sut> = suts.iter().map(|s| s.as_ref()).collect();
        let asks = match Shape::of(plan).asks(&cases) {
            Ok(asks) => asks,
            Err(e) => {
                let message = match e {
                    AskError::Prompt(e) => e.to_string(),
                    AskError::NoPrompt(id) => no_prompt(Path::new(&plan.dataset_shown), &id),
                };
                return fail(result, SuiteErrorKind::Input, message, Some("fix the prompts or the dataset's vars"));
            }
        };
        let grading = match grading_context(plan, &sut_ctx) {
            Ok(grading) => grading,
            Err(e) => return fail(result, SuiteErrorKind::Input, e, Some("fix [suite.grader] or [suite.embeddings]")),
        };
        if let Err(e) = graders::prepare(cases.iter().map(|c| (c.case.id.as_str(), c.checks.as_slice())), &grading) {
            return fail(result, SuiteErrorKind::Input, e, Some("fix the dataset or the suite's grader settings"));
        }
        let settings = Settings {
            repeat: plan.repeat,
            min_pass: plan.min_pass,
            concurrency: plan.concurrency,
            source: plan.dataset_shown.clone(),
            threshold: plan.threshold,
            grading,
        };
        let cancelled = || ctx.cancelled();
        let nothing_planned = cases.is_empty();
        let (cases, stopped) = run_cases(&asks, &suts, &settings, &cancelled);
        result.usage = total_usage(&cases);
        let cached = cases.iter().filter(|c| c.extra().eval().cached).count();
        if cached > 0 {
            // A verdict from stored answers must say so: the system may have changed since.
            crate::warnings::warn(format!(
                "suite `{}`: {cached} of {} cases answered from the answer cache, not by the system now \
                 (--no-cache to re-ask)",
                result.id,
                cases.len()
            ));
        }
        // The dataset was read: zero cases is "no tests" (the `empty` gate's to judge, so
        // `--fail-on none` passes), not an error about report files this kind never has.
        let diagnostics = if nothing_planned {
            vec![Diagnostic {
                severity: Severity::Warning,
                source: DiagnosticSource::Other("dataset".into()),
                message: format!(
                    "{}: no case to run (the dataset is empty, or this shard holds none)",
                    plan.dataset_shown
                ),
                file: Some(plan.dataset_shown.clone()),
                line: None,
                column: None,
            }]
        } else {
            Vec::new()
        };
        let collected = Collected {
            cases,
            source: ResultsSource::Report { format: "dataset".into(), files: vec![plan.dataset_shown.clone()] },
            ran: true,
            diagnostics,
            ..Collected::nothing()
        };
        if stopped {
            result.status = SuiteStatus::Cancelled;
        }
        crate::execute::apply_collected(&mut result, collected, None);
        result
    }
}

/// A prompt template error as a configuration error: at the config line of an inline
/// template's problem, else at the `prompts` entry (the message names a template file's line).
fn prompt_config_error(site: &SuiteSite<'_>, configs: &[PromptConfig], e: PromptError) -> ConfigError {
    let key = match configs.get(e.index) {
        Some(c) if c.file.is_some() => format!("prompts.{}.file", e.index),
        Some(_) => format!("prompts.{}.template", e.index),
        None => "prompts".into(),
    };
    let mut error = site.error(&key, &e);
    if let Some(line) = e.config_line {
        error.line = line;
    }
    error
}

fn no_prompt(dataset: &Path, id: &str) -> String {
    format!("{}: case `{id}` has no `prompt`, and the suite declares no `prompts` to ask it through", dataset.display())
}

/// Why a case cannot be asked.
#[derive(Debug)]
enum AskError {
    Prompt(PromptError),
    /// The case has no `prompt` and there is no template: nothing to ask.
    NoPrompt(String),
}

/// The texts a case is asked: its own prompt, or each template rendered for it.
fn ask_texts(prompts: &Prompts, case: &dataset::TestCase) -> Result<Vec<String>, AskError> {
    if prompts.len() == 0 {
        if case.prompt.trim().is_empty() {
            return Err(AskError::NoPrompt(case.id.clone()));
        }
        return Ok(vec![case.prompt.clone()]);
    }
    (0..prompts.len()).map(|i| prompts.render(i, case).map_err(AskError::Prompt)).collect()
}

/// How a suite's questions multiply (every case × every prompt × every system) and how the
/// results are named: `<id>`, then `[<prompt>]` with several prompts and `@<sut>` with several
/// systems, so a suite with one of each keeps the ids (and baselines) it always had.
struct Shape<'a> {
    prompts: &'a Prompts,
    suts: &'a SutList,
}

impl<'a> Shape<'a> {
    fn of(plan: &'a EvalPlan) -> Shape<'a> {
        Shape { prompts: &plan.prompts, suts: &plan.suts }
    }

    /// (prompt index, system index) pairs in asking order: prompt-major, as the grid shows them.
    fn combinations(&self) -> impl Iterator<Item = (usize, usize)> + use<> {
        let suts = self.suts.as_slice().len();
        (0..self.prompts.len().max(1)).flat_map(move |p| (0..suts).map(move |s| (p, s)))
    }

    fn prompt_name(&self, prompt: usize) -> Option<&str> {
        self.prompts.names().nth(prompt)
    }

    fn name(&self, id: &str, prompt: usize, sut: usize) -> String {
        let mut name = id.to_string();
        if self.prompts.len() > 1
            && let Some(prompt) = self.prompt_name(prompt)
        {
            name.push_str(&format!("[{prompt}]"));
        }
        let suts = self.suts.as_slice();
        if suts.len() > 1
            && let Some(named) = suts.get(sut)
        {
            name.push('@');
            name.push_str(named.name());
        }
        name
    }

    /// Every question of the run, rendered before anything is asked.
    fn asks<'c>(&self, cases: &'c [EvalCase]) -> Result<Vec<Ask<'c>>, AskError> {
        let mut asks = Vec::new();
        for case in cases {
            let texts = ask_texts(self.prompts, &case.case)?;
            for (prompt, sut) in self.combinations() {
                let named = &self.suts.as_slice()[sut];
                asks.push(Ask {
                    case,
                    name: self.name(&case.case.id, prompt, sut),
                    request: SutRequest {
                        id: case.case.id.clone(),
                        prompt: texts[prompt].clone(),
                        case: case_json(&case.case, &texts[prompt]),
                    },
                    sut,
                    // Recorded when the config names the system or declares prompts: the
                    // typed fields the grid and `@sut` gates read.
                    sut_name: named.name.clone(),
                    prompt_name: self.prompt_name(prompt).map(str::to_string),
                });
            }
        }
        Ok(asks)
    }
}

/// One question: a case, through one prompt, of one system.
pub(crate) struct Ask<'c> {
    case: &'c EvalCase,
    /// The result case's name (`france[terse]@small`).
    name: String,
    request: SutRequest,
    /// Index into the systems handed to [`run_cases`].
    sut: usize,
    sut_name: Option<String>,
    prompt_name: Option<String>,
}

/// The graders' view of the suite: the grader model and embeddings endpoint built, script
/// output going to the suite log.
fn grading_context(plan: &EvalPlan, sut_ctx: &SutContext) -> Result<GradingContext, String> {
    let grader = match &plan.grader {
        Some(config) => Some(std::sync::Arc::new(config.build(sut_ctx)?)),
        None => None,
    };
    let embeddings = match &plan.embeddings {
        Some(config) => Some(std::sync::Arc::from(
            config
                .build((!plan.no_cache).then(|| sut_ctx.cache_dir.clone()))
                .map_err(|e| e.to_string().replace("[suite.sut]", "[suite.embeddings]"))?,
        )),
        None => None,
    };
    Ok(GradingContext { base_dir: plan.base_dir.clone(), grader, embeddings, log: sut_ctx.log.clone(), offline: false })
}

/// How cases are asked and judged.
#[derive(Clone)]
pub(crate) struct Settings {
    pub repeat: u32,
    pub min_pass: u32,
    pub concurrency: usize,
    /// The dataset as shown in reports (`expectation_source`).
    pub source: String,
    /// The suite's default case threshold.
    pub threshold: Option<f64>,
    pub grading: GradingContext,
}

/// Asks every question, `concurrency` at a time (each system's own `concurrency` and pacing
/// apply within that); returns the cases in dataset order and whether the run was cancelled
/// part-way (questions not asked are left out, never counted as passes).
pub(crate) fn run_cases(
    asks: &[Ask<'_>],
    suts: &[&dyn Sut],
    settings: &Settings,
    cancelled: &(dyn Fn() -> bool + Sync),
) -> (Vec<Case>, bool) {
    let next = AtomicUsize::new(0);
    let results: Vec<Mutex<Option<Case>>> = asks.iter().map(|_| Mutex::new(None)).collect();
    let stopped = std::sync::atomic::AtomicBool::new(false);
    let workers = settings.concurrency.clamp(1, asks.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..workers {
            scope.spawn(|| {
                loop {
                    if cancelled() {
                        stopped.store(true, Ordering::SeqCst);
                        break;
                    }
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(ask) = asks.get(i) else { break };
                    let Some(sut) = suts.get(ask.sut) else { break };
                    match run_case(ask, *sut, settings, cancelled) {
                        Some(done) => *results[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(done),
                        None => {
                            stopped.store(true, Ordering::SeqCst);
                            break;
                        }
                    }
                }
            });
        }
    });
    let cases = results.into_iter().filter_map(|slot| slot.into_inner().unwrap_or_else(|p| p.into_inner())).collect();
    (cases, stopped.load(Ordering::SeqCst))
}

/// One attempt's result.
struct Tried {
    judged: Judged,
    duration: Duration,
    answer: Option<String>,
    usage: Option<Usage>,
    /// The answer came from the answer cache.
    cached: bool,
}

/// Asks one question `repeat` times and judges it; `None` when cancelled.
fn run_case(ask: &Ask<'_>, sut: &dyn Sut, settings: &Settings, cancelled: &(dyn Fn() -> bool + Sync)) -> Option<Case> {
    let case = ask.case;
    let request = &ask.request;
    let mut tries = Vec::new();
    for attempt in 1..=settings.repeat {
        if cancelled() {
            return None;
        }
        let started = Instant::now();
        // Each attempt is its own call (and its own cache entry), so flakiness can be seen.
        let tried = match sut.call_attempt(request, attempt) {
            Ok(answer) if graders::echoes_prompt(&request.prompt, &graders::answer_text(&answer.output)) => Tried {
                judged: Judged::unanswered(Judgement::EchoedPrompt),
                duration: answer.duration,
                answer: Some(cap_text(&answer.raw, ANSWER_CAP)),
                usage: answer.usage,
                cached: answer.cached,
            },
            Ok(answer) => Tried {
                judged: graders::judge(
                    &case.checks,
                    &Answered {
                        case: &case.case,
                        output: &answer.output,
                        text: graders::answer_text(&answer.output),
                        duration: answer.duration,
                        usage: answer.usage.as_ref(),
                        cached: answer.cached,
                    },
                    &settings.grading,
                    case.case.threshold.or(settings.threshold),
                ),
                duration: answer.duration,
                answer: Some(cap_text(&answer.raw, ANSWER_CAP)),
                usage: answer.usage,
                cached: answer.cached,
            },
            Err(SutError::Cancelled) => return None,
            Err(SutError::Timeout { after }) => Tried {
                judged: Judged::unanswered(Judgement::Timeout(format!("no answer within {}s", after.as_secs_f64()))),
                duration: started.elapsed(),
                answer: None,
                usage: None,
                cached: false,
            },
            Err(SutError::Backend { message, raw }) => Tried {
                judged: Judged::unanswered(Judgement::BackendError(message)),
                duration: started.elapsed(),
                answer: raw.map(|r| cap_text(&r, ANSWER_CAP)),
                usage: None,
                cached: false,
            },
        };
        tries.push(tried);
    }
    Some(judge(ask, tries, settings))
}

/// Folds the attempts into one case: all passed → passed; at least `min-pass` → flaky; else the
/// first failing attempt's reason and status.
fn judge(ask: &Ask<'_>, tries: Vec<Tried>, settings: &Settings) -> Case {
    let case = ask.case;
    let passes = tries.iter().filter(|t| t.judged.judgement == Judgement::Pass).count() as u32;
    let total = tries.len() as u32;
    let first_failure = tries.iter().find(|t| t.judged.judgement != Judgement::Pass);
    let shown = first_failure.or(tries.first());
    let status = match first_failure {
        None => CaseStatus::Passed,
        Some(_) if passes >= settings.min_pass => CaseStatus::Flaky,
        Some(failure) => failure.judged.judgement.status(),
    };
    let mut message = shown.and_then(|t| t.judged.judgement.message());
    if total > 1 && passes < total {
        let note = format!("passed {passes} of {total} attempts (min-pass {})", settings.min_pass);
        message = Some(match message {
            Some(m) => format!("{note}; {m}"),
            None => note,
        });
    }
    let mut tags = case.case.tags.clone();
    if let Some(category) = &case.case.category {
        tags.insert(crate::model::CATEGORY_TAG.into(), category.clone());
    }
    let expected = case.case.expected_command.clone().or_else(|| {
        case.case.expected.as_ref().map(|v| match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    });
    let mut details = format!("prompt: {}", ask.request.prompt);
    if let Some(expected) = &expected {
        details.push_str(&format!("\nexpected: {expected}"));
    }
    if let Some(answer) = shown.and_then(|t| t.answer.as_deref()) {
        details.push_str(&format!("\nanswer: {answer}"));
    }
    if let Some(t) = shown.filter(|t| !t.judged.assertions.is_empty()) {
        details.push_str(&graders::describe(&t.judged));
    }
    let attempts = if total > 1 {
        tries
            .iter()
            .map(|t| Attempt {
                status: t.judged.judgement.status(),
                duration_ms: Some(t.duration.as_secs_f64() * 1000.0),
                message: t.judged.judgement.message(),
                details: None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let mut usage: Option<Usage> = None;
    for t in &tries {
        if let Some(u) = &t.usage {
            add_usage(usage.get_or_insert_with(Usage::default), u);
        }
    }
    Case {
        name: ask.name.clone().into(),
        status,
        duration_ms: Some(tries.iter().map(|t| t.duration.as_secs_f64() * 1000.0).sum()),
        extra: crate::model::CaseExtra {
            eval: crate::model::EvalExtra {
                sut: ask.sut_name.clone(),
                prompt: ask.prompt_name.clone(),
                tags,
                reasons: shown.map(|t| vec![t.judged.judgement.reason()]).unwrap_or_default(),
                assertions: shown.map(|t| t.judged.assertions.clone()).unwrap_or_default(),
                expectation_source: Some(settings.source.clone()),
                usage,
                cached: tries.iter().any(|t| t.cached),
            }
            .packed(),
            details: Some(details.into()),
            output: shown.and_then(|t| t.answer.as_ref().map(Into::into)),
            retries: total.saturating_sub(1),
            attempts,
            critical: case.case.critical,
            score: shown.and_then(|t| t.judged.score).map(|s| crate::score::round2(s * 100.0)),
            ..Default::default()
        }
        .packed(),
        ..Case::default()
    }
    .with_message(message)
}

/// The case as the SUT sees it (stdin of a command, body of an HTTP call): `prompt` is the text
/// asked (the rendered template), `vars` the case's variables.
fn case_json(case: &dataset::TestCase, prompt: &str) -> serde_json::Value {
    let mut object = serde_json::Map::new();
    object.insert("id".into(), case.id.clone().into());
    object.insert("prompt".into(), prompt.into());
    if !case.vars.is_empty() {
        let vars: serde_json::Map<String, serde_json::Value> =
            case.vars.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        object.insert("vars".into(), serde_json::Value::Object(vars));
    }
    if let Some(category) = &case.category {
        object.insert("category".into(), category.clone().into());
    }
    if !case.tags.is_empty() {
        let tags: BTreeMap<_, _> =
            case.tags.iter().map(|(k, v)| (k.clone(), serde_json::Value::from(v.clone()))).collect();
        object.insert("tags".into(), serde_json::Value::Object(tags.into_iter().collect()));
    }
    serde_json::Value::Object(object)
}

fn add_usage(total: &mut Usage, more: &Usage) {
    total.tokens += more.tokens;
    total.llm_calls += more.llm_calls;
    let sum = |a: Option<u64>, b: Option<u64>| {
        if a.is_none() && b.is_none() { None } else { Some(a.unwrap_or(0) + b.unwrap_or(0)) }
    };
    total.tokens_in = sum(total.tokens_in, more.tokens_in);
    total.tokens_out = sum(total.tokens_out, more.tokens_out);
    if let Some(cost) = more.cost_usd {
        total.cost_usd = Some(total.cost_usd.unwrap_or(0.0) + cost);
    }
}

/// The suite's usage: the sum over cases, or `None` when no case reported any.
fn total_usage(cases: &[Case]) -> Option<Usage> {
    let mut total: Option<Usage> = None;
    for usage in cases.iter().filter_map(|c| c.extra().eval().usage.as_ref()) {
        add_usage(total.get_or_insert_with(Usage::default), usage);
    }
    total
}

/// A system's settings checked when the configuration is read, except the secrets they name:
/// an unset `api-key-env` or `{env:X}` header is the suite's error when it runs (exit 2, naming
/// the variable), so `--filter` can run the other suites without it and a run without a filter
/// still runs them (every other setting is still checked here, with its line).
fn unless_secret_unset<T>(built: Result<T, SutConfigError>) -> Result<(), SutConfigError> {
    match built {
        Ok(_) | Err(SutConfigError::MissingEnv { .. }) => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashMap, VecDeque};
    use std::path::Path;
    use std::sync::atomic::AtomicBool;

    use serde_json::{Value, json};

    use super::*;
    use crate::config::Config;
    use crate::events::NullSink;
    use crate::execute::ExecContext;
    use crate::plan::{Overrides, plan};
    use crate::runners::run_suites;
    use crate::sut::SutAnswer;

    /// A system under test that answers from a script, per prompt and in order, and measures
    /// how many calls are in flight at once.
    #[derive(Default)]
    struct Scripted {
        answers: Mutex<HashMap<String, VecDeque<Result<Value, SutError>>>>,
        in_flight: AtomicUsize,
        most: AtomicUsize,
        delay: Duration,
    }

    impl Scripted {
        fn with(answers: &[(&str, Vec<Result<Value, SutError>>)]) -> Scripted {
            let map = answers.iter().map(|(p, a)| (p.to_string(), a.iter().cloned().collect())).collect();
            Scripted { answers: Mutex::new(map), ..Scripted::default() }
        }
    }

    impl Sut for Scripted {
        fn call(&self, request: &SutRequest) -> Result<SutAnswer, SutError> {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            std::thread::sleep(self.delay);
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            let next = self.answers.lock().unwrap().get_mut(&request.prompt).and_then(VecDeque::pop_front);
            let output = next.unwrap_or_else(|| Err(SutError::Backend { message: "unscripted".into(), raw: None }))?;
            Ok(SutAnswer {
                raw: super::graders::answer_text(&output),
                output,
                usage: Some(Usage {
                    tokens: 10,
                    llm_calls: 1,
                    cost_usd: Some(0.001),
                    tokens_in: Some(7),
                    tokens_out: Some(3),
                }),
                duration: Duration::from_millis(1),
                attempts: 1,
                cached: false,
            })
        }
    }

    fn cases(toml_text: &str) -> Vec<EvalCase> {
        let parsed = dataset::parse(toml_text, "toml").unwrap().unwrap();
        dataset::compile(parsed).unwrap()
    }

    /// Each case asked once, through its own prompt, of the one system.
    fn asks(cases: &[EvalCase]) -> Vec<Ask<'_>> {
        cases
            .iter()
            .map(|c| Ask {
                case: c,
                name: c.case.id.clone(),
                request: SutRequest {
                    id: c.case.id.clone(),
                    prompt: c.case.prompt.clone(),
                    case: case_json(&c.case, &c.case.prompt),
                },
                sut: 0,
                sut_name: None,
                prompt_name: None,
            })
            .collect()
    }

    fn settings(repeat: u32, min_pass: u32, concurrency: usize) -> Settings {
        Settings {
            repeat,
            min_pass,
            concurrency,
            source: "cases.toml".into(),
            threshold: None,
            grading: GradingContext::default(),
        }
    }

    const TWO: &str = "[[test_cases]]\nid = 'a'\nprompt = 'list'\nexpected_command = 'ls -la'\ncategory = 'files'\nsafe = true\nposix_compliant = true\ncritical = true\n\n[[test_cases]]\nid = 'b'\nprompt = 'where'\nexpected_command = 'pwd'\ncategory = 'nav'\n";

    #[test]
    fn each_case_records_one_reason_category_and_usage() {
        let sut = Scripted::with(&[("list", vec![Ok(json!("ls -al"))]), ("where", vec![Ok(json!("cd"))])]);
        let (done, stopped) = run_cases(&asks(&cases(TWO)), &[&sut], &settings(1, 1, 2), &|| false);
        assert!(!stopped);
        assert_eq!(done[0].status, CaseStatus::Passed);
        assert_eq!(done[0].extra().eval().reasons[0].code, "pass");
        assert_eq!(done[0].extra().eval().tags["category"], "files");
        assert!(done[0].extra().critical);
        assert_eq!(done[0].extra().eval().usage.as_ref().unwrap().tokens, 10);
        assert_eq!(done[1].status, CaseStatus::Failed);
        assert_eq!(done[1].extra().eval().reasons[0].code, "incorrect");
        assert!(done[1].details().as_deref().unwrap().contains("answer: cd"));
        assert_eq!(total_usage(&done).unwrap().tokens_in, Some(14));
    }

    #[test]
    fn sut_errors_become_timeout_and_backend_error() {
        let sut = Scripted::with(&[
            ("list", vec![Err(SutError::Timeout { after: Duration::from_secs(2) })]),
            ("where", vec![Err(SutError::Backend { message: "exit code 3".into(), raw: Some("boom".into()) })]),
        ]);
        let (done, _) = run_cases(&asks(&cases(TWO)), &[&sut], &settings(1, 1, 1), &|| false);
        assert_eq!(done[0].status, CaseStatus::Timeout);
        assert_eq!(done[0].extra().eval().reasons[0].code, "timeout");
        assert_eq!(done[1].status, CaseStatus::Error);
        assert_eq!(done[1].extra().eval().reasons[0].code, "backend-error");
        assert_eq!(done[1].extra().eval().reasons[0].message.as_deref(), Some("exit code 3"));
        assert_eq!(done[1].output().as_deref(), Some("boom"));
    }

    #[test]
    fn repeat_with_min_pass_reports_flaky_and_failures() {
        let sut = Scripted::with(&[
            ("list", vec![Ok(json!("ls -la")), Ok(json!("ls")), Ok(json!("ls -la"))]),
            ("where", vec![Ok(json!("pwd")), Ok(json!("ls")), Ok(json!("ls"))]),
        ]);
        let (done, _) = run_cases(&asks(&cases(TWO)), &[&sut], &settings(3, 2, 2), &|| false);
        assert_eq!(done[0].status, CaseStatus::Flaky, "2 of 3 with min-pass 2");
        assert!(done[0].message().unwrap().starts_with("passed 2 of 3 attempts"));
        assert_eq!(done[0].extra().attempts.len(), 3);
        assert_eq!(done[0].extra().retries, 2);
        assert_eq!(done[1].status, CaseStatus::Failed, "1 of 3 is below min-pass");
        assert_eq!(done[1].extra().eval().usage.as_ref().unwrap().llm_calls, 3);
    }

    #[test]
    fn concurrency_is_bounded() {
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&format!("[[test_cases]]\nid = 'c{i}'\nprompt = 'p{i}'\nexpected = 'x'\n"));
        }
        let script: Vec<(String, Vec<Result<Value, SutError>>)> =
            (0..12).map(|i| (format!("p{i}"), vec![Ok(json!("x"))])).collect();
        let borrowed: Vec<(&str, Vec<Result<Value, SutError>>)> =
            script.iter().map(|(p, a)| (p.as_str(), a.clone())).collect();
        let mut sut = Scripted::with(&borrowed);
        sut.delay = Duration::from_millis(20);
        let (done, _) = run_cases(&asks(&cases(&text)), &[&sut], &settings(1, 1, 3), &|| false);
        assert_eq!(done.len(), 12);
        assert!(done.iter().all(|c| c.status == CaseStatus::Passed));
        let most = sut.most.load(Ordering::SeqCst);
        assert!((2..=3).contains(&most), "at most 3 calls in flight, saw {most}");
    }

    #[test]
    fn cancellation_stops_and_leaves_unasked_cases_out() {
        let sut = Scripted::with(&[("list", vec![Ok(json!("ls -la"))])]);
        let stop = AtomicBool::new(true);
        let (done, stopped) =
            run_cases(&asks(&cases(TWO)), &[&sut], &settings(1, 1, 1), &|| stop.load(Ordering::SeqCst));
        assert!(stopped);
        assert!(done.is_empty());
    }

    fn exec(dir: &Path) -> ExecContext {
        ExecContext {
            out_dir: dir.join("out"),
            cache_dir: dir.join("cache"),
            jobs: 1,
            grace: Duration::from_millis(100),
        }
    }

    /// A real `command` SUT: a shell script answering by prompt, one that hangs, one that
    /// prints a broken answer envelope, one that exits non-zero.
    #[test]
    fn runs_through_the_seam_with_a_real_command_sut() {
        let dir = tempfile::tempdir().unwrap();
        let script = "#!/bin/sh\ncase \"$1\" in\n  list) echo 'ls -al' ;;\n  where) echo 'cd ..' ;;\n  hang) sleep 30 ;;\n  junk) printf '{\"output\": ' ;;\n  fail) echo oops >&2; exit 3 ;;\nesac\n";
        std::fs::write(dir.path().join("sut.sh"), script).unwrap();
        let mut cases = String::from(TWO);
        for id in ["hang", "junk", "fail"] {
            cases.push_str(&format!("\n[[test_cases]]\nid = '{id}'\nprompt = '{id}'\nexpected_command = 'true'\n"));
        }
        std::fs::write(dir.path().join("cases.toml"), cases).unwrap();
        let config_text = "[[suite]]\nname = \"shell\"\nkind = \"eval\"\npolicy = \"pass-rate\"\nmin-score = 50\ndataset = \"cases.toml\"\n\n[suite.sut]\ntype = \"command\"\ncommand = \"sh ./sut.sh {prompt}\"\nstdin = \"none\"\ntimeout = 1\nretries = 0\n";
        let config_path = dir.path().join("fcorr.toml");
        std::fs::write(&config_path, config_text).unwrap();
        let config = Config::load(&config_path, &crate::kinds::KINDS).unwrap();
        let plans = plan(&config, &[], &Overrides::default(), &crate::kinds::KINDS).unwrap();
        let started = Instant::now();
        let suites = run_suites(&plans, &exec(dir.path()), &NullSink);
        assert!(started.elapsed() < Duration::from_secs(10), "the hanging SUT was killed at its timeout");
        let suite = &suites[0];
        assert_eq!(suite.kind, SuiteKind::Eval);
        let reason =
            |id: &str| suite.cases.iter().find(|c| c.name == id).unwrap().extra().eval().reasons[0].code.clone();
        assert_eq!(reason("a"), "pass");
        assert_eq!(reason("b"), "incorrect");
        assert_eq!(reason("hang"), "timeout");
        assert_eq!(reason("junk"), "backend-error");
        assert_eq!(reason("fail"), "backend-error");
        assert_eq!(suite.status, SuiteStatus::Failed);
        assert_eq!(suite.score.value, 20.0);
        assert!(!suite.score.met);
        // The critical case passed, so nothing critical failed.
        assert!(suite.cases.iter().filter(|c| c.extra().critical).all(|c| c.status == CaseStatus::Passed));
        assert!(dir.path().join("out/logs/shell.log").is_file());
    }

    #[test]
    fn config_errors_name_the_key() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fcorr.toml");
        let write = |text: &str| std::fs::write(&path, text).unwrap();
        write(
            "[[suite]]\nkind = \"eval\"\ndataset = \"missing.toml\"\n[suite.sut]\ntype = \"command\"\ncommand = \"true\"\n",
        );
        let err = Config::load(&path, &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("missing.toml: no such file") && err.contains("line 3"), "{err}");
        std::fs::write(dir.path().join("c.toml"), "").unwrap();
        write("[[suite]]\nkind = \"eval\"\ndataset = \"c.toml\"\n");
        let err = Config::load(&path, &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("[suite.sut]"), "{err}");
        write(
            "[[suite]]\nkind = \"eval\"\ndataset = \"c.toml\"\nrepeat = 2\nmin-pass = 3\n[suite.sut]\ntype = \"command\"\ncommand = \"true\"\n",
        );
        let err = Config::load(&path, &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("min-pass") && err.contains("line 5"), "{err}");
        // A template in a multi-line string: the error is on the config line of the bad text
        // (line 11), not one above it where the quotes open.
        write(
            "[[suite]]\nkind = \"eval\"\ndataset = \"c.toml\"\n[suite.sut]\ntype = \"command\"\ncommand = \"true\"\n\
             [[suite.prompts]]\nname = \"p\"\ntemplate = \"\"\"\nfirst line\nsecond {{ oops(\n\"\"\"\n",
        );
        let err = Config::load(&path, &crate::kinds::KINDS).unwrap_err().to_string();
        assert!(err.contains("line 11"), "{err}");
    }
}
