//! The host RAID driver's write-back cache (Intel RST's "volume write-back cache" and the like):
//! a write completes once the driver has copied it into host memory, and the driver writes the
//! dirty data to the member drives behind the host's back, in order per member, with a bounded
//! number of writes outstanding per member. A write that finds the cache full waits until
//! flushes free room; reads of data still in the cache are served from host memory; a TRIM
//! reaches its member after the dirty writes queued before it.
//!
//! Over any stretch of time the drives still take every byte the host wrote, so the cache can
//! raise the host's write rate above what the members sustain only while it fills: by at most its
//! size over the stretch.

use crate::{HostCmd, OpKind};
pub use ssdlab_stats::device::WriteCacheCounters;
use std::collections::{HashMap, VecDeque};

/// Granularity of the dirty map (reads are checked against it).
const BLOCK: u64 = 4096;

/// Settings of the write-back cache.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct WriteCacheConfig {
    /// Host memory the driver may hold dirty data in, bytes.
    pub bytes: u64,
    /// Rate at which the driver copies a write into (or a read hit out of) host memory, bytes/s.
    pub copy_bytes_per_sec: u64,
    /// Writes from the cache outstanding at once per member drive.
    pub flush_depth: u32,
}

impl WriteCacheConfig {
    /// A cache of `bytes` with a host-memory copy rate of 5 GB/s and up to 32 writes per member
    /// in flight (one SATA NCQ queue).
    pub fn with_size(bytes: u64) -> WriteCacheConfig {
        WriteCacheConfig {
            bytes,
            copy_bytes_per_sec: 5_000_000_000,
            flush_depth: 32,
        }
    }
}

/// What a queued item is.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) enum ItemKind {
    /// Dirty data to write to the member (the host's write completed already).
    Flush,
    /// A host command that goes to the member in order behind the dirty data (a TRIM, or a
    /// write larger than the whole cache): the host is told when the member completes it.
    Ordered { tag: u64 },
}

#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Item {
    pub kind: ItemKind,
    pub drive: u32,
    pub cmd: HostCmd,
    /// When the driver may hand it to the member (its copy into host memory done).
    pub ready: u64,
}

/// A host write waiting for room in the cache.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub(crate) struct Waiting {
    pub tag: u64,
    pub seq: u64,
    pub drive: u32,
    pub cmd: HostCmd,
    /// When the driver was done with it (its per-request time).
    pub t0: u64,
}

#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
struct Member {
    /// Items not yet handed to the member, in order.
    queue: VecDeque<Item>,
    inflight: u32,
}

/// The cache's state.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct WriteCache {
    pub cfg: WriteCacheConfig,
    /// Dirty bytes (taken in and not yet written to their member).
    pub used: u64,
    members: Vec<Member>,
    pub waiting: VecDeque<Waiting>,
    /// Dirty 4 KiB blocks per (drive, block): how many dirty writes cover each. Saved in key
    /// order, so a saved state does not depend on the map's hashing.
    #[serde(with = "sorted_map")]
    dirty: HashMap<u64, u32>,
    /// Items handed to members, by the index in their tag.
    arena: Vec<Item>,
    free: Vec<u32>,
    pub c: WriteCacheCounters,
}

mod sorted_map {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::HashMap;

    pub(super) fn serialize<S: Serializer>(m: &HashMap<u64, u32>, s: S) -> Result<S::Ok, S::Error> {
        let mut v: Vec<(u64, u32)> = m.iter().map(|(&k, &c)| (k, c)).collect();
        v.sort_unstable();
        v.serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<HashMap<u64, u32>, D::Error> {
        Ok(Vec::<(u64, u32)>::deserialize(d)?.into_iter().collect())
    }
}

/// Tags of commands the cache sends to the members (never a host tag).
pub(crate) const CACHE_TAG: u64 = 1 << 63;

impl WriteCache {
    pub(crate) fn new(cfg: WriteCacheConfig, drives: usize) -> WriteCache {
        WriteCache {
            cfg,
            used: 0,
            members: vec![Member::default(); drives],
            waiting: VecDeque::new(),
            dirty: HashMap::new(),
            arena: Vec::new(),
            free: Vec::new(),
            c: WriteCacheCounters::default(),
        }
    }

