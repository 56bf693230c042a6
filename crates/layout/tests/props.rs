//! Property tests for the md raid0 layout.

use proptest::prelude::*;
use ssdlab_layout::{MultiZoneLayout, StripeMap};
use std::collections::HashSet;

fn layout_strategy() -> impl Strategy<Value = MultiZoneLayout> {
    prop_oneof![
        Just(MultiZoneLayout::Alternate),
        Just(MultiZoneLayout::Original)
    ]
}

/// A small array: 1–5 members of 1–8 chunks plus a random tail, block 512 or 4096, chunk 1–16
/// blocks (not necessarily a power of two).
fn small_config() -> impl Strategy<Value = (Vec<u64>, u64, u64, MultiZoneLayout)> {
    (prop_oneof![Just(512u64), Just(4096u64)], 1u64..=16)
        .prop_flat_map(|(block, k)| {
            let chunk = block * k;
            (
                prop::collection::vec((1u64..=8, 0..chunk), 1..=5),
                Just(chunk),
                Just(block),
                layout_strategy(),
            )
        })
        .prop_map(|(members, chunk, block, layout)| {
            let sizes = members.iter().map(|&(c, tail)| c * chunk + tail).collect();
            (sizes, chunk, block, layout)
        })
}

/// A large array: 1–8 members of up to ~16 TiB, power-of-two chunks 4 KiB–1 MiB.
fn large_config() -> impl Strategy<Value = (Vec<u64>, u64, MultiZoneLayout)> {
    (
        prop::collection::vec(1u64 << 20..1u64 << 44, 1..=8),
        12u32..=20,
        layout_strategy(),
    )
        .prop_map(|(sizes, shift, layout)| (sizes, 1u64 << shift, layout))
}

fn build(sizes: &[u64], chunk: u64, block: u64, layout: MultiZoneLayout) -> StripeMap {
    StripeMap::with_layout(sizes, chunk, block, layout).expect("valid config")
}

