//! Time structures: the event queue and resource calendars.
//!
//! The event queue: a binary min-heap of (time, submission sequence) keys packed into one
//! `u128`, so each comparison is a single wide compare. Keys are unique (every command gets its
//! own sequence number), so the pop order is fully determined by (time, sequence).
//! [`Agenda`] puts a sorted FIFO beside the heap for host completions, which are nearly always
//! scheduled in time order: appending one costs a compare instead of heap sifts, and the pop
//! order stays exactly that of one heap.

/// A FIFO of `Copy` items in one `Vec` with a moving head: cheaper than a `VecDeque` (no
/// index wrapping) for the short queues of the hot path. Popped slots at the front are reused
/// by sliding the live items down when a push finds the vector full, so a queue whose length
/// stays within its capacity never allocates (sliding moves at most that many items, and
/// happens once per capacity's worth of pushes when the queue runs near full).
#[derive(Clone)]
pub(crate) struct Ring<T> {
    v: Vec<T>,
    head: usize,
}

impl<T> Default for Ring<T> {
    fn default() -> Self {
        Ring {
            v: Vec::new(),
            head: 0,
        }
    }
}

impl<T: Copy> Ring<T> {
    pub(crate) fn with_capacity(n: usize) -> Self {
        Ring {
            v: Vec::with_capacity(n),
            head: 0,
        }
    }

    /// Reserves room for `n` more items, or fails without aborting.
    pub(crate) fn try_reserve(
        &mut self,
        n: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.v.try_reserve(n)
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.v.len() - self.head
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.v.len() == self.head
    }

    #[inline]
    pub(crate) fn front(&self) -> Option<&T> {
        self.v.get(self.head)
    }

    #[inline]
    pub(crate) fn back(&self) -> Option<&T> {
        if self.is_empty() {
            None
        } else {
            self.v.last()
        }
    }

    #[inline]
    pub(crate) fn back_mut(&mut self) -> Option<&mut T> {
        if self.is_empty() {
            None
        } else {
            self.v.last_mut()
        }
    }

    #[inline]
    pub(crate) fn pop_front(&mut self) -> Option<T> {
        let x = *self.v.get(self.head)?;
        self.head += 1;
        if self.head == self.v.len() {
            self.v.clear();
            self.head = 0;
        }
        Some(x)
    }

    #[inline]
    pub(crate) fn push_back(&mut self, x: T) {
        if self.v.len() == self.v.capacity() && self.head > 0 {
            self.slide();
        }
        self.v.push(x);
    }

    #[cold]
    fn slide(&mut self) {
        self.v.drain(..self.head);
        self.head = 0;
    }

    /// The live items, front first.
    #[inline]
    pub(crate) fn as_slice(&self) -> &[T] {
        &self.v[self.head..]
    }

    #[inline]
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.v[self.head..]
    }

    pub(crate) fn insert(&mut self, i: usize, x: T) {
        if self.v.len() == self.v.capacity() && self.head > 0 {
            self.slide();
        }
        self.v.insert(self.head + i, x);
    }

    pub(crate) fn remove(&mut self, i: usize) -> T {
        self.v.remove(self.head + i)
    }
}

/// Saved as its live items, front first (the consumed slots before the head are not state).
impl<T: Copy + serde::Serialize> serde::Serialize for Ring<T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.as_slice().serialize(s)
    }
}

impl<'de, T: Copy + serde::Deserialize<'de>> serde::Deserialize<'de> for Ring<T> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(Ring {
            v: Vec::deserialize(d)?,
            head: 0,
        })
    }
}

impl<T: Copy> std::ops::Index<usize> for Ring<T> {
    type Output = T;
    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.as_slice()[i]
    }
}

impl<T: Copy> std::ops::IndexMut<usize> for Ring<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        &mut self.as_mut_slice()[i]
    }
}

// Event tags: kind (3 bits) | drive (13 bits) | payload (48 bits).
pub(crate) const EV_HOST_DONE: u64 = 0;
pub(crate) const EV_DIE_DONE: u64 = 1;
pub(crate) const EV_DIE_WAKE: u64 = 2;
/// Payload of an `EV_DIE_WAKE` that wakes the firmware cores (for queued GC jobs), not a die.
pub(crate) const FW_WAKE: u64 = 1 << 47;
pub(crate) const EV_FLUSH: u64 = 3;
pub(crate) const EV_ARRIVE: u64 = 4;
pub(crate) const EV_ADAPTER_DONE: u64 = 5;
/// The write-back cache may hand a member its next item.
pub(crate) const EV_CACHE_PUMP: u64 = 6;
/// The host has been idle for `ftl.pslc_idle_fold_ns` (payload: the drive's idle generation).
pub(crate) const EV_IDLE: u64 = 7;
pub(crate) const MAX_DRIVES: usize = 1 << 13;

