//! Data patterns written by write operations (Iometer's "data pattern", fio's buffer options).

use crate::rng::Rng;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// What a write puts on the medium. It matters for drives that compress (SandForce-style).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase", tag = "kind", content = "value")]
#[derive(Default)]
pub enum Pattern {
    /// Fresh pseudo-random bytes for every write (incompressible). fio: `refill_buffers`.
    #[default]
    Random,
    /// All zero bytes. fio: `zero_buffers`.
    Zeros,
    /// One byte value repeated (Iometer's "repeating bytes").
    Repeat(u8),
    /// N % of every block compressible (zeros), the rest random. fio: `buffer_compress_percentage=N`.
    Compress(u8),
    /// Up to 64 bytes repeated from the start of every block. fio: `buffer_pattern`,
    /// `verify_pattern`.
    Bytes(PatternBytes),
    /// fio's default buffers: random bytes written once into each buffer, then every 512-byte
    /// block of a write stamped with its offset and the time it is issued (fio's
    /// `scramble_buffers`, [`scramble`]): incompressible, no two writes alike, at a fraction of
    /// a refill's cost.
    Scrambled,
    /// Random bytes written once into each buffer and written again unchanged (fio's
    /// `scramble_buffers=0`): incompressible within a block, the same block again and again.
    Once,
}

/// The bytes of a [`Pattern::Bytes`]: 1 to [`PatternBytes::MAX`], kept inline so that a
/// pattern stays `Copy`. Serialised as a hex string (`"0xdeadbeef"`).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct PatternBytes {
    len: u8,
    bytes: [u8; PatternBytes::MAX],
}

impl PatternBytes {
    /// The longest pattern held.
    pub const MAX: usize = 64;

    /// The pattern of `bytes`, if it is 1 to [`PatternBytes::MAX`] bytes long.
    pub fn new(bytes: &[u8]) -> Option<PatternBytes> {
        if bytes.is_empty() || bytes.len() > Self::MAX {
            return None;
        }
        let mut b = [0u8; Self::MAX];
        b[..bytes.len()].copy_from_slice(bytes);
        Some(PatternBytes {
            len: bytes.len() as u8,
            bytes: b,
        })
    }

    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }

    /// `buf` filled with the pattern repeated from its first byte.
    pub fn fill(&self, buf: &mut [u8]) {
        for (d, s) in buf.iter_mut().zip(self.as_slice().iter().cycle()) {
            *d = *s;
        }
    }

    /// The first byte of `buf` that differs from the pattern repeated from its first byte,
    /// with what it holds and what the pattern has there.
    pub fn first_mismatch(&self, buf: &[u8]) -> Option<(usize, u8, u8)> {
        buf.iter()
            .zip(self.as_slice().iter().cycle())
            .position(|(a, b)| a != b)
            .map(|i| (i, buf[i], self.as_slice()[i % self.len as usize]))
    }

    /// How many `chunk`-byte pieces of `buf` differ anywhere from the pattern repeated from
    /// `buf`'s first byte (the sectors a bad block spoils).
    pub fn bad_chunks(&self, buf: &[u8], chunk: usize) -> u64 {
        let p = self.as_slice();
        let chunk = chunk.max(1);
        buf.chunks(chunk)
            .enumerate()
            .filter(|(k, c)| {
                c.iter()
                    .enumerate()
                    .any(|(j, b)| *b != p[(k * chunk + j) % p.len()])
            })
            .count() as u64
    }

    /// The bytes as fio writes a pattern: `0x` and two hex digits a byte.
    pub fn hex(&self) -> String {
        let mut s = String::from("0x");
        for b in self.as_slice() {
            s.push_str(&format!("{b:02x}"));
        }
        s
    }

    fn from_hex(s: &str) -> Option<PatternBytes> {
        let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
        if h.is_empty() || h.len() % 2 != 0 {
            return None;
        }
        let bytes: Option<Vec<u8>> = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
            .collect();
        PatternBytes::new(&bytes?)
    }
}

impl fmt::Debug for PatternBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.hex())
    }
}

impl Serialize for PatternBytes {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.hex())
    }
}

impl<'de> Deserialize<'de> for PatternBytes {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        PatternBytes::from_hex(&s).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "pattern bytes '{s}': 0x and 1 to {} bytes in hex",
                PatternBytes::MAX
            ))
        })
    }
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Random => write!(f, "random"),
            Pattern::Zeros => write!(f, "zeros"),
            Pattern::Repeat(b) => write!(f, "repeat:0x{b:02x}"),
            Pattern::Compress(n) => write!(f, "compress:{n}"),
            Pattern::Bytes(b) => write!(f, "bytes:{}", b.hex()),
            Pattern::Scrambled => write!(f, "scrambled"),
            Pattern::Once => write!(f, "once"),
        }
    }
}

