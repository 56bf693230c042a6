//! The cached mapping table of a controller without DRAM for the whole map
//! (`controller.map_cache_bytes` > 0), after DFTL (Gupta, Kim and Urgaonkar, ASPLOS 2009) and
//! the host-memory-buffer drives of today.
//!
//! The full logical-to-physical table lives in flash as *translation pages*: one NAND page each,
//! holding [`MAP_ENTRY_BYTES`]-byte entries for consecutive mapping units. The controller keeps
//! as many translation pages as fit in `map_cache_bytes` (on-chip SRAM, or the host memory buffer
//! of a DRAM-less NVMe drive), least recently used out first. A command (or GC move) touching a
//! unit whose translation page is not cached waits for a NAND read of that page (a host read
//! cannot know where its data is before it); a cached page the command changes (a write, a GC
//! move) becomes dirty, and a dirty page pushed out of the cache is programmed back to flash.
//!
//! What the flash work looks like, and what is simplified:
//! - Translation page `t` lives on die `t mod dies`, plane `(t / dies) mod planes`, so map traffic
//!   spreads over the dies as the data does. Its reads and writes are NAND operations on that
//!   die, with the channel transfer of one page, in the native cell mode.
//! - Map reads are queued with the host reads (a host command waits for them); write-backs with
//!   the host programs, in order.
//! - The translation pages are written as a log into blocks of their own, outside the data
//!   blocks (about 0.1 % of the NAND for 4-byte entries of 4 KiB units; not taken from the spare
//!   area). Every `pages_per_block` write-backs on a die erase one translation block; a
//!   translation block is assumed to hold only stale copies by the time it is reused, so
//!   translation GC moves nothing.
//! - A translation page that was never written and covers no mapped unit is known to be empty:
//!   a miss on it costs no read (a fresh drive reads nothing to map its first writes).
//! - On a remapping drive (`unaligned = "remap"`) the fragment table shares the same memory:
//!   every fragmented unit takes [`FRAG_ENTRY_BYTES`](super::mapping::FRAG_ENTRY_BYTES) of it, so
//!   fragments push translation pages out of the cache.
//! - TRIM changes entries without loading their pages (firmware keeps trims in a bitmap).

use super::mapping::{FRAG_ENTRY_BYTES, UNMAPPED};
use super::{try_vec, AllocError, Ftl, NIL};
use crate::nand::Geometry;
use crate::sched::{Sched, Tx, C_PROG, C_READ, F_MAP, K_MAPW, K_READ};

/// Bytes of one mapping entry in a translation page (a 32-bit physical address).
pub(crate) const MAP_ENTRY_BYTES: u64 = 4;

#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Slot {
    tp: u32,
    /// Towards the most / least recently used end.
    newer: u32,
    older: u32,
    dirty: bool,
    /// When the page is in the controller: [`LOADING`] while its read is queued, then the time
    /// the read delivers it (0: long since).
    ready: u64,
}

/// [`Slot::ready`] of a page whose read is queued and not yet started.
pub(crate) const LOADING: u64 = u64::MAX;

/// What an access to a translation page needs from the flash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Access {
    /// The page must be read from the flash first.
    pub read: bool,
    /// Dirty translation pages pushed out of the cache (written back to the flash); at most two
    /// per access (the page that made room, and one more when fragments took room: the cache
    /// shrinks by a page per access until it fits beside them).
    pub evicted: [u32; 2],
    /// When the page is in the controller ([`LOADING`]: its read is queued; a hit on a page
    /// still being read waits for it too).
    pub ready: u64,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct MapCache {
    /// Mapping units per translation page.
    pub units_per_tp: u64,
    /// Bytes of cache memory.
    bytes: u64,
    tp_bytes: u64,
    /// Per translation page: its cache slot, or NIL.
    slot_of: Vec<u32>,
    /// Per translation page (bitmaps): whether it is known to be empty or on the flash, and
    /// whether it is on the flash.
    known: Vec<u64>,
    on_flash: Vec<u64>,
    slots: Vec<Slot>,
    mru: u32,
    lru: u32,
    /// Per die: translation pages written (an erase every `pages_per_block`).
    pub written: Vec<u64>,
    /// Host reads waiting for a translation page whose read has not started: (page, command).
    waiters: Vec<(u32, u32)>,
}

