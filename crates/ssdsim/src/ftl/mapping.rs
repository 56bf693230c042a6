//! Page-level mapping: logical unit → physical slot and back, per-unit NAND cost (compression,
//! sector remapping), the fragments of partly rewritten units (sector remapping) and, in
//! tracking mode, the data version of every physical sector.
//!
//! **Fragments** (`unaligned = "remap"`). A write that covers part of a mapping unit is
//! programmed alone, without reading the rest of the unit: the unit's slot (the forward map's
//! entry) then holds only the sectors written last, and the sectors it does not cover stay
//! where they were, in the unit's previous slot, which keeps counting them as valid data. A
//! unit thus lies in at most two slots; a [`Frag`] says which sectors each holds. A read of
//! sectors held by the older slot reads that slot's page too, and a rewrite that would leave
//! old sectors in two older slots merges them first (the controller reads both and programs the
//! whole unit). Garbage collection merges a fragmented unit whenever it moves either part, so
//! fragments live until their blocks are collected or the unit is rewritten whole.

use super::AllocError;
use crate::mem::{SparseVec, CHUNK_BYTES};
use rustc_hash::FxHashMap;

pub(crate) const UNMAPPED: u32 = u32::MAX;

/// A table of u32 entries whose initial state (every entry [`UNMAPPED`]) is all-zero memory:
/// entries are stored bit-inverted. The table is sparse ([`SparseVec`]): memory is allocated
/// per 64 KiB chunk on the first write into it, so a fresh 8 TB drive used over an 8 GiB span
/// holds a few MiB of its 16 GB of maps, in address space as well as in resident memory.
#[derive(Clone, Default)]
pub(crate) struct Map(SparseVec<u32>);

impl Map {
    pub(crate) fn try_new(len: usize, what: &'static str) -> Result<Map, AllocError> {
        const { assert!(!UNMAPPED == 0) };
        SparseVec::try_zeroed(len)
            .map(Map)
            .map_err(|bytes| AllocError::new(what, bytes))
    }
    #[inline(always)]
    pub(crate) fn get(&self, i: usize) -> u32 {
        !self.0.get(i)
    }
    #[inline(always)]
    pub(crate) fn set(&mut self, i: usize, v: u32) {
        self.0.set(i, !v);
    }
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    /// Entry `i`, or `None` when `i` is out of range.
    #[inline(always)]
    pub(crate) fn try_get(&self, i: usize) -> Option<u32> {
        self.0.try_get(i).map(|x| !x)
    }
    /// Entry `i` as a place to read and write more than once (its chunk is allocated now):
    /// one directory lookup for a read followed by writes. Panics when `i >= len`.
    #[inline(always)]
    pub(crate) fn entry(&mut self, i: usize) -> Entry {
        Entry(self.0.addr_mut(i))
    }
    /// Starts loading entry `i` into the cache (nothing when out of range).
    #[inline(always)]
    pub(crate) fn prefetch(&self, i: usize) {
        self.0.prefetch(i);
    }
    /// The stored (inverted) entries, for saving and restoring a table.
    pub(crate) fn raw(&self) -> &SparseVec<u32> {
        &self.0
    }
    /// The stored (inverted) entries, for restoring a saved table.
    pub(crate) fn raw_mut(&mut self) -> &mut SparseVec<u32> {
        &mut self.0
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().map(|x| !x)
    }
}

/// One entry of a [`Map`] ([`Map::entry`]).
#[derive(Clone, Copy)]
pub(crate) struct Entry(*mut u32);

impl Entry {
    /// # Safety
    /// The map the entry came from is alive (not dropped or replaced).
    #[inline(always)]
    pub(crate) unsafe fn get(self) -> u32 {
        // SAFETY: the caller guarantees the map is alive; its chunks never move.
        !unsafe { *self.0 }
    }
    /// # Safety
    /// As for [`Entry::get`].
    #[inline(always)]
    pub(crate) unsafe fn set(self, v: u32) {
        // SAFETY: as in get; the entry's chunk was allocated when the entry was taken.
        unsafe { *self.0 = !v }
    }
}

