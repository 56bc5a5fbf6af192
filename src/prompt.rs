//! The terminal side of `answers::Prompter`: dialoguer prompts with help text, the default
//! shown, and re-prompting with the rule until an answer validates. Secret answers are
//! read without echo; selects keep a textual cursor (`>`) when colour is off; Ctrl-C
//! while asking ends the run with a message (nothing has been written yet).
// The interactive terminal, on stderr.
#![allow(clippy::print_stderr)]
use dialoguer::theme::{ColorfulTheme, SimpleTheme, Theme};
use dialoguer::{Confirm, Input, MultiSelect, Password, Select};
use serde_json::Value as Json;

use crate::answers::{Prompt, Prompter, as_text, show};
use crate::blueprint::QuestionType;
use crate::error::{Error, Result};
use crate::ui;

/// Typed at a prompt whose question may be empty but has a default: the empty answer
/// (an empty line takes the default instead).
pub const EMPTY_WORD: &str = "none";

pub struct Terminal {
    theme: Box<dyn Theme>,
}

impl Terminal {
    pub fn new() -> Self {
        let theme: Box<dyn Theme> = if ui::wants_color() {
            Box::new(ColorfulTheme::default())
        } else {
            // SimpleTheme marks the cursor with `>` and choices with [x]/[ ]: readable
            // without colour, where ColorfulTheme's cursor is a colour only.
            Box::new(SimpleTheme)
        };
        Terminal { theme }
    }
}

impl Default for Terminal {
    fn default() -> Self {
        Self::new()
    }
}

fn failed(e: dialoguer::Error) -> Error {
    match e {
        dialoguer::Error::IO(source) => Error::io("the prompt failed", source),
    }
}

impl Prompter for Terminal {
    fn refused(&mut self, message: &str) {
        eprintln!("  {message}");
    }

    fn warned(&mut self, message: &str) {
        eprintln!("  warning: {message}");
    }

    fn confirm(&mut self, summary: &str, question: &str) -> Result<bool> {
        let _interrupt = interrupt::Guard::install();
        eprint!("{summary}");
        Confirm::with_theme(self.theme.as_ref())
            .with_prompt(question)
            .default(true)
            .interact()
            .map_err(failed)
    }

    fn ask(&mut self, prompt: &Prompt<'_>) -> Result<Json> {
        // Only while a prompt waits: later, Ctrl-C must reach the write's own cleanup.
        let _interrupt = interrupt::Guard::install();
        let question = prompt.question;
        if let Some(help) = &question.help {
            eprintln!("  {help}");
        }
        let theme = self.theme.as_ref();
        match question.kind {
            QuestionType::Choice | QuestionType::Int if !prompt.choices.is_empty() => {
                select(theme, prompt)
            }
            QuestionType::MultiChoice => multi_select(theme, prompt),
            QuestionType::Bool => yes_or_no(theme, prompt),
            _ if question.secret => hidden(theme, prompt),
            _ => typed(theme, prompt),
        }
    }
}

/// One of the choices, chosen again until it passes the check.
fn select(theme: &dyn Theme, prompt: &Prompt<'_>) -> Result<Json> {
    let label = prompt.question.prompt.as_str();
    let current = prompt.default.as_ref().map(show);
    let mut index = prompt
        .choices
        .iter()
        .position(|c| Some(c) == current.as_ref())
        .unwrap_or(0);
    loop {
        index = Select::with_theme(theme)
            .with_prompt(label)
            .items(&prompt.choices)
            .default(index)
            .interact()
            .map_err(failed)?;
        match (prompt.check)(&prompt.choices[index]) {
            Ok(value) => return Ok(value),
            Err(rule) => eprintln!("  {label}: {rule}; choose again"),
        }
    }
}

/// Some of the choices (the default's checked), chosen again, as picked, until they pass.
fn multi_select(theme: &dyn Theme, prompt: &Prompt<'_>) -> Result<Json> {
    let label = prompt.question.prompt.as_str();
    let chosen: Vec<String> = match &prompt.default {
        Some(Json::Array(items)) => items.iter().map(show).collect(),
        _ => Vec::new(),
    };
    let mut checked: Vec<bool> = prompt.choices.iter().map(|c| chosen.contains(c)).collect();
    loop {
        let picked = MultiSelect::with_theme(theme)
            .with_prompt(format!("{label} (space toggles, enter accepts)"))
            .items(&prompt.choices)
            .defaults(&checked)
            .interact()
            .map_err(failed)?;
        let text = picked
            .iter()
            .map(|&i| prompt.choices[i].as_str())
            .collect::<Vec<_>>()
            .join(",");
        match (prompt.check)(&text) {
            Ok(value) => return Ok(value),
            Err(rule) => {
                eprintln!("  {label}: {rule}; choose again");
                checked = (0..prompt.choices.len())
                    .map(|i| picked.contains(&i))
                    .collect();
            }
        }
    }
}

fn yes_or_no(theme: &dyn Theme, prompt: &Prompt<'_>) -> Result<Json> {
    let answer = Confirm::with_theme(theme)
        .with_prompt(prompt.question.prompt.as_str())
        .default(
            prompt
                .default
                .as_ref()
                .and_then(Json::as_bool)
                .unwrap_or(false),
        )
        .interact()
        .map_err(failed)?;
    Ok(Json::Bool(answer))
}

