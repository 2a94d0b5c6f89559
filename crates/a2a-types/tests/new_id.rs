//! `new_id`: UUID v7 strings, unique across threads, ordered within a thread.

use std::collections::HashSet;

#[test]
fn ids_are_v7_unique_across_threads_and_ordered_within_one() {
    const THREADS: usize = 8;
    const PER_THREAD: usize = 20_000;
    let per_thread: Vec<Vec<String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..THREADS)
            .map(|_| s.spawn(|| (0..PER_THREAD).map(|_| a2a_types::new_id()).collect()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut seen = HashSet::new();
    for ids in &per_thread {
        for id in ids {
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 7, "{id}");
            assert_eq!(id, &uuid.hyphenated().to_string(), "lower-case hyphenated");
            assert!(seen.insert(id.clone()), "{id} made twice");
        }
        // One thread's ids sort in the order they were made (the stores' index locality).
        assert!(ids.windows(2).all(|w| w[0] < w[1]), "out of order");
    }
    assert_eq!(seen.len(), THREADS * PER_THREAD);
}
