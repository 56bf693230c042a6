//! What a command measures or simulates, as one typed value: [`TargetSpec`] is a real target
//! (the null target, a file or block device, a RAID 0 stripe set of members) or a simulated
//! drive or array ([`SimSpec`]: preset, drives, stripe, state, host adapter and `--set`
//! overrides).
//!
//! It is parsed once from the shared target flags ([`TargetFlags`], [`TargetSpec::from_flags`]),
//! its inputs (the target's files, RAID members, the preset file) are checked against the
//! command's outputs in one place ([`TargetSpec::check_inputs`]), and a simulated one is built
//! into a [`SimTarget`] by [`SimSpec::build`]. The commands (`run`, `fio`, `sweep`, `report`)
//! share it instead of building targets by hand. Errors are the words the command line shows.

use crate::real::{Member, RealTarget};
use crate::sim::SimTarget;
use ssdlab_ssdsim::{AdapterChoice, DriveConfig, Precondition};
use ssdlab_target::{check_outputs, Named};
use ssdlab_workload::parse_size;
use std::path::{Path, PathBuf};

/// mdadm's default chunk, used for arrays given without `--stripe`.
pub const DEFAULT_STRIPE: u64 = 512 << 10;

/// Largest preset file read (real ones are a few KiB).
const MAX_PRESET_FILE: u64 = 1 << 20;

/// A preset given as a path to a TOML file (as opposed to a built-in name): it ends in `.toml`
/// or contains a `/`.
pub fn preset_file(name: &str) -> Option<&Path> {
    (name.ends_with(".toml") || name.contains('/')).then_some(Path::new(name))
}

/// Loads a preset by name, or a preset TOML file when the argument is a path to one. The file
/// must be a regular file of reasonable size (a FIFO or a device is never opened).
pub fn load_drive(name: &str) -> Result<DriveConfig, String> {
    match preset_file(name) {
        Some(p) => {
            let m = std::fs::metadata(p).map_err(|e| format!("preset file {name}: {e}"))?;
            if !m.is_file() {
                return Err(format!("preset file {name}: not a regular file"));
            }
            if m.len() > MAX_PRESET_FILE {
                return Err(format!(
                    "preset file {name}: {} bytes; a preset file is at most {MAX_PRESET_FILE}",
                    m.len()
                ));
            }
            ssdlab_ssdsim::load_config_file(p).map_err(|e| e.to_string())
        }
        None => ssdlab_ssdsim::load_preset(name).map_err(|e| e.to_string()),
    }
}

/// The target flags every command shares, as given (`--target`, `--null`, `--raid0`, `--sim`
/// and the simulated drives' flags). Which combinations are allowed is the command's to check
/// (its flags differ); this only turns them into a [`TargetSpec`].
#[derive(Debug, Clone, Default)]
pub struct TargetFlags<'a> {
    /// `--target PATH`: a file or block device.
    pub target: Option<&'a Path>,
    /// `--null`.
    pub null: bool,
    /// `--raid0 A,B,…`: files, block devices or `null:SIZE`.
    pub raid0: &'a [String],
    /// `--sim PRESET`: a preset name or a preset file.
    pub sim: Option<&'a str>,
    /// `--drives N` (default 1).
    pub drives: Option<u32>,
    /// `--stripe SIZE` of `--raid0` or of a simulated array (default [`DEFAULT_STRIPE`]).
    pub stripe: Option<u64>,
    /// `--state` (default `fresh`).
    pub state: Option<&'a str>,
    /// `--set KEY=VALUE`, as given.
    pub sets: &'a [String],
    /// The host adapter flags of a simulated target.
    pub adapter: AdapterChoice,
}

/// What a command measures or simulates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TargetSpec {
    /// A real target: null, a file or block device, files, a RAID 0 of members.
    Real(RealTarget),
    /// A simulated drive or array.
    Sim(SimSpec),
}

/// A simulated drive or array as asked for: built into a [`SimTarget`] by [`SimSpec::build`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimSpec {
    /// A built-in preset's name or a preset file.
    pub preset: String,
    /// `--set` overrides, applied together.
    pub sets: Vec<(String, String)>,
    /// Number of drives (more than one: a RAID 0 array).
    pub drives: u32,
    /// Stripe of an array (`None`: [`DEFAULT_STRIPE`]); unused for one drive.
    pub stripe: Option<u64>,
    /// State before the run: `fresh`, `full` or `steady` (checked by [`SimSpec::build`]).
    pub state: String,
    /// The host adapter asked for.
    pub adapter: AdapterChoice,
}

impl TargetSpec {
    /// The target the flags name: `--sim` first, then `--raid0`, `--target`, else the null
    /// target (a command refuses "no target" before, with its own words).
    pub fn from_flags(f: &TargetFlags<'_>) -> Result<TargetSpec, String> {
        if let Some(preset) = f.sim {
            return Ok(TargetSpec::Sim(SimSpec {
                preset: preset.to_string(),
                sets: SimSpec::parse_sets(f.sets)?,
                drives: f.drives.unwrap_or(1),
                stripe: f.stripe,
                state: f.state.unwrap_or("fresh").to_string(),
                adapter: f.adapter.clone(),
            }));
        }
        Ok(TargetSpec::Real(real_target(f.raid0, f.target, f.stripe)?))
    }

