//! Arrival orders for the tests, without a random-number dependency.

/// Every permutation of `0..n` (Heap's algorithm); keep `n` small (6 → 720).
pub(crate) fn all(n: usize) -> Vec<Vec<usize>> {
    let mut items: Vec<usize> = (0..n).collect();
    let mut counters = vec![0; n];
    let mut out = vec![items.clone()];
    let mut i = 1;
    while i < n {
        if counters[i] < i {
            let j = if i % 2 == 0 { 0 } else { counters[i] };
            items.swap(j, i);
            out.push(items.clone());
            counters[i] += 1;
            i = 1;
        } else {
            counters[i] = 0;
            i += 1;
        }
    }
    out
}

/// A Fisher–Yates shuffle of `0..n` driven by a xorshift generator seeded with `seed`.
pub(crate) fn shuffled(n: usize, seed: u64) -> Vec<usize> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut items: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = (next() % (i as u64 + 1)) as usize;
        items.swap(i, j);
    }
    items
}

#[test]
fn helpers_cover_every_order_deterministically() {
    let perms = all(4);
    let unique: std::collections::BTreeSet<_> = perms.iter().cloned().collect();
    assert_eq!((perms.len(), unique.len()), (24, 24), "4! distinct orders");
    assert_eq!(shuffled(10, 7), shuffled(10, 7), "same seed, same order");
    assert_ne!(
        shuffled(10, 7),
        shuffled(10, 8),
        "another seed, another order"
    );
    let mut sorted = shuffled(10, 7);
    sorted.sort_unstable();
    assert_eq!(
        sorted,
        (0..10).collect::<Vec<_>>(),
        "a permutation, nothing lost"
    );
}
