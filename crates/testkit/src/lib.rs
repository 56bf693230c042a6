//! What ssdlab's tests share: the one rule for a test that cannot run where it is run.
//!
//! A test that needs what a machine may lack (root, loop devices, io_uring, blkid, fio,
//! chromium, mpirun) calls [`skip`] — or [`skip_without_fio`] for fio and its tools — with the
//! reason, then returns: the reason is printed as `skipping: REASON`. When the switch of that
//! kind of test is set to `1` the call fails the test instead, naming the reason and the switch.
//! `.ci/run` sets both switches, so nothing is skipped in CI.

use std::env;

/// Set to `1`, tests that need root, loop devices, mounts, io_uring or installed tools fail
/// rather than skip.
pub const REQUIRE_PRIVILEGED: &str = "SSDLAB_REQUIRE_PRIVILEGED_TESTS";
/// Set to `1`, tests that compare with fio (or use its tools) fail rather than skip.
pub const REQUIRE_FIO: &str = "SSDLAB_REQUIRE_FIO";

/// Whether `switch` is set to `1`.
pub fn required(switch: &str) -> bool {
    env::var(switch).as_deref() == Ok("1")
}

/// Skips the calling test (prints why) unless [`REQUIRE_PRIVILEGED`] is set, in which case the
/// test fails with `reason`.
#[track_caller]
pub fn skip(reason: &str) {
    skip_under(REQUIRE_PRIVILEGED, reason)
}

/// [`skip`] for tests that need fio or its tools, under [`REQUIRE_FIO`].
#[track_caller]
pub fn skip_without_fio(reason: &str) {
    skip_under(REQUIRE_FIO, reason)
}

/// Skips the calling test (prints why) unless `switch` is set to `1`; then fails it.
#[track_caller]
pub fn skip_under(switch: &str, reason: &str) {
    assert!(
        !required(switch),
        "{reason}, and {switch}=1 requires this test to run"
    );
    eprintln!("skipping: {reason}");
}

/// Whether the process runs as root (effective uid 0, from `/proc/self/status`).
pub fn is_root() -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    // "Uid:  real  effective  saved  fs"
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1).map(|u| u == "0"))
        .unwrap_or(false)
}

/// True as root; otherwise [`skip`]s `test` (it needs root, e.g. to mount a small tmpfs) and
/// returns false.
#[track_caller]
pub fn privileged(test: &str) -> bool {
    if is_root() {
        return true;
    }
    skip(&format!("{test}: needs root"));
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    // Each test uses a switch of its own, so tests running at once do not see each other's.

    #[test]
    fn a_skip_prints_when_not_required() {
        skip_under("SSDLAB_TESTKIT_SELFTEST_UNSET", "nothing to run on");
    }

    #[test]
    #[should_panic(expected = "no loop devices, and SSDLAB_TESTKIT_SELFTEST_SET=1 requires")]
    fn a_skip_fails_when_required() {
        env::set_var("SSDLAB_TESTKIT_SELFTEST_SET", "1");
        skip_under("SSDLAB_TESTKIT_SELFTEST_SET", "no loop devices");
    }

    #[test]
    fn only_1_requires() {
        env::set_var("SSDLAB_TESTKIT_SELFTEST_YES", "yes");
        assert!(!required("SSDLAB_TESTKIT_SELFTEST_YES"));
        env::set_var("SSDLAB_TESTKIT_SELFTEST_ONE", "1");
        assert!(required("SSDLAB_TESTKIT_SELFTEST_ONE"));
    }

    #[test]
    fn root_is_read_from_the_process_status() {
        let uid = std::fs::read_to_string("/proc/self/status")
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix("Uid:").map(str::to_string))
            .unwrap();
        let euid = uid.split_whitespace().nth(1).unwrap().to_string();
        assert_eq!(is_root(), euid == "0");
    }
}