#[inline]
fn bit(v: &[u64], i: usize) -> bool {
    v[i / 64] >> (i % 64) & 1 != 0
}

#[inline]
fn set(v: &mut [u64], i: usize) {
    v[i / 64] |= 1 << (i % 64);
}

/// Mapping units per translation page of `page_bytes`, and translation pages for `units`.
fn tp_shape(page_bytes: u64, units: u64) -> (u64, u64) {
    let per = (page_bytes / MAP_ENTRY_BYTES).max(1);
    (per, units.div_ceil(per))
}

impl MapCache {
    /// Bytes [`MapCache::try_new`] allocates.
    pub(crate) fn memory_estimate(bytes: u64, page_bytes: u64, units: u64, dies: usize) -> u64 {
        let (_, tps) = tp_shape(page_bytes, units);
        let cap = (bytes / page_bytes).max(1).min(tps);
        tps * 4 + tps.div_ceil(64) * 16 + cap * size_of::<Slot>() as u64 + dies as u64 * 8
    }

    pub(crate) fn try_new(
        bytes: u64,
        page_bytes: u64,
        units: u64,
        dies: usize,
    ) -> Result<MapCache, AllocError> {
        let (per, tps) = tp_shape(page_bytes, units);
        let tps = tps as usize;
        Ok(MapCache {
            units_per_tp: per,
            bytes,
            tp_bytes: page_bytes,
            slot_of: try_vec(NIL, tps, "cached mapping table")?,
            known: try_vec(0u64, tps.div_ceil(64), "cached mapping table")?,
            on_flash: try_vec(0u64, tps.div_ceil(64), "cached mapping table")?,
            slots: Vec::new(),
            mru: NIL,
            lru: NIL,
            written: try_vec(0u64, dies, "cached mapping table")?,
            waiters: Vec::new(),
        })
    }

    /// Translation pages cached now.
    #[cfg(test)]
    pub(crate) fn cached(&self) -> usize {
        self.slots.len()
    }

    /// Translation pages the cache holds beside `frag_bytes` of fragment table (at least one).
    #[inline]
    pub(crate) fn capacity(&self, frag_bytes: u64) -> usize {
        ((self.bytes.saturating_sub(frag_bytes) / self.tp_bytes).max(1) as usize)
            .min(self.slot_of.len().max(1))
    }

    /// Whether translation page `tp` has a copy on the flash (written back, or known to cover
    /// mapped units: `covers_mapped` is asked once per page, on its first miss).
    fn on_flash(&mut self, tp: usize, covers_mapped: impl FnOnce() -> bool) -> bool {
        if !bit(&self.known, tp) {
            set(&mut self.known, tp);
            if covers_mapped() {
                set(&mut self.on_flash, tp);
            }
        }
        bit(&self.on_flash, tp)
    }

    /// Translation page `tp` is looked up (and changed when `dirty`) with `frag_bytes` of
    /// fragment table beside the cache; `covers_mapped` tells whether a page never seen before
    /// covers mapped units.
    #[inline]
    pub(crate) fn access(
        &mut self,
        tp: usize,
        dirty: bool,
        frag_bytes: u64,
        covers_mapped: impl FnOnce() -> bool,
    ) -> Access {
        let mut a = Access {
            read: false,
            evicted: [NIL; 2],
            ready: 0,
        };
        let s = self.slot_of[tp];
        if s != NIL {
            self.unlink(s);
            self.push_mru(s);
            self.slots[s as usize].dirty |= dirty;
            a.ready = self.slots[s as usize].ready;
            // fragments took room since: the least recently used page goes
            if self.slots.len() > self.capacity(frag_bytes) {
                let x = self.lru;
                if let Some(t) = self.evict(x) {
                    a.evicted[0] = t;
                }
                self.remove_slot(x);
            }
        } else {
            a.read = self.on_flash(tp, covers_mapped);
            let cap = self.capacity(frag_bytes);
            let mut n = 0;
            let s = if self.slots.len() < cap {
                self.slots.push(Slot {
                    tp: tp as u32,
                    newer: NIL,
                    older: NIL,
                    dirty: false,
                    ready: 0,
                });
                (self.slots.len() - 1) as u32
            } else {
                // reuse the least recently used slot; one more goes when fragments took room
                let mut s = self.lru;
                if let Some(t) = self.evict(s) {
                    a.evicted[n] = t;
                    n += 1;
                }
                if self.slots.len() > cap && self.lru != NIL {
                    let x = self.lru;
                    if let Some(t) = self.evict(x) {
                        a.evicted[n] = t;
                    }
                    // drop one slot from the array: both `s` and `x` are out of the list
                    let last = (self.slots.len() - 1) as u32;
                    if last == s {
                        self.slots.pop();
                        s = x;
                    } else if last == x {
                        self.slots.pop();
                    } else {
                        self.remove_slot(x);
                    }
                }
                self.slots[s as usize] = Slot {
                    tp: tp as u32,
                    newer: NIL,
                    older: NIL,
                    dirty: false,
                    ready: 0,
                };
                s
            };
            self.slot_of[tp] = s;
            self.push_mru(s);
            let sl = &mut self.slots[s as usize];
            sl.dirty = dirty;
            if a.read {
                sl.ready = LOADING;
                a.ready = LOADING;
            }
        }
        a
    }

