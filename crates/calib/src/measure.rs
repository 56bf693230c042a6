//! Measuring the characterisation suite on a real file or block device through the engine
//! (`ssdlab calibrate --target`): the suite's span written once first, each point run with
//! O_DIRECT, each result handed to the caller to keep (a results store in the CLI).

use crate::predict::Outcome;
use crate::suite::{fill_spec, Measure};
use crate::Case;
use ssdlab_engine::{RealOptions, RealTarget};
use ssdlab_stats::RunResult;
use ssdlab_workload::{Field, Flags, Naming, WorkloadSpec};
use std::path::Path;

/// How `calibrate --target` names a workload's settings: its flags (`--span`), and the
/// suite's own block sizes and alignment, which no flag sets; it always uses O_DIRECT.
pub struct SuiteNaming;

impl Naming for SuiteNaming {
    fn name(&self, f: Field) -> String {
        match f {
            Field::Bs => "the suite's block size".into(),
            Field::Align => "the suite's alignment".into(),
            f => Flags.name(f),
        }
    }

    fn setting(&self, f: Field, value: u64) -> String {
        match f {
            Field::Bs | Field::Align => format!("{} {value}", self.name(f)),
            f => Flags.setting(f, value),
        }
    }

    fn buffered(&self) -> Option<String> {
        None
    }
}

/// Checks that `target` can take the suite over `span` (planned with the fill's workload,
/// nothing written): the error as `calibrate --target` words it.
pub fn check_target(target: &Path, span: u64, allow_destroy: bool) -> Result<(), String> {
    if ssdlab_target::probe(target).is_ok_and(|i| i.kind == ssdlab_target::PathKind::CharDevice) {
        return Err(format!(
            "--target {}: a character device keeps no data and has no drive behind it to calibrate",
            target.display()
        ));
    }
    let plan_opts = ssdlab_target::PlanOptions {
        direct: true,
        allow_destroy,
        null_size: 0,
        create_dirs: false,
    };
    let t = RealTarget::Path(target.to_path_buf());
    ssdlab_target::plan(&fill_spec(span), &t, &plan_opts)
        .map(|_| ())
        .map_err(|e| format!("--target {}: {}", target.display(), e.render(&SuiteNaming)))
}

/// Keeps one measured point's result; `Ok(true)` when it was kept somewhere.
pub type Keep<'a> = Box<dyn FnMut(&RunResult) -> Result<bool, String> + 'a>;

/// A real file or device measured through the engine, the suite's span written first; each
/// measured point passed to `keep`.
pub struct RealMeasure<'a> {
    target: RealTarget,
    opts: RealOptions<'a>,
    filled: bool,
    span: u64,
    keep: Keep<'a>,
    /// Points kept so far.
    pub kept: usize,
}

impl<'a> RealMeasure<'a> {
    /// Measures `target` over `span` from its start with `opts` (O_DIRECT and the default
    /// engine unless they say otherwise).
    pub fn new(target: &Path, span: u64, opts: RealOptions<'a>, keep: Keep<'a>) -> Self {
        RealMeasure {
            target: RealTarget::Path(target.to_path_buf()),
            opts,
            filled: false,
            span,
            keep,
            kept: 0,
        }
    }

    fn run(&self, spec: &WorkloadSpec) -> Result<RunResult, String> {
        let out = ssdlab_engine::run_real(spec, &self.target, &self.opts)
            .map_err(|e| e.render(&SuiteNaming))?;
        if out.result.interrupted {
            return Err("interrupted".into());
        }
        if !out.result.errors.is_empty() {
            return Err(format!("{} I/O errors", out.result.errors.len()));
        }
        Ok(out.result)
    }
}

impl Measure for RealMeasure<'_> {
    fn measure(&mut self, case: &Case) -> Result<Outcome, String> {
        if !self.filled {
            // the span written once, sequentially, so reads find data ("full")
            let fill = fill_spec(self.span);
            self.run(&fill)?;
            self.filled = true;
        }
        let spec = crate::predict::case_spec(case, 1, None, None);
        let r = self.run(&spec)?;
        if (self.keep)(&r)? {
            self.kept += 1;
        }
        Outcome::of_case(&r, case)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suite_naming_names_the_suite_settings() {
        assert_eq!(SuiteNaming.name(Field::Bs), "the suite's block size");
        assert_eq!(
            SuiteNaming.setting(Field::Align, 4096),
            "the suite's alignment 4096"
        );
        assert!(SuiteNaming.buffered().is_none());
    }

    #[test]
    fn a_missing_directory_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let t = dir.path().join("no/such/dir/file");
        let e = check_target(&t, 1 << 20, false).unwrap_err();
        assert!(e.starts_with(&format!("--target {}: ", t.display())), "{e}");
    }
}
