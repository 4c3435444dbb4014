//! Note timestamps: epoch milliseconds in memory, local ISO 8601 with a
//! numeric offset on disk (`2026-09-15T17:31:45.392+08:00`, never `Z`), and
//! the process-wide clock whose `updatedAt` stamps strictly increase.

use std::path::Path;
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
pub(crate) fn local_iso(ms: i64, tz: &TimeZone) -> String {
    let timestamp = Timestamp::from_millisecond(ms).unwrap_or(Timestamp::UNIX_EPOCH);
    timestamp
        .to_zoned(tz.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%.3f%:z")
        .to_string()
}

/// Now, as local ISO 8601 in the system's time zone, with millisecond
/// precision and a numeric offset (`2026-09-15T17:31:45.392+08:00`).
pub fn now_local_iso() -> String {
    local_iso(now_ms(), &system_time_zone())
}

/// The system's time zone, as [`TimeZone::system`] finds it, read from the
/// file `/etc/localtime` links to when `TZ` is unset: `TimeZone::system`
/// first lists the whole zoneinfo database to look the link's name up
/// (about 1 ms, in every hook and store opening). The zone is named by
/// the link's path after `zoneinfo/`, as `TimeZone::system` names it.
/// Anything else (`TZ` set, `/etc/localtime` a plain file or missing) is
/// left to `TimeZone::system`.
pub(crate) fn system_time_zone() -> TimeZone {
    std::env::var_os("TZ")
        .is_none()
        .then(|| linked_zone(Path::new("/etc/localtime")))
        .flatten()
        .unwrap_or_else(TimeZone::system)
}

/// The zone of the TZif file `link` (a symbolic link) points to, named by
/// its target's path after the last `zoneinfo/`.
fn linked_zone(link: &Path) -> Option<TimeZone> {
    let target = std::fs::read_link(link).ok()?;
    let (_, name) = target.to_str()?.rsplit_once("zoneinfo/")?;
    TimeZone::tzif(name, &std::fs::read(link).ok()?).ok()
}

/// Parses a stored timestamp to epoch milliseconds: ISO 8601 with an offset
/// or `Z`; a date-time without offset is local time in `tz`; a bare date is
/// midnight UTC.
pub(crate) fn parse_iso_ms(text: &str, tz: &TimeZone) -> Option<i64> {
    parse_iso_ms_zoned(text, tz).0
}

/// [`parse_iso_ms`], and whether `tz` decided the answer (a date-time
/// without offset, read or refused in the zone).
pub(crate) fn parse_iso_ms_zoned(text: &str, tz: &TimeZone) -> (Option<i64>, bool) {
    let text = text.trim();
    if let Ok(timestamp) = text.parse::<Timestamp>() {
        return (Some(timestamp.as_millisecond()), false);
    }
    if let Ok(datetime) = text.parse::<civil::DateTime>()
        && text.contains(['T', 't', ' '])
    {
        let ms = tz
            .to_timestamp(datetime)
            .ok()
            .map(|timestamp| timestamp.as_millisecond());
        return (ms, true);
    }
    let ms = text.parse::<civil::Date>().ok().and_then(|date| {
        TimeZone::UTC
            .to_timestamp(date.to_datetime(civil::Time::midnight()))
            .ok()
            .map(|timestamp| timestamp.as_millisecond())
    });
    (ms, false)
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
    #![allow(clippy::unwrap_used)] // a failed unwrap is a failed test
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

    /// A TZif (version 1) file of one zone type, `offset` seconds east of
    /// UTC, abbreviated `abbr`.
    fn tzif(offset: i32, abbr: &str) -> Vec<u8> {
        let mut data = b"TZif".to_vec();
        data.extend([0; 16]);
        // isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        for count in [0, 0, 0, 0, 1, abbr.len() + 1] {
            data.extend(u32::try_from(count).unwrap().to_be_bytes());
        }
        data.extend(offset.to_be_bytes());
        data.extend([0, 0]);
        data.extend(abbr.as_bytes());
        data.push(0);
        data
    }

    #[test]
    fn the_linked_zone_is_read_from_its_file_and_named_by_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let zones = dir.path().join("usr/share/zoneinfo/Asia");
        std::fs::create_dir_all(&zones).unwrap();
        std::fs::write(zones.join("Shanghai"), tzif(8 * 3600, "CST")).unwrap();
        let link = dir.path().join("localtime");
        std::os::unix::fs::symlink(zones.join("Shanghai"), &link).unwrap();
        let zone = linked_zone(&link).unwrap();
        assert_eq!(zone.iana_name(), Some("Asia/Shanghai"));
        assert_eq!(
            local_iso(1_789_464_705_392, &zone),
            "2026-09-15T17:31:45.392+08:00"
        );

        // A relative link is named the same way.
        let relative = dir.path().join("relative");
        std::os::unix::fs::symlink("usr/share/zoneinfo/Asia/Shanghai", &relative).unwrap();
        assert_eq!(
            linked_zone(&relative).unwrap().iana_name(),
            Some("Asia/Shanghai")
        );

        // Left to the system's own lookup: a plain file, a link outside a
        // zoneinfo directory, a dangling link, a link to what is no TZif.
        std::fs::write(dir.path().join("plain"), tzif(3600, "X")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("plain"), dir.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(zones.join("Nowhere"), dir.path().join("dangling")).unwrap();
        std::fs::write(zones.join("Broken"), b"not a zone").unwrap();
        std::os::unix::fs::symlink(zones.join("Broken"), dir.path().join("broken")).unwrap();
        for name in ["plain", "elsewhere", "dangling", "broken", "missing"] {
            assert!(linked_zone(&dir.path().join(name)).is_none(), "{name}");
        }
    }

    #[test]
    fn now_is_written_in_the_system_zone() {
        let before = now_ms();
        let text = now_local_iso();
        let after = now_ms();
        let read = parse_iso_ms(&text, &TimeZone::UTC).unwrap();
        assert!((before..=after).contains(&read), "{text}");
        let zone = system_time_zone();
        assert_eq!(text, local_iso(read, &zone));
    }

    #[test]
    fn the_system_zone_is_the_one_jiff_finds() {
        let ours = system_time_zone();
        let system = TimeZone::system();
        assert_eq!(ours.iana_name(), system.iana_name());
        for ms in [0, 1_789_464_705_392, 1_720_000_000_000] {
            assert_eq!(local_iso(ms, &ours), local_iso(ms, &system), "{ms}");
        }
    }

    #[test]
    fn stamps_strictly_increase() {
        let stamps: Vec<i64> = (0..1000).map(|_| next_stamp_ms()).collect();
        assert!(stamps.windows(2).all(|pair| pair[0] < pair[1]));
    }
}
