//! What report.html says about the baseline beyond the header's deltas: what to know before
//! trusting them (an unrelated baseline, another configuration), and the suites and failing tests
//! it had that this run no longer has, which no count of this run can show. The terminal and the
//! Markdown reports say the same, from the same `Comparison`.

use std::io::Write;

use super::escape;
use crate::compare::Comparison;
use crate::model::Run;

/// The comparison's cautions, one line each in the header, as the Markdown reports show them: an
/// unrelated baseline means `regression` was not checked, which the verdict alone does not say.
pub(super) fn write_cautions(c: &Comparison, out: &mut dyn Write) -> std::io::Result<()> {
    for caution in c.cautions() {
        let mut first = caution.chars();
        let capitalised: String = first.next().map(|ch| ch.to_uppercase().chain(first).collect()).unwrap_or_default();
        writeln!(out, "<p class=\"caution\">⚠ {}.</p>", escape(&capitalised))?;
    }
    Ok(())
}

/// Vanished failing tests listed one by one; the rest are counted (results.json lists all).
const LISTED: usize = 50;

/// The "Gone since the baseline" section, or nothing when no suite and no test is gone. Static
/// HTML, so it shows without the script, right under the verdict (on a phone too: it keeps the
/// header's place in the narrow layout's order, before the test list).
pub(super) fn write_gone(run: &Run, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(c) = &run.comparison else { return Ok(()) };
    let suites: Vec<_> = c.suites.iter().filter(|s| s.removed).collect();
    let tests = c.with_change(crate::compare::Change::Removed).count();
    if suites.is_empty() && tests == 0 {
        return Ok(());
    }
    out.write_all(
        b"<section class=\"gone\" aria-label=\"Gone since the baseline\"><h2>Gone since the baseline</h2>\
          <p class=\"muted\">In the baseline, not in this run, so in none of the counts above.</p><ul>",
    )?;
    for suite in &suites {
        let (total, failing) = suite.gone_counts();
        write!(out, "<li>suite <code>{}</code>: {total} test{} in the baseline", escape(&suite.name), plural(total))?;
        if failing > 0 {
            write!(out, ", <span class=\"st failed\">{failing} failing there</span>")?;
        }
        out.write_all(b"</li>")?;
    }
    let failing: Vec<_> = c.removed_failing().collect();
    for change in failing.iter().take(LISTED) {
        // Removed cases carry the status they had in the baseline (`compare::compare`).
        let before = change.before.map_or("failed", |s| s.label());
        write!(
            out,
            "<li>test <code>{}</code> in <code>{}</code>: <span class=\"st {before}\">{before}</span> in the baseline</li>",
            escape(&change.name),
            escape(suite_name(run, c, &change.suite_id)),
        )?;
    }
    out.write_all(b"</ul>")?;
    if failing.len() > LISTED {
        write!(
            out,
            "<p>… and {} more tests failing in the baseline, gone now: see results.json (<code>comparison.cases</code>).</p>",
            failing.len() - LISTED
        )?;
    }
    // The failing ones are among the removed ones; saturating all the same, never a panic.
    let others = tests.saturating_sub(failing.len());
    if others > 0 {
        write!(
            out,
            "<p class=\"muted\">{others} other test{} gone (passing or skipped in the baseline).</p>",
            plural(others as i64)
        )?;
    }
    out.write_all(b"</section>\n")
}

/// The name a suite is shown by: this run's (a removed case's suite is still here), else the
/// comparison's, else its id.
fn suite_name<'a>(run: &'a Run, c: &'a Comparison, id: &'a str) -> &'a str {
    run.suites
        .iter()
        .find(|s| s.id == id)
        .map(|s| s.name.as_str())
        .or_else(|| c.suites.iter().find(|s| s.suite_id == id).map(|s| s.name.as_str()))
        .unwrap_or(id)
}

fn plural(n: i64) -> &'static str {
    if n == 1 { "" } else { "s" }
}
