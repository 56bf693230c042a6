//! The points of a sweep spread over the ranks of a job: rank 0 hands out the next point to
//! whichever rank asks (dynamic assignment), runs points itself on a thread, and alone writes
//! the store (through [`ssdlab_sweep::run_sweep`], which calls [`Dispatcher`] as its
//! [`PointPool`]). A rank keeps to the drive state it has (points grouped by state), so each
//! rank builds few states.

use crate::transport::{Tag, Transport};
use serde::{Deserialize, Serialize};
use ssdlab_sweep::{run_one, Point, PointOutcome, PointPool, PointRunner, SweepError};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, TryRecvError};
use std::time::Duration;

const TAG_ASK: Tag = 30;
const TAG_WORK: Tag = 31;
const POLL: Duration = Duration::from_millis(1);

/// A rank asks for work, with the outcome of its last point.
#[derive(Serialize, Deserialize)]
struct Ask {
    done: Option<(String, PointOutcome)>,
}

/// Rank 0's answer (or, for `Abort`, its word in between).
#[derive(Serialize, Deserialize)]
enum Work {
    Run(String),
    /// Stop the running point (Ctrl-C at rank 0): it is abandoned.
    Abort,
    /// No more points for this rank.
    Stop,
}

/// Rank 0's side: a [`PointPool`] over every rank (rank 0 itself on a thread).
pub struct Dispatcher<'a, T: Transport> {
    t: &'a T,
    /// The drive state a point starts from (points of one state go to the same rank when they can).
    group: Option<&'a (dyn Fn(&Point) -> String + Sync)>,
    /// The ranks told to stop (rank 0 is never asked).
    released: RefCell<Vec<bool>>,
}

impl<'a, T: Transport> Dispatcher<'a, T> {
    pub fn new(t: &'a T, group: Option<&'a (dyn Fn(&Point) -> String + Sync)>) -> Self {
        let mut released = vec![false; t.size()];
        released[0] = true;
        Dispatcher {
            t,
            group,
            released: RefCell::new(released),
        }
    }

    /// Tells every rank not told yet that there is nothing for it (the sweep had nothing to run,
    /// or stopped before handing out points): answers its first request with `Stop`. Must be
    /// called once the sweep is over, on every path, so no rank waits forever.
    pub fn release_all(&self) {
        let mut released = self.released.borrow_mut();
        for r in 1..self.t.size() {
            if !released[r] {
                let _ = self.t.recv(r, TAG_ASK);
                self.t.send(r, TAG_WORK, &json(&Work::Stop));
                released[r] = true;
            }
        }
    }
}

/// The next point for worker `w`: one of the group it works on, else one of the group with the
/// most points left.
fn pick(groups: &mut [VecDeque<usize>], affinity: &mut [Option<usize>], w: usize) -> Option<usize> {
    if let Some(g) = affinity[w] {
        if let Some(i) = groups[g].pop_front() {
            return Some(i);
        }
    }
    let g = (0..groups.len())
        .filter(|&g| !groups[g].is_empty())
        .max_by_key(|&g| (groups[g].len(), std::cmp::Reverse(g)))?;
    affinity[w] = Some(g);
    groups[g].pop_front()
}

