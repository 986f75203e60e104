//! Reclaim policies on vmscan's hooks: Acclaim's foreground-aware eviction (FAE) and
//! lightweight prediction-based kswapd sizing (LWP).

mod common;

use mobmem_kernel::fae::Fae;
use mobmem_kernel::lwp::Lwp;
use mobmem_kernel::mmzone::{EvictionPolicy, KswapdSizing, PageOwner, Watermarks};
use mobmem_kernel::{Kernel, KernelConfig};

/// Two apps, `fg` in the foreground, each touching all of its 12 MiB heap in turns (more than
/// RAM holds together), then the pages each had swapped out: (foreground, background).
fn two_apps(settings: &[(&str, &str)], names: [&str; 2]) -> (u64, u64, Kernel) {
    let k = common::two_apps_on(common::small_phone(settings), names, 6, |_| {});
    (k.procs[0].stats.swapout, k.procs[1].stats.swapout, k)
}

#[test]
fn fae_keeps_the_foreground_apps_pages_and_evicts_the_background_apps_first() {
    let (fg_stock, bg_stock, _) = two_apps(&[], ["a", "b"]);
    let (fg_fae, bg_fae, _) = two_apps(&[("eviction", "fae")], ["a", "b"]);
    assert!(fg_stock > 0 && bg_stock > 0, "the test needs pressure on both: {fg_stock} / {bg_stock}");
    assert!(fg_fae < fg_stock, "foreground app swapped out {fg_fae} pages under FAE, {fg_stock} stock");
    // Eviction falls on the background app: its share of what is swapped out grows.
    let share = |fg: u64, bg: u64| bg as f64 / (fg + bg) as f64;
    assert!(share(fg_fae, bg_fae) > share(fg_stock, bg_stock), "background share {fg_fae}/{bg_fae} under FAE, {fg_stock}/{bg_stock} stock");
}

#[test]
fn with_no_background_app_fae_decides_as_stock() {
    // The only other app is exempt: every decision is the stock one, so the run is identical.
    let (a0, b0, k0) = two_apps(&[("fae_exempt", "b")], ["a", "b"]);
    let (a1, b1, k1) = two_apps(&[("eviction", "fae"), ("fae_exempt", "b")], ["a", "b"]);
    assert_eq!((a0, b0), (a1, b1));
    assert_eq!(format!("{:?}", k0.vmstat), format!("{:?}", k1.vmstat));
}

#[test]
fn foreground_pages_get_their_extra_chances_then_go() {
    let mut f = Fae::new(3, 16);
    for _ in 0..3 {
        assert!(f.extra_chance(PageOwner::ForegroundApp, 5, 7));
    }
    assert!(!f.extra_chance(PageOwner::ForegroundApp, 5, 7));
    // A new allocation of the frame starts afresh; other owners get none.
    assert!(f.extra_chance(PageOwner::ForegroundApp, 5, 8));
    assert!(!f.extra_chance(PageOwner::BackgroundApp(1), 6, 1));
    assert!(!f.extra_chance(PageOwner::Other, 6, 1));
    assert!(!Fae::new(0, 16).extra_chance(PageOwner::ForegroundApp, 5, 7));
    assert!(!f.keep_referenced(PageOwner::BackgroundApp(2), 1, 1, true));
    assert!(f.keep_referenced(PageOwner::ForegroundApp, 1, 1, true) && f.keep_referenced(PageOwner::Other, 1, 1, false));
    assert!(!f.rotate_exec(PageOwner::BackgroundApp(2)) && f.rotate_exec(PageOwner::Other));
}

fn wm() -> Watermarks {
    Watermarks { min_free_kbytes: 0, min: 1000, low: 1250, high: 1500 }
}

const MS: u64 = 1_000_000;

/// `pages` allocations spread over the 100 ms window that ends at `end`.
fn demand(l: &mut Lwp, end: u64, pages: u64) {
    for i in 0..pages {
        l.on_alloc(end - 100 * MS + i * (100 * MS / pages));
    }
}

#[test]
fn lwp_reclaims_more_and_longer_when_demand_rises_and_less_when_it_falls() {
    let c = KernelConfig::default().lwp;
    let w = wm();
    // Rising fourfold: trend 4 >= T1, reclaim size P1 x 400 = 1600, stop at min(high x 5, high + T2).
    let mut l = Lwp::new(c.clone(), false).unwrap();
    demand(&mut l, 1000 * MS, 100);
    demand(&mut l, 1100 * MS, 400);
    let (stop, size) = l.levels(&w, 1100 * MS - 1);
    assert_eq!(size, 1600);
    assert_eq!(stop, 1500 + 250);
    // Falling to half: trend 0.5 < T1, size P2 x 200 = 400, stop at max(high x 0.5, low) = low.
    let mut l = Lwp::new(c.clone(), false).unwrap();
    demand(&mut l, 1000 * MS, 400);
    demand(&mut l, 1100 * MS, 200);
    let (stop, size) = l.levels(&w, 1100 * MS - 1);
    assert_eq!((stop, size), (1250, 400));
    // The released code's variant keeps the stop level and scales the target by the trend.
    let mut l = Lwp::new(c, true).unwrap();
    demand(&mut l, 1000 * MS, 100);
    demand(&mut l, 1100 * MS, 200);
    assert_eq!(l.levels(&w, 1100 * MS - 1), (1500, 3000));
}

#[test]
fn lwp_settings_are_checked() {
    let mut c = KernelConfig::default();
    for (k, v) in [("kernel.lwp_p1", "0"), ("kernel.lwp_p2", "-1"), ("kernel.lwp_t1", "x"), ("kernel.kswapd_sizing", "bogus"), ("kernel.eviction", "lru2")] {
        let e = c.set(k, v).unwrap_err().to_string();
        assert!(e.contains(k.trim_start_matches("kernel.")), "{k}={v}: {e}");
    }
    c.set("kernel.kswapd_sizing", "lwp").unwrap();
    c.set("kernel.lwp_slot_ms", "30").unwrap();
    let e = Kernel::new(c).err().expect("a window of 100 ms is not a whole number of 30 ms slots").to_string();
    assert!(e.contains("lwp_window_ms"), "{e}");
}

#[test]
fn lwp_changes_how_much_kswapd_reclaims() {
    let (_, _, stock) = two_apps(&[], ["a", "b"]);
    let (_, _, lwp) = two_apps(&[("kswapd_sizing", "lwp")], ["a", "b"]);
    assert_ne!(stock.vmstat.pgsteal_kswapd, lwp.vmstat.pgsteal_kswapd);
    assert!(lwp.kswapd_sizing.is_some() && stock.kswapd_sizing.is_none());
}
