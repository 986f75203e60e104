//! The registries of vmscan's reclaim policies: eviction policies on its page decisions
//! (`kernel.eviction`) and kswapd sizing policies on how much it reclaims (`kernel.kswapd_sizing`).
//! A new policy is a module implementing the hook's trait ([`EvictionPolicy`],
//! [`KswapdSizing`]) plus one entry here; "stock" is the kernel's own rule (no hook installed).

use crate::config::KernelConfig;
use crate::mmzone::{EvictionPolicy, KswapdSizing};
use mobmem_engine::component::{Component, Registry};

/// Builds an eviction policy for a kernel of `frames` page frames (None: the stock rules).
pub type EvictionBuild = fn(&KernelConfig, usize) -> Result<Option<Box<dyn EvictionPolicy>>, String>;
/// Builds a kswapd sizing policy (None: the stock rule, reclaim up to the high watermark).
pub type KswapdSizingBuild = fn(&KernelConfig) -> Result<Option<Box<dyn KswapdSizing>>, String>;

pub static EVICTION: Registry<EvictionBuild> = Registry {
    kind: "eviction policy",
    entries: &[
        Component { name: "stock", help: "Linux's rules: referenced pages are activated or rotated, the inactive tails reclaimed", build: |_, _| Ok(None) },
        Component {
            name: "fae",
            help: "Acclaim's foreground-aware eviction (ATC '20, section 4): referenced pages of background apps are reclaimed instead of kept, their executable file pages not rotated",
            build: |cfg, frames| Ok(Some(Box::new(crate::fae::Fae::new(cfg.fae_fg_chances, frames)))),
        },
    ],
};

pub static KSWAPD_SIZING: Registry<KswapdSizingBuild> = Registry {
    kind: "kswapd sizing policy",
    entries: &[
        Component { name: "stock", help: "kswapd reclaims up to the high watermark", build: |_| Ok(None) },
        Component {
            name: "lwp",
            help: "Acclaim's lightweight prediction (ATC '20, section 5): stop level and reclaim size from the predicted allocation demand",
            build: |cfg| Ok(Some(Box::new(crate::lwp::Lwp::new(cfg.lwp.clone(), false)?))),
        },
        Component {
            name: "lwp-code",
            help: "Acclaim's released code: the reclaim target scaled by the allocation demand's trend",
            build: |cfg| Ok(Some(Box::new(crate::lwp::Lwp::new(cfg.lwp.clone(), true)?))),
        },
    ],
};