/// A `--pattern` that cannot be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    #[error("pattern '{0}': repeat byte must be 0..255 or 0x00..0xff")]
    RepeatByte(String),
    #[error("pattern '{0}': compress:N needs N in 0..100")]
    CompressPct(String),
    #[error("pattern '{0}': bytes:0xHEX needs 1 to 64 bytes in hex (two digits each)")]
    Bytes(String),
    #[error("unknown pattern '{0}' (use random, scrambled, once, zeros, repeat[:BYTE], compress:N or bytes:0xHEX)")]
    Unknown(String),
}

impl FromStr for Pattern {
    type Err = PatternError;
    fn from_str(s: &str) -> Result<Self, PatternError> {
        let s = s.trim();
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "random" | "rand" => return Ok(Pattern::Random),
            "scrambled" => return Ok(Pattern::Scrambled),
            "once" => return Ok(Pattern::Once),
            "zeros" | "zero" => return Ok(Pattern::Zeros),
            "repeat" => return Ok(Pattern::Repeat(0xA5)),
            _ => {}
        }
        if let Some(v) = lower.strip_prefix("repeat:") {
            let parsed = if let Some(h) = v.strip_prefix("0x") {
                u8::from_str_radix(h, 16).ok()
            } else {
                v.parse::<u8>().ok()
            };
            return parsed
                .map(Pattern::Repeat)
                .ok_or_else(|| PatternError::RepeatByte(s.to_string()));
        }
        if let Some(v) = lower.strip_prefix("bytes:") {
            return PatternBytes::from_hex(v)
                .map(Pattern::Bytes)
                .ok_or_else(|| PatternError::Bytes(s.to_string()));
        }
        if let Some(v) = lower.strip_prefix("compress:") {
            let n: u8 = v
                .trim_end_matches('%')
                .parse()
                .map_err(|_| PatternError::CompressPct(s.to_string()))?;
            if n > 100 {
                return Err(PatternError::CompressPct(s.to_string()));
            }
            return Ok(Pattern::Compress(n));
        }
        Err(PatternError::Unknown(s.to_string()))
    }
}

impl Pattern {
    /// Expected compressed size / original size for a good on-the-fly compressor, in (0, 1].
    /// Uniform data still costs some metadata, so the floor is a few percent.
    pub fn compressed_fraction(&self) -> f32 {
        const FLOOR: f32 = 0.03;
        match self {
            Pattern::Random | Pattern::Scrambled | Pattern::Once => 1.0,
            Pattern::Zeros | Pattern::Repeat(_) | Pattern::Bytes(_) => FLOOR,
            Pattern::Compress(n) => (1.0 - *n as f32 / 100.0).max(FLOOR),
        }
    }

    /// The bytes a block written with this pattern holds, repeated from its first byte, when
    /// they do not depend on a random stream.
    pub fn fixed_bytes(&self) -> Option<PatternBytes> {
        match self {
            Pattern::Zeros => PatternBytes::new(&[0]),
            Pattern::Repeat(b) => PatternBytes::new(&[*b]),
            Pattern::Bytes(b) => Some(*b),
            Pattern::Random | Pattern::Compress(_) | Pattern::Scrambled | Pattern::Once => None,
        }
    }

    /// True when every write needs new random bytes.
    pub fn refills(&self) -> bool {
        matches!(self, Pattern::Random | Pattern::Compress(_))
    }

    /// True when every write is stamped ([`scramble`]) in a buffer filled once.
    pub fn scrambles(&self) -> bool {
        matches!(self, Pattern::Scrambled)
    }

    /// True when the data is pseudo-random (and so incompressible): refilled, scrambled or
    /// filled once.
    pub fn is_random(&self) -> bool {
        matches!(self, Pattern::Random | Pattern::Scrambled | Pattern::Once)
    }

    /// Fills a write buffer with this pattern. For `Compress(n)` every 4 KiB segment gets n % zeros
    /// at its end and random bytes before them, so the ratio holds for any block size.
    pub fn fill(&self, rng: &mut Rng, buf: &mut [u8]) {
        match self {
            Pattern::Random | Pattern::Scrambled | Pattern::Once => rng.fill(buf),
            Pattern::Zeros => buf.fill(0),
            Pattern::Repeat(b) => buf.fill(*b),
            Pattern::Bytes(b) => b.fill(buf),
            Pattern::Compress(n) => {
                for seg in buf.chunks_mut(4096) {
                    let zeros = seg.len() * *n as usize / 100;
                    let split = seg.len() - zeros;
                    rng.fill(&mut seg[..split]);
                    seg[split..].fill(0);
                }
            }
        }
    }
}

