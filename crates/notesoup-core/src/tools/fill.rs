//! "Add rows while the result fits": the one paging rule that notes lists,
//! notes search and history pages share.

/// The rows kept, and the first row that did not fit (if the candidates ran
/// out first, `rejected` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Filled<T> {
    /// Rows kept, in the order they were offered.
    pub kept: Vec<T>,
    /// The first row that did not fit; nothing after it was tried.
    pub rejected: Option<T>,
}

#[cfg(test)]
/// The longest prefix of `candidates` that `fits` accepts, and the first row
/// after it: the page a linear "add rows while the result fits" would keep.
///
/// `fits` must be prefix-closed (a page that fits still fits with its last row
/// removed), which every page in core is: a row adds more bytes than any count
/// it changes can take away. That lets the prefix be found by doubling, then
/// halving, in O(log n) measurements instead of one per row; each measurement
/// renders a whole page, so the linear rule cost O(n²) on long listings.
pub(crate) fn fill_while_fits<T>(
    candidates: impl IntoIterator<Item = T>,
    mut fits: impl FnMut(&[T]) -> bool,
) -> Filled<T> {
    fill_best(candidates, |kept| fits(kept).then_some(())).0
}

/// [`fill_while_fits`] with a measurement that yields what it measured (a
/// packaged result): returns it for the kept rows too, so the page that was
/// accepted is never built again. `None` only when no rows are kept (none
/// offered, or the first did not fit).
pub(crate) fn fill_best<T, O>(
    candidates: impl IntoIterator<Item = T>,
    measure: impl FnMut(&[T]) -> Option<O>,
) -> (Filled<T>, Option<O>) {
    fill_best_from(candidates, 1, measure)
}

