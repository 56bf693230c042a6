//! Data verification: every 512-byte sector a verifying write puts on the medium carries a header
//! (magic, CRC32C, its own logical offset, a generation and the run's seed) followed by
//! pseudo-random filler. A verifying read checks each sector against what is known to have been
//! written there ([`check_known`]: the written-map of earlier verifying runs says, per sector,
//! which seed last wrote it):
//!
//! - a sector known to be written must carry a valid header for its offset and that seed; a
//!   zeroed or garbage sector, or one whose magic was damaged, is corruption;
//! - a sector with our magic must have a valid CRC and its own offset;
//! - a sector that nobody recorded and that has no magic, or a valid header of another run, is
//!   not known to be current (reported separately as "unwritten", not as an error: a map that was
//!   lost, or a run killed before it recorded, must not turn intact data into false alarms).
//!
//! Layout of a sector: `[0..4) "SSDV" | [4..8) crc32c of [8..512) | [8..16) logical offset |
//! [16..24) generation | [24..32) seed | [32..512) filler`, integers little-endian.

use crate::rng::Rng;

pub const SECTOR: usize = 512;
const MAGIC: [u8; 4] = *b"SSDV";

/// Writes verification sectors for a block written at logical `offset` (a multiple of 512).
pub fn stamp(buf: &mut [u8], offset: u64, generation: u64, seed: u64, rng: &mut Rng) {
    for sector in buf.chunks_exact_mut(SECTOR) {
        rng.fill(&mut sector[32..]);
    }
    stamp_over(buf, offset, generation, seed);
}

/// [`stamp`] keeping the filler `buf` already holds (a fixed pattern: fio's `verify_pattern`
/// after its header).
pub fn stamp_over(buf: &mut [u8], offset: u64, generation: u64, seed: u64) {
    for (i, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        sector[0..4].copy_from_slice(&MAGIC);
        sector[8..16].copy_from_slice(&(offset + (i * SECTOR) as u64).to_le_bytes());
        sector[16..24].copy_from_slice(&generation.to_le_bytes());
        sector[24..32].copy_from_slice(&seed.to_le_bytes());
        let crc = crc32c::crc32c(&sector[8..]);
        sector[4..8].copy_from_slice(&crc.to_le_bytes());
    }
}

/// What checking one block found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Sectors with a valid header for this offset and seed.
    pub ok: u64,
    /// Sectors without our magic (never written by a verifying run), and sectors with a valid
    /// header of a run not known to be current.
    pub unwritten: u64,
    /// Of `unwritten`, those without our magic at all, and the first of them.
    pub no_header: u64,
    pub first_no_header: Option<u64>,
    /// Sectors with our magic but a bad CRC, a wrong offset or a foreign seed.
    pub bad: u64,
    /// The first bad sector: (logical offset, reason).
    pub first_bad: Option<(u64, BadSector)>,
}

/// Why a sector failed verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadSector {
    Crc,
    /// The written-map says a verifying run with this seed wrote the sector, but it holds no
    /// verification header (zeroed, overwritten, or its magic damaged).
    Lost {
        expected_seed: u64,
    },
    /// The sector holds data written for another offset (misplaced data).
    Offset {
        found: u64,
    },
    /// The sector was written by a run with another seed.
    Seed {
        found: u64,
    },
}

impl std::fmt::Display for BadSector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadSector::Crc => write!(f, "CRC32C mismatch (corrupted data)"),
            BadSector::Lost { expected_seed } => write!(
                f,
                "was written by a verifying run (seed {expected_seed}) but holds no verification \
                 header (lost, zeroed or overwritten data)"
            ),
            BadSector::Offset { found } => {
                write!(f, "holds data written for offset {found} (misplaced data)")
            }
            BadSector::Seed { found } => write!(f, "written by a run with seed {found}"),
        }
    }
}

/// Checks a block read from logical `offset` when nothing is known about earlier writes.
pub fn check(buf: &[u8], offset: u64, seed: u64) -> CheckOutcome {
    check_known(buf, offset, seed, |_| None)
}

/// Checks a block read from logical `offset`; `known(sector_offset)` is the seed of the verifying
/// run that last wrote the sector, when the written-map knows it.
pub fn check_known(
    buf: &[u8],
    offset: u64,
    seed: u64,
    known: impl Fn(u64) -> Option<u64>,
) -> CheckOutcome {
    check_run(buf, offset, seed, u64::MAX, known)
}

