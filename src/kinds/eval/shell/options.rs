//! The option syntax of the commands whose options normalisation may rewrite (docs/evals.md,
//! "Known commands"): which options take an argument, which spellings are the same option, and
//! which options override one another. Only what is listed is rewritten; an option not listed
//! here is kept as written and nothing moves across it.

/// One command's (or `git` subcommand's) options, as GNU getopt reads them.
pub(super) struct Syntax {
    /// `head`, or `git log` for a subcommand.
    pub commands: &'static [&'static str],
    /// Short options without an argument.
    pub short_flags: &'static str,
    /// Short options with a required argument: `-n5` ≡ `-n 5`; the rest of a group is the argument.
    pub short_args: &'static str,
    /// Long options without an argument (besides the `aliases`).
    pub long_flags: &'static [&'static str],
    /// Long options with a required argument (besides the `aliases`): `--x=v` ≡ `--x v`.
    pub long_args: &'static [&'static str],
    /// Long spellings of short options (`--lines` is `-n`): same option, same argument.
    pub aliases: &'static [(&'static str, &'static str)],
    /// Options that override or contradict one another (`head -n 3 -c 5`: the last wins): their
    /// order among themselves is kept.
    pub conflicts: &'static [&'static [&'static str]],
    /// Options whose position matters (`tar -C` applies to what follows): never moved, and
    /// nothing is moved across them.
    pub fixed: &'static [&'static str],
    /// The first operand ends the options: the rest is another command's (`xargs`).
    pub operands_end_options: bool,
}

impl Syntax {
    /// The canonical spelling of an option (`--lines` → `-n`) and whether it takes an argument;
    /// `None` for an option this table does not know.
    pub(super) fn option(&self, name: &str) -> Option<(&'static str, bool)> {
        let short = |letter: char| -> Option<(&'static str, bool)> {
            let canonical = SHORT_NAMES.iter().find(|s| s.chars().nth(1) == Some(letter))?;
            if self.short_args.contains(letter) {
                Some((canonical, true))
            } else if self.short_flags.contains(letter) {
                Some((canonical, false))
            } else {
                None
            }
        };
        if let Some(&(_, target)) = self.aliases.iter().find(|(long, _)| *long == name) {
            return short(target.chars().nth(1)?);
        }
        if let Some(letter) = name.strip_prefix('-').filter(|r| !r.starts_with('-')) {
            let mut letters = letter.chars();
            return match (letters.next(), letters.next()) {
                (Some(c), None) => short(c),
                _ => None,
            };
        }
        if let Some(long) = self.long_flags.iter().find(|l| **l == name) {
            return Some((long, false));
        }
        self.long_args.iter().find(|l| **l == name).map(|long| (*long, true))
    }

    /// What an option sorts by: the first option of its conflict group, so options that override
    /// one another keep their order (the sort is stable), else its own name.
    pub(super) fn sort_key(&self, canonical: &'static str) -> &'static str {
        self.conflicts.iter().find(|group| group.contains(&canonical)).map_or(canonical, |group| group[0])
    }

    pub(super) fn is_fixed(&self, canonical: &str) -> bool {
        self.fixed.contains(&canonical)
    }
}

/// `-a` … `-z`, `-A` … `-Z`, `-0` … `-9` as static strings.
const SHORT_NAMES: &[&str] = &[
    "-a", "-b", "-c", "-d", "-e", "-f", "-g", "-h", "-i", "-j", "-k", "-l", "-m", "-n", "-o", "-p", "-q", "-r", "-s",
    "-t", "-u", "-v", "-w", "-x", "-y", "-z", "-A", "-B", "-C", "-D", "-E", "-F", "-G", "-H", "-I", "-J", "-K", "-L",
    "-M", "-N", "-O", "-P", "-Q", "-R", "-S", "-T", "-U", "-V", "-W", "-X", "-Y", "-Z", "-0", "-1", "-2", "-3", "-4",
    "-5", "-6", "-7", "-8", "-9",
];

/// The syntax of a command (`head`) or of `git` with its subcommand (`git log`).
pub(super) fn syntax_of(command: &str) -> Option<&'static Syntax> {
    KNOWN.iter().find(|s| s.commands.contains(&command))
}

const NONE: &[&str] = &[];