    /// The read of translation page `tp` delivers it at `t`: a cached copy waiting for it is
    /// usable from `t` on.
    pub(crate) fn loaded(&mut self, tp: usize, t: u64) {
        let s = self.slot_of[tp];
        if s != NIL && self.slots[s as usize].ready == LOADING {
            self.slots[s as usize].ready = t;
        }
    }

    /// A host read waiting for translation page `tp`, taken off the list.
    #[inline]
    pub(crate) fn take_waiter(&mut self, tp: usize) -> Option<u32> {
        let i = self.waiters.iter().position(|&(t, _)| t as usize == tp)?;
        Some(self.waiters.remove(i).1)
    }

    /// Takes slot `s` out of the list and the index; returns its page when it was dirty (then
    /// it is on the flash from now on).
    fn evict(&mut self, s: u32) -> Option<u32> {
        self.unlink(s);
        let sl = self.slots[s as usize];
        self.slot_of[sl.tp as usize] = NIL;
        if sl.dirty {
            set(&mut self.known, sl.tp as usize);
            set(&mut self.on_flash, sl.tp as usize);
            Some(sl.tp)
        } else {
            None
        }
    }

    /// Removes unlinked slot `s` from the slot array: the last slot, which is in the list, moves
    /// into its place.
    fn remove_slot(&mut self, s: u32) {
        let last = (self.slots.len() - 1) as u32;
        if s != last {
            let moved = self.slots[last as usize];
            self.slots[s as usize] = moved;
            self.slot_of[moved.tp as usize] = s;
            if moved.newer != NIL {
                self.slots[moved.newer as usize].older = s;
            } else {
                self.mru = s;
            }
            if moved.older != NIL {
                self.slots[moved.older as usize].newer = s;
            } else {
                self.lru = s;
            }
        }
        self.slots.pop();
    }

    fn unlink(&mut self, s: u32) {
        let Slot { newer, older, .. } = self.slots[s as usize];
        if newer != NIL {
            self.slots[newer as usize].older = older;
        } else {
            self.mru = older;
        }
        if older != NIL {
            self.slots[older as usize].newer = newer;
        } else {
            self.lru = newer;
        }
    }

    fn push_mru(&mut self, s: u32) {
        let sl = &mut self.slots[s as usize];
        sl.newer = NIL;
        sl.older = self.mru;
        if self.mru != NIL {
            self.slots[self.mru as usize].newer = s;
        } else {
            self.lru = s;
        }
        self.mru = s;
    }

