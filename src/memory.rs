//! When mimalloc, the global allocator (main.rs), hands freed memory back to the system:
//! its purge delay, one option of mimalloc v3 (vendored by libmimalloc-sys 0.1.49,
//! `c_src/mimalloc/v3`), set at the few points where a run's phases change.

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_t` (include/mimalloc.h; the crate
/// names only v2's options): how long freed pages stay resident before they are handed back.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// The purge delay's default (v3's src/options.c): a second, longer than a run.
const DEFAULT_PURGE_DELAY_MS: std::ffi::c_long = 1000;

/// Freed pages handed back at once, from the start of a run: the pages lint's model of a
/// blueprint from disk frees would otherwise still be resident when the write allocates.
/// Returning them at once lowers the first `new`'s peak by a MiB at a few more `madvise`
/// calls (BENCHMARKS.md, round three e).
#[allow(unsafe_code)] // mimalloc's C API
pub fn purge_freed_pages_at_once() {
    // SAFETY: sets a number in mimalloc's option table; no pointer, before any thread starts.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0) }
}

/// Puts the purge delay back to its default once `new`'s lint has run (lint's model is
/// handed back as lint goes: that run's peak); after lint every free would still purge: a
/// `madvise`, a TLB flush on every core and the page faulted in again, 1–2 ms of a
/// three-environment `new`. What the rendering frees is handed back before the writes
/// (`release_freed_memory`).
#[allow(unsafe_code)] // mimalloc's C API
pub fn purge_after_the_default_delay() {
    // SAFETY: sets a number in mimalloc's option table; no pointer. The thread making the
    // repository may read it meanwhile: one aligned word, read whole, either value valid.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, DEFAULT_PURGE_DELAY_MS) }
}

/// Returns the memory freed so far to the system, whatever the delay: `new` at 2,000 files
/// peaked at 26.1 MiB with the blueprint freed and at 22.3–23.2 with its memory returned
/// (BENCHMARKS.md, round two).
#[allow(unsafe_code)] // mimalloc's C API
pub fn release_freed_memory() {
    // SAFETY: `mi_collect` takes no pointer; it only hands free pages back to the system.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
