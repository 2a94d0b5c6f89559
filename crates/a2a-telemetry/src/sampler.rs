//! Which traces are recorded: the `OTEL_TRACES_SAMPLER` choices, decided when a root span is
//! made (before any of its fields is recorded).

/// A sampling rule (`OTEL_TRACES_SAMPLER` / `OTEL_TRACES_SAMPLER_ARG`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampler {
    /// Share of new traces recorded, 0.0 to 1.0.
    pub ratio: f64,
    /// Whether a span with a parent (local or remote) follows the parent's decision.
    pub parent_based: bool,
}

impl Default for Sampler {
    /// `parentbased_always_on`, the OpenTelemetry default.
    fn default() -> Self {
        Self {
            ratio: 1.0,
            parent_based: true,
        }
    }
}

impl Sampler {
    /// Parses an `OTEL_TRACES_SAMPLER` name and its argument; `None` for an unknown name.
    pub fn parse(name: &str, arg: Option<&str>) -> Option<Self> {
        let ratio = || {
            arg.and_then(|a| a.trim().parse::<f64>().ok())
                .filter(|r| (0.0..=1.0).contains(r))
                .unwrap_or(1.0)
        };
        let (ratio, parent_based) = match name.trim() {
            "always_on" => (1.0, false),
            "always_off" => (0.0, false),
            "traceidratio" => (ratio(), false),
            "parentbased_always_on" => (1.0, true),
            "parentbased_always_off" => (0.0, true),
            "parentbased_traceidratio" => (ratio(), true),
            _ => return None,
        };
        Some(Self {
            ratio,
            parent_based,
        })
    }

    /// Whether a trace with this id is recorded, judged by the ratio alone (as
    /// OpenTelemetry's `TraceIdRatioBased` does: on the id's low 63 bits).
    pub(crate) fn by_ratio(&self, trace_id: &[u8; 16]) -> bool {
        if self.ratio >= 1.0 {
            return true;
        }
        if self.ratio <= 0.0 {
            return false;
        }
        let mut low = [0u8; 8];
        low.copy_from_slice(&trace_id[8..]);
        let bound = (self.ratio * (1u64 << 63) as f64) as u64;
        (u64::from_be_bytes(low) >> 1) < bound
    }

    /// The decision for a span whose parent (if any) was `parent_sampled`.
    pub(crate) fn decide(&self, trace_id: &[u8; 16], parent_sampled: Option<bool>) -> bool {
        match parent_sampled {
            Some(sampled) if self.parent_based => sampled,
            _ => self.by_ratio(trace_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_decisions() {
        let on = Sampler::parse("always_on", None).unwrap();
        let off = Sampler::parse("parentbased_always_off", None).unwrap();
        let half = Sampler::parse("traceidratio", Some("0.5")).unwrap();
        assert!(Sampler::parse("jaeger_remote", None).is_none());
        let id = [7u8; 16];
        assert!(on.decide(&id, Some(false)), "always_on ignores the parent");
        assert!(!off.decide(&id, None));
        assert!(
            off.decide(&id, Some(true)),
            "parent-based follows the parent"
        );
        let kept = (0..10_000u32)
            .filter(|i| {
                let mut id = [0u8; 16];
                id[8..].copy_from_slice(
                    &(u64::from(*i).wrapping_mul(0x9E37_79B9_7F4A_7C15)).to_be_bytes(),
                );
                half.decide(&id, None)
            })
            .count();
        assert!(
            (4_000..6_000).contains(&kept),
            "ratio 0.5 kept {kept} of 10000"
        );
    }
}
