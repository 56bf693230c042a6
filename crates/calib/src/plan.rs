//! The checks of `ssdlab calibrate` before anything is measured or written: the base preset and
//! its text ([`load_base`]), the fitted preset's name ([`preset_name`]), the files it reads and
//! writes ([`Files`]: no output names another or an input), and the suite measured on
//! `--target` ([`target_suite`], [`measured_source`]). Errors are the command's words.

use crate::data::Source;
use crate::suite::{suite, SuiteKind, SuitePoint};
use ssdlab_engine::{load_drive, preset_file};
use ssdlab_ssdsim::DriveConfig;
use ssdlab_target::{check_outputs, Named, SameFile};
use std::path::{Path, PathBuf};

/// The base preset (`--base`: a built-in name or a preset file) and its text, which the fitted
/// preset is written as an edit of.
pub fn load_base(base: &str) -> Result<(DriveConfig, String), String> {
    let cfg = load_drive(base).map_err(|e| format!("--base {base}: {e}"))?;
    let text = match preset_file(base) {
        Some(p) => std::fs::read_to_string(p).map_err(|e| format!("--base {base}: {e}"))?,
        None => ssdlab_ssdsim::preset_toml(base)
            .ok_or_else(|| format!("--base {base}: unknown preset"))?
            .to_string(),
    };
    Ok((cfg, text))
}

/// The fitted preset's name: `name` (`--name`) when given, else the stem of `out` (`--out`).
pub fn preset_name(name: Option<&str>, out: &Path) -> Result<String, String> {
    match name {
        Some(n) if n.trim().is_empty() => Err("--name is empty".into()),
        Some(n) => Ok(n.to_string()),
        None => out
            .file_stem()
            .map(|s| s.to_string_lossy().to_string())
            .filter(|s| !s.is_empty())
            .ok_or_else(|| format!("--out {}: give a file name", out.display())),
    }
}

/// Where `--target`'s measurements are written: `measurements` when given, else next to `out`
/// as OUT.measured.toml.
pub fn measurements_path(out: &Path, measurements: Option<&Path>) -> PathBuf {
    measurements.map_or_else(
        || {
            let mut p = out.to_path_buf().into_os_string();
            p.push(".measured.toml");
            PathBuf::from(p)
        },
        Path::to_path_buf,
    )
}

