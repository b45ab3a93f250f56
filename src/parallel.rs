//! Work spread over a few threads with the results kept in order: suites run `jobs` at a time,
//! benchmark tasks, report files parsed one per core. One home for the queue, so each caller
//! says only what one item costs and what a lost one means.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Runs `work` over `items` on up to `threads` threads (the calling one among them), each taking
/// the next item not yet taken; the results in the order of `items`. A slot is `None` only when
/// its item was not finished: a worker that panicked (the panic is passed on when the threads are
/// joined, so callers that catch it see which items were lost).
pub(crate) fn in_order<T: Sync, R: Send>(items: &[T], threads: usize, work: impl Fn(&T) -> R + Sync) -> Vec<Option<R>> {
    let threads = threads.clamp(1, items.len().max(1));
    if threads == 1 {
        return items.iter().map(|item| Some(work(item))).collect();
    }
    let slots: Vec<Mutex<Option<R>>> = items.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let worker = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else { break };
            let result = work(item);
            // Each slot is filled by one thread, once: never contended, and a lock poisoned by a
            // panic elsewhere still holds its value.
            *slots[i].lock().unwrap_or_else(std::sync::PoisonError::into_inner) = Some(result);
        }
    };
    std::thread::scope(|scope| {
        for _ in 1..threads {
            scope.spawn(worker);
        }
        worker();
    });
    slots.into_iter().map(|slot| slot.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_the_order_of_the_items_whatever_the_threads() {
        let items: Vec<u64> = (0..200).collect();
        for threads in [0, 1, 2, 3, 8, 500] {
            let got = in_order(&items, threads, |n| {
                // Uneven work, so threads finish out of order.
                std::thread::sleep(std::time::Duration::from_micros(n % 7 * 50));
                n * 2
            });
            let expected: Vec<Option<u64>> = items.iter().map(|n| Some(n * 2)).collect();
            assert_eq!(got, expected, "{threads} threads");
        }
        assert!(in_order(&[] as &[u8], 4, |_| ()).is_empty());
    }
}
