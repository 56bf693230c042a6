//! Page-level mapping: logical unit → physical slot and back, per-unit NAND cost (compression,
//! sector remapping) and, in tracking mode, the data version of every physical sector.

use super::AllocError;
use crate::mem::HugeVec;

pub(crate) const UNMAPPED: u32 = u32::MAX;

/// A table of u32 entries whose initial state (every entry [`UNMAPPED`]) is all-zero memory:
/// entries are stored bit-inverted. A new table then costs no writes, and only the pages a run
/// touches are ever faulted in (a fresh 128 GB drive used over an 8 GiB span touches a few MiB
/// of its 250 MB of maps).
#[derive(Clone, Default)]
pub(crate) struct Map(HugeVec<u32>);

impl Map {
    pub(crate) fn try_new(len: usize, what: &'static str) -> Result<Map, AllocError> {
        const { assert!(!UNMAPPED == 0) };
        HugeVec::try_from_elem(0, len)
            .map(Map)
            .map_err(|bytes| AllocError::new(what, bytes))
    }
    #[inline]
    pub(crate) fn get(&self, i: usize) -> u32 {
        !self.0[i]
    }
    #[inline]
    pub(crate) fn set(&mut self, i: usize, v: u32) {
        self.0[i] = !v;
    }
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    /// The stored (inverted) entries, for prefetching.
    #[inline]
    pub(crate) fn raw(&self) -> &[u32] {
        &self.0
    }
    /// The stored (inverted) entries, for restoring a saved table.
    pub(crate) fn raw_mut(&mut self) -> &mut [u32] {
        &mut self.0
    }
    pub(crate) fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        self.0.iter().map(|&x| !x)
    }
}

/// The mapping tables.
#[derive(Clone, serde::Serialize, serde::Deserialize)]
pub(crate) struct Mapping {
    /// The tables are saved as raw blocks beside the serialised state (see `crate::state`).
    #[serde(skip)]
    pub l2p: Map,
    /// Reverse map. Never cleared on overwrite (that would cost a cache miss per host write): a
    /// slot is live exactly when the forward map points back at it.
    #[serde(skip)]
    pub p2l: Map,
    /// NAND sectors per unit when they vary (compression, sector remapping); empty otherwise.
    #[serde(skip)]
    pub cost: HugeVec<u8>,
    /// Data version per physical sector (tracking mode only).
    #[serde(skip)]
    pub ver: Option<HugeVec<u32>>,
    /// Sectors per unit.
    pub us: u32,
}

impl Mapping {
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
            HugeVec::try_from_elem(0, user_units)
                .map_err(|b| AllocError::new("per-unit cost table", b))?
        } else {
            HugeVec::new()
        };
        let ver = if tracking {
            Some(
                HugeVec::try_from_elem(0, total_slots * us as usize)
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
            us,
        })
    }

    /// Bytes [`Mapping::try_new`] allocates.
    pub(crate) fn bytes(
        user_units: u64,
        total_slots: u64,
        us: u64,
        variable_cost: bool,
        tracking: bool,
    ) -> u64 {
        let mut b = 4 * user_units + 4 * total_slots;
        if variable_cost {
            b += user_units;
        }
        if tracking {
            b += 4 * total_slots * us;
        }
        b
    }

    /// NAND sectors unit `l` occupies.
    #[inline]
    pub(crate) fn unit_cost(&self, l: usize) -> u32 {
        if self.cost.is_empty() {
            self.us
        } else {
            self.cost[l] as u32
        }
    }

    /// The logical unit stored in `slot`, if that data is still current.
    #[inline]
    pub(crate) fn live(&self, slot: usize) -> Option<usize> {
        let l = self.p2l.get(slot);
        (l != UNMAPPED && self.l2p.get(l as usize) == slot as u32).then_some(l as usize)
    }

    /// Points `l` at `slot`.
    #[inline]
    pub(crate) fn map(&mut self, l: usize, slot: u32) {
        self.p2l.set(slot as usize, l as u32);
        self.l2p.set(l, slot);
    }

    /// Copies the sector versions of slot `from` to slot `to` (tracking mode).
    #[inline]
    pub(crate) fn copy_versions(&mut self, from: u32, to: u32) {
        if let Some(ver) = self.ver.as_mut() {
            let us = self.us as usize;
            ver.copy_within(
                from as usize * us..from as usize * us + us,
                to as usize * us,
            );
        }
    }
}
