//! pi-ai `utils/overflow.ts`: is a response a context overflow?
//!
//! The pattern lists are Pi's, verbatim (pi-ai 1.6.0), in JavaScript's
//! regular-expression syntax with the `i` flag.

use std::sync::OnceLock;

use regex_lite::Regex;

use crate::session::{AssistantMessage, StopReason};

/// Error texts of providers whose input exceeded the context window or the
/// request size limit.
const OVERFLOW_PATTERNS: [&str; 27] = [
    r"prompt (?:is )?too long",
    r"prompt exceeds max length",
    r"request_too_large",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
    r"context window exceeded",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
    r"input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
    r"model_context_window_exceeded",
    r"prompt too long; exceeded (?:max )?context length",
    r"range of input length should be",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))",
];

/// Cerebras answers an overflow with a bodyless 400 or 413.
const CEREBRAS_BODYLESS_OVERFLOW_PATTERN: &str = r"^4(?:00|13)\s*(?:status code)?\s*\(no body\)";

/// Errors that are never overflows even when an overflow pattern matches
/// (throttling, rate limits).
const NON_OVERFLOW_PATTERNS: [&str; 3] = [
    r"^(Throttling error|Service unavailable):",
    r"rate limit",
    r"too many requests",
];

struct Patterns {
    overflow: Vec<Regex>,
    cerebras: Option<Regex>,
    non_overflow: Vec<Regex>,
}

fn compile(pattern: &str) -> Option<Regex> {
    Regex::new(&format!("(?i){pattern}")).ok()
}

fn patterns() -> &'static Patterns {
    static PATTERNS: OnceLock<Patterns> = OnceLock::new();
    PATTERNS.get_or_init(|| Patterns {
        overflow: OVERFLOW_PATTERNS
            .iter()
            .filter_map(|p| compile(p))
            .collect(),
        cerebras: compile(CEREBRAS_BODYLESS_OVERFLOW_PATTERN),
        non_overflow: NON_OVERFLOW_PATTERNS
            .iter()
            .filter_map(|p| compile(p))
            .collect(),
    })
}

/// `isContextOverflow(message, contextWindow?)`: an error whose text names an
/// overflow (and no throttling), a `stop` whose input exceeds the window
/// (silent overflow), or a `length` stop with no output whose input fills
/// 99% of the window. A `context_window` of 0 means unknown.
pub fn is_context_overflow(message: &AssistantMessage, context_window: u64) -> bool {
    let patterns = patterns();
    if message.stop_reason == StopReason::Error
        && let Some(error) = message.error_message.as_deref()
        && !error.is_empty()
        && !patterns.non_overflow.iter().any(|p| p.is_match(error))
    {
        if patterns.overflow.iter().any(|p| p.is_match(error)) {
            return true;
        }
        if message.provider == "cerebras"
            && patterns
                .cerebras
                .as_ref()
                .is_some_and(|p| p.is_match(error))
        {
            return true;
        }
    }
    if context_window == 0 {
        return false;
    }
    let input = message.usage.input + message.usage.cache_read;
    match message.stop_reason {
        StopReason::Stop => input > context_window,
        // JavaScript compares against `contextWindow * 0.99` as a double.
        #[allow(clippy::cast_precision_loss)]
        StopReason::Length => {
            message.usage.output == 0 && input as f64 >= context_window as f64 * 0.99
        }
        _ => false,
    }
}

/// `isRecoverableLength(message, maxTokens)`: a `length` stop below a
/// positive output limit.
pub fn is_recoverable_length(message: &AssistantMessage, max_tokens: u64) -> bool {
    message.stop_reason == StopReason::Length && max_tokens > 0 && message.usage.output < max_tokens
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::{Extra, Usage};

    fn message(stop: StopReason, error: Option<&str>, input: u64, output: u64) -> AssistantMessage {
        AssistantMessage {
            content: Vec::new(),
            api: "a".into(),
            provider: "p".into(),
            model: "m".into(),
            usage: Usage {
                input,
                output,
                ..Usage::default()
            },
            stop_reason: stop,
            deferred: None,
            error_message: error.map(str::to_owned),
            response_id: None,
            timestamp: 0,
            duration_ms: None,
            thinking_level: None,
            extra: Extra::new(),
        }
    }

    #[test]
    fn every_pattern_compiles() {
        let patterns = patterns();
        assert_eq!(patterns.overflow.len(), OVERFLOW_PATTERNS.len());
        assert_eq!(patterns.non_overflow.len(), NON_OVERFLOW_PATTERNS.len());
        assert!(patterns.cerebras.is_some());
    }

    #[test]
    fn overflow_detection_matches_pi() {
        let error = |text| message(StopReason::Error, Some(text), 0, 0);
        let cases = [
            (
                error("prompt is too long: 213462 tokens > 200000 maximum"),
                true,
            ),
            (
                error("Your input exceeds the context window of this model"),
                true,
            ),
            (
                error(
                    "Requested token count exceeds the model's maximum context length of 131072 tokens",
                ),
                true,
            ),
            (error("413 (no body)"), true),
            (
                error("github-copilot API error (413): {\"message\":\"x\"}"),
                true,
            ),
            (
                error("ThrottlingException: Too many tokens, please wait"),
                true,
            ),
            (error("Throttling error: Too many tokens"), false),
            (error("rate limit: too many tokens"), false),
            (error("internal server error"), false),
            (message(StopReason::Stop, None, 1001, 5), true),
            (message(StopReason::Stop, None, 1000, 5), false),
            (message(StopReason::Length, None, 990, 0), true),
            (message(StopReason::Length, None, 989, 0), false),
            (message(StopReason::Length, None, 995, 1), false),
        ];
        for (msg, expect) in cases {
            assert_eq!(
                is_context_overflow(&msg, 1000),
                expect,
                "{:?} {:?}",
                msg.stop_reason,
                msg.error_message
            );
        }
        assert!(!is_context_overflow(
            &message(StopReason::Stop, None, 5000, 0),
            0
        ));
        let mut bodyless = error("400 status code (no body)");
        assert!(!is_context_overflow(&bodyless, 1000));
        bodyless.provider = "cerebras".into();
        assert!(is_context_overflow(&bodyless, 1000));
    }

    #[test]
    fn recoverable_length_needs_a_positive_limit() {
        let length = message(StopReason::Length, None, 10, 50);
        assert!(is_recoverable_length(&length, 100));
        assert!(!is_recoverable_length(&length, 50));
        assert!(!is_recoverable_length(&length, 0));
        assert!(!is_recoverable_length(
            &message(StopReason::Stop, None, 10, 5),
            100
        ));
    }
}
