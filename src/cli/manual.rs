//! The texts of `scaffold completions SHELL` and `scaffold man`: generated from the clap
//! definitions, so they always match the command line they describe. The command prints
//! them.
use clap::CommandFactory;
use roff::{Roff, bold, roman};

use crate::cli::Cli;
use crate::error::{Error, Result};

/// The completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Vec<u8> {
    let mut command = Cli::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "scaffold", &mut out);
    out
}

/// One page: the root's sections from clap_mangen, then a section per subcommand (nested
/// ones included) with its usage, options and examples, then the exit status. (clap_mangen's
/// own subcommand list points at one page per subcommand, which this single page replaces.)
pub fn man() -> Result<Vec<u8>> {
    let mut command = Cli::command();
    command.build();
    let exit_codes = command
        .get_after_help()
        .map(|h| h.to_string())
        .unwrap_or_default();
    let page = clap_mangen::Man::new(command.clone().after_help(""));
    let mut out = Vec::new();
    let write_err = |e| Error::io("write the manual page", e);
    page.render_title(&mut out).map_err(write_err)?;
    page.render_name_section(&mut out).map_err(write_err)?;
    page.render_synopsis_section(&mut out).map_err(write_err)?;
    page.render_description_section(&mut out)
        .map_err(write_err)?;
    page.render_options_section(&mut out).map_err(write_err)?;
    let mut roff = Roff::new();
    for sub in command.get_subcommands() {
        subcommand_section(&mut roff, "scaffold", sub);
    }
    roff.control("SH", ["EXIT STATUS"]);
    preformatted(&mut roff, &exit_codes);
    roff.to_writer(&mut out).map_err(write_err)?;
    page.render_version_section(&mut out).map_err(write_err)?;
    Ok(out)
}

fn subcommand_section(roff: &mut Roff, parent: &str, command: &clap::Command) {
    if command.get_name() == "help" {
        return;
    }
    let path = format!("{parent} {}", command.get_name());
    roff.control("SH", [path.to_uppercase().as_str()]);
    let usage = command
        .clone()
        .bin_name(&path)
        .render_usage()
        .to_string()
        .trim_start_matches("Usage: ")
        .to_string();
    roff.text([bold(usage)]);
    if let Some(about) = command.get_long_about().or(command.get_about()) {
        roff.control("PP", []).text([roman(about.to_string())]);
    }
    for arg in command
        .get_arguments()
        .filter(|a| !a.is_hide_set() && a.get_id() != "help")
    {
        let name = match (arg.get_short(), arg.get_long()) {
            (Some(s), Some(l)) => format!("-{s}, --{l}"),
            (None, Some(l)) => format!("--{l}"),
            (Some(s), None) => format!("-{s}"),
            (None, None) => format!("<{}>", arg.get_id().as_str().to_uppercase()),
        };
        let name = match arg.get_value_names() {
            Some(values)
                if arg.get_action().takes_values()
                    && (arg.get_long().is_some() || arg.get_short().is_some()) =>
            {
                format!("{name} <{}>", values.join("> <"))
            }
            _ => name,
        };
        let help = arg.get_help().map(|h| h.to_string()).unwrap_or_default();
        roff.control("TP", [])
            .text([bold(name)])
            .text([roman(help)]);
    }
    if let Some(after) = command.get_after_help() {
        roff.control("PP", []);
        preformatted(roff, &after.to_string());
    }
    for sub in command.get_subcommands() {
        subcommand_section(roff, &path, sub);
    }
}

fn preformatted(roff: &mut Roff, text: &str) {
    roff.control("nf", []);
    for line in text.lines() {
        roff.text([roman(line)]);
    }
    roff.control("fi", []);
}
