//! Who a commit is by and how it is signed, as git itself would decide for the repository:
//! git is asked (one `git var -l` for the config and idents, `listing`; `git var
//! GIT_AUTHOR_IDENT`/`GIT_COMMITTER_IDENT` when only git's strict check can say) so that
//! the `GIT_AUTHOR_*`/`GIT_COMMITTER_*` variables, `-c`/`GIT_CONFIG_*` settings, repo,
//! global and system config and `includeIf` all count exactly as they do for `git commit`.
//! Without git on PATH, libgit2 reads the same config files and the variables are read
//! here. `commit.gpgSign` signs through the configured program as git's gpg-interface.c
//! does (openpgp: `gpg --status-fd=2 -bsau KEY`; x509: `gpgsm`, the same; ssh:
//! `ssh-keygen -Y sign -n git -f KEY FILE`). `hooks_dir` finds the hooks `hooks` runs on
//! scaffold's commits, `new`'s first one included.
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard, OnceLock};

use crate::error::{Error, Problem, Result};

mod listing;
use listing::{Listing, Role};

/// Where git is asked: a directory inside the repository, and for a repository that does
/// not exist yet (`new`) the git directory it will have, so `includeIf "gitdir:…"` matches.
/// Shared between threads: `new` waits for its `git var -l` on the thread that then
/// initialises the repository, while the files are written.
pub struct Place {
    pub cwd: PathBuf,
    pub git_dir: Option<PathBuf>,
    /// Answers asked for ahead (`ask_ahead`), by their arguments.
    asked: Mutex<Vec<(Vec<String>, Option<Answer>)>>,
    /// `git var -l`, asked once: None when git is not on PATH or refused it.
    listing: OnceLock<Option<Listing>>,
    /// `git var -l` started by `ask_listing_ahead`, not yet waited for.
    listing_ahead: Mutex<Option<std::process::Child>>,
}

/// What git printed on stdout, or its stderr when it failed.
type Answer = std::result::Result<String, String>;

impl Place {
    /// An existing repository's work tree (or any directory inside it).
    pub fn repo(root: &Path) -> Self {
        Place {
            cwd: root.to_path_buf(),
            git_dir: None,
            asked: Default::default(),
            listing: OnceLock::new(),
            listing_ahead: Default::default(),
        }
    }

    /// A repository about to be created at `dir`, asked from `cwd` (which exists) until
    /// `dir` does: the caller moves `cwd` there once it is made.
    pub fn new_repo_from(dir: &Path, cwd: &Path) -> Self {
        let mut place = Place::new_repo(dir);
        place.cwd = std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        place
    }

