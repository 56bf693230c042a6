//! Sizes and durations the way fio users write them.
//!
//! Sizes: a number with an optional binary unit — `512`, `4k`, `4K`, `4KiB`, `4kb`, `1m`, `8g`, `8GiB`,
//! `1t`. As in fio (`kb_base=1024`, its default) every multiplier is a power of 1024. Fractions are allowed
//! when they give a whole number of bytes (`1.5k` = 1536).
//!
//! Durations: `500ms`, `30s`, `3m`, `1h`, `250us`, `100ns`; a bare number means seconds (as in fio).

use thiserror::Error;

/// A size or duration that could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnitError {
    #[error("empty value")]
    Empty,
    #[error("'{0}' is negative")]
    Negative(String),
    #[error("'{0}' is not a number with a unit (examples: 512, 4k, 4KiB, 1m, 8GiB)")]
    BadSize(String),
    #[error("'{0}' has an unknown unit '{1}' (use k, m, g, t or KiB, MiB, GiB, TiB)")]
    UnknownSizeUnit(String, String),
    #[error("'{0}' is not a whole number of bytes")]
    Fractional(String),
    #[error("'{0}' is too large")]
    Overflow(String),
    #[error("'{0}' is not a duration (examples: 500ms, 30s, 3m, 1h)")]
    BadDuration(String),
    #[error("'{0}' has an unknown time unit '{1}' (use ns, us, ms, s, m, h)")]
    UnknownTimeUnit(String, String),
}

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == '_'))
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    (&s[..end], s[end..].trim())
}

/// Multiplies a decimal string (digits with an optional fraction) by an integer unit exactly.
fn scale(num: &str, unit: u128, original: &str, frac_err: UnitError) -> Result<u128, UnitError> {
    let num: String = num.chars().filter(|&c| c != '_').collect();
    let (int_part, frac_part) = match num.split_once('.') {
        Some((i, f)) => (i, f),
        None => (num.as_str(), ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(UnitError::BadSize(original.to_string()));
    }
    if frac_part.contains('.') || frac_part.len() > 18 || int_part.len() > 30 {
        return Err(UnitError::BadSize(original.to_string()));
    }
    let int: u128 = if int_part.is_empty() {
        0
    } else {
        int_part
            .parse()
            .map_err(|_| UnitError::BadSize(original.to_string()))?
    };
    let mut total = int
        .checked_mul(unit)
        .ok_or_else(|| UnitError::Overflow(original.to_string()))?;
    if !frac_part.is_empty() {
        let frac: u128 = frac_part
            .parse()
            .map_err(|_| UnitError::BadSize(original.to_string()))?;
        let denom = 10u128.pow(frac_part.len() as u32);
        let num = frac
            .checked_mul(unit)
            .ok_or_else(|| UnitError::Overflow(original.to_string()))?;
        if num % denom != 0 {
            return Err(frac_err);
        }
        total += num / denom;
    }
    Ok(total)
}

/// Parses a size in bytes. `0` is accepted here; callers that need a positive size check it.
pub fn parse_size(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty);
    }
    if s.starts_with('-') {
        return Err(UnitError::Negative(s.to_string()));
    }
    let s2 = s.strip_prefix('+').unwrap_or(s);
    let (num, unit) = split_number(s2);
    if num.is_empty() {
        return Err(UnitError::BadSize(s.to_string()));
    }
    let mult: u128 = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        "t" | "tb" | "tib" => 1 << 40,
        "p" | "pb" | "pib" => 1 << 50,
        _ => return Err(UnitError::UnknownSizeUnit(s.to_string(), unit.to_string())),
    };
    let v = scale(num, mult, s, UnitError::Fractional(s.to_string()))?;
    u64::try_from(v).map_err(|_| UnitError::Overflow(s.to_string()))
}

/// Parses a duration into nanoseconds. A bare number means seconds.
pub fn parse_duration(input: &str) -> Result<u64, UnitError> {
    let s = input.trim();
    if s.is_empty() {
        return Err(UnitError::Empty);
    }
    if s.starts_with('-') {
        return Err(UnitError::Negative(s.to_string()));
    }
    let (num, unit) = split_number(s);
    if num.is_empty() {
        return Err(UnitError::BadDuration(s.to_string()));
    }
    let mult: u128 = match unit.to_ascii_lowercase().as_str() {
        "ns" => 1,
        "us" | "µs" => 1_000,
        "ms" => 1_000_000,
        "" | "s" | "sec" | "secs" => 1_000_000_000,
        "m" | "min" | "mins" => 60_000_000_000,
        "h" | "hr" | "hour" | "hours" => 3_600_000_000_000,
        "d" | "day" | "days" => 86_400_000_000_000,
        _ => return Err(UnitError::UnknownTimeUnit(s.to_string(), unit.to_string())),
    };
    let v = scale(num, mult, s, UnitError::BadDuration(s.to_string())).map_err(|e| match e {
        UnitError::BadSize(x) => UnitError::BadDuration(x),
        other => other,
    })?;
    u64::try_from(v).map_err(|_| UnitError::Overflow(s.to_string()))
}

