//! Memory helpers for large in-memory tables (used by the simulator's mapping tables): a
//! fixed-length array backed by transparent huge pages where the kernel allows them
//! ([`HugeVec`]), a sparse table whose memory grows with the entries written, not with its
//! length ([`SparseVec`]), and a cache prefetch hint.
//!
//! Large tables (≥ 2 MiB) are mapped anonymously, aligned to 2 MiB and marked
//! `MADV_HUGEPAGE` before their first touch, so they get 2 MiB pages even when the system's
//! transparent-huge-page mode is `madvise`: random lookups then cost a cache miss but no TLB
//! miss. Smaller tables (or when mapping fails) live in ordinary heap memory.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;
use std::sync::Arc;

/// Huge page size assumed for alignment (x86-64 and most aarch64 kernels).
const HUGE: usize = 2 << 20;

/// Element types a [`HugeVec`] can hold: plain values for which all-zero bytes are a valid
/// value (fresh anonymous memory is zero, so a zero-filled table needs no initial writes).
///
/// # Safety
///
/// [`HugeVec`] reads fresh mappings (all zero bytes) as `Self` without writing them first, and,
/// when [`HugeElem::ANY_BITS`] is true, memory reused without zeroing: an implementor must have
/// no padding, no drop glue and no pointers, all-zero bytes must be a valid value equal to
/// [`HugeElem::ZERO`], and `ANY_BITS` may be true only if every bit pattern is a valid value.
pub unsafe trait HugeElem: Copy + PartialEq + 'static {
    /// The value whose representation is all zero bytes.
    const ZERO: Self;
    /// Every bit pattern is a valid value (integers): memory reused without zeroing may be
    /// viewed as `Self`.
    const ANY_BITS: bool = true;
}

macro_rules! huge_elem {
    ($($t:ty = $z:expr),* $(,)?) => { $(
        // SAFETY: a primitive integer: no padding, every bit pattern valid, zero bytes are 0.
        unsafe impl HugeElem for $t { const ZERO: Self = $z; }
    )* };
}
huge_elem!(
    u8 = 0,
    u16 = 0,
    u32 = 0,
    u64 = 0,
    usize = 0,
    i8 = 0,
    i16 = 0,
    i32 = 0,
    i64 = 0,
    isize = 0,
);
// SAFETY: a zero byte is `false`; other bit patterns are not valid, so ANY_BITS is false.
unsafe impl HugeElem for bool {
    const ZERO: Self = false;
    const ANY_BITS: bool = false;
}

/// Where the memory of a [`HugeVec`] came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Backing {
    /// A leaked `Box<[T]>` (small tables, or mapping failed).
    Heap,
    /// An anonymous mapping of this many bytes starting at `ptr`.
    Map(usize),
}

/// A fixed-length array of `T`, on transparent huge pages when large. Dereferences to `[T]`;
/// cloning copies the contents into a new allocation of the same kind.
pub struct HugeVec<T: HugeElem> {
    ptr: NonNull<T>,
    len: usize,
    backing: Backing,
}

// SAFETY: a HugeVec owns its elements exclusively, like a Box<[T]>.
unsafe impl<T: HugeElem + Send> Send for HugeVec<T> {}
// SAFETY: shared access only hands out `&[T]`.
unsafe impl<T: HugeElem + Sync> Sync for HugeVec<T> {}

impl<T: HugeElem> HugeVec<T> {
    /// An empty array.
    pub fn new() -> Self {
        Self::from_box(Box::new([]))
    }

    /// `len` copies of `value`; aborts when memory runs out (like `vec!`).
    pub fn from_elem(value: T, len: usize) -> Self {
        Self::try_from_elem(value, len).unwrap_or_else(|bytes| {
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(bytes.max(1), align_of::<T>())
                    .unwrap_or(std::alloc::Layout::new::<T>()),
            )
        })
    }

    /// `len` copies of `value`, or `Err(bytes)` when that much memory cannot be had.
    pub fn try_from_elem(value: T, len: usize) -> Result<Self, usize> {
        let mut v = Self::try_alloc(len, value)?;
        if v.backing != Backing::Heap && value != T::ZERO {
            v.fill(value);
        }
        Ok(v)
    }

    fn from_box(b: Box<[T]>) -> Self {
        let len = b.len();
        let raw = Box::into_raw(b) as *mut T;
        HugeVec {
            // SAFETY: Box::into_raw never returns null.
            ptr: unsafe { NonNull::new_unchecked(raw) },
            len,
            backing: Backing::Heap,
        }
    }

    /// Memory for `len` elements: mapped and zero (so valid, as `T::ZERO` is all zero bytes)
    /// when large enough for huge pages, else a heap array filled with `value`.
    fn try_alloc(len: usize, value: T) -> Result<Self, usize> {
        let bytes = len.checked_mul(size_of::<T>()).ok_or(usize::MAX)?;
        if bytes >= HUGE && align_of::<T>() <= 4096 {
            if bytes == HUGE {
                if let Some(p) = pool::take() {
                    // SAFETY: the pool hands out a mapping of HUGE bytes it owned; it is ours
                    // now, and zeroed here before anything reads it as `T`.
                    unsafe { std::ptr::write_bytes(p.as_ptr(), 0, HUGE) };
                    return Ok(HugeVec {
                        ptr: p.cast(),
                        len,
                        backing: Backing::Map(HUGE),
                    });
                }
            }
            if let Some((ptr, map_len)) = map_huge(bytes) {
                return Ok(HugeVec {
                    ptr: ptr.cast(),
                    len,
                    backing: Backing::Map(map_len),
                });
            }
        }
        let mut v = Vec::new();
        v.try_reserve_exact(len).map_err(|_| bytes)?;
        v.resize(len, value);
        Ok(Self::from_box(v.into_boxed_slice()))
    }

    /// A slab of one huge page from the pool, not zeroed (it holds whatever its last table
    /// left), for element types any bit pattern of which is valid; None when the pool is empty.
    fn dirty_slab(len: usize) -> Option<Self> {
        if !T::ANY_BITS || len.checked_mul(size_of::<T>()) != Some(HUGE) || align_of::<T>() > 4096 {
            return None;
        }
        let p = pool::take()?;
        Some(HugeVec {
            ptr: p.cast(),
            len,
            backing: Backing::Map(HUGE),
        })
    }

    /// The start of the elements, with the provenance of the whole allocation (pointers into
    /// the array are derived from it without creating a reference).
    #[inline]
    fn base(&self) -> *mut T {
        self.ptr.as_ptr()
    }

    #[cfg(test)]
    /// Whether the memory is an anonymous mapping advised for huge pages.
    pub fn is_huge(&self) -> bool {
        matches!(self.backing, Backing::Map(_))
    }
}