#[inline]
pub(crate) fn ev(kind: u64, drive: u32, payload: u64) -> u64 {
    kind << 61 | (drive as u64) << 48 | payload
}
#[inline]
pub(crate) fn ev_kind(tag: u64) -> u64 {
    tag >> 61
}
#[inline]
pub(crate) fn ev_drive(tag: u64) -> usize {
    ((tag >> 48) & (MAX_DRIVES as u64 - 1)) as usize
}
#[inline]
pub(crate) fn ev_payload(tag: u64) -> u64 {
    tag & ((1 << 48) - 1)
}

#[derive(Clone, Copy, serde::Serialize, serde::Deserialize)]
struct Ev {
    key: u128,
    tag: u64,
}

#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
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
    #[cfg(test)]
    pub(crate) fn peek_time(&self) -> Option<u64> {
        self.v.first().map(|e| (e.key >> 64) as u64)
    }

    #[inline]
    fn peek_key(&self) -> Option<u128> {
        self.v.first().map(|e| e.key)
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

/// The event queue of a simulation: a heap for events in arbitrary order, plus a sorted FIFO
/// for host completions, which are nearly always scheduled in time order (a completion that
/// would have to go far back goes to the heap). Pops in the same `(time, sequence)` order as
/// one heap would; a completion costs an append and a compare instead of heap sifts.
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Agenda {
    heap: EventQueue,
    fifo: Ring<Ev>,
}

/// How far back a completion may be inserted into the FIFO.
const FIFO_SCAN: usize = 8;

impl Agenda {
    pub(crate) fn with_capacity(heap: usize, fifo: usize) -> Self {
        Agenda {
            heap: EventQueue::with_capacity(heap),
            fifo: Ring::with_capacity(fifo),
        }
    }

    #[inline]
    pub(crate) fn push(&mut self, t: u64, seq: u64, tag: u64) {
        self.heap.push(t, seq, tag);
    }

    /// Adds a host completion (nearly always later than the ones already queued).
    #[inline(always)]
    pub(crate) fn push_completion(&mut self, t: u64, seq: u64, tag: u64) {
        let ev = Ev {
            key: (t as u128) << 64 | seq as u128,
            tag,
        };
        match self.fifo.back() {
            Some(last) if last.key > ev.key => self.insert_completion(ev),
            _ => self.fifo.push_back(ev),
        }
    }

    /// A completion earlier than the last one queued: into the FIFO when it goes at most
    /// [`FIFO_SCAN`] places back, otherwise into the heap.
    #[cold]
    fn insert_completion(&mut self, ev: Ev) {
        let n = self.fifo.len();
        let mut i = n - 1;
        while i > 0 && n - i < FIFO_SCAN && self.fifo[i - 1].key > ev.key {
            i -= 1;
        }
        if (i == 0 || self.fifo[i - 1].key <= ev.key) && n - i < FIFO_SCAN {
            self.fifo.insert(i, ev);
        } else {
            self.heap.push((ev.key >> 64) as u64, ev.key as u64, ev.tag);
        }
    }

    /// Time of the earliest event.
    #[inline]
    pub(crate) fn peek_time(&self) -> Option<u64> {
        match (self.fifo.front(), self.heap.peek_key()) {
            (Some(f), Some(h)) => Some((f.key.min(h) >> 64) as u64),
            (Some(f), None) => Some((f.key >> 64) as u64),
            (None, h) => h.map(|k| (k >> 64) as u64),
        }
    }

    /// Removes the earliest event: `(time, tag)`.
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<(u64, u64)> {
        if let Some(f) = self.fifo.front() {
            if self.heap.peek_key().is_none_or(|h| f.key < h) {
                let f = self.fifo.pop_front().expect("front");
                return Some(((f.key >> 64) as u64, f.tag));
            }
        }
        self.heap.pop()
    }
}

/// The busy intervals of a resource that serves transfers one at a time (a flash channel, the
/// host link, a shared uplink), kept as sorted, disjoint, merged `[start, end)` intervals.
///
/// [`Calendar::book`] places a transfer at the earliest gap at or after its ready time that is
/// long enough (work-conserving gap filling): a transfer booked later for an earlier time uses
/// an idle stretch before transfers already booked, instead of queueing behind them. Intervals
/// that ended before the current time are dropped as time advances, so the calendar only holds
/// the near future (a few intervals: adjacent bookings merge).
#[derive(Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Calendar {
    iv: Ring<(u64, u64)>,
}

impl Calendar {
    /// Reserves room for `n` intervals, or fails without aborting.
    pub(crate) fn try_reserve(
        &mut self,
        n: usize,
    ) -> Result<(), std::collections::TryReserveError> {
        self.iv.try_reserve(n)
    }