    /// Whether a cache read from a state file has the sizes the configuration gives (`fresh`)
    /// and links that stay inside its tables, with waiting reads among `cmds` command slots
    /// (checked before anything indexes with them).
    pub(crate) fn check_shape(&self, fresh: &MapCache, cmds: usize) -> Result<(), String> {
        if (self.units_per_tp, self.bytes, self.tp_bytes)
            != (fresh.units_per_tp, fresh.bytes, fresh.tp_bytes)
            || self.slot_of.len() != fresh.slot_of.len()
            || self.known.len() != fresh.known.len()
            || self.on_flash.len() != fresh.on_flash.len()
            || self.written.len() != fresh.written.len()
            || self.slots.len() > self.capacity(0)
        {
            return Err("its cached mapping table differs from the configuration's".into());
        }
        if self
            .waiters
            .iter()
            .any(|&(tp, e)| tp as usize >= self.slot_of.len() || e as usize >= cmds)
        {
            return Err("its cached mapping table has a waiting read out of range".into());
        }
        let n = self.slots.len() as u32;
        let ok = |s: u32| s == NIL || s < n;
        if !ok(self.mru)
            || !ok(self.lru)
            || self.slot_of.iter().any(|&s| !ok(s))
            || self
                .slots
                .iter()
                .any(|sl| sl.tp as usize >= self.slot_of.len() || !ok(sl.newer) || !ok(sl.older))
        {
            return Err("its cached mapping table links outside the table".into());
        }
        self.check()
    }

    /// Invariants (tests): the list holds every slot once, from MRU to LRU, and the index
    /// agrees with it.
    pub(crate) fn check(&self) -> Result<(), String> {
        let mut n = 0;
        let mut s = self.mru;
        let mut prev = NIL;
        while s != NIL {
            let sl = self.slots[s as usize];
            if sl.newer != prev {
                return Err(format!("map cache: slot {s} links back to {}", sl.newer));
            }
            if self.slot_of[sl.tp as usize] != s {
                return Err(format!("map cache: page {} not indexed at slot {s}", sl.tp));
            }
            n += 1;
            if n > self.slots.len() {
                return Err("map cache: the list loops".into());
            }
            prev = s;
            s = sl.older;
        }
        if prev != self.lru || n != self.slots.len() {
            return Err(format!(
                "map cache: {n} slots listed of {}, LRU end {prev} not {}",
                self.slots.len(),
                self.lru
            ));
        }
        let indexed = self.slot_of.iter().filter(|&&s| s != NIL).count();
        if indexed != n {
            return Err(format!("map cache: {indexed} pages indexed, {n} cached"));
        }
        // (fragments may have grown since the last access: the cache shrinks at later accesses)
        if n > self.capacity(0) {
            return Err(format!(
                "map cache: {n} pages cached, room for {}",
                self.capacity(0)
            ));
        }
        Ok(())
    }
}

/// Where translation page `tp` lives: its die, the plane within the die, and a block of that
/// plane standing for its translation block (it places the transaction; its data is not
/// touched).
#[inline]
fn tp_place(g: &Geometry, tp: usize) -> (usize, u8, u32) {
    let (d, p) = (tp % g.dies, tp / g.dies % g.planes);
    (d, p as u8, ((d * g.planes + p) * g.bpp) as u32)
}