/// Mappings of one huge page given back by dropped tables ([`SparseVec`] slabs, mostly), kept
/// for the next table of that size: a preconditioned drive cloned again and again (a sweep's
/// points, a calibration fit's evaluations) then costs a copy into memory already faulted in,
/// not a page fault and a kernel clear per page (which took ¾ of such runs). The pool never
/// holds more than [`pool::MAX_SLABS`]; memory taken from it is zeroed before use, so a table
/// behaves exactly as on a fresh mapping. The process's memory stays at most its peak.
mod pool {
    use super::HUGE;
    use std::ptr::NonNull;
    use std::sync::Mutex;

    /// 4 GiB of slabs at most; beyond that they are unmapped.
    pub const MAX_SLABS: usize = 2048;

    /// Start addresses of free mappings of HUGE bytes.
    static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

    pub fn take() -> Option<NonNull<u8>> {
        let a = FREE.lock().ok()?.pop()?;
        NonNull::new(a as *mut u8)
    }

    /// Keeps a mapping of HUGE bytes (true) or refuses it (the caller unmaps it).
    pub fn give(p: NonNull<u8>) -> bool {
        debug_assert_eq!(p.as_ptr() as usize % HUGE, 0);
        match FREE.lock() {
            Ok(mut v) if v.len() < MAX_SLABS => {
                v.push(p.as_ptr() as usize);
                true
            }
            _ => false,
        }
    }

    #[cfg(test)]
    pub fn len() -> usize {
        FREE.lock().map(|v| v.len()).unwrap_or(0)
    }
}

/// Maps at least `bytes` of zeroed anonymous memory aligned to 2 MiB and advised for huge
/// pages; returns the start and the mapped length.
fn map_huge(bytes: usize) -> Option<(NonNull<u8>, usize)> {
    let map_len = bytes.checked_add(HUGE - 1)? / HUGE * HUGE;
    let over = map_len.checked_add(HUGE)?;
    // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            over,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let aligned = start.next_multiple_of(HUGE);
    let head = aligned - start;
    let tail = over - head - map_len;
    // SAFETY: both ranges lie inside the mapping just created and are not used afterwards.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((aligned + map_len) as *mut libc::c_void, tail);
        }
        // Advice only; failure (e.g. THP disabled) leaves ordinary pages.
        #[cfg(target_os = "linux")]
        libc::madvise(aligned as *mut libc::c_void, map_len, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8).map(|p| (p, map_len))
}

