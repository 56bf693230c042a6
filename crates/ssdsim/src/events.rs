//! The completion queue: a binary min-heap of (time, submission sequence) keys packed into one
//! `u128`, so each comparison is a single wide compare. Keys are unique (every command gets its
//! own sequence number), so the pop order is fully determined by (time, sequence).

use std::collections::VecDeque;

#[derive(Clone, Copy)]
struct Ev {
    key: u128,
    tag: u64,
}

#[derive(Clone, Default)]
pub(crate) struct EventQueue {
    v: Vec<Ev>,
}

impl EventQueue {
    pub(crate) fn with_capacity(n: usize) -> Self {
        EventQueue {
            v: Vec::with_capacity(n),
        }
    }

    /// Adds the completion of command `seq` (tag `tag`) at time `t`.
    #[inline]
    pub(crate) fn push(&mut self, t: u64, seq: u64, tag: u64) {
        let ev = Ev {
            key: (t as u128) << 64 | seq as u128,
            tag,
        };
        let mut i = self.v.len();
        self.v.push(ev);
        while i > 0 {
            let parent = (i - 1) / 2;
            if self.v[parent].key <= ev.key {
                break;
            }
            self.v[i] = self.v[parent];
            i = parent;
        }
        self.v[i] = ev;
    }

    /// Time of the earliest completion.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.v.first().map(|e| (e.key >> 64) as u64)
    }

    /// Removes the earliest completion (ties in sequence order): `(time, tag)`.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, u64)> {
        let last = self.v.pop()?;
        let n = self.v.len();
        if n == 0 {
            return Some(((last.key >> 64) as u64, last.tag));
        }
        let top = self.v[0];
        // sift `last` down from the root
        let mut i = 0;
        loop {
            let l = 2 * i + 1;
            if l >= n {
                break;
            }
            let r = l + 1;
            let c = if r < n && self.v[r].key < self.v[l].key {
                r
            } else {
                l
            };
            if last.key <= self.v[c].key {
                break;
            }
            self.v[i] = self.v[c];
            i = c;
        }
        self.v[i] = last;
        Some(((top.key >> 64) as u64, top.tag))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.v.len()
    }
}

/// A min-priority queue of `(time, value)` pairs for keys that arrive nearly in order (page
/// program completions): a sorted deque, with insertion scanning from the back. Pops in the same
/// order as a `BinaryHeap<Reverse<(u64, u64)>>`.
#[derive(Clone, Default)]
pub(crate) struct SortedFifo {
    v: VecDeque<(u64, u64)>,
}

impl SortedFifo {
    /// Reserves room for `n` more entries, or fails without aborting.
    pub(crate) fn try_reserve(
        &mut self,
        n: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.v.try_reserve(n)
    }

    #[inline]
    pub(crate) fn push(&mut self, x: (u64, u64)) {
        let mut i = self.v.len();
        while i > 0 && self.v[i - 1] > x {
            i -= 1;
        }
        if i == self.v.len() {
            self.v.push_back(x);
        } else {
            self.v.insert(i, x);
        }
    }

    #[inline]
    pub(crate) fn peek(&self) -> Option<(u64, u64)> {
        self.v.front().copied()
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, u64)> {
        self.v.pop_front()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.v.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    #[test]
    fn same_order_as_std_heap() {
        let mut x = 12345u64;
        let mut q = EventQueue::default();
        let mut h = BinaryHeap::new();
        let mut seq = 0;
        for round in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if !(x >> 33).is_multiple_of(3) || q.len() == 0 {
                seq += 1;
                let t = round + (x >> 40) % 64;
                q.push(t, seq, x);
                h.push(Reverse((t, seq, x)));
            } else {
                let Reverse((t, _, tag)) = h.pop().unwrap();
                assert_eq!(q.peek_time(), Some(t));
                assert_eq!(q.pop(), Some((t, tag)));
            }
            assert_eq!(q.len(), h.len());
        }
        while let Some(Reverse((t, _, tag))) = h.pop() {
            assert_eq!(q.pop(), Some((t, tag)));
        }
        assert_eq!(q.pop(), None);
        assert_eq!(q.peek_time(), None);
    }

    #[test]
    fn sorted_fifo_same_order_as_std_heap() {
        let mut x = 777u64;
        let mut q = SortedFifo::default();
        let mut h = BinaryHeap::new();
        for round in 0..20_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if !(x >> 33).is_multiple_of(3) || q.is_empty() {
                let e = (round + (x >> 40) % 256, (x >> 20) % 4);
                q.push(e);
                h.push(Reverse(e));
            } else {
                let Reverse(e) = h.pop().unwrap();
                assert_eq!(q.peek(), Some(e));
                assert_eq!(q.pop(), Some(e));
            }
        }
        while let Some(Reverse(e)) = h.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.is_empty());
    }
}
