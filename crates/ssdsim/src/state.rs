//! Saved drive state: a simulator written to a file and read back, so a later run continues
//! exactly where an earlier one stopped (the same results as one run that did both).
//!
//! The file, all integers little-endian:
//!
//! ```text
//! "SSDLABST"  u32 format version
//! u32 length, header (postcard), u32 CRC-32C of the header
//! u64 length, state (postcard), u32 CRC-32C of the state
//! per drive: the mapping tables (l2p, then per-unit costs and sector versions when the
//! configuration has them), then one u32 CRC-32C of all table bytes
//! a table: u64 entries, u32 entries per chunk, u64 chunks written, then per chunk written
//! (in increasing order) u64 chunk index and its entries
//! ```
//!
//! The header names what the state belongs to (the drive configuration after overrides, the
//! drive count, the adapter, version tracking, and facts the caller adds such as an array's
//! stripe); a load for anything else is refused, naming what differs. The state is everything
//! else the simulator holds — every drive's block, page-group, scheduler, host and controller
//! state, the shared event queue with its pending internal events, the adapter, counters, the
//! random generator, the clock — serialised field by field. The mapping tables are sparse in
//! memory (allocated per 64 KiB chunk on first write, see [`crate::mem::SparseVec`]) and a
//! table is written as its allocated chunks that hold data, so a drive that a run touched only
//! in part makes a small file and loads with only those chunks allocated. The reverse map is not
//! written: it is rebuilt from the forward map and the fragment table (an entry of the reverse
//! map counts only where one of them points back at it, so the rebuilt one gives the same
//! results).
//!
//! Loading checks before it allocates: sizes come from the configuration the caller gives, and
//! the file must match them; checksums catch corrupted bytes; a truncated file is an error.

use crate::config::DriveConfig;
use crate::drive::Drive;
use crate::ftl::mapping::UNMAPPED;
use crate::ftl::AllocError;
use crate::mem::{HugeElem, SparseVec, CHUNK_BYTES};
use crate::sim::Simulator;
use crate::{AdapterConfig, Precondition, SimError};
use serde::{Deserialize, Serialize};
use std::io::{self, Read, Write};

/// The first bytes of a state file.
pub const STATE_MAGIC: &[u8; 8] = b"SSDLABST";
/// The format version this build writes and reads.
pub const STATE_VERSION: u32 = 8;

/// Table chunk, bytes.
const CHUNK: usize = CHUNK_BYTES;
/// The header is a few KiB (a drive configuration as JSON); anything far larger is not one.
const MAX_HEADER: u32 = 1 << 20;

/// Why a saved state could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the state file: {0}")]
    Io(#[from] io::Error),
    #[error("not an ssdlab drive state file")]
    NotState,
    #[error("state file format version {0} is not supported (this ssdlab reads version {STATE_VERSION})")]
    Version(u32),
    #[error("the state file is truncated")]
    Truncated,
    #[error("the state file is corrupt: {0}")]
    Corrupt(String),
    /// The state belongs to another drive, array or mode.
    #[error("{0}")]
    Mismatch(String),
    #[error(transparent)]
    Sim(#[from] SimError),
}

impl From<AllocError> for StateError {
    fn from(e: AllocError) -> Self {
        StateError::Sim(e.into())
    }
}

/// Facts about a saved state beyond the drives: what the caller must match on load (e.g. an
/// array's stripe) and a clock of its own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StateExtra {
    /// `(name, value)` pairs a load must match exactly ("stripe", "64 KiB").
    pub facts: Vec<(String, String)>,
    /// The caller's virtual clock, ns (returned as saved).
    pub clock: u64,
}

#[derive(Serialize, Deserialize)]
struct Header {
    drive_name: String,
    /// The drive configuration as JSON (after overrides).
    drive: String,
    drives: u32,
    adapter: String,
    tracking: bool,
    facts: Vec<(String, String)>,
    clock: u64,
}