/// Whether two paths name the same file, before any exists (absolute, lexically).
pub fn same_path(a: &Path, b: &Path) -> bool {
    match (std::path::absolute(a), std::path::absolute(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// The files `ssdlab calibrate` reads and writes, as given.
#[derive(Debug, Clone, Copy)]
pub struct Files<'a> {
    /// `--base`: a preset file is an input, a built-in name none.
    pub base: &'a str,
    /// `--target`, measured.
    pub target: Option<&'a Path>,
    /// `--out`, the fitted preset.
    pub out: &'a Path,
    /// Where the measurements are written ([`measurements_path`]; with `--target` only).
    pub measured: Option<&'a Path>,
    /// `--store`, where the measured points are kept.
    pub store: Option<&'a Path>,
}

impl Files<'_> {
    /// Checks, by name before any exists, that the measurements and the store are not written
    /// over `--out` or each other (the store is written first and must not be replaced by the
    /// files written after it).
    pub fn check_distinct(&self) -> Result<(), String> {
        if self.measured.is_some_and(|m| same_path(m, self.out)) {
            return Err("--measurements and --out name the same file".into());
        }
        if let Some(st) = self.store {
            if same_path(st, self.out) {
                return Err("--store and --out name the same file".into());
            }
            if self.measured.is_some_and(|m| same_path(st, m)) {
                return Err(
                    "--store and --measurements (default OUT.measured.toml) name the same file"
                        .into(),
                );
            }
        }
        Ok(())
    }

    /// Checks that no output names an input (`data_files` of `--from`, the base preset file,
    /// the target) or another output.
    pub fn check_outputs(&self, data_files: &[PathBuf]) -> Result<(), SameFile> {
        let mut inputs: Vec<Named<'_>> = data_files
            .iter()
            .map(|p| Named {
                role: "a --from data file",
                path: p,
            })
            .collect();
        if let Some(p) = preset_file(self.base) {
            inputs.push(Named {
                role: "the --base preset file",
                path: p,
            });
        }
        if let Some(t) = self.target {
            inputs.push(Named {
                role: "the --target",
                path: t,
            });
        }
        let mut outputs = vec![Named {
            role: "--out",
            path: self.out,
        }];
        if let Some(m) = self.measured {
            outputs.push(Named {
                role: "--measurements",
                path: m,
            });
        }
        if let Some(path) = self.store {
            outputs.push(Named {
                role: "--store",
                path,
            });
        }
        check_outputs(&outputs, &inputs)
    }
}

/// The suite's points measured on `--target` for the drive named `name` over `span`, each
/// `point_time` long (default 5 s for the quick suite, 20 s for the full one).
pub fn target_suite(
    kind: SuiteKind,
    name: &str,
    span: u64,
    point_time: Option<u64>,
) -> Result<Vec<SuitePoint>, String> {
    let point_ns = point_time.unwrap_or(match kind {
        SuiteKind::Quick => 5_000_000_000,
        SuiteKind::Full => 20_000_000_000,
    });
    if point_ns == 0 {
        return Err("--point-time must be greater than 0".into());
    }
    Ok(suite(kind, name, span, point_ns))
}

/// The source recorded in the measurements of `target` (the suite `kind` over `span`).
pub fn measured_source(target: &Path, kind: SuiteKind, span: u64) -> Source {
    Source {
        title: format!("ssdlab calibrate --target {}", target.display()),
        url: None,
        published: None,
        kind: "measured".into(),
        method: Some(format!(
            "{kind:?} suite over {} written sequentially first; O_DIRECT, io_uring",
            ssdlab_workload::format_size(span)
        )),
    }
}

/// Checks of the names and paths (unit tests).
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths() {
        let out = Path::new("fit/my-drive.toml");
        assert_eq!(preset_name(None, out).unwrap(), "my-drive");
        assert_eq!(preset_name(Some("x"), out).unwrap(), "x");
        assert_eq!(preset_name(Some(" "), out).unwrap_err(), "--name is empty");
        assert!(preset_name(None, Path::new("/"))
            .unwrap_err()
            .ends_with("give a file name"));
        assert_eq!(
            measurements_path(out, None),
            Path::new("fit/my-drive.toml.measured.toml")
        );
        assert_eq!(
            measurements_path(out, Some(Path::new("m.toml"))),
            Path::new("m.toml")
        );
        assert!(same_path(Path::new("a/../b"), Path::new("a/../b")));
        assert!(same_path(Path::new("./b"), Path::new("b")));
        assert!(!same_path(Path::new("a"), Path::new("b")));
    }

    #[test]
    fn outputs_distinct() {
        let files = Files {
            base: "vertex450-128g",
            target: Some(Path::new("t.img")),
            out: Path::new("o.toml"),
            measured: Some(Path::new("m.toml")),
            store: Some(Path::new("s.sqlite")),
        };
        assert!(files.check_distinct().is_ok());
        let e = |f: Files<'_>| f.check_distinct().unwrap_err();
        assert_eq!(
            e(Files {
                measured: Some(Path::new("./o.toml")),
                ..files
            }),
            "--measurements and --out name the same file"
        );
        assert_eq!(
            e(Files {
                store: Some(Path::new("o.toml")),
                ..files
            }),
            "--store and --out name the same file"
        );
        assert!(e(Files {
            store: Some(Path::new("m.toml")),
            ..files
        })
        .starts_with("--store and --measurements"));
    }

    #[test]
    fn outputs_not_inputs() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("d.toml");
        std::fs::write(&data, "").unwrap();
        let files = Files {
            base: "vertex450-128g",
            target: None,
            out: &data,
            measured: None,
            store: None,
        };
        let e = files
            .check_outputs(std::slice::from_ref(&data))
            .unwrap_err();
        assert_eq!(
            (e.out_role.as_str(), e.in_role.as_str()),
            ("--out", "a --from data file")
        );
        let out = dir.path().join("o.toml");
        assert!(Files { out: &out, ..files }
            .check_outputs(std::slice::from_ref(&data))
            .is_ok());
    }

    #[test]
    fn suite_of_target() {
        assert_eq!(
            target_suite(SuiteKind::Quick, "d", 1 << 30, Some(0)).unwrap_err(),
            "--point-time must be greater than 0"
        );
        let p = target_suite(SuiteKind::Quick, "d", 1 << 30, None).unwrap();
        assert_eq!(p, suite(SuiteKind::Quick, "d", 1 << 30, 5_000_000_000));
        let s = measured_source(Path::new("t.img"), SuiteKind::Full, 1 << 30);
        assert_eq!(s.title, "ssdlab calibrate --target t.img");
        assert_eq!(
            s.method.as_deref(),
            Some("Full suite over 1 GiB written sequentially first; O_DIRECT, io_uring")
        );
    }
}