/// Where the sectors of a unit lie when its slot does not hold all of them (`remap` policy).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Frag {
    /// Sectors the unit's slot (the forward map's entry) holds; bit `i` is sector `i` of the
    /// unit. Sectors in neither mask were never written (or were trimmed with the unit).
    pub pmask: u32,
    /// Sectors an older slot still holds (0: none; the unit lies in one slot).
    pub fmask: u32,
    /// That older slot (meaningful when `fmask != 0`).
    pub fslot: u32,
    /// NAND sectors of the older slot still valid.
    pub fcost: u32,
}

/// The fragment table: one [`Frag`] per unit whose slot holds less than the whole unit. Saved
/// in unit order, so a saved state does not depend on the hash order.
#[derive(Clone, Default, Debug)]
pub(crate) struct Frags(pub FxHashMap<u32, Frag>);

impl serde::Serialize for Frags {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut v: Vec<(u32, Frag)> = self.0.iter().map(|(&k, &f)| (k, f)).collect();
        v.sort_unstable_by_key(|e| e.0);
        serde::Serialize::serialize(&v, s)
    }
}

impl<'de> serde::Deserialize<'de> for Frags {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v: Vec<(u32, Frag)> = serde::Deserialize::deserialize(d)?;
        Ok(Frags(v.into_iter().collect()))
    }
}

/// Bytes a fragment table entry takes (key, value, the hash table's control byte and its
/// spare capacity).
pub(crate) const FRAG_ENTRY_BYTES: u64 = 32;

/// The NAND sectors still valid of a part of a unit that held the sectors `before` at a cost
/// of `cost` and holds `after` (a subset) now: in proportion, at least one while any is left.
#[inline]
pub(crate) fn shrink(cost: u32, before: u32, after: u32) -> u32 {
    if after == 0 {
        0
    } else if after == before {
        cost
    } else {
        (cost * after.count_ones() / before.count_ones().max(1)).max(1)
    }
}

/// The sector mask of sectors `a..b` of a unit (`b <= 32`).
#[inline]
pub(crate) fn sector_mask(a: u64, b: u64) -> u32 {
    let upto = |n: u64| if n >= 32 { u32::MAX } else { (1u32 << n) - 1 };
    upto(b) & !upto(a)
}

fn built() -> bool {
    true
}

/// The mapping tables.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Mapping {
    /// The tables are saved as raw blocks beside the serialised state (see `crate::state`).
    #[serde(skip)]
    pub l2p: Map,
    /// Reverse map. Never cleared on overwrite (that would cost a cache miss per host write): a
    /// slot is live exactly when the forward map, or the unit's fragment entry, points back at
    /// it. Only garbage collection reads it, and it may be left unbuilt until then
    /// ([`Mapping::p2l_built`]).
    #[serde(skip)]
    pub p2l: Map,
    /// Whether `p2l` holds every live slot. False while an untimed fill runs and after it
    /// (`Ftl::precondition`), until garbage collection picks a block whose slots were mapped
    /// without their reverse entries ([`Mapping::p2l_missing`]); then [`Mapping::ensure_p2l`]
    /// builds the table from the forward map. A real drive keeps the unit a page holds in the
    /// page's spare area on flash, not in DRAM, and reads it when it collects the block; so a
    /// full 1 TB drive that is only read holds its 1 GB forward map and not a second 1 GB
    /// table.
    #[serde(skip, default = "built")]
    pub p2l_built: bool,
    /// While `p2l` is not built: per block, whether slots of it were mapped without a reverse
    /// entry (`Ftl::map_unit` keeps the entries of SLC blocks, which an untimed fill folds).
    #[serde(skip)]
    pub p2l_missing: Vec<bool>,
    /// While `p2l` is not built: per block, whether slots of it were mapped with a reverse
    /// entry (SLC blocks; blocks a timed write reaches), which keeps the table's chunks under
    /// the block ([`Mapping::keep_block`]).
    #[serde(skip)]
    pub p2l_kept: Vec<bool>,
    /// While `p2l` is not built: per chunk of it, the kept blocks whose slots lie in it. A
    /// chunk no kept block lies in holds only entries of erased blocks, and is given back
    /// ([`Mapping::drop_block`]): an untimed fill of a drive with a dynamic SLC cache passes
    /// SLC blocks over the whole drive, and would otherwise leave the whole table allocated.
    #[serde(skip)]
    pub p2l_refs: Vec<u32>,
    /// NAND sectors per unit when they vary (compression, sector remapping); empty otherwise.
    #[serde(skip)]
    pub cost: SparseVec<u8>,
    /// Data version per physical sector (tracking mode only).
    #[serde(skip)]
    pub ver: Option<SparseVec<u32>>,
    /// Units not wholly in their slot (`remap` policy only; empty otherwise).
    pub frags: Frags,
    /// Sectors per unit.
    pub us: u32,
}

