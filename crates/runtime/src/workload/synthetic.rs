//! Synthetic apps as memory-management studies use them: the `synthetic:` spec parser
//! ([`AppProfile::synthetic`]).

use super::profile::AppProfile;
use super::settings::SETTINGS;
use super::size_mix::SizeClass;
use mobmem_engine::settings::{self, Kind};

impl AppProfile {
    /// A synthetic app as memory-management studies use: `synthetic:footprint=180m,objsize=512`
    /// — a heap of a fixed footprint filled with objects of one size that keeps deleting and
    /// re-creating a small part of it (every new unit replaces a random long-lived one).
    ///
    /// The spec takes `churn` (the share of the footprint re-created per second, default 0.01;
    /// it sets the foreground allocation rate, and 1/16 of it the background rate — an estimate:
    /// background work is throttled as for popular apps) and any app setting (`rate=…` and
    /// `alloc_rate_bg=…` replace what churn gives). Footprint 180 MiB and 512-byte objects unless
    /// given. A synthetic app declares `largeHeap` unless `largeheap=false` is given: the Fleet
    /// study's synthetic apps hold a 180 MB heap, which leaves a copying collector no room under
    /// the 192 MiB growth limit of a stock 4 GB phone (their manifest is not published: an
    /// inference from that size).
    pub fn synthetic(spec: &str) -> Result<Self, String> {
        let body = spec.strip_prefix("synthetic").ok_or_else(|| format!("not a synthetic app spec: {spec:?}"))?;
        let body = body.strip_prefix(':').unwrap_or(body);
        let mut p = Self {
            name: spec.into(),
            live_heap: 180 << 20,
            size_mix: vec![SizeClass { lo: 512, hi: 512, byte_share: 1.0 }],
            temp_share: 0.0,
            medium_share: 0.0,
            bg_temp_share: 0.0,
            unit_objects: 4.0,
            fanout: 2.0,
            large_heap: true,
            ..Self::default()
        };
        let mut churn = 0.01;
        let (mut rate_set, mut bg_set) = (false, false);
        for kv in body.split(',').filter(|s| !s.trim().is_empty()) {
            let (k, v) = kv.split_once('=').ok_or_else(|| format!("synthetic app spec {spec:?}: expected key=value, got {kv:?}"))?;
            let k = k.trim();
            if k == "churn" {
                churn = settings::parse(Kind::Float { min: 0.0, max: 1.0 }, v.trim()).map_err(|e| format!("synthetic app spec {spec:?}: churn {e}"))?.float();
                continue;
            }
            match SETTINGS.find(k).map(|s| s.key) {
                Some("alloc_rate_fg") => rate_set = true,
                Some("alloc_rate_bg") => bg_set = true,
                None => {
                    return Err(format!("synthetic app spec {spec:?}: unknown key {k:?}; expected churn or an app setting ({})", SETTINGS.keys().join(", ")))
                }
                _ => {}
            }
            p.set(k, v.trim())?;
        }
        let objsize = p.size_mix.iter().map(|c| c.hi as u64).max().unwrap_or(1);
        if p.live_heap < objsize {
            return Err(format!("synthetic app spec {spec:?}: the footprint must hold at least one object ({objsize} B)"));
        }
        if !rate_set {
            p.alloc_rate_fg = ((p.live_heap as f64 * churn) as u64).max(objsize);
        }
        if !bg_set {
            p.alloc_rate_bg = (p.alloc_rate_fg / 16).max(objsize);
        }
        p.name = spec.into();
        Ok(p)
    }
}
