//! What one `git var -l` prints: git's config as git reads it for a place (every file,
//! `includeIf`, `-c` and `GIT_CONFIG_*`), then its variables, the author and committer
//! idents among them. One process answers every question a commit asks, where asking
//! each (`git var GIT_AUTHOR_IDENT`, `git config --get …`) costs a process apiece.
//!
//! `-l` prints the idents without the checks `git commit` makes (`IDENT_STRICT` in git's
//! ident.c: no name or email guessed from the passwd entry and the host name, none empty).
//! `explicit_ident` says when those checks cannot refuse the ident: its name and email
//! both come from the `GIT_*_NAME`/`GIT_*_EMAIL` variables or the config, non-empty.
//! Otherwise the caller asks git for the strict ident itself.
//!
//! A config value spanning lines prints as several lines; a continuation line that reads
//! as one of the keys asked here would be taken for it. git offers no unambiguous form of
//! `-l` (`git config -l -z` would be a second process), and such a value is not one a
//! config holds in practice.

/// `git var -l`'s output, parsed.
#[derive(Debug, Default)]
pub struct Listing {
    /// Config entries in git's order: the key as git prints it (section and name in
    /// lower case), the value (None: a key given without `=`, which is a true boolean).
    config: Vec<(String, Option<String>)>,
    author: Option<String>,
    committer: Option<String>,
}

/// Whose ident: `GIT_AUTHOR_*` or `GIT_COMMITTER_*`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    Author,
    Committer,
}

impl Role {
    fn variable(self, what: &str) -> String {
        match self {
            Role::Author => format!("GIT_AUTHOR_{what}"),
            Role::Committer => format!("GIT_COMMITTER_{what}"),
        }
    }

    fn section(self) -> &'static str {
        match self {
            Role::Author => "author",
            Role::Committer => "committer",
        }
    }
}

impl Listing {
    pub fn parse(text: &str) -> Listing {
        let lines: Vec<&str> = text.lines().collect();
        // The variables follow the config, GIT_COMMITTER_IDENT first (git's var.c).
        let variables = lines
            .iter()
            .rposition(|line| line.starts_with("GIT_COMMITTER_IDENT="))
            .unwrap_or(lines.len());
        let config = lines[..variables]
            .iter()
            .map(|line| match line.split_once('=') {
                Some((key, value)) => (key.to_string(), Some(value.to_string())),
                None => (line.to_string(), None),
            })
            .collect();
        let variable = |name: &str| {
            lines[variables..]
                .iter()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
                .map(str::to_string)
        };
        Listing {
            config,
            author: variable("GIT_AUTHOR_IDENT"),
            committer: variable("GIT_COMMITTER_IDENT"),
        }
    }

    /// The last value of `key` (git's "last one wins"), as in `git config --get`: Some(None)
    /// for a key without `=`.
    fn last(&self, key: &str) -> Option<Option<&str>> {
        let key = canonical_key(key);
        self.config
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_deref())
    }

    /// Whether `key` is set, with any value or none.
    pub fn has(&self, key: &str) -> bool {
        self.last(key).is_some()
    }

    /// What `git config --get KEY` prints, None when it prints nothing.
    pub fn string(&self, key: &str) -> Option<String> {
        self.last(key)
            .flatten()
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    }

    /// What `git config --type=bool --get KEY` prints; None when the key is unset or git
    /// would refuse the value.
    pub fn boolean(&self, key: &str) -> Option<bool> {
        parse_bool(self.last(key)?)
    }

    /// The ident `-l` printed for `role`, when `git commit` would write the same one.
    pub fn explicit_ident(&self, role: Role, env: impl Fn(&str) -> Option<String>) -> Option<&str> {
        let given = |what: &str| match env(&role.variable(what)) {
            Some(value) => Some(value),
            None => {
                let own = format!("{}.{}", role.section(), what.to_ascii_lowercase());
                let user = format!("user.{}", what.to_ascii_lowercase());
                // author.name/committer.name count only when non-empty (ident.c checks
                // their length); user.name counts once given, even empty.
                self.string(&own)
                    .or_else(|| self.last(&user).map(|v| v.unwrap_or_default().to_string()))
            }
        };
        let explicit = |what: &str| given(what).is_some_and(|v| !v.trim().is_empty());
        if explicit("NAME") && explicit("EMAIL") {
            match role {
                Role::Author => self.author.as_deref(),
                Role::Committer => self.committer.as_deref(),
            }
        } else {
            None
        }
    }
}