    /// A repository about to be created at `dir` (which exists, empty).
    pub fn new_repo(dir: &Path) -> Self {
        let dir = std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf());
        Place {
            git_dir: Some(dir.join(".git")),
            cwd: dir,
            asked: Default::default(),
            listing: OnceLock::new(),
            listing_ahead: Default::default(),
        }
    }

    fn git(&self) -> Command {
        let mut command = Command::new("git");
        command.current_dir(&self.cwd);
        if let Some(dir) = &self.git_dir {
            command.env("GIT_DIR", dir);
        }
        command.stdin(Stdio::null());
        command
    }

    /// stdout of `git ARGS`: None when git is not on PATH, Err(stderr) when it fails.
    fn ask(&self, args: &[&str]) -> Option<Answer> {
        let asked = locked(&self.asked);
        if let Some((_, answer)) = asked.iter().find(|(asked, _)| asked == args) {
            return answer.clone();
        }
        drop(asked);
        Self::answer(self.git().args(args).output().ok()?)
    }

    /// Runs the git commands of `questions` side by side, so that `ask` finds their
    /// answers: their start-ups overlap instead of following one another (each costs
    /// about 1.3 ms, as much as a small `new`'s render; BENCHMARKS.md round two).
    fn ask_ahead(&self, questions: &[&[&str]]) {
        let running: Vec<_> = questions
            .iter()
            .map(|args| {
                let child = self
                    .git()
                    .args(*args)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn();
                (args, child)
            })
            .collect();
        let mut asked = locked(&self.asked);
        for (args, child) in running {
            let answer = child
                .and_then(|child| child.wait_with_output())
                .ok()
                .and_then(Self::answer);
            asked.push((args.iter().map(|a| a.to_string()).collect(), answer));
        }
    }

    fn answer(output: std::process::Output) -> Option<Answer> {
        Some(if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout)
                .trim_end()
                .to_string())
        } else {
            Err(String::from_utf8_lossy(&output.stderr).trim().to_string())
        })
    }

    /// Starts `git var -l` now, for `listing` to take when it is needed: the process runs
    /// while the caller works (a commit's files are written first).
    pub fn ask_listing_ahead(&self) {
        let child = self
            .git()
            .args(LISTING)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        *locked(&self.listing_ahead) = child.ok();
    }

    /// Waits for `git var -l` (started by `ask_listing_ahead`; else asked now): git has
    /// read everything it reads for this place once it returns.
    pub fn await_listing(&self) {
        let _ = self.listing();
    }

    /// git's config and idents for this place, from one `git var -l`.
    fn listing(&self) -> Option<&Listing> {
        self.listing
            .get_or_init(|| {
                let ahead = locked(&self.listing_ahead).take();
                let answer = match ahead {
                    Some(child) => child.wait_with_output().ok().and_then(Self::answer),
                    None => self.ask(LISTING),
                };
                match answer {
                    Some(Ok(text)) => Some(Listing::parse(&text)),
                    _ => None,
                }
            })
            .as_ref()
    }

    /// A config value as git reads it for this repository (`--type=bool` normalises
    /// booleans to `true`/`false`).
    fn config(&self, key: &str, boolean: bool) -> Option<String> {
        if let Some(listing) = self.listing() {
            return match boolean {
                true => listing.boolean(key).map(|b| b.to_string()),
                false => listing.string(key),
            };
        }
        let mut args = vec!["config"];
        if boolean {
            args.push("--type=bool");
        }
        args.extend(["--get", key]);
        match self.ask(&args) {
            Some(answer) => answer.ok().filter(|v| !v.is_empty()),
            None => {
                let config = self.libgit2_config()?;
                if boolean {
                    config.get_bool(key).ok().map(|b| b.to_string())
                } else {
                    config.get_string(key).ok().filter(|v| !v.is_empty())
                }
            }
        }
    }

    /// What git syncs to disk as it writes in this place (`core.fsync`,
    /// `core.fsyncObjectFiles`).
    pub fn fsync(&self) -> crate::durability::Fsync {
        let object_files = self.config("core.fsyncObjectFiles", true);
        crate::durability::Fsync::from_config(
            self.config("core.fsync", false).as_deref(),
            object_files.map(|value| value == "true"),
        )
    }

    /// git's default hooks directory (the common git directory's `hooks`) when this
    /// place's `git var -l` was asked (answered or still running) and shows no
    /// core.hooksPath, and the repository's own config sets none; None when only git can
    /// say.
    fn default_hooks_dir(&self, repo: &git2::Repository) -> Option<PathBuf> {
        let asked = self.listing.get().is_some() || locked(&self.listing_ahead).is_some();
        if !asked {
            return None;
        }
        let listing = self.listing()?;
        if listing.has("core.hooksPath") {
            return None;
        }
        // The repository's own config file (its includes followed), not every level.
        let local = git2::Config::open(&repo.commondir().join("config")).ok()?;
        if local.get_entry("core.hooksPath").is_ok() {
            return None;
        }
        Some(repo.commondir().join("hooks"))
    }

    fn libgit2_config(&self) -> Option<git2::Config> {
        match &self.git_dir {
            None => git2::Repository::discover(&self.cwd).ok()?.config().ok(),
            Some(_) => git2::Config::open_default().ok(),
        }
    }
}

/// A name and email, and the time git gives them (None: now).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub email: String,
    pub when: Option<(i64, i32)>,
}

impl Person {
    /// git's ident line: `Name <email> SECONDS +HHMM`.
    fn parse_ident(line: &str) -> Option<Person> {
        let (rest, zone) = line.trim_end().rsplit_once(' ')?;
        let (rest, seconds) = rest.rsplit_once(' ')?;
        let open = rest.rfind(" <")?;
        let email = rest[open + 2..].strip_suffix('>')?;
        let sign = match zone.as_bytes().first()? {
            b'-' => -1,
            _ => 1,
        };
        let digits: i32 = zone.get(1..)?.parse().ok()?;
        Some(Person {
            name: rest[..open].to_string(),
            email: email.to_string(),
            when: Some((
                seconds.parse().ok()?,
                sign * (digits / 100 * 60 + digits % 100),
            )),
        })
    }

    pub fn signature(&self) -> std::result::Result<git2::Signature<'static>, git2::Error> {
        match self.when {
            Some((seconds, offset)) => {
                git2::Signature::new(&self.name, &self.email, &git2::Time::new(seconds, offset))
            }
            None => git2::Signature::now(&self.name, &self.email),
        }
    }
}

