//! CSV export of sweep points: one row per point (each repeat its own row).

use serde::Serialize;
use std::io::Write;

/// One CSV row. Column names are the field names; empty cells mean "not applicable".
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PointCsvRow {
    pub sweep: String,
    pub target: String,
    pub drives: u32,
    /// Stripe (chunk) size in bytes; empty for single-drive targets.
    pub stripe_bytes: Option<u64>,
    pub workload: String,
    pub qd: u32,
    /// 0-based repeat index.
    pub repeat: u32,
    pub iops: f64,
    /// Megabytes (10^6 bytes) per second.
    pub mb_s: f64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
    /// Gain in % of this point's IOPS over the baseline's mean IOPS (same workload and QD);
    /// empty for baseline points and when there is no baseline.
    pub gain_pct: Option<f64>,
}

/// The header line's columns, in order.
pub const CSV_COLUMNS: [&str; 12] = [
    "sweep",
    "target",
    "drives",
    "stripe_bytes",
    "workload",
    "qd",
    "repeat",
    "iops",
    "mb_s",
    "lat_mean_us",
    "lat_p99_us",
    "gain_pct",
];

fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

/// Writes a header and one row per point.
pub fn write_points_csv<W: Write>(w: W, rows: &[PointCsvRow]) -> Result<(), csv::Error> {
    let mut wr = csv::Writer::from_writer(w);
    if rows.is_empty() {
        wr.write_record(CSV_COLUMNS)?;
    }
    for r in rows {
        let mut r = r.clone();
        r.iops = round(r.iops, 1);
        r.mb_s = round(r.mb_s, 3);
        r.lat_mean_us = round(r.lat_mean_us, 3);
        r.lat_p99_us = round(r.lat_p99_us, 3);
        r.gain_pct = r.gain_pct.map(|g| round(g, 2));
        wr.serialize(r)?;
    }
    wr.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_and_rows() {
        let rows = vec![
            PointCsvRow {
                sweep: "s".into(),
                target: "sim:a".into(),
                drives: 1,
                stripe_bytes: None,
                workload: "4k-randread".into(),
                qd: 1,
                repeat: 0,
                iops: 1000.04,
                mb_s: 4.096,
                lat_mean_us: 999.9999,
                lat_p99_us: 1500.0,
                gain_pct: None,
            },
            PointCsvRow {
                sweep: "s".into(),
                target: "sim:a x2, \"fast\"".into(),
                drives: 2,
                stripe_bytes: Some(16384),
                workload: "4k-randread".into(),
                qd: 1,
                repeat: 0,
                iops: 1500.0,
                mb_s: 6.144,
                lat_mean_us: 666.0,
                lat_p99_us: 1000.0,
                gain_pct: Some(50.0),
            },
        ];
        let mut out = Vec::new();
        write_points_csv(&mut out, &rows).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], CSV_COLUMNS.join(","));
        assert_eq!(
            lines[1],
            "s,sim:a,1,,4k-randread,1,0,1000.0,4.096,1000.0,1500.0,"
        );
        assert_eq!(
            lines[2],
            "s,\"sim:a x2, \"\"fast\"\"\",2,16384,4k-randread,1,0,1500.0,6.144,666.0,1000.0,50.0"
        );
        let mut out = Vec::new();
        write_points_csv(&mut out, &[]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap().trim(),
            CSV_COLUMNS.join(",")
        );
    }
}
