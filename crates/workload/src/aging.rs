//! An office-like file-system aging workload: a simple file system over a volume (an extent
//! allocator over free extents, files with a realistic size distribution) that is filled to a
//! target utilisation and then used for "days": each day creates new files, rewrites and appends
//! to some existing ones, and deletes files to stay at the target utilisation. Every deletion
//! issues TRIMs of exactly the file's extents, as a file system mounted with `discard` (Linux)
//! or with TRIM enabled (Windows 7 and later) does; whether they reach the drives is the host
//! adapter's business, not the workload's.
//!
//! The model (deterministic from a seed):
//!
//! * **Volume**: `span` bytes in clusters of `cluster` bytes (4 KiB, the NTFS and ext4
//!   default). Free space is a set of free extents, merged with their neighbours when freed.
//! * **Allocation** ([`AllocPolicy`]): `next-fit` (default) searches from where the last
//!   allocation ended and wraps around, so freed space is reused once the cursor comes back to
//!   it and new data moves over the whole volume over time (as the goal-driven allocators of
//!   ext4 and NTFS spread data; an assumption, not a model of either); `first-fit` always
//!   searches from the start, packing data low. Either first looks (among the next 64 free
//!   extents) for one extent holding the whole file, then takes free extents in order
//!   (fragmentation).
//! * **File sizes**: lognormal by count — the shape Agrawal, Bolosky, Douceur and Lorch found on
//!   60,000 Windows desktop file systems ("A five-year study of file-system metadata", FAST
//!   2007) — with μ = 9.48, σ = 2.46 (ln bytes; median about 13 KB, mean about 270 KB: many small
//!   documents, some large media files and archives), the fit Impressions (Agrawal et al.,
//!   FAST 2009) uses for that data set's body (values as recalled, not re-checked here), cut at
//!   `max_file`.
//! * **A day**: `daily_write` bytes of writes, each action drawn at random: 70 % create a new
//!   file, 20 % rewrite an existing file in place (a database, a mailbox, a document saved over
//!   itself), 10 % append to one (logs, growing mailboxes). After every action files are deleted
//!   at random (uniformly by count) until the volume is back at the target utilisation.
//! * **Requests**: a file's data is written extent by extent in requests of at most `max_io`;
//!   a deletion trims each extent in requests of at most `max_trim`.

use crate::gen::{Op, OpKind};
use crate::rng::Rng;
use std::collections::BTreeMap;

/// μ of the lognormal file size (ln bytes).
pub const SIZE_MU: f64 = 9.48;
/// σ of the lognormal file size.
pub const SIZE_SIGMA: f64 = 2.46;
/// Shares of the day's actions (percent): create, rewrite; the rest append.
const CREATE_PCT: u32 = 70;
const REWRITE_PCT: u32 = 20;
/// How many free extents a search looks at for one holding a whole file.
const CONTIGUOUS_SCAN: usize = 64;

/// Where the allocator looks for free space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AllocPolicy {
    /// From the end of the previous allocation, wrapping around.
    #[default]
    NextFit,
    /// Always from the start of the volume.
    FirstFit,
}

impl AllocPolicy {
    pub fn as_str(&self) -> &'static str {
        match self {
            AllocPolicy::NextFit => "next-fit",
            AllocPolicy::FirstFit => "first-fit",
        }
    }
}

impl std::str::FromStr for AllocPolicy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim() {
            "next-fit" | "nextfit" => Ok(AllocPolicy::NextFit),
            "first-fit" | "firstfit" => Ok(AllocPolicy::FirstFit),
            _ => Err(format!(
                "unknown allocator '{s}' (use next-fit or first-fit)"
            )),
        }
    }
}

/// The parameters of an aging workload.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AgingSpec {
    /// Volume size in bytes (a multiple of `cluster`).
    pub span: u64,
    /// Allocation unit in bytes (a power of two, at least 512).
    pub cluster: u64,
    /// Target utilisation of the volume, percent (1..=95).
    pub fill_pct: u32,
    /// Bytes written per day.
    pub daily_write: u64,
    /// Largest write request (a multiple of `cluster`).
    pub max_io: u64,
    /// Largest TRIM request (a multiple of `cluster`).
    pub max_trim: u64,
    /// Largest file (larger draws are cut to this).
    pub max_file: u64,
    pub alloc: AllocPolicy,
    pub seed: u64,
}