/// A secret answer, typed without echo; refusals say the rule, never the secret.
fn hidden(theme: &dyn Theme, prompt: &Prompt<'_>) -> Result<Json> {
    let question = prompt.question;
    let label = question.prompt.as_str();
    let check = prompt.check;
    // Enter on a hidden prompt must say what it did: take the default (said in
    // the prompt), or ask for an answer (said, not a silent re-prompt).
    let default = prompt
        .default
        .as_ref()
        .map(as_text)
        .filter(|d| !d.is_empty());
    let chosen = |text: &str| -> String {
        match &default {
            Some(default) if text.is_empty() => default.clone(),
            _ => text.to_string(),
        }
    };
    let text = Password::with_theme(theme)
        .with_prompt(if default.is_some() {
            format!("{label} (hidden; Enter keeps the blueprint's default)")
        } else {
            format!("{label} (hidden)")
        })
        .allow_empty_password(true)
        .validate_with(|text: &String| -> std::result::Result<(), String> {
            let text = chosen(text);
            if text.is_empty() && !question.allow_empty {
                return Err("an answer is needed (typing is not shown)".into());
            }
            // The rule, never the secret: messages quote the value.
            check(&text)
                .map(|_| ())
                .map_err(|m| m.replace(&format!("`{text}`"), "the answer"))
        })
        .interact()
        .map_err(failed)?;
    check(&chosen(&text)).map_err(|_| Error::input(format!("{}: invalid", question.key)))
}

/// A typed answer, validated as it is typed.
fn typed(theme: &dyn Theme, prompt: &Prompt<'_>) -> Result<Json> {
    let question = prompt.question;
    let check = prompt.check;
    // An empty answer the default would otherwise shadow gets a word of its own.
    let empty_word = question.allow_empty
        && prompt.default.as_ref().is_some_and(|d| !show(d).is_empty())
        && check(EMPTY_WORD).is_err();
    let read = |text: &str| -> String {
        if empty_word && text.trim() == EMPTY_WORD {
            String::new()
        } else {
            text.to_string()
        }
    };
    if empty_word {
        eprintln!("  Type `{EMPTY_WORD}` for an empty answer.");
    }
    let mut input = Input::<String>::with_theme(theme)
        .with_prompt(question.prompt.as_str())
        .allow_empty(question.allow_empty || prompt.default.is_some());
    if let Some(default) = &prompt.default {
        input = input.default(as_text(default));
    }
    let text = input
        .validate_with(|text: &String| -> std::result::Result<(), String> {
            check(&read(text)).map(|_| ())
        })
        .interact_text()
        .map_err(failed)?;
    check(&read(&text)).map_err(Error::input)
}

/// Ctrl-C while a prompt waits: restore the terminal (echo, cursor), say that nothing
/// was written, exit 130. Prompts run before anything is staged, so that is true.
#[allow(unsafe_code)] // termios and sigaction: the terminal restored on Ctrl-C
mod interrupt {
    use std::sync::OnceLock;

    static SAVED: OnceLock<Option<libc::termios>> = OnceLock::new();
    const MESSAGE: &[u8] = b"\x1b[?25h\ninterrupted: no answers kept, nothing was written\n";

    /// Restores the previous SIGINT disposition when dropped.
    pub struct Guard {
        previous: Option<libc::sigaction>,
    }

    extern "C" fn on_interrupt(_: libc::c_int) {
        // Only async-signal-safe calls: tcsetattr, write, _exit.
        // SAFETY: the termios was read by tcgetattr on this descriptor; MESSAGE is static.
        unsafe {
            if let Some(Some(saved)) = SAVED.get() {
                libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, saved);
            }
            libc::write(libc::STDERR_FILENO, MESSAGE.as_ptr().cast(), MESSAGE.len());
            libc::_exit(130);
        }
    }

    impl Guard {
        pub fn install() -> Self {
            SAVED.get_or_init(|| {
                let mut termios = std::mem::MaybeUninit::<libc::termios>::uninit();
                // SAFETY: tcgetattr fills the struct when it returns 0.
                unsafe {
                    (libc::tcgetattr(libc::STDIN_FILENO, termios.as_mut_ptr()) == 0)
                        .then(|| termios.assume_init())
                }
            });
            // SAFETY: a zeroed sigaction with a handler address is a valid argument.
            let previous = unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_interrupt as *const () as libc::sighandler_t;
                let mut previous: libc::sigaction = std::mem::zeroed();
                (libc::sigaction(libc::SIGINT, &action, &mut previous) == 0).then_some(previous)
            };
            // scaffold's signal thread receives SIGINT otherwise (it is blocked in every
            // thread); while a prompt waits, this thread takes it so the terminal is restored.
            crate::signals::set_interrupt_blocked(false);
            Guard { previous }
        }
    }

    impl Drop for Guard {
        fn drop(&mut self) {
            if let Some(previous) = &self.previous {
                // SAFETY: restoring the disposition sigaction returned.
                unsafe {
                    libc::sigaction(libc::SIGINT, previous, std::ptr::null_mut());
                }
            }
            crate::signals::set_interrupt_blocked(true);
        }
    }
}