/// The drive configuration as JSON (a plain struct of numbers and strings: cannot fail).
fn drive_json(cfg: &DriveConfig) -> String {
    serde_json::to_string(cfg).unwrap_or_default()
}

fn adapter_json(a: &AdapterConfig) -> String {
    serde_json::to_string(a).unwrap_or_default()
}

/// A writer that keeps the CRC-32C of what passes through.
struct CrcWriter<W: Write> {
    w: W,
    crc: u32,
}

impl<W: Write> CrcWriter<W> {
    fn put(&mut self, b: &[u8]) -> io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, b);
        self.w.write_all(b)
    }
    /// Writes the CRC so far (not itself counted) and starts a new one.
    fn seal(&mut self) -> io::Result<()> {
        let c = self.crc;
        self.crc = 0;
        self.w.write_all(&c.to_le_bytes())
    }
}

struct CrcReader<R: Read> {
    r: R,
    crc: u32,
}

impl<R: Read> CrcReader<R> {
    fn get(&mut self, b: &mut [u8]) -> Result<(), StateError> {
        self.r.read_exact(b).map_err(eof)?;
        self.crc = crc32c::crc32c_append(self.crc, b);
        Ok(())
    }
    fn u32(&mut self) -> Result<u32, StateError> {
        let mut b = [0; 4];
        self.get(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }
    fn u64(&mut self) -> Result<u64, StateError> {
        let mut b = [0; 8];
        self.get(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }
    /// Reads the stored CRC and compares it with the bytes read since the last check.
    fn check(&mut self, what: &str) -> Result<(), StateError> {
        let want = self.crc;
        let mut b = [0; 4];
        self.r.read_exact(&mut b).map_err(eof)?;
        self.crc = 0;
        if u32::from_le_bytes(b) != want {
            return Err(StateError::Corrupt(format!(
                "checksum of the {what} does not match"
            )));
        }
        Ok(())
    }
    /// Reads exactly `len` bytes, growing the buffer as data arrives (a corrupt length cannot
    /// make it allocate more than the file holds).
    fn blob(&mut self, len: u64) -> Result<Vec<u8>, StateError> {
        let mut v = Vec::new();
        (&mut self.r).take(len).read_to_end(&mut v)?;
        if (v.len() as u64) < len {
            return Err(StateError::Truncated);
        }
        self.crc = crc32c::crc32c_append(self.crc, &v);
        Ok(v)
    }
}

fn eof(e: io::Error) -> StateError {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        StateError::Truncated
    } else {
        StateError::Io(e)
    }
}

fn corrupt(what: impl Into<String>) -> StateError {
    StateError::Corrupt(what.into())
}

/// An element of a table written raw.
trait Raw: Copy {
    const SIZE: usize;
    fn put(self, out: &mut Vec<u8>);
    fn get(b: &[u8]) -> Self;
}

impl Raw for u32 {
    const SIZE: usize = 4;
    #[inline]
    fn put(self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    #[inline]
    fn get(b: &[u8]) -> Self {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
}

impl Raw for u8 {
    const SIZE: usize = 1;
    #[inline]
    fn put(self, out: &mut Vec<u8>) {
        out.push(self);
    }
    #[inline]
    fn get(b: &[u8]) -> Self {
        b[0]
    }
}

/// Writes a sparse table as its length, its chunk length, the number of chunks written, and
/// each allocated chunk that holds data as its index and its entries (a chunk never written
/// is left out, so is one written back to all zeros).
fn write_table<T: HugeElem + Raw, W: Write>(
    w: &mut CrcWriter<W>,
    t: &SparseVec<T>,
    buf: &mut Vec<u8>,
) -> io::Result<()> {
    let data: Vec<usize> = t
        .allocated()
        .filter(|(_, c)| c.iter().any(|&x| x != T::ZERO))
        .map(|(k, _)| k)
        .collect();
    w.put(&(t.len() as u64).to_le_bytes())?;
    w.put(&(SparseVec::<T>::PER_CHUNK as u32).to_le_bytes())?;
    w.put(&(data.len() as u64).to_le_bytes())?;
    for k in data {
        buf.clear();
        buf.extend_from_slice(&(k as u64).to_le_bytes());
        for &x in t.chunk(k) {
            x.put(buf);
        }
        w.put(buf)?;
    }
    Ok(())
}

/// Reads a table written by [`write_table`] into `t` (all zero, of the length the configuration
/// gives; only the chunks in the file are allocated), calling `each(first index, chunk)` for
/// every chunk read.
fn read_table<T: HugeElem + Raw, R: Read>(
    r: &mut CrcReader<R>,
    t: &mut SparseVec<T>,
    what: &str,
    buf: &mut Vec<u8>,
    mut each: impl FnMut(usize, &[T]) -> Result<(), StateError>,
) -> Result<(), StateError> {
    let n = r.u64()?;
    if n != t.len() as u64 {
        return Err(corrupt(format!(
            "the {what} has {n} entries, the drive has {}",
            t.len()
        )));
    }
    let per = SparseVec::<T>::PER_CHUNK;
    if r.u32()? as usize != per {
        return Err(corrupt(format!("the {what} has chunks of another size")));
    }
    let count = r.u64()?;
    if count > t.chunk_count() as u64 {
        return Err(corrupt(format!("the {what} has too many chunks")));
    }
    let mut next = 0u64;
    for _ in 0..count {
        let k = r.u64()?;
        if k < next || k >= t.chunk_count() as u64 {
            return Err(corrupt(format!("bad chunk index in the {what}")));
        }
        next = k + 1;
        let c = t.chunk_mut(k as usize);
        buf.resize(c.len() * T::SIZE, 0);
        r.get(buf)?;
        for (x, b) in c.iter_mut().zip(buf.chunks_exact(T::SIZE)) {
            *x = T::get(b);
        }
        each(k as usize * per, c)?;
    }
    Ok(())
}

/// The paths (`a.b.c`) where two JSON values differ, with both values.
fn json_diff(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
    out: &mut Vec<(String, String, String)>,
) {
    use serde_json::Value;
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                json_diff(
                    &p,
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                    out,
                );
            }
        }
        _ if a != b => out.push((path.to_string(), a.to_string(), b.to_string())),
        _ => {}
    }
}

