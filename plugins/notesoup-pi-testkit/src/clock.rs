//! Time and entry ids for the reference host: real, or deterministic so
//! that a scripted session writes the same bytes every run.

use jiff::Timestamp;

/// Where the host's time comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Clock {
    /// The system clock.
    System,
    /// Starts at `next_ms` and advances `step_ms` on every reading.
    Stepping {
        /// The next reading, in epoch milliseconds.
        next_ms: i64,
        /// The advance per reading.
        step_ms: i64,
    },
}

impl Clock {
    /// A stepping clock from an ISO time, one second per reading.
    pub fn stepping_from(iso: &str) -> Self {
        Self::Stepping {
            next_ms: notesoup_pi::projection::iso_to_millis(iso),
            step_ms: 1000,
        }
    }

    /// The current time in epoch milliseconds.
    pub fn now_ms(&mut self) -> i64 {
        match self {
            Self::System => Timestamp::now().as_millisecond(),
            Self::Stepping { next_ms, step_ms } => {
                let now = *next_ms;
                *next_ms += *step_ms;
                now
            }
        }
    }
}

/// `new Date(ms).toISOString()`.
pub fn iso(ms: i64) -> String {
    Timestamp::from_millisecond(ms)
        .unwrap_or(Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Where entry ids come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IdSource {
    /// Pi's `randomUUID().slice(0, 8)`.
    Random,
    /// `00000001`, `00000002`, …
    Sequential {
        /// The next number.
        next: u64,
    },
}

impl IdSource {
    /// Sequential ids from 1.
    pub fn sequential() -> Self {
        Self::Sequential { next: 1 }
    }

    /// A candidate id (the caller checks it is unused).
    pub fn next_id(&mut self) -> String {
        match self {
            Self::Random => notesoup_pi::reset::window::random_hex8(),
            Self::Sequential { next } => {
                let id = format!("{next:08x}");
                *next += 1;
                id
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_matches_javascript() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_772_355_778_123), "2026-03-01T09:02:58.123Z");
        let mut clock = Clock::stepping_from("2026-03-01T09:00:00.000Z");
        assert_eq!(iso(clock.now_ms()), "2026-03-01T09:00:00.000Z");
        assert_eq!(iso(clock.now_ms()), "2026-03-01T09:00:01.000Z");
        let mut ids = IdSource::sequential();
        assert_eq!(ids.next_id(), "00000001");
        assert_eq!(IdSource::Random.next_id().len(), 8);
    }
}
