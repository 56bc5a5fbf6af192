//! Work spread over every core: `map` runs `f` on each item on as many threads as the
//! machine has cores (never more than items) and returns the results in the items' order.
//! For fleets of repos and the environments of one repo. Pure but for the threads.

/// The machine's cores, asked once (std reads the cgroup's quota files on each call).
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| {
        std::thread::available_parallelism()
            .map(usize::from)
            .unwrap_or(1)
    })
}

/// `f` of each item, in order, computed on every core: the calling thread works too, beside
/// one thread per other core.
pub fn map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let workers = cores().clamp(1, items.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            done.push((i, f(item)));
        }
        done
    };
    let mut done: Vec<(usize, R)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (1..workers).map(|_| scope.spawn(work)).collect();
        let mut done = work();
        for handle in handles {
            done.extend(
                handle
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            );
        }
        done
    });
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// `other` on a second thread while `here` runs on the calling thread: both results, `other`'s
/// first. For two pieces of work that wait on different things (the disk, a process, the
/// CPU); a panic on the second thread goes on in the caller.
pub fn beside<A: Send, B>(other: impl FnOnce() -> A + Send, here: impl FnOnce() -> B) -> (A, B) {
    std::thread::scope(|scope| {
        let other = scope.spawn(other);
        let here = here();
        let other = other
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (other, here)
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_the_items_order() {
        let items: Vec<u64> = (0..50).collect();
        let squares = super::map(&items, |n| {
            std::thread::sleep(std::time::Duration::from_micros(50 - n));
            n * n
        });
        assert_eq!(squares, items.iter().map(|n| n * n).collect::<Vec<_>>());
        assert!(super::map(&Vec::<u8>::new(), |n| *n).is_empty());
    }

    #[test]
    fn beside_runs_the_other_work_on_a_second_thread_and_returns_both() {
        let caller = std::thread::current().id();
        let (other, here) = super::beside(
            || std::thread::current().id(),
            || std::thread::current().id(),
        );
        assert_ne!(other, caller);
        assert_eq!(here, caller);
        let panicked = std::panic::catch_unwind(|| super::beside(|| panic!("other"), || 1));
        assert!(panicked.is_err());
    }
}
