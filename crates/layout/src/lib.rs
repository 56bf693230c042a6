//! Linux md raid0 compatible stripe layout: zones, chunk mapping and request splitting.
//!
//! A [`StripeMap`] is built once from the members' sizes and the chunk ("stripe") size and is then
//! queried on the I/O hot path. Every query ([`StripeMap::map`], [`StripeMap::unmap`],
//! [`StripeMap::split`]) is pure and allocation-free.
//!
//! # The md raid0 layout
//!
//! * Every member is rounded down to a multiple of the chunk; what remains is the member's *used*
//!   size ([`StripeMap::member_used`]). Nothing beyond it is ever addressed.
//! * There is one zone per distinct used size. Zone 0 spans all members up to the smallest used
//!   size; each later zone spans only the members that are larger than where the previous zone
//!   ended on the members, in member order.
//! * Within a zone of `n` members that starts at logical offset `Z` and member offset `z`, the
//!   logical offset `off` lies in zone chunk `c = (off − Z) / chunk`, on the zone's
//!   `(c mod n)`-th member, at member offset `z + (c / n)·chunk + (off − Z) mod chunk`.
//!
//! That per-zone formula is what md calls `RAID0_ALT_MULTIZONE_LAYOUT` (the behaviour of Linux
//! 3.14 – 5.3), and it is what [`StripeMap::new`] builds. md's `RAID0_ORIG_LAYOUT` differs only in
//! which member of a later zone a chunk lands on: it counts chunks from the start of the *array*,
//! `member = (off / chunk) mod n`. Build it with [`StripeMap::with_layout`] and
//! [`MultiZoneLayout::Original`]. The two are identical whenever there is a single zone (all
//! members of equal used size) or every later zone has a single member.
//!
//! Requests are split at every chunk boundary they cross ([`StripeMap::split`]): a request that
//! crosses `k` boundaries becomes `k + 1` pieces, even when consecutive pieces land on the same
//! member (which happens with a single member, or at a zone change). Discards are split the same
//! way.

use std::fmt;
use std::iter::FusedIterator;

use serde::Serialize;

/// Why a [`StripeMap`] could not be built, or why a request does not fit it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LayoutError {
    /// No member sizes were given.
    #[error("no members")]
    NoMembers,
    /// The chunk ("stripe") size is zero.
    #[error("stripe size 0")]
    ZeroChunk,
    /// The members' block size is zero.
    #[error("block size 0")]
    ZeroBlockSize,
    /// The chunk size is not a whole number of member blocks.
    #[error(
        "stripe size {} is not a multiple of the members' block size {}",
        Human(*chunk),
        Human(*block_size)
    )]
    ChunkNotBlockMultiple {
        /// The chunk size given, in bytes.
        chunk: u64,
        /// The members' block size, in bytes.
        block_size: u64,
    },
    /// The chunk size is larger than one of the members (so that member would hold nothing).
    #[error("stripe size {} is larger than member {member} ({})", Human(*chunk), Human(*member_size))]
    ChunkLargerThanMember {
        /// The chunk size given, in bytes.
        chunk: u64,
        /// Index of the offending member (0-based, in the order given).
        member: usize,
        /// That member's size, in bytes.
        member_size: u64,
    },
    /// The members' total used size does not fit in a `u64`.
    #[error("total size of the members overflows 64 bits")]
    TooLarge,
    /// A request reaches past the end of the array.
    #[error(
        "request at offset {offset} of length {len} reaches past the end of the array ({size} bytes)"
    )]
    OutOfRange {
        /// Logical offset of the request, in bytes.
        offset: u64,
        /// Length of the request, in bytes.
        len: u64,
        /// Logical size of the array, in bytes.
        size: u64,
    },
}

/// Byte counts for messages: an exact binary unit when there is one ("64 KiB"), else the number.
struct Human(u64);

impl fmt::Display for Human {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [(u64, &str); 4] = [
            (1 << 40, "TiB"),
            (1 << 30, "GiB"),
            (1 << 20, "MiB"),
            (1 << 10, "KiB"),
        ];
        let v = self.0;
        if v != 0 {
            for (scale, unit) in UNITS {
                if v.is_multiple_of(scale) {
                    return write!(f, "{} {unit}", v / scale);
                }
            }
        }
        write!(f, "{v}")
    }
}

