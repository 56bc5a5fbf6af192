//! Notes from deep in the core (a fetched base, a recovered run, a waited-for lock) on
//! stderr, under the one verbosity the command line sets: the core's only voice besides
//! its return values. Commands print through `ui::Reporter`, which reads the same level.
// The core's one voice on stderr (docs/architecture.md).
#![allow(clippy::print_stderr)]
use std::sync::atomic::{AtomicU8, Ordering};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verbosity {
    Quiet = 0,
    Normal = 1,
    Verbose = 2,
}

static VERBOSITY: AtomicU8 = AtomicU8::new(Verbosity::Normal as u8);

pub fn set_verbosity(level: Verbosity) {
    VERBOSITY.store(level as u8, Ordering::Relaxed);
}

pub fn verbosity() -> Verbosity {
    match VERBOSITY.load(Ordering::Relaxed) {
        0 => Verbosity::Quiet,
        1 => Verbosity::Normal,
        _ => Verbosity::Verbose,
    }
}

/// A note or progress line on stderr; `-q` silences it.
pub fn note(message: impl std::fmt::Display) {
    if verbosity() >= Verbosity::Normal {
        eprintln!("{message}");
    }
}

/// Detail on stderr that only `-v` shows.
pub fn detail(message: impl std::fmt::Display) {
    if verbosity() >= Verbosity::Verbose {
        eprintln!("{message}");
    }
}
