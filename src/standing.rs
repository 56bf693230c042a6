//! How far a study's drive models can be trusted: their standing against the built-in findings
//! of the two classic reviews (`data/published/seed-findings.toml`, built into the binary).
//! A study simulates the findings that name its presets, at its own time per point, and keeps
//! the result in its store (the `meta` table), so that `ssdlab report` says it too; a report of
//! a sweep that was not checked says how to check it.

use ssdlab_calib::data::{builtin_findings, BUILTIN_FINDINGS_PATH};
use ssdlab_calib::predict::PredictOptions;
use ssdlab_calib::validate::{validate, Validation};
use ssdlab_store::Store;
use ssdlab_sweep::spec::{PointTarget, SweepSpec};

/// The built-in presets of a sweep's simulated targets that the built-in findings name (targets
/// with overrides or preset files are other models: the findings say nothing about them).
pub fn covered_presets(spec: &SweepSpec) -> Vec<String> {
    let named = builtin_findings().drives();
    let mut out: Vec<String> = Vec::new();
    for t in &spec.targets {
        if let PointTarget::Sim {
            preset, overrides, ..
        } = &t.kind
        {
            if overrides.is_empty()
                && ssdlab_engine::preset_file(preset).is_none()
                && named.contains(preset)
                && !out.contains(preset)
            {
                out.push(preset.clone());
            }
        }
    }
    out
}

/// The measured time per point of a sweep (its first workload's; None without a time limit).
pub fn time_per_point(spec: &SweepSpec) -> Option<u64> {
    spec.workloads.first().and_then(|w| w.spec.stop.time_ns)
}

/// A time as the command line takes it: `200ms`, `1s`, `1.5s`.
fn short_time(ns: u64) -> String {
    if ns < 1_000_000_000 {
        format!("{}ms", ns as f64 / 1e6)
    } else {
        format!("{}s", ns as f64 / 1e9)
    }
}

/// The key of a sweep's standing in its store's `meta` table.
fn key(sweep: &str) -> String {
    format!("standing/{sweep}")
}

/// What is stored: the time the findings were simulated at and the caveat.
#[derive(serde::Serialize, serde::Deserialize)]
struct Stored {
    max_time_ns: Option<u64>,
    presets: Vec<String>,
    caveat: String,
}

/// The caveat of a validation: how many findings hold on the models, at what time per workload,
/// and which do not (up to `SHOWN`, with the simulated ratio).
pub fn caveat(v: &Validation, presets: &[String], max_time_ns: Option<u64>) -> String {
    const SHOWN: usize = 4;
    let claims = v.claims.len();
    let held = v.claims.iter().filter(|c| c.pass).count();
    // published figures stated as bounds (Review B's "over 160 MB/s")
    let figs: Vec<_> = v.figures.iter().filter(|f| f.error.is_some()).collect();
    let figs_ok = figs
        .iter()
        .filter(|f| f.error.is_some_and(|e| e.abs() <= 0.15))
        .count();
    let total = claims + figs.len();
    let ok = held + figs_ok;
    let models = match presets {
        [p] => format!("the {p} model"),
        _ => format!("the models ({})", presets.join(", ")),
    };
    let time = max_time_ns
        .map(|t| format!(", simulated at {} per workload", short_time(t)))
        .unwrap_or_default();
    let mut s = format!(
        "caveat: {models} reproduces {ok} of the {total} built-in findings of the classic reviews that name it{time} (`ssdlab validate {} --against {BUILTIN_FINDINGS_PATH}{}`)",
        presets.join(" "),
        max_time_ns
            .map(|t| format!(" --max-time {}", short_time(t)))
            .unwrap_or_default()
    );
    let missed: Vec<String> = v
        .claims
        .iter()
        .filter(|c| !c.pass)
        .map(|c| match c.ratio {
            Some(r) => format!("{} (simulated a/b {r:.2})", c.text),
            None => format!(
                "{} ({})",
                c.text,
                c.failure.as_deref().unwrap_or("not simulated")
            ),
        })
        .collect();
    if !missed.is_empty() {
        s.push_str(&format!("; it misses {}", missed.len()));
        let shown: Vec<&str> = missed.iter().take(SHOWN).map(String::as_str).collect();
        s.push_str(&format!(": {}", shown.join("; ")));
        if missed.len() > SHOWN {
            s.push_str(&format!("; and {} more", missed.len() - SHOWN));
        }
        s.push_str(". Where a finding above rests on what the model misses, it is the model's answer, not the drive's");
    } else {
        s.push_str(". The findings above are still the model's answers, not measurements");
    }
    s + "."
}

