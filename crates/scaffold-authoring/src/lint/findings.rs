//! What lint reports and with which ids: the rule ids (`rule`, listed by `RULES`), the
//! names every template may read besides the answers, and the collector each check adds
//! its findings to.
use regex::Regex;

use crate::diagnostic::{Diagnostic, Severity};

/// Lint's rule ids, one per kind of finding; every finding is a `Diagnostic` with one of
/// these (or, for what the default rendering breaks, the `check` rule that found it).
/// docs/blueprints.md lists them with `RULES`.
pub mod rule {
    pub const MANIFEST: &str = "blueprint.manifest";
    pub const REGEX: &str = "blueprint.regex";
    pub const ON_CHANGE: &str = "blueprint.on-change";
    pub const QUESTION_TWICE: &str = "blueprint.question-twice";
    pub const SYMLINK: &str = "blueprint.symlink";
    pub const TEMPLATE: &str = "blueprint.template";
    pub const FILE_NAME: &str = "blueprint.file-name";
    pub const CATALOG: &str = "blueprint.catalog";
    pub const OVERRIDE: &str = "blueprint.override";
    pub const DELIMITERS: &str = "blueprint.delimiters";
    pub const DEFAULT_INVALID: &str = "blueprint.default-invalid";
    pub const RENDER: &str = "blueprint.render";
    pub const MIGRATION: &str = "blueprint.migration";
    pub const ENVIRONMENT_SCOPE: &str = "blueprint.environment-scope";
}

/// Every lint rule with what it finds, for the docs and `--help`.
pub const RULES: &[(&str, &str)] = &[
    (
        rule::MANIFEST,
        "blueprint.yaml parses, loads and names only paths inside the blueprint",
    ),
    (rule::REGEX, "each question's regex compiles"),
    (
        rule::ON_CHANGE,
        "on_change parses and reads key, before and after only",
    ),
    (rule::QUESTION_TWICE, "each question key is asked once"),
    (rule::SYMLINK, "symlinks stay inside the blueprint"),
    (
        rule::TEMPLATE,
        "templates parse and read only names in their scope",
    ),
    (
        rule::FILE_NAME,
        "templated file names parse and read answers that exist",
    ),
    (
        rule::CATALOG,
        "catalog entries parse and their templates read known fields",
    ),
    (
        rule::OVERRIDE,
        "replaced and patched inherited files still match their base",
    ),
    (
        rule::DELIMITERS,
        "template text does not clash with the delimiters",
    ),
    (
        rule::DEFAULT_INVALID,
        "every default passes its own question's validation",
    ),
    (
        rule::RENDER,
        "the blueprint renders with every default, and `new` could write it",
    ),
    (
        rule::MIGRATION,
        "each `moves:` renders (per environment) to a free path inside the repo; with `--from OLD`, every path OLD wrote is written or moved",
    ),
    (
        rule::ENVIRONMENT_SCOPE,
        "nothing rendered once for every environment reads or differs by an environment's values",
    ),
];

/// Variables every template may read besides the answers.
pub const BUILTINS: &[&str] = &[
    "blueprint",
    "scaffold_version",
    "addons",
    "addon_names",
    crate::generate::FIRST_ENVIRONMENT_OF,
    "aws_names",
];

/// Read only by templates under addon-files/ (and the partials they include).
pub const ADDON_BUILTIN: &str = "addon";

/// Where lint's findings are collected: each check sets the `rule` its findings carry.
pub(super) struct Findings {
    pub(super) found: Vec<Diagnostic>,
    /// The blueprint directory as a prefix (`/abs/dir/`), cut from the files errors name.
    pub(super) root: String,
    pub(super) rule: &'static str,
}

impl Findings {
    pub(super) fn new(rule: &'static str) -> Self {
        Findings {
            found: Vec::new(),
            root: String::new(),
            rule,
        }
    }

    pub(super) fn error(&mut self, file: &str, at: (usize, usize), message: impl Into<String>) {
        let finding = Diagnostic::new(self.rule, Severity::Error, file, at, message);
        self.found.push(finding);
    }

    pub(super) fn warn(&mut self, file: &str, at: (usize, usize), message: impl Into<String>) {
        let finding = Diagnostic::new(self.rule, Severity::Warning, file, at, message);
        self.found.push(finding);
    }

    pub(super) fn has_errors(&self) -> bool {
        self.found.iter().any(Diagnostic::is_error)
    }

    /// An error: where it says, or (for the few Tera reports that exist only as text, and
    /// messages without a place) where its text names a blueprint file.
    pub(super) fn report_error(&mut self, err: &crate::error::Error) {
        match err {
            crate::error::Error::Located(at) => self.error_at(at),
            crate::error::Error::LocatedMany(places) => {
                places.iter().for_each(|at| self.error_at(at))
            }
            other => self.error_text("blueprint.yaml", &other.to_string()),
        }
    }

    pub(super) fn error_at(&mut self, at: &crate::error::Located) {
        let file = at.file.strip_prefix(self.root.as_str()).unwrap_or(&at.file);
        self.error(file, (at.line, at.column), at.message.clone());
    }

    /// An error message naming a blueprint file, maybe with `:LINE:COL`: reported there.
    pub(super) fn error_text(&mut self, fallback_file: &str, text: &str) {
        let re = Regex::new(
            r"^(?:.*?/)?((?:[\w.-]*files|addons|partials)/.+?|blueprint\.yaml)(?::(\d+):(\d+))?: (.*)$",
        );
        let text = text.strip_prefix("blueprint ").unwrap_or(text);
        let located = re.ok().and_then(|re| {
            re.captures(text).map(|c| {
                let num = |i: usize| c.get(i).and_then(|m| m.as_str().parse().ok()).unwrap_or(1);
                (c[1].to_string(), num(2), num(3), c[4].to_string())
            })
        });
        match located {
            Some((file, line, col, message)) => self.error(&file, (line, col), message),
            None => self.error(fallback_file, (1, 1), text),
        }
    }
}