/// The commands normalisation knows. Each table lists only options checked against the GNU tool's
/// manual (coreutils 9, grep 3, git 2.4x, tar 1.35, findutils 4.9).
const KNOWN: &[Syntax] = &[
    Syntax {
        commands: &["head"],
        short_flags: "qvz",
        short_args: "nc",
        long_flags: NONE,
        long_args: NONE,
        aliases: &[
            ("--lines", "-n"),
            ("--bytes", "-c"),
            ("--quiet", "-q"),
            ("--silent", "-q"),
            ("--verbose", "-v"),
            ("--zero-terminated", "-z"),
        ],
        conflicts: &[&["-n", "-c"], &["-q", "-v"]],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["tail"],
        short_flags: "fFqvz",
        short_args: "ncs",
        long_flags: &["--retry"],
        long_args: &["--pid", "--max-unchanged-stats"],
        aliases: &[
            ("--lines", "-n"),
            ("--bytes", "-c"),
            ("--sleep-interval", "-s"),
            ("--quiet", "-q"),
            ("--silent", "-q"),
            ("--verbose", "-v"),
            ("--zero-terminated", "-z"),
        ],
        conflicts: &[&["-n", "-c"], &["-q", "-v"], &["-f", "-F"]],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["grep", "egrep", "fgrep"],
        short_flags: "EFGPivwxclLoqsrRnhHbaIUzZT",
        short_args: "efmABCdD",
        long_flags: NONE,
        long_args: &["--include", "--exclude", "--exclude-dir", "--exclude-from", "--label", "--binary-files"],
        aliases: &[
            ("--regexp", "-e"),
            ("--file", "-f"),
            ("--max-count", "-m"),
            ("--after-context", "-A"),
            ("--before-context", "-B"),
            ("--context", "-C"),
            ("--directories", "-d"),
            ("--devices", "-D"),
            ("--extended-regexp", "-E"),
            ("--fixed-strings", "-F"),
            ("--basic-regexp", "-G"),
            ("--perl-regexp", "-P"),
            ("--ignore-case", "-i"),
            ("--invert-match", "-v"),
            ("--word-regexp", "-w"),
            ("--line-regexp", "-x"),
            ("--count", "-c"),
            ("--files-with-matches", "-l"),
            ("--files-without-match", "-L"),
            ("--only-matching", "-o"),
            ("--quiet", "-q"),
            ("--silent", "-q"),
            ("--no-messages", "-s"),
            ("--recursive", "-r"),
            ("--dereference-recursive", "-R"),
            ("--line-number", "-n"),
            ("--no-filename", "-h"),
            ("--with-filename", "-H"),
            ("--byte-offset", "-b"),
            ("--text", "-a"),
            ("--null-data", "-z"),
            ("--null", "-Z"),
            ("--initial-tab", "-T"),
        ],
        conflicts: &[
            &["-E", "-F", "-G", "-P"],
            &["-A", "-B", "-C"],
            &["-c", "-l", "-L", "-o", "-q"],
            &["-h", "-H"],
            &["-r", "-R", "-d"],
            &["-a", "-I", "--binary-files"],
        ],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["cut"],
        short_flags: "sz",
        short_args: "bcfd",
        long_flags: &["--complement"],
        long_args: &["--output-delimiter"],
        aliases: &[
            ("--bytes", "-b"),
            ("--characters", "-c"),
            ("--fields", "-f"),
            ("--delimiter", "-d"),
            ("--only-delimited", "-s"),
            ("--zero-terminated", "-z"),
        ],
        conflicts: &[&["-b", "-c", "-f"]],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["sort"],
        short_flags: "bdfgiMhnRrVcCmsuz",
        short_args: "ktoST",
        long_flags: NONE,
        long_args: &["--parallel", "--batch-size", "--files0-from", "--compress-program", "--random-source"],
        aliases: &[
            ("--key", "-k"),
            ("--field-separator", "-t"),
            ("--output", "-o"),
            ("--buffer-size", "-S"),
            ("--temporary-directory", "-T"),
            ("--ignore-leading-blanks", "-b"),
            ("--dictionary-order", "-d"),
            ("--ignore-case", "-f"),
            ("--general-numeric-sort", "-g"),
            ("--ignore-nonprinting", "-i"),
            ("--month-sort", "-M"),
            ("--human-numeric-sort", "-h"),
            ("--numeric-sort", "-n"),
            ("--random-sort", "-R"),
            ("--reverse", "-r"),
            ("--version-sort", "-V"),
            ("--merge", "-m"),
            ("--stable", "-s"),
            ("--unique", "-u"),
            ("--zero-terminated", "-z"),
        ],
        // Keys (-k) are compared in the order given: repeated, they keep their order.
        conflicts: &[&["-c", "-C"], &["-g", "-M", "-h", "-n", "-R", "-V"]],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["ls"],
        // Not -f: it implies -a and -U and turns -l off, an interplay no grouping here keeps.
        short_flags: "aAbBcCdDFgGhHiklLmnNopqQrRsStuUvxXZ1",
        short_args: "wIT",
        long_flags: &["--group-directories-first", "--si", "--full-time"],
        long_args: &["--block-size", "--hide"],
        aliases: &[
            ("--all", "-a"),
            ("--almost-all", "-A"),
            ("--escape", "-b"),
            ("--ignore-backups", "-B"),
            ("--directory", "-d"),
            ("--classify", "-F"),
            ("--no-group", "-G"),
            ("--human-readable", "-h"),
            ("--inode", "-i"),
            ("--dereference", "-L"),
            ("--numeric-uid-gid", "-n"),
            ("--literal", "-N"),
            ("--hide-control-chars", "-q"),
            ("--quote-name", "-Q"),
            ("--reverse", "-r"),
            ("--recursive", "-R"),
            ("--size", "-s"),
            ("--context", "-Z"),
            ("--width", "-w"),
            ("--ignore", "-I"),
            ("--tabsize", "-T"),
        ],
        conflicts: &[
            // Output format: the last one wins.
            &["-l", "-1", "-C", "-x", "-m", "-g", "-n", "-o"],
            // Sort order and which time is shown or sorted by.
            &["-S", "-t", "-U", "-v", "-X", "-c", "-u"],
            &["-a", "-A"],
            &["-b", "-q", "-N", "-Q"],
            &["-F", "-p"],
            &["-h", "-k", "--si", "--block-size"],
            &["-L", "-H"],
        ],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["git log"],
        short_flags: "p",
        short_args: "n",
        long_flags: &[
            "--oneline",
            "--graph",
            "--all",
            "--stat",
            "--reverse",
            "--no-merges",
            "--merges",
            "--first-parent",
            "--name-only",
            "--name-status",
            "--abbrev-commit",
            "--follow",
            "--date-order",
            "--topo-order",
            "--author-date-order",
        ],
        long_args: &["--author", "--committer", "--grep", "--since", "--after", "--until", "--before", "--skip"],
        aliases: &[("--max-count", "-n"), ("--patch", "-p")],
        conflicts: &[
            &["--date-order", "--topo-order", "--author-date-order"],
            &["--name-only", "--name-status", "--stat", "-p"],
            &["--since", "--after"],
            &["--until", "--before"],
        ],
        fixed: NONE,
        operands_end_options: false,
    },
    Syntax {
        commands: &["tar"],
        short_flags: "cxtruAdzjJaZvkpPOwWmhS",
        short_args: "fCbTXIgKN",
        long_flags: NONE,
        long_args: NONE,
        aliases: &[
            ("--file", "-f"),
            ("--directory", "-C"),
            ("--create", "-c"),
            ("--extract", "-x"),
            ("--list", "-t"),
            ("--gzip", "-z"),
            ("--bzip2", "-j"),
            ("--xz", "-J"),
            ("--verbose", "-v"),
        ],
        conflicts: &[&["-c", "-x", "-t", "-r", "-u", "-A", "-d"], &["-z", "-j", "-J", "-Z", "-a", "-I"]],
        // -C changes the directory for what follows, -T and -X files included.
        fixed: &["-C"],
        operands_end_options: false,
    },
    Syntax {
        commands: &["xargs"],
        short_flags: "0rtpx",
        short_args: "nIPdsLaE",
        long_flags: NONE,
        long_args: NONE,
        aliases: &[
            ("--null", "-0"),
            ("--no-run-if-empty", "-r"),
            ("--verbose", "-t"),
            ("--interactive", "-p"),
            ("--exit", "-x"),
            ("--max-args", "-n"),
            ("--max-procs", "-P"),
            ("--delimiter", "-d"),
            ("--max-chars", "-s"),
            ("--max-lines", "-L"),
            ("--arg-file", "-a"),
        ],
        conflicts: &[&["-n", "-L", "-I"], &["-0", "-d"]],
        fixed: NONE,
        operands_end_options: true,
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_alias_names_a_listed_short_option_and_every_conflict_a_known_option() {
        for syntax in KNOWN {
            for (long, short) in syntax.aliases {
                assert!(syntax.option(long).is_some(), "{:?}: alias {long} -> {short}", syntax.commands);
            }
            for group in syntax.conflicts {
                for option in *group {
                    assert!(syntax.option(option).is_some(), "{:?}: conflict {option}", syntax.commands);
                }
            }
            for letter in syntax.short_args.chars() {
                assert!(!syntax.short_flags.contains(letter), "{:?}: -{letter} twice", syntax.commands);
            }
        }
    }

    #[test]
    fn spellings_of_one_option_are_one_option() {
        let head = syntax_of("head").unwrap();
        assert_eq!(head.option("--lines"), Some(("-n", true)));
        assert_eq!(head.option("-n"), Some(("-n", true)));
        assert_eq!(head.option("-q"), Some(("-q", false)));
        assert_eq!(head.option("-x"), None);
        assert_eq!(head.sort_key("-c"), "-n");
        assert_eq!(syntax_of("git log").unwrap().option("--author"), Some(("--author", true)));
        assert!(syntax_of("git status").is_none());
    }
}
