//! RFC 3339 timestamps from a clock the engine is given.

use std::time::{SystemTime, UNIX_EPOCH};

/// Where the engine reads the time: the system clock, or a fixed one in tests.
pub trait Clock: Send + Sync {
    fn now(&self) -> SystemTime;
}

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> SystemTime {
        SystemTime::now()
    }
}

/// Formats a time as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn rfc3339(time: SystemTime) -> String {
    let secs = time.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()) as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Reads a time `rfc3339` wrote (`YYYY-MM-DDTHH:MM:SSZ`, any number of
/// year digits); None for anything else or a time before 1970.
pub fn parse_rfc3339(text: &str) -> Option<SystemTime> {
    let (date, time) = text.trim().strip_suffix('Z')?.split_once('T')?;
    let mut date = date.rsplitn(3, '-');
    let (day, month, year) = (date.next()?, date.next()?, date.next()?);
    let number = |s: &str| -> Option<i64> {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let (year, month, day) = (number(year)?, number(month)?, number(day)?);
    let mut time = time.split(':');
    let (h, m, sec) = (
        number(time.next()?)?,
        number(time.next()?)?,
        number(time.next()?)?,
    );
    if time.next().is_some()
        || !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || h > 23
        || m > 59
        || sec > 60
    {
        return None;
    }
    // Days since 1970-01-01 from a civil date (H. Hinnant's algorithm).
    let y = year - i64::from(month <= 2);
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era.checked_mul(146_097)?.checked_add(doe - 719_468)?;
    let secs = days
        .checked_mul(86_400)?
        .checked_add(h * 3600 + m * 60 + sec)?;
    let secs = u64::try_from(secs).ok()?;
    UNIX_EPOCH.checked_add(std::time::Duration::from_secs(secs))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00Z"
        );
        assert_eq!(
            rfc3339(UNIX_EPOCH + Duration::from_secs(1_795_000_000)),
            "2026-11-18T11:06:40Z"
        );
    }

    #[test]
    fn times_read_back_as_written() {
        for secs in [
            0,
            951_782_400,
            1_795_000_000,
            86_399,
            253_402_300_799,
            261_000_000_000,
        ] {
            let time = UNIX_EPOCH + Duration::from_secs(secs);
            assert_eq!(parse_rfc3339(&rfc3339(time)), Some(time), "{secs}");
        }
        // Year 10240 is later than 2026, though its text sorts before it.
        let far = parse_rfc3339("10240-01-01T00:00:00Z").unwrap();
        assert!(far > parse_rfc3339("2026-11-27T00:00:00Z").unwrap());
        for bad in [
            "",
            "2026-13-01T00:00:00Z",
            "2026-01-01 00:00:00",
            "x-1-1T0:0:0Z",
        ] {
            assert_eq!(parse_rfc3339(bad), None, "{bad}");
        }
    }
}
