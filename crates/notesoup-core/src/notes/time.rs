//! Note timestamps: epoch milliseconds in memory, local ISO 8601 with a
//! numeric offset on disk (`2026-09-15T17:31:45.392+08:00`, never `Z`), and
//! the process-wide clock whose `updatedAt` stamps strictly increase.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::SystemTime;

use jiff::tz::TimeZone;
use jiff::{Timestamp, civil};

/// The current time in epoch milliseconds.
pub fn now_ms() -> i64 {
    Timestamp::now().as_millisecond()
}

static LAST_STAMP: AtomicI64 = AtomicI64::new(i64::MIN);

/// A modification stamp for this process: `max(now, last + 1)`, so stamps
/// handed out by one process strictly increase and recent-first sorting
/// never inverts.
pub(crate) fn next_stamp_ms() -> i64 {
    let now = now_ms();
    let mut last = LAST_STAMP.load(Ordering::Relaxed);
    loop {
        let stamp = now.max(last.saturating_add(1));
        match LAST_STAMP.compare_exchange_weak(last, stamp, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return stamp,
            Err(seen) => last = seen,
        }
    }
}

/// Formats epoch milliseconds as local ISO 8601 in `tz` with millisecond
/// precision and a numeric offset (UTC is `+00:00`).
pub fn local_iso(ms: i64, tz: &TimeZone) -> String {
    let timestamp = Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH);
    timestamp
        .to_zoned_datetime(tz.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%.3f%:z")
        .to_string()
}

/// Parses a stored timestamp to epoch milliseconds: ISO 8601 with an offset
/// or `Z`; a date-time without offset is local time in `tz`; a bare date is
/// midnight UTC.
pub(crate) fn parse_iso_ms(text: &str, tz: &TimeZone) -> Option<i64> {
    let text = text.trim();
    if let Ok(timestamp) = text.parse::<Timestamp>() {
        return Some(timestamp.as_millisecond());
    }
    if let Ok(datetime) = text.parse::<civil::DateTime>()
        && text.contains(['T', 't', ' '])
    {
        return tz
            .to_timestamp(datetime)
            .ok()
            .map(|timestamp| timestamp.as_millisecond());
    }
    let date = text.parse::<civil::Date>().ok()?;
    TimeZone::UTC
        .to_timestamp(date.to_datetime(civil::Time::midnight()))
        .ok()
        .map(|timestamp| timestamp.as_millisecond())
}

/// A time as whole seconds and nanoseconds since the epoch (negative
/// seconds before it), the shape `lstat` reports.
pub(crate) fn since_epoch(time: SystemTime) -> (i64, i64) {
    match time.duration_since(SystemTime::UNIX_EPOCH) {
        Ok(after) => (
            i64::try_from(after.as_secs()).unwrap_or(i64::MAX),
            i64::from(after.subsec_nanos()),
        ),
        Err(before) => {
            let before = before.duration();
            let secs = i64::try_from(before.as_secs()).unwrap_or(i64::MAX);
            match before.subsec_nanos() {
                0 => (-secs, 0),
                nanos => (-secs - 1, i64::from(1_000_000_000 - nanos)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_numeric_offsets() {
        let ms = 1_789_464_705_392;
        assert_eq!(
            local_iso(ms, &TimeZone::UTC),
            "2026-09-15T09:31:45.392+00:00"
        );
        let shanghai = TimeZone::fixed(jiff::tz::offset(8));
        assert_eq!(local_iso(ms, &shanghai), "2026-09-15T17:31:45.392+08:00");
    }

    #[test]
    fn parses_what_it_writes_and_common_forms() {
        let tz = TimeZone::fixed(jiff::tz::offset(8));
        for (text, expect) in [
            ("2026-09-15T17:31:45.392+08:00", Some(1_789_464_705_392)),
            ("2026-09-15T09:31:45.392Z", Some(1_789_464_705_392)),
            ("2026-09-15T17:31:45.392", Some(1_789_464_705_392)),
            ("2026-09-15", Some(1_789_430_400_000)),
            ("yesterday", None),
        ] {
            assert_eq!(parse_iso_ms(text, &tz), expect, "{text}");
        }
    }

    #[test]
    fn stamps_strictly_increase() {
        let stamps: Vec<i64> = (0..1000).map(|_| next_stamp_ms()).collect();
        assert!(stamps.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
