//! Point-to-point messages between the ranks of a job, and the collectives ssdlab builds on them
//! (binomial trees rooted at rank 0). MPI is one [`Transport`] (feature `mpi`); [`LocalTransport`]
//! runs ranks as threads of one process, for tests and for measuring the aggregation at rank
//! counts no test machine has.

use std::cell::RefCell;
use std::sync::mpsc::{channel, Receiver, Sender};

/// Message tag: each protocol step uses its own, so their messages never mix.
pub type Tag = i32;

/// Sends and receives byte messages between the ranks `0..size()` of a job. Messages from one
/// rank with one tag arrive in the order they were sent (MPI's non-overtaking rule). Only one
/// thread of a rank uses its transport.
pub trait Transport {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Sends `data` to rank `to` (may return before it is received).
    fn send(&self, to: usize, tag: Tag, data: &[u8]);
    /// Waits for the next message with `tag` from rank `from`.
    fn recv(&self, from: usize, tag: Tag) -> Vec<u8>;
    /// The next message with `tag` from any rank, if one has arrived: (sender, data).
    fn try_recv_any(&self, tag: Tag) -> Option<(usize, Vec<u8>)>;
    /// The next message with `tag` from rank `from`, if one has arrived.
    fn try_recv(&self, from: usize, tag: Tag) -> Option<Vec<u8>>;
}

type Envelope = (usize, Tag, Vec<u8>);

/// Ranks as threads of one process, connected by channels.
pub struct LocalTransport {
    rank: usize,
    peers: Vec<Sender<Envelope>>,
    inbox: Receiver<Envelope>,
    /// Messages received while looking for another one.
    early: RefCell<Vec<Envelope>>,
}

impl LocalTransport {
    /// `n` connected ranks; give each to its own thread.
    pub fn group(n: usize) -> Vec<LocalTransport> {
        let (txs, rxs): (Vec<_>, Vec<_>) = (0..n).map(|_| channel()).unzip();
        rxs.into_iter()
            .enumerate()
            .map(|(rank, inbox)| LocalTransport {
                rank,
                peers: txs.clone(),
                inbox,
                early: RefCell::new(Vec::new()),
            })
            .collect()
    }

    fn take_early(&self, pred: impl Fn(&Envelope) -> bool) -> Option<Envelope> {
        let mut early = self.early.borrow_mut();
        let i = early.iter().position(pred)?;
        Some(early.remove(i))
    }
}

impl Transport for LocalTransport {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.peers.len()
    }
    fn send(&self, to: usize, tag: Tag, data: &[u8]) {
        // A rank that has ended drops its inbox; like MPI's buffered sends, this is not an error.
        let _ = self.peers[to].send((self.rank, tag, data.to_vec()));
    }
    fn recv(&self, from: usize, tag: Tag) -> Vec<u8> {
        if let Some(e) = self.take_early(|e| e.0 == from && e.1 == tag) {
            return e.2;
        }
        loop {
            let e = self
                .inbox
                .recv()
                .expect("a local rank ended while others wait for it");
            if e.0 == from && e.1 == tag {
                return e.2;
            }
            self.early.borrow_mut().push(e);
        }
    }
    fn try_recv_any(&self, tag: Tag) -> Option<(usize, Vec<u8>)> {
        if let Some(e) = self.take_early(|e| e.1 == tag) {
            return Some((e.0, e.2));
        }
        while let Ok(e) = self.inbox.try_recv() {
            if e.1 == tag {
                return Some((e.0, e.2));
            }
            self.early.borrow_mut().push(e);
        }
        None
    }
    fn try_recv(&self, from: usize, tag: Tag) -> Option<Vec<u8>> {
        if let Some(e) = self.take_early(|e| e.0 == from && e.1 == tag) {
            return Some(e.2);
        }
        while let Ok(e) = self.inbox.try_recv() {
            if e.0 == from && e.1 == tag {
                return Some(e.2);
            }
            self.early.borrow_mut().push(e);
        }
        None
    }
}

/// The parent of `rank` in the binomial tree rooted at 0 (its lowest set bit cleared).
pub fn parent(rank: usize) -> Option<usize> {
    (rank != 0).then(|| rank & (rank - 1))
}

