//! Components the kernel never heard of: a kill policy, a reclaim policy on vmscan's decisions
//! and a kswapd sizing policy, each written here and installed on a running kernel without any
//! edit of the kernel, and each shown to act (its hooks are called and the outcome changes).

mod common;

use mobmem_engine::Nanos;
use mobmem_kernel::mmzone::{EvictionPolicy, KillPolicy, KswapdSizing, PageOwner, Watermarks};
use mobmem_kernel::page::Pfn;
use mobmem_kernel::Kernel;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Two apps touching their 12 MiB heaps in turns (more than RAM holds), the first in the
/// foreground, after `install` has put its components on the kernel.
fn two_apps(install: impl FnOnce(&mut Kernel)) -> Kernel {
    common::two_apps_on(common::small_phone(&[]), ["app0", "app1"], 4, install)
}

/// Kills the background app at its first poll.
struct KillBackground;

impl KillPolicy for KillBackground {
    fn name(&self) -> &'static str {
        "kill-background"
    }
    fn first_poll(&self) -> Option<Nanos> {
        Some(50_000_000)
    }
    fn run(&mut self, k: &mut Kernel, now: Nanos) -> Option<Nanos> {
        k.kill_process(1, "toy", 0, "kill-background", now, 0);
        None
    }
}

#[test]
fn a_kill_policy_of_its_own_kills_through_the_kernel() {
    let stock = two_apps(|_| {});
    assert!(stock.kills.is_empty(), "lmkd is off: nothing dies in stock");
    let k = two_apps(|k| k.install_killer(Box::new(KillBackground)));
    assert_eq!(k.kills.len(), 1, "{:?}", k.kills.iter().map(|r| &r.name).collect::<Vec<_>>());
    assert_eq!((k.kills[0].proc_idx, k.kills[0].killer.as_str()), (1, "kill-background"));
    assert!(k.procs[0].alive && !k.procs[1].alive);
}

/// Never keeps a referenced page (reclaims it at once), counting the decisions it was asked.
struct ForgetReferences(Arc<AtomicU64>);

impl EvictionPolicy for ForgetReferences {
    fn name(&self) -> &'static str {
        "forget-references"
    }
    fn keep_referenced(&mut self, _owner: PageOwner, _pfn: Pfn, _gen: u32, _activate: bool) -> bool {
        self.0.fetch_add(1, Relaxed);
        false
    }
}

#[test]
fn a_reclaim_policy_of_its_own_decides_for_vmscan() {
    let stock = two_apps(|_| {});
    let asked = Arc::new(AtomicU64::new(0));
    let a = asked.clone();
    let k = two_apps(move |k| k.install_eviction(Some(Box::new(ForgetReferences(a)))));
    let asked = asked.load(Relaxed);
    assert!(asked > 0, "vmscan never asked the policy");
    // Stock rotates referenced pages and scans more than it reclaims; with the policy every
    // page scanned is reclaimed.
    let (v, s) = (&k.vmstat, &stock.vmstat);
    assert!(s.pgscan_anon > s.pgsteal_anon, "stock: scanned {} reclaimed {}", s.pgscan_anon, s.pgsteal_anon);
    assert_eq!(v.pgscan_anon, v.pgsteal_anon, "asked {asked}");
}

/// kswapd reclaims far past the high watermark, counting its calls.
struct Greedy(Arc<AtomicU64>, Arc<AtomicU64>);

impl KswapdSizing for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn on_alloc(&mut self, _now: Nanos) {
        self.0.fetch_add(1, Relaxed);
    }
    fn levels(&mut self, wmark: &Watermarks, _now: Nanos) -> (u64, u64) {
        self.1.fetch_add(1, Relaxed);
        (wmark.high * 4, wmark.high * 4)
    }
}

#[test]
fn a_kswapd_sizing_policy_of_its_own_sizes_kswapds_work() {
    let stock = two_apps(|_| {});
    let (allocs, passes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let g = Greedy(allocs.clone(), passes.clone());
    let k = two_apps(move |k| k.install_kswapd_sizing(Some(Box::new(g))));
    assert!(allocs.load(Relaxed) > 0 && passes.load(Relaxed) > 0);
    assert!(k.vmstat.pgsteal_kswapd > stock.vmstat.pgsteal_kswapd, "kswapd reclaimed {} pages, {} stock", k.vmstat.pgsteal_kswapd, stock.vmstat.pgsteal_kswapd);
}