/// Formats a byte count with the largest binary unit that divides it exactly (`4 KiB`, `1.5 MiB` otherwise).
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(&str, u64); 5] = [
        ("PiB", 1 << 50),
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, mult) in UNITS {
        if bytes >= mult {
            if bytes.is_multiple_of(mult) {
                return format!("{} {name}", bytes / mult);
            }
            return format!("{:.2} {name}", bytes as f64 / mult as f64);
        }
    }
    format!("{bytes} B")
}

/// Formats nanoseconds as a short human duration (`1.5 s`, `250 ms`, `3 min`).
pub fn format_duration(ns: u64) -> String {
    if ns >= 60_000_000_000 && ns.is_multiple_of(60_000_000_000) {
        format!("{} min", ns / 60_000_000_000)
    } else if ns >= 1_000_000_000 {
        let s = ns as f64 / 1e9;
        if ns.is_multiple_of(1_000_000_000) {
            format!("{s:.0} s")
        } else {
            format!("{s:.3} s")
        }
    } else if ns >= 1_000_000 {
        format!("{:.3} ms", ns as f64 / 1e6)
    } else if ns >= 1_000 {
        format!("{:.3} us", ns as f64 / 1e3)
    } else {
        format!("{ns} ns")
    }
}

/// Levenshtein distance in characters (for "did you mean …?" answers).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_like_fio() {
        assert_eq!(parse_size("512").unwrap(), 512);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("4kb").unwrap(), 4096);
        assert_eq!(parse_size("1m").unwrap(), 1 << 20);
        assert_eq!(parse_size("8g").unwrap(), 8 << 30);
        assert_eq!(parse_size("8GiB").unwrap(), 8 << 30);
        assert_eq!(parse_size("1.5k").unwrap(), 1536);
        assert_eq!(parse_size("0").unwrap(), 0);
        assert_eq!(parse_size(" 16k ").unwrap(), 16384);
    }

    #[test]
    fn bad_sizes() {
        assert!(matches!(
            parse_size("4q"),
            Err(UnitError::UnknownSizeUnit(..))
        ));
        assert!(matches!(parse_size("-4k"), Err(UnitError::Negative(_))));
        assert!(matches!(parse_size(""), Err(UnitError::Empty)));
        assert!(matches!(parse_size("k"), Err(UnitError::BadSize(_))));
        assert!(matches!(parse_size("1.1"), Err(UnitError::Fractional(_))));
        assert!(matches!(
            parse_size("99999999p"),
            Err(UnitError::Overflow(_))
        ));
        assert!(matches!(parse_size("1..2k"), Err(UnitError::BadSize(_))));
        let msg = parse_size("4q").unwrap_err().to_string();
        assert!(msg.contains("4q") && msg.contains("unknown unit"), "{msg}");
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("500ms").unwrap(), 500_000_000);
        assert_eq!(parse_duration("30s").unwrap(), 30_000_000_000);
        assert_eq!(parse_duration("3m").unwrap(), 180_000_000_000);
        assert_eq!(parse_duration("10").unwrap(), 10_000_000_000);
        assert_eq!(parse_duration("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration("250us").unwrap(), 250_000);
        assert_eq!(parse_duration("1h").unwrap(), 3_600_000_000_000);
        assert!(parse_duration("3x").is_err());
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(8 << 30), "8 GiB");
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(1536), "1.50 KiB");
        assert_eq!(format_duration(180_000_000_000), "3 min");
        assert_eq!(format_duration(500_000_000), "500.000 ms");
    }

    proptest::proptest! {
        #[test]
        fn size_roundtrip(n in 0u64..1_000_000, unit in 0usize..4) {
            let (suffix, mult) = [("", 1u64), ("k", 1024), ("m", 1 << 20), ("GiB", 1 << 30)][unit];
            proptest::prop_assert_eq!(parse_size(&format!("{n}{suffix}")).unwrap(), n * mult);
        }
    }
}
