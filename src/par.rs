//! Independent work on several threads where the platform has them (one after another in the
//! browser): a plan's kernels compiled ahead of it, a recording's passes analysed.

/// `f(0) … f(n − 1)` in order, computed on up to the machine's threads.
pub fn map<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        let threads = std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .min(n);
        if threads > 1 {
            let next = std::sync::atomic::AtomicUsize::new(0);
            let mut done: Vec<Vec<(usize, T)>> = std::thread::scope(|s| {
                let workers: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| {
                            let mut mine = Vec::new();
                            loop {
                                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                if i >= n {
                                    break mine;
                                }
                                mine.push((i, f(i)));
                            }
                        })
                    })
                    .collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .collect()
            });
            let mut all: Vec<(usize, T)> = done.iter_mut().flat_map(std::mem::take).collect();
            all.sort_by_key(|x| x.0);
            return all.into_iter().map(|x| x.1).collect();
        }
    }
    (0..n).map(f).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn results_come_in_order() {
        assert_eq!(
            super::map(100, |i| i * i),
            (0..100).map(|i| i * i).collect::<Vec<_>>()
        );
        assert!(super::map(0, |i| i).is_empty());
    }
}
