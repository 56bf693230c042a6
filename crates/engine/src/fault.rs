//! A fault-injecting wrapper around any backend, for tests of error handling: fails the N-th
//! operation (and optionally every later N-th) with EIO or ENOSPC, or makes it a short transfer.

use crate::backend::{Backend, Cqe};
use ssdlab_workload::Op;
use std::io;
use std::str::FromStr;

/// What the injected fault looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    Eio,
    Enospc,
    /// The transfer moves half of its bytes.
    Short,
}

/// Which operations fail: the `at`-th pushed op (1-based), and every `every` ops after it if set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FaultPlan {
    pub kind: FaultKind,
    pub at: u64,
    pub every: Option<u64>,
}

/// A fault plan that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault '{0}': use KIND@N or KIND@N+EVERY with KIND eio, enospc or short")]
pub struct FaultPlanError(String);

impl FromStr for FaultPlan {
    type Err = FaultPlanError;
    /// `eio@100`, `enospc@5`, `short@1`, `eio@100+50` (the 100th and every 50th after it).
    fn from_str(s: &str) -> Result<Self, FaultPlanError> {
        let bad = || FaultPlanError(s.to_string());
        let (kind, rest) = s.split_once('@').ok_or_else(bad)?;
        let kind = match kind.to_ascii_lowercase().as_str() {
            "eio" => FaultKind::Eio,
            "enospc" => FaultKind::Enospc,
            "short" => FaultKind::Short,
            _ => return Err(bad()),
        };
        let (at, every) = match rest.split_once('+') {
            Some((a, e)) => (a, Some(e.parse::<u64>().map_err(|_| bad())?)),
            None => (rest, None),
        };
        let at: u64 = at.parse().map_err(|_| bad())?;
        if at == 0 || every == Some(0) {
            return Err(bad());
        }
        Ok(FaultPlan { kind, at, every })
    }
}

/// Wraps a backend and corrupts the results of the planned operations.
pub struct FaultBackend<B> {
    inner: B,
    plan: FaultPlan,
    pushed: u64,
    /// Per slot: Some(kind) when the op in that slot must fail.
    doomed: Vec<Option<FaultKind>>,
}

impl<B: Backend> FaultBackend<B> {
    pub fn new(inner: B, plan: FaultPlan, slots: u32) -> Self {
        FaultBackend {
            inner,
            plan,
            pushed: 0,
            doomed: vec![None; slots as usize],
        }
    }

    fn hits(&self, n: u64) -> bool {
        n == self.plan.at
            || matches!(self.plan.every, Some(e) if n > self.plan.at && (n - self.plan.at).is_multiple_of(e))
    }
}

impl<B: Backend> Backend for FaultBackend<B> {
    fn now(&mut self) -> u64 {
        self.inner.now()
    }
    fn buffer(&mut self, slot: u32) -> Option<&mut [u8]> {
        self.inner.buffer(slot)
    }
    fn push(&mut self, slot: u32, op: &Op) -> io::Result<()> {
        self.inner.push(slot, op)?;
        self.pushed += 1;
        self.doomed[slot as usize] = self.hits(self.pushed).then_some(self.plan.kind);
        Ok(())
    }
    fn submit_wait(&mut self, min: usize, timeout_ns: u64) -> io::Result<()> {
        self.inner.submit_wait(min, timeout_ns)
    }
    fn wait_until(&mut self, deadline_ns: u64, inflight: u32) -> io::Result<()> {
        self.inner.wait_until(deadline_ns, inflight)
    }
    fn mark_measurement_start(&mut self) {
        self.inner.mark_measurement_start()
    }
    fn submit_batch(&self) -> u32 {
        self.inner.submit_batch()
    }
    fn member_stats(&mut self) -> Vec<ssdlab_stats::MemberStats> {
        self.inner.member_stats()
    }
    fn reap(&mut self, out: &mut Vec<Cqe>) {
        let first = out.len();
        self.inner.reap(out);
        for c in &mut out[first..] {
            if let Some(kind) = self.doomed[c.slot as usize].take() {
                c.res = match kind {
                    FaultKind::Eio => -(libc_errno::EIO),
                    FaultKind::Enospc => -(libc_errno::ENOSPC),
                    FaultKind::Short => c.res.max(0) / 2,
                };
            }
        }
    }
}

mod libc_errno {
    pub const EIO: i64 = 5;
    pub const ENOSPC: i64 = 28;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_plans() {
        assert_eq!(
            "eio@3".parse::<FaultPlan>().unwrap(),
            FaultPlan {
                kind: FaultKind::Eio,
                at: 3,
                every: None
            }
        );
        let p: FaultPlan = "short@10+5".parse().unwrap();
        assert_eq!(p.every, Some(5));
        assert!("eio@0".parse::<FaultPlan>().is_err());
        assert!("boom@1".parse::<FaultPlan>().is_err());
        assert!("eio".parse::<FaultPlan>().is_err());
    }
}