impl Ftl {
    /// Units `u0..u1` are looked up at `ready` (and changed when `dirty`) through the cached
    /// mapping table: each translation page missing from the cache is read from the flash, and
    /// each dirty page pushed out is written back. For host read `owner` (NIL: a write or GC
    /// move, which does not wait) returns the pages it must wait for, whose reads have not
    /// started, and the time the other pages it needs are in the controller. (Kept out of line:
    /// drives without the cache only test whether there is one.)
    #[inline(never)]
    pub(crate) fn map_touch(
        &mut self,
        u0: u64,
        u1: u64,
        dirty: bool,
        ready: u64,
        owner: u32,
        sched: &mut Sched,
    ) -> (u32, u64) {
        let Some(mc) = self.mcache.as_mut() else {
            return (0, 0);
        };
        if u1 <= u0 {
            return (0, 0);
        }
        let per = mc.units_per_tp;
        let frag_bytes = if self.remap {
            self.map.frags.0.len() as u64 * FRAG_ENTRY_BYTES
        } else {
            0
        };
        let (mut waits, mut at) = (0, 0);
        for tp in (u0 / per) as usize..=((u1 - 1) / per) as usize {
            let map = &self.map;
            let units = self.user_units as usize;
            let a = mc.access(tp, dirty, frag_bytes, || {
                let lo = tp * per as usize;
                (lo..(lo + per as usize).min(units)).any(|l| map.l2p.get(l) != UNMAPPED)
            });
            self.c.map_lookups += 1;
            if a.read {
                self.c.map_misses += 1;
                let (d, plane, blk) = tp_place(&self.g, tp);
                // (its page in the translation block: lower and upper pages alternate)
                let page = (tp / self.g.planes_total) as u32 % self.g.ppb;
                sched.enqueue(
                    d,
                    C_READ,
                    Tx {
                        ready,
                        kind: K_READ,
                        plane,
                        flags: F_MAP,
                        page,
                        blk,
                        owner: NIL,
                        group: tp as u32,
                        bytes: self.g.page_bytes as u32,
                        host_bytes: 0,
                        next: NIL,
                        enq: 0,
                    },
                );
            }
            if owner != NIL {
                if a.ready == LOADING {
                    mc.waiters.push((tp as u32, owner));
                    waits += 1;
                } else {
                    at = at.max(a.ready);
                }
            }
            for t in a.evicted.into_iter().filter(|&t| t != NIL) {
                let (d, plane, blk) = tp_place(&self.g, t as usize);
                sched.enqueue(
                    d,
                    C_PROG,
                    Tx {
                        ready,
                        kind: K_MAPW,
                        plane,
                        flags: 0,
                        page: 0,
                        blk,
                        owner: NIL,
                        group: NIL,
                        bytes: self.g.page_bytes as u32,
                        host_bytes: 0,
                        next: NIL,
                        enq: 0,
                    },
                );
            }
        }
        (waits, at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(pages: u64) -> MapCache {
        // 4 KiB pages: 1024 entries each; 64 translation pages in all
        MapCache::try_new(pages * 4096, 4096, 64 * 1024, 4).unwrap()
    }

    #[test]
    fn least_recently_used_goes_first_and_dirty_pages_are_written_back() {
        let mut c = cache(2);
        assert_eq!(c.units_per_tp, 1024);
        // never written and covering nothing mapped: no read
        let a = c.access(0, true, 0, || false);
        assert!(!a.read);
        let a = c.access(1, false, 0, || true);
        assert!(a.read);
        // 0 is touched again: 1 is now the least recently used
        assert!(!c.access(0, false, 0, || unreachable!()).read);
        let a = c.access(2, false, 0, || true);
        assert_eq!(a.evicted, [NIL; 2], "page 1 was clean");
        let a = c.access(3, false, 0, || false);
        assert_eq!(a.evicted[0], 0, "page 0 was dirty");
        // written back: its next miss reads it
        assert!(c.access(0, false, 0, || false).read);
        c.check().unwrap();
    }

    #[test]
    fn a_page_being_read_is_ready_when_its_read_delivers_it() {
        let mut c = cache(2);
        let a = c.access(5, false, 0, || true);
        assert!(a.read);
        assert_eq!(a.ready, LOADING);
        // a second lookup before the read started: a hit, still loading
        let b = c.access(5, false, 0, || unreachable!());
        assert!(!b.read);
        assert_eq!(b.ready, LOADING);
        c.waiters.push((5, 7));
        c.loaded(5, 1234);
        assert_eq!(c.take_waiter(5), Some(7));
        assert_eq!(c.take_waiter(5), None);
        assert_eq!(c.access(5, false, 0, || unreachable!()).ready, 1234);
    }

    #[test]
    fn fragments_take_room_from_the_cache() {
        let mut c = cache(4);
        for t in 0..4 {
            c.access(t, true, 0, || true);
        }
        assert_eq!(c.cached(), 4);
        // two pages' worth of fragment entries: the next miss makes room for them
        let a = c.access(10, false, 2 * 4096, || true);
        assert_eq!(c.cached(), 3);
        assert_eq!(a.evicted, [0, 1]);
        c.check().unwrap();
        assert_eq!(c.capacity(1 << 40), 1, "at least one page stays");
    }

    #[test]
    fn the_list_survives_random_use() {
        let mut c = cache(5);
        let mut x = 12345u64;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let frag = (x >> 40) % 3 * 4096;
            let before = c.cached();
            c.access((x % 64) as usize, x & 1 == 0, frag, || true);
            // never above the memory; over what fragments leave it, it only shrinks (one page
            // per access)
            assert!(c.cached() <= c.capacity(0));
            if c.cached() > c.capacity(frag) {
                assert!(c.cached() <= before);
            }
            c.check().unwrap();
        }
    }
}