impl<T: HugeElem> Default for HugeVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: HugeElem> Deref for HugeVec<T> {
    type Target = [T];
    #[inline]
    fn deref(&self) -> &[T] {
        // SAFETY: ptr points at len initialised elements owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: HugeElem> DerefMut for HugeVec<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref, and &mut self gives exclusive access.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: HugeElem> Clone for HugeVec<T> {
    fn clone(&self) -> Self {
        let mut v = Self::from_elem(T::ZERO, self.len);
        v.copy_from_slice(self);
        v
    }
}

impl<T: HugeElem> Drop for HugeVec<T> {
    fn drop(&mut self) {
        match self.backing {
            Backing::Heap => {
                let raw = std::ptr::slice_from_raw_parts_mut(self.ptr.as_ptr(), self.len);
                // SAFETY: ptr/len came from Box::into_raw of a Box<[T]> in from_box.
                drop(unsafe { Box::from_raw(raw) });
            }
            Backing::Map(map_len) => {
                if map_len == HUGE && pool::give(self.ptr.cast()) {
                    return;
                }
                // SAFETY: the mapping was created by map_huge with this start and length and
                // nothing borrows it any more.
                unsafe {
                    libc::munmap(self.ptr.as_ptr().cast(), map_len);
                }
            }
        }
    }
}

impl<T: HugeElem + fmt::Debug> fmt::Debug for HugeVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: HugeElem> PartialEq for HugeVec<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

/// Bytes of one chunk of a [`SparseVec`].
pub const CHUNK_BYTES: usize = 64 << 10;

/// What every unallocated chunk of every [`SparseVec`] reads: zeros, never written.
#[repr(C, align(4096))]
struct ZeroChunk([u8; CHUNK_BYTES]);
static ZERO_CHUNK: ZeroChunk = ZeroChunk([0; CHUNK_BYTES]);

#[inline(always)]
fn zero_addr() -> usize {
    std::ptr::addr_of!(ZERO_CHUNK) as usize
}

/// A fixed-length array of `T`, all [`HugeElem::ZERO`] at first, whose memory is allocated
/// per chunk of [`CHUNK_BYTES`] on the first write into the chunk: a table sized by a drive's
/// capacity costs memory (and address space) only for the regions a run writes.
///
/// The chunks live in slabs of 2 MiB on transparent huge pages ([`HugeVec`]), handed out in
/// the order the chunks are first written, so the written regions sit densely on huge pages
/// whatever their place in the table. A directory holds, per chunk, a pointer biased so that
/// `directory[i / per_chunk] + i` is the address of element `i`; an unallocated chunk's entry
/// points at one shared read-only zero chunk. A read is then a bounds check, a shift and two
/// loads, with no branch on whether the chunk exists; a write checks whether its address lies
/// in the zero chunk and allocates the chunk if so.
///
/// Copy on write: after [`SparseVec::freeze`], a clone shares every chunk with the original
/// instead of copying it (the shared slabs are kept alive by reference counts), and a chunk is
/// copied only when either side first writes into it. Writes go through a second directory
/// ([`SparseVec::wdir`]) in which every chunk not owned (unallocated or shared) points at the
/// zero chunk, so the write path's one check covers both cases. A fitter or a sweep that runs
/// many workloads from one preconditioned drive then copies only what each run writes.
pub struct SparseVec<T: HugeElem> {
    /// Per chunk: `chunk start - k * per_chunk` (wrapping), element-wise. Reads go here.
    dir: Vec<*mut T>,
    /// As `dir` for the chunks this table owns (may write); the zero chunk's entry for the
    /// others (unallocated, or shared after a freeze). Writes go here.
    wdir: Vec<*mut T>,
    len: usize,
    /// Backing memory of the owned chunks (never moved or freed while `self` lives).
    slabs: Vec<HugeVec<T>>,
    /// Memory of the shared chunks, frozen: never written while any reference lives.
    shared: Vec<Arc<Vec<HugeVec<T>>>>,
    /// Every chunk is shared: a clone shares them too instead of copying.
    frozen: bool,
    /// Chunks handed out of the last slab.
    used: usize,
    /// The last slab came from the pool unzeroed: a chunk handed out of it is zeroed first
    /// (unless it is about to be overwritten whole, as in a clone).
    dirty: bool,
    /// Chunks this table owns (allocated since it was made or last frozen).
    chunks: usize,
    /// Starts of owned chunks given back ([`SparseVec::release_chunk`]), in this table's own
    /// slabs: the next chunks allocated reuse them before the last slab grows.
    spare: Vec<*mut T>,
}

// SAFETY: a SparseVec owns its chunks exclusively, except the zero chunk and the chunks shared
// after a freeze, which are never written; the raw pointers in its directories point only into
// its own slabs, the shared slabs it holds a reference to, or the zero chunk, and those of its
// given-back chunks only into its own slabs. Shared chunks are
// read from several threads, hence `Sync` as well.
unsafe impl<T: HugeElem + Send + Sync> Send for SparseVec<T> {}
// SAFETY: shared access only reads.
unsafe impl<T: HugeElem + Sync> Sync for SparseVec<T> {}

/// Slab size in bytes (one transparent huge page).
const SLAB_BYTES: usize = HUGE;

impl<T: HugeElem> SparseVec<T> {
    /// Elements per chunk.
    pub const PER_CHUNK: usize = {
        assert!(size_of::<T>().is_power_of_two() && size_of::<T>() <= 4096);
        CHUNK_BYTES / size_of::<T>()
    };
    const SHIFT: u32 = Self::PER_CHUNK.trailing_zeros();

    /// An empty table.
    pub fn new() -> Self {
        SparseVec {
            dir: Vec::new(),
            wdir: Vec::new(),
            len: 0,
            slabs: Vec::new(),
            shared: Vec::new(),
            frozen: false,
            used: 0,
            dirty: false,
            chunks: 0,
            spare: Vec::new(),
        }
    }

    #[inline(always)]
    fn zero_entry(k: usize) -> *mut T {
        (std::ptr::addr_of!(ZERO_CHUNK) as *mut T).wrapping_sub(k << Self::SHIFT)
    }

