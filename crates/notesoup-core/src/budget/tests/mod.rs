//! Budget: the lines, the countdown, the stages, the clamped reserve and the
//! texts, over internals no other crate sees.

#![allow(clippy::unwrap_used)]

use notesoup_core::budget::{
    BudgetPolicy, BudgetStage, ClampedReserve, ContextRemaining, MAX_RESERVE_TOKENS,
    ReserveWarning, WARNING_RUNWAY_TOKENS,
};
use notesoup_core::wire::ToolBindings;
use proptest::prelude::*;

#[test]
fn constants_and_default_lines() {
    assert_eq!(BudgetPolicy::DEFAULT_RESERVE_TOKENS, 16_384);
    assert_eq!(BudgetPolicy::DEFAULT_REMINDER_MARGIN_TOKENS, 24_576);
    assert_eq!(WARNING_RUNWAY_TOKENS, 16_384);
    let policy = BudgetPolicy::default();
    assert_eq!(policy.reserve_line(), 16_384);
    assert_eq!(policy.warning_line(), 32_768);
    assert_eq!(policy.reminder_line(), 40_960);
}

#[test]
fn lines_follow_reserve_and_margin() {
    let policy = BudgetPolicy::new(20_000, 1_000);
    assert_eq!(policy.reserve_line(), 20_000);
    assert_eq!(policy.warning_line(), 36_384);
    assert_eq!(policy.reminder_line(), 21_000);
    let huge = BudgetPolicy::new(u64::MAX - 5, u64::MAX);
    assert_eq!(huge.reminder_line(), u64::MAX);
    assert_eq!(huge.warning_line(), u64::MAX);
}

#[test]
fn remaining_never_goes_negative() {
    assert_eq!(BudgetPolicy::remaining_tokens(200_000, 150_000), 50_000);
    assert_eq!(BudgetPolicy::remaining_tokens(200_000, 200_000), 0);
    assert_eq!(BudgetPolicy::remaining_tokens(200_000, 250_000), 0);
}

#[test]
fn countdown_ends_at_the_warning_line() {
    fn check(remaining: Option<u64>, expect: Option<u64>) {
        assert_eq!(
            BudgetPolicy::default().countdown(remaining),
            expect,
            "remaining {remaining:?}"
        );
    }
    check(None, None);
    check(Some(100_000), Some(67_232));
    check(Some(32_769), Some(1));
    check(Some(32_768), Some(0));
    check(Some(20_000), Some(0));
    check(Some(0), Some(0));
}

#[test]
fn stage_by_line_and_automatic_resets() {
    fn check(remaining: Option<u64>, automatic: bool, expect: BudgetStage) {
        assert_eq!(
            BudgetPolicy::default().stage(remaining, automatic),
            expect,
            "remaining {remaining:?}, automatic {automatic}"
        );
    }
    use BudgetStage::*;
    check(None, true, Clear);
    check(None, false, Clear);
    check(Some(40_961), true, Clear);
    check(Some(40_960), true, Reminder);
    check(Some(32_769), true, Reminder);
    check(Some(32_768), true, Warning);
    check(Some(16_385), true, Warning);
    check(Some(16_384), true, HardReserve);
    check(Some(0), true, HardReserve);
    // Automatic resets off: no warning and no forced reset, only the reminder.
    check(Some(40_961), false, Clear);
    check(Some(40_960), false, Reminder);
    check(Some(32_768), false, Reminder);
    check(Some(0), false, Reminder);
}

#[test]
fn a_margin_below_the_runway_leaves_no_reminder_band() {
    let policy = BudgetPolicy::new(16_384, 8_192);
    assert_eq!(policy.stage(Some(24_576), true), BudgetStage::Warning);
    assert_eq!(policy.stage(Some(24_576), false), BudgetStage::Reminder);
    assert_eq!(policy.stage(Some(30_000), true), BudgetStage::Warning);
    assert_eq!(policy.stage(Some(32_769), true), BudgetStage::Clear);
}

#[test]
fn clamping_garbage_reserves() {
    fn check(raw: f64, window: Option<u64>, tokens: u64, warning: Option<&str>) {
        let ClampedReserve {
            tokens: got,
            warning: got_warning,
        } = ClampedReserve::of(raw, window);
        assert_eq!(got, tokens, "raw {raw}, window {window:?}");
        assert_eq!(
            got_warning.map(|w| w.to_string()).as_deref(),
            warning,
            "raw {raw}, window {window:?}"
        );
    }
    let not_positive = |got: &str| {
        format!(
            "notesoup: reserveTokens must be a positive integer (got {got}); using the default reserve of 16384 tokens."
        )
    };
    check(16_384.0, None, 16_384, None);
    check(1.0, None, 1, None);
    check(20_000.0, Some(200_000), 20_000, None);
    check(-5.0, None, 16_384, Some(&not_positive("-5")));
    check(0.0, Some(200_000), 16_384, Some(&not_positive("0")));
    check(-0.0, None, 16_384, Some(&not_positive("-0")));
    check(1.5, None, 16_384, Some(&not_positive("1.5")));
    check(f64::NAN, None, 16_384, Some(&not_positive("NaN")));
    check(f64::INFINITY, None, 16_384, Some(&not_positive("inf")));
    // Huge with an unknown window: the absolute cap.
    check(1_048_576.0, None, MAX_RESERVE_TOKENS, None);
    check(
        5_000_000.0,
        None,
        MAX_RESERVE_TOKENS,
        Some("notesoup: reserveTokens 5000000 is too large; clamped to 1048576 tokens."),
    );
    check(
        1e300,
        None,
        MAX_RESERVE_TOKENS,
        Some(&format!(
            "notesoup: reserveTokens {} is too large; clamped to 1048576 tokens.",
            1e300
        )),
    );
    // Huge for a known window: half the window.
    check(100_000.0, Some(200_000), 100_000, None);
    check(
        150_000.0,
        Some(200_000),
        100_000,
        Some(
            "notesoup: reserveTokens 150000 leaves too little of the 200000-token context window; clamped to 100000 tokens.",
        ),
    );
    // The default is never clamped, even on a small window.
    check(16_384.0, Some(20_000), 16_384, None);
    check(
        17_000.0,
        Some(20_000),
        16_384,
        Some(
            "notesoup: reserveTokens 17000 leaves too little of the 20000-token context window; clamped to 16384 tokens.",
        ),
    );
}