/// [`fill_best`] starting from `guess`, an estimate of how many rows fit:
/// the guess is measured first, then the page one row longer, so a right
/// guess costs two measurements. From there the search gallops (steps that
/// double, up while pages fit, down while they do not) and halves, so a
/// wrong guess costs a few more; the page kept is the same for any guess.
/// From a guess of 1 the probes are 1, 2, 4, 8, …
pub(crate) fn fill_best_from<T, O>(
    candidates: impl IntoIterator<Item = T>,
    guess: usize,
    mut measure: impl FnMut(&[T]) -> Option<O>,
) -> (Filled<T>, Option<O>) {
    // Candidates are taken only as far as a probe reaches: the rows past the
    // first measured page that does not fit are never made.
    let mut source = candidates.into_iter();
    let mut kept: Vec<T> = Vec::new();
    // `fit` rows are known to fit (and `best` is their measurement); `high`
    // rows are known not to.
    let (mut fit, mut best) = (0, None);
    let (mut probe, mut step) = (guess.max(1), 1);
    let mut high = loop {
        kept.extend(source.by_ref().take(probe.saturating_sub(kept.len())));
        // Past the end, the end is the probe.
        let len = probe.min(kept.len());
        if len <= fit {
            // Every row is known to fit.
            return (
                Filled {
                    kept,
                    rejected: None,
                },
                best,
            );
        }
        match measure(&kept[..len]) {
            Some(measured) => {
                (fit, best) = (len, Some(measured));
                probe = len + step;
                step *= 2;
            }
            None => break len,
        }
    };
    // Down from a guess that did not fit: steps that double.
    if fit == 0 {
        step = 1;
        while high > 1 {
            let probe = high.saturating_sub(step).max(1);
            match measure(&kept[..probe]) {
                Some(measured) => {
                    (fit, best) = (probe, Some(measured));
                    break;
                }
                None => high = probe,
            }
            step *= 2;
        }
    }
    let mut low = fit;
    while high - low > 1 {
        let middle = low + (high - low) / 2;
        if let Some(measured) = measure(&kept[..middle]) {
            (low, best) = (middle, Some(measured));
        } else {
            high = middle;
        }
    }
    let mut rest = kept.split_off(low);
    rest.truncate(1);
    (
        Filled {
            kept,
            rejected: rest.pop(),
        },
        best,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_at_the_first_row_that_does_not_fit() {
        let filled = fill_while_fits([3, 4, 1, 1], |rows| rows.iter().sum::<i32>() <= 7);
        assert_eq!(filled.kept, vec![3, 4]);
        assert_eq!(filled.rejected, Some(1));
        let all = fill_while_fits([1, 2], |_| true);
        assert_eq!((all.kept, all.rejected), (vec![1, 2], None));
        let none = fill_while_fits([9, 1], |rows| rows.iter().sum::<i32>() <= 7);
        assert_eq!((none.kept, none.rejected), (vec![], Some(9)));
        let empty = fill_while_fits(Vec::<i32>::new(), |_| unreachable!());
        assert_eq!((empty.kept, empty.rejected), (vec![], None));
    }

    /// The rule as it reads: offer rows one by one, stop at the first that
    /// does not fit.
    fn linear(rows: &[u32], budget: u32) -> (Vec<u32>, Option<u32>) {
        let mut kept = Vec::new();
        for &row in rows {
            if kept.iter().sum::<u32>() + row > budget {
                return (kept, Some(row));
            }
            kept.push(row);
        }
        (kept, None)
    }

    proptest::proptest! {
        #[test]
        fn keeps_what_the_linear_rule_keeps(
            rows in proptest::collection::vec(1u32..50, 0..300),
            budget in 0u32..3000,
        ) {
            let filled = fill_while_fits(rows.clone(), |kept| kept.iter().sum::<u32>() <= budget);
            proptest::prop_assert_eq!((filled.kept, filled.rejected), linear(&rows, budget));
        }
    }

    proptest::proptest! {
        #[test]
        fn any_guess_keeps_what_the_linear_rule_keeps(
            rows in proptest::collection::vec(1u32..50, 0..300),
            budget in 0u32..3000,
            guess in 0usize..400,
        ) {
            let (filled, best) = fill_best_from(rows.clone(), guess, |kept| {
                (kept.iter().sum::<u32>() <= budget).then_some(kept.len())
            });
            proptest::prop_assert_eq!(best, (!filled.kept.is_empty()).then_some(filled.kept.len()));
            proptest::prop_assert_eq!((filled.kept, filled.rejected), linear(&rows, budget));
        }
    }

    #[test]
    fn a_right_guess_costs_two_measurements() {
        for (rows, fit) in [(1000, 350), (1000, 1), (350, 350)] {
            let mut calls = 0;
            let (filled, _) = fill_best_from(vec![1u32; rows], fit, |kept| {
                calls += 1;
                (kept.len() <= fit).then_some(())
            });
            assert_eq!(filled.kept.len(), fit);
            // The guess, and one row more (unless there is none).
            assert_eq!(
                calls,
                if rows == fit { 1 } else { 2 },
                "{rows} rows, {fit} fit"
            );
        }
        // A guess one row over: it, then one row less.
        let mut calls = 0;
        let (filled, _) = fill_best_from(vec![1u32; 1000], 351, |kept| {
            calls += 1;
            (kept.len() <= 350).then_some(())
        });
        assert_eq!((filled.kept.len(), calls), (350, 2));
    }

    #[test]
    fn a_wrong_guess_costs_a_logarithmic_number_of_measurements() {
        for (guess, fit) in [(1000, 10), (1000, 0), (999, 500), (3, 900), (1, 1000)] {
            let mut calls = 0;
            let (filled, _) = fill_best_from(vec![1u32; 1000], guess, |kept| {
                calls += 1;
                (kept.len() <= fit).then_some(())
            });
            assert_eq!(filled.kept.len(), fit);
            // Galloping to the bound, then halving inside it.
            assert!(
                calls <= 2 * 11 + 1,
                "guess {guess}, {fit} fit: {calls} calls"
            );
        }
    }

    #[test]
    fn the_kept_rows_come_with_their_own_measurement() {
        for budget in [0, 1, 5, 7, 8, 100] {
            let (filled, best) =
                fill_best(1..=9, |kept| (kept.len() <= budget).then(|| kept.to_vec()));
            assert_eq!(
                best.unwrap_or_default(),
                filled.kept,
                "budget {budget}: the measurement is of the kept rows"
            );
        }
    }

    #[test]
    fn candidates_are_taken_only_as_far_as_a_probe_reaches() {
        let mut made = 0;
        let rows = (0..1000).inspect(|_| made += 1);
        let filled = fill_while_fits(rows, |kept| kept.len() <= 300);
        assert_eq!(filled.kept.len(), 300);
        assert_eq!(filled.rejected, Some(300));
        // Doubling stops at the first probe past the bound (512 rows).
        assert_eq!(made, 512);
    }

    #[test]
    fn a_long_listing_is_measured_a_logarithmic_number_of_times() {
        for (rows, budget) in [(1000, 10_000), (1000, 5), (1000, 700), (1024, 1024), (1, 1)] {
            let mut calls = 0;
            let filled = fill_while_fits(vec![1u32; rows], |kept| {
                calls += 1;
                kept.len() <= budget
            });
            assert_eq!(filled.kept.len(), rows.min(budget));
            // Doubling to the bound, then halving inside it: about 2·log2(n).
            assert!(
                calls <= 2 * 11 + 1,
                "{rows} rows, budget {budget}: {calls} calls"
            );
        }
    }
}
