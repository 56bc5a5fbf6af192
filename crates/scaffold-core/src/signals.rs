//! SIGINT and SIGTERM: a dedicated thread waits for them, so cleanup runs as ordinary code
//! and never inside a signal handler. What it does depends on what the main thread has
//! registered: nothing written yet → exit; a staging directory → remove it, then exit;
//! a transaction → only raise a flag, which the transaction checks between its steps
//! (it rolls back before its commit point and finishes after it).
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The exit code of a run stopped by SIGINT or SIGTERM (128 + SIGINT, as shells report).
pub const INTERRUPTED_EXIT: i32 = 130;

enum Guarded {
    Idle,
    Staging(PathBuf),
    /// The new repository is complete.
    Created,
    Transaction,
    /// A change passed its commit point: it finishes, and the run ends as a success.
    Committed,
}

static STATE: Mutex<Guarded> = Mutex::new(Guarded::Idle);
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// Held by a thread that writes into the registered staging directory outside a region
/// (`new` initialises its repository there while it renders): a signal removes the
/// staging only once that write is over, and then holds it until the process exits.
static WRITING: Mutex<()> = Mutex::new(());

fn state() -> MutexGuard<'static, Guarded> {
    STATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Blocks SIGINT/SIGTERM in this thread (and so in every thread started later) and starts
/// the thread that receives them. Call first thing in `main`, before any other thread.
#[allow(unsafe_code)] // libc signal calls; each block says why it is sound
pub fn install() {
    #[cfg(unix)]
    {
        // SAFETY: plain libc calls on a zeroed, locally owned signal set.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            set
        };
        let spawned = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                loop {
                    let mut signal = 0;
                    // SAFETY: `set` is a valid signal set owned by this closure.
                    if unsafe { libc::sigwait(&set, &mut signal) } == 0 {
                        on_signal();
                    }
                }
            });
        if spawned.is_err() {
            // Without the thread, fall back to the default disposition (die at once).
            // SAFETY: unblocking the signals blocked above.
            unsafe { libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut()) };
        }
    }
}

/// Blocks or unblocks SIGINT in the calling thread only (a prompt handles it itself while
/// it waits for input).
#[allow(unsafe_code)] // libc signal calls; each block says why it is sound
pub fn set_interrupt_blocked(blocked: bool) {
    #[cfg(unix)]
    // SAFETY: plain libc calls on a zeroed, locally owned signal set.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        let how = if blocked {
            libc::SIG_BLOCK
        } else {
            libc::SIG_UNBLOCK
        };
        libc::pthread_sigmask(how, &set, std::ptr::null_mut());
    }
    let _ = blocked;
}

#[allow(clippy::print_stderr)] // says "interrupted" from the signal thread, whatever the main thread is doing
fn on_signal() {
    INTERRUPTED.store(true, Ordering::SeqCst);
    let guarded = state();
    if !matches!(*guarded, Guarded::Transaction) {
        crate::lock::release_held();
    }
    match &*guarded {
        Guarded::Idle => {
            eprintln!("interrupted");
            std::process::exit(INTERRUPTED_EXIT);
        }
        // The change is made: finish it (exit 0, see `committed`); 130 means nothing changed.
        Guarded::Created | Guarded::Committed => {}
        Guarded::Staging(dir) => {
            let _writing = writing_staging();
            let _ = std::fs::remove_dir_all(dir);
            eprintln!("interrupted; nothing was created (staging removed)");
            std::process::exit(INTERRUPTED_EXIT);
        }
        // The transaction sees the flag and stops at its next step.
        Guarded::Transaction => {}
    }
}

/// Held while writing into the registered staging directory outside a region (`Critical`):
/// a signal waits for it before it removes the staging.
pub fn writing_staging() -> MutexGuard<'static, ()> {
    WRITING.lock().unwrap_or_else(PoisonError::into_inner)
}

/// True once SIGINT or SIGTERM arrived.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Marks the commit point passed: from now on a signal lets the run finish (it stays so
/// until the process exits, so the output after the commit is never cut off by a 130).
pub fn mark_committed() {
    let mut guarded = state();
    if !matches!(*guarded, Guarded::Created) {
        *guarded = Guarded::Committed;
    }
}

