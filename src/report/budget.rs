//! Size budgets for Markdown surfaces (PR comment, job summary) and the last-resort trim.
//!
//! Reports degrade in steps before anything is cut (see `markdown.rs`); when even the smallest
//! rendering is too big, [`hard_trim`] cuts on a line boundary, closes any open code fence and
//! `<details>`, and appends a notice, so the result is always well-formed Markdown.

/// How a budget is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Unicode scalar values (GitHub counts comment length in characters).
    Chars,
    /// UTF-8 bytes (the step summary limit is 1 MiB).
    Bytes,
}

/// A size limit for one surface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub limit: usize,
    pub unit: Unit,
}

impl Budget {
    /// PR comments: GitHub rejects bodies over 65,536 characters; keep a margin for the marker.
    pub const COMMENT: Budget = Budget { limit: 65_000, unit: Unit::Chars };
    /// Job summaries: GitHub rejects step summaries over 1 MiB.
    pub const SUMMARY: Budget = Budget { limit: 1_000_000, unit: Unit::Bytes };

    /// Size of `text` in this budget's unit.
    pub fn size(&self, text: &str) -> usize {
        match self.unit {
            Unit::Chars => text.chars().count(),
            Unit::Bytes => text.len(),
        }
    }

    /// True when `text` is within the limit.
    pub fn fits(&self, text: &str) -> bool {
        // Byte length bounds char count from above, so the cheap check often decides.
        text.len() <= self.limit || self.size(text) <= self.limit
    }

    /// The limit in words, e.g. `65,000 characters`.
    pub fn describe(&self) -> String {
        let unit = match self.unit {
            Unit::Chars => "characters",
            Unit::Bytes => "bytes",
        };
        format!("{} {unit}", crate::text::thousands(self.limit as u64))
    }
}

/// Open constructs at the end of a Markdown prefix that must be closed after a cut.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct OpenBlocks {
    /// The fence that opened an unclosed code block.
    pub fence: Option<String>,
    /// `<details>` elements opened and not closed (outside code blocks).
    pub details: usize,
}

/// Scans Markdown line by line for an unclosed fenced code block and unclosed `<details>`.
///
/// `<details>`/`</details>` count only at the start of a line (after indentation), which is where
/// templates put them; escaped user text never starts a line with `<`.
pub fn open_blocks(markdown: &str) -> OpenBlocks {
    let mut open = OpenBlocks::default();
    for line in markdown.lines() {
        if let Some(fence) = &open.fence {
            if closes_fence(fence, line) {
                open.fence = None;
            }
            continue;
        }
        open.fence = opens_fence(line);
        if open.fence.is_some() {
            continue;
        }
        let lower = line.trim_start().to_ascii_lowercase();
        if lower.starts_with("<details") {
            open.details += 1;
        }
        if lower.starts_with("<details") || lower.starts_with("</details") {
            open.details = open.details.saturating_sub(lower.matches("</details>").count());
        }
    }
    open
}

/// The fence a line opens (three or more backticks or tildes, indented at most three spaces).
fn opens_fence(line: &str) -> Option<String> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let trimmed = line.trim_start();
    if indent > 3 {
        return None;
    }
    ['`', '~'].into_iter().find_map(|ch| {
        let run = trimmed.chars().take_while(|c| *c == ch).count();
        // A backtick fence's info string cannot contain backticks.
        (run >= 3 && !(ch == '`' && trimmed[run..].contains('`'))).then(|| ch.to_string().repeat(run))
    })
}

/// True when `line` closes a block opened with `fence`.
fn closes_fence(fence: &str, line: &str) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    let trimmed = line.trim_start();
    let ch = fence.as_bytes()[0];
    let run = trimmed.bytes().take_while(|b| *b == ch).count();
    indent <= 3 && run >= fence.len() && trimmed[run..].trim().is_empty()
}

