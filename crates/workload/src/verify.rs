//! Data verification: every 512-byte sector a verifying write puts on the medium carries a header
//! (magic, CRC32C, its own logical offset, a generation and the run's seed) followed by
//! pseudo-random filler. A verifying read checks each sector: a sector with our magic must have a
//! valid CRC, the offset it was read from and the run's seed; a sector without our magic was never
//! written by a verifying run (reported separately, not as an error).
//!
//! Layout of a sector: `[0..4) "SSDV" | [4..8) crc32c of [8..512) | [8..16) logical offset |
//! [16..24) generation | [24..32) seed | [32..512) filler`, integers little-endian.

use crate::rng::Rng;

pub const SECTOR: usize = 512;
const MAGIC: [u8; 4] = *b"SSDV";

/// Writes verification sectors for a block written at logical `offset` (a multiple of 512).
pub fn stamp(buf: &mut [u8], offset: u64, generation: u64, seed: u64, rng: &mut Rng) {
    for (i, sector) in buf.chunks_exact_mut(SECTOR).enumerate() {
        sector[0..4].copy_from_slice(&MAGIC);
        sector[8..16].copy_from_slice(&(offset + (i * SECTOR) as u64).to_le_bytes());
        sector[16..24].copy_from_slice(&generation.to_le_bytes());
        sector[24..32].copy_from_slice(&seed.to_le_bytes());
        rng.fill(&mut sector[32..]);
        let crc = crc32c::crc32c(&sector[8..]);
        sector[4..8].copy_from_slice(&crc.to_le_bytes());
    }
}

/// What checking one block found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CheckOutcome {
    /// Sectors with a valid header for this offset and seed.
    pub ok: u64,
    /// Sectors without our magic (never written by a verifying run).
    pub unwritten: u64,
    /// Sectors with our magic but a bad CRC, a wrong offset or a foreign seed.
    pub bad: u64,
    /// The first bad sector: (logical offset, reason).
    pub first_bad: Option<(u64, BadSector)>,
}

/// Why a sector failed verification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BadSector {
    Crc,
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
            BadSector::Offset { found } => {
                write!(f, "holds data written for offset {found} (misplaced data)")
            }
            BadSector::Seed { found } => write!(f, "written by a run with seed {found}"),
        }
    }
}

/// Checks a block read from logical `offset`.
pub fn check(buf: &[u8], offset: u64, seed: u64) -> CheckOutcome {
    let mut out = CheckOutcome::default();
    for (i, sector) in buf.chunks_exact(SECTOR).enumerate() {
        let at = offset + (i * SECTOR) as u64;
        if sector[0..4] != MAGIC {
            out.unwritten += 1;
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
        } else if u64_at(24..32) != seed {
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
        // Foreign seed.
        assert!(matches!(
            check(&buf, 8192, 43).first_bad,
            Some((_, BadSector::Seed { .. }))
        ));
        // Corruption of one byte in the third sector.
        buf[2 * 512 + 100] ^= 1;
        let c = check(&buf, 8192, 42);
        assert_eq!((c.ok, c.bad), (7, 1));
        assert_eq!(c.first_bad, Some((8192 + 1024, BadSector::Crc)));
        // Never written.
        assert_eq!(check(&[0u8; 1024], 0, 42).unwritten, 2);
    }
}
