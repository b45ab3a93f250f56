//! Renders fcorr's Markdown the way GitHub shows it, for the screenshots in docs/img
//! (scripts/screenshots.sh): comrak with GitHub's extensions (the options fcorr's own tests
//! parse with), the raw HTML GitHub keeps (`<details>`, `<summary>`, `<sub>`, `<br>`), a
//! GitHub-like stylesheet around it, and a Mermaid block as a note (GitHub draws it as a chart).
//!
//!   cargo run --example markdown-preview -- IN.md OUT.html "the box's header line"

use std::process::ExitCode;

const STYLE: &str = include_str!("browser/github.css");

/// The fenced `mermaid` blocks of `markdown`, each replaced by a one-line note.
fn without_mermaid(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    let mut inside = false;
    for line in markdown.split_inclusive('\n') {
        if !inside && line.trim_start().starts_with("```mermaid") {
            inside = true;
            out.push_str("<p class=\"mermaid-note\">📊 A Mermaid chart: GitHub draws it here.</p>\n");
        } else if inside {
            inside = line.trim() != "```";
        } else {
            out.push_str(line);
        }
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [input, output, title] = args.as_slice() else {
        eprintln!("usage: markdown-preview IN.md OUT.html TITLE");
        return ExitCode::from(2);
    };
    let markdown = match std::fs::read_to_string(input) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("markdown-preview: {input}: {e}");
            return ExitCode::from(2);
        }
    };
    let mut options = fcorr::report::html::options();
    // The input is fcorr's own rendering; GitHub keeps the same handful of tags.
    options.render.r#unsafe = true;
    let body = comrak::markdown_to_html(&without_mermaid(&markdown), &options);
    let page = format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title><style>{STYLE}</style></head><body><div class=\"box\">\
         <div class=\"box-header\">{title}</div>\
         <div class=\"markdown-body\">{body}</div></div></body></html>\n",
        title = escape(title)
    );
    match std::fs::write(output, page) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("markdown-preview: {output}: {e}");
            ExitCode::from(2)
        }
    }
}