/// The children of `rank` in the binomial tree rooted at 0, smallest subtree first.
pub fn children(rank: usize, size: usize) -> Vec<usize> {
    let mut out = Vec::new();
    let mut k = 1usize;
    while k < size {
        if rank & k != 0 {
            break;
        }
        if rank + k < size {
            out.push(rank + k);
        }
        k <<= 1;
    }
    out
}

/// Tree reduction to rank 0: every rank merges what its children send into `acc`, then sends
/// the result to its parent. Rank 0 gets the merge of every rank's value; the others get `None`.
/// Each rank handles at most ⌈log2 size⌉ messages, so the critical path is
/// O(log ranks × message size) and the total work O(ranks × message size).
pub fn reduce<T: Transport, A>(
    t: &T,
    tag: Tag,
    mut acc: A,
    mut merge: impl FnMut(&mut A, Vec<u8>),
    encode: impl FnOnce(&A) -> Vec<u8>,
) -> Option<A> {
    for c in children(t.rank(), t.size()) {
        let data = t.recv(c, tag);
        merge(&mut acc, data);
    }
    match parent(t.rank()) {
        Some(p) => {
            t.send(p, tag, &encode(&acc));
            None
        }
        None => Some(acc),
    }
}

/// Every rank's `data` at rank 0, in rank order (`None` on the other ranks).
pub fn gather<T: Transport>(t: &T, tag: Tag, data: Vec<u8>) -> Option<Vec<Vec<u8>>> {
    if t.rank() != 0 {
        t.send(0, tag, &data);
        return None;
    }
    let mut all = Vec::with_capacity(t.size());
    all.push(data);
    for r in 1..t.size() {
        all.push(t.recv(r, tag));
    }
    Some(all)
}

/// Rank 0's `data` on every rank, down the binomial tree.
pub fn broadcast<T: Transport>(t: &T, tag: Tag, data: Option<Vec<u8>>) -> Vec<u8> {
    let data = match parent(t.rank()) {
        Some(p) => t.recv(p, tag),
        None => data.expect("rank 0 gives the data to broadcast"),
    };
    for c in children(t.rank(), t.size()).into_iter().rev() {
        t.send(c, tag, &data);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_ranks<R: Send>(n: usize, f: impl Fn(LocalTransport) -> R + Sync) -> Vec<R> {
        std::thread::scope(|s| {
            let hs: Vec<_> = LocalTransport::group(n)
                .into_iter()
                .map(|t| s.spawn(|| f(t)))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn tree_shape() {
        assert_eq!(children(0, 8), vec![1, 2, 4]);
        assert_eq!(children(4, 8), vec![5, 6]);
        assert_eq!(children(6, 8), vec![7]);
        assert_eq!(children(0, 5), vec![1, 2, 4]);
        assert_eq!(children(4, 5), Vec::<usize>::new());
        for size in 1..70 {
            // every rank but 0 is the child of exactly its parent
            let mut seen = vec![0; size];
            for r in 0..size {
                for c in children(r, size) {
                    assert_eq!(parent(c), Some(r));
                    seen[c] += 1;
                }
            }
            assert_eq!(seen.iter().skip(1).filter(|&&n| n != 1).count(), 0);
        }
    }

    #[test]
    fn reduce_gather_broadcast() {
        for n in [1, 2, 3, 5, 8, 13] {
            let out = on_ranks(n, |t| {
                let r = t.rank() as u64;
                let sum = reduce(
                    &t,
                    1,
                    r + 1,
                    |a, d| *a += u64::from_le_bytes(d.try_into().unwrap()),
                    |a| a.to_le_bytes().to_vec(),
                );
                let all = gather(&t, 2, vec![r as u8]);
                let b = broadcast(&t, 3, (t.rank() == 0).then(|| vec![42, n as u8]));
                (sum, all, b)
            });
            let n64 = n as u64;
            assert_eq!(out[0].0, Some(n64 * (n64 + 1) / 2));
            assert_eq!(
                out[0].1.as_ref().unwrap(),
                &(0..n).map(|r| vec![r as u8]).collect::<Vec<_>>()
            );
            for (r, o) in out.iter().enumerate() {
                assert_eq!(o.2, vec![42, n as u8]);
                if r > 0 {
                    assert!(o.0.is_none() && o.1.is_none());
                }
            }
        }
    }
}
