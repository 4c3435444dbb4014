//! "Add rows while the result fits": the one paging rule that notes lists,
//! notes search and history pages share.

/// The rows kept, and the first row that did not fit (if the candidates ran
/// out first, `rejected` is `None`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Filled<T> {
    /// Rows kept, in the order they were offered.
    pub kept: Vec<T>,
    /// The first row that did not fit; nothing after it was tried.
    pub rejected: Option<T>,
}

/// Offers `candidates` in order, keeping each one while `fits` accepts the
/// kept rows with it added; stops at the first that does not fit.
pub fn fill_while_fits<T>(
    candidates: impl IntoIterator<Item = T>,
    mut fits: impl FnMut(&[T]) -> bool,
) -> Filled<T> {
    let mut kept = Vec::new();
    for candidate in candidates {
        kept.push(candidate);
        if !fits(&kept) {
            let rejected = kept.pop();
            return Filled { kept, rejected };
        }
    }
    Filled {
        kept,
        rejected: None,
    }
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
    }
}
