//! Loading a spec's trace for a run and checking it against the region it replays into.

use crate::{EngineError, Invalid};
use ssdlab_workload::{format_size, Trace, WorkloadSpec};
use std::sync::Arc;

/// The trace `spec` replays (`None` for generated workloads), checked against the region
/// `[start, start+span)` of `what`: every op must end inside it and fit the buffers (`spec.bs`).
pub(crate) fn load_trace(
    spec: &WorkloadSpec,
    span: u64,
    what: &str,
) -> Result<Option<Arc<Trace>>, EngineError> {
    let Some(r) = &spec.replay else {
        return Ok(None);
    };
    let trace = Trace::load(r)?;
    let shape = trace.shape();
    if shape.end > span {
        return Err(Invalid::TraceBeyond {
            end: format_size(shape.end),
            span: format_size(span),
            what: what.to_string(),
        }
        .into());
    }
    if shape.max_len > spec.bs {
        // The spec was made from another version of the trace file.
        return Err(ssdlab_workload::TraceError::Option(format!(
            "{}: the trace changed since the job was checked (an op of {} is larger than {})",
            r.trace.display(),
            format_size(shape.max_len),
            format_size(spec.bs)
        ))
        .into());
    }
    Ok(Some(Arc::new(trace)))
}