    /// `len` zero elements (only the directory is allocated: 8 bytes per chunk), or
    /// `Err(bytes)` when the directory cannot be had.
    pub fn try_zeroed(len: usize) -> Result<Self, usize> {
        let n = len.div_ceil(Self::PER_CHUNK);
        let mut dir = Vec::new();
        dir.try_reserve_exact(n)
            .map_err(|_| n.saturating_mul(size_of::<usize>()))?;
        dir.extend((0..n).map(Self::zero_entry));
        let mut wdir = Vec::new();
        wdir.try_reserve_exact(n)
            .map_err(|_| n.saturating_mul(size_of::<usize>()))?;
        wdir.extend_from_slice(&dir);
        Ok(SparseVec {
            dir,
            wdir,
            len,
            slabs: Vec::new(),
            shared: Vec::new(),
            frozen: false,
            used: 0,
            dirty: false,
            chunks: 0,
            spare: Vec::new(),
        })
    }

    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Chunks in the table (allocated or not).
    pub fn chunk_count(&self) -> usize {
        self.dir.len()
    }

    #[cfg(test)]
    /// Chunks this table owns.
    pub fn allocated_chunks(&self) -> usize {
        self.chunks
    }

    /// Bytes of memory the table holds: the directories and the slabs its own chunks came from
    /// (not the chunks it shares with others).
    pub fn allocated_bytes(&self) -> usize {
        2 * self.dir.len() * size_of::<usize>()
            + self
                .slabs
                .iter()
                .map(|s| s.len * size_of::<T>())
                .sum::<usize>()
    }

    /// Whether chunk `k` has memory (its own, or shared).
    #[inline]
    pub fn is_allocated(&self, k: usize) -> bool {
        self.dir[k].wrapping_add(k << Self::SHIFT) as usize != zero_addr()
    }

    /// Whether chunk `k` is this table's own (may be written in place).
    #[inline]
    fn is_owned(&self, k: usize) -> bool {
        self.wdir[k].wrapping_add(k << Self::SHIFT) as usize != zero_addr()
    }

    /// Makes every chunk shared: from now on a clone shares the chunks instead of copying them,
    /// and whoever writes into a shared chunk first (this table or a clone) copies it. Cheap:
    /// the directories are rewritten, no element is copied.
    pub fn freeze(&mut self) {
        if self.frozen {
            return;
        }
        if !self.slabs.is_empty() {
            self.shared.push(Arc::new(std::mem::take(&mut self.slabs)));
        }
        self.used = 0;
        self.dirty = false;
        self.chunks = 0;
        // the given-back chunks' slabs are shared now: never written again
        self.spare.clear();
        for (k, w) in self.wdir.iter_mut().enumerate() {
            *w = Self::zero_entry(k);
        }
        self.frozen = true;
    }

    /// A clone sharing every chunk with `self` (frozen): the directories copied, no element.
    fn share(&self) -> Self {
        debug_assert!(self.frozen);
        SparseVec {
            dir: self.dir.clone(),
            wdir: (0..self.dir.len()).map(Self::zero_entry).collect(),
            len: self.len,
            slabs: Vec::new(),
            shared: self.shared.clone(),
            frozen: true,
            used: 0,
            dirty: false,
            chunks: 0,
            spare: Vec::new(),
        }
    }

    /// Address of element `i` (`i < len`): in its chunk or in the zero chunk.
    #[inline(always)]
    fn addr(&self, i: usize) -> *mut T {
        if i >= self.len {
            out_of_range(i, self.len);
        }
        // SAFETY: i < len, so i / PER_CHUNK < dir.len().
        unsafe { self.dir.get_unchecked(i >> Self::SHIFT) }.wrapping_add(i)
    }

    /// Element `i`; panics when `i >= len`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> T {
        // SAFETY: addr gives a pointer to element i inside its chunk or inside the zero chunk
        // (which holds PER_CHUNK zero elements); both are live while self is.
        unsafe { *self.addr(i) }
    }

    /// Element `i`, or `None` when `i >= len`.
    #[inline(always)]
    pub fn try_get(&self, i: usize) -> Option<T> {
        if i >= self.len {
            return None;
        }
        // SAFETY: i < len, so i / PER_CHUNK < dir.len(); as in get.
        Some(unsafe { *self.dir.get_unchecked(i >> Self::SHIFT).wrapping_add(i) })
    }

    /// A pointer to element `i` that may be written: its chunk is allocated first if needed.
    /// Panics when `i >= len`; aborts when memory runs out (like `Vec` growing). The pointer
    /// stays valid as long as `self` is not dropped (chunks never move, and moving `self`
    /// does not move them).
    #[inline(always)]
    pub fn addr_mut(&mut self, i: usize) -> *mut T {
        if i >= self.len {
            out_of_range(i, self.len);
        }
        // SAFETY: i < len, so i / PER_CHUNK < wdir.len() == dir.len().
        let p = unsafe { self.wdir.get_unchecked(i >> Self::SHIFT) }.wrapping_add(i);
        if (p as usize).wrapping_sub(zero_addr()) < CHUNK_BYTES {
            return self.alloc_for(i);
        }
        p
    }

    /// Sets element `i`; panics when `i >= len`.
    #[inline(always)]
    pub fn set(&mut self, i: usize, v: T) {
        let p = self.addr_mut(i);
        // SAFETY: addr_mut points at element i of an allocated chunk owned by self.
        unsafe { *p = v }
    }

