//! Deduplicable write data, as fio makes it (`dedupe_percentage`, `dedupe_mode`,
//! `dedupe_working_set_percentage`, `dedupe_global`; fio 3.33's `io_u.c` `fill_io_buffer`,
//! `get_buf_state`, and `dedupe.c`).
//!
//! fio makes every piece of a write buffer (one piece per `min_bs` of the write direction)
//! from one seed of a stream of seeds, the thread's buffer state. A unique buffer takes the
//! next seeds of the stream; a deduplicable one, drawn with `dedupe_percentage` % chance per
//! buffer, takes seeds the stream gives (or gave) to unique buffers:
//!
//! - `repeat` (fio's default): the seeds the next unique buffer will take, so the buffer is a
//!   copy of the unique buffer written after it (fio's `buf_state_prev` is the state after the
//!   last unique buffer); at 100 % every buffer is the stream's first;
//! - `working_set`: the seeds of one of the stream's first `size × working_set % / min_bs`
//!   unique buffers, drawn uniformly; with `dedupe_global` the working set is spread over every
//!   thread of the run — its first pages from the thread's own stream, the next as many from the
//!   next thread's, and so on round the run (`init_dedupe_working_set_seeds`), so that buffers
//!   repeat across the jobs' files too.
//!
//! A thread's first seeds and draws go to the buffers fio fills as it sets the thread up, one
//! per `iodepth`, of the largest block size, before its first write (`init_io_u`): so the
//! first writes of a deep queue are not the stream's first buffers, and a working set's first
//! pages may never be written as unique buffers.
//!
//! Here the seed of piece `i` of a stream is a hash of the stream and `i`, so any seed of any
//! stream is at hand without replaying it; a piece's bytes are the job's data pattern (random,
//! or with a compressible share) drawn from that seed. So the bytes are not fio's, but which
//! buffers are copies of which is decided as fio decides it.

use crate::pattern::Pattern;
use crate::rng::{mix64 as mix, Rng};
use serde::{Deserialize, Serialize};

/// What a job's deduplicable writes repeat.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum DedupeMode {
    /// The next unique buffer (fio's `dedupe_mode=repeat`).
    Repeat,
    /// One of the first `pages` unique buffers (fio's `dedupe_mode=working_set`).
    WorkingSet { pages: u64 },
}

/// fio's deduplicable buffers for one job.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dedupe {
    /// The share of write buffers that repeat another, 1 to 100 %.
    pub percentage: u8,
    pub mode: DedupeMode,
    /// Bytes of a buffer made from one seed: the smallest write size (fio's `min_bs`), or
    /// `buffer_compress_chunk` when that is shorter (fio's default: 512).
    pub chunk: u64,
    /// Pieces of `chunk` bytes in one page of the working set, a smallest write (fio's
    /// `num_seed_advancements`): page `i` starts at the stream's seed `i × page_pieces`.
    #[serde(default = "one")]
    pub page_pieces: u64,
    /// The run's seed of the buffer streams (fio's `randseed`): every thread's stream is made
    /// from it and the thread's number, so that a thread can make another's buffers
    /// (`dedupe_global`) and another seed makes other data.
    #[serde(default)]
    pub seed: u64,
    /// fio's thread number, from 0, of this worker (of a job's first clone in a spec; each
    /// clone adds its index): each thread has a stream of its own, as each fio thread has
    /// buffer seeds of its own.
    #[serde(default)]
    pub thread: u32,
    /// With `dedupe_global`: the threads of the run (fio's `thread_number`), over which the
    /// working set is spread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_threads: Option<u32>,
    /// The buffers a thread fills as it is set up, before its first write (fio's `init_io_u`
    /// fills each of its `iodepth` buffers, of `setup_len` bytes, the largest block size): they
    /// take the stream's first seeds and draws.
    #[serde(default)]
    pub setup_buffers: u32,
    #[serde(default)]
    pub setup_len: u64,
}

fn one() -> u64 {
    1
}

impl Dedupe {
    /// This spec for clone `worker` of its job.
    pub fn for_worker(mut self, worker: u32) -> Dedupe {
        self.thread = self.thread.saturating_add(worker);
        self
    }
}

