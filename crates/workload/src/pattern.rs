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
    /// N % of every 4 KiB piece of a block compressible (zeros at its end), the rest random:
    /// fio's `buffer_compress_percentage=N` for writes of 4 KiB and more ([`Chunked`]).
    Compress(u8),
    /// fio's compressible buffers in pieces of another size, or with the compressible part
    /// filled with a pattern ([`Chunked`]).
    Chunked(Chunked),
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

/// fio's compressible buffers (`fill_io_buffer`, `fill_random_buf_percentage`): a buffer cut
/// into pieces of `chunk` bytes (the last may be shorter), each random for its first
/// `len × (100 − pct) / 100` bytes and filled with `fill` (repeated from the start of that
/// part; zeros without one) for the rest. fio's pieces are `buffer_compress_chunk` bytes long,
/// or the smallest write when that is shorter or the option is not given; `fill` is
/// `buffer_pattern`'s bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Chunked {
    pub pct: u8,
    pub chunk: u32,
    pub fill: Option<PatternBytes>,
}

impl Chunked {
    /// The pattern of fio's compressible buffers of `pct` % in pieces of `chunk` bytes, filled
    /// with `fill`: [`Pattern::Compress`] for the usual pieces of 4 KiB and zeros.
    pub fn pattern(pct: u8, chunk: u64, fill: Option<PatternBytes>) -> Pattern {
        let chunk = chunk.clamp(1, u32::MAX as u64) as u32;
        if chunk == 4096 && fill.is_none() {
            Pattern::Compress(pct)
        } else {
            Pattern::Chunked(Chunked { pct, chunk, fill })
        }
    }

