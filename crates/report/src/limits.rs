//! What binds a simulated run: every simulated drive names its busiest resource
//! (`device[].utilisation.busiest` and `busiest_utilisation`); this turns those into the words the
//! table, the HTML report and the study findings print ("limited by: fw core 0 (host+ftl), 95 %
//! busy").

use ssdlab_stats::device::{DriveCounters, Utilisation, WriteCacheCounters};

/// A resource busy this much of the time or more binds the rate: the closed loop cannot push it
/// further. Below it nothing is saturated and the latency of each I/O at the queue depth sets the
/// rate (Little's law: IOPS = QD / latency).
pub const SATURATED: f64 = 0.9;

/// The busiest resource of one simulated drive over the measurement window.
#[derive(Debug, Clone, PartialEq)]
pub struct Busiest {
    /// `die 3`, `channel 0`, `fw core 0 (host+ftl)`, `link`, `host cpu 0`, …
    pub name: String,
    /// Busy fraction of the window (0..=1).
    pub utilisation: f64,
}

/// The busiest resource of each drive in a result's device counters (`RunResult::device`), in
/// drive order; empty for real targets, and drives whose counters name no busiest resource
/// (results stored before the counters had one) are left out.
pub fn busiest(drives: &[DriveCounters]) -> Vec<Busiest> {
    drives
        .iter()
        .filter(|d| !d.utilisation.busiest.is_empty())
        .map(|d| {
            let u = &d.utilisation;
            Busiest {
                name: alike(u, &u.busiest, u.busiest_utilisation),
                utilisation: u.busiest_utilisation,
            }
        })
        .collect()
}

/// Resources within this (absolute utilisation) of the busiest count as equally busy.
const ALIKE: f64 = 0.02;

/// The busiest resource's name, or when others of its kind are as busy, how many: `all 16
/// dies`, `5 of 16 dies`, `all 8 channels` (the counters name only the first of them).
fn alike(u: &Utilisation, name: &str, top: f64) -> String {
    let (all, plural) = if name.starts_with("die ") {
        (&u.dies, "dies")
    } else if name.starts_with("channel ") {
        (&u.channels, "channels")
    } else {
        return name.to_string();
    };
    let n = all.iter().filter(|&&x| x >= top - ALIKE).count();
    match n {
        0 | 1 => name.to_string(),
        n if n == all.len() => format!("all {n} {plural}"),
        n => format!("{n} of {} {plural}", all.len()),
    }
}

fn pct(u: f64) -> String {
    format!("{:.0} %", u * 100.0)
}

/// What limits the drives, in words: `fw core 0 (host+ftl), 95 % busy`; for an array
/// `die 0 of each drive, 99-100 % busy` or `drive 1's die 0, 100 % busy (drive 0: link, 64 %)`;
/// when nothing is saturated `latency (nothing saturated; busiest: die 3, 42 % busy)`. `None`
/// without counters.
pub fn limit_phrase(drives: &[Busiest]) -> Option<String> {
    let top = drives
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.utilisation.total_cmp(&b.1.utilisation))?;
    let lo = drives.iter().map(|d| d.utilisation).fold(1.0, f64::min);
    let same = drives.iter().all(|d| d.name == top.1.name);
    let range = if pct(lo) == pct(top.1.utilisation) {
        pct(top.1.utilisation)
    } else {
        format!("{:.0}-{}", lo * 100.0, pct(top.1.utilisation))
    };
    let what = match drives.len() {
        1 => format!("{}, {} busy", top.1.name, pct(top.1.utilisation)),
        _ if same => format!("{} of each drive, {range} busy", top.1.name),
        _ => {
            let others: Vec<String> = drives
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != top.0)
                .map(|(i, d)| format!("drive {i}: {}, {}", d.name, pct(d.utilisation)))
                .collect();
            format!(
                "drive {}'s {}, {} busy ({})",
                top.0,
                top.1.name,
                pct(top.1.utilisation),
                others.join("; ")
            )
        }
    };
    Some(if top.1.utilisation >= SATURATED {
        what
    } else {
        format!("latency (nothing saturated; busiest: {what})")
    })
}

/// [`limit_phrase`] of a result's device counters.
pub fn limited_by(drives: &[DriveCounters]) -> Option<String> {
    limit_phrase(&busiest(drives))
}