/// fio's `small_content_scramble`: in every 512-byte block of a write at `offset` issued at
/// `t_ns`, the block's own offset (8 bytes, little-endian) at the start of one of its eight
/// 64-byte lines, chosen by the time and the offset, and the time (seconds, then nanoseconds)
/// in the last 16 bytes of its first line.
pub fn scramble(buf: &mut [u8], offset: u64, t_ns: u64) {
    let (sec, nsec) = (t_ns / 1_000_000_000, t_ns % 1_000_000_000);
    let line = ((nsec ^ offset) & 7) as usize * 64;
    for (i, block) in buf.chunks_exact_mut(512).enumerate() {
        let at = offset.wrapping_add(i as u64 * 512);
        block[line..line + 8].copy_from_slice(&at.to_le_bytes());
        block[48..56].copy_from_slice(&sec.to_le_bytes());
        block[56..64].copy_from_slice(&nsec.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for s in [
            "random",
            "zeros",
            "repeat:0x5a",
            "compress:50",
            "bytes:0xdeadbeef",
        ] {
            let p: Pattern = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
        }
        assert_eq!("repeat".parse::<Pattern>().unwrap(), Pattern::Repeat(0xA5));
        assert!("compress:101".parse::<Pattern>().is_err());
        assert!("stripes".parse::<Pattern>().is_err());
        for bad in [
            "bytes:",
            "bytes:0x",
            "bytes:0xabc",
            "bytes:dead",
            "bytes:0xzz",
        ] {
            assert!(bad.parse::<Pattern>().is_err(), "{bad}");
        }
        assert!(format!("bytes:0x{}", "ab".repeat(65))
            .parse::<Pattern>()
            .is_err());
        // serialised as a hex string, read back the same
        let p: Pattern = "bytes:0x0abc".parse().unwrap();
        let j = serde_json::to_string(&p).unwrap();
        assert_eq!(j, r#"{"kind":"bytes","value":"0x0abc"}"#);
        assert_eq!(serde_json::from_str::<Pattern>(&j).unwrap(), p);
        assert!(serde_json::from_str::<Pattern>(r#"{"kind":"bytes","value":"0x"}"#).is_err());
    }

    #[test]
    fn bytes_repeat_from_the_start_of_a_block() {
        let b = PatternBytes::new(&[0xde, 0xad, 0xbe]).unwrap();
        let mut buf = [0u8; 8];
        Pattern::Bytes(b).fill(&mut Rng::new(1), &mut buf);
        assert_eq!(buf, [0xde, 0xad, 0xbe, 0xde, 0xad, 0xbe, 0xde, 0xad]);
        assert_eq!(b.first_mismatch(&buf), None);
        buf[4] = 0;
        assert_eq!(b.first_mismatch(&buf), Some((4, 0, 0xad)));
        // the pattern runs on across chunks: only the chunk holding the bad byte is bad
        assert_eq!(b.bad_chunks(&buf, 3), 1);
        assert_eq!(b.bad_chunks(&buf[..3], 3), 0);
        assert_eq!(Pattern::Zeros.fixed_bytes().unwrap().as_slice(), &[0]);
        assert!(Pattern::Random.fixed_bytes().is_none());
    }

    /// fio's scramble: each 512-byte block gets its offset on one line and the time at the end
    /// of its first line; the rest of the buffer is left as it was filled.
    #[test]
    fn scramble_stamps_each_block() {
        let mut buf = vec![0xAAu8; 1536];
        // nsec 5 ^ offset 4096 (low bits 0) = 5: the offset on line 5
        scramble(&mut buf, 4096, 7_000_000_005);
        for k in 0..3 {
            let b = &buf[k * 512..(k + 1) * 512];
            let off = u64::from_le_bytes(b[320..328].try_into().unwrap());
            assert_eq!(off, 4096 + k as u64 * 512);
            assert_eq!(u64::from_le_bytes(b[48..56].try_into().unwrap()), 7);
            assert_eq!(u64::from_le_bytes(b[56..64].try_into().unwrap()), 5);
            let stamped = |i: usize| (48..64).contains(&i) || (320..328).contains(&i);
            assert!((0..512).filter(|&i| !stamped(i)).all(|i| b[i] == 0xAA));
        }
        assert_eq!("scrambled".parse::<Pattern>().unwrap(), Pattern::Scrambled);
        assert_eq!(
            Pattern::Once.to_string().parse::<Pattern>().unwrap(),
            Pattern::Once
        );
        assert!(!Pattern::Scrambled.refills() && Pattern::Scrambled.scrambles());
        assert_eq!(Pattern::Scrambled.compressed_fraction(), 1.0);
    }

    #[test]
    fn fill_respects_ratio() {
        let mut rng = Rng::new(7);
        let mut buf = vec![1u8; 8192];
        Pattern::Compress(25).fill(&mut rng, &mut buf);
        let zeros = buf.iter().filter(|&&b| b == 0).count();
        assert!((2048..2100).contains(&zeros), "{zeros}");
        Pattern::Zeros.fill(&mut rng, &mut buf);
        assert!(buf.iter().all(|&b| b == 0));
        assert!(Pattern::Zeros.compressed_fraction() < Pattern::Compress(50).compressed_fraction());
        assert_eq!(Pattern::Random.compressed_fraction(), 1.0);
    }
}
