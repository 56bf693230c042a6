//! fio's `verify_backlog`: the writes of a verifying job waiting to be read back, and when the
//! job reads some of them back between its writes.
//!
//! fio logs every write before it issues it (`log_io_piece`, the piece in flight until it
//! completes), in a list in the order written when the job has a random map (no offset is
//! written twice in a pass), else in a tree by offset where a new write replaces the pieces it
//! overlaps. Before each I/O (`check_get_verify`): with a batch under way, or when the number of
//! pieces waiting is a multiple of `verify_backlog` and the job's last completion was not a
//! read, the first piece — the oldest, or the lowest offset — is read back instead, unless it is
//! still in flight; each piece is read once. What is left when the writes end is read in the
//! verify phase (`do_verify`), in the same order.

use ssdlab_workload::{Next, Op, OpKind, VerifyBacklog};
use std::collections::BTreeMap;

/// One write waiting to be read back.
#[derive(Debug, Clone, Copy)]
struct Piece {
    offset: u64,
    len: u64,
    /// Which write logged it (a completion finds its own piece, not one that replaced it).
    id: u64,
    in_flight: bool,
}

/// The pieces of one job (a stream) and where its batches stand.
#[derive(Debug, Clone)]
pub(crate) struct Backlog {
    cfg: VerifyBacklog,
    /// fio's tree (keyed by offset), else its list (keyed by the order written).
    by_offset: bool,
    pieces: BTreeMap<u64, Piece>,
    next_id: u64,
    /// Reads left in the batch under way (fio's `td->verify_batch`).
    batch_left: u64,
    /// The last completion was a read (fio's `td->last_ddir`).
    last_read: bool,
    /// The loop's: the job's next op, put off for a read of the backlog.
    pub(crate) stashed: Option<Next>,
    /// The loop's: the op it holds back for later is a read of the backlog (no budget is
    /// taken for it).
    pub(crate) pending_verify: bool,
}

impl Backlog {
    /// A job's backlog; `by_offset` where fio keeps its pieces in a tree (a sequential job, or a
    /// random one without a random map).
    pub(crate) fn new(cfg: VerifyBacklog, by_offset: bool) -> Backlog {
        Backlog {
            cfg,
            by_offset,
            pieces: BTreeMap::new(),
            next_id: 0,
            batch_left: 0,
            last_read: false,
            stashed: None,
            pending_verify: false,
        }
    }