/// A name or email git's fsck would reject in a commit: a newline, `<`, `>` or NUL.
pub fn check_person(name: &str, email: &str, source: &str, fix: &str) -> Result<()> {
    let bad = |s: &str| s.contains(['\n', '\r', '<', '>', '\0']);
    if bad(name) || bad(email) || name.trim().is_empty() || email.trim().is_empty() {
        return Err(Error::input(Problem::new(format!("{source} `{} <{}>`: a name and email must be non-empty and hold no newline, `<` or `>` (git rejects such a commit)",
            name.escape_debug(),
            email.escape_debug())).fix(fix)));
    }
    Ok(())
}

/// The author and committer git would write, or None when git has no identity (it would
/// refuse to commit: the caller falls back). `author_flag` replaces the author's name and
/// email, as `git commit --author` does.
pub fn resolve(
    place: &Place,
    author_flag: Option<(&str, &str)>,
) -> Result<Option<(Person, Person)>> {
    let flagged = |when| {
        author_flag.map(|(name, email)| Person {
            name: name.to_string(),
            email: email.to_string(),
            when,
        })
    };
    // One `git var -l` answers for both idents, when `git commit` would take them as
    // printed, and for the config `Signing::resolve` reads next; what it cannot answer is
    // asked of git one question at a time, side by side.
    let listed = |role| {
        let listing = place.listing()?;
        let line = listing.explicit_ident(role, crate::process_env::var)?;
        Some(Ok(line.to_string()))
    };
    let (listed_author, listed_committer) = (listed(Role::Author), listed(Role::Committer));
    let mut questions = Vec::new();
    if listed_author.is_none() {
        questions.push(AUTHOR_IDENT);
    }
    if listed_committer.is_none() {
        questions.push(COMMITTER_IDENT);
    }
    if place.listing().is_none() {
        questions.push(GPG_SIGN);
    }
    place.ask_ahead(&questions);
    let author_ident = listed_author.or_else(|| place.ask(AUTHOR_IDENT));
    let committer_ident = listed_committer.or_else(|| place.ask(COMMITTER_IDENT));
    let (author, committer) = match (author_ident, committer_ident) {
        (Some(author), Some(committer)) => {
            let author = author.ok().and_then(|line| Person::parse_ident(&line));
            let committer = committer.ok().and_then(|line| Person::parse_ident(&line));
            (author, committer)
        }
        // No git: the variables, then user.name/user.email from the config files.
        _ => (
            from_env_or_config(place, "AUTHOR")?,
            from_env_or_config(place, "COMMITTER")?,
        ),
    };
    let author = match (flagged(author.as_ref().and_then(|a| a.when)), author) {
        (Some(flag), _) => flag,
        (None, Some(author)) => author,
        (None, None) => return Ok(None),
    };
    let committer = committer.unwrap_or_else(|| author.clone());
    Ok(Some((author, committer)))
}

const LISTING: &[&str] = &["var", "-l"];
const AUTHOR_IDENT: &[&str] = &["var", "GIT_AUTHOR_IDENT"];
const COMMITTER_IDENT: &[&str] = &["var", "GIT_COMMITTER_IDENT"];
const GPG_SIGN: &[&str] = &["config", "--type=bool", "--get", "commit.gpgsign"];

fn from_env_or_config(place: &Place, role: &str) -> Result<Option<Person>> {
    let var = |what: &str| crate::process_env::var(&format!("GIT_{role}_{what}"));
    let name = var("NAME").or_else(|| place.config("user.name", false));
    let email = var("EMAIL")
        .or_else(|| place.config("user.email", false))
        .or_else(|| crate::process_env::var("EMAIL"));
    let (Some(name), Some(email)) = (name, email) else {
        return Ok(None);
    };
    check_person(
        &name,
        &email,
        "user.name/user.email",
        "fix it with `git config user.name` and `git config user.email`",
    )?;
    Ok(Some(Person {
        name,
        email,
        when: None,
    }))
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    OpenPgp,
    X509,
    Ssh,
}

/// How `commit.gpgSign` asks commits to be signed.
#[derive(Clone, Debug)]
pub struct Signing {
    format: Format,
    program: String,
    key: String,
}

/// The command that signs a commit afterwards, for refusals.
const SIGN_LATER: &str = "or commit unsigned now with `GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=commit.gpgSign GIT_CONFIG_VALUE_0=false scaffold …` and sign afterwards with `git commit --amend --no-edit -S`";