/// Markdown with at most one blank line in a row outside fenced code blocks, and none at the
/// start: templates can end each section with a blank line without stacking them up. Code
/// blocks (logs, traces) keep every line.
pub fn squeeze_blank_lines(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut fence: Option<String> = None;
    let mut blank = true;
    for line in markdown.split_inclusive('\n') {
        let text = line.trim_end_matches(['\n', '\r']);
        match &fence {
            Some(f) => {
                if closes_fence(f, text) {
                    fence = None;
                }
            }
            None if text.trim().is_empty() => {
                if blank {
                    continue;
                }
                blank = true;
                out.push_str(line);
                continue;
            }
            None => fence = opens_fence(text),
        }
        blank = false;
        out.push_str(line);
    }
    out
}

/// Cuts `text` to fit `budget` on a line boundary (never mid-character), closes what the cut left
/// open and appends `notice` as the last paragraph.
pub fn hard_trim(text: &str, budget: &Budget, notice: &str) -> String {
    if budget.fits(text) {
        return text.to_string();
    }
    // Room for the notice, a closing fence (at most as long as the longest backtick run) and
    // closing tags; computed generously so the result is always within the limit.
    let tail_reserve = budget.size(notice) + 64 + longest_fence(text) + 16 * count_details(text);
    let room = budget.limit.saturating_sub(tail_reserve);
    let mut end = prefix_end(text, room, budget.unit);
    // Back up to the end of a whole line so no table row, tag or code span is cut.
    end = text[..end].rfind('\n').map(|i| i + 1).unwrap_or(0);
    let mut out = text[..end].to_string();
    let open = open_blocks(&out);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    if let Some(fence) = open.fence {
        out.push_str(&fence);
        out.push('\n');
    }
    for _ in 0..open.details {
        out.push_str("\n</details>\n");
    }
    out.push('\n');
    out.push_str(notice);
    out.push('\n');
    out
}

/// Byte index of the longest prefix of `text` whose size is at most `room` units.
fn prefix_end(text: &str, room: usize, unit: Unit) -> usize {
    match unit {
        Unit::Bytes => crate::text::floor_boundary(text, room),
        Unit::Chars => text.char_indices().nth(room).map(|(i, _)| i).unwrap_or(text.len()),
    }
}

fn longest_fence(text: &str) -> usize {
    text.lines()
        .map(|l| {
            let t = l.trim_start();
            t.chars().take_while(|c| *c == '`').count().max(t.chars().take_while(|c| *c == '~').count())
        })
        .max()
        .unwrap_or(0)
}

fn count_details(text: &str) -> usize {
    text.matches("<details").count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_open_fence_and_details() {
        let md = "# t\n<details><summary>x</summary>\n\n````\ncode ``` still code\n```\n";
        let open = open_blocks(md);
        assert_eq!(open.fence.as_deref(), Some("````"));
        assert_eq!(open.details, 1);
        let closed = open_blocks("<details>\n\n```\nx\n```\n\n</details>\n");
        assert_eq!(closed, OpenBlocks::default());
    }

    #[test]
    fn trim_closes_what_it_cut_and_fits() {
        let mut md = String::from("<details><summary>log</summary>\n\n```\n");
        for i in 0..1000 {
            md.push_str(&format!("line {i} é😀\n"));
        }
        md.push_str("```\n\n</details>\n");
        let budget = Budget { limit: 500, unit: Unit::Chars };
        let out = hard_trim(&md, &budget, "_(trimmed)_");
        assert!(budget.fits(&out), "{} chars", out.chars().count());
        assert_eq!(open_blocks(&out), OpenBlocks::default());
        assert!(out.ends_with("_(trimmed)_\n"));
        let bytes = Budget { limit: 333, unit: Unit::Bytes };
        let out = hard_trim(&md, &bytes, "cut");
        assert!(out.len() <= 333);
    }

    #[test]
    fn blank_lines_squeeze_outside_code_only() {
        let md = "\n\n# t\n\n\n\ntext\n```\na\n\n\nb\n```\n\n\n~~~~\n\n\n~~~~\nend\n";
        assert_eq!(squeeze_blank_lines(md), "# t\n\ntext\n```\na\n\n\nb\n```\n\n~~~~\n\n\n~~~~\nend\n");
    }

    #[test]
    fn describes_limits() {
        assert_eq!(Budget::COMMENT.describe(), "65,000 characters");
        assert_eq!(Budget::SUMMARY.describe(), "1,000,000 bytes");
    }
}
