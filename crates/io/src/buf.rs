//! Heap buffers aligned for O_DIRECT (and for registration with io_uring).

use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

/// A zero-initialised heap buffer whose start is aligned to `align` bytes.
pub struct AlignedBuf {
    ptr: NonNull<u8>,
    layout: Layout,
}

// SAFETY: AlignedBuf owns its allocation exclusively, like a Box<[u8]>.
unsafe impl Send for AlignedBuf {}
// SAFETY: shared references only give out `&[u8]`.
unsafe impl Sync for AlignedBuf {}

impl AlignedBuf {
    /// Allocates `len` bytes (at least 1) aligned to `align` (a power of two); aborts when memory
    /// runs out, like `Vec`. Prefer [`AlignedBuf::try_new`] for sizes that come from the user.
    pub fn new(len: usize, align: usize) -> Self {
        Self::try_new(len, align).unwrap_or_else(|_| {
            std::alloc::handle_alloc_error(
                Layout::from_size_align(len.max(1), align.max(1).next_power_of_two())
                    .unwrap_or(Layout::new::<u8>()),
            )
        })
    }

    /// Allocates `len` bytes (at least 1) aligned to `align` (a power of two), or an
    /// `OutOfMemory` error when the allocation fails (never aborts).
    pub fn try_new(len: usize, align: usize) -> std::io::Result<Self> {
        let layout = Layout::from_size_align(len.max(1), align.max(1).next_power_of_two())
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e.to_string()))?;
        // SAFETY: the layout has a non-zero size.
        let raw = unsafe { alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::OutOfMemory,
                format!("cannot allocate {} bytes of I/O buffers", layout.size()),
            )
        })?;
        Ok(AlignedBuf { ptr, layout })
    }

    /// A buffer of no bytes that owns no memory (a placeholder).
    pub fn empty() -> Self {
        AlignedBuf {
            ptr: NonNull::dangling(),
            layout: Layout::new::<()>(),
        }
    }

    pub fn len(&self) -> usize {
        self.layout.size()
    }

    pub fn is_empty(&self) -> bool {
        self.layout.size() == 0
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid for layout.size() initialised bytes, owned by self.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.layout.size()) }
    }

    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.layout.size()) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.layout.size() == 0 {
            return; // `empty()`: nothing was allocated
        }
        // SAFETY: allocated in `try_new` with this exact layout.
        unsafe { dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let mut b = AlignedBuf::new(8192, 4096);
        assert_eq!(b.as_ptr() as usize % 4096, 0);
        assert!(b.as_slice().iter().all(|&x| x == 0));
        b.as_mut_slice()[10] = 7;
        assert_eq!(b.as_slice()[10], 7);
        assert_eq!(b.len(), 8192);
    }
}