impl Signing {
    /// None unless `commit.gpgSign` is true; `committer` is gpg's default key, as in git.
    pub fn resolve(place: &Place, committer: &Person) -> Result<Option<Signing>> {
        if place.config("commit.gpgsign", true).as_deref() != Some("true") {
            return Ok(None);
        }
        let format = match place.config("gpg.format", false).as_deref() {
            None | Some("openpgp") => Format::OpenPgp,
            Some("x509") => Format::X509,
            Some("ssh") => Format::Ssh,
            Some(other) => {
                return Err(Error::input(
                    Problem::new(format!(
                        "gpg.format `{other}`: git knows openpgp, x509 and ssh"
                    ))
                    .fix("fix it with `git config gpg.format ssh` (or openpgp, x509)"),
                ));
            }
        };
        let program = match format {
            Format::OpenPgp => place
                .config("gpg.openpgp.program", false)
                .or_else(|| place.config("gpg.program", false))
                .unwrap_or_else(|| "gpg".into()),
            Format::X509 => place
                .config("gpg.x509.program", false)
                .unwrap_or_else(|| "gpgsm".into()),
            Format::Ssh => place
                .config("gpg.ssh.program", false)
                .unwrap_or_else(|| "ssh-keygen".into()),
        };
        let key = match (place.config("user.signingkey", false), format) {
            (Some(key), _) => key,
            (None, Format::Ssh) => default_ssh_key(place)?,
            (None, _) => format!("{} <{}>", committer.name, committer.email),
        };
        Ok(Some(Signing {
            format,
            program,
            key,
        }))
    }

    /// Writes a commit object (no ref moves), signed when `signing` is set, as git writes
    /// one with commit.gpgSign. `fail` names the operation for libgit2's errors.
    #[allow(clippy::too_many_arguments)]
    pub fn commit(
        signing: Option<&Signing>,
        repo: &git2::Repository,
        author: &git2::Signature<'_>,
        committer: &git2::Signature<'_>,
        message: &str,
        tree: &git2::Tree<'_>,
        parents: &[&git2::Commit<'_>],
        fail: impl Fn(git2::Error) -> Error,
    ) -> Result<git2::Oid> {
        let Some(signing) = signing else {
            return repo
                .commit(None, author, committer, message, tree, parents)
                .map_err(fail);
        };
        let buffer = repo
            .commit_create_buffer(author, committer, message, tree, parents)
            .map_err(&fail)?;
        let text = std::str::from_utf8(&buffer).map_err(|_| {
            Error::input(
                Problem::new("the commit message is not UTF-8")
                    .fix("scaffold signs UTF-8 commits only"),
            )
        })?;
        let gpgsig = signing.sign(&buffer)?;
        repo.commit_signed(text, &gpgsig, None).map_err(fail)
    }

    /// The signature of `buffer` (a commit object's text), without its final newline (the
    /// form git stores in the `gpgsig` header).
    pub fn sign(&self, buffer: &[u8]) -> Result<String> {
        let signature = match self.format {
            Format::OpenPgp | Format::X509 => self.sign_gpg(buffer)?,
            Format::Ssh => self.sign_ssh(buffer)?,
        };
        Ok(signature.trim_end_matches('\n').to_string())
    }

    fn refused(&self, why: &str) -> Error {
        Error::refused(Problem::new(format!("commit.gpgSign is true and `{}` could not sign the commit ({why})",
            self.program)).fix(format!("nothing was committed: fix signing (`git commit --allow-empty -S -m test` shows the same failure), {SIGN_LATER}")))
    }

    fn sign_gpg(&self, buffer: &[u8]) -> Result<String> {
        let child = Command::new(&self.program)
            .args(["--status-fd=2", "-bsau", &self.key])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| self.refused(&e.to_string()))?;
        let output = feed(child, buffer).map_err(|e| self.refused(&e.to_string()))?;
        let status = String::from_utf8_lossy(&output.stderr);
        if !output.status.success() || !format!("\n{status}").contains("\n[GNUPG:] SIG_CREATED ") {
            return Err(self.refused(first_line(&status)));
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    fn sign_ssh(&self, buffer: &[u8]) -> Result<String> {
        let temp = tempfile::TempDir::new().map_err(|e| self.refused(&e.to_string()))?;
        let literal = self
            .key
            .strip_prefix("key::")
            .or_else(|| self.key.starts_with("ssh-").then_some(self.key.as_str()));
        let key_file = match literal {
            Some(key) => {
                let path = temp.path().join("signing-key.pub");
                std::fs::write(&path, format!("{key}\n"))
                    .map_err(|e| self.refused(&e.to_string()))?;
                path
            }
            None => expand_home(&self.key),
        };
        let buffer_file = temp.path().join("commit");
        std::fs::write(&buffer_file, buffer).map_err(|e| self.refused(&e.to_string()))?;
        let mut command = Command::new(&self.program);
        command
            .args(["-Y", "sign", "-n", "git", "-f"])
            .arg(&key_file);
        if literal.is_some() {
            command.arg("-U");
        }
        let output = command
            .arg(&buffer_file)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| self.refused(&e.to_string()))?;
        if !output.status.success() {
            return Err(self.refused(first_line(&String::from_utf8_lossy(&output.stderr))));
        }
        let signature_file = temp.path().join("commit.sig");
        std::fs::read_to_string(&signature_file).map_err(|e| self.refused(&e.to_string()))
    }
}

/// `gpg.ssh.defaultKeyCommand`'s first key, as git takes it when user.signingkey is unset.
fn default_ssh_key(place: &Place) -> Result<String> {
    let missing = || {
        Error::refused(
            Problem::new(
                "commit.gpgSign is true with gpg.format ssh, but user.signingkey is not set",
            )
            .fix(format!(
                "set it (`git config user.signingkey ~/.ssh/id_ed25519.pub`), {SIGN_LATER}"
            )),
        )
    };
    let command = place
        .config("gpg.ssh.defaultKeyCommand", false)
        .ok_or_else(missing)?;
    let output = Command::new("sh")
        .args(["-c", &command])
        .current_dir(&place.cwd)
        .output()
        .map_err(|_| missing())?;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .find(|l| l.starts_with("key::") || l.starts_with("ssh-"))
        .map(|l| l.to_string())
        .ok_or_else(missing)
}

fn feed(mut child: std::process::Child, input: &[u8]) -> std::io::Result<std::process::Output> {
    use std::io::Write;
    if let Some(mut stdin) = child.stdin.take() {
        // A program that fails early closes its input; its exit status says why.
        let _ = stdin.write_all(input);
    }
    child.wait_with_output()
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with("[GNUPG:]"))
        .unwrap_or("no signature made")
}

