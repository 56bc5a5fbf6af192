//! The terminal side of `answers::Prompter`: dialoguer prompts with help text, the default
//! shown, and re-prompting until an answer validates.
use dialoguer::{Confirm, Input, MultiSelect, Select, theme::ColorfulTheme};
use serde_json::Value as Json;

use crate::answers::{Prompt, Prompter, as_text, show};
use crate::blueprint::QuestionType;
use crate::error::{Error, Result};

pub struct Terminal {
    theme: ColorfulTheme,
}

impl Terminal {
    pub fn new() -> Self {
        Terminal {
            theme: ColorfulTheme::default(),
        }
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

    fn ask(&mut self, prompt: &Prompt<'_>) -> Result<Json> {
        let question = prompt.question;
        if let Some(help) = &question.help {
            eprintln!("  {help}");
        }
        let label = question.prompt.as_str();
        match question.kind {
            QuestionType::Choice | QuestionType::Int if !prompt.choices.is_empty() => {
                let current = prompt.default.as_ref().map(show);
                let index = Select::with_theme(&self.theme)
                    .with_prompt(label)
                    .items(&prompt.choices)
                    .default(
                        prompt
                            .choices
                            .iter()
                            .position(|c| Some(c) == current.as_ref())
                            .unwrap_or(0),
                    )
                    .interact()
                    .map_err(failed)?;
                (prompt.check)(&prompt.choices[index]).map_err(Error::Input)
            }
            QuestionType::MultiChoice => {
                let chosen: Vec<String> = match &prompt.default {
                    Some(Json::Array(items)) => items.iter().map(show).collect(),
                    _ => Vec::new(),
                };
                let defaults: Vec<bool> =
                    prompt.choices.iter().map(|c| chosen.contains(c)).collect();
                let picked = MultiSelect::with_theme(&self.theme)
                    .with_prompt(format!("{label} (space toggles, enter accepts)"))
                    .items(&prompt.choices)
                    .defaults(&defaults)
                    .interact()
                    .map_err(failed)?;
                let text = picked
                    .iter()
                    .map(|&i| prompt.choices[i].as_str())
                    .collect::<Vec<_>>()
                    .join(",");
                (prompt.check)(&text).map_err(Error::Input)
            }
            QuestionType::Bool => {
                let answer = Confirm::with_theme(&self.theme)
                    .with_prompt(label)
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
            _ => {
                let mut input = Input::<String>::with_theme(&self.theme)
                    .with_prompt(label)
                    .allow_empty(question.allow_empty || prompt.default.is_some());
                if let Some(default) = &prompt.default {
                    input = input.default(as_text(default));
                }
                let check = prompt.check;
                let text = input
                    .validate_with(|text: &String| -> std::result::Result<(), String> {
                        check(text).map(|_| ())
                    })
                    .interact_text()
                    .map_err(failed)?;
                check(&text).map_err(Error::Input)
            }
        }
    }
}
