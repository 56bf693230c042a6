//! Writing a fitted preset: the base preset's own text with the fitted values put in place, each
//! marked `# fitted: …` with the fit error, and the fit recorded in `sources` — so the file keeps
//! every comment and citation of the preset it came from.

use crate::fit::FitResult;
use ssdlab_ssdsim::{Calibration, DriveConfig};
use toml_edit::{value, Array, DocumentMut, Item, Table, Value};

fn typed(s: &str) -> Value {
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    if let Ok(f) = s.parse::<f64>() {
        return Value::from(f);
    }
    match s {
        "true" => Value::from(true),
        "false" => Value::from(false),
        _ => Value::from(s),
    }
}

/// Sets the dotted `key` of `doc` to `v`, with `comment` after it.
fn put(doc: &mut DocumentMut, key: &str, mut v: Value, comment: String) -> Result<(), String> {
    let (section, field) = key
        .rsplit_once('.')
        .ok_or_else(|| format!("{key}: not a section.field key"))?;
    let mut table: &mut Table = doc.as_table_mut();
    for part in section.split('.') {
        if !table.contains_key(part) {
            table.insert(part, Item::Table(Table::new()));
        }
        table = table
            .get_mut(part)
            .and_then(Item::as_table_mut)
            .ok_or_else(|| format!("{key}: {part} is not a table in the base preset"))?;
    }
    v.decor_mut().set_suffix(comment);
    table.insert(field, Item::Value(v));
    Ok(())
}

/// The dotted keys whose values differ between `a` and `b`, with both values.
fn changed_leaves(
    prefix: &str,
    a: &toml::Value,
    b: &toml::Value,
    out: &mut Vec<(String, Option<toml::Value>, toml::Value)>,
) {
    match (a, b) {
        (toml::Value::Table(ta), toml::Value::Table(tb)) => {
            for (k, vb) in tb {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                match ta.get(k) {
                    Some(va) => changed_leaves(&key, va, vb, out),
                    None => out.push((key, None, vb.clone())),
                }
            }
        }
        _ if a != b => out.push((prefix.to_string(), Some(a.clone()), b.clone())),
        _ => {}
    }
}