/// Simulates the built-in findings that name `presets`, at most `max_time_ns` per workload.
pub fn check(presets: &[String], max_time_ns: Option<u64>) -> Option<Validation> {
    if presets.is_empty() {
        return None;
    }
    let data = builtin_findings();
    let figures: Vec<_> = data
        .figures
        .iter()
        .filter(|f| presets.contains(&f.case.drive))
        .collect();
    // a claim that compares two drives counts when the study has both
    let claims: Vec<_> = data
        .claims
        .iter()
        .filter(|c| c.drives().iter().all(|d| presets.iter().any(|p| p == d)))
        .collect();
    if figures.is_empty() && claims.is_empty() {
        return None;
    }
    let opts = PredictOptions {
        max_time_ns,
        stop: Some(crate::signals::stop_flag()),
        memory_budget: crate::figures::memory_budget(None),
        ..Default::default()
    };
    let v = validate(
        &figures,
        &claims,
        |n| ssdlab_ssdsim::load_preset(n).ok(),
        &opts,
    );
    (!opts.stopped()).then_some(v)
}

/// After a study's sweep: checks its models against the built-in findings (unless its store
/// already holds the check at this time per point) and stores the caveat.
pub fn check_study(db: &std::path::Path, spec: &SweepSpec) -> anyhow::Result<()> {
    let presets = covered_presets(spec);
    if presets.is_empty() {
        return Ok(());
    }
    let time = time_per_point(spec);
    let mut store = Store::open_existing(db, false)?;
    if let Some(s) = stored(&store, &spec.name) {
        if s.max_time_ns == time && s.presets == presets {
            return Ok(());
        }
    }
    crate::output::note(&format!(
        "checking {} against the built-in findings of the classic reviews …",
        presets.join(", ")
    ));
    let Some(v) = check(&presets, time) else {
        return Ok(());
    };
    let s = Stored {
        max_time_ns: time,
        caveat: caveat(&v, &presets, time),
        presets,
    };
    store.set_meta(&key(&spec.name), &serde_json::to_string(&s)?)?;
    Ok(())
}

fn stored(store: &Store, sweep: &str) -> Option<Stored> {
    store
        .meta(&key(sweep))
        .ok()
        .flatten()
        .and_then(|t| serde_json::from_str(&t).ok())
}

/// The caveat `ssdlab report` gives a sweep: the stored one, or for a sweep of presets the
/// findings name that was not checked, how to check it.
pub fn report_caveat(store: &Store, sweep: &str, spec: Option<&SweepSpec>) -> Option<String> {
    let presets = spec.map(covered_presets).unwrap_or_default();
    if let Some(s) = stored(store, sweep) {
        if s.presets == presets && spec.map(time_per_point) == Some(s.max_time_ns) {
            return Some(s.caveat);
        }
    }
    if presets.is_empty() {
        return None;
    }
    Some(format!(
        "caveat: the built-in findings of the classic reviews name {}, and the model was not checked against them for this sweep (`ssdlab validate {} --against {BUILTIN_FINDINGS_PATH}` checks it; `ssdlab study` does it itself).",
        presets.join(", "),
        presets.join(" ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ssdlab_calib::validate::ClaimRow;

    fn claim(text: &str, ratio: f64, pass: bool) -> ClaimRow {
        ClaimRow {
            origin: "seed-findings.toml#claim1".into(),
            text: text.into(),
            expected: "a/b = 1.30 ± 15 %".into(),
            ratio: Some(ratio),
            pass,
            failure: None,
        }
    }

    #[test]
    fn the_caveat_counts_what_holds_and_names_what_does_not() {
        let v = Validation {
            figures: vec![],
            families: vec![],
            usages: vec![],
            claims: vec![
                claim("A: +30 % at QD 4", 1.04, false),
                claim("A: +0 % at QD 1", 1.0, true),
            ],
        };
        let c = caveat(&v, &["vertex450-128g".into()], Some(200_000_000));
        assert!(
            c.starts_with("caveat: the vertex450-128g model reproduces 1 of the 2 built-in findings of the classic reviews that name it, simulated at 200ms per workload (`ssdlab validate vertex450-128g --against data/published/seed-findings.toml --max-time 200ms`); it misses 1: A: +30 % at QD 4 (simulated a/b 1.04)."),
            "{c}"
        );
        let many = Validation {
            claims: (0..6)
                .map(|i| claim(&format!("c{i}"), 0.5, false))
                .collect(),
            ..v
        };
        let c = caveat(&many, &["a".into(), "b".into()], None);
        assert!(c.contains("the models (a, b) reproduces 0 of the 6"), "{c}");
        assert!(c.contains("c3 (simulated a/b 0.50); and 2 more."), "{c}");
    }

    #[test]
    fn only_unmodified_built_in_presets_the_findings_name_are_covered() {
        let text = "name = \"t\"\ntime = \"1s\"\nqd = [1]\nworkloads = [\"4k-randread\"]\n\n\
            [[target]]\nlabel = \"one\"\nsim = \"vertex450-128g\"\nbaseline = true\n\n\
            [[target]]\nlabel = \"two\"\nsim = \"vertex450-128g\"\ndrives = 2\nstripes = [\"8k\"]\n\n\
            [[target]]\nlabel = \"other\"\nsim = \"samsung-980-1t\"\n";
        let spec = SweepSpec::parse(text, std::path::Path::new(".")).unwrap();
        assert_eq!(covered_presets(&spec), ["vertex450-128g"]);
        assert_eq!(time_per_point(&spec), Some(1_000_000_000));
    }
}