impl AgingSpec {
    /// The defaults for a volume of `span` bytes: 4 KiB clusters, 50 % full, 256 KiB writes,
    /// 32 MiB trims, files up to 1 GiB (at most 1/32 of the volume), next-fit.
    pub fn new(span: u64, daily_write: u64, seed: u64) -> AgingSpec {
        AgingSpec {
            span: span / 4096 * 4096,
            cluster: 4096,
            fill_pct: 50,
            daily_write,
            max_io: 256 << 10,
            max_trim: 32 << 20,
            max_file: (1u64 << 30).min(span / 32 / 4096 * 4096).max(4096),
            alloc: AllocPolicy::NextFit,
            seed,
        }
    }

    /// Checks the parameters; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        let c = self.cluster;
        if c < 512 || !c.is_power_of_two() {
            return Err(format!(
                "cluster {c} must be a power of two of at least 512"
            ));
        }
        for (name, v) in [
            ("span", self.span),
            ("max_io", self.max_io),
            ("max_trim", self.max_trim),
            ("max_file", self.max_file),
        ] {
            if v == 0 || v % c != 0 {
                return Err(format!(
                    "{name} {v} must be a positive multiple of the {c}-byte cluster"
                ));
            }
        }
        if self.max_trim > u32::MAX as u64 {
            return Err(format!("max_trim {} is above 4 GiB", self.max_trim));
        }
        if !(1..=95).contains(&self.fill_pct) {
            return Err(format!("fill {} % must be 1..95", self.fill_pct));
        }
        if self.daily_write == 0 {
            return Err("the daily write must be greater than 0".into());
        }
        if self.span / c < 64 {
            return Err(format!(
                "a volume of {} bytes is too small (64 clusters at least)",
                self.span
            ));
        }
        Ok(())
    }

    fn target_bytes(&self) -> u64 {
        (self.span as u128 * self.fill_pct as u128 / 100) as u64 / self.cluster * self.cluster
    }
}

/// One file: its extents `(offset, len)` in file order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct File {
    pub extents: Vec<(u64, u64)>,
}

impl File {
    pub fn bytes(&self) -> u64 {
        self.extents.iter().map(|e| e.1).sum()
    }
}

/// The file system: free extents and files.
#[derive(Debug, Clone)]
pub struct FileSystem {
    span: u64,
    cluster: u64,
    alloc: AllocPolicy,
    /// Free extents: start → length.
    free: BTreeMap<u64, u64>,
    free_bytes: u64,
    files: Vec<File>,
    cursor: u64,
}

impl FileSystem {
    /// An empty file system over `[0, span)`.
    pub fn new(span: u64, cluster: u64, alloc: AllocPolicy) -> FileSystem {
        let mut free = BTreeMap::new();
        free.insert(0, span);
        FileSystem {
            span,
            cluster,
            alloc,
            free,
            free_bytes: span,
            files: Vec::new(),
            cursor: 0,
        }
    }

    pub fn used_bytes(&self) -> u64 {
        self.span - self.free_bytes
    }
    pub fn free_bytes(&self) -> u64 {
        self.free_bytes
    }
    pub fn files(&self) -> &[File] {
        &self.files
    }
    pub fn free_extents(&self) -> usize {
        self.free.len()
    }

