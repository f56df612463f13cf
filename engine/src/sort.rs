//! The engine's sorting, by two small functions instead of `sort_by_key`/`sort_unstable`:
//! each of those brings core's driftsort or quicksort with its small-sort networks for its
//! element type and key (3 to 4 kB of wasm per call site). A timeline is put in order with
//! [`stable_order`] by `scenario::sort_timeline`.

use crate::types::BrokerId;

/// The indices `0..keys.len()` in the order of their keys, equal keys in index order (a
/// stable sort): a bottom-up merge sort, O(n log n) on any input, as lists a person writes
/// (a timeline, expectations) can be long.
pub fn stable_order(keys: &[u64]) -> Vec<usize> {
    let n = keys.len();
    let mut order: Vec<usize> = (0..n).collect();
    let mut merged = vec![0; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j) = (start, mid);
            for slot in &mut merged[start..end] {
                // On equal keys the left run's index goes first: stable.
                if j == end || (i < mid && keys[order[i]] <= keys[order[j]]) {
                    *slot = order[i];
                    i += 1;
                } else {
                    *slot = order[j];
                    j += 1;
                }
            }
            start = end;
        }
        std::mem::swap(&mut order, &mut merged);
        width *= 2;
    }
    order
}

/// Broker ids in ascending order.
pub fn sorted_ids(ids: &[BrokerId]) -> Vec<BrokerId> {
    let keys: Vec<u64> = ids.iter().map(|&b| u64::from(b)).collect();
    stable_order(&keys).into_iter().map(|i| ids[i]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::Rng;

    #[test]
    fn orders_as_a_stable_sort_does() {
        let mut rng = Rng::new(3);
        for n in 0..70 {
            let keys: Vec<u64> = (0..n).map(|_| rng.below_or_equal(9)).collect();
            let mut expected: Vec<usize> = (0..n).collect();
            expected.sort_by_key(|&i| keys[i]);
            assert_eq!(stable_order(&keys), expected, "{keys:?}");
        }
    }

    #[test]
    fn sorts_ids() {
        assert_eq!(sorted_ids(&[3, 1, 2, 1]), vec![1, 1, 2, 3]);
    }
}