/// What the simulator's small state (everything but the big tables) is serialised as.
type SmallRef<'a> = (
    &'a Vec<Drive>,
    &'a crate::drive::Shared,
    u64,
    u64,
    bool,
    &'a Vec<crate::sim::AdapterSlot>,
    &'a Vec<u32>,
    &'a Option<Box<crate::adapter::WriteCache>>,
    &'a crate::events::Ring<(u64, u64)>,
    u64,
    u64,
);
type Small = (
    Vec<Drive>,
    crate::drive::Shared,
    u64,
    u64,
    bool,
    Vec<crate::sim::AdapterSlot>,
    Vec<u32>,
    Option<Box<crate::adapter::WriteCache>>,
    crate::events::Ring<(u64, u64)>,
    u64,
    u64,
);

impl Simulator {
    /// Writes the complete state of the simulator (every drive, the event queue with its
    /// pending internal events, the adapter, counters, the clock) to `w`. `drive` is the
    /// configuration the drives were built from (recorded so a load can check it); `extra` adds
    /// facts a load must match and a clock of the caller's. [`Simulator::load_state`] reads it
    /// back; the loaded simulator continues exactly like this one.
    pub fn save_state<W: Write>(
        &self,
        w: W,
        drive: &DriveConfig,
        extra: &StateExtra,
    ) -> io::Result<()> {
        let geo = crate::nand::Geometry::new(drive);
        if postcard::to_allocvec(&geo).ok() != postcard::to_allocvec(&self.drives[0].ftl.g).ok() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the drive configuration given is not the one the drives were built from",
            ));
        }
        let mut w = CrcWriter { w, crc: 0 };
        let header = Header {
            drive_name: drive.name.clone(),
            drive: drive_json(drive),
            drives: self.drives.len() as u32,
            adapter: adapter_json(&self.adapter_config()),
            tracking: self.drives[0].ftl.map.ver.is_some(),
            facts: extra.facts.clone(),
            clock: extra.clock,
        };
        let enc = |e: postcard::Error| io::Error::other(e.to_string());
        w.w.write_all(STATE_MAGIC)?;
        w.w.write_all(&STATE_VERSION.to_le_bytes())?;
        let h = postcard::to_allocvec(&header).map_err(enc)?;
        w.put(&(h.len() as u32).to_le_bytes())?;
        w.put(&h)?;
        w.seal()?;
        let small: SmallRef<'_> = (
            &self.drives,
            &self.sh,
            self.adapter_overhead,
            self.adapter_free,
            self.trim_passthrough,
            &self.adapter,
            &self.adapter_slots,
            &self.cache,
            &self.ready,
            self.pending as u64,
            self.now,
        );
        let s = postcard::to_allocvec(&small).map_err(enc)?;
        w.put(&(s.len() as u64).to_le_bytes())?;
        w.put(&s)?;
        w.seal()?;
        drop(s);
        let mut buf = Vec::with_capacity(CHUNK + 8);
        for d in &self.drives {
            let m = &d.ftl.map;
            write_table(&mut w, m.l2p.raw(), &mut buf)?;
            write_table(&mut w, &m.cost, &mut buf)?;
            if let Some(v) = &m.ver {
                write_table(&mut w, v, &mut buf)?;
            }
        }
        w.seal()?;
        w.w.flush()
    }

    /// Reads a state written by [`Simulator::save_state`] for `n_drives` drives of `drive`
    /// behind `adapter` (`tracking`: built with [`Simulator::with_tracking`]); `facts` must
    /// equal the ones saved. Returns the simulator and the caller's clock. A file for another
    /// configuration is refused naming what differs; a corrupt or truncated file is an error.
    pub fn load_state<R: Read>(
        r: R,
        drive: &DriveConfig,
        n_drives: usize,
        adapter: &AdapterConfig,
        tracking: bool,
        facts: &[(String, String)],
    ) -> Result<(Simulator, u64), StateError> {
        let mut r = CrcReader { r, crc: 0 };
        let mut magic = [0u8; 8];
        r.r.read_exact(&mut magic).map_err(|e| match e.kind() {
            io::ErrorKind::UnexpectedEof => StateError::NotState,
            _ => StateError::Io(e),
        })?;
        if &magic != STATE_MAGIC {
            return Err(StateError::NotState);
        }
        let mut v = [0u8; 4];
        r.r.read_exact(&mut v).map_err(eof)?;
        let version = u32::from_le_bytes(v);
        if version != STATE_VERSION {
            return Err(StateError::Version(version));
        }
        let hlen = r.u32()?;
        if hlen > MAX_HEADER {
            return Err(corrupt("header too large"));
        }
        let h = r.blob(hlen as u64)?;
        r.check("header")?;
        let header: Header =
            postcard::from_bytes(&h).map_err(|e| corrupt(format!("header: {e}")))?;
        check_header(&header, drive, n_drives, adapter, tracking, facts)?;

        // A fresh simulator of the configuration: the sizes every table must have, and the
        // (zero, not yet touched) mapping tables the file's data goes into.
        let mut fresh =
            Simulator::build(drive, n_drives, adapter, Precondition::Fresh, 0, tracking)?;
        let slen = r.u64()?;
        let s = r.blob(slen)?;
        r.check("simulator state")?;
        let small: Small =
            postcard::from_bytes(&s).map_err(|e| corrupt(format!("simulator state: {e}")))?;
        drop(s);
        let (
            drives,
            sh,
            adapter_overhead,
            adapter_free,
            trim_passthrough,
            adapter_v,
            adapter_slots,
            cache,
            ready,
            pending,
            now,
        ) = small;
        if drives.len() != n_drives {
            return Err(corrupt(format!(
                "it holds {} drives, its header says {n_drives}",
                drives.len()
            )));
        }
        let mut sim = Simulator {
            drives,
            sh,
            adapter_overhead,
            direct: adapter_overhead == 0 && cache.is_none(),
            adapter_free,
            trim_passthrough,
            adapter: adapter_v,
            adapter_slots,
            cache,
            ready,
            pending: usize::try_from(pending).map_err(|_| corrupt("pending count"))?,
            now,
        };
        if sim.adapter_config() != *adapter || sim.direct != fresh.direct {
            return Err(corrupt("its adapter differs from its header"));
        }
        if let (Some(c), Some(f)) = (&sim.cache, &fresh.cache) {
            c.check_shape(f).map_err(corrupt)?;
        }
        let mut buf = Vec::with_capacity(CHUNK);
        for (i, (d, f)) in sim.drives.iter_mut().zip(&mut fresh.drives).enumerate() {
            d.check_shape(f)
                .map_err(|e| corrupt(format!("drive {i}: {e}")))?;
            let m = &mut d.ftl.map;
            m.l2p = std::mem::take(&mut f.ftl.map.l2p);
            m.p2l = std::mem::take(&mut f.ftl.map.p2l);
            m.cost = std::mem::take(&mut f.ftl.map.cost);
            m.ver = f.ftl.map.ver.take();
            let slots = m.p2l.len();
            let mut mapped = 0u64;
            let mut l2p = std::mem::take(&mut m.l2p);
            {
                let p2l = &mut m.p2l;
                read_table(&mut r, l2p.raw_mut(), "map", &mut buf, |first, c| {
                    for (k, &stored) in c.iter().enumerate() {
                        if stored == 0 {
                            continue;
                        }
                        let slot = !stored;
                        if slot as usize >= slots || p2l.get(slot as usize) != UNMAPPED {
                            return Err(corrupt(format!(
                                "drive {i}: unit {} maps to slot {slot}",
                                first + k
                            )));
                        }
                        p2l.set(slot as usize, (first + k) as u32);
                        mapped += 1;
                    }
                    Ok(())
                })?;
            }
            m.l2p = l2p;
            // the older slots of fragmented units point back at their units too
            for (&l, f) in &m.frags.0 {
                if f.fmask == 0 {
                    continue;
                }
                let slot = f.fslot as usize;
                if slot >= slots || m.p2l.get(slot) != UNMAPPED {
                    return Err(corrupt(format!(
                        "drive {i}: a fragment of unit {l} lies in slot {slot}"
                    )));
                }
                m.p2l.set(slot, l);
            }
            read_table(&mut r, &mut m.cost, "unit costs", &mut buf, |_, _| Ok(()))?;
            if let Some(v) = m.ver.as_mut() {
                read_table(&mut r, v, "versions", &mut buf, |_, _| Ok(()))?;
            }
            if mapped != d.ftl.mapped_units {
                return Err(corrupt(format!(
                    "drive {i}: {mapped} units mapped, {} counted",
                    d.ftl.mapped_units
                )));
            }
        }
        r.check("mapping tables")?;
        let mut rest = [0u8; 1];
        if r.r.read(&mut rest)? != 0 {
            return Err(corrupt("data after the end"));
        }
        Ok((sim, header.clock))
    }
}

