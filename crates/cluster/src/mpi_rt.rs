//! MPI itself (rsmpi over the system's MPI): start-up, who this rank is, and the [`Transport`]
//! the protocols run on. The only module that calls MPI; MPI is initialised with "funneled"
//! threading (only the main thread calls MPI; the engine's threads never do).

use crate::rank::RankInfo;
use crate::transport::{Tag, Transport};
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::Threading;

/// An initialised MPI (finalised when dropped) and this rank's place in `MPI_COMM_WORLD`.
pub struct Mpi {
    world: SimpleCommunicator,
    info: RankInfo,
    // Dropped last: MPI_Finalize.
    _universe: Universe,
}

impl Mpi {
    /// Initialises MPI and finds out the rank's host and its place on it.
    pub fn init() -> Result<Mpi, String> {
        let (universe, threading) = mpi::initialize_with_threading(Threading::Funneled)
            .ok_or("MPI was initialised twice")?;
        if threading < Threading::Funneled {
            return Err(format!(
                "this MPI gives {threading:?} threading; ssdlab needs at least Funneled"
            ));
        }
        let world = universe.world();
        let host = mpi::environment::processor_name()
            .ok()
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "unknown-host".into());
        let local = world.split_shared(world.rank());
        let info = RankInfo {
            rank: world.rank() as usize,
            size: world.size() as usize,
            host,
            local_rank: local.rank() as usize,
            local_size: local.size() as usize,
        };
        Ok(Mpi {
            world,
            info,
            _universe: universe,
        })
    }

    pub fn info(&self) -> &RankInfo {
        &self.info
    }
}

impl Transport for Mpi {
    fn rank(&self) -> usize {
        self.info.rank
    }
    fn size(&self) -> usize {
        self.info.size
    }
    fn send(&self, to: usize, tag: Tag, data: &[u8]) {
        self.world
            .process_at_rank(to as i32)
            .send_with_tag(data, tag);
    }
    fn recv(&self, from: usize, tag: Tag) -> Vec<u8> {
        self.world
            .process_at_rank(from as i32)
            .receive_vec_with_tag::<u8>(tag)
            .0
    }
    fn try_recv_any(&self, tag: Tag) -> Option<(usize, Vec<u8>)> {
        let matched = self
            .world
            .any_process()
            .immediate_matched_probe_with_tag(tag)?;
        let from = matched.1.source_rank() as usize;
        Some((from, matched.matched_receive_vec::<u8>().0))
    }
    fn try_recv(&self, from: usize, tag: Tag) -> Option<Vec<u8>> {
        let matched = self
            .world
            .process_at_rank(from as i32)
            .immediate_matched_probe_with_tag(tag)?;
        Some(matched.matched_receive_vec::<u8>().0)
    }
}
