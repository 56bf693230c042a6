//! ssdlab on many ranks at once: the ranks of an MPI job (`mpirun -n N ssdlab run …`,
//! `mpirun -n N ssdlab sweep …`), or threads standing in for them in tests and benchmarks.
//!
//! * [`rank`]: who a rank is, `{rank}`/`{host}`/`{local_rank}` in target paths, the segment of
//!   a shared target (`--segment-per-rank`).
//! * [`transport`]: messages between ranks ([`Transport`]; MPI behind the `mpi` feature,
//!   channels between threads in [`LocalTransport`]) and tree collectives built on them.
//! * [`job`]: one workload on every rank — check and agree, start together, stop together,
//!   merge the recorders up a binomial tree, gather the ranks' reports.
//! * [`aggregate`]: the job's result at rank 0 and the per-rank and per-host view.
//! * [`dispatch`]: the points of a sweep handed out to ranks as they ask for them.
//!
//! Nothing here knows the engine or the simulator: the binary passes closures that run them.
//! With the `mpi` feature, `mpi_rt` holds the only code that calls MPI.

pub mod aggregate;
pub mod dispatch;
pub mod job;
#[cfg(feature = "mpi")]
pub mod mpi_rt;
pub mod rank;
pub mod transport;

pub use aggregate::{JobResult, RankFailure, RankReport, RankRun};
pub use job::{check_together, finish, run_job, JobEnd, JobOptions, LocalRun, RankCheck};
pub use rank::RankInfo;
pub use transport::{LocalTransport, Transport};

/// The rank and size an MPI launcher gave this process, read from its environment (Open MPI,
/// MPICH/Hydra, PMIx): `Some((rank, size))` when started by `mpirun`/`mpiexec`.
pub fn launched_by_mpi() -> Option<(usize, usize)> {
    let num = |k: &str| std::env::var(k).ok()?.trim().parse::<usize>().ok();
    [
        ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        ("PMI_RANK", "PMI_SIZE"),
        ("PMIX_RANK", "PMIX_SIZE"),
        ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE"),
    ]
    .iter()
    .find_map(|(r, s)| Some((num(r)?, num(s)?)))
}