    #[cfg(test)]
    /// Element `i`, writable; panics when `i >= len`.
    #[inline(always)]
    pub fn get_mut(&mut self, i: usize) -> &mut T {
        let p = self.addr_mut(i);
        // SAFETY: as in set; the borrow of self keeps the chunk alive and unaliased.
        unsafe { &mut *p }
    }

    #[cold]
    #[inline(never)]
    fn alloc_for(&mut self, i: usize) -> *mut T {
        self.alloc_chunk(i >> Self::SHIFT)
            .wrapping_add(i & (Self::PER_CHUNK - 1))
    }

    /// Makes chunk `k` (not owned) this table's own and returns its start: all zero when it
    /// had no memory, a copy of the shared chunk when it had.
    fn alloc_chunk(&mut self, k: usize) -> *mut T {
        if !self.is_allocated(k) {
            return self.alloc_chunk_with(k, true);
        }
        let first = k * Self::PER_CHUNK;
        let n = Self::PER_CHUNK.min(self.len - first);
        let src = self.dir[k].wrapping_add(first) as *const T;
        let p = self.alloc_chunk_with(k, false);
        // SAFETY: src is the start of the shared chunk k (n elements, kept alive by
        // self.shared, never written), p the start of the new chunk k owned by self
        // (PER_CHUNK >= n elements): distinct allocations. The new chunk's elements beyond n
        // (a last chunk cut at len) are never read.
        unsafe { std::ptr::copy_nonoverlapping(src, p, n) };
        p
    }

    /// Gives chunk `k` back: every element of it reads [`HugeElem::ZERO`] again. An owned
    /// chunk's memory is kept for the next chunk allocated (the table's memory does not shrink,
    /// but it stops growing while chunks come and go); a shared one is only no longer read.
    pub fn release_chunk(&mut self, k: usize) {
        if !self.is_allocated(k) {
            return;
        }
        if self.is_owned(k) {
            self.spare.push(self.wdir[k].wrapping_add(k << Self::SHIFT));
            self.chunks -= 1;
        }
        self.dir[k] = Self::zero_entry(k);
        self.wdir[k] = Self::zero_entry(k);
    }

    /// Allocates chunk `k` (unallocated) and returns its start; when `zero` is false and the
    /// memory came from the pool, its elements are whatever they were (valid values: see
    /// [`HugeElem::ANY_BITS`]) and the caller overwrites them all.
    fn alloc_chunk_with(&mut self, k: usize, zero: bool) -> *mut T {
        let per = Self::PER_CHUNK;
        if let Some(start) = self.spare.pop() {
            if zero {
                // SAFETY: a given-back chunk lies in one of self's own slabs (spare is
                // emptied when they are shared), `per` elements, no longer in any directory.
                unsafe { std::ptr::write_bytes(start, 0, per) };
            }
            return self.adopt_chunk(k, start);
        }
        if self
            .slabs
            .last()
            .is_none_or(|s| (self.used + 1) * per > s.len())
        {
            // a slab of one huge page (mapped, faulted in as chunks are used), or the whole
            // table when it is smaller (on the heap)
            let n = (SLAB_BYTES / size_of::<T>()).min(self.dir.len() * per);
            match HugeVec::dirty_slab(n) {
                Some(slab) => {
                    self.slabs.push(slab);
                    self.dirty = true;
                }
                None => {
                    self.slabs.push(HugeVec::from_elem(T::ZERO, n));
                    self.dirty = false;
                }
            }
            self.used = 0;
        }
        let slab = self.slabs.last().expect("a slab was just added");
        // SAFETY: (used + 1) * per <= slab.len(): the chunk lies inside the slab.
        let start = unsafe { slab.base().add(self.used * per) };
        if self.dirty && zero {
            // SAFETY: the chunk's `per` elements lie inside the slab, owned by self, unshared.
            unsafe { std::ptr::write_bytes(start, 0, per) };
        }
        self.used += 1;
        self.adopt_chunk(k, start)
    }

    /// Makes the chunk of memory at `start` (owned by self, unused) chunk `k`.
    fn adopt_chunk(&mut self, k: usize, start: *mut T) -> *mut T {
        self.chunks += 1;
        self.dir[k] = start.wrapping_sub(k << Self::SHIFT);
        self.wdir[k] = self.dir[k];
        // an owned chunk is not shared: a clone copies again (until the next freeze)
        self.frozen = false;
        start
    }

    /// The elements of chunk `k` (the zero chunk's when it is not allocated; the last chunk
    /// is cut at `len`).
    pub fn chunk(&self, k: usize) -> &[T] {
        let first = k * Self::PER_CHUNK;
        let n = Self::PER_CHUNK.min(self.len - first);
        let p = self.dir[k].wrapping_add(first);
        // SAFETY: p is the start of chunk k (or of the zero chunk), n <= PER_CHUNK elements.
        unsafe { std::slice::from_raw_parts(p, n) }
    }

    /// The elements of chunk `k`, writable (allocated first if needed).
    pub fn chunk_mut(&mut self, k: usize) -> &mut [T] {
        let first = k * Self::PER_CHUNK;
        let n = Self::PER_CHUNK.min(self.len - first);
        let p = if self.is_owned(k) {
            self.wdir[k].wrapping_add(first)
        } else {
            self.alloc_chunk(k)
        };
        // SAFETY: p is the start of the allocated chunk k owned by self; n <= PER_CHUNK.
        unsafe { std::slice::from_raw_parts_mut(p, n) }
    }

