#![allow(dead_code)]
use mobmem_kernel::replay::{config_for, run, ReplayStats};
use mobmem_kernel::trace::parse;
use mobmem_kernel::Kernel;

pub fn settings(s: &[(&str, &str)]) -> Vec<(String, String)> {
    s.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

/// Replay trace text with settings; full invariant check every 64 ops and at the end.
pub fn replay(text: &str, set: &[(&str, &str)]) -> Kernel {
    replay_stats(text, set).0
}

/// [`replay`], with the replay's own counters (its simulated time).
pub fn replay_stats(text: &str, set: &[(&str, &str)]) -> (Kernel, ReplayStats) {
    let t = parse("test.trace", text).expect("trace parses");
    let cfg = config_for(&t, &[], &settings(set)).expect("config");
    let mut k = Kernel::new(cfg).expect("kernel");
    let stats = run(&mut k, &t, 64).expect("replay");
    k.check_invariants().expect("invariants at end");
    (k, stats)
}
