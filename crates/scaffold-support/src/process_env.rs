//! The process environment, read once. Every variable scaffold reads (`SCAFFOLD_*`,
//! `NO_COLOR`, `TERM`, `HOME`, the XDG directories, git's `GIT_*` and `EMAIL`, and the
//! variables a blueprint's secrets name) comes from this snapshot, taken the first time
//! anything asks (`main` takes it before any thread starts), so a run sees one
//! environment throughout. This is the only module that reads `std::env`: clippy's
//! `disallowed-methods` (clippy.toml) refuses it anywhere else.
use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The variables of the process when the snapshot was taken.
#[derive(Debug, Default)]
pub struct Snapshot {
    vars: BTreeMap<OsString, OsString>,
}

static SNAPSHOT: OnceLock<Snapshot> = OnceLock::new();

/// The snapshot (taken now if nothing asked before).
pub fn snapshot() -> &'static Snapshot {
    #[allow(clippy::disallowed_methods)] // the one read of the environment
    SNAPSHOT.get_or_init(|| Snapshot {
        vars: std::env::vars_os().collect(),
    })
}

/// A variable's value, when it is set and UTF-8.
pub fn var(name: &str) -> Option<String> {
    snapshot().var(name).map(str::to_string)
}

impl Snapshot {
    /// A snapshot of exactly these variables (for tests).
    pub fn of(vars: &[(&str, &str)]) -> Snapshot {
        Snapshot {
            vars: vars
                .iter()
                .map(|(k, v)| (OsString::from(k), OsString::from(v)))
                .collect(),
        }
    }

    pub fn var_os(&self, name: &str) -> Option<&OsStr> {
        self.vars.get(OsStr::new(name)).map(OsString::as_os_str)
    }

    /// A variable's value, when it is set and UTF-8.
    pub fn var(&self, name: &str) -> Option<&str> {
        self.var_os(name).and_then(OsStr::to_str)
    }

    /// `$HOME`.
    pub fn home(&self) -> Option<PathBuf> {
        self.var_os("HOME").map(PathBuf::from)
    }

    /// An XDG base directory (`XDG_CACHE_HOME`, `XDG_CONFIG_HOME`): only an absolute
    /// path counts (the XDG specification ignores a relative one); else `~/<fallback>`.
    pub fn xdg_dir(&self, variable: &str, fallback: &str) -> Option<PathBuf> {
        self.var_os(variable)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| self.home().map(|home| home.join(fallback)))
    }

    /// `$SCAFFOLD_BLUEPRINT_PATH`, `:`-separated, empty entries left out.
    pub fn blueprint_path(&self) -> Vec<PathBuf> {
        self.var_os("SCAFFOLD_BLUEPRINT_PATH")
            .map(|v| {
                std::env::split_paths(v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Whether output may be coloured: `NO_COLOR` unset or empty, `TERM` not `dumb`.
    pub fn wants_color(&self) -> bool {
        self.var_os("NO_COLOR").is_none_or(OsStr::is_empty) && self.var("TERM") != Some("dumb")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xdg_directories_must_be_absolute_else_home_stands_in() {
        let env = Snapshot::of(&[("HOME", "/home/u"), ("XDG_CACHE_HOME", "relative/cache")]);
        assert_eq!(
            env.xdg_dir("XDG_CACHE_HOME", ".cache"),
            Some(PathBuf::from("/home/u/.cache"))
        );
        let env = Snapshot::of(&[("HOME", "/home/u"), ("XDG_CONFIG_HOME", "/etc/x")]);
        assert_eq!(
            env.xdg_dir("XDG_CONFIG_HOME", ".config"),
            Some(PathBuf::from("/etc/x"))
        );
        assert_eq!(Snapshot::of(&[]).xdg_dir("XDG_CACHE_HOME", ".cache"), None);
    }

    #[test]
    fn colour_follows_no_color_and_a_dumb_terminal() {
        assert!(Snapshot::of(&[("TERM", "xterm")]).wants_color());
        assert!(Snapshot::of(&[("NO_COLOR", "")]).wants_color());
        assert!(!Snapshot::of(&[("NO_COLOR", "1")]).wants_color());
        assert!(!Snapshot::of(&[("TERM", "dumb")]).wants_color());
    }

    #[test]
    fn the_blueprint_path_skips_empty_entries() {
        let env = Snapshot::of(&[("SCAFFOLD_BLUEPRINT_PATH", "/a::/b:")]);
        assert_eq!(
            env.blueprint_path(),
            [PathBuf::from("/a"), PathBuf::from("/b")]
        );
    }
}