    /// Whether a cache read from a state file fits the array it is loaded for (`fresh`: one
    /// built for it): one queue per member, handed-out items within the arena.
    pub(crate) fn check_shape(&self, fresh: &WriteCache) -> Result<(), String> {
        if self.cfg != fresh.cfg || self.members.len() != fresh.members.len() {
            return Err("its write-back cache does not fit the array".into());
        }
        let n = self.arena.len() as u32;
        let drives = self.members.len() as u32;
        let items = self
            .members
            .iter()
            .flat_map(|m| &m.queue)
            .chain(&self.arena);
        if self.free.iter().any(|&i| i >= n)
            || items.clone().any(|it| it.drive >= drives)
            || self.waiting.iter().any(|w| w.drive >= drives)
        {
            return Err("its write-back cache refers to items or drives that do not exist".into());
        }
        Ok(())
    }

    /// Time to copy `bytes` into or out of host memory, ns.
    pub(crate) fn copy_ns(&self, bytes: u64) -> u64 {
        (bytes as u128 * 1_000_000_000).div_ceil(self.cfg.copy_bytes_per_sec.max(1) as u128) as u64
    }

    fn blocks(drive: u32, cmd: &HostCmd) -> impl Iterator<Item = u64> {
        let first = cmd.offset / BLOCK;
        let last = (cmd.offset + cmd.len.max(1)).div_ceil(BLOCK);
        (first..last).map(move |b| (drive as u64) << 48 | b)
    }

    /// Whether a read of `cmd` on `drive` touches dirty data.
    pub(crate) fn overlaps(&self, drive: u32, cmd: &HostCmd) -> bool {
        !self.dirty.is_empty() && Self::blocks(drive, cmd).any(|b| self.dirty.contains_key(&b))
    }

    /// Whether a write of `len` bytes can be taken in now (in order behind earlier waiters).
    pub(crate) fn has_room(&self, len: u64) -> bool {
        self.waiting.is_empty() && self.used + len <= self.cfg.bytes
    }

    /// Takes a write in: dirty from `ready` on.
    pub(crate) fn take(&mut self, drive: u32, cmd: HostCmd, ready: u64) {
        self.used += cmd.len;
        self.c.absorbed_bytes += cmd.len;
        self.c.peak_dirty_bytes = self.c.peak_dirty_bytes.max(self.used);
        for b in Self::blocks(drive, &cmd) {
            *self.dirty.entry(b).or_insert(0) += 1;
        }
        self.members[drive as usize].queue.push_back(Item {
            kind: ItemKind::Flush,
            drive,
            cmd,
            ready,
        });
    }

    /// Queues a host command behind the member's dirty data.
    pub(crate) fn order(&mut self, drive: u32, tag: u64, cmd: HostCmd, ready: u64) {
        self.members[drive as usize].queue.push_back(Item {
            kind: ItemKind::Ordered { tag },
            drive,
            cmd,
            ready,
        });
    }

    /// The next item member `drive` may be given at `now`, with the tag to give it under.
    pub(crate) fn next_for(&mut self, drive: u32, now: u64) -> Option<(u64, HostCmd)> {
        let depth = self.cfg.flush_depth.max(1);
        let m = &mut self.members[drive as usize];
        if m.inflight >= depth || m.queue.front().is_none_or(|i| i.ready > now) {
            return None;
        }
        let item = m.queue.pop_front()?;
        m.inflight += 1;
        let i = match self.free.pop() {
            Some(i) => {
                self.arena[i as usize] = item;
                i
            }
            None => {
                self.arena.push(item);
                (self.arena.len() - 1) as u32
            }
        };
        Some((CACHE_TAG | i as u64, item.cmd))
    }

    /// A command the cache gave a member completed: returns the item (a host command to
    /// complete, for [`ItemKind::Ordered`]).
    pub(crate) fn done(&mut self, tag: u64) -> Item {
        let i = (tag & !CACHE_TAG) as u32;
        let item = self.arena[i as usize];
        self.free.push(i);
        self.members[item.drive as usize].inflight -= 1;
        if item.kind == ItemKind::Flush {
            self.used -= item.cmd.len;
            self.c.flushed_bytes += item.cmd.len;
            for b in Self::blocks(item.drive, &item.cmd) {
                if let Some(n) = self.dirty.get_mut(&b) {
                    *n -= 1;
                    if *n == 0 {
                        self.dirty.remove(&b);
                    }
                }
            }
        }
        item
    }

    /// Whether anything is dirty, queued or outstanding.
    pub(crate) fn busy(&self) -> bool {
        self.used > 0
            || !self.waiting.is_empty()
            || self
                .members
                .iter()
                .any(|m| m.inflight > 0 || !m.queue.is_empty())
    }
}

/// A host write of `len` bytes larger than the whole cache goes to its member in order instead.
pub(crate) fn too_large(cfg: &WriteCacheConfig, cmd: &HostCmd) -> bool {
    cmd.kind == OpKind::Write && cmd.len > cfg.bytes
}
