//! A simulated target's drive state read back from a file written by
//! [`SimSession::save_state`] (`ssdlab run --load-state`): a regular file of reasonable size,
//! for the same target; and written to one whole or not at all (`--save-state`).

use crate::sim::{SimSession, SimTarget};
use crate::{EngineError, Invalid};
use std::path::Path;

/// Largest state file read: the mapping tables of the largest drives (a 128 GB drive's take
/// 125 MiB) with room to spare.
pub const MAX_STATE_FILE: u64 = 64 << 30;

/// Why a state file gave no session.
#[derive(Debug)]
pub enum StateFileError {
    /// The file (missing, not a regular file, too large, unreadable, not a state of this
    /// target): the message starts with the path; bad input.
    File(String),
    /// The engine refused the target or ran out of memory building it.
    Engine(EngineError),
}

impl SimSession {
    /// A session on the drives saved in `path` ([`SimSession::load_state`] from a file): a
    /// regular file, at most [`MAX_STATE_FILE`] bytes, written for the same target.
    pub fn load_state_file(
        path: &Path,
        target: &SimTarget,
        max_memory: Option<u64>,
    ) -> Result<SimSession, StateFileError> {
        let shown = path.display();
        let file = |m: String| StateFileError::File(format!("{shown}: {m}"));
        let m = std::fs::metadata(path).map_err(|e| file(e.to_string()))?;
        if !m.is_file() {
            return Err(file("not a regular file".into()));
        }
        if m.len() > MAX_STATE_FILE {
            return Err(file(format!(
                "{} bytes, too large for a state file",
                m.len()
            )));
        }
        let f = std::fs::File::open(path).map_err(|e| file(e.to_string()))?;
        SimSession::load_state(
            target,
            std::io::BufReader::with_capacity(1 << 20, f),
            max_memory,
        )
        .map_err(|e| match e {
            EngineError::Invalid(Invalid::State(m)) => file(m),
            e => StateFileError::Engine(e),
        })
    }

    /// Writes the drives to `path` (`ssdlab run --save-state`): a new file next to it, renamed
    /// into place once complete, so a failure leaves the old file (or none) and never half a
    /// state. `guard` is given the temporary file's path and kept while it is written (the
    /// caller's way to remove it if the process ends meanwhile). Errors name the flag and path.
    pub fn save_state_file<G>(
        &self,
        path: &Path,
        guard: impl FnOnce(&Path) -> G,
    ) -> Result<(), String> {
        let shown = path.display();
        let fail = |e: std::io::Error| format!("--save-state {shown}: {e}");
        let dest =
            ssdlab_target::resolve_output("--save-state", path).map_err(|e| e.to_string())?;
        let mut f = ssdlab_target::outfile::AtomicFile::create(&dest).map_err(fail)?;
        let _temp = guard(f.temp_path());
        {
            let mut w = std::io::BufWriter::with_capacity(1 << 20, &mut f);
            self.save_state(&mut w).map_err(fail)?;
            std::io::Write::flush(&mut w).map_err(fail)?;
        }
        f.commit().map_err(fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SimSpec;

    fn target() -> SimTarget {
        SimSpec::preset(ssdlab_ssdsim::preset_names()[0])
            .build(|_| {})
            .unwrap()
    }

    fn file_error(r: Result<SimSession, StateFileError>) -> String {
        match r {
            Err(StateFileError::File(m)) => m,
            Err(StateFileError::Engine(e)) => panic!("engine error {e}"),
            Ok(_) => panic!("loaded"),
        }
    }

    #[test]
    fn missing_directories_and_garbage_are_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let t = target();
        let missing = dir.path().join("none");
        let m = file_error(SimSession::load_state_file(&missing, &t, None));
        assert!(m.starts_with(&format!("{}: ", missing.display())), "{m}");
        let m = file_error(SimSession::load_state_file(dir.path(), &t, None));
        assert_eq!(m, format!("{}: not a regular file", dir.path().display()));
        let junk = dir.path().join("junk");
        std::fs::write(&junk, b"not a state").unwrap();
        let m = file_error(SimSession::load_state_file(&junk, &t, None));
        assert!(m.starts_with(&format!("{}: ", junk.display())), "{m}");
    }
}