/// Which member a chunk of a later zone lands on (md's `raid0.layout`; irrelevant for one zone).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MultiZoneLayout {
    /// `RAID0_ALT_MULTIZONE_LAYOUT` (md layout 2): chunks are counted from the start of the zone,
    /// so every zone starts on its first member: zone offset + (chunk number within the zone mod
    /// members). Linux's default for new arrays (`drivers/md/raid0.c`), and ours.
    #[default]
    Alternate,
    /// `RAID0_ORIG_LAYOUT` (md layout 1): chunks are counted from the start of the array, so a
    /// later zone starts on member `(Z / chunk) mod n` of that zone.
    Original,
}

/// One zone of the array: a logical range striped over a subset of the members.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Zone {
    /// First logical byte of the zone.
    pub logical_start: u64,
    /// One past the last logical byte of the zone.
    pub logical_end: u64,
    /// Offset on each of the zone's members where the zone begins.
    pub member_start: u64,
    /// The members the zone stripes over, in member order.
    pub members: Vec<usize>,
}

impl Zone {
    /// One past the last member byte of the zone (on each of its members).
    pub fn member_end(&self) -> u64 {
        self.member_start + (self.logical_end - self.logical_start) / self.members.len() as u64
    }
}

/// One member I/O of a split request. Never crosses a chunk boundary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct Piece {
    /// Member index (0-based, in the order the sizes were given).
    pub member: usize,
    /// Byte offset on that member.
    pub member_offset: u64,
    /// Logical (array) byte offset of the piece.
    pub logical_offset: u64,
    /// Length in bytes (> 0).
    pub len: u64,
}

/// An md raid0 layout over members of given sizes. Build once; every query is allocation-free.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StripeMap {
    chunk: u64,
    block_size: u64,
    layout: MultiZoneLayout,
    size: u64,
    member_sizes: Vec<u64>,
    member_used: Vec<u64>,
    zones: Vec<Zone>,
    /// log2(chunk) when the chunk is a power of two (the usual case): shifts instead of divisions
    /// on the hot path.
    #[serde(skip)]
    chunk_shift: Option<u32>,
}

impl StripeMap {
    /// `(x / chunk, x % chunk)`, with a shift and a mask when the chunk is a power of two.
    #[inline(always)]
    fn chunk_divmod(&self, x: u64) -> (u64, u64) {
        match self.chunk_shift {
            Some(s) => (x >> s, x & (self.chunk - 1)),
            None => (x / self.chunk, x % self.chunk),
        }
    }

    /// Builds the layout with md's per-zone formula ([`MultiZoneLayout::Alternate`]).
    ///
    /// `chunk` must be non-zero, a multiple of `block_size` and no larger than any member; member
    /// sizes are rounded down to a multiple of `chunk`.
    pub fn new(member_sizes: &[u64], chunk: u64, block_size: u64) -> Result<Self, LayoutError> {
        Self::with_layout(member_sizes, chunk, block_size, MultiZoneLayout::default())
    }