    /// Books `dur` ns at the earliest gap starting at or after `t` (the caller's current time is
    /// `now <= t`); returns `(start, end)`.
    #[inline(always)]
    pub(crate) fn book(&mut self, now: u64, t: u64, dur: u64) -> (u64, u64) {
        while let Some(&(_, e)) = self.iv.front() {
            if e > now {
                break;
            }
            self.iv.pop_front();
        }
        if dur == 0 {
            return (t, t);
        }
        match self.iv.back_mut() {
            None => {
                self.iv.push_back((t, t + dur));
                (t, t + dur)
            }
            // at or after the start of the last busy stretch: right after it, or later
            Some(last) if t >= last.0 && t <= last.1 => {
                let s = last.1;
                last.1 += dur;
                (s, s + dur)
            }
            Some(last) if t > last.1 => {
                self.iv.push_back((t, t + dur));
                (t, t + dur)
            }
            Some(_) => self.book_slow(t, dur),
        }
    }

    /// Where [`Calendar::book`] would start `dur` ns asked for at `t` (nothing is booked).
    pub(crate) fn peek(&self, t: u64, dur: u64) -> u64 {
        self.gap(t, dur).1
    }

    /// The earliest gap of `dur` ns at or after `t`: the index of the first interval after it
    /// and its start.
    fn gap(&self, t: u64, dur: u64) -> (usize, u64) {
        let mut i = self.iv.as_slice().partition_point(|iv| iv.1 <= t);
        let mut s = t;
        while i < self.iv.len() {
            let (a, b) = self.iv[i];
            if s + dur <= a {
                break;
            }
            s = s.max(b);
            i += 1;
        }
        (i, s)
    }

    #[cold]
    fn book_slow(&mut self, t: u64, dur: u64) -> (u64, u64) {
        let (i, s) = self.gap(t, dur);
        let e = s + dur;
        // merge with the previous interval (ends exactly at s) and/or the next (starts at e)
        let joins_prev = i > 0 && self.iv[i - 1].1 == s;
        let joins_next = i < self.iv.len() && self.iv[i].0 == e;
        match (joins_prev, joins_next) {
            (true, true) => {
                self.iv[i - 1].1 = self.iv[i].1;
                self.iv.remove(i);
            }
            (true, false) => self.iv[i - 1].1 = e,
            (false, true) => self.iv[i].0 = s,
            (false, false) => self.iv.insert(i, (s, e)),
        }
        (s, e)
    }

    /// Busy time booked after `t`.
    pub(crate) fn busy_after(&self, t: u64) -> u64 {
        self.iv
            .as_slice()
            .iter()
            .filter(|iv| iv.1 > t)
            .map(|iv| iv.1 - iv.0.max(t))
            .sum()
    }

    /// The booked intervals (tests).
    #[cfg(test)]
    fn intervals(&self) -> Vec<(u64, u64)> {
        self.iv.as_slice().to_vec()
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
    fn agenda_same_order_as_one_heap() {
        let mut x = 4242u64;
        let mut a = Agenda::default();
        let mut h = BinaryHeap::new();
        let mut seq = 0;
        let mut now = 0;
        for _ in 0..50_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            if !(x >> 33).is_multiple_of(3) || h.is_empty() {
                seq += 1;
                // completions mostly in order, sometimes earlier than the latest
                let t = now + (x >> 40) % 100 + if x.is_multiple_of(7) { 0 } else { 50 };
                if x.is_multiple_of(2) {
                    a.push_completion(t, seq, x);
                } else {
                    a.push(t, seq, x);
                }
                h.push(Reverse((t, seq, x)));
            } else {
                let Reverse((t, _, tag)) = h.pop().unwrap();
                assert_eq!(a.peek_time(), Some(t));
                assert_eq!(a.pop(), Some((t, tag)));
                now = t;
            }
        }
        while let Some(Reverse((t, _, tag))) = h.pop() {
            assert_eq!(a.pop(), Some((t, tag)));
        }
        assert_eq!(a.pop(), None);
    }

    /// The calendar against a brute-force timeline of booked nanoseconds.
    #[test]
    fn calendar_fills_the_earliest_gap() {
        let mut x = 99u64;
        let mut cal = Calendar::default();
        let mut busy: Vec<bool> = vec![false; 20_000];
        let mut now = 0u64;
        for _ in 0..2_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            now += (x >> 40) % 3;
            let t = now + (x >> 20) % 60;
            let dur = 1 + (x >> 50) % 9;
            let (s, e) = cal.book(now, t, dur);
            assert_eq!(e - s, dur);
            // the brute-force earliest gap
            let mut want = t;
            while (want..want + dur).any(|i| busy[i as usize]) {
                want += 1;
            }
            assert_eq!(s, want, "booked at {s}, earliest gap at {want}");
            for i in s..e {
                busy[i as usize] = true;
            }
            let iv = cal.intervals();
            for w in iv.windows(2) {
                assert!(w[0].1 < w[1].0, "intervals disjoint and merged: {iv:?}");
            }
            let after: u64 = (now + 1..20_000).filter(|&i| busy[i as usize]).count() as u64;
            assert_eq!(cal.busy_after(now + 1), after);
        }
    }
}
