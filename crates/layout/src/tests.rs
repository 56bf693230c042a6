use super::*;

const K: u64 = 1 << 10;
const M: u64 = 1 << 20;

fn pieces(map: &StripeMap, offset: u64, len: u64) -> Vec<(usize, u64, u64, u64)> {
    map.split(offset, len)
        .map(|p| (p.member, p.member_offset, p.logical_offset, p.len))
        .collect()
}

#[test]
fn two_equal_members_64k() {
    let m = StripeMap::new(&[M, M], 64 * K, 512).unwrap();
    assert_eq!(m.size(), 2 * M);
    assert_eq!(m.members(), 2);
    assert_eq!(m.chunk(), 64 * K);
    assert_eq!(m.member_used(0), M);
    assert_eq!(
        m.zones(),
        &[Zone {
            logical_start: 0,
            logical_end: 2 * M,
            member_start: 0,
            members: vec![0, 1],
        }]
    );
    assert_eq!(m.map(0), (0, 0));
    assert_eq!(m.map(64 * K - 1), (0, 64 * K - 1));
    assert_eq!(m.map(64 * K), (1, 0));
    assert_eq!(m.map(128 * K), (0, 64 * K));
    assert_eq!(m.map(200 * K), (1, 72 * K)); // chunk 3 -> member 1, stripe 1, +8K
    assert_eq!(m.map(2 * M - 1), (1, M - 1));
    assert_eq!(m.unmap(1, 72 * K), Some(200 * K));
    assert_eq!(m.unmap(1, M), None);
    assert_eq!(m.unmap(2, 0), None);
    assert_eq!(m.try_map(2 * M), None);

    // 8 KiB straddling the first boundary: two pieces on different members.
    assert_eq!(
        pieces(&m, 60 * K, 8 * K),
        vec![(0, 60 * K, 60 * K, 4 * K), (1, 0, 64 * K, 4 * K)]
    );
    // Exactly one chunk, aligned: one piece.
    assert_eq!(pieces(&m, 64 * K, 64 * K), vec![(1, 0, 64 * K, 64 * K)]);
    // Three chunks.
    assert_eq!(
        pieces(&m, 0, 192 * K),
        vec![
            (0, 0, 0, 64 * K),
            (1, 0, 64 * K, 64 * K),
            (0, 64 * K, 128 * K, 64 * K)
        ]
    );
    assert_eq!(pieces(&m, 100, 0), vec![]);
    assert_eq!(m.piece_count(60 * K, 8 * K), 2);
    assert_eq!(m.split(0, 192 * K).len(), 3);
}

#[test]
fn three_equal_members() {
    let m = StripeMap::new(&[M, M, M], 64 * K, 4096).unwrap();
    assert_eq!(m.size(), 3 * M);
    assert_eq!(m.zones().len(), 1);
    assert_eq!(m.map(5 * 64 * K + 100), (2, 64 * K + 100));
    assert_eq!(m.map(6 * 64 * K), (0, 128 * K));
    assert_eq!(m.unmap(2, 64 * K + 100), Some(5 * 64 * K + 100));
    // 200 KiB from 10 KiB: boundaries at 64K, 128K, 192K -> 4 pieces over members 0,1,2,0.
    assert_eq!(
        pieces(&m, 10 * K, 200 * K),
        vec![
            (0, 10 * K, 10 * K, 54 * K),
            (1, 0, 64 * K, 64 * K),
            (2, 0, 128 * K, 64 * K),
            (0, 64 * K, 192 * K, 18 * K)
        ]
    );
}

#[test]
fn single_member_splits_even_on_same_member() {
    let m = StripeMap::new(&[M], 64 * K, 512).unwrap();
    assert_eq!(
        pieces(&m, 32 * K, 64 * K),
        vec![(0, 32 * K, 32 * K, 32 * K), (0, 64 * K, 64 * K, 32 * K)]
    );
}

