//! Who a rank is (rank, host, its place on the host), how it names its own target, and which
//! slice of a shared target it gets.

use serde::{Deserialize, Serialize};

/// One rank of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RankInfo {
    pub rank: usize,
    pub size: usize,
    /// The host name (MPI's processor name).
    pub host: String,
    /// This rank's place among the ranks on its host, and how many there are.
    pub local_rank: usize,
    pub local_size: usize,
}

impl RankInfo {
    /// `rank 3 (node7)`: how messages name a rank.
    pub fn who(&self) -> String {
        who(self.rank, &self.host)
    }
}

/// `rank 3 (node7)`.
pub fn who(rank: usize, host: &str) -> String {
    format!("rank {rank} ({host})")
}

/// Where the ranks of a job run, from every rank's host in rank order: `node1 (ranks 0-15),
/// node2 (ranks 16-31)`, or `node7 (rank 0)`.
pub fn hosts_summary(hosts: &[String]) -> String {
    let mut order: Vec<(&str, Vec<usize>)> = Vec::new();
    for (r, h) in hosts.iter().enumerate() {
        match order.iter_mut().find(|(x, _)| *x == h.as_str()) {
            Some((_, rs)) => rs.push(r),
            None => order.push((h.as_str(), vec![r])),
        }
    }
    let ranges = |rs: &[usize]| -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut i = 0;
        while i < rs.len() {
            let mut j = i;
            while j + 1 < rs.len() && rs[j + 1] == rs[j] + 1 {
                j += 1;
            }
            parts.push(if j == i {
                rs[i].to_string()
            } else {
                format!("{}-{}", rs[i], rs[j])
            });
            i = j + 1;
        }
        format!(
            "{} {}",
            if rs.len() == 1 { "rank" } else { "ranks" },
            parts.join(", ")
        )
    };
    order
        .iter()
        .map(|(h, rs)| format!("{h} ({})", ranges(rs)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// This machine's host name (the kernel's, as `hostname` prints it; Open MPI's processor name
/// is the same name), or `None` when it cannot be read.
pub fn this_host() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
}

/// The placeholders a per-rank path may hold.
pub const PLACEHOLDERS: [&str; 3] = ["{rank}", "{host}", "{local_rank}"];

/// True when `s` names a placeholder (so every rank gets its own target).
pub fn has_placeholder(s: &str) -> bool {
    PLACEHOLDERS.iter().any(|p| s.contains(p))
}

/// Expands `{rank}`, `{host}` and `{local_rank}` in a path (IOR's file-per-process). Any other
/// `{…}` is refused, so a typo (`{rnak}`) never becomes part of a file name.
pub fn expand(template: &str, me: &RankInfo) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 8);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open..];
        let close = after.find('}').ok_or_else(|| {
            format!(
                "{template}: unclosed '{{'; placeholders are {}",
                PLACEHOLDERS.join(", ")
            )
        })?;
        let name = &after[..=close];
        match name {
            "{rank}" => out.push_str(&me.rank.to_string()),
            "{host}" => out.push_str(&me.host),
            "{local_rank}" => out.push_str(&me.local_rank.to_string()),
            other => {
                return Err(format!(
                    "{template}: unknown placeholder {other}; placeholders are {}",
                    PLACEHOLDERS.join(", ")
                ))
            }
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `--segment-per-rank`: rank `r` of `ranks` gets `[offset + r·span, offset + (r+1)·span)` of
/// `total` bytes starting at `offset` (IOR's shared-file mode). `total` must divide into `ranks`
/// equal segments that are multiples of `unit` (the block alignment).
pub fn segment(
    offset: u64,
    total: u64,
    ranks: usize,
    rank: usize,
    unit: u64,
) -> Result<(u64, u64), String> {
    let n = ranks as u64;
    if !total.is_multiple_of(n) {
        return Err(format!(
            "--segment-per-rank: the region of {total} bytes does not divide into {ranks} equal segments; give a --span that is a multiple of {ranks}"
        ));
    }
    let span = total / n;
    if span == 0 || !span.is_multiple_of(unit.max(1)) {
        return Err(format!(
            "--segment-per-rank: each of the {ranks} segments would be {span} bytes, not a multiple of {unit} (--align); give a --span that is a multiple of {}",
            n * unit.max(1)
        ));
    }
    Ok((offset + rank as u64 * span, span))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn me(rank: usize) -> RankInfo {
        RankInfo {
            rank,
            size: 4,
            host: "node7".into(),
            local_rank: rank % 2,
            local_size: 2,
        }
    }

    #[test]
    fn placeholders_expand() {
        assert_eq!(
            expand("/scratch/{host}/f-{rank}.{local_rank}", &me(3)).unwrap(),
            "/scratch/node7/f-3.1"
        );
        assert_eq!(expand("plain.img", &me(1)).unwrap(), "plain.img");
        assert!(expand("f-{rnak}", &me(0)).unwrap_err().contains("{rnak}"));
        assert!(expand("f-{rank", &me(0)).unwrap_err().contains("unclosed"));
        assert!(has_placeholder("a{rank}") && !has_placeholder("a{b}"));
    }

    #[test]
    fn hosts_are_summarised_with_their_ranks() {
        let h = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(hosts_summary(&h(&["a"])), "a (rank 0)");
        assert_eq!(hosts_summary(&h(&["a", "a", "a"])), "a (ranks 0-2)");
        assert_eq!(
            hosts_summary(&h(&["a", "b", "a", "a", "b"])),
            "a (ranks 0, 2-3), b (ranks 1, 4)"
        );
    }

    #[test]
    fn segments_tile_the_region_without_overlap() {
        let segs: Vec<_> = (0..4)
            .map(|r| segment(4096, 4 << 20, 4, r, 4096).unwrap())
            .collect();
        for (r, &(off, span)) in segs.iter().enumerate() {
            assert_eq!(span, 1 << 20);
            assert_eq!(off, 4096 + r as u64 * span);
        }
        assert!(segment(0, 10 << 20, 3, 0, 4096)
            .unwrap_err()
            .contains("does not divide"));
        assert!(segment(0, 3 * 1000, 3, 0, 4096)
            .unwrap_err()
            .contains("multiple of"));
    }
}
