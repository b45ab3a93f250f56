//! Word counting helpers.

use std::collections::HashMap;

/// Counts whitespace-separated words.
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// Counts lines; a trailing newline does not start a new line.
pub fn line_count(text: &str) -> usize {
    text.lines().count()
}

/// Returns the most frequent word (case-insensitive, punctuation trimmed)
/// and how often it occurs. Ties go to the alphabetically first word.
pub fn most_frequent(text: &str) -> Option<(String, usize)> {
    let mut counts: HashMap<String, usize> = HashMap::new();
    for word in text.split_whitespace() {
        let w = word
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase();
        if !w.is_empty() {
            *counts.entry(w).or_insert(0) += 1;
        }
    }
    counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then_with(|| b.0.cmp(&a.0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_words() {
        assert_eq!(word_count("the quick  brown\tfox"), 4);
    }

    #[test]
    fn empty_text_has_no_words() {
        assert_eq!(word_count(""), 0);
        assert_eq!(most_frequent(""), None);
    }

    #[test]
    fn counts_lines() {
        assert_eq!(line_count("one\ntwo\nthree\n"), 3);
    }

    #[test]
    fn finds_most_frequent_word() {
        let text = "The cat saw the dog. The dog ran!";
        assert_eq!(most_frequent(text), Some(("the".to_string(), 3)));
    }

    #[test]
    fn ties_pick_alphabetically_first() {
        assert_eq!(most_frequent("b a"), Some(("a".to_string(), 1)));
    }
}