/// What the host RAID driver's write-back cache did (`RunResult::adapter_cache`), in words:
/// `absorbed 512.0 MB of the writes, flushed 480.0 MB to the drives, peak 256.0 MB dirty, 12
/// writes waited for room (3.1 ms)`. `None` without a cache.
pub fn adapter_cache_phrase(cache: Option<&WriteCacheCounters>) -> Option<String> {
    let c = cache?;
    let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
    let mut s = format!(
        "absorbed {} of the writes, flushed {} to the drives, peak {} dirty",
        mb(c.absorbed_bytes),
        mb(c.flushed_bytes),
        mb(c.peak_dirty_bytes)
    );
    if c.read_hit_bytes > 0 {
        s.push_str(&format!(
            ", {} of reads served from it",
            mb(c.read_hit_bytes)
        ));
    }
    if c.full_waits > 0 {
        s.push_str(&format!(
            ", {} writes waited for room ({} in all)",
            c.full_waits,
            crate::table::fmt_lat(c.full_wait_ns as f64)
        ));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(name: &str, u: f64) -> DriveCounters {
        with(name, u, |_| {})
    }

    fn with(name: &str, u: f64, f: impl FnOnce(&mut Utilisation)) -> DriveCounters {
        let mut d = DriveCounters::default();
        d.utilisation.busiest = name.into();
        d.utilisation.busiest_utilisation = u;
        f(&mut d.utilisation);
        d
    }

    #[test]
    fn one_drive_names_its_busiest_resource() {
        let d = [drive("fw core 0 (host+ftl)", 0.9521)];
        assert_eq!(limited_by(&d).unwrap(), "fw core 0 (host+ftl), 95 % busy");
        let d = [drive("die 3", 0.42)];
        assert_eq!(
            limited_by(&d).unwrap(),
            "latency (nothing saturated; busiest: die 3, 42 % busy)"
        );
        // no counters, or counters without a busiest resource: nothing is claimed
        assert_eq!(limited_by(&[]), None);
        assert_eq!(limited_by(&[DriveCounters::default()]), None);
    }

    #[test]
    fn resources_as_busy_as_the_busiest_are_counted() {
        let d = [with("die 0", 1.0, |u| {
            u.dies = vec![1.0, 0.995, 0.99, 0.991]
        })];
        assert_eq!(limited_by(&d).unwrap(), "all 4 dies, 100 % busy");
        let d = [with("channel 1", 0.95, |u| {
            u.channels = vec![0.5, 0.95, 0.94, 0.2]
        })];
        assert_eq!(limited_by(&d).unwrap(), "2 of 4 channels, 95 % busy");
        let d = [with("die 2", 0.97, |u| u.dies = vec![0.5, 0.6, 0.97])];
        assert_eq!(limited_by(&d).unwrap(), "die 2, 97 % busy");
    }

    #[test]
    fn an_array_names_each_drive_or_what_they_share() {
        let d = [drive("die 0", 0.991), drive("die 0", 0.9999)];
        assert_eq!(
            limited_by(&d).unwrap(),
            "die 0 of each drive, 99-100 % busy"
        );
        let d = [drive("link", 0.64), drive("die 0", 0.999)];
        assert_eq!(
            limited_by(&d).unwrap(),
            "drive 1's die 0, 100 % busy (drive 0: link, 64 %)"
        );
        let d = [drive("die 2", 0.5), drive("die 2", 0.5)];
        assert_eq!(
            limited_by(&d).unwrap(),
            "latency (nothing saturated; busiest: die 2 of each drive, 50 % busy)"
        );
    }

    #[test]
    fn the_adapter_cache_in_words() {
        assert_eq!(adapter_cache_phrase(None), None);
        let c = WriteCacheCounters {
            absorbed_bytes: 512_000_000,
            flushed_bytes: 480_000_000,
            read_hit_bytes: 0,
            full_waits: 12,
            full_wait_ns: 3_100_000,
            peak_dirty_bytes: 256_000_000,
        };
        assert_eq!(
            adapter_cache_phrase(Some(&c)).unwrap(),
            "absorbed 512.0 MB of the writes, flushed 480.0 MB to the drives, peak 256.0 MB dirty, 12 writes waited for room (3.10 ms in all)"
        );
        let c = WriteCacheCounters {
            read_hit_bytes: 1_500_000,
            full_waits: 0,
            ..c
        };
        assert!(adapter_cache_phrase(Some(&c))
            .unwrap()
            .ends_with("dirty, 1.5 MB of reads served from it"));
    }
}
