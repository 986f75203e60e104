use criterion::{criterion_group, criterion_main, Criterion};
use mobmem_kernel::{Kernel, KernelConfig, Task};

/// Touch throughput under memory pressure: a Zipf-like hot set over a working set 1.5× RAM with
/// zram swap.
fn touches_under_pressure(c: &mut Criterion) {
    c.bench_function("touch_1m_under_pressure", |b| {
        b.iter(|| {
            let mut cfg = KernelConfig::default();
            cfg.set("ram_mib", "64").unwrap();
            cfg.set("swap", "zram").unwrap();
            cfg.set("swap_mib", "128").unwrap();
            let mut k = Kernel::new(cfg).unwrap();
            let p = k.create_process(1, "a", 0, 0).unwrap();
            let v = k.map_anon(p, "heap", 24 * 1024).unwrap();
            let mut t = Task::new(k.thread_of(p), p, 0);
            let mut x: u64 = 1;
            for _ in 0..1_000_000u32 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // 80% of touches to 20% of pages.
                let page = if x % 10 < 8 { (x >> 8) % (24 * 1024 / 5) } else { (x >> 8) % (24 * 1024) } as u32;
                if Some(t.now) >= k.next_event_time() {
                    k.book_cpu(&mut t);
                    k.advance_to(t.now);
                }
                k.touch(&mut t, v, page, x & 1 == 0);
            }
            k.vmstat.pgfault
        })
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = touches_under_pressure
}
criterion_main!(benches);