/// The text of the fitted preset named `name`, from the base preset's text. `provenance` is added
/// to `sources` (what was fitted to what, and when).
pub fn fitted_toml(
    base_text: &str,
    fit: &FitResult,
    name: &str,
    provenance: &str,
    calibration: &Calibration,
) -> Result<String, String> {
    let mut doc: DocumentMut = base_text
        .parse()
        .map_err(|e: toml_edit::TomlError| format!("the base preset: {e}"))?;
    let old_desc = doc
        .get("description")
        .and_then(Item::as_str)
        .unwrap_or_default()
        .to_string();
    let base_name = doc
        .get("name")
        .and_then(Item::as_str)
        .unwrap_or_default()
        .to_string();
    doc["name"] = value(name);
    doc["description"] = value(format!("fitted from {base_name}: {old_desc}"));
    match doc.get_mut("sources").and_then(Item::as_array_mut) {
        Some(a) => a.push(provenance),
        None => {
            let mut a = Array::new();
            a.push(provenance);
            doc["sources"] = value(a);
        }
    }
    let err = format!(
        "rms error {:.1} % -> {:.1} % over {} figures",
        fit.error_before * 100.0,
        fit.error_after * 100.0,
        fit.figures
    );
    for p in &fit.params {
        let comment = if p.constrained {
            format!(" # fitted: {} -> {} ({err})", p.before, p.after)
        } else if p.after != p.before {
            format!(
                " # not constrained by the fitted figures: {} -> {}, the nearest value of the range {}",
                p.before, p.after, p.range
            )
        } else {
            format!(
                " # not constrained by the fitted figures: kept {}",
                p.before
            )
        };
        put(&mut doc, &p.key, typed(&p.after), comment)?;
    }
    // values the fitted ones moved with them (the user capacity and the SLC cache follow the raw
    // NAND capacity when a fit changes its geometry): written too, or the file would describe
    // another drive, or none
    let base =
        DriveConfig::from_toml_str(base_text).map_err(|e| format!("the base preset: {e}"))?;
    let (was, now) = (
        toml::Value::try_from(&base).map_err(|e| e.to_string())?,
        toml::Value::try_from(&fit.config).map_err(|e| e.to_string())?,
    );
    let mut moved = Vec::new();
    changed_leaves("", &was, &now, &mut moved);
    for (key, old, new) in moved {
        let top = key.split('.').next().unwrap_or_default();
        if fit.params.iter().any(|p| p.key == key)
            || ["name", "description", "sources", "calibration"].contains(&top)
        {
            continue;
        }
        let v: Value = new.to_string().parse().map_err(|e| format!("{key}: {e}"))?;
        let comment = match old {
            Some(old) => format!(" # follows the fitted values (was {old})"),
            None => " # follows the fitted values".to_string(),
        };
        put(&mut doc, &key, v, comment)?;
    }
    let mut t = Table::new();
    t.decor_mut()
        .set_prefix("\n# what the fit reached (written by ssdlab calibrate; reports quote it)\n");
    t.insert("figures", value(calibration.figures as i64));
    t.insert(
        "rms_error",
        value((calibration.rms_error * 1e4).round() / 1e4),
    );
    let mut fams = toml_edit::InlineTable::new();
    for (f, e) in &calibration.families {
        fams.insert(f, Value::from((e * 1e4).round() / 1e4));
    }
    t.insert("families", value(fams));
    let mut files = Array::new();
    for f in &calibration.fitted_to {
        files.push(f.as_str());
    }
    t.insert("fitted_to", value(files));
    doc.insert("calibration", Item::Table(t));
    let text = doc.to_string();
    // the file must describe exactly the fitted model
    let back = DriveConfig::from_toml_str(&text).map_err(|e| format!("the fitted preset: {e}"))?;
    let mut want = fit.config.clone();
    want.name = back.name.clone();
    want.description = back.description.clone();
    want.sources = back.sources.clone();
    want.calibration = back.calibration.clone();
    if back.calibration.as_ref().map(|c| c.figures) != Some(calibration.figures) {
        return Err("the fitted preset's [calibration] does not read back".into());
    }
    if toml::Value::try_from(&back).ok() != toml::Value::try_from(&want).ok() {
        return Err("the fitted preset does not read back as the fitted model".into());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::Fitted;

    #[test]
    fn the_fitted_text_keeps_the_base_and_reads_back_as_the_model() {
        let text = ssdlab_ssdsim::preset_toml("x25e-64g").unwrap();
        let mut cfg = ssdlab_ssdsim::load_preset("x25e-64g").unwrap();
        let before = cfg.controller.fw_read_ns.to_string();
        cfg.set("controller.fw_read_ns", "20000").unwrap();
        let fit = FitResult {
            config: cfg,
            params: vec![
                Fitted {
                    key: "controller.fw_read_ns".into(),
                    before: before.clone(),
                    after: "20000".into(),
                    constrained: true,
                    range: String::new(),
                },
                Fitted {
                    key: "controller.fw_gc_move_ns".into(),
                    before: "120000".into(),
                    after: "120000".into(),
                    constrained: false,
                    range: String::new(),
                },
            ],
            error_before: 0.2,
            error_after: 0.01,
            evaluations: 9,
            figures: 3,
        };
        let cal = Calibration {
            figures: 3,
            rms_error: 0.01,
            families: [("random read".to_string(), 0.02)].into_iter().collect(),
            fitted_to: vec!["a.toml".into()],
        };
        let out = fitted_toml(text, &fit, "mine", "fitted by a test", &cal).unwrap();
        let back = DriveConfig::from_toml_str(&out).unwrap();
        assert_eq!(back.calibration.as_ref(), Some(&cal));
        assert!(back
            .calibration
            .unwrap()
            .summary()
            .contains("±2 % on random read"));
        assert!(out.contains(&format!(
            "fw_read_ns = 20000 # fitted: {before} -> 20000 (rms error 20.0 % -> 1.0 % over 3 figures)"
        )));
        assert!(out.contains("not constrained by the fitted figures: kept 120000"));
        assert!(out.contains("name = \"mine\""));
        assert!(out.contains("fitted by a test"));
        // every comment of the base is still there
        for line in text.lines().filter(|l| l.trim_start().starts_with('#')) {
            assert!(out.contains(line), "{line}");
        }
        // a fit result whose model disagrees with its parameters is refused
        let mut wrong = fit.clone();
        wrong.params[0].after = "30000".into();
        assert!(fitted_toml(text, &wrong, "mine", "x", &cal).is_err());
        // a fitted geometry: the user capacity it scaled is written with it, and reads back
        let mut cfg = ssdlab_ssdsim::load_preset("x25e-64g").unwrap();
        let user = cfg.ftl.user_capacity_bytes;
        cfg.set_all(&[("nand.channels".into(), "2".into())])
            .unwrap();
        assert!(cfg.ftl.user_capacity_bytes < user);
        let fit = FitResult {
            config: cfg.clone(),
            params: vec![Fitted {
                key: "nand.channels".into(),
                before: "10".into(),
                after: "2".into(),
                constrained: true,
                range: "1…2".into(),
            }],
            ..fit
        };
        let out = fitted_toml(text, &fit, "mine", "x", &cal).unwrap();
        assert!(
            out.contains(&format!(
                "user_capacity_bytes = {} # follows the fitted values (was {user})",
                cfg.ftl.user_capacity_bytes
            )),
            "{out}"
        );
        let back = DriveConfig::from_toml_str(&out).unwrap();
        assert_eq!(back.nand.channels, 2);
    }
}
