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

/// A 24 MiB phone with 64 MiB of zram and lmkd off, with the given `kernel.*` settings.
pub fn small_phone(set: &[(&str, &str)]) -> Kernel {
    let mut c = mobmem_kernel::KernelConfig::default();
    for (k, v) in [("ram_mib", "24"), ("swap", "zram"), ("swap_mib", "64"), ("lmkd", "off")] {
        c.set(k, v).unwrap();
    }
    for (k, v) in set {
        c.set(&format!("kernel.{k}"), v).unwrap();
    }
    Kernel::new(c).unwrap()
}

/// Two apps called `names`, the first in the foreground, each touching all of its 12 MiB heap
/// in turns for `rounds` rounds (more than RAM holds together; writes in the first round, then
/// every other page), after `install` has put its components on the kernel. A killed app stops.
pub fn two_apps_on(mut k: Kernel, names: [&str; 2], rounds: u32, install: impl FnOnce(&mut Kernel)) -> Kernel {
    use mobmem_kernel::Task;
    let mut tasks = Vec::new();
    let mut vmas = Vec::new();
    for (i, name) in names.iter().enumerate() {
        let p = k.create_process(100 + i as u32, name, 0, 0).unwrap();
        k.procs[p as usize].app = true;
        vmas.push(k.map_anon(p, "heap", 3072).unwrap());
        tasks.push(Task::new(k.thread_of(p), p, 0));
    }
    k.set_foreground(Some(0));
    install(&mut k);
    let mut now = 0;
    for round in 0..rounds {
        for (i, t) in tasks.iter_mut().enumerate() {
            if !k.procs[i].alive {
                continue;
            }
            t.now = t.now.max(now);
            for pg in 0..3072 {
                k.touch(t, vmas[i], pg, round == 0 || pg % 2 == 0);
                if Some(t.now) >= k.next_event_time() {
                    k.book_cpu(t);
                    k.advance_to(t.now);
                }
                if !k.procs[i].alive {
                    break;
                }
            }
            k.book_cpu(t);
            now = t.now;
            k.advance_to(now);
        }
    }
    k.check_invariants().unwrap();
    k
}