#[test]
fn unequal_members_zones() {
    // 1 MiB, 2 MiB, 2 MiB with 64 KiB chunks.
    let m = StripeMap::new(&[M, 2 * M, 2 * M], 64 * K, 512).unwrap();
    assert_eq!(m.size(), 5 * M);
    assert_eq!(
        m.zones(),
        &[
            Zone {
                logical_start: 0,
                logical_end: 3 * M,
                member_start: 0,
                members: vec![0, 1, 2],
            },
            Zone {
                logical_start: 3 * M,
                logical_end: 5 * M,
                member_start: M,
                members: vec![1, 2],
            },
        ]
    );
    assert_eq!(m.zones()[1].member_end(), 2 * M);
    // Last byte of zone 0: chunk 47 -> member 47 % 3 = 2, stripe 15.
    assert_eq!(m.map(3 * M - 1), (2, M - 1));
    // Zone 1 starts on its first member (member 1) at member offset 1 MiB.
    assert_eq!(m.map(3 * M), (1, M));
    assert_eq!(m.map(3 * M + 64 * K + 5), (2, M + 5));
    assert_eq!(m.map(3 * M + 128 * K), (1, M + 64 * K));
    assert_eq!(m.map(5 * M - 1), (2, 2 * M - 1));
    assert_eq!(m.unmap(0, M), None);
    assert_eq!(m.unmap(1, M), Some(3 * M));
    assert_eq!(m.unmap(2, 2 * M - 1), Some(5 * M - 1));
    // A request across the zone change.
    assert_eq!(
        pieces(&m, 3 * M - 4 * K, 8 * K),
        vec![(2, M - 4 * K, 3 * M - 4 * K, 4 * K), (1, M, 3 * M, 4 * K)]
    );
}

#[test]
fn three_distinct_sizes() {
    let m = StripeMap::new(&[M, 3 * M, 2 * M], 512 * K, 4096).unwrap();
    let z: Vec<_> = m
        .zones()
        .iter()
        .map(|z| {
            (
                z.logical_start,
                z.logical_end,
                z.member_start,
                z.members.clone(),
            )
        })
        .collect();
    assert_eq!(
        z,
        vec![
            (0, 3 * M, 0, vec![0, 1, 2]),
            (3 * M, 5 * M, M, vec![1, 2]),
            (5 * M, 6 * M, 2 * M, vec![1]),
        ]
    );
    assert_eq!(m.map(5 * M + 512 * K + 1), (1, 2 * M + 512 * K + 1));
}

#[test]
fn sizes_not_multiples_of_chunk() {
    let m = StripeMap::new(&[M + 1000, M + 70 * K], 64 * K, 512).unwrap();
    assert_eq!(m.member_size(0), M + 1000);
    assert_eq!(m.member_used(0), M);
    assert_eq!(m.member_used(1), M + 64 * K);
    assert_eq!(m.size(), 2 * M + 64 * K);
    assert_eq!(m.zones().len(), 2);
    assert_eq!(m.zones()[1].members, vec![1]);
    assert_eq!(m.map(2 * M), (1, M));
    assert_eq!(m.map(2 * M + 64 * K - 1), (1, M + 64 * K - 1));
    assert_eq!(m.unmap(0, M), None);
    assert_eq!(m.unmap(0, M - 1), Some(2 * M - 64 * K - 1));
    assert_eq!(m.unmap(1, M + 64 * K), None);
    assert!(m.try_split(2 * M, 64 * K).is_ok());
    assert!(m.try_split(2 * M, 64 * K + 1).is_err());
}

#[test]
fn original_vs_alternate_multizone() {
    // 1, 2, 2, 2 MiB: zone 0 holds 64 chunks, zone 1 has 3 members and 64 % 3 = 1.
    let sizes = [M, 2 * M, 2 * M, 2 * M];
    let alt = StripeMap::new(&sizes, 64 * K, 512).unwrap();
    let orig = StripeMap::with_layout(&sizes, 64 * K, 512, MultiZoneLayout::Original).unwrap();
    assert_eq!(alt.layout(), MultiZoneLayout::Alternate);
    assert_eq!(alt.zones(), orig.zones());
    let z1 = 4 * M;
    assert_eq!(alt.map(z1), (1, M));
    assert_eq!(alt.map(z1 + 64 * K), (2, M));
    assert_eq!(alt.map(z1 + 128 * K), (3, M));
    assert_eq!(alt.map(z1 + 192 * K), (1, M + 64 * K));
    assert_eq!(orig.map(z1), (2, M));
    assert_eq!(orig.map(z1 + 64 * K), (3, M));
    assert_eq!(orig.map(z1 + 128 * K), (1, M));
    assert_eq!(orig.map(z1 + 192 * K), (2, M + 64 * K));
    assert_eq!(orig.unmap(1, M), Some(z1 + 128 * K));
    assert_eq!(orig.unmap(2, M + 64 * K + 7), Some(z1 + 192 * K + 7));
    // Zone 0 is the same in both.
    for off in (0..z1).step_by(64 * K as usize / 2) {
        assert_eq!(alt.map(off), orig.map(off));
    }
}

