//! What binds a simulated run: every simulated drive names its busiest resource
//! (`device[].utilisation.busiest` and `busiest_utilisation`); this turns those into the words the
//! table, the HTML report and the study findings print ("limited by: fw core 0 (host+ftl), 95 %
//! busy").

use serde_json::Value;

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
/// drive order; empty when the counters carry none (real targets, older results).
pub fn busiest(device: Option<&Value>) -> Vec<Busiest> {
    device
        .and_then(Value::as_array)
        .map(|drives| {
            drives
                .iter()
                .filter_map(|d| {
                    let u = d.get("utilisation")?;
                    let name = u.get("busiest")?.as_str()?;
                    let utilisation = u.get("busiest_utilisation")?.as_f64()?;
                    Some(Busiest {
                        name: alike(u, name, utilisation),
                        utilisation,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Resources within this (absolute utilisation) of the busiest count as equally busy.
const ALIKE: f64 = 0.02;

/// The busiest resource's name, or when others of its kind are as busy, how many: `all 16
/// dies`, `5 of 16 dies`, `all 8 channels` (the counters name only the first of them).
fn alike(u: &Value, name: &str, top: f64) -> String {
    let (key, plural) = if name.starts_with("die ") {
        ("dies", "dies")
    } else if name.starts_with("channel ") {
        ("channels", "channels")
    } else {
        return name.to_string();
    };
    let all: Vec<f64> = u
        .get(key)
        .and_then(Value::as_array)
        .map(|v| v.iter().filter_map(Value::as_f64).collect())
        .unwrap_or_default();
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
pub fn limited_by(device: Option<&Value>) -> Option<String> {
    limit_phrase(&busiest(device))
}

/// What the host RAID driver's write-back cache did (`RunResult::adapter_cache`), in words:
/// `absorbed 512.0 MB of the writes, flushed 480.0 MB to the drives, peak 256.0 MB dirty, 12
/// writes waited for room (3.1 ms)`. `None` without a cache.
pub fn adapter_cache_phrase(cache: Option<&Value>) -> Option<String> {
    let c = cache?;
    let n = |k: &str| c.get(k).and_then(Value::as_f64).unwrap_or(0.0);
    let mb = |k: &str| format!("{:.1} MB", n(k) / 1e6);
    let mut s = format!(
        "absorbed {} of the writes, flushed {} to the drives, peak {} dirty",
        mb("absorbed_bytes"),
        mb("flushed_bytes"),
        mb("peak_dirty_bytes")
    );
    if n("read_hit_bytes") > 0.0 {
        s.push_str(&format!(
            ", {} of reads served from it",
            mb("read_hit_bytes")
        ));
    }
    if n("full_waits") > 0.0 {
        s.push_str(&format!(
            ", {:.0} writes waited for room ({} in all)",
            n("full_waits"),
            crate::table::fmt_lat(n("full_wait_ns"))
        ));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drive(name: &str, u: f64) -> Value {
        serde_json::json!({ "utilisation": { "busiest": name, "busiest_utilisation": u } })
    }

    #[test]
    fn one_drive_names_its_busiest_resource() {
        let d = Value::Array(vec![drive("fw core 0 (host+ftl)", 0.9521)]);
        assert_eq!(
            limited_by(Some(&d)).unwrap(),
            "fw core 0 (host+ftl), 95 % busy"
        );
        let d = Value::Array(vec![drive("die 3", 0.42)]);
        assert_eq!(
            limited_by(Some(&d)).unwrap(),
            "latency (nothing saturated; busiest: die 3, 42 % busy)"
        );
        // no counters, or counters without utilisation: nothing is claimed
        assert_eq!(limited_by(None), None);
        assert_eq!(limited_by(Some(&serde_json::json!([{ "x": 1 }]))), None);
    }

    #[test]
    fn resources_as_busy_as_the_busiest_are_counted() {
        let d = serde_json::json!([{ "utilisation": { "busiest": "die 0",
            "busiest_utilisation": 1.0, "dies": [1.0, 0.995, 0.99, 0.991] } }]);
        assert_eq!(limited_by(Some(&d)).unwrap(), "all 4 dies, 100 % busy");
        let d = serde_json::json!([{ "utilisation": { "busiest": "channel 1",
            "busiest_utilisation": 0.95, "channels": [0.5, 0.95, 0.94, 0.2] } }]);
        assert_eq!(limited_by(Some(&d)).unwrap(), "2 of 4 channels, 95 % busy");
        let d = serde_json::json!([{ "utilisation": { "busiest": "die 2",
            "busiest_utilisation": 0.97, "dies": [0.5, 0.6, 0.97] } }]);
        assert_eq!(limited_by(Some(&d)).unwrap(), "die 2, 97 % busy");
    }

    #[test]
    fn an_array_names_each_drive_or_what_they_share() {
        let d = Value::Array(vec![drive("die 0", 0.991), drive("die 0", 0.9999)]);
        assert_eq!(
            limited_by(Some(&d)).unwrap(),
            "die 0 of each drive, 99-100 % busy"
        );
        let d = Value::Array(vec![drive("link", 0.64), drive("die 0", 0.999)]);
        assert_eq!(
            limited_by(Some(&d)).unwrap(),
            "drive 1's die 0, 100 % busy (drive 0: link, 64 %)"
        );
        let d = Value::Array(vec![drive("die 2", 0.5), drive("die 2", 0.5)]);
        assert_eq!(
            limited_by(Some(&d)).unwrap(),
            "latency (nothing saturated; busiest: die 2 of each drive, 50 % busy)"
        );
    }

    #[test]
    fn the_adapter_cache_in_words() {
        assert_eq!(adapter_cache_phrase(None), None);
        let c = serde_json::json!({ "absorbed_bytes": 512e6, "flushed_bytes": 480e6,
            "read_hit_bytes": 0, "full_waits": 12, "full_wait_ns": 3.1e6, "peak_dirty_bytes": 256e6 });
        assert_eq!(
            adapter_cache_phrase(Some(&c)).unwrap(),
            "absorbed 512.0 MB of the writes, flushed 480.0 MB to the drives, peak 256.0 MB dirty, 12 writes waited for room (3.10 ms in all)"
        );
    }
}
