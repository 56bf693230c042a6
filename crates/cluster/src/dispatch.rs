//! The points of a sweep spread over the ranks of a job: rank 0 hands out the next point to
//! whichever rank asks (dynamic assignment), runs points itself on a thread, and alone writes
//! the store (through [`ssdlab_sweep::run_sweep`], which calls [`Dispatcher`] as its
//! [`PointPool`]). A rank keeps to the drive state it has (points grouped by state), so each
//! rank builds few states.
//!
//! Real points come here only when their target names its host (`host = "node07"`): they go
//! only to ranks of that host, and never two of one target at once (it is one device); points
//! of different targets run at the same time on different ranks. A rank with nothing it may run
//! now, but a busy target of its host still to come, waits for it.

use crate::rank::{hosts_summary, who};
use crate::transport::{broadcast, gather, Tag, Transport};
use serde::{Deserialize, Serialize};
use ssdlab_sweep::{host_matches, run_one, Point, PointOutcome, PointPool, RunPointFn, SweepError};
use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, TryRecvError};
use std::time::Duration;

const TAG_ASK: Tag = 30;
const TAG_WORK: Tag = 31;
const TAG_HOSTS: Tag = 32;
const TAG_HOSTS_ALL: Tag = 33;
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
    /// The host of every rank (MPI's processor name), in rank order.
    hosts: Vec<String>,
    /// The ranks told to stop (rank 0 is never asked).
    released: RefCell<Vec<bool>>,
}

