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
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Random => write!(f, "random"),
            Pattern::Zeros => write!(f, "zeros"),
            Pattern::Repeat(b) => write!(f, "repeat:0x{b:02x}"),
            Pattern::Compress(n) => write!(f, "compress:{n}"),
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
    #[error("unknown pattern '{0}' (use random, zeros, repeat[:BYTE] or compress:N)")]
    Unknown(String),
}

impl FromStr for Pattern {
    type Err = PatternError;
    fn from_str(s: &str) -> Result<Self, PatternError> {
        let s = s.trim();
        let lower = s.to_ascii_lowercase();
        match lower.as_str() {
            "random" | "rand" => return Ok(Pattern::Random),
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
            Pattern::Random => 1.0,
            Pattern::Zeros | Pattern::Repeat(_) => FLOOR,
            Pattern::Compress(n) => (1.0 - *n as f32 / 100.0).max(FLOOR),
        }
    }

    /// True when every write needs new random bytes.
    pub fn refills(&self) -> bool {
        matches!(self, Pattern::Random | Pattern::Compress(_))
    }

    /// Fills a write buffer with this pattern. For `Compress(n)` every 4 KiB segment gets n % zeros
    /// at its end and random bytes before them, so the ratio holds for any block size.
    pub fn fill(&self, rng: &mut Rng, buf: &mut [u8]) {
        match self {
            Pattern::Random => rng.fill(buf),
            Pattern::Zeros => buf.fill(0),
            Pattern::Repeat(b) => buf.fill(*b),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_and_display() {
        for s in ["random", "zeros", "repeat:0x5a", "compress:50"] {
            let p: Pattern = s.parse().unwrap();
            assert_eq!(p.to_string(), s);
        }
        assert_eq!("repeat".parse::<Pattern>().unwrap(), Pattern::Repeat(0xA5));
        assert!("compress:101".parse::<Pattern>().is_err());
        assert!("stripes".parse::<Pattern>().is_err());
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