    fn fill_buf(&self, rng: &mut Rng, buf: &mut [u8]) {
        for piece in buf.chunks_mut(self.chunk.max(1) as usize) {
            let random = piece.len() * (100 - self.pct.min(100) as usize) / 100;
            let (r, rest) = piece.split_at_mut(random);
            rng.fill(r);
            match &self.fill {
                Some(b) => b.fill(rest),
                None => rest.fill(0),
            }
        }
    }
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
            Pattern::Chunked(c) => {
                write!(f, "compress:{}/{}", c.pct, c.chunk)?;
                match &c.fill {
                    Some(b) => write!(f, "/{}", b.hex()),
                    None => Ok(()),
                }
            }
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
    #[error("pattern '{0}': compress:N[/SIZE[/0xHEX]] needs N in 0..100, a piece SIZE of 1 byte to 4 GiB and 1 to 64 fill bytes in hex")]
    CompressPct(String),
    #[error("pattern '{0}': bytes:0xHEX needs 1 to 64 bytes in hex (two digits each)")]
    Bytes(String),
    #[error("unknown pattern '{0}' (use random, scrambled, once, zeros, repeat[:BYTE], compress:N[/SIZE[/0xHEX]] or bytes:0xHEX)")]
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
            let bad = || PatternError::CompressPct(s.to_string());
            let mut parts = v.split('/');
            let pct = parts.next().unwrap_or("");
            if let Some(size) = parts.next() {
                let n: u8 = pct.trim_end_matches('%').parse().map_err(|_| bad())?;
                let chunk = crate::units::parse_size(size).map_err(|_| bad())?;
                let fill = match parts.next() {
                    Some(h) => Some(PatternBytes::from_hex(h).ok_or_else(bad)?),
                    None => None,
                };
                if n > 100 || chunk == 0 || chunk > u32::MAX as u64 || parts.next().is_some() {
                    return Err(bad());
                }
                return Ok(Chunked::pattern(n, chunk, fill));
            }
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
            Pattern::Compress(n) | Pattern::Chunked(Chunked { pct: n, .. }) => {
                (1.0 - *n as f32 / 100.0).max(FLOOR)
            }
        }
    }

    /// The bytes a block written with this pattern holds, repeated from its first byte, when
    /// they do not depend on a random stream.
    pub fn fixed_bytes(&self) -> Option<PatternBytes> {
        match self {
            Pattern::Zeros => PatternBytes::new(&[0]),
            Pattern::Repeat(b) => PatternBytes::new(&[*b]),
            Pattern::Bytes(b) => Some(*b),
            Pattern::Random
            | Pattern::Compress(_)
            | Pattern::Chunked(_)
            | Pattern::Scrambled
            | Pattern::Once => None,
        }
    }

    /// True when every write needs new random bytes.
    pub fn refills(&self) -> bool {
        matches!(
            self,
            Pattern::Random | Pattern::Compress(_) | Pattern::Chunked(_)
        )
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

    /// Fills a write buffer with this pattern. For `Compress(n)` every 4 KiB piece is random
    /// for its first `len × (100 − n) / 100` bytes and zero after them, as fio fills pieces
    /// ([`Chunked`]), so the ratio holds for any block size.
    pub fn fill(&self, rng: &mut Rng, buf: &mut [u8]) {
        match self {
            Pattern::Random | Pattern::Scrambled | Pattern::Once => rng.fill(buf),
            Pattern::Zeros => buf.fill(0),
            Pattern::Repeat(b) => buf.fill(*b),
            Pattern::Bytes(b) => b.fill(buf),
            Pattern::Compress(n) => Chunked {
                pct: *n,
                chunk: 4096,
                fill: None,
            }
            .fill_buf(rng, buf),
            Pattern::Chunked(c) => c.fill_buf(rng, buf),
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

    /// fio's `__fill_random_buf_percentage` with the segment of each piece: random for
    /// `len × (100 − pct) / 100` bytes, then the filler from its first byte.
    #[test]
    fn chunked_pieces_are_filled_as_fio_fills_them() {
        let mut rng = Rng::new(7);
        let fill = PatternBytes::new(&[0xde, 0xad, 0xbe, 0xef]);
        let p = Chunked::pattern(33, 1000, fill);
        let mut buf = vec![0x11u8; 2500];
        p.fill(&mut rng, &mut buf);
        // pieces of 1000, 1000 and 500 bytes: 670, 670 and 335 random bytes
        for (start, len) in [(0usize, 1000usize), (1000, 1000), (2000, 500)] {
            let random = len * 67 / 100;
            let piece = &buf[start..start + len];
            assert!(piece[..random].iter().filter(|&&b| b == 0x11).count() < 20);
            assert_eq!(fill.unwrap().first_mismatch(&piece[random..]), None);
        }
        // zeros without a pattern; the usual 4 KiB pieces of zeros are Compress
        assert_eq!(Chunked::pattern(50, 4096, None), Pattern::Compress(50));
        let mut buf = vec![1u8; 8192];
        Pattern::Compress(33).fill(&mut rng, &mut buf);
        let random = 4096 * 67 / 100;
        assert!(buf[random..4096].iter().all(|&b| b == 0));
        assert!(buf[4096 + random..].iter().all(|&b| b == 0));
        assert_ne!(buf[random - 1], 0, "(one chance in 256)");
        for s in ["compress:30/512", "compress:40/131072/0xdeadbeef"] {
            let p: Pattern = s.parse().unwrap();
            assert!(matches!(p, Pattern::Chunked(_)), "{s}");
            assert_eq!(p.to_string(), s);
        }
        assert_eq!(
            "compress:40/1k".parse::<Pattern>().unwrap().to_string(),
            "compress:40/1024"
        );
        assert_eq!(
            "compress:40/4k".parse::<Pattern>().unwrap(),
            Pattern::Compress(40)
        );
        for bad in [
            "compress:40/0",
            "compress:101/4k",
            "compress:40/4k/0xzz",
            "compress:40/4k/0x11/x",
        ] {
            assert!(bad.parse::<Pattern>().is_err(), "{bad}");
        }
        assert_eq!(
            Pattern::Chunked(Chunked {
                pct: 25,
                chunk: 512,
                fill: None
            })
            .compressed_fraction(),
            0.75
        );
    }

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