/// Whether this run has made its change (a commit, or a new repository in place).
pub fn committed() -> bool {
    matches!(*state(), Guarded::Created | Guarded::Committed)
}

/// While held, a signal waits; when the guard says staging, the signal removes `dir`.
/// Hold it across the whole write so the signal never races a half-created directory.
pub struct Critical {
    guard: MutexGuard<'static, Guarded>,
    /// `leave_staged`: the staging outlives the region.
    left_staged: bool,
}

impl Critical {
    /// Enters a region where a signal must wait.
    pub fn enter() -> Self {
        Critical {
            guard: state(),
            left_staged: false,
        }
    }

    /// Leaves the region with its staging directory kept and still registered: a signal
    /// from now on removes it and exits. The next region entered (`publish`, or the owner
    /// giving up) takes it over; dropping that region without `done` removes it.
    pub fn leave_staged(mut self) {
        self.left_staged = matches!(*self.guard, Guarded::Staging(_));
    }

    /// From now on, a signal (once the region ends) or an error removes `dir`.
    pub fn staging(&mut self, dir: PathBuf) {
        *self.guard = Guarded::Staging(dir);
    }

    /// The staging directory was moved into place: the run is a success whatever comes.
    pub fn done(mut self) {
        *self.guard = Guarded::Created;
    }
}

impl Drop for Critical {
    fn drop(&mut self) {
        if self.left_staged {
            return;
        }
        // Left without `done` (an error): the staging goes before a signal may run.
        match &*self.guard {
            Guarded::Staging(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            // Created stays: a later signal must not call a finished run interrupted.
            Guarded::Created => return,
            _ => {}
        }
        *self.guard = Guarded::Idle;
    }
}

/// The test-only seam (built with the `test-seams` feature, which `cargo test` enables and a
/// shipped binary lacks; a cargo feature rather than `debug_assertions`, so the product's fault
/// behaviour never depends on the build profile): `SCAFFOLD_TEST_STEP_DELAY_MS=N` sleeps at
/// every step so a test can interrupt a run anywhere; `SCAFFOLD_TEST_SIGNAL_AT=STEP` sends
/// itself SIGINT there; `SCAFFOLD_TEST_KILL_AT=STEP` dies at `step` as on
/// SIGKILL; `SCAFFOLD_TEST_PANIC_AT=STEP` panics there (a bug); `SCAFFOLD_TEST_FAIL_AT=STEP`
/// fails there as a full disk would.
#[allow(unsafe_code)] // SIGKILL to this process, as the seam promises
pub fn test_seam(step: &str) -> crate::error::Result<()> {
    #[cfg(feature = "test-seams")]
    {
        let env = crate::process_env::snapshot();
        if let Some(ms) = env
            .var("SCAFFOLD_TEST_STEP_DELAY_MS")
            .and_then(|v| v.parse().ok())
        {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        if env.var("SCAFFOLD_TEST_SIGNAL_AT") == Some(step) {
            // SAFETY: sends SIGINT to this very process; the signal thread handles it.
            unsafe { libc::kill(libc::getpid(), libc::SIGINT) };
            // Long enough for the signal thread to have raised the flag.
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        if env.var("SCAFFOLD_TEST_KILL_AT") == Some(step) {
            // SAFETY: sends SIGKILL to this very process.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        }
        if env.var("SCAFFOLD_TEST_PANIC_AT") == Some(step) {
            panic!("injected panic at {step}");
        }
        if env.var("SCAFFOLD_TEST_FAIL_AT") == Some(step) {
            return Err(crate::error::Error::io(
                format!("cannot finish step {step} (injected fault)"),
                std::io::Error::from_raw_os_error(libc::ENOSPC),
            ));
        }
    }
    let _ = step;
    Ok(())
}

/// Marks a transaction: signals only raise the flag until the guard is dropped.
pub struct TransactionGuard(());

impl TransactionGuard {
    pub fn enter() -> Self {
        let mut guarded = state();
        if !matches!(*guarded, Guarded::Committed | Guarded::Created) {
            *guarded = Guarded::Transaction;
        }
        TransactionGuard(())
    }
}

impl Drop for TransactionGuard {
    fn drop(&mut self) {
        let mut guarded = state();
        if !matches!(*guarded, Guarded::Committed | Guarded::Created) {
            *guarded = Guarded::Idle;
        }
    }
}