    /// Takes `len` bytes (a multiple of the cluster) of free space; `None` (and nothing taken)
    /// when there is less free space than that.
    pub fn allocate(&mut self, len: u64) -> Option<Vec<(u64, u64)>> {
        if len == 0 || len > self.free_bytes {
            return None;
        }
        let from = match self.alloc {
            AllocPolicy::NextFit => self.cursor,
            AllocPolicy::FirstFit => 0,
        };
        // A free extent around the cursor is searched from the cursor on: split it there for
        // the search, merged again below if nothing is taken from its second part.
        if let Some((&ps, &pl)) = self.free.range(..from).next_back() {
            if ps + pl > from {
                self.free.insert(ps, from - ps);
                self.free.insert(from, ps + pl - from);
            }
        }
        // The free extents in search order: from `from`, then wrapping to the start.
        let order = |free: &BTreeMap<u64, u64>| -> Vec<(u64, u64)> {
            free.range(from..)
                .chain(free.range(..from))
                .map(|(s, l)| (*s, *l))
                .collect()
        };
        let whole = self
            .free
            .range(from..)
            .chain(self.free.range(..from))
            .take(CONTIGUOUS_SCAN)
            .find(|(_, l)| **l >= len)
            .map(|(s, _)| *s);
        let mut out = Vec::new();
        match whole {
            Some(s) => out.push((s, len)),
            None => {
                let mut need = len;
                for (s, l) in order(&self.free) {
                    let take = l.min(need);
                    out.push((s, take));
                    need -= take;
                    if need == 0 {
                        break;
                    }
                }
            }
        }
        for &(s, take) in &out {
            let l = self.free.remove(&s).expect("a free extent");
            if take < l {
                self.free.insert(s + take, l - take);
            }
        }
        self.free_bytes -= len;
        if let Some(&fl) = self.free.get(&from) {
            if let Some((&ps, &pl)) = self.free.range(..from).next_back() {
                if ps + pl == from {
                    self.free.remove(&from);
                    self.free.insert(ps, pl + fl);
                }
            }
        }
        let &(s, l) = out.last().expect("at least one extent");
        self.cursor = if s + l >= self.span { 0 } else { s + l };
        Some(out)
    }

    /// Gives extents back, merging them with free neighbours.
    pub fn release(&mut self, extents: &[(u64, u64)]) {
        for &(mut s, mut l) in extents {
            self.free_bytes += l;
            if let Some((&ps, &pl)) = self.free.range(..s).next_back() {
                debug_assert!(ps + pl <= s, "freeing a free extent");
                if ps + pl == s {
                    self.free.remove(&ps);
                    s = ps;
                    l += pl;
                }
            }
            if let Some(&nl) = self.free.get(&(s + l)) {
                self.free.remove(&(s + l));
                l += nl;
            }
            self.free.insert(s, l);
        }
    }

    /// Checks the invariants: files and free extents are inside the volume, never overlap,
    /// cover it exactly, and the free count matches; free extents are merged.
    pub fn check(&self) -> Result<(), String> {
        let mut all: Vec<(u64, u64, bool)> =
            self.free.iter().map(|(s, l)| (*s, *l, true)).collect();
        for f in &self.files {
            all.extend(f.extents.iter().map(|&(s, l)| (s, l, false)));
        }
        all.sort_unstable();
        let mut at = 0;
        let mut prev_free = false;
        for (s, l, free) in all {
            if l == 0 || s % self.cluster != 0 || l % self.cluster != 0 {
                return Err(format!("extent ({s}, {l}) is empty or not cluster-aligned"));
            }
            if s != at {
                return Err(if s < at {
                    format!("extent at {s} overlaps the one ending at {at}")
                } else {
                    format!("{} bytes at {at} are neither free nor in a file", s - at)
                });
            }
            if free && prev_free {
                return Err(format!("free extents meet at {s} without being merged"));
            }
            prev_free = free;
            at = s + l;
        }
        if at != self.span {
            return Err(format!("extents end at {at}, the volume at {}", self.span));
        }
        let free: u64 = self.free.values().sum();
        if free != self.free_bytes {
            return Err(format!(
                "free bytes {} but the extents hold {free}",
                self.free_bytes
            ));
        }
        Ok(())
    }
}

/// The aging workload: a file system and the ops that fill and age it.
#[derive(Debug, Clone)]
pub struct Aging {
    spec: AgingSpec,
    fs: FileSystem,
    rng: Rng,
    days: u32,
}

/// What one phase (the fill, a day) did to the file system.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PhaseStats {
    pub created: u64,
    pub deleted: u64,
    pub rewritten: u64,
    pub appended: u64,
    pub written_bytes: u64,
    pub trimmed_bytes: u64,
}