impl Mapping {
    /// Shares the tables with every later clone, copying a chunk only when it is first written
    /// (see [`SparseVec::freeze`]).
    pub(crate) fn freeze(&mut self) {
        self.l2p.0.freeze();
        self.p2l.0.freeze();
        self.cost.freeze();
        if let Some(v) = &mut self.ver {
            v.freeze();
        }
    }

    pub(crate) fn try_new(
        user_units: usize,
        total_slots: usize,
        us: u32,
        variable_cost: bool,
        tracking: bool,
    ) -> Result<Mapping, AllocError> {
        let l2p = Map::try_new(user_units, "logical-to-physical map")?;
        let p2l = Map::try_new(total_slots, "physical-to-logical map")?;
        let cost = if variable_cost {
            SparseVec::try_zeroed(user_units)
                .map_err(|b| AllocError::new("per-unit cost table", b))?
        } else {
            SparseVec::new()
        };
        let ver = if tracking {
            Some(
                SparseVec::try_zeroed(total_slots * us as usize)
                    .map_err(|b| AllocError::new("version table", b))?,
            )
        } else {
            None
        };
        Ok(Mapping {
            l2p,
            p2l,
            cost,
            ver,
            frags: Frags::default(),
            us,
            p2l_built: true,
            p2l_missing: Vec::new(),
            p2l_kept: Vec::new(),
            p2l_refs: Vec::new(),
        })
    }

    /// Leaves the reverse map unbuilt ([`Mapping::p2l_built`]) on a drive of `blocks` blocks
    /// that maps nothing yet.
    pub(crate) fn unbuild_p2l(&mut self, blocks: usize) {
        self.p2l_built = false;
        self.p2l_missing = vec![false; blocks];
        self.p2l_kept = vec![false; blocks];
        self.p2l_refs = vec![0; self.p2l.raw().chunk_count()];
    }

    /// The chunks of the reverse map under the slots `slots`.
    fn p2l_chunks(slots: std::ops::Range<usize>) -> std::ops::Range<usize> {
        let per = SparseVec::<u32>::PER_CHUNK;
        slots.start / per..slots.end.div_ceil(per)
    }

    /// While the reverse map is not built: block `blk`, whose slots are `slots`, holds reverse
    /// entries from now on, so the chunks under it are kept until it is erased.
    #[inline]
    pub(crate) fn keep_block(&mut self, blk: usize, slots: std::ops::Range<usize>) {
        if self.p2l_built || self.p2l_kept[blk] {
            return;
        }
        self.p2l_kept[blk] = true;
        for k in Self::p2l_chunks(slots) {
            self.p2l_refs[k] += 1;
        }
    }

    /// While the reverse map is not built: block `blk`, whose slots are `slots`, was erased.
    /// A chunk of the reverse map no kept block lies in any more holds only dead entries: it
    /// is given back (its entries read unmapped again).
    pub(crate) fn drop_block(&mut self, blk: usize, slots: std::ops::Range<usize>) {
        if self.p2l_built {
            return;
        }
        self.p2l_missing[blk] = false;
        if !std::mem::take(&mut self.p2l_kept[blk]) {
            return;
        }
        for k in Self::p2l_chunks(slots) {
            self.p2l_refs[k] -= 1;
            if self.p2l_refs[k] == 0 {
                self.p2l.0.release_chunk(k);
            }
        }
    }