/// [`check_known`] during a run that stamps its writes with generations above `run_epoch`
/// (its start): a sector with this run's seed and such a generation was written by this run
/// (by any of its workers) after the written-map was read, so it is current whatever the map
/// says of the run before.
pub fn check_run(
    buf: &[u8],
    offset: u64,
    seed: u64,
    run_epoch: u64,
    known: impl Fn(u64) -> Option<u64>,
) -> CheckOutcome {
    let mut out = CheckOutcome::default();
    for (i, sector) in buf.chunks_exact(SECTOR).enumerate() {
        let at = offset + (i * SECTOR) as u64;
        let expected = known(at);
        if sector[0..4] != MAGIC {
            match expected {
                Some(expected_seed) => {
                    out.bad += 1;
                    out.first_bad
                        .get_or_insert((at, BadSector::Lost { expected_seed }));
                }
                None => {
                    out.unwritten += 1;
                    out.no_header += 1;
                    out.first_no_header.get_or_insert(at);
                }
            }
            continue;
        }
        let u64_at = |r: std::ops::Range<usize>| u64::from_le_bytes(sector[r].try_into().unwrap());
        let crc = u32::from_le_bytes(sector[4..8].try_into().unwrap());
        let reason = if crc32c::crc32c(&sector[8..]) != crc {
            Some(BadSector::Crc)
        } else if u64_at(8..16) != at {
            Some(BadSector::Offset {
                found: u64_at(8..16),
            })
        } else if u64_at(24..32) == seed && u64_at(16..24) > run_epoch {
            // written by this run
            None
        } else if u64_at(24..32) != expected.unwrap_or(seed) {
            if expected.is_none() {
                // A valid header of another run that nobody recorded (its map was lost, or a
                // run was killed before it could record): intact, but not known to be current.
                out.unwritten += 1;
                continue;
            }
            Some(BadSector::Seed {
                found: u64_at(24..32),
            })
        } else {
            None
        };
        match reason {
            None => out.ok += 1,
            Some(r) => {
                out.bad += 1;
                out.first_bad.get_or_insert((at, r));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip_and_detection() {
        let mut rng = Rng::new(1);
        let mut buf = vec![0u8; 4096];
        stamp(&mut buf, 8192, 7, 42, &mut rng);
        assert_eq!(check(&buf, 8192, 42).ok, 8);
        // Misplaced: read back as if it were at another offset.
        let c = check(&buf, 4096, 42);
        assert_eq!(c.bad, 8);
        assert_eq!(c.first_bad, Some((4096, BadSector::Offset { found: 8192 })));
        // A valid header of another run nobody recorded: intact but not known to be current.
        let c = check(&buf, 8192, 43);
        assert_eq!((c.ok, c.unwritten, c.bad), (0, 8, 0));
        // Corruption of one byte in the third sector.
        buf[2 * 512 + 100] ^= 1;
        let c = check(&buf, 8192, 42);
        assert_eq!((c.ok, c.bad), (7, 1));
        assert_eq!(c.first_bad, Some((8192 + 1024, BadSector::Crc)));
        // Never written.
        assert_eq!(check(&[0u8; 1024], 0, 42).unwritten, 2);
    }

    #[test]
    fn known_writes_catch_zeroed_garbage_and_damaged_magic() {
        let mut rng = Rng::new(3);
        let mut buf = vec![0u8; 4096];
        stamp(&mut buf, 0, 1, 7, &mut rng);
        let known = |_: u64| Some(7);
        assert_eq!(check_known(&buf, 0, 7, known).ok, 8);
        // Read with another run seed: what the map knows wins.
        assert_eq!(check_known(&buf, 0, 99, known).ok, 8);
        // A zeroed block.
        let c = check_known(&[0u8; 4096], 0, 7, known);
        assert_eq!((c.bad, c.unwritten), (8, 0));
        assert_eq!(c.first_bad, Some((0, BadSector::Lost { expected_seed: 7 })));
        // Garbage.
        let mut g = vec![0u8; 4096];
        Rng::new(9).fill(&mut g);
        assert_eq!(check_known(&g, 0, 7, known).bad, 8);
        // One flipped bit in a header's magic.
        let mut m = buf.clone();
        m[512] ^= 0x01;
        let c = check_known(&m, 0, 7, known);
        assert_eq!((c.ok, c.bad), (7, 1));
        assert_eq!(c.first_bad.unwrap().0, 512);
        // Stale data: the map says seed 8 wrote it last.
        let c = check_known(&buf, 0, 7, |_| Some(8));
        assert!(matches!(
            c.first_bad,
            Some((_, BadSector::Seed { found: 7 }))
        ));
        // Unknown sectors: no header or another run's valid header is not corruption.
        assert_eq!(check_known(&[0u8; 512], 0, 7, |_| None).unwritten, 1);
        // Written by this run (seed 7, generation above the run's epoch 1): current, whatever
        // the map says of the run before; an older generation is held to the map.
        let mut mine = vec![0u8; 512];
        stamp(&mut mine, 0, 5, 7, &mut rng);
        assert_eq!(check_run(&mine, 0, 7, 1, |_| Some(8)).ok, 1);
        assert_eq!(check_run(&mine, 0, 7, 5, |_| Some(8)).bad, 1);
        assert_eq!(check_run(&mine, 0, 9, 1, |_| Some(8)).bad, 1);
        assert_eq!(check_known(&buf[..512], 0, 99, |_| None).unwritten, 1);
    }
}
