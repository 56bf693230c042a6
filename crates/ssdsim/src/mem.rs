//! Memory helpers for large in-memory tables (used by the simulator's mapping tables): a
//! fixed-length array backed by transparent huge pages where the kernel allows them, and a
//! cache prefetch hint.
//!
//! Large tables (≥ 2 MiB) are mapped anonymously, aligned to 2 MiB and marked
//! `MADV_HUGEPAGE` before their first touch, so they get 2 MiB pages even when the system's
//! transparent-huge-page mode is `madvise`: random lookups then cost a cache miss but no TLB
//! miss. Smaller tables (or when mapping fails) live in ordinary heap memory.

use std::fmt;
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Huge page size assumed for alignment (x86-64 and most aarch64 kernels).
const HUGE: usize = 2 << 20;

/// Element types a [`HugeVec`] can hold: plain values for which all-zero bytes are a valid
/// value (fresh anonymous memory is zero, so a zero-filled table needs no initial writes).
pub trait HugeElem: Copy + PartialEq + 'static {
    /// The value whose representation is all zero bytes.
    const ZERO: Self;
}

macro_rules! huge_elem {
    ($($t:ty = $z:expr),* $(,)?) => { $(impl HugeElem for $t { const ZERO: Self = $z; })* };
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
    bool = false,
);

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

    #[cfg(test)]
    /// Whether the memory is an anonymous mapping advised for huge pages.
    pub fn is_huge(&self) -> bool {
        matches!(self.backing, Backing::Map(_))
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
    fn huge_mapping_is_aligned() {
        let a: HugeVec<u64> = HugeVec::from_elem(1, 1 << 20);
        assert_eq!(a.as_ptr() as usize % HUGE, 0);
    }
}
