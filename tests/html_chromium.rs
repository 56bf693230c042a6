//! Headless Chromium loads each kind of HTML report — the stripe study (with repeats, so its
//! charts carry error bars), the alignment study and a single run — takes a screenshot of it and
//! reports what it laid out: the number of charts, the axis titles, the error bars drawn, and
//! whether any two legend texts of a chart overlap (their boxes as the browser measured them,
//! through a probing copy of the page; the report itself has no script).
//!
//! Needs Debian's `chromium` (`.ci/run` installs it); without it the test prints
//! "skipping: <reason>", and fails instead when SSDLAB_REQUIRE_PRIVILEGED_TESTS=1 (as CI sets
//! it). The screenshots are kept under the target directory (`tmp/html-screenshots/`) to look at.

use assert_cmd::Command;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn ssdlab(dir: &Path, args: &[&str]) {
    let o = Command::cargo_bin("ssdlab")
        .unwrap()
        .current_dir(dir)
        .env("SSDLAB_NO_STATUS", "1")
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn chromium() -> Option<PathBuf> {
    let dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    ["chromium", "chromium-browser", "google-chrome"]
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

fn browser(bin: &Path, profile: &Path) -> std::process::Command {
    let mut c = std::process::Command::new(bin);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--hide-scrollbars",
        "--force-device-scale-factor=1",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// What the browser measured in the page: charts, axis titles, overlapping legend texts.
const PROBE: &str = r#"<script>
const out = {svgs: document.querySelectorAll('svg').length, charts: [], overlaps: [],
  errorBars: [...document.querySelectorAll('path.error-bar')].filter(p => p.getBBox().height > 0).length};
for (const svg of document.querySelectorAll('svg.chart')) {
  const title = svg.querySelector('.chart-title').textContent;
  const axes = [...svg.querySelectorAll('.axis-title')].map(t => t.textContent);
  const boxes = [...svg.querySelectorAll('.legend .legend-label')].map(t => [t.textContent, t.getBoundingClientRect()]);
  for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i][1], b = boxes[j][1];
    if (a.left < b.right - 0.5 && b.left < a.right - 0.5 && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5)
      out.overlaps.push(title + ': ' + boxes[i][0] + ' / ' + boxes[j][0]);
  }
  const r = svg.getBoundingClientRect();
  out.charts.push({title, axes, legend: boxes.length, width: r.width, height: r.height});
}
const pre = document.createElement('pre');
pre.id = 'probe';
pre.textContent = JSON.stringify(out);
document.body.appendChild(pre);
</script>"#;

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

/// Loads `html` in the browser (a copy with the probe), returns what it measured, and takes a
/// screenshot of the report itself into `shot`.
fn measure(bin: &Path, work: &Path, html: &Path, shot: &Path) -> Value {
    let page = std::fs::read_to_string(html).unwrap();
    assert!(!page.contains("<script"), "the report has no script");
    let probe = work.join("probe.html");
    std::fs::write(&probe, page.replace("</body>", &format!("{PROBE}</body>"))).unwrap();
    let o = browser(bin, &work.join("profile"))
        .args(["--dump-dom", "--virtual-time-budget=5000"])
        .arg(format!("file://{}", probe.display()))
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&o.stdout);
    let start = dom
        .find("<pre id=\"probe\">")
        .unwrap_or_else(|| panic!("no probe result: {}", String::from_utf8_lossy(&o.stderr)))
        + "<pre id=\"probe\">".len();
    let end = start + dom[start..].find("</pre>").unwrap();
    let v: Value = serde_json::from_str(&unescape(&dom[start..end])).unwrap();
    let o = browser(bin, &work.join("profile"))
        .arg("--window-size=1100,2600")
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("file://{}", html.display()))
        .output()
        .unwrap();
    let png = std::fs::read(shot).unwrap_or_else(|e| {
        panic!(
            "no screenshot {}: {e}: {}",
            shot.display(),
            String::from_utf8_lossy(&o.stderr)
        )
    });
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 20_000,
        "{}",
        shot.display()
    );
    v
}

fn check(v: &Value, svgs: usize, axis_titles: &[&str]) {
    assert_eq!(v["svgs"].as_u64(), Some(svgs as u64), "{v}");
    assert_eq!(
        v["overlaps"].as_array().unwrap().len(),
        0,
        "overlapping legend texts: {v}"
    );
    let charts = v["charts"].as_array().unwrap();
    assert_eq!(charts.len(), svgs, "{v}");
    for c in charts {
        assert_eq!(
            c["axes"].as_array().unwrap().len(),
            2,
            "two axis titles: {c}"
        );
        assert!(c["legend"].as_u64().unwrap() >= 1, "a legend: {c}");
        // Readable at 100 %: drawn at its natural width in a 1100 px window.
        assert!(c["width"].as_f64().unwrap() >= 700.0, "{c}");
    }
    let all: Vec<String> = charts
        .iter()
        .flat_map(|c| c["axes"].as_array().unwrap().iter())
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    for t in axis_titles {
        assert!(all.iter().any(|a| a == t), "axis title {t:?} in {all:?}");
    }
}

#[test]
fn chromium_renders_every_kind_of_report() {
    let Some(bin) = chromium() else {
        ssdlab_testkit::skip("chromium is missing (apt-get install chromium)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let shots = Path::new(env!("CARGO_TARGET_TMPDIR")).join("html-screenshots");
    std::fs::create_dir_all(&shots).unwrap();

    ssdlab(
        d,
        &[
            "study",
            "stripe",
            "--preset",
            "x25e-64g",
            "--qd",
            "1,2,4",
            "--time",
            "100ms",
            // two repeats, so the charts carry error bars
            "--repeats",
            "2",
            "--html",
            "stripe.html",
        ],
    );
    let v = measure(
        &bin,
        d,
        &d.join("stripe.html"),
        &shots.join("stripe-study.png"),
    );
    // Per workload: throughput, gain heat map, latency vs QD, the best stripe's histogram.
    check(
        &v,
        16,
        &[
            "queue depth (outstanding I/Os, log2 scale)",
            "IOPS (I/Os per second)",
            "throughput (MB/s, 10^6 bytes)",
            "stripe",
            "total latency (µs, log scale)",
            "I/Os (% of all)",
        ],
    );
    // The error bars of the repeats are laid out (drawn with a height).
    assert!(v["errorBars"].as_u64().unwrap() > 0, "{v}");

    ssdlab(
        d,
        &[
            "study",
            "alignment",
            "--time",
            "200ms",
            "--html",
            "align.html",
        ],
    );
    let v = measure(
        &bin,
        d,
        &d.join("align.html"),
        &shots.join("alignment-study.png"),
    );
    check(&v, 1, &["throughput (MB/s, 10^6 bytes)"]);
    assert_eq!(v["errorBars"].as_u64(), Some(0), "one repeat: {v}");

    ssdlab(
        d,
        &[
            "run",
            "--sim",
            "x25m-g2-160g",
            "--rw",
            "randrw",
            "--qd",
            "8",
            "--time",
            "3s",
            "--output",
            "run.txt",
            "--html",
            "run.html",
        ],
    );
    let v = measure(&bin, d, &d.join("run.html"), &shots.join("single-run.png"));
    check(
        &v,
        5,
        &[
            "IOPS (I/Os per second)",
            "bandwidth (MB/s, 10^6 bytes)",
            "latency (µs, log scale)",
            "I/Os (% of all)",
        ],
    );
    eprintln!("screenshots: {}", shots.display());
}