impl<'a, T: Transport> Dispatcher<'a, T> {
    /// `hosts`: every rank's host, in rank order (real points of a target with a `host` go only
    /// to the ranks of that host).
    pub fn new(
        t: &'a T,
        group: Option<&'a (dyn Fn(&Point) -> String + Sync)>,
        hosts: Vec<String>,
    ) -> Self {
        let mut released = vec![false; t.size()];
        released[0] = true;
        Dispatcher {
            t,
            group,
            hosts,
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

/// Points of one group, not handed out yet.
struct Group {
    left: VecDeque<usize>,
    /// The workers that may run them (`None`: any).
    workers: Option<Vec<bool>>,
    /// One point at a time (a real target), and whether one is running now.
    exclusive: bool,
    running: bool,
    /// All its points on one worker, in order (a chain of a sweep with carried history: the
    /// drive stays on that worker), and the worker that took its first point.
    owned: bool,
    owner: Option<usize>,
}

impl Group {
    fn allows(&self, w: usize) -> bool {
        self.workers.as_ref().is_none_or(|ws| ws[w])
    }
    /// Worker `w` may take a point of it now.
    fn open_to(&self, w: usize) -> bool {
        let busy = self.exclusive && self.running;
        let others = self.owned && self.owner.is_some_and(|o| o != w);
        !self.left.is_empty() && self.allows(w) && !busy && !others
    }
}

/// Which point goes to which worker: points grouped (by drive state, or by real target), a
/// worker keeps to its group while it has points, real targets go only to the workers of their
/// host and run one point at a time.
struct Queue {
    groups: Vec<Group>,
    /// The group of every point.
    group_of: Vec<usize>,
    /// The group each worker works on.
    affinity: Vec<Option<usize>>,
}

impl Queue {
    /// `place(i)`: the group key of point `i`; for a real point, the workers that may run it
    /// (`Some`: one at a time, on those workers only); whether one worker runs the whole group.
    fn new(
        n: usize,
        workers: usize,
        place: impl Fn(usize) -> (String, Option<Vec<bool>>, bool),
    ) -> Self {
        let mut groups: Vec<Group> = Vec::new();
        let mut index: HashMap<String, usize> = HashMap::new();
        let mut group_of = Vec::with_capacity(n);
        for i in 0..n {
            let (key, only, owned) = place(i);
            let g = *index.entry(key).or_insert_with(|| {
                groups.push(Group {
                    left: VecDeque::new(),
                    exclusive: only.is_some(),
                    workers: only,
                    running: false,
                    owned,
                    owner: None,
                });
                groups.len() - 1
            });
            groups[g].left.push_back(i);
            group_of.push(g);
        }
        Queue {
            groups,
            group_of,
            affinity: vec![None; workers],
        }
    }

    /// The next point for worker `w`: one of the group it works on, else one of a group bound to
    /// its host (they have fewer workers), the one with the most points left first.
    fn pick(&mut self, w: usize) -> Option<usize> {
        let g = match self.affinity[w] {
            Some(g) if self.groups[g].open_to(w) => g,
            _ => (0..self.groups.len())
                .filter(|&g| self.groups[g].open_to(w))
                .max_by_key(|&g| {
                    let gr = &self.groups[g];
                    (gr.workers.is_some(), gr.left.len(), std::cmp::Reverse(g))
                })?,
        };
        self.affinity[w] = Some(g);
        let gr = &mut self.groups[g];
        gr.running = true;
        if gr.owned {
            gr.owner = Some(w);
        }
        gr.left.pop_front()
    }

    /// Point `i` has ended (its target is free again).
    fn ended(&mut self, i: usize) {
        self.groups[self.group_of[i]].running = false;
    }

    /// Worker `w` has nothing now but may get a point later (of a target of its host that is
    /// busy on another worker).
    fn may_get_more(&self, w: usize) -> bool {
        self.groups
            .iter()
            .any(|g| !g.left.is_empty() && g.allows(w))
    }

    fn is_empty(&self) -> bool {
        self.groups.iter().all(|g| g.left.is_empty())
    }

    /// Points no worker may run (their host has no rank), taken out of the queue.
    fn take_unrunnable(&mut self) -> Vec<usize> {
        let mut out = Vec::new();
        for g in &mut self.groups {
            if g.workers.as_ref().is_some_and(|ws| !ws.contains(&true)) {
                out.extend(g.left.drain(..));
            }
        }
        out
    }
}

impl<T: Transport> Dispatcher<'_, T> {
    /// Where point `p` may run: its group key, and for a real point the ranks that may run it
    /// (those of its host; rank 0 for a real target without one), one point at a time.
    fn place(&self, p: &Point) -> (String, Option<Vec<bool>>, bool) {
        if p.is_sim() {
            return (
                format!("sim\0{}", self.group.map(|g| g(p)).unwrap_or_default()),
                None,
                p.carried,
            );
        }
        let ranks = (0..self.t.size())
            .map(|r| match &p.host {
                Some(h) => self.hosts.get(r).is_some_and(|x| host_matches(h, x)),
                None => r == 0,
            })
            .collect();
        (format!("real\0{}", p.target_label), Some(ranks), false)
    }
}

impl<T: Transport> PointPool for Dispatcher<'_, T> {
    fn run(
        &self,
        points: &[&Point],
        runner: &RunPointFn<'_>,
        interrupted: &AtomicBool,
        done: &mut dyn FnMut(usize, PointOutcome) -> Result<bool, SweepError>,
    ) -> Result<(), SweepError> {
        let t = self.t;
        let n = t.size();
        let mut queue = Queue::new(points.len(), n, |i| self.place(points[i]));
        let index: HashMap<&str, usize> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (p.key.as_str(), i))
            .collect();
        let mut busy: Vec<Option<usize>> = vec![None; n];
        // Ranks whose request waits for a point of a busy target of their host.
        let mut waiting = vec![false; n];
        let mut released = self.released.borrow_mut();
        let mut stopping = false;
        let mut aborted = false;
        let mut result = Ok(());
        let hosts = &self.hosts;
        // A failed point names the rank (and host) that ran it.
        let mut record = |r: Option<usize>,
                          i: usize,
                          o: PointOutcome,
                          stopping: &mut bool,
                          result: &mut Result<(), SweepError>| {
            if result.is_err() {
                return;
            }
            let o = match (o, r) {
                (PointOutcome::Failed(e), Some(r)) => PointOutcome::Failed(format!(
                    "{}: {e}",
                    who(r, hosts.get(r).map_or("?", String::as_str))
                )),
                (o, _) => o,
            };
            match done(i, o) {
                Ok(true) => {}
                Ok(false) => *stopping = true,
                Err(e) => {
                    *stopping = true;
                    *result = Err(e);
                }
            }
        };
        // Checked before the sweep starts, so never expected: a target whose host has no rank
        // fails rather than waits forever.
        for i in queue.take_unrunnable() {
            let host = points[i].host.as_deref().unwrap_or("-");
            record(
                None,
                i,
                PointOutcome::Failed(format!(
                    "no rank of this job runs on host {host} (the ranks run on {})",
                    hosts_summary(&self.hosts)
                )),
                &mut stopping,
                &mut result,
            );
        }
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
            // Answers rank r's request: a point, or stop (nothing more for it), or nothing yet.
            let answer = |r: usize,
                          queue: &mut Queue,
                          busy: &mut [Option<usize>],
                          released: &mut [bool],
                          stopping: bool|
             -> bool {
                let next = if stopping { None } else { queue.pick(r) };
                match next {
                    Some(i) => {
                        busy[r] = Some(i);
                        t.send(r, TAG_WORK, &json(&Work::Run(points[i].key.clone())));
                        true
                    }
                    None if !stopping && queue.may_get_more(r) => false,
                    None => {
                        released[r] = true;
                        t.send(r, TAG_WORK, &json(&Work::Stop));
                        true
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
                        waiting[r] = false;
                    }
                }
                match res_rx.try_recv() {
                    Ok((i, o)) => {
                        idle = false;
                        busy[0] = None;
                        queue.ended(i);
                        record(Some(0), i, o, &mut stopping, &mut result);
                    }
                    Err(TryRecvError::Empty) => {}
                    Err(TryRecvError::Disconnected) => {
                        if let Some(i) = busy[0].take() {
                            queue.ended(i);
                        }
                    }
                }
                if busy[0].is_none() && !stopping {
                    if let Some(i) = queue.pick(0) {
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
                        if let Some(i) = busy[r].take() {
                            queue.ended(i);
                        }
                        if let Some(&i) = index.get(key.as_str()) {
                            record(Some(r), i, o, &mut stopping, &mut result);
                        }
                    }
                    waiting[r] = !answer(r, &mut queue, &mut busy, &mut released, stopping);
                }
                // Ranks waiting for a busy target: one may be free now (or the sweep stops).
                for (r, w) in waiting.iter_mut().enumerate().filter(|(_, w)| **w) {
                    *w = !answer(r, &mut queue, &mut busy, &mut released, stopping);
                    if !*w {
                        idle = false;
                    }
                }
                let nothing_left = stopping || queue.is_empty();
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

/// Every rank's host (MPI's processor name) in rank order, on every rank. Every rank of the job
/// must call it.
pub fn rank_hosts<T: Transport>(t: &T, host: &str) -> Vec<String> {
    let all = gather(t, TAG_HOSTS, host.as_bytes().to_vec()).map(|all| {
        json(
            &all.iter()
                .map(|h| String::from_utf8_lossy(h))
                .collect::<Vec<_>>(),
        )
    });
    serde_json::from_slice(&broadcast(t, TAG_HOSTS_ALL, all)).expect("rank 0's host list reads")
}

fn json<M: Serialize>(m: &M) -> Vec<u8> {
    serde_json::to_vec(m).expect("protocol messages serialise")
}

/// A rank other than 0: asks rank 0 for points and runs them until told to stop. `stop` is
/// this rank's stop flag (the runner's), raised when rank 0 aborts the running point.
pub fn serve<T: Transport>(
    t: &T,
    points: &HashMap<String, Point>,
    runner: &RunPointFn<'_>,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::LocalTransport;
    use ssdlab_stats::RunResult;
    use ssdlab_sweep::SweepSpec;
    use std::path::Path;
    use std::sync::Mutex;
    use std::time::Instant;

    /// Workers 0..3; `bound[g]` the workers group g may run on (`None`: a simulated group).
    fn queue(groups: &[(usize, Option<&[usize]>)]) -> Queue {
        let mut place = Vec::new();
        for (g, (len, bound)) in groups.iter().enumerate() {
            for _ in 0..*len {
                let only = bound.map(|ws| (0..3).map(|w| ws.contains(&w)).collect());
                place.push((format!("g{g}"), only, false));
            }
        }
        Queue::new(place.len(), 3, |i| place[i].clone())
    }

    #[test]
    fn a_real_target_runs_one_point_at_a_time_on_its_hosts_workers() {
        // g0: simulated, 2 points; g1: a real target of workers 1 and 2, 3 points.
        let mut q = queue(&[(2, None), (3, Some(&[1, 2]))]);
        // Worker 0 may not run g1: it gets the simulated points.
        assert_eq!(q.pick(0), Some(0));
        // Worker 1 prefers the group bound to its host.
        assert_eq!(q.pick(1), Some(2));
        // g1 is busy: worker 2 gets a simulated point, then nothing for now, but may wait.
        assert_eq!(q.pick(2), Some(1));
        assert_eq!(q.pick(2), None);
        assert!(q.may_get_more(2));
        assert!(!q.may_get_more(0), "worker 0 can never run g1");
        // Once g1's point has ended, the next one may start (anywhere on its host).
        q.ended(2);
        assert_eq!(q.pick(2), Some(3));
        assert_eq!(q.pick(1), None);
        q.ended(3);
        assert_eq!(q.pick(1), Some(4));
        q.ended(4);
        assert!(q.is_empty());
        assert!(!q.may_get_more(1) && !q.may_get_more(2));
    }

    #[test]
    fn two_real_targets_of_one_host_run_side_by_side() {
        let mut q = queue(&[(2, Some(&[0, 1, 2])), (2, Some(&[0, 1, 2]))]);
        let a = q.pick(0).unwrap();
        let b = q.pick(1).unwrap();
        assert_ne!(q.group_of[a], q.group_of[b], "one point of each target");
        assert_eq!(q.pick(2), None, "both targets are busy");
        assert!(q.may_get_more(2));
        // A worker keeps to its target.
        q.ended(a);
        let next = q.pick(0).unwrap();
        assert_eq!(q.group_of[next], q.group_of[a]);
    }

    #[test]
    fn a_chain_with_carried_history_stays_on_the_worker_that_started_it() {
        // two chains of 3 points each, simulated, each on one worker from start to end
        let place: Vec<(String, Option<Vec<bool>>, bool)> = (0..6)
            .map(|i| (format!("chain{}", i / 3), None, true))
            .collect();
        let mut q = Queue::new(6, 3, |i| place[i].clone());
        assert_eq!(q.pick(0), Some(0));
        assert_eq!(q.pick(1), Some(3));
        // worker 2 may not take the next point of either chain, even while their workers are busy
        assert_eq!(q.pick(2), None);
        q.ended(0);
        assert_eq!(q.pick(2), None, "chain 0 is worker 0's");
        assert_eq!(q.pick(0), Some(1));
        q.ended(3);
        assert_eq!(q.pick(1), Some(4));
        assert_eq!(q.pick(0), Some(2));
        assert_eq!(q.pick(1), Some(5));
        assert!(q.is_empty());
    }

    #[test]
    fn points_no_worker_may_run_are_taken_out() {
        let mut q = queue(&[(1, None), (2, Some(&[]))]);
        assert_eq!(q.take_unrunnable(), vec![1, 2]);
        assert_eq!(q.pick(0), Some(0));
        assert!(q.is_empty());
    }

    /// A sweep whose real targets name hosts: "a" has ranks 0 and 1, "b" has rank 2.
    const SWEEP: &str = r#"
name = "hosts"
time = "1s"
qd = [1, 2, 4]
workloads = ["4k-randread"]

[[target]]
sim = "some-preset"

[[target]]
label = "A"
path = "a.img"
host = "a"

[[target]]
label = "B"
path = "b.img"
host = "a"

[[target]]
label = "C"
path = "c.img"
host = "b.example.org"
"#;

    /// Who ran what: (rank, target, start, end).
    type Log = Mutex<Vec<(usize, String, Instant, Instant)>>;

    /// Runs the sweep's points on 3 local ranks with a fake runner; the first point of A waits
    /// for B to have started and the other way round, so they must run side by side.
    fn run_on_ranks(points: &[Point], fail: Option<&str>) -> (Log, Vec<(String, PointOutcome)>) {
        let hosts: Vec<String> = ["a", "a", "b"].iter().map(|h| h.to_string()).collect();
        let log: Log = Mutex::new(Vec::new());
        let started: Mutex<Vec<String>> = Mutex::new(Vec::new());
        let run = |rank: usize, p: &Point| -> Result<RunResult, ssdlab_sweep::PointError> {
            let t0 = Instant::now();
            started.lock().unwrap().push(p.target_label.clone());
            let other = match p.target_label.as_str() {
                "A" => Some("B"),
                "B" => Some("A"),
                _ => None,
            };
            if let Some(o) = other {
                while !started.lock().unwrap().iter().any(|l| l == o) {
                    if t0.elapsed() > Duration::from_secs(20) {
                        return Err(format!("{o} never ran beside {}", p.target_label).into());
                    }
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            std::thread::sleep(Duration::from_millis(5));
            log.lock()
                .unwrap()
                .push((rank, p.target_label.clone(), t0, Instant::now()));
            if fail == Some(p.key.as_str()) {
                return Err("broken".into());
            }
            Ok(RunResult::default())
        };
        let stop = AtomicBool::new(false);
        let mut outcomes = Vec::new();
        let refs: Vec<&Point> = points.iter().collect();
        let by_key: HashMap<String, Point> =
            points.iter().map(|p| (p.key.clone(), p.clone())).collect();
        std::thread::scope(|s| {
            let mut ts = LocalTransport::group(3).into_iter();
            let t0 = ts.next().unwrap();
            for t in ts {
                let (by_key, run) = (&by_key, &run);
                s.spawn(move || {
                    let stop = AtomicBool::new(false);
                    let r = t.rank();
                    serve(&t, by_key, &|p| run(r, p), &stop);
                });
            }
            let pool = Dispatcher::new(&t0, None, hosts.clone());
            pool.run(&refs, &|p| run(0, p), &stop, &mut |i, o| {
                let go = matches!(o, PointOutcome::Finished(_));
                outcomes.push((refs[i].key.clone(), o));
                Ok(go)
            })
            .unwrap();
            pool.release_all();
        });
        (log, outcomes)
    }

    #[test]
    fn ranks_run_the_targets_of_their_host_side_by_side() {
        let spec = SweepSpec::parse(SWEEP, Path::new(".")).unwrap();
        let points = spec.points();
        assert_eq!(points.len(), 12);
        let (log, outcomes) = run_on_ranks(&points, None);
        let log = log.into_inner().unwrap();
        // Every point ran once and finished.
        let mut keys: Vec<&str> = outcomes.iter().map(|(k, _)| k.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 12);
        assert!(
            outcomes
                .iter()
                .all(|(_, o)| matches!(o, PointOutcome::Finished(_))),
            "{outcomes:?}"
        );
        assert_eq!(log.len(), 12);
        for (rank, label, _, _) in &log {
            match label.as_str() {
                "A" | "B" => assert!(*rank < 2, "{label} ran on rank {rank}, not on host a"),
                "C" => assert_eq!(*rank, 2, "C ran on rank {rank}, not on host b"),
                _ => {}
            }
        }
        // The points of one target never overlap.
        for label in ["A", "B", "C"] {
            let mut spans: Vec<_> = log.iter().filter(|e| e.1 == label).collect();
            spans.sort_by_key(|e| e.2);
            for w in spans.windows(2) {
                assert!(w[0].3 <= w[1].2, "two points of {label} overlap");
            }
        }
    }

    #[test]
    fn a_failed_point_names_its_rank_and_host() {
        let spec = SweepSpec::parse(SWEEP, Path::new(".")).unwrap();
        let points = spec.points();
        // C's last point (by then A and B have both started).
        let c = points.iter().rfind(|p| p.target_label == "C").unwrap();
        let (_, outcomes) = run_on_ranks(&points, Some(&c.key));
        let failed: Vec<&String> = outcomes
            .iter()
            .filter_map(|(_, o)| match o {
                PointOutcome::Failed(e) => Some(e),
                _ => None,
            })
            .collect();
        assert_eq!(failed, vec!["rank 2 (b): broken"]);
    }
}