    /// Like [`StripeMap::new`], choosing md's multi-zone layout explicitly.
    pub fn with_layout(
        member_sizes: &[u64],
        chunk: u64,
        block_size: u64,
        layout: MultiZoneLayout,
    ) -> Result<Self, LayoutError> {
        if member_sizes.is_empty() {
            return Err(LayoutError::NoMembers);
        }
        if chunk == 0 {
            return Err(LayoutError::ZeroChunk);
        }
        if block_size == 0 {
            return Err(LayoutError::ZeroBlockSize);
        }
        if !chunk.is_multiple_of(block_size) {
            return Err(LayoutError::ChunkNotBlockMultiple { chunk, block_size });
        }
        if let Some((member, &member_size)) =
            member_sizes.iter().enumerate().find(|&(_, &s)| s < chunk)
        {
            return Err(LayoutError::ChunkLargerThanMember {
                chunk,
                member,
                member_size,
            });
        }

        let member_used: Vec<u64> = member_sizes.iter().map(|&s| s - s % chunk).collect();
        let mut distinct = member_used.clone();
        distinct.sort_unstable();
        distinct.dedup();

        let mut zones = Vec::with_capacity(distinct.len());
        let mut logical = 0u64;
        let mut member_start = 0u64;
        for &member_end in &distinct {
            let members: Vec<usize> = (0..member_used.len())
                .filter(|&i| member_used[i] > member_start)
                .collect();
            let width = (member_end - member_start)
                .checked_mul(members.len() as u64)
                .ok_or(LayoutError::TooLarge)?;
            let logical_end = logical.checked_add(width).ok_or(LayoutError::TooLarge)?;
            zones.push(Zone {
                logical_start: logical,
                logical_end,
                member_start,
                members,
            });
            logical = logical_end;
            member_start = member_end;
        }

        Ok(StripeMap {
            chunk_shift: chunk.is_power_of_two().then(|| chunk.trailing_zeros()),
            chunk,
            block_size,
            layout,
            size: logical,
            member_sizes: member_sizes.to_vec(),
            member_used,
            zones,
        })
    }

    /// Logical capacity of the array in bytes (the sum of the members' used sizes).
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Chunk ("stripe") size in bytes.
    pub fn chunk(&self) -> u64 {
        self.chunk
    }

    /// The members' block size the chunk was checked against.
    pub fn block_size(&self) -> u64 {
        self.block_size
    }

    /// The multi-zone layout in use.
    pub fn layout(&self) -> MultiZoneLayout {
        self.layout
    }

    /// Number of members.
    pub fn members(&self) -> usize {
        self.member_used.len()
    }

    /// Size of member `i` as given. Panics if `i >= self.members()`.
    pub fn member_size(&self, i: usize) -> u64 {
        self.member_sizes[i]
    }

    /// Bytes of member `i` the array uses: its size rounded down to a multiple of the chunk.
    /// Panics if `i >= self.members()`.
    pub fn member_used(&self, i: usize) -> u64 {
        self.member_used[i]
    }

    /// The zones, in logical order (one per distinct used member size).
    pub fn zones(&self) -> &[Zone] {
        &self.zones
    }

    /// Index of the zone holding logical offset `offset` (`offset < size`).
    #[inline(always)]
    fn zone_of(&self, offset: u64) -> usize {
        // Nearly always one zone; never more zones than members.
        if self.zones.len() == 1 {
            return 0;
        }
        let mut i = 0;
        while self.zones[i].logical_end <= offset {
            i += 1;
        }
        i
    }

    /// True when `[offset, offset+len)` lies inside one chunk (the request is a single piece).
    #[inline(always)]
    pub fn within_one_chunk(&self, offset: u64, len: u64) -> bool {
        self.chunk_divmod(offset).1 + len <= self.chunk
    }

    /// Maps a logical offset to `(member, member offset)`.
    ///
    /// # Panics
    /// If `offset >= self.size()`.
    #[inline(always)]
    pub fn map(&self, offset: u64) -> (usize, u64) {
        assert!(
            offset < self.size,
            "offset {offset} is past the end of the array ({} bytes)",
            self.size
        );
        let zone = &self.zones[self.zone_of(offset)];
        let n = zone.members.len() as u64;
        let rel = offset - zone.logical_start;
        let (c, within) = self.chunk_divmod(rel);
        // Division by the member count, with shifts for the usual power-of-two counts.
        let divmod_n = |x: u64| {
            if n.is_power_of_two() {
                (x >> n.trailing_zeros(), x & (n - 1))
            } else {
                (x / n, x % n)
            }
        };
        let (stripe_no, c_mod) = divmod_n(c);
        let idx = match self.layout {
            MultiZoneLayout::Alternate => c_mod,
            MultiZoneLayout::Original => divmod_n(self.chunk_divmod(offset).0).1,
        };
        (
            zone.members[idx as usize],
            zone.member_start + stripe_no * self.chunk + within,
        )
    }

