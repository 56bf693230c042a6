//! The measurement window: counters restart at its start, and utilisation is what fell inside it.

use super::Drive;
use crate::counters::{DriveCounters, RawCounters};

impl Drive {
    /// Starts the measurement window at `now`: counters restart, busy times count from here.
    pub(crate) fn reset_counters(&mut self, now: u64) {
        self.w0 = now;
        self.c = RawCounters::default();
        self.ftl.c = Default::default();
        if let Some(h) = self.ftl.hy.as_mut() {
            h.c = Default::default();
        }
        self.ftl.reset_free_stats(now);
        for die in &mut self.sched.dies {
            die.meter.acc = if die.busy && die.op.end > now {
                die.op.end - now.max(die.op.start)
            } else {
                0
            };
        }
        for (m, c) in self.ch_meter.iter_mut().zip(&self.channels) {
            m.acc = c.busy_after(now);
        }
        for (m, c) in self.ctl.fw_meter.iter_mut().zip(&self.ctl.fw) {
            m.acc = c.busy_after(now);
        }
        for (m, c) in self.host.cpu_meter.iter_mut().zip(&self.host.cpu) {
            m.acc = c.busy_after(now);
        }
        for (m, c) in self.ctl.ecc_meter.iter_mut().zip(&self.ctl.ecc) {
            m.acc = c.busy_after(now);
        }
        self.host.up_meter.acc = self.host.up.busy_after(now);
        self.host.down_meter.acc = self.host.down.busy_after(now);
    }

    /// Counters over `[window start, now]`.
    pub(crate) fn counters(&self, now: u64) -> DriveCounters {
        let c = &self.c;
        let f = &self.ftl.c;
        let (mut mn, mut mx, mut sum) = (u32::MAX, 0u32, 0u64);
        for &e in &self.ftl.blk_erase {
            mn = mn.min(e);
            mx = mx.max(e);
            sum += e as u64;
        }
        let window = now.saturating_sub(self.w0);
        let (free_mean, spare_mean) = self.ftl.free_means(self.w0, now);
        let dies: Vec<u64> = self
            .sched
            .dies
            .iter()
            .map(|die| {
                let future = if die.busy {
                    die.op.end.saturating_sub(now)
                } else {
                    0
                };
                die.meter.acc.saturating_sub(future)
            })
            .collect();
        let channels: Vec<u64> = self
            .ch_meter
            .iter()
            .zip(&self.channels)
            .map(|(m, c)| m.acc.saturating_sub(c.busy_after(now)))
            .collect();
        let fw: Vec<u64> = self
            .ctl
            .fw_meter
            .iter()
            .zip(&self.ctl.fw)
            .map(|(m, c)| m.acc.saturating_sub(c.busy_after(now)))
            .collect();
        let host_cpu: Vec<u64> = self
            .host
            .cpu_meter
            .iter()
            .zip(&self.host.cpu)
            .map(|(m, c)| m.acc.saturating_sub(c.busy_after(now)))
            .collect();
        let roles: Vec<String> = self
            .ctl
            .roles
            .iter()
            .map(|&r| crate::controller::role_names(r))
            .collect();
        let ecc: Vec<u64> = self
            .ctl
            .ecc_meter
            .iter()
            .zip(&self.ctl.ecc)
            .map(|(m, c)| m.acc.saturating_sub(c.busy_after(now)))
            .collect();
        let link = self
            .host
            .up_meter
            .acc
            .saturating_sub(self.host.up.busy_after(now));
        let link_down = self
            .host
            .down_meter
            .acc
            .saturating_sub(self.host.down.busy_after(now));
        DriveCounters {
            window_ns: window,
            host_read_bytes: c.host_read_bytes,
            host_write_bytes: c.host_write_bytes,
            host_reads: c.host_reads,
            host_writes: c.host_writes,
            host_trims: c.host_trims,
            trimmed_units: f.trimmed_units,
            nand_reads: c.nand_reads,
            nand_read_cmds: c.nand_read_cmds,
            nand_programs: c.nand_programs,
            nand_program_cmds: c.nand_program_cmds,
            nand_program_bytes: c.nand_program_bytes,
            nand_erases: c.nand_erases,
            nand_erase_cmds: c.nand_erase_cmds,
            gc_runs: f.gc_runs,
            gc_pages_moved: f.gc_pages_moved,
            gc_units_moved: f.gc_units_moved,
            pslc_folds: f.pslc_folds,
            rmw_reads: c.rmw_reads,
            fragment_reads: c.fragment_reads,
            remap_merges: f.remap_merges,
            gc_merges: f.gc_merges,
            fragmented_units: self
                .ftl
                .map
                .frags
                .0
                .values()
                .filter(|f| f.fmask != 0)
                .count() as u64,
            map_lookups: f.map_lookups,
            map_misses: f.map_misses,
            map_reads: c.map_reads,
            map_writes: c.map_writes,
            map_erases: c.map_erases,
            hybrid: self
                .ftl
                .hy
                .as_ref()
                .map(|h| crate::counters::MergeCounters {
                    full_merges: h.c.full,
                    partial_merges: h.c.partial,
                    switch_merges: h.c.switch,
                    merge_pages: h.c.pages,
                }),
            write_amplification: if c.host_write_bytes > 0 {
                c.nand_program_bytes as f64 / c.host_write_bytes as f64
            } else {
                0.0
            },
            cache_hits: c.cache_hits,
            unwritten_read_bytes: c.unwritten_read_bytes,
            cache_write_hits: f.cache_write_hits,
            pslc_programs: c.pslc_programs,
            compression_saved_bytes: f.compression_saved_bytes,
            program_suspends: c.program_suspends,
            erase_suspends: c.erase_suspends,
            erase_count_min: mn,
            erase_count_max: mx,
            erase_count_mean: sum as f64 / self.ftl.blk_erase.len() as f64,
            link_busy_ns: link,
            link_to_host_busy_ns: link_down,
            fw_busy_ns: fw.iter().sum(),
            cache_wait_ns: c.cache_wait_ns,
            mapped_bytes: self.ftl.mapped_units * self.ftl.g.unit_bytes,
            free_blocks: self.ftl.free_total,
            free_blocks_mean: free_mean,
            spare_blocks_mean: spare_mean,
            free_blocks_min: self.ftl.free_min,
            utilisation: crate::counters::utilisation(
                window,
                crate::counters::Busy {
                    dies: &dies,
                    channels: &channels,
                    fw: &fw,
                    fw_roles: &roles,
                    ecc: &ecc,
                    link,
                    link_to_host: link_down,
                    host_cpu: &host_cpu,
                },
            ),
            per_host_cpu_busy_ns: host_cpu,
            per_die_busy_ns: dies,
            per_channel_busy_ns: channels,
            per_fw_busy_ns: fw,
            per_ecc_busy_ns: ecc,
        }
    }
}