    /// The allocated chunks in table order: (chunk index, elements).
    pub fn allocated(&self) -> impl Iterator<Item = (usize, &[T])> + '_ {
        (0..self.dir.len())
            .filter(|&k| self.is_allocated(k))
            .map(|k| (k, self.chunk(k)))
    }

    /// Every element in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        (0..self.dir.len()).flat_map(|k| self.chunk(k).iter().copied())
    }

    /// Hints the CPU to load element `i` into the cache (nothing when out of range).
    #[inline(always)]
    pub fn prefetch(&self, i: usize) {
        if i < self.len {
            // SAFETY: as in addr.
            prefetch_ptr(unsafe { self.dir.get_unchecked(i >> Self::SHIFT) }.wrapping_add(i));
        }
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_range(i: usize, len: usize) -> ! {
    panic!("index {i} out of range for a table of {len} entries")
}

impl<T: HugeElem> Default for SparseVec<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: HugeElem> Clone for SparseVec<T> {
    /// Copies the allocated chunks only (aborts when memory runs out, like `Vec::clone`); a
    /// frozen table's clone shares them instead ([`SparseVec::freeze`]).
    fn clone(&self) -> Self {
        if self.frozen {
            return self.share();
        }
        let mut v = SparseVec::try_zeroed(self.len).unwrap_or_else(|bytes| {
            std::alloc::handle_alloc_error(
                std::alloc::Layout::from_size_align(bytes.max(1), 8)
                    .unwrap_or(std::alloc::Layout::new::<usize>()),
            )
        });
        for (k, c) in self.allocated() {
            // every element of the new chunk is written here: no need to zero it first
            let p = v.alloc_chunk_with(k, false);
            // SAFETY: p is the start of v's chunk k (PER_CHUNK elements, owned by v), c is a
            // chunk of self (at most PER_CHUNK elements): distinct allocations.
            unsafe { std::ptr::copy_nonoverlapping(c.as_ptr(), p, c.len()) };
        }
        v
    }
}

impl<T: HugeElem + fmt::Debug> fmt::Debug for SparseVec<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SparseVec")
            .field("len", &self.len)
            .field("allocated_chunks", &self.chunks)
            .finish()
    }
}

impl<T: HugeElem> PartialEq for SparseVec<T> {
    /// Equal contents (whatever chunks each has allocated).
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && (0..self.dir.len()).all(|k| self.chunk(k) == other.chunk(k))
    }
}

/// Hints the CPU to bring the cache line holding `slice[i]` into the cache (no effect when `i`
/// is out of range or on targets without a prefetch instruction). Never faults, never blocks.
#[inline(always)]
pub fn prefetch<T>(slice: &[T], i: usize) {
    if let Some(x) = slice.get(i) {
        prefetch_ptr(x as *const T);
    }
}