    /// Like [`StripeMap::map`], returning `None` instead of panicking past the end.
    #[inline]
    pub fn try_map(&self, offset: u64) -> Option<(usize, u64)> {
        (offset < self.size).then(|| self.map(offset))
    }

    /// Inverse of [`StripeMap::map`]: the logical offset stored at `member_offset` on `member`, or
    /// `None` if the member does not exist or the offset is at or beyond its used size.
    pub fn unmap(&self, member: usize, member_offset: u64) -> Option<u64> {
        if member_offset >= *self.member_used.get(member)? {
            return None;
        }
        // The member belongs to every zone up to its used size, so the zone holding this member
        // offset includes it.
        let zone = self.zones.iter().find(|z| member_offset < z.member_end())?;
        let n = zone.members.len() as u64;
        let pos = zone.members.iter().position(|&m| m == member)? as u64;
        let rel = member_offset - zone.member_start;
        let stripe = rel / self.chunk;
        let within = rel % self.chunk;
        let idx_in_stripe = match self.layout {
            MultiZoneLayout::Alternate => pos,
            MultiZoneLayout::Original => {
                let shift = (zone.logical_start / self.chunk) % n;
                (pos + n - shift) % n
            }
        };
        let c = stripe * n + idx_in_stripe;
        Some(zone.logical_start + c * self.chunk + within)
    }

    /// Number of pieces [`StripeMap::split`] yields for this request: the chunk boundaries it
    /// crosses plus one (0 for an empty request).
    #[inline]
    pub fn piece_count(&self, offset: u64, len: u64) -> usize {
        if len == 0 {
            0
        } else {
            ((offset + len - 1) / self.chunk - offset / self.chunk + 1) as usize
        }
    }

    /// Splits the request `[offset, offset + len)` at every chunk boundary it crosses.
    ///
    /// Yields `k + 1` [`Piece`]s for `k` boundaries crossed (none for `len == 0`), in logical
    /// order. Allocation-free. Precondition: `offset + len <= self.size()` (checked in debug
    /// builds; in release a violation panics in the iterator when it reaches the end of the array).
    /// Use [`StripeMap::try_split`] for a checked version.
    #[inline]
    pub fn split(&self, offset: u64, len: u64) -> Pieces<'_> {
        debug_assert!(
            offset.checked_add(len).is_some_and(|end| end <= self.size),
            "request at offset {offset} of length {len} reaches past the end of the array ({} bytes)",
            self.size
        );
        Pieces {
            map: self,
            cur: offset,
            end: offset.saturating_add(len),
        }
    }

    /// [`StripeMap::split`] with the range checked: `Err(OutOfRange)` if the request reaches past
    /// the end of the array.
    pub fn try_split(&self, offset: u64, len: u64) -> Result<Pieces<'_>, LayoutError> {
        match offset.checked_add(len) {
            Some(end) if end <= self.size => Ok(self.split(offset, len)),
            _ => Err(LayoutError::OutOfRange {
                offset,
                len,
                size: self.size,
            }),
        }
    }
}

/// Iterator over the member pieces of one request; see [`StripeMap::split`].
#[derive(Debug, Clone)]
pub struct Pieces<'a> {
    map: &'a StripeMap,
    cur: u64,
    end: u64,
}

impl Iterator for Pieces<'_> {
    type Item = Piece;

    #[inline]
    fn next(&mut self) -> Option<Piece> {
        if self.cur >= self.end {
            return None;
        }
        let (member, member_offset) = self.map.map(self.cur);
        let to_boundary = self.map.chunk - self.map.chunk_divmod(self.cur).1;
        let len = to_boundary.min(self.end - self.cur);
        let piece = Piece {
            member,
            member_offset,
            logical_offset: self.cur,
            len,
        };
        self.cur += len;
        Some(piece)
    }

    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for Pieces<'_> {
    #[inline]
    fn len(&self) -> usize {
        self.map
            .piece_count(self.cur, self.end.saturating_sub(self.cur))
    }
}

impl FusedIterator for Pieces<'_> {}

#[cfg(test)]
mod tests;