#[test]
fn errors() {
    assert_eq!(
        StripeMap::new(&[], 64 * K, 512),
        Err(LayoutError::NoMembers)
    );
    let e = StripeMap::new(&[M], 0, 512).unwrap_err();
    assert_eq!(e, LayoutError::ZeroChunk);
    assert_eq!(e.to_string(), "stripe size 0");
    assert_eq!(
        StripeMap::new(&[M], 4096, 0).unwrap_err().to_string(),
        "block size 0"
    );
    assert_eq!(
        StripeMap::new(&[M], 3000, 512).unwrap_err().to_string(),
        "stripe size 3000 is not a multiple of the members' block size 512"
    );
    assert_eq!(
        StripeMap::new(&[M], 64 * K, 64 * K + 512)
            .unwrap_err()
            .to_string(),
        "stripe size 64 KiB is not a multiple of the members' block size 66048"
    );
    let e = StripeMap::new(&[2 * M, 2 * M, 512 * K], M, 512).unwrap_err();
    assert_eq!(
        e,
        LayoutError::ChunkLargerThanMember {
            chunk: M,
            member: 2,
            member_size: 512 * K
        }
    );
    assert_eq!(
        e.to_string(),
        "stripe size 1 MiB is larger than member 2 (512 KiB)"
    );
    assert_eq!(
        StripeMap::new(&[u64::MAX, u64::MAX], 4096, 512).unwrap_err(),
        LayoutError::TooLarge
    );
    assert_eq!(
        StripeMap::new(&[], 0, 0).unwrap_err().to_string(),
        "no members"
    );

    let m = StripeMap::new(&[M, M], 64 * K, 512).unwrap();
    let e = m.try_split(2 * M - 4096, 8192).unwrap_err();
    assert_eq!(
        e,
        LayoutError::OutOfRange {
            offset: 2 * M - 4096,
            len: 8192,
            size: 2 * M
        }
    );
    assert!(e.to_string().contains("2097152"));
    assert!(m.try_split(u64::MAX, 2).is_err());
    assert_eq!(m.try_split(2 * M, 0).unwrap().count(), 0);
}

#[test]
#[should_panic(expected = "past the end")]
fn map_past_end_panics() {
    let m = StripeMap::new(&[M, M], 64 * K, 512).unwrap();
    let _ = m.map(2 * M);
}

#[test]
fn human_sizes() {
    assert_eq!(Human(0).to_string(), "0");
    assert_eq!(Human(512).to_string(), "512");
    assert_eq!(Human(4096).to_string(), "4 KiB");
    assert_eq!(Human(1536 * K).to_string(), "1536 KiB");
    assert_eq!(Human(3 << 30).to_string(), "3 GiB");
    assert_eq!(Human(2 << 40).to_string(), "2 TiB");
}

#[test]
fn public_types_are_serialize_and_cheap() {
    fn ser<T: Serialize>() {}
    ser::<StripeMap>();
    ser::<Zone>();
    ser::<Piece>();
    ser::<MultiZoneLayout>();
    // Structure: the splitter owns nothing on the heap (a reference and two offsets).
    assert!(!std::mem::needs_drop::<Pieces<'static>>());
    assert!(std::mem::size_of::<Pieces<'static>>() <= 3 * std::mem::size_of::<u64>());
}

/// Counts allocations made by the current thread (tests run on several threads at once).
mod counting {
    use std::alloc::{GlobalAlloc, Layout, System};
    use std::cell::Cell;

    thread_local! {
        static ALLOCS: Cell<u64> = const { Cell::new(0) };
    }

    pub struct Counting;

    // SAFETY: forwards to the system allocator unchanged; only counts calls.
    unsafe impl GlobalAlloc for Counting {
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            // SAFETY: same contract as ours.
            unsafe { System.alloc(layout) }
        }
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            // SAFETY: same contract as ours.
            unsafe { System.dealloc(ptr, layout) }
        }
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
            // SAFETY: same contract as ours.
            unsafe { System.realloc(ptr, layout, new_size) }
        }
    }

    pub fn allocations() -> u64 {
        ALLOCS.with(|c| c.get())
    }
}

#[global_allocator]
static ALLOC: counting::Counting = counting::Counting;

#[test]
fn split_of_4k_does_not_allocate() {
    let m = StripeMap::new(&[M, 2 * M, 2 * M], 64 * K, 512).unwrap();
    let before_probe = counting::allocations();
    let probe: Vec<u64> = Vec::with_capacity(4);
    assert!(counting::allocations() > before_probe, "counter works");
    drop(probe);

    let before = counting::allocations();
    let mut total = 0u64;
    let mut n = 0usize;
    for off in (0..m.size() - 4 * K).step_by(3 * 1024 + 512) {
        for p in m.split(off, 4 * K) {
            total += p.len;
            n += 1;
        }
        total += m.map(off).1 & 1;
        total += m.unmap(0, off % M).unwrap_or(0) & 1;
    }
    let after = counting::allocations();
    assert_eq!(after, before, "split/map/unmap allocated");
    assert!(n > 0 && total > 0);
}