#[inline(always)]
fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetch is a hint: it never faults and has no architectural effect; `p` points
    // into a live slice anyway.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slab_from_the_pool_is_zero_like_a_fresh_mapping() {
        let n = HUGE / 4;
        for _ in 0..3 {
            let mut v = HugeVec::<u32>::from_elem(0, n);
            assert!(v.iter().all(|&x| x == 0));
            v.fill(0xdead_beef);
            drop(v);
            assert!(pool::len() <= pool::MAX_SLABS);
        }
        // a sparse table written, dropped and built again reads zero where it was not written
        let mut a = SparseVec::<u32>::try_zeroed(4 * n).unwrap();
        for i in (0..4 * n).step_by(7) {
            a.set(i, i as u32 | 1);
        }
        let b = a.clone();
        assert!(a == b);
        drop(a);
        let mut c = SparseVec::<u32>::try_zeroed(4 * n).unwrap();
        c.set(3, 9);
        assert!((0..4 * n).all(|i| c.get(i) == if i == 3 { 9 } else { 0 }));
        assert!((0..4 * n).all(|i| b.get(i) == if i % 7 == 0 { i as u32 | 1 } else { 0 }));
    }

    /// A chunk given back reads zero; its memory is the next chunk's (zeroed), so a table whose
    /// chunks come and go stops growing; a shared chunk given back by a clone stays the
    /// original's.
    #[test]
    fn a_released_chunk_reads_zero_and_is_reused() {
        let per = SparseVec::<u32>::PER_CHUNK;
        let mut a = SparseVec::<u32>::try_zeroed(64 * per).unwrap();
        for k in 0..4 {
            a.set(k * per + 5, 7 + k as u32);
        }
        let held = a.allocated_bytes();
        let first = a.chunk(1).as_ptr();
        a.release_chunk(1);
        a.release_chunk(1);
        a.release_chunk(40);
        assert_eq!(a.allocated_chunks(), 3);
        assert_eq!(a.get(per + 5), 0);
        assert!(!a.is_allocated(1));
        assert_eq!(a.get(2 * per + 5), 9);
        // the next chunk written takes the given-back memory, zeroed
        a.set(50 * per, 1);
        assert_eq!(a.allocated_bytes(), held);
        assert_eq!(a.chunk(50).as_ptr(), first);
        assert_eq!(a.allocated_chunks(), 4);
        assert!(a.chunk(50).iter().skip(1).all(|&x| x == 0));
        assert_eq!(a.get(50 * per), 1);
        // a copy made before the release keeps its own chunk
        let c = a.clone();
        a.release_chunk(0);
        assert_eq!((a.get(5), c.get(5)), (0, 7));
        // frozen: a clone that gives a shared chunk back leaves the original's alone, and
        // writes into it again as a new zero chunk
        a.freeze();
        let mut b = a.clone();
        b.release_chunk(2);
        assert_eq!((a.get(2 * per + 5), b.get(2 * per + 5)), (9, 0));
        b.set(2 * per + 6, 3);
        assert_eq!((a.get(2 * per + 6), b.get(2 * per + 5)), (0, 0));
        assert_eq!(b.get(2 * per + 6), 3);
        // and a frozen table's given-back chunks are not reused (they are shared)
        a.release_chunk(3);
        a.set(60 * per, 2);
        assert_eq!((b.get(3 * per + 5), a.get(3 * per + 5)), (10, 0));
    }

    #[test]
    fn small_and_large_fill_clone_drop() {
        for len in [0usize, 1, 1000, (3 << 20) / 4 + 17] {
            for v in [0u32, u32::MAX, 7] {
                let mut a = HugeVec::from_elem(v, len);
                assert_eq!(a.len(), len);
                assert!(a.iter().all(|&x| x == v));
                assert_eq!(a.is_huge(), len * 4 >= HUGE);
                if len > 0 {
                    a[len - 1] = 3;
                    a[0] = 5;
                }
                let b = a.clone();
                assert_eq!(a, b);
                assert_eq!(b.is_huge(), a.is_huge());
                if len > 1 {
                    a[1] = 9;
                    assert_ne!(a, b);
                    assert_eq!(b[0], 5);
                }
                prefetch(&a, 0);
                prefetch(&a, len); // out of range: no effect
            }
        }
        let b: HugeVec<bool> = HugeVec::from_elem(true, 5 << 20);
        assert!(b.iter().all(|&x| x));
        let e: HugeVec<u8> = HugeVec::default();
        assert!(e.is_empty());
    }

    #[test]
    fn sparse_reads_zero_without_allocating() {
        let per = SparseVec::<u32>::PER_CHUNK;
        let v: SparseVec<u32> = SparseVec::try_zeroed(5 * per + 7).unwrap();
        assert_eq!(v.len(), 5 * per + 7);
        assert_eq!(v.chunk_count(), 6);
        for i in [0, 1, per - 1, per, 3 * per + 5, 5 * per + 6] {
            assert_eq!(v.get(i), 0);
        }
        v.prefetch(2 * per);
        v.prefetch(v.len()); // out of range: nothing
        assert_eq!(v.allocated_chunks(), 0);
        assert_eq!(v.iter().count(), v.len());
        assert!(v.iter().all(|x| x == 0));
        assert_eq!(v.allocated_bytes(), 2 * 6 * 8);
    }

    #[test]
    fn sparse_writes_allocate_their_chunk_only() {
        let per = SparseVec::<u32>::PER_CHUNK;
        let mut v: SparseVec<u32> = SparseVec::try_zeroed(100 * per).unwrap();
        // both sides of a chunk boundary
        v.set(per - 1, 7);
        assert_eq!(v.allocated_chunks(), 1);
        v.set(per, 8);
        assert_eq!(v.allocated_chunks(), 2);
        v.set(per, 9);
        *v.get_mut(99 * per + per - 1) += 3;
        assert_eq!(v.allocated_chunks(), 3);
        assert_eq!(
            (v.get(per - 1), v.get(per), v.get(100 * per - 1)),
            (7, 9, 3)
        );
        assert_eq!((v.get(per - 2), v.get(per + 1), v.get(0)), (0, 0, 0));
        assert!(v.is_allocated(0) && v.is_allocated(1) && v.is_allocated(99));
        assert!(!v.is_allocated(2));
        let idx: Vec<usize> = v.allocated().map(|(k, _)| k).collect();
        assert_eq!(idx, [0, 1, 99]);
        // the chunks share one huge-page slab
        assert_eq!(v.slabs.len(), 1);
        assert!(v.slabs[0].is_huge());
        // the zero chunk stayed zero
        assert!(v.chunk(50).iter().all(|&x| x == 0));
        // a written chunk is a whole chunk of the table
        assert_eq!(v.chunk(1)[0], 9);
    }

    #[test]
    fn sparse_small_and_u8_tables() {
        let mut v: SparseVec<u8> = SparseVec::try_zeroed(1000).unwrap();
        assert_eq!(v.chunk_count(), 1);
        v.set(999, 4);
        assert_eq!(v.get(999), 4);
        assert_eq!(v.chunk(0).len(), 1000);
        assert!(!v.slabs[0].is_huge()); // a small table's one chunk lives on the heap
        let e: SparseVec<u8> = SparseVec::default();
        assert!(e.is_empty());
        assert_eq!(e.clone(), e);
    }

    #[test]
    #[should_panic(expected = "out of range")]
    fn sparse_out_of_range_panics() {
        let v: SparseVec<u32> = SparseVec::try_zeroed(10).unwrap();
        v.get(10);
    }

    #[test]
    fn sparse_clone_copies_allocated_chunks() {
        let per = SparseVec::<u32>::PER_CHUNK;
        let mut a: SparseVec<u32> = SparseVec::try_zeroed(40 * per + 3).unwrap();
        a.set(3, 1);
        a.set(40 * per + 2, 2);
        let mut b = a.clone();
        assert_eq!(a, b);
        assert_eq!(b.allocated_chunks(), 2);
        b.set(3, 5);
        assert_ne!(a, b);
        assert_eq!(a.get(3), 1);
        // equal contents, different chunks allocated: still equal
        let mut c = a.clone();
        c.set(20 * per, 0);
        assert_eq!(c.allocated_chunks(), 3);
        assert_eq!(a, c);
        drop(a);
        assert_eq!(c.get(40 * per + 2), 2);
    }

    #[test]
    fn a_frozen_table_is_shared_and_copied_on_write_by_either_side() {
        let per = SparseVec::<u32>::PER_CHUNK;
        let mut a: SparseVec<u32> = SparseVec::try_zeroed(10 * per + 5).unwrap();
        a.set(1, 11);
        a.set(10 * per + 4, 12); // the last chunk, cut at len
        a.freeze();
        let mut b = a.clone();
        let c = a.clone();
        // nothing copied: the clones own no chunk, and read the shared ones
        assert_eq!((b.allocated_chunks(), b.slabs.len()), (0, 0));
        assert_eq!((b.get(1), b.get(10 * per + 4)), (11, 12));
        assert_eq!(b, a);
        // a clone's write copies its chunk and leaves the others' alone
        b.set(2, 21);
        assert_eq!((b.get(1), b.get(2), b.allocated_chunks()), (11, 21, 1));
        assert_eq!((a.get(2), c.get(2)), (0, 0));
        b.set(10 * per + 4, 22);
        assert_eq!((a.get(10 * per + 4), b.get(10 * per + 4)), (12, 22));
        // a chunk nobody had is allocated zero
        b.set(5 * per, 23);
        assert_eq!(b.chunk(5).iter().filter(|&&x| x != 0).count(), 1);
        // the frozen original copies on its own writes too
        a.chunk_mut(0)[3] = 31;
        assert_eq!((a.get(1), a.get(3), c.get(3), b.get(3)), (11, 31, 0, 0));
        // a table with chunks of its own is copied whole by a clone again
        let d = b.clone();
        assert_eq!(d, b);
        assert_eq!(d.allocated_chunks(), 3); // chunks 0, 5 and 10, all b has
                                             // the shared memory outlives the table it came from
        drop(a);
        assert_eq!((c.get(1), d.get(1), d.get(2)), (11, 11, 21));
        // freezing again shares the clone's own chunks as well
        b.freeze();
        let e = b.clone();
        drop(b);
        assert_eq!((e.get(1), e.get(2), e.get(5 * per)), (11, 21, 23));
    }

    proptest::proptest! {
        #[test]
        fn frozen_clones_match_flat_tables(
            len in 1usize..100_000,
            ops in proptest::collection::vec((0usize..3, 0usize..100_000, 0u32..4), 0..300),
        ) {
            // three tables, each cloned from the one before at points where it is frozen;
            // every write lands in exactly one table
            let mut v: Vec<SparseVec<u32>> = vec![SparseVec::try_zeroed(len).unwrap()];
            let mut m = vec![vec![0u32; len]];
            for (n, (t, i, x)) in ops.into_iter().enumerate() {
                if n % 50 == 25 && v.len() < 3 {
                    let last = v.len() - 1;
                    v[last].freeze();
                    let c = v[last].clone();
                    v.push(c);
                    m.push(m[last].clone());
                }
                let t = t % v.len();
                let i = i % len;
                v[t].set(i, x);
                m[t][i] = x;
            }
            for (vt, mt) in v.iter().zip(&m) {
                proptest::prop_assert!(vt.iter().eq(mt.iter().copied()));
            }
        }

        #[test]
        fn sparse_matches_a_flat_table(
            len in 1usize..200_000,
            ops in proptest::collection::vec((0usize..200_000, 0u32..4), 0..200),
        ) {
            let mut v: SparseVec<u32> = SparseVec::try_zeroed(len).unwrap();
            let mut m = vec![0u32; len];
            for (i, x) in ops {
                let i = i % len;
                v.set(i, x);
                m[i] = x;
                proptest::prop_assert_eq!(v.get(i), x);
            }
            proptest::prop_assert!(v.iter().eq(m.iter().copied()));
            let c = v.clone();
            proptest::prop_assert!(c.iter().eq(m.iter().copied()));
            let used = m
                .chunks(SparseVec::<u32>::PER_CHUNK)
                .enumerate()
                .filter(|(k, _)| v.is_allocated(*k))
                .count();
            proptest::prop_assert_eq!(used, v.allocated_chunks());
        }
    }

    #[test]
    fn huge_mapping_is_aligned() {
        let a: HugeVec<u64> = HugeVec::from_elem(1, 1 << 20);
        assert_eq!(a.as_ptr() as usize % HUGE, 0);
    }
}