/// Whether two drive configurations (JSON) differ only in the words that describe the drive
/// (label, description, sources): a state saved before a preset's text changed still loads.
fn same_but_for_words(saved: &str, now: &str) -> bool {
    let bare = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).ok()?;
        let o = v.as_object_mut()?;
        for k in ["label", "description", "sources"] {
            o.remove(k);
        }
        Some(v)
    };
    matches!((bare(saved), bare(now)), (Some(a), Some(b)) if a == b)
}

/// The first few settings where two JSON documents differ: `a.b (saved X, now Y), …`.
fn differences(saved: &str, now: &str, what: &str) -> Result<String, StateError> {
    let a: serde_json::Value =
        serde_json::from_str(saved).map_err(|_| corrupt(format!("the {what} in its header")))?;
    let b: serde_json::Value = serde_json::from_str(now).unwrap_or_default();
    let mut diff = Vec::new();
    json_diff("", &a, &b, &mut diff);
    let list: Vec<String> = diff
        .iter()
        .take(3)
        .map(|(p, x, y)| format!("{p} (saved {x}, now {y})"))
        .collect();
    Ok(format!(
        "{}{}",
        list.join(", "),
        if diff.len() > 3 { ", …" } else { "" }
    ))
}

fn check_header(
    h: &Header,
    drive: &DriveConfig,
    n_drives: usize,
    adapter: &AdapterConfig,
    tracking: bool,
    facts: &[(String, String)],
) -> Result<(), StateError> {
    let mismatch = |s: String| Err(StateError::Mismatch(s));
    if h.drive_name != drive.name {
        return mismatch(format!(
            "the state file was saved from {}, this run simulates {}",
            h.drive_name, drive.name
        ));
    }
    if h.drives as usize != n_drives {
        return mismatch(format!(
            "the state file holds {} drive{}, this run simulates {n_drives}",
            h.drives,
            if h.drives == 1 { "" } else { "s" }
        ));
    }
    let want = drive_json(drive);
    if h.drive != want && !same_but_for_words(&h.drive, &want) {
        return mismatch(format!(
            "the state file's {} differs from this run's in {}",
            drive.name,
            differences(&h.drive, &want, "drive configuration")?
        ));
    }
    if h.tracking != tracking {
        return mismatch(format!(
            "the state file was saved {} data-version tracking, this run {} it",
            if h.tracking { "with" } else { "without" },
            if tracking { "uses" } else { "does not use" }
        ));
    }
    let want = adapter_json(adapter);
    if h.adapter != want {
        return mismatch(format!(
            "the state file was saved behind another host adapter: {}",
            differences(&h.adapter, &want, "adapter")?
        ));
    }
    for (k, v) in facts {
        let saved = h.facts.iter().find(|(k2, _)| k2 == k).map(|(_, v)| v);
        match saved {
            Some(s) if s == v => {}
            Some(s) => {
                return mismatch(format!(
                    "the state file was saved with {k} {s}, this run has {k} {v}"
                ))
            }
            None => {
                return mismatch(format!(
                    "the state file was saved without a {k}, this run has {k} {v}"
                ))
            }
        }
    }
    for (k, s) in &h.facts {
        if !facts.iter().any(|(k2, _)| k2 == k) {
            return mismatch(format!(
                "the state file was saved with {k} {s}, this run has none"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod words {
    use super::*;

    #[test]
    fn a_drive_differing_only_in_its_words_is_the_same_drive() {
        let d = crate::load_preset("x25e-64g").unwrap();
        let mut told = d.clone();
        told.label = "another label".into();
        told.description = "new words".into();
        told.sources.push("a new source".into());
        assert!(same_but_for_words(&drive_json(&d), &drive_json(&told)));
        // a state saved before presets had labels
        let mut old = d.clone();
        old.label.clear();
        assert!(same_but_for_words(&drive_json(&old), &drive_json(&d)));
        let mut other = d.clone();
        other.controller.fw_read_ns += 1;
        assert!(!same_but_for_words(&drive_json(&d), &drive_json(&other)));
        assert!(!same_but_for_words("not json", &drive_json(&d)));
    }
}