fn check_zones(m: &StripeMap) {
    let mut logical = 0;
    let mut member_start = 0;
    let total_used: u64 = (0..m.members()).map(|i| m.member_used(i)).sum();
    assert_eq!(m.size(), total_used);
    for (i, z) in m.zones().iter().enumerate() {
        assert_eq!(z.logical_start, logical);
        assert!(z.logical_end > z.logical_start);
        assert_eq!(z.member_start, member_start);
        assert_eq!(z.logical_start % m.chunk(), 0);
        assert!(z.members.windows(2).all(|w| w[0] < w[1]), "member order");
        let expect: Vec<usize> = (0..m.members())
            .filter(|&j| m.member_used(j) > z.member_start)
            .collect();
        assert_eq!(z.members, expect);
        if i == 0 {
            assert_eq!(z.members.len(), m.members());
        }
        logical = z.logical_end;
        member_start = z.member_end();
    }
    assert_eq!(logical, m.size());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Every byte of every member's used space is the image of exactly one logical byte, checked
    /// exhaustively at block granularity; map and unmap are inverse.
    #[test]
    fn exhaustive_bijection_small((sizes, chunk, block, layout) in small_config()) {
        let m = build(&sizes, chunk, block, layout);
        check_zones(&m);
        for (i, &s) in sizes.iter().enumerate() {
            prop_assert_eq!(m.member_used(i), s - s % chunk);
        }
        let mut hits: Vec<Vec<u8>> =
            (0..m.members()).map(|i| vec![0u8; (m.member_used(i) / block) as usize]).collect();
        for lb in 0..m.size() / block {
            let off = lb * block;
            let (member, moff) = m.map(off);
            prop_assert!(moff < m.member_used(member));
            prop_assert_eq!(moff % block, 0);
            // The whole block maps contiguously (a chunk is a whole number of blocks).
            prop_assert_eq!(m.map(off + block - 1), (member, moff + block - 1));
            hits[member][(moff / block) as usize] += 1;
            prop_assert_eq!(m.unmap(member, moff), Some(off));
            prop_assert_eq!(m.unmap(member, moff + block - 1), Some(off + block - 1));
        }
        for (i, h) in hits.iter().enumerate() {
            prop_assert!(h.iter().all(|&c| c == 1), "member {} blocks hit {:?}", i, h);
        }
        for i in 0..m.members() {
            prop_assert_eq!(m.unmap(i, m.member_used(i)), None);
            prop_assert_eq!(m.unmap(i, u64::MAX), None);
        }
        prop_assert_eq!(m.unmap(m.members(), 0), None);
        prop_assert_eq!(m.try_map(m.size()), None);
    }

    /// Random byte offsets on large arrays: map lands in used space, unmap inverts it, and
    /// distinct offsets land on distinct member bytes.
    #[test]
    fn random_bijection_large(
        (sizes, chunk, layout) in large_config(),
        fracs in prop::collection::vec(0.0f64..1.0, 1..64),
    ) {
        let m = build(&sizes, chunk, 512, layout);
        check_zones(&m);
        let mut seen = HashSet::new();
        let mut offs = HashSet::new();
        for f in fracs {
            let off = ((m.size() as f64 * f) as u64).min(m.size() - 1);
            let (member, moff) = m.map(off);
            prop_assert!(moff < m.member_used(member));
            prop_assert_eq!(m.unmap(member, moff), Some(off));
            if offs.insert(off) {
                prop_assert!(seen.insert((member, moff)), "two offsets map to {:?}", (member, moff));
            }
        }
        // The very ends of every zone.
        for z in m.zones() {
            for off in [z.logical_start, z.logical_end - 1] {
                let (member, moff) = m.map(off);
                prop_assert!(z.members.contains(&member));
                prop_assert!(moff >= z.member_start && moff < z.member_end());
                prop_assert_eq!(m.unmap(member, moff), Some(off));
            }
        }
    }

    /// Splitting gives back exactly the request, one chunk per piece at most, k+1 pieces for k
    /// boundaries crossed, each piece contiguous on one member and within its used space.
    #[test]
    fn split_reassembles(
        (sizes, chunk, block, layout) in small_config(),
        a in 0.0f64..1.0,
        b in 0.0f64..1.0,
    ) {
        let m = build(&sizes, chunk, block, layout);
        let start = (m.size() as f64 * a) as u64;
        let len = ((m.size() - start) as f64 * b) as u64;
        let pieces = m.split(start, len);
        let expected_count = if len == 0 {
            0
        } else {
            (start + len - 1) / chunk - start / chunk + 1
        };
        prop_assert_eq!(pieces.len() as u64, expected_count);
        prop_assert_eq!(m.piece_count(start, len) as u64, expected_count);
        let mut cur = start;
        let mut count = 0u64;
        let mut it = pieces;
        while let Some(p) = it.next() {
            count += 1;
            prop_assert_eq!(it.len() as u64, expected_count - count);
            prop_assert_eq!(p.logical_offset, cur);
            prop_assert!(p.len > 0);
            prop_assert_eq!(p.logical_offset / chunk, (p.logical_offset + p.len - 1) / chunk);
            prop_assert_eq!(m.map(p.logical_offset), (p.member, p.member_offset));
            prop_assert_eq!(
                m.map(p.logical_offset + p.len - 1),
                (p.member, p.member_offset + p.len - 1)
            );
            prop_assert!(p.member_offset + p.len <= m.member_used(p.member));
            cur += p.len;
        }
        prop_assert!(it.next().is_none());
        prop_assert_eq!(count, expected_count);
        prop_assert_eq!(cur, start + len);
        // The checked form agrees, and refuses one byte more than fits.
        prop_assert_eq!(m.try_split(start, len).unwrap().count() as u64, expected_count);
        prop_assert!(m.try_split(start, m.size() - start + 1).is_err());
    }

    /// Splits of large arrays with block-aligned requests of typical sizes.
    #[test]
    fn split_large(
        (sizes, chunk, layout) in large_config(),
        a in 0.0f64..1.0,
        len_blocks in 1u64..=4096,
    ) {
        let m = build(&sizes, chunk, 512, layout);
        let len = (len_blocks * 512).min(m.size());
        let start = (((m.size() - len) as f64 * a) as u64) / 512 * 512;
        let mut cur = start;
        let mut n = 0;
        for p in m.split(start, len) {
            prop_assert_eq!(p.logical_offset, cur);
            prop_assert!(p.len <= chunk);
            prop_assert!(p.member_offset + p.len <= m.member_used(p.member));
            prop_assert_eq!(m.unmap(p.member, p.member_offset), Some(p.logical_offset));
            cur += p.len;
            n += 1;
        }
        prop_assert_eq!(cur, start + len);
        prop_assert_eq!(n, m.piece_count(start, len));
    }

    /// Equal members: StripeMap agrees with the textbook formula, whichever multi-zone layout.
    #[test]
    fn equal_members_match_reference(
        n in 1usize..=8,
        chunk_blocks in 1u64..=256,
        size in 1u64 << 20..1u64 << 40,
        layout in layout_strategy(),
        fracs in prop::collection::vec(0.0f64..1.0, 1..64),
    ) {
        let chunk = chunk_blocks * 4096;
        prop_assume!(size >= chunk);
        let m = build(&vec![size; n], chunk, 4096, layout);
        let r = Reference::new(n as u64, size, chunk);
        prop_assert_eq!(m.size(), r.size());
        prop_assert_eq!(m.zones().len(), 1);
        for f in fracs {
            let off = ((r.size() as f64 * f) as u64).min(r.size() - 1);
            prop_assert_eq!(m.map(off), r.map(off));
        }
        for off in [0, chunk - 1, chunk, r.size() - 1] {
            if off < r.size() {
                prop_assert_eq!(m.map(off), r.map(off));
            }
        }
    }
}

/// md raid0 over `n` equal members, straight from the definition: chunk `c` of the array is
/// chunk `c / n` of member `c mod n`.
struct Reference {
    n: u64,
    used: u64,
    chunk: u64,
}

impl Reference {
    fn new(n: u64, member_size: u64, chunk: u64) -> Self {
        Reference {
            n,
            used: member_size / chunk * chunk,
            chunk,
        }
    }
    fn size(&self) -> u64 {
        self.n * self.used
    }
    fn map(&self, off: u64) -> (usize, u64) {
        let c = off / self.chunk;
        let member = c % self.n;
        let member_chunk = c / self.n;
        (
            member as usize,
            member_chunk * self.chunk + off % self.chunk,
        )
    }
}

/// Alternate and Original agree everywhere in zone 0 and whenever there is one zone.
#[test]
fn layouts_agree_in_zone0() {
    let sizes = [1 << 20, 5 << 20, 5 << 20, 7 << 20];
    let a = StripeMap::new(&sizes, 64 << 10, 512).unwrap();
    let o = StripeMap::with_layout(&sizes, 64 << 10, 512, MultiZoneLayout::Original).unwrap();
    let z0 = a.zones()[0].logical_end;
    for off in (0..z0).step_by(4096) {
        assert_eq!(a.map(off), o.map(off));
    }
    let differs = (z0..a.size())
        .step_by(64 << 10)
        .any(|off| a.map(off) != o.map(off));
    assert!(differs, "the layouts differ in a later zone of 3 members");
}