fn expand_home(path: &str) -> PathBuf {
    match (
        path.strip_prefix("~/"),
        crate::process_env::snapshot().home(),
    ) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(path),
    }
}

/// The hooks directory git uses for the repo at `root` (`core.hooksPath` honoured).
pub fn hooks_dir(root: &Path, place: &Place) -> Option<PathBuf> {
    match git2::Repository::open(root) {
        Ok(repo) => hooks_dir_of(&repo, root, place),
        Err(_) => hooks_dir_asked(root),
    }
}

/// `hooks_dir` for `repo`, the repository at `root`, open already.
pub fn hooks_dir_of(repo: &git2::Repository, root: &Path, place: &Place) -> Option<PathBuf> {
    place
        .default_hooks_dir(repo)
        .or_else(|| hooks_dir_asked(root))
}

/// The hooks directory as `git rev-parse --git-path hooks` says (libgit2's reading of
/// core.hooksPath without git).
fn hooks_dir_asked(root: &Path) -> Option<PathBuf> {
    let place = Place::repo(root);
    match place.ask(&["rev-parse", "--path-format=absolute", "--git-path", "hooks"]) {
        Some(Ok(dir)) => Some(PathBuf::from(dir)),
        _ => {
            let repo = git2::Repository::open(root).ok()?;
            Some(match place.config("core.hooksPath", false) {
                Some(path) => root.join(expand_home(&path)),
                None => repo.path().join("hooks"),
            })
        }
    }
}

pub fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

/// `mutex` locked; a panic on another thread while it held the lock leaves a cache that is
/// still whole (entries are pushed or taken in one step), so it is used as it stands.
fn locked<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idents_parse_with_their_time_zone() {
        let person =
            Person::parse_ident("A. U. Thor <a@example.org> 1112904793 -0230").expect("ident");
        assert_eq!(person.name, "A. U. Thor");
        assert_eq!(person.email, "a@example.org");
        assert_eq!(person.when, Some((1112904793, -150)));
        assert_eq!(Person::parse_ident("no email 1 +0000"), None);
    }

    #[test]
    fn names_git_rejects_are_refused() {
        for (name, email) in [
            ("A\nB", "a@b"),
            ("A <x", "a@b"),
            ("A", "a>@b"),
            (" ", "a@b"),
        ] {
            assert!(
                check_person(name, email, "--author", "fix").is_err(),
                "{name:?}"
            );
        }
        assert!(check_person("Ann", "ann@example.org", "--author", "fix").is_ok());
    }
}