    /// Builds the reverse map from the forward map and the fragments' older slots when it is
    /// not built ([`Mapping::p2l_built`]); the entries of dead slots stay unmapped, as after
    /// loading a saved state.
    pub(crate) fn ensure_p2l(&mut self) {
        if self.p2l_built {
            return;
        }
        let per = SparseVec::<u32>::PER_CHUNK;
        let (l2p, p2l) = (&self.l2p, &mut self.p2l);
        for (k, chunk) in l2p.raw().allocated() {
            for (i, &stored) in chunk.iter().enumerate() {
                // entries are stored inverted: 0 is UNMAPPED
                if stored != 0 {
                    p2l.set(!stored as usize, (k * per + i) as u32);
                }
            }
        }
        for (&l, f) in &self.frags.0 {
            if f.fmask != 0 {
                p2l.set(f.fslot as usize, l);
            }
        }
        self.p2l_built = true;
        self.p2l_missing = Vec::new();
        self.p2l_kept = Vec::new();
        self.p2l_refs = Vec::new();
    }

    /// Bytes the tables take when a run writes at most `written_units` mapping units in a
    /// region of `region_units` (at most `user_units`, one contiguous run) and `touched_slots`
    /// physical slots (in `slot_runs` contiguous runs): the directories, and every chunk the
    /// writes can reach, rounded up to whole 2 MiB slabs. With everything touched this is the
    /// size of the flat tables (rounded up to 2 MiB) plus the directories.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn bytes(
        user_units: u64,
        total_slots: u64,
        us: u64,
        variable_cost: bool,
        tracking: bool,
        (region_units, written_units): (u64, u64),
        (touched_slots, slot_runs): (u64, u64),
    ) -> u64 {
        // a unit written lies in one chunk: no more chunks than units written
        let l2p = |size| table_bytes(size, user_units, region_units, 1, written_units);
        let p2l = |per_slot: u64| {
            let (n, t) = (total_slots * per_slot, touched_slots * per_slot);
            table_bytes(4, n, t, slot_runs, u64::MAX)
        };
        let mut b = l2p(4) + p2l(1);
        if variable_cost {
            b += l2p(1);
        }
        if tracking {
            b += p2l(us);
        }
        b
    }

    /// Bytes the reverse map takes more once built ([`Mapping::ensure_p2l`]): 0 when built.
    pub(crate) fn p2l_pending_bytes(&self) -> u64 {
        if self.p2l_built {
            return 0;
        }
        (self.p2l.len() as u64 * 4).saturating_sub(self.p2l.raw().allocated_bytes() as u64)
    }

    /// Bytes of memory the tables hold now (directories and allocated chunks).
    pub(crate) fn held_bytes(&self) -> u64 {
        self.frags.0.capacity() as u64 * FRAG_ENTRY_BYTES
            + (self.l2p.raw().allocated_bytes()
                + self.p2l.raw().allocated_bytes()
                + self.cost.allocated_bytes()
                + self.ver.as_ref().map_or(0, |v| v.allocated_bytes())) as u64
    }

    /// NAND sectors unit `l` occupies.
    #[inline(always)]
    pub(crate) fn unit_cost(&self, l: usize) -> u32 {
        if self.cost.is_empty() {
            self.us
        } else {
            self.cost.get(l) as u32
        }
    }

    /// The logical unit stored in `slot`, if that data is still current (the unit's slot, or
    /// the older slot of a fragmented unit).
    #[inline]
    pub(crate) fn live(&self, slot: usize) -> Option<usize> {
        self.live_part(slot).map(|(l, _)| l)
    }

    /// The logical unit stored in `slot` and the NAND sectors of it still valid there, if that
    /// data is still current.
    #[inline]
    pub(crate) fn live_part(&self, slot: usize) -> Option<(usize, u32)> {
        let l = self.p2l.get(slot);
        if l == UNMAPPED {
            return None;
        }
        if self.l2p.get(l as usize) == slot as u32 {
            return Some((l as usize, self.unit_cost(l as usize)));
        }
        if !self.frags.0.is_empty() {
            if let Some(f) = self.frags.0.get(&l) {
                if f.fmask != 0 && f.fslot == slot as u32 {
                    return Some((l as usize, f.fcost));
                }
            }
        }
        None
    }

    /// [`Mapping::live_part`] for a drive without fragments: only the forward map counts.
    #[inline(always)]
    pub(crate) fn live_whole(&self, slot: usize) -> Option<(usize, u32)> {
        let l = self.p2l.get(slot);
        (l != UNMAPPED && self.l2p.get(l as usize) == slot as u32)
            .then(|| (l as usize, self.unit_cost(l as usize)))
    }

    /// The fragment entry of unit `l`, if it has one.
    #[inline]
    pub(crate) fn frag(&self, l: usize) -> Option<Frag> {
        if self.frags.0.is_empty() {
            None
        } else {
            self.frags.0.get(&(l as u32)).copied()
        }
    }

    /// Points `l` at `slot`.
    #[inline(always)]
    pub(crate) fn map(&mut self, l: usize, slot: u32) {
        self.p2l.set(slot as usize, l as u32);
        self.l2p.set(l, slot);
    }

    /// Copies the sector versions of slot `from` to slot `to` (tracking mode).
    #[inline]
    pub(crate) fn copy_versions(&mut self, from: u32, to: u32) {
        if let Some(ver) = self.ver.as_mut() {
            let us = self.us as usize;
            for i in 0..us {
                let v = ver.get(from as usize * us + i);
                ver.set(to as usize * us + i, v);
            }
        }
    }
}