/// Where a buffer's seeds come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Source {
    /// The stream: a thread's (fio's thread number, from 0).
    pub stream: u32,
    /// The seed of the buffer's first piece; piece `k` takes `first + k`.
    pub first: u64,
    /// True for a unique buffer (its seeds are the stream's next).
    pub unique: bool,
}

/// One worker's deduplicable buffers: draws, per write, whether it repeats another and which,
/// and fills it.
#[derive(Debug, Clone)]
pub struct DedupeGen {
    d: Dedupe,
    base: u64,
    own: u32,
    next_unique: u64,
    rng: Rng,
}

impl DedupeGen {
    /// The generator of a worker whose data stream has `seed` (`d` already for that worker:
    /// [`Dedupe::for_worker`]): its streams come from the run's seed (`d.seed`), its draws
    /// from `seed`.
    pub fn new(d: Dedupe, seed: u64) -> DedupeGen {
        let mut g = DedupeGen {
            d,
            base: mix(d.seed ^ 0x6465_6475_7065_7331),
            own: d.thread,
            next_unique: 0,
            // (each thread draws on its own, as fio's threads do, even from one seed)
            rng: Rng::new(seed ^ 0x6465_6475_7065_7264 ^ mix(d.thread as u64)),
        };
        let pieces = d.setup_len.div_ceil(d.chunk.max(1)).max(1);
        for _ in 0..d.setup_buffers {
            g.next_source(pieces);
        }
        g
    }

    /// The seed of piece `i` of `stream`.
    pub fn seed(&self, stream: u32, i: u64) -> u64 {
        mix(self.base ^ mix(stream as u64 + 1) ^ i.wrapping_mul(0xD6E8_FEB8_6659_FD93))
    }

    /// The source of the next buffer of `pieces` pieces (fio's `get_buf_state`), and the
    /// stream moved on past it when it is unique (`save_buf_state`).
    pub fn next_source(&mut self, pieces: u64) -> Source {
        let unique = Source {
            stream: self.own,
            first: self.next_unique,
            unique: true,
        };
        let src = if self.d.percentage >= 100 {
            // fio restores the state after each buffer: every buffer is the first one
            Source {
                stream: self.own,
                first: 0,
                unique: false,
            }
        } else if (self.rng.below(100) as u8) < self.d.percentage {
            match self.d.mode {
                DedupeMode::Repeat => Source {
                    unique: false,
                    ..unique
                },
                DedupeMode::WorkingSet { pages } => {
                    let i = self.rng.below(pages.max(1));
                    match self.d.global_threads {
                        Some(threads) if threads > 1 => {
                            let per = (pages / threads as u64).max(1);
                            Source {
                                stream: ((self.own as u64 + i / per) % threads as u64) as u32,
                                first: (i % per) * self.d.page_pieces.max(1),
                                unique: false,
                            }
                        }
                        _ => Source {
                            stream: self.own,
                            first: i * self.d.page_pieces.max(1),
                            unique: false,
                        },
                    }
                }
            }
        } else {
            unique
        };
        if src.unique {
            self.next_unique += pieces;
        }
        src
    }

