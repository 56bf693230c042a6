//! Jobs with several files (fio's `nrfiles`, `filename=a:b`): each file is a region of the
//! job's address space ([`FileRegion`]), laid out one after another, and a generator per file
//! keeps that file's own state (its sequential position, its random map), as fio keeps per
//! file. Which file the next I/O goes to is fio's `file_service_type` ([`FileService`]); a file
//! whose pass is done (its region written or read through, its random map used up) is skipped
//! until every file is done, and then all start again (fio's next loop).

use crate::gen::{Op, OpGen, OpKind};
use crate::rng::Rng;
use serde::{Deserialize, Serialize};

/// How the next file is chosen (fio's `file_service_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileService {
    /// In turn, switching after this many I/Os (fio's `roundrobin:N`, default 1).
    RoundRobin(u32),
    /// All I/Os to one file until its pass is done, then the next (fio's `sequential`).
    Sequential,
    /// A uniformly random file, switching after this many I/Os (fio's `random:N`).
    Random(u32),
}

impl Default for FileService {
    fn default() -> Self {
        FileService::RoundRobin(1)
    }
}

/// One file of a job: its I/Os are at `base + offset .. base + offset + span` of the job's
/// address space (`base` where the file begins there, `offset` fio's offset in the file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileRegion {
    pub base: u64,
    pub offset: u64,
    pub span: u64,
}

/// The files of a job and how I/Os move between them.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Files {
    pub regions: Vec<FileRegion>,
    pub service: FileService,
}

impl Files {
    /// The file an offset of the job's address space is in (files laid out in order, each
    /// up to the next one's base): its index and the offset within it.
    pub fn locate(bases: &[u64], offset: u64) -> (usize, u64) {
        let i = bases.partition_point(|&b| b <= offset).saturating_sub(1);
        (i, offset - bases.get(i).copied().unwrap_or(0))
    }

    /// The bases of the files, in order.
    pub fn bases(&self) -> Vec<u64> {
        self.regions.iter().map(|r| r.base).collect()
    }
}

/// The state of fio's file switching over the per-file generators.
#[derive(Debug, Clone)]
pub(crate) struct FileSet {
    gens: Vec<OpGen>,
    done: Vec<bool>,
    /// The first I/O of a file's next pass, drawn when the file was found done (fio resets the
    /// file there; its generator has already begun the new pass).
    held: Vec<Option<Op>>,
    ndone: usize,
    /// fio's `next_file`: where round robin looks next.
    next: usize,
    /// fio's `file_service_file`: the file being served (none once it is done).
    cur: Option<usize>,
    /// I/Os left to the current file before switching (fio's `file_service_left`).
    left: u32,
    service: FileService,
    rng: Rng,
    wrapped: bool,
    /// Passes of every file together ended so far (fio's `fio_files_done`).
    pub(crate) passes: u64,
}

impl FileSet {
    pub(crate) fn new(gens: Vec<OpGen>, service: FileService, rng: Rng) -> FileSet {
        let n = gens.len();
        FileSet {
            gens,
            done: vec![false; n],
            held: vec![None; n],
            ndone: 0,
            next: 0,
            cur: None,
            left: 0,
            service,
            rng,
            wrapped: false,
            passes: 0,
        }
    }

    /// The next I/O (never ends: after every file's pass, all begin again).
    pub(crate) fn next_op(&mut self) -> Op {
        self.next_op_steered(&|k| k)
    }

    /// The next op, its direction drawn by its file's generator and passed through `steer`
    /// ([`OpGen::next_op_steered`]).
    pub(crate) fn next_op_steered(&mut self, steer: &dyn Fn(OpKind) -> OpKind) -> Op {
        loop {
            let f = self.pick();
            if let Some(op) = self.held[f].take() {
                return op;
            }
            let g = &mut self.gens[f];
            let op = g.next_op_steered(steer);
            if !g.take_wrapped() {
                return op;
            }
            // The file's pass is done: fio closes it and tries the others.
            self.held[f] = Some(op);
            self.done[f] = true;
            self.ndone += 1;
            self.cur = None;
            if self.ndone == self.gens.len() {
                // Every file done: fio's next loop starts them all again.
                self.done.iter_mut().for_each(|d| *d = false);
                self.ndone = 0;
                self.wrapped = true;
                self.passes += 1;
            }
        }
    }

    /// fio's `__get_next_file`.
    fn pick(&mut self) -> usize {
        let n = self.gens.len();
        if let Some(c) = self.cur {
            match self.service {
                FileService::Sequential => return c,
                _ if self.left > 0 => {
                    self.left -= 1;
                    return c;
                }
                _ => {}
            }
        }
        let (f, nr) = match self.service {
            FileService::RoundRobin(_) | FileService::Sequential => {
                // fio's get_next_file_rr: from next_file on, skipping files that are done.
                let nr = match self.service {
                    FileService::RoundRobin(nr) => nr,
                    _ => 1,
                };
                loop {
                    let f = self.next;
                    self.next = (self.next + 1) % n;
                    if !self.done[f] {
                        break (f, nr);
                    }
                }
            }
            FileService::Random(nr) => loop {
                // fio's get_next_file_rand: drawn again while the file drawn is done.
                let f = self.rng.below(n as u64) as usize;
                if !self.done[f] {
                    break (f, nr);
                }
            },
        };
        self.cur = Some(f);
        self.left = nr.max(1) - 1;
        f
    }

    pub(crate) fn take_wrapped(&mut self) -> bool {
        std::mem::take(&mut self.wrapped)
    }
}
