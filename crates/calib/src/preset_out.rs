//! Writing a fitted preset: the base preset's own text with the fitted values put in place, each
//! marked `# fitted: …` with the fit error, and the fit recorded in `sources` — so the file keeps
//! every comment and citation of the preset it came from.

use crate::fit::FitResult;
use ssdlab_ssdsim::DriveConfig;
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

/// The text of the fitted preset named `name`, from the base preset's text. `provenance` is added
/// to `sources` (what was fitted to what, and when).
pub fn fitted_toml(
    base_text: &str,
    fit: &FitResult,
    name: &str,
    provenance: &str,
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
        let (section, field) = p
            .key
            .rsplit_once('.')
            .ok_or_else(|| format!("{}: not a section.field key", p.key))?;
        let mut table: &mut Table = doc.as_table_mut();
        for part in section.split('.') {
            if !table.contains_key(part) {
                table.insert(part, Item::Table(Table::new()));
            }
            table = table
                .get_mut(part)
                .and_then(Item::as_table_mut)
                .ok_or_else(|| format!("{}: {part} is not a table in the base preset", p.key))?;
        }
        let comment = if p.constrained {
            format!(" # fitted: {} -> {} ({err})", p.before, p.after)
        } else {
            format!(
                " # not constrained by the fitted figures: kept {}",
                p.before
            )
        };
        let mut v = typed(&p.after);
        v.decor_mut().set_suffix(comment);
        table.insert(field, Item::Value(v));
    }
    let text = doc.to_string();
    // the file must describe exactly the fitted model
    let back = DriveConfig::from_toml_str(&text).map_err(|e| format!("the fitted preset: {e}"))?;
    let mut want = fit.config.clone();
    want.name = back.name.clone();
    want.description = back.description.clone();
    want.sources = back.sources.clone();
    if toml::Value::try_from(&back).ok() != toml::Value::try_from(&want).ok() {
        return Err("the fitted preset does not read back as the fitted model".into());
    }
    Ok(text)
}