/// git's key as `-l` prints it: the section and the name in lower case, a subsection as
/// written.
fn canonical_key(key: &str) -> String {
    match (key.find('.'), key.rfind('.')) {
        (Some(first), Some(last)) => format!(
            "{}{}{}",
            key[..first].to_ascii_lowercase(),
            &key[first..last],
            key[last..].to_ascii_lowercase()
        ),
        _ => key.to_ascii_lowercase(),
    }
}

/// git's boolean (config.c `git_parse_maybe_bool`): no value is true, empty is false, the
/// words true/yes/on and false/no/off in any case, else an integer (with a k, m or g unit)
/// that is true unless 0. None: a value git refuses.
fn parse_bool(value: Option<&str>) -> Option<bool> {
    let Some(value) = value else {
        return Some(true);
    };
    match value.to_ascii_lowercase().as_str() {
        "" | "false" | "no" | "off" => return Some(false),
        "true" | "yes" | "on" => return Some(true),
        _ => {}
    }
    let digits = value
        .strip_suffix(['k', 'K', 'm', 'M', 'g', 'G'])
        .unwrap_or(value);
    digits.parse::<i64>().ok().map(|n| n != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTED: &str = "user.name=Ann\nuser.email=ann@example.org\ncommit.gpgsign\n\
        gpg.ssh.program=ssh-keygen\ncore.hookspath=~/hooks\nCore.HooksPath=x\n\
        GIT_COMMITTER_IDENT=Ann <ann@example.org> 1 +0000\n\
        GIT_AUTHOR_IDENT=Ann <ann@example.org> 1 +0000\nGIT_EDITOR=vi\n";

    fn no_env(_: &str) -> Option<String> {
        None
    }

    #[test]
    fn config_reads_as_git_config_get() {
        let listing = Listing::parse(LISTED);
        assert_eq!(listing.boolean("commit.gpgSign"), Some(true));
        assert_eq!(listing.string("core.hooksPath").as_deref(), Some("~/hooks"));
        assert_eq!(
            listing.string("gpg.ssh.program").as_deref(),
            Some("ssh-keygen")
        );
        assert_eq!(listing.string("gpg.SSH.program"), None);
        assert_eq!(listing.string("commit.gpgsign"), None);
        assert_eq!(listing.string("GIT_EDITOR"), None);
        for (value, expected) in [
            (None, Some(true)),
            (Some(""), Some(false)),
            (Some("Yes"), Some(true)),
            (Some("off"), Some(false)),
            (Some("0"), Some(false)),
            (Some("2k"), Some(true)),
            (Some("maybe"), None),
        ] {
            assert_eq!(parse_bool(value), expected, "{value:?}");
        }
    }

    #[test]
    fn idents_are_taken_only_when_git_commit_would_take_them() {
        let listing = Listing::parse(LISTED);
        assert_eq!(
            listing.explicit_ident(Role::Author, no_env),
            Some("Ann <ann@example.org> 1 +0000")
        );
        // Guessed from the passwd entry and the host: git commit may refuse it.
        let guessed = Listing::parse("GIT_COMMITTER_IDENT=root <root@vm.(none)> 1 +0000\n");
        assert_eq!(guessed.explicit_ident(Role::Committer, no_env), None);
        let from_env = |name: &str| (name.starts_with("GIT_COMMITTER_")).then(|| "Env".to_string());
        assert_eq!(
            guessed.explicit_ident(Role::Committer, from_env),
            Some("root <root@vm.(none)> 1 +0000")
        );
        // An empty user.name: git commit refuses it.
        let empty =
            Listing::parse("user.name=\nuser.email=a@b\nGIT_COMMITTER_IDENT=root <a@b> 1 +0000\n");
        assert_eq!(empty.explicit_ident(Role::Committer, no_env), None);
        // committer.email wins over user.email, and an empty one does not count.
        let own =
            Listing::parse("user.name=A\ncommitter.email=\nGIT_COMMITTER_IDENT=A <x> 1 +0000\n");
        assert_eq!(own.explicit_ident(Role::Committer, no_env), None);
    }
}
