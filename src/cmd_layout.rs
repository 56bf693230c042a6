//! `ssdlab layout`: where a logical range of an md raid0 array lands on its members. The pieces
//! are streamed as they are computed, so a range of any length prints in constant memory (a
//! 2 TiB range over a 4 KiB stripe is half a billion lines, written as they come).

use crate::cli::{positive_size_arg, size_arg, Failure, EXIT_FAILED};
use crate::output::{self, StdoutStream};
use anyhow::anyhow;
use clap::Args;
use std::io::Write;

#[derive(Args, Debug)]
pub struct LayoutArgs {
    /// Member sizes, in order (e.g. 1t,1t or 120g,120g,250g).
    #[arg(long, value_delimiter = ',', required = true, value_parser = positive_size_arg)]
    members: Vec<u64>,
    /// Stripe (chunk) size.
    #[arg(long, value_parser = positive_size_arg, allow_hyphen_values = true)]
    stripe: u64,
    /// Block size the stripe must be a multiple of.
    #[arg(long, default_value = "512", value_parser = positive_size_arg)]
    block_size: u64,
    /// Logical offset of the range.
    #[arg(value_parser = size_arg, allow_hyphen_values = true)]
    offset: u64,
    /// Length of the range.
    #[arg(value_parser = positive_size_arg, allow_hyphen_values = true)]
    len: u64,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Leave out the header line and the column padding: one "MEMBER OFFSET LENGTH" line per
    /// piece, separated by single spaces (for scripts).
    #[arg(long, short = 'n', conflicts_with = "json")]
    no_headers: bool,
}

pub fn cmd_layout(a: LayoutArgs) -> Result<u8, Failure> {
    let map = ssdlab_layout::StripeMap::new(&a.members, a.stripe, a.block_size)
        .map_err(|e| anyhow!("--stripe: {e}"))?;
    let pieces = map.try_split(a.offset, a.len).map_err(|e| anyhow!("{e}"))?;
    let mut out = StdoutStream::new();
    let write_err =
        |e: std::io::Error| Failure::new(EXIT_FAILED, anyhow!("cannot write to stdout: {e}"));
    if a.json {
        // {"size":…,"stripe":…,"zones":[…],"pieces":[ … ]} with one piece per line.
        let head = serde_json::json!({
            "size": map.size(),
            "stripe": map.chunk(),
            "zones": map.zones(),
        });
        let head = serde_json::to_string(&head)?;
        let head = head.strip_suffix('}').unwrap_or(&head);
        write!(out, "{head},\"pieces\":[").map_err(write_err)?;
        for (i, p) in pieces.enumerate() {
            if output::stdout_closed() || crate::signals::stopped() {
                break;
            }
            out.write_all(if i == 0 { b"\n" } else { b",\n" })
                .map_err(write_err)?;
            serde_json::to_writer(&mut out, &p)?;
        }
        out.write_all(b"\n]}\n").map_err(write_err)?;
    } else if a.no_headers {
        for p in pieces {
            if output::stdout_closed() || crate::signals::stopped() {
                break;
            }
            writeln!(out, "{} {} {}", p.member, p.member_offset, p.len).map_err(write_err)?;
        }
    } else {
        // Column widths from the largest values any piece can have, so the table streams.
        let digits = |v: u64| v.to_string().len();
        let w_member = digits(a.members.len().saturating_sub(1) as u64).max("member".len());
        let w_offset = digits(a.members.iter().copied().max().unwrap_or(0)).max("offset".len());
        let w_len = digits(map.chunk().min(a.len)).max("length".len());
        writeln!(
            out,
            "{:>w_member$} {:>w_offset$} {:>w_len$}",
            "member", "offset", "length"
        )
        .map_err(write_err)?;
        for p in pieces {
            if output::stdout_closed() || crate::signals::stopped() {
                break;
            }
            writeln!(
                out,
                "{:>w_member$} {:>w_offset$} {:>w_len$}",
                p.member, p.member_offset, p.len
            )
            .map_err(write_err)?;
        }
    }
    out.finish().map_err(write_err)?;
    Ok(if crate::signals::stopped() {
        crate::signals::exit_code()
    } else {
        0
    })
}