    /// A write is issued: its piece waits, in flight. Returns the piece's id, for
    /// [`Backlog::completed`].
    pub(crate) fn logged(&mut self, offset: u64, len: u64) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let key = if self.by_offset {
            // a piece it overlaps will never be read back (fio's rb-tree insert)
            let end = offset.saturating_add(len);
            while let Some((&k, p)) = self.pieces.range(..end).next_back() {
                if p.offset.saturating_add(p.len) <= offset {
                    break;
                }
                self.pieces.remove(&k);
            }
            offset
        } else {
            id
        };
        self.pieces.insert(
            key,
            Piece {
                offset,
                len,
                id,
                in_flight: true,
            },
        );
        id
    }

    /// Whether the writer reads pieces back while it writes (else they are only logged, for
    /// its verify phase, and the loop need not ask before each I/O).
    pub(crate) fn reads_inline(&self) -> bool {
        self.cfg.every > 0
    }

    /// A logged write completed: its piece may be read back, or, when it failed, it is dropped
    /// (fio's `unlog_io_piece`).
    pub(crate) fn completed(&mut self, offset: u64, id: u64, ok: bool) {
        let key = if self.by_offset { offset } else { id };
        let std::collections::btree_map::Entry::Occupied(mut e) = self.pieces.entry(key) else {
            return;
        };
        if e.get().id != id {
            // replaced by a later write of the same offset
        } else if ok {
            e.get_mut().in_flight = false;
        } else {
            e.remove();
        }
    }

    /// The loop's: `op` completed with `res` (bytes, or a negative errno); `piece` is what
    /// a write logged.
    #[inline(never)]
    pub(crate) fn done(&mut self, op: &Op, piece: u64, res: i64) {
        if op.kind == OpKind::Write {
            self.completed(op.offset, piece, res >= 0 && res as u64 == op.len);
        }
        self.finished(op.kind);
    }

    /// An I/O of `kind` completed (fio's `last_ddir`: reads and writes only).
    pub(crate) fn finished(&mut self, kind: OpKind) {
        match kind {
            OpKind::Read => self.last_read = true,
            OpKind::Write => self.last_read = false,
            _ => {}
        }
    }

    /// The read to issue now instead of the job's next I/O, if any (fio's `check_get_verify`).
    pub(crate) fn next_read(&mut self) -> Option<Op> {
        let waiting = self.pieces.len() as u64;
        if waiting == 0 {
            return None;
        }
        if self.batch_left == 0 {
            if !waiting.is_multiple_of(self.cfg.every) || self.last_read {
                return None;
            }
            self.batch_left = if self.cfg.batch == 0 {
                self.cfg.every
            } else {
                self.cfg.batch
            };
        }
        let (&key, first) = self.pieces.iter().next()?;
        if first.in_flight {
            return None;
        }
        let op = Op {
            kind: OpKind::Read,
            offset: first.offset,
            len: first.len,
        };
        self.pieces.remove(&key);
        self.batch_left -= 1;
        Some(op)
    }

    /// The loop's turn before it issues `next`: with I/O `left` to issue, a read of the
    /// backlog to issue instead (`next` is kept for later). `is_read`: `next` is one already
    /// (held back and taken again).
    #[inline(never)]
    pub(crate) fn turn(&mut self, next: Next, is_read: bool, left: bool) -> Option<Next> {
        let read = (!is_read && left).then(|| self.next_read()).flatten();
        if read.is_some() {
            self.stashed = Some(next);
        }
        // (a path of the loop that keeps the op for later keeps what it is)
        self.pending_verify = is_read || read.is_some();
        read.map(|op| Next {
            op,
            gap_ns: 0,
            at_ns: 0,
            drain: false,
        })
    }

    /// The reads of the verify phase: every piece left, in the order fio reads them back.
    pub(crate) fn rest(&self) -> impl Iterator<Item = Op> + '_ {
        self.pieces.values().filter(|p| !p.in_flight).map(|p| Op {
            kind: OpKind::Read,
            offset: p.offset,
            len: p.len,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order of a job's I/Os at depth 1: each write completes before the next I/O, and
    /// reads are taken only while writes are left (fio checks its bytes first).
    fn run(cfg: VerifyBacklog, by_offset: bool, writes: &[u64]) -> (String, Vec<u64>) {
        let mut b = Backlog::new(cfg, by_offset);
        let mut out = String::new();
        let mut w = writes.iter().peekable();
        loop {
            if w.peek().is_none() {
                break;
            }
            if let Some(r) = b.next_read() {
                out.push_str(&format!("r{} ", r.offset / 4096));
                b.finished(OpKind::Read);
                continue;
            }
            let Some(&off) = w.next() else { break };
            let id = b.logged(off * 4096, 4096);
            out.push_str(&format!("w{off} "));
            b.completed(off * 4096, id, true);
            b.finished(OpKind::Write);
        }
        (
            out.trim_end().to_string(),
            b.rest().map(|o| o.offset / 4096).collect(),
        )
    }

    #[test]
    fn batches_as_fio_issues_them() {
        // fio 3.33, psync, rw=write bs=4k size=64k verify=crc32c verify_backlog=4
        // verify_backlog_batch=3, its write_iolog: 4 writes, then 3 reads and 3 writes in turn;
        // the 4 pieces left are read in the verify phase
        let (seq, rest) = run(
            VerifyBacklog { every: 4, batch: 3 },
            true,
            &(0..16).collect::<Vec<_>>(),
        );
        assert_eq!(
            seq,
            "w0 w1 w2 w3 r0 r1 r2 w4 w5 w6 r3 r4 r5 w7 w8 w9 r6 r7 r8 w10 w11 w12 r9 r10 r11 \
             w13 w14 w15"
        );
        assert_eq!(rest, [12, 13, 14, 15]);
        // batch = every (fio's default): everything but the last pieces read back in the loop
        let (seq, rest) = run(VerifyBacklog { every: 2, batch: 2 }, true, &[0, 1, 2, 3, 4]);
        assert_eq!(seq, "w0 w1 r0 r1 w2 w3 r2 r3 w4");
        assert_eq!(rest, [4]);
    }

    #[test]
    fn a_batch_beyond_the_backlog_reads_each_new_write() {
        // with batch > every, the batch goes on after the backlog is empty: each write is read
        // back next, until the batch is spent (no piece is read twice)
        let (seq, rest) = run(
            VerifyBacklog { every: 2, batch: 3 },
            true,
            &[0, 1, 2, 3, 4, 5],
        );
        assert_eq!(seq, "w0 w1 r0 r1 w2 r2 w3 w4 r3 r4 w5");
        assert_eq!(rest, [5]);
    }

    #[test]
    fn tree_by_offset_list_by_order() {
        let writes = [5, 1, 3, 0, 7];
        let cfg = VerifyBacklog { every: 4, batch: 2 };
        // a tree reads the lowest offsets first, a list the oldest writes
        assert_eq!(
            run(cfg, true, &writes),
            ("w5 w1 w3 w0 r0 r1 w7".into(), vec![3, 5, 7])
        );
        assert_eq!(
            run(cfg, false, &writes),
            ("w5 w1 w3 w0 r5 r1 w7".into(), vec![3, 0, 7])
        );
        // in the tree an overwrite replaces the piece it overlaps
        let mut b = Backlog::new(cfg, true);
        let a = b.logged(0, 8192);
        b.completed(0, a, true);
        let c = b.logged(4096, 8192);
        b.completed(4096, c, true);
        assert_eq!(
            b.rest().map(|o| (o.offset, o.len)).collect::<Vec<_>>(),
            [(4096, 8192)]
        );
        // (a late completion of the replaced write changes nothing)
        b.completed(0, a, false);
        assert_eq!(b.rest().count(), 1);
    }

    #[test]
    fn in_flight_and_failed_writes() {
        let mut b = Backlog::new(VerifyBacklog { every: 1, batch: 1 }, false);
        let id = b.logged(0, 4096);
        // still in flight: not read back yet
        assert_eq!(b.next_read(), None);
        b.completed(0, id, true);
        b.finished(OpKind::Write);
        assert_eq!(b.next_read().map(|o| o.offset), Some(0));
        // a failed write is never read back
        let id = b.logged(4096, 4096);
        b.completed(4096, id, false);
        b.finished(OpKind::Write);
        assert_eq!(b.next_read(), None);
        assert_eq!(b.rest().count(), 0);
    }
}