    /// Fills a write buffer: its pieces of `chunk` bytes (the last may be shorter), each with
    /// `pattern` drawn from its seed.
    pub fn fill(&mut self, pattern: Pattern, buf: &mut [u8]) {
        let chunk = self.d.chunk.max(1) as usize;
        let pieces = buf.len().div_ceil(chunk) as u64;
        let src = self.next_source(pieces);
        // (at 100 % fio restores its state after every piece: every piece is the first)
        let step = u64::from(self.d.percentage < 100);
        for (k, piece) in buf.chunks_mut(chunk).enumerate() {
            let seed = self.seed(src.stream, src.first + k as u64 * step);
            pattern.fill(&mut Rng::new(seed), piece);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{HashMap, HashSet};

    fn spec(percentage: u8, mode: DedupeMode) -> Dedupe {
        Dedupe {
            percentage,
            mode,
            chunk: 4096,
            page_pieces: 1,
            seed: 0,
            thread: 0,
            global_threads: None,
            setup_buffers: 0,
            setup_len: 0,
        }
    }

    /// The buffers of `n` 4 KiB writes.
    fn writes(g: &mut DedupeGen, n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|_| {
                let mut b = vec![0u8; 4096];
                g.fill(Pattern::Random, &mut b);
                b
            })
            .collect()
    }

    fn distinct(bufs: &[Vec<u8>]) -> usize {
        bufs.iter().collect::<HashSet<_>>().len()
    }

    #[test]
    fn repeat_copies_the_next_unique_buffer() {
        let mut g = DedupeGen::new(spec(50, DedupeMode::Repeat), 7);
        let bufs = writes(&mut g, 4000);
        let d = distinct(&bufs);
        // about half unique (binomial: 2,000 ± 32)
        assert!((1850..2150).contains(&d), "{d}");
        // every repeat equals the next unique buffer written after it
        let mut seen_first: HashMap<&Vec<u8>, usize> = HashMap::new();
        for (i, b) in bufs.iter().enumerate() {
            seen_first.entry(b).or_insert(i);
        }
        let mut g = DedupeGen::new(spec(50, DedupeMode::Repeat), 7);
        let srcs: Vec<Source> = (0..4000).map(|_| g.next_source(1)).collect();
        for (i, s) in srcs.iter().enumerate() {
            if !s.unique {
                if let Some(j) = (i + 1..srcs.len()).find(|&j| srcs[j].unique) {
                    assert_eq!(bufs[i], bufs[j], "{i} {j}");
                }
            }
        }
        // none of the unique ones repeat another
        let uniques: Vec<_> = bufs
            .iter()
            .zip(&srcs)
            .filter(|(_, s)| s.unique)
            .map(|(b, _)| b.clone())
            .collect();
        assert_eq!(distinct(&uniques), uniques.len());
        // 0 % is not made here (no generator), 100 % is the first buffer again and again
        let mut g = DedupeGen::new(spec(100, DedupeMode::Repeat), 7);
        assert_eq!(distinct(&writes(&mut g, 100)), 1);
    }

    #[test]
    fn a_working_set_repeats_its_first_pages() {
        let mut g = DedupeGen::new(spec(30, DedupeMode::WorkingSet { pages: 100 }), 3);
        let srcs: Vec<Source> = (0..5000).map(|_| g.next_source(1)).collect();
        let repeats: Vec<_> = srcs.iter().filter(|s| !s.unique).collect();
        let share = repeats.len() as f64 / srcs.len() as f64;
        assert!((0.27..0.33).contains(&share), "{share}");
        assert!(repeats.iter().all(|s| s.first < 100 && s.stream == 0));
        // every page of the set is drawn
        let pages: HashSet<u64> = repeats.iter().map(|s| s.first).collect();
        assert_eq!(pages.len(), 100);
        // the unique ones take the seeds in order
        let uniques: Vec<u64> = srcs.iter().filter(|s| s.unique).map(|s| s.first).collect();
        assert!(uniques.iter().enumerate().all(|(i, &f)| f == i as u64));
    }

    #[test]
    fn a_global_working_set_spans_the_threads() {
        let d = Dedupe {
            global_threads: Some(3),
            ..spec(50, DedupeMode::WorkingSet { pages: 90 })
        };
        // thread 1's set: its own first 30 pages, then thread 2's, then thread 0's
        let mut g = DedupeGen::new(d.for_worker(1), 11);
        let mut by_stream: HashMap<u32, HashSet<u64>> = HashMap::new();
        for _ in 0..4000 {
            let s = g.next_source(1);
            if !s.unique {
                by_stream.entry(s.stream).or_default().insert(s.first);
            }
        }
        assert_eq!(by_stream.len(), 3);
        for (_, firsts) in by_stream {
            assert_eq!(firsts, (0..30).collect::<HashSet<u64>>());
        }
        // and the buffers are the other threads' own: thread 2's first unique buffer is made
        // by thread 1 the same
        let mut t2 = DedupeGen::new(d.for_worker(2), 99);
        let mut t1 = DedupeGen::new(d.for_worker(1), 11);
        assert_eq!(t1.seed(2, 0), t2.seed(2, 0));
        let mut mine = vec![0u8; 4096];
        loop {
            let s = t2.next_source(1);
            if s.unique && s.first == 0 {
                Pattern::Random.fill(&mut Rng::new(t2.seed(2, 0)), &mut mine);
                break;
            }
        }
        let bufs = writes(&mut t1, 2000);
        assert!(bufs.contains(&mine));
        // without the global set, two threads never share a buffer
        let ws = spec(50, DedupeMode::WorkingSet { pages: 90 });
        let mut a = DedupeGen::new(ws, 1);
        let mut b = DedupeGen::new(ws.for_worker(1), 2);
        let (a, b) = (writes(&mut a, 500), writes(&mut b, 500));
        let a: HashSet<_> = a.into_iter().collect();
        assert!(b.iter().all(|x| !a.contains(x)));
        // a global job's pages of a thread that is not in the global set are that thread's own
        // buffers (in fio both are the thread's buffer state)
        let own = DedupeGen::new(ws, 5);
        assert_eq!(own.seed(0, 3), t1.seed(0, 3));
        // another run seed, other data
        let other = DedupeGen::new(Dedupe { seed: 2, ..d }.for_worker(1), 11);
        assert_ne!(other.seed(2, 0), t1.seed(2, 0));
    }

    #[test]
    fn at_100_percent_every_piece_is_the_first() {
        let mut g = DedupeGen::new(spec(100, DedupeMode::Repeat), 4);
        let mut b = vec![0u8; 65536];
        g.fill(Pattern::Random, &mut b);
        let pieces: HashSet<&[u8]> = b.chunks(4096).collect();
        assert_eq!(pieces.len(), 1);
    }

    #[test]
    fn threads_have_streams_of_their_own_and_setup_takes_the_first() {
        // two jobs of one seed (fio's default randseed), two threads: no buffer in common
        let d = spec(50, DedupeMode::Repeat);
        let mut a = DedupeGen::new(d, 1);
        let mut b = DedupeGen::new(d.for_worker(1), 1);
        let (a, b) = (writes(&mut a, 500), writes(&mut b, 500));
        let a: HashSet<_> = a.into_iter().collect();
        assert!(b.iter().all(|x| !a.contains(x)));
        // and they draw apart: which of their buffers repeat differs
        let mut a = DedupeGen::new(d, 1);
        let mut b = DedupeGen::new(d.for_worker(1), 1);
        let (a, b): (Vec<bool>, Vec<bool>) = (0..200)
            .map(|_| (a.next_source(1).unique, b.next_source(1).unique))
            .unzip();
        assert_ne!(a, b);
        // 16 buffers of 16 KiB filled at setup: the first write's seeds come after theirs
        let setup = Dedupe {
            setup_buffers: 16,
            setup_len: 16384,
            ..spec(0, DedupeMode::Repeat)
        };
        let mut g = DedupeGen::new(setup, 3);
        assert_eq!(g.next_source(1).first, 64);
    }

    #[test]
    fn a_larger_write_is_made_of_pieces_of_the_smallest() {
        // bs 16 KiB over min_bs 4 KiB: a unique write takes four seeds, a repeat the next four
        let mut g = DedupeGen::new(spec(50, DedupeMode::Repeat), 5);
        let mut seen = HashSet::new();
        let mut pieces = 0usize;
        for _ in 0..500 {
            let mut b = vec![0u8; 16384];
            g.fill(Pattern::Compress(50), &mut b);
            for p in b.chunks(4096) {
                // half of each piece compressible
                assert!(p[2048..].iter().all(|&x| x == 0));
                seen.insert(p.to_vec());
                pieces += 1;
            }
        }
        assert!(seen.len() < pieces * 6 / 10 && seen.len() > pieces * 4 / 10);
        assert_eq!(g.next_unique as usize % 4, 0);
    }
}