#[test]
fn clamp_warnings_carry_their_facts() {
    assert_eq!(
        ClampedReserve::of(3e6, Some(1_000_000)).warning,
        Some(ReserveWarning::TooLarge {
            raw: 3e6,
            cap: 500_000,
            context_window: Some(1_000_000),
        })
    );
}

proptest! {
    #[test]
    fn clamped_reserves_are_positive_and_bounded(raw in any::<f64>(), window in proptest::option::of(any::<u64>())) {
        let clamped = ClampedReserve::of(raw, window);
        prop_assert!(clamped.tokens >= 1);
        let cap = window.map_or(MAX_RESERVE_TOKENS, |w| (w / 2).max(BudgetPolicy::DEFAULT_RESERVE_TOKENS));
        prop_assert!(clamped.tokens <= cap);
        prop_assert_eq!(clamped.warning.is_none(), raw == clamped.tokens as f64);
    }

    #[test]
    fn stage_only_grows_as_room_shrinks(
        reserve in 1u64..1_000_000,
        margin in 1u64..1_000_000,
        a in any::<u64>(),
        b in any::<u64>(),
        automatic in any::<bool>(),
    ) {
        let policy = BudgetPolicy::new(reserve, margin);
        let (low, high) = (a.min(b), a.max(b));
        prop_assert!(policy.stage(Some(low), automatic) >= policy.stage(Some(high), automatic));
        prop_assert!(policy.countdown(Some(high)) <= Some(high));
    }
}

/// Bindings with every name changed, to show each substitution (the boot's
/// tests use them too).
pub(crate) fn odd_bindings() -> ToolBindings {
    ToolBindings {
        notes: "memo_*".into(),
        notes_list: "memo_list".into(),
        history: "past_*".into(),
        history_windows: "past_windows".into(),
        history_list: "past_list".into(),
        history_search: "past_search".into(),
        history_read: "past_read".into(),
        remaining: "room_left".into(),
        wipe: "forget_all".into(),
    }
}

#[test]
fn reminder_text_snapshot() {
    insta::assert_snapshot!(BudgetPolicy::reminder_text(8_192, &ToolBindings::plain()));
}

#[test]
fn reminder_text_counts_one_token() {
    let text = BudgetPolicy::reminder_text(1, &ToolBindings::plain());
    assert!(
        text.contains("Only 1 token left before your final warning, and the wipe right behind it…"),
        "{text}"
    );
}

#[test]
fn reminder_text_uses_the_wipe_binding() {
    insta::assert_snapshot!(BudgetPolicy::reminder_text(123_456, &odd_bindings()));
}

#[test]
fn warning_text_snapshot() {
    insta::assert_snapshot!(BudgetPolicy::warning_text(&ToolBindings::plain()));
}

#[test]
fn warning_text_uses_the_bindings() {
    insta::assert_snapshot!(BudgetPolicy::warning_text(&odd_bindings()));
}

#[test]
fn bare_manual_close_out_is_the_warning() {
    let bindings = ToolBindings::plain();
    assert_eq!(
        BudgetPolicy::manual_close_out_text(&bindings, None),
        BudgetPolicy::warning_text(&bindings)
    );
    assert_eq!(
        BudgetPolicy::manual_close_out_text(&bindings, Some("  \n ")),
        BudgetPolicy::warning_text(&bindings)
    );
}

#[test]
fn manual_close_out_quotes_the_prompt() {
    let text = BudgetPolicy::manual_close_out_text(
        &ToolBindings::plain(),
        Some("Fix the flaky login test.\n\nThen run `cargo test` — all of it."),
    );
    insta::assert_snapshot!(text);
}

#[test]
fn get_context_remaining_result() {
    fn check(remaining: Option<u64>, expect: &str) {
        let result = BudgetPolicy::default().context_remaining(remaining);
        assert_eq!(result.to_string(), expect);
        assert_eq!(
            serde_json::to_string(&result).expect("serializable"),
            expect
        );
        assert_eq!(
            serde_json::from_str::<ContextRemaining>(expect).expect("parses"),
            result
        );
    }
    check(None, r#"{"remaining_tokens":null}"#);
    check(Some(100_000), r#"{"remaining_tokens":67232}"#);
    check(Some(1_000), r#"{"remaining_tokens":0}"#);
}