impl Aging {
    pub fn new(spec: AgingSpec) -> Result<Aging, String> {
        spec.validate()?;
        Ok(Aging {
            fs: FileSystem::new(spec.span, spec.cluster, spec.alloc),
            rng: Rng::new(spec.seed),
            spec,
            days: 0,
        })
    }

    pub fn spec(&self) -> &AgingSpec {
        &self.spec
    }
    pub fn fs(&self) -> &FileSystem {
        &self.fs
    }
    /// Days generated so far.
    pub fn days(&self) -> u32 {
        self.days
    }

    /// A file size: lognormal, rounded up to whole clusters, at most `max_file`.
    fn file_size(&mut self) -> u64 {
        // Box–Muller from two uniforms in (0, 1].
        let u = |r: &mut Rng| ((r.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        let (u1, u2) = (u(&mut self.rng), u(&mut self.rng));
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        let bytes = (SIZE_MU + SIZE_SIGMA * z)
            .exp()
            .min(self.spec.max_file as f64) as u64;
        bytes.div_ceil(self.spec.cluster).max(1) * self.spec.cluster
    }

    fn write_ops(&self, extents: &[(u64, u64)], ops: &mut Vec<Op>) {
        split(extents, self.spec.max_io, OpKind::Write, ops);
    }

    /// Creates a file of `size` bytes (less when the volume cannot hold it); returns the bytes
    /// written.
    fn create(&mut self, size: u64, ops: &mut Vec<Op>) -> u64 {
        let size = size.min(self.fs.free_bytes / self.spec.cluster * self.spec.cluster);
        let Some(extents) = self.fs.allocate(size) else {
            return 0;
        };
        self.write_ops(&extents, ops);
        self.fs.files.push(File { extents });
        size
    }

    /// Deletes file `i`: its extents are freed and trimmed.
    fn delete(&mut self, i: usize, ops: &mut Vec<Op>) -> u64 {
        let f = self.fs.files.swap_remove(i);
        split(&f.extents, self.spec.max_trim, OpKind::Trim, ops);
        self.fs.release(&f.extents);
        f.bytes()
    }

    /// Fills the empty volume to the target utilisation with new files.
    pub fn fill(&mut self) -> (Vec<Op>, PhaseStats) {
        let mut ops = Vec::new();
        let mut st = PhaseStats::default();
        let target = self.spec.target_bytes();
        while self.fs.used_bytes() < target {
            let size = self.file_size().min(target - self.fs.used_bytes());
            let size = size.div_ceil(self.spec.cluster).max(1) * self.spec.cluster;
            let n = self.create(size, &mut ops);
            if n == 0 {
                break;
            }
            st.created += 1;
            st.written_bytes += n;
        }
        (ops, st)
    }

    /// One day of use: `daily_write` bytes of creates, rewrites and appends, with deletions
    /// keeping the volume at its target utilisation.
    pub fn day(&mut self) -> (Vec<Op>, PhaseStats) {
        let mut ops = Vec::new();
        let mut st = PhaseStats::default();
        let target = self.spec.target_bytes();
        while st.written_bytes < self.spec.daily_write {
            let left = self.spec.daily_write - st.written_bytes;
            let roll = self.rng.percent();
            let n = if roll >= CREATE_PCT && !self.fs.files.is_empty() {
                let i = self.rng.below(self.fs.files.len() as u64) as usize;
                if roll < CREATE_PCT + REWRITE_PCT {
                    // rewrite in place: the whole file, or the first `left` bytes of it
                    let mut ext = Vec::new();
                    let mut need = left.div_ceil(self.spec.cluster) * self.spec.cluster;
                    for &(s, l) in &self.fs.files[i].extents {
                        let take = l.min(need);
                        ext.push((s, take));
                        need -= take;
                        if need == 0 {
                            break;
                        }
                    }
                    self.write_ops(&ext, &mut ops);
                    st.rewritten += 1;
                    ext.iter().map(|e| e.1).sum()
                } else {
                    let size = self
                        .file_size()
                        .min(left.div_ceil(self.spec.cluster) * self.spec.cluster);
                    let size = size.min(self.fs.free_bytes);
                    match self.fs.allocate(size) {
                        Some(ext) => {
                            self.write_ops(&ext, &mut ops);
                            self.fs.files[i].extents.extend(ext);
                            st.appended += 1;
                            size
                        }
                        None => 0,
                    }
                }
            } else {
                let size = self
                    .file_size()
                    .min(left.div_ceil(self.spec.cluster) * self.spec.cluster);
                let n = self.create(size, &mut ops);
                if n > 0 {
                    st.created += 1;
                }
                n
            };
            st.written_bytes += n;
            while self.fs.used_bytes() > target && !self.fs.files.is_empty() {
                let i = self.rng.below(self.fs.files.len() as u64) as usize;
                st.trimmed_bytes += self.delete(i, &mut ops);
                st.deleted += 1;
            }
            if n == 0 && self.fs.free_bytes < self.spec.cluster {
                break;
            }
        }
        self.days += 1;
        (ops, st)
    }

    /// The writes of a new file of `size` bytes (cut to the free space) in the current free
    /// space, without keeping it: what copying a large file onto the volume now would write.
    pub fn probe(&self, size: u64) -> Vec<Op> {
        let mut fs = self.fs.clone();
        let size = size.min(fs.free_bytes) / self.spec.cluster * self.spec.cluster;
        let mut ops = Vec::new();
        if let Some(ext) = fs.allocate(size) {
            self.write_ops(&ext, &mut ops);
        }
        ops
    }
}

/// Requests of at most `max` bytes over `extents`.
fn split(extents: &[(u64, u64)], max: u64, kind: OpKind, ops: &mut Vec<Op>) {
    for &(s, l) in extents {
        let mut at = s;
        while at < s + l {
            let len = max.min(s + l - at);
            ops.push(Op {
                kind,
                offset: at,
                len,
            });
            at += len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(span: u64, alloc: AllocPolicy) -> AgingSpec {
        AgingSpec {
            alloc,
            ..AgingSpec::new(span, span / 10, 7)
        }
    }

    #[test]
    fn allocator_reuses_and_merges() {
        let mut fs = FileSystem::new(64 << 10, 4096, AllocPolicy::FirstFit);
        let a = fs.allocate(8192).unwrap();
        let b = fs.allocate(8192).unwrap();
        assert_eq!((a[0], b[0]), ((0, 8192), (8192, 8192)));
        fs.files.push(File { extents: b });
        fs.release(&a);
        fs.check().unwrap();
        // first-fit reuses the freed start; a request larger than any hole is fragmented
        assert_eq!(fs.allocate(4096).unwrap(), vec![(0, 4096)]);
        fs.release(&[(0, 4096)]);
        let c = fs.allocate(16384).unwrap();
        assert_eq!(c, vec![(16384, 16384)]);
        assert!(fs.allocate(1 << 20).is_none());
        fs.files.push(File { extents: c });
        fs.check().unwrap();
        // next-fit continues after the previous allocation
        let mut nf = FileSystem::new(64 << 10, 4096, AllocPolicy::NextFit);
        let a = nf.allocate(8192).unwrap();
        nf.release(&a);
        assert_eq!(nf.allocate(4096).unwrap(), vec![(8192, 4096)]);
    }

    #[test]
    fn extents_never_overlap_and_utilisation_is_bounded() {
        for alloc in [AllocPolicy::NextFit, AllocPolicy::FirstFit] {
            let s = spec(256 << 20, alloc);
            let mut a = Aging::new(s.clone()).unwrap();
            let (ops, st) = a.fill();
            assert!(ops
                .iter()
                .all(|o| o.kind == OpKind::Write && o.len <= s.max_io));
            assert_eq!(st.written_bytes, a.fs().used_bytes());
            a.fs().check().unwrap();
            let target = s.span / 2;
            assert!(a.fs().used_bytes() >= target && a.fs().used_bytes() < target + 4096 * 2);
            for _ in 0..20 {
                let (ops, st) = a.day();
                a.fs().check().unwrap();
                assert!(a.fs().used_bytes() <= target, "{alloc:?}");
                assert!(st.written_bytes >= s.daily_write);
                assert!(st.deleted > 0 && st.created > 0);
                for o in &ops {
                    assert!(
                        o.offset % 4096 == 0 && o.len % 4096 == 0 && o.offset + o.len <= s.span
                    );
                }
            }
        }
    }

    #[test]
    fn deletes_trim_exactly_the_freed_extents() {
        let mut a = Aging::new(spec(64 << 20, AllocPolicy::NextFit)).unwrap();
        a.fill();
        let before: Vec<File> = a.fs().files().to_vec();
        let mut ops = Vec::new();
        let victim = before[3].clone();
        let n = a.delete(3, &mut ops);
        assert_eq!(n, victim.bytes());
        // the trims cover exactly the file's extents, in order, nothing else
        let mut trimmed: Vec<(u64, u64)> = Vec::new();
        for o in &ops {
            assert_eq!(o.kind, OpKind::Trim);
            match trimmed.last_mut() {
                Some(last) if last.0 + last.1 == o.offset => last.1 += o.len,
                _ => trimmed.push((o.offset, o.len)),
            }
        }
        let mut want: Vec<(u64, u64)> = Vec::new();
        for &(s, l) in &victim.extents {
            match want.last_mut() {
                Some(last) if last.0 + last.1 == s => last.1 += l,
                _ => want.push((s, l)),
            }
        }
        assert_eq!(trimmed, want);
        a.fs().check().unwrap();
        // over a day, the bytes trimmed are the bytes of the files deleted, and every trimmed
        // cluster was in use before the day and is not in any file after the deletions
        let (ops, st) = a.day();
        let trim: u64 = ops
            .iter()
            .filter(|o| o.kind == OpKind::Trim)
            .map(|o| o.len)
            .sum();
        assert_eq!(trim, st.trimmed_bytes);
    }

    #[test]
    fn deterministic_and_seed_dependent() {
        let run = |seed| {
            let mut a = Aging::new(AgingSpec {
                seed,
                ..spec(128 << 20, AllocPolicy::NextFit)
            })
            .unwrap();
            let mut all = a.fill().0;
            for _ in 0..3 {
                all.extend(a.day().0);
            }
            all.extend(a.probe(8 << 20));
            all
        };
        assert_eq!(run(1), run(1));
        assert_ne!(run(1), run(2));
    }

    #[test]
    fn probe_writes_free_space_only_and_keeps_nothing() {
        let mut a = Aging::new(spec(64 << 20, AllocPolicy::NextFit)).unwrap();
        a.fill();
        a.day();
        let used = a.fs().used_bytes();
        let ops = a.probe(4 << 20);
        assert_eq!(ops.iter().map(|o| o.len).sum::<u64>(), 4 << 20);
        for o in &ops {
            for f in a.fs().files() {
                for &(s, l) in &f.extents {
                    assert!(
                        o.offset + o.len <= s || o.offset >= s + l,
                        "probe overwrote a file"
                    );
                }
            }
        }
        assert_eq!(a.fs().used_bytes(), used);
    }

    #[test]
    fn sizes_follow_the_distribution() {
        let mut a = Aging::new(AgingSpec::new(1 << 40, 1 << 30, 3)).unwrap();
        let mut v: Vec<u64> = (0..20_000).map(|_| a.file_size()).collect();
        v.sort_unstable();
        let median = v[v.len() / 2];
        // e^9.48 ≈ 13 KB, rounded up to 4 KiB clusters
        assert!((12 << 10..=20 << 10).contains(&median), "median {median}");
        let small = v.iter().filter(|&&x| x <= 64 << 10).count();
        assert!(small * 100 / v.len() > 60, "most files are small documents");
        assert!(*v.last().unwrap() > 64 << 20, "and some are large");
        assert!(spec(64, AllocPolicy::NextFit).validate().is_err());
        assert!(AgingSpec {
            fill_pct: 0,
            ..AgingSpec::new(1 << 30, 1, 1)
        }
        .validate()
        .is_err());
    }
}