    /// The files the target reads, each named by its role in an error: the target's file or
    /// device, RAID 0 members, the preset file.
    pub fn inputs(&self) -> Vec<Named<'_>> {
        match self {
            TargetSpec::Real(t) => real_inputs(t),
            TargetSpec::Sim(s) => preset_file(&s.preset)
                .map(|path| Named {
                    role: "the preset file",
                    path,
                })
                .into_iter()
                .collect(),
        }
    }

    /// Refuses an output that names one of the target's inputs ([`TargetSpec::inputs`]).
    pub fn check_inputs(&self, outputs: &[Named<'_>]) -> Result<(), String> {
        check_outputs(outputs, &self.inputs()).map_err(|e| e.to_string())
    }
}

/// The files or devices of a real target, each named by its role in an error (`RAID 0 member`
/// or `--target`).
pub fn real_inputs(t: &RealTarget) -> Vec<Named<'_>> {
    let role = if matches!(t, RealTarget::Raid0 { .. }) {
        "RAID 0 member"
    } else {
        "--target"
    };
    t.paths()
        .into_iter()
        .map(|path| Named { role, path })
        .collect()
}

/// Refuses an output that names one of a real target's files or devices ([`real_inputs`]); for
/// a target planned apart from its [`TargetSpec`] (paths expanded per rank).
pub fn check_real_inputs(t: &RealTarget, outputs: &[Named<'_>]) -> Result<(), String> {
    check_outputs(outputs, &real_inputs(t)).map_err(|e| e.to_string())
}

/// The real target of `--raid0` members (with `stripe`), else of `--target`, else null.
fn real_target(
    raid0: &[String],
    target: Option<&Path>,
    stripe: Option<u64>,
) -> Result<RealTarget, String> {
    if !raid0.is_empty() {
        let members = raid0
            .iter()
            .map(|m| match m.strip_prefix("null:") {
                Some(size) => parse_size(size)
                    .map(Member::Null)
                    .map_err(|e| format!("--raid0 member {m}: {e}")),
                None if m.is_empty() => Err("--raid0: empty member name".to_string()),
                None => Ok(Member::Path(PathBuf::from(m))),
            })
            .collect::<Result<Vec<_>, String>>()?;
        return Ok(RealTarget::Raid0 {
            members,
            stripe: stripe.unwrap_or(DEFAULT_STRIPE),
        });
    }
    Ok(match target {
        Some(p) => RealTarget::Path(p.to_path_buf()),
        None => RealTarget::Null,
    })
}

impl SimSpec {
    /// One drive of `preset` as it is: fresh, default adapter, no overrides.
    pub fn preset(preset: &str) -> SimSpec {
        SimSpec {
            preset: preset.to_string(),
            sets: Vec::new(),
            drives: 1,
            stripe: None,
            state: "fresh".into(),
            adapter: AdapterChoice::default(),
        }
    }

    /// `--set KEY=VALUE` arguments as pairs (key and value trimmed; the key not empty).
    pub fn parse_sets(sets: &[String]) -> Result<Vec<(String, String)>, String> {
        sets.iter()
            .map(|kv| {
                kv.split_once('=')
                    .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                    .filter(|(k, _)| !k.is_empty())
                    .ok_or_else(|| format!("--set {kv}: expected KEY=VALUE"))
            })
            .collect()
    }

    /// The simulated target: the preset loaded, its overrides applied together and validated,
    /// the state and adapter resolved. What the overrides changed besides is passed to
    /// `note_once` (e.g. a user capacity scaled with the geometry).
    pub fn build(&self, note_once: fn(&str)) -> Result<SimTarget, String> {
        let name = &self.preset;
        let mut drive = load_drive(name)?;
        let what = self
            .sets
            .iter()
            .map(|(k, v)| format!("--set {k}={v}"))
            .collect::<Vec<_>>()
            .join(" ");
        let notes = drive
            .set_all(&self.sets)
            .map_err(|e| format!("{what}: {e}"))?;
        for n in notes {
            note_once(&format!("{name}: {n}"));
        }
        drive.validate().map_err(|e| e.to_string())?;
        let state: Precondition = self.state.parse().map_err(|e| format!("--state: {e}"))?;
        let drives = self.drives;
        let adapter = self.adapter.resolve(&drive, drives as usize);
        Ok(SimTarget {
            name: name.to_string(),
            drive,
            drives: drives as usize,
            stripe: if drives > 1 {
                Some(self.stripe.unwrap_or(DEFAULT_STRIPE))
            } else {
                None
            },
            adapter,
            state,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quiet(_: &str) {}

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn null_when_nothing_else() {
        let t = TargetSpec::from_flags(&TargetFlags {
            null: true,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(t, TargetSpec::Real(RealTarget::Null));
        assert!(t.inputs().is_empty());
    }

    #[test]
    fn path_target() {
        let t = TargetSpec::from_flags(&TargetFlags {
            target: Some(Path::new("some/file")),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(t, TargetSpec::Real(RealTarget::Path("some/file".into())));
        let inputs = t.inputs();
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].role, "--target");
    }

    #[test]
    fn raid0_members_and_stripe() {
        let raid0 = strings(&["a", "null:1m"]);
        let t = TargetSpec::from_flags(&TargetFlags {
            raid0: &raid0,
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            t,
            TargetSpec::Real(RealTarget::Raid0 {
                members: vec![Member::Path("a".into()), Member::Null(1 << 20)],
                stripe: DEFAULT_STRIPE,
            })
        );
        let inputs = t.inputs();
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].role, "RAID 0 member");
        let t = TargetSpec::from_flags(&TargetFlags {
            raid0: &raid0,
            stripe: Some(64 << 10),
            ..Default::default()
        })
        .unwrap();
        assert!(matches!(
            t,
            TargetSpec::Real(RealTarget::Raid0 { stripe, .. }) if stripe == 64 << 10
        ));
    }

    #[test]
    fn raid0_bad_members() {
        let bad = strings(&["a", ""]);
        let e = TargetSpec::from_flags(&TargetFlags {
            raid0: &bad,
            ..Default::default()
        })
        .unwrap_err();
        assert_eq!(e, "--raid0: empty member name");
        let bad = strings(&["null:lots"]);
        let e = TargetSpec::from_flags(&TargetFlags {
            raid0: &bad,
            ..Default::default()
        })
        .unwrap_err();
        assert!(e.starts_with("--raid0 member null:lots: "), "{e}");
    }

    #[test]
    fn sim_with_defaults_and_flags() {
        let t = TargetSpec::from_flags(&TargetFlags {
            sim: Some("mx500"),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(t, TargetSpec::Sim(SimSpec::preset("mx500")));
        assert!(t.inputs().is_empty());
        let sets = strings(&[" ftl.mapping_unit = 512", "nand.channels=4"]);
        let t = TargetSpec::from_flags(&TargetFlags {
            sim: Some("presets/x.toml"),
            drives: Some(2),
            stripe: Some(128 << 10),
            state: Some("full"),
            sets: &sets,
            ..Default::default()
        })
        .unwrap();
        let TargetSpec::Sim(s) = &t else {
            panic!("{t:?}")
        };
        assert_eq!(s.drives, 2);
        assert_eq!(s.stripe, Some(128 << 10));
        assert_eq!(s.state, "full");
        assert_eq!(
            s.sets,
            vec![
                ("ftl.mapping_unit".to_string(), "512".to_string()),
                ("nand.channels".to_string(), "4".to_string())
            ]
        );
        let inputs = t.inputs();
        assert_eq!(inputs.len(), 1);
        assert_eq!(inputs[0].role, "the preset file");
    }

    #[test]
    fn bad_sets_are_refused() {
        for bad in ["novalue", "=5", " =5"] {
            let sets = strings(&[bad]);
            let e = TargetSpec::from_flags(&TargetFlags {
                sim: Some("mx500"),
                sets: &sets,
                ..Default::default()
            })
            .unwrap_err();
            assert_eq!(e, format!("--set {bad}: expected KEY=VALUE"));
        }
    }

    #[test]
    fn preset_files_are_told_from_names() {
        assert!(preset_file("mx500").is_none());
        assert!(preset_file("x.toml").is_some());
        assert!(preset_file("dir/x").is_some());
    }

    #[test]
    fn build_checks_preset_state_and_sets() {
        let name = ssdlab_ssdsim::preset_names()[0].to_string();
        let t = SimSpec::preset(&name).build(quiet).unwrap();
        assert_eq!(t.drives, 1);
        assert_eq!(t.stripe, None);
        let mut s = SimSpec::preset(&name);
        s.drives = 2;
        assert_eq!(s.build(quiet).unwrap().stripe, Some(DEFAULT_STRIPE));
        let mut s = SimSpec::preset(&name);
        s.state = "sideways".into();
        assert!(s.build(quiet).unwrap_err().starts_with("--state: "));
        let mut s = SimSpec::preset(&name);
        s.sets = vec![("no.such.key".into(), "1".into())];
        assert!(s
            .build(quiet)
            .unwrap_err()
            .starts_with("--set no.such.key=1: "));
        assert!(SimSpec::preset("no-such-preset").build(quiet).is_err());
        assert!(SimSpec::preset("missing/preset.toml")
            .build(quiet)
            .unwrap_err()
            .starts_with("preset file missing/preset.toml: "));
    }

    #[test]
    fn outputs_naming_inputs_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("t");
        std::fs::write(&file, b"x").unwrap();
        let t = TargetSpec::Real(RealTarget::Path(file.clone()));
        let out = [Named {
            role: "--output",
            path: &file,
        }];
        let e = t.check_inputs(&out).unwrap_err();
        assert!(e.contains("names the same file as --target"), "{e}");
        let other = dir.path().join("o");
        assert!(t
            .check_inputs(&[Named {
                role: "--output",
                path: &other,
            }])
            .is_ok());
    }
}