/// Bytes of a sparse table of `len` entries of `size` bytes when `touched` entries in `runs`
/// contiguous runs are written (reaching at most `cap` chunks): its directory and the chunks
/// those runs can reach (a run reaches one chunk more than its length fills), in whole slabs
/// of 2 MiB (a table smaller than a slab takes one slab of its own size).
fn table_bytes(size: u64, len: u64, touched: u64, runs: u64, cap: u64) -> u64 {
    let chunk = CHUNK_BYTES as u64;
    let per = chunk / size;
    let chunks = len.div_ceil(per);
    // the read and the write directory, 8 bytes per chunk each
    let dir = chunks * 16;
    let touched = touched.min(len);
    if touched == 0 || cap == 0 {
        return dir;
    }
    let reach = (touched.div_ceil(per) + runs.max(1)).min(chunks).min(cap);
    let slab = 2 << 20;
    dir + if chunks * chunk < slab {
        chunks * chunk
    } else {
        (reach * chunk).next_multiple_of(slab)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn map_reads_unmapped_until_written_and_allocates_by_touch() {
        let per = SparseVec::<u32>::PER_CHUNK;
        let mut m = Map::try_new(64 * per, "test").unwrap();
        assert!(m.iter().take(1000).all(|x| x == UNMAPPED));
        assert_eq!(m.get(64 * per - 1), UNMAPPED);
        m.set(per - 1, 5);
        m.set(per, 0);
        assert_eq!(
            (m.get(per - 1), m.get(per), m.get(per + 1)),
            (5, 0, UNMAPPED)
        );
        assert_eq!(m.raw().allocated_chunks(), 2);
        let c = m.clone();
        assert_eq!(c.get(per - 1), 5);
        assert_eq!(c.raw().allocated_chunks(), 2);
    }

    #[test]
    fn estimate_covers_a_contiguous_run() {
        let per = SparseVec::<u32>::PER_CHUNK as u64;
        let len = 1000 * per;
        for (start, n) in [(0, 1), (per - 1, 2), (17, 5 * per), (3 * per + 1, 40 * per)] {
            let mut m = Map::try_new(len as usize, "test").unwrap();
            for i in start..start + n {
                m.set(i as usize, i as u32);
            }
            let real = m.raw().allocated_bytes() as u64;
            let est = table_bytes(4, len, n, 1, u64::MAX);
            assert!(
                real <= est,
                "run {start}+{n}: {real} allocated > {est} estimated"
            );
            assert!(
                est <= real + (2 << 20),
                "run {start}+{n}: estimate {est} far above {real}"
            );
        }
        // everything: the flat table in whole 2 MiB slabs plus the two directories
        assert_eq!(
            table_bytes(4, len, len, 1, u64::MAX),
            (4 * len).next_multiple_of(2 << 20) + len / per * 16
        );
        assert_eq!(table_bytes(4, per, 1, 1, 1), 4 * per + 16);
        // scattered writes: at most one chunk per unit written
        assert_eq!(table_bytes(4, len, len, 1, 3), (2 << 20) + len / per * 16);
        assert_eq!(table_bytes(4, len, 0, 1, u64::MAX), len / per * 16);
    }
}