impl<T: Transport> PointPool for Dispatcher<'_, T> {
    fn run(
        &self,
        points: &[&Point],
        runner: &PointRunner<'_>,
        interrupted: &AtomicBool,
        done: &mut dyn FnMut(usize, PointOutcome) -> Result<bool, SweepError>,
    ) -> Result<(), SweepError> {
        let t = self.t;
        let n = t.size();
        let mut groups: Vec<VecDeque<usize>> = Vec::new();
        let mut group_of: HashMap<String, usize> = HashMap::new();
        for (i, p) in points.iter().enumerate() {
            let key = self.group.map(|g| g(p)).unwrap_or_default();
            let g = *group_of.entry(key).or_insert_with(|| {
                groups.push(VecDeque::new());
                groups.len() - 1
            });
            groups[g].push_back(i);
        }
        let index: HashMap<&str, usize> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (p.key.as_str(), i))
            .collect();
        let mut affinity = vec![None; n];
        let mut busy: Vec<Option<usize>> = vec![None; n];
        let mut released = self.released.borrow_mut();
        let mut stopping = false;
        let mut aborted = false;
        let mut result = Ok(());
        let (job_tx, job_rx) = channel::<Option<usize>>();
        let (res_tx, res_rx) = channel::<(usize, PointOutcome)>();
        std::thread::scope(|s| {
            s.spawn(move || {
                while let Ok(Some(i)) = job_rx.recv() {
                    let o = run_one(runner, points[i], interrupted);
                    if res_tx.send((i, o)).is_err() {
                        break;
                    }
                }
            });
            let mut record = |i: usize, o: PointOutcome, stopping: &mut bool| {
                if result.is_err() {
                    return;
                }
                match done(i, o) {
                    Ok(true) => {}
                    Ok(false) => *stopping = true,
                    Err(e) => {
                        *stopping = true;
                        result = Err(e);
                    }
                }
            };
            loop {
                let mut idle = true;
                if interrupted.load(Ordering::SeqCst) && !aborted {
                    // Ctrl-C: running points are abandoned, nothing new starts anywhere.
                    aborted = true;
                    stopping = true;
                    for r in 1..n {
                        if busy[r].take().is_some() {
                            t.send(r, TAG_WORK, &json(&Work::Abort));
                        }
                        if !released[r] {
                            t.send(r, TAG_WORK, &json(&Work::Stop));
                            released[r] = true;
                        }
                    }
                }
                match res_rx.try_recv() {
                    Ok((i, o)) => {
                        idle = false;
                        busy[0] = None;
                        record(i, o, &mut stopping);
                    }
                    Err(TryRecvError::Empty) => {}
                    Err(TryRecvError::Disconnected) => busy[0] = None,
                }
                if busy[0].is_none() && !stopping {
                    if let Some(i) = pick(&mut groups, &mut affinity, 0) {
                        busy[0] = Some(i);
                        let _ = job_tx.send(Some(i));
                    }
                }
                while let Some((r, b)) = t.try_recv_any(TAG_ASK) {
                    idle = false;
                    let ask: Ask = serde_json::from_slice(&b).expect("a rank's request reads");
                    if released[r] {
                        continue; // after Ctrl-C: its point was abandoned
                    }
                    if let Some((key, o)) = ask.done {
                        busy[r] = None;
                        if let Some(&i) = index.get(key.as_str()) {
                            record(i, o, &mut stopping);
                        }
                    }
                    let next = if stopping {
                        None
                    } else {
                        pick(&mut groups, &mut affinity, r)
                    };
                    match next {
                        Some(i) => {
                            busy[r] = Some(i);
                            t.send(r, TAG_WORK, &json(&Work::Run(points[i].key.clone())));
                        }
                        None => {
                            released[r] = true;
                            t.send(r, TAG_WORK, &json(&Work::Stop));
                        }
                    }
                }
                let nothing_left = stopping || groups.iter().all(VecDeque::is_empty);
                if busy[0].is_none() && nothing_left && released.iter().all(|&x| x) {
                    break;
                }
                if idle {
                    std::thread::sleep(POLL);
                }
            }
            let _ = job_tx.send(None);
        });
        result
    }
}

fn json<M: Serialize>(m: &M) -> Vec<u8> {
    serde_json::to_vec(m).expect("protocol messages serialise")
}

/// A rank other than 0: asks rank 0 for points and runs them until told to stop. `stop` is
/// this rank's stop flag (the runner's), raised when rank 0 aborts the running point.
pub fn serve<T: Transport>(
    t: &T,
    points: &HashMap<String, Point>,
    runner: &PointRunner<'_>,
    stop: &AtomicBool,
) {
    t.send(0, TAG_ASK, &json(&Ask { done: None }));
    loop {
        let work: Work =
            serde_json::from_slice(&t.recv(0, TAG_WORK)).expect("rank 0's answer reads");
        let key = match work {
            Work::Stop => return,
            Work::Abort => {
                stop.store(true, Ordering::SeqCst);
                continue;
            }
            Work::Run(key) => key,
        };
        let Some(p) = points.get(&key) else {
            // Both sides expand the same sweep file; a key rank 0 knows is known here.
            t.send(
                0,
                TAG_ASK,
                &json(&Ask {
                    done: Some((key.clone(), PointOutcome::Failed(format!("point {key} is not in this rank's sweep file; is the file the same on every host?")))),
                }),
            );
            continue;
        };
        let (tx, rx) = channel();
        let mut released = false;
        let outcome = std::thread::scope(|s| {
            s.spawn(move || {
                let _ = tx.send(run_one(runner, p, stop));
            });
            loop {
                match rx.recv_timeout(POLL * 2) {
                    Ok(o) => return o,
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                        return PointOutcome::Failed(
                            "the point's thread ended without a result".into(),
                        )
                    }
                    Err(_) => {}
                }
                while let Some(b) = t.try_recv(0, TAG_WORK) {
                    match serde_json::from_slice::<Work>(&b).expect("rank 0's answer reads") {
                        Work::Abort => stop.store(true, Ordering::SeqCst),
                        Work::Stop => {
                            stop.store(true, Ordering::SeqCst);
                            released = true;
                        }
                        Work::Run(_) => {}
                    }
                }
            }
        });
        if released {
            return;
        }
        t.send(
            0,
            TAG_ASK,
            &json(&Ask {
                done: Some((key, outcome)),
            }),
        );
    }
}
