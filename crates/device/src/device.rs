//! Device profiles: the phone's hardware, kernel settings and ActivityManager limits.
//!
//! One TOML file per device in `python/mobmem/data/devices/`: `[device]` (CPU clusters,
//! storage, the cached-process limit), `[kernel]` (settings for the kernel model, each with its
//! source), and optionally `[runtime]` (ART heap properties, read by the runtime).

use crate::input::{self, InputError};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct CpuCluster {
    pub(crate) cluster: String,
    pub(crate) cores: u32,
    pub(crate) freq_mhz: u32,
    /// Speed relative to the cost model's reference core.
    pub(crate) speed: f64,
    /// Operating points (MHz, ascending, ending at `freq_mhz`); absent: `freq_mhz` only.
    #[serde(default)]
    pub(crate) opp_mhz: Vec<u32>,
    /// Voltage per operating point (mV), for dynamic power `C · V² · f`.
    #[serde(default)]
    pub(crate) opp_mv: Vec<u32>,
    /// Busy power per operating point (mW) where the source gives power rather than voltages.
    #[serde(default)]
    pub(crate) opp_mw: Vec<f64>,
    /// Dynamic power coefficient C, µW/MHz/V² (with `opp_mv`).
    #[serde(default)]
    pub(crate) dynamic_power_coefficient: Option<f64>,
    /// Leakage of a busy core at the top voltage, mW (with `opp_mv`).
    #[serde(default)]
    pub(crate) leak_mw: f64,
    /// Power of an idle core, mW.
    #[serde(default)]
    pub(crate) idle_mw: Option<f64>,
    /// The kernel's CPU numbers of this cluster's cores ("4-7"), which the device's cpusets are
    /// written in; needed with `cpusets`.
    #[serde(default)]
    pub(crate) cpus: Option<String>,
}

impl CpuCluster {
    /// Whether the profile gives this cluster's power.
    pub fn has_power(&self) -> bool {
        self.idle_mw.is_some() && (!self.opp_mw.is_empty() || (self.dynamic_power_coefficient.is_some() && !self.opp_mv.is_empty()))
    }

    /// The cluster as the CPU model's frequency domain; errors name the field.
    pub fn spec(&self) -> Result<mobmem_engine::cpufreq::ClusterSpec, String> {
        use mobmem_engine::cpufreq::{ClusterSpec, Opp};
        let at = |f: &str| format!("device.cpu (cluster {}).{f}", self.cluster);
        let mhz = if self.opp_mhz.is_empty() { vec![self.freq_mhz] } else { self.opp_mhz.clone() };
        if mhz.windows(2).any(|w| w[0] >= w[1]) || mhz.last() != Some(&self.freq_mhz) {
            return Err(format!("{}: operating points must ascend and end at freq_mhz = {}", at("opp_mhz"), self.freq_mhz));
        }
        for (name, n) in [("opp_mv", self.opp_mv.len()), ("opp_mw", self.opp_mw.len())] {
            if n != 0 && n != mhz.len() {
                return Err(format!("{}: {n} values for {} operating points", at(name), mhz.len()));
            }
        }
        if self.opp_mw.iter().any(|&p| !(p >= 0.0 && p.is_finite())) {
            return Err(format!("{}: power must be a non-negative number", at("opp_mw")));
        }
        if !(self.speed > 0.0 && self.speed.is_finite()) {
            return Err(format!("{}: must be greater than 0, got {}", at("speed"), self.speed));
        }
        let mv = if self.opp_mv.is_empty() { vec![0; mhz.len()] } else { self.opp_mv.clone() };
        Ok(ClusterSpec {
            name: self.cluster.clone(),
            cores: self.cores as usize,
            speed: self.speed,
            opps: mhz.iter().zip(&mv).map(|(&mhz, &mv)| Opp { mhz, mv }).collect(),
            dynamic_power_coefficient: self.dynamic_power_coefficient.unwrap_or(0.0),
            leak_mw: self.leak_mw,
            idle_mw: self.idle_mw.unwrap_or(0.0),
            power_mw: (!self.opp_mw.is_empty()).then(|| self.opp_mw.clone()),
        })
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Storage {
    pub(crate) kind: String,
    pub(crate) random_read_us: f64,
    pub(crate) seq_read_mb_s: f64,
    pub(crate) write_mb_s: f64,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Hardware {
    pub(crate) max_cached_processes: u32,
    /// The display's size in pixels (width, height): an app window's buffers are three
    /// full-screen 32-bit buffers.
    pub(crate) display_px: [u32; 2],
    /// GPU memory (textures in the renderer's resource cache, kgsl/ion: not on an LRU, so never
    /// reclaimed or swapped) an app keeps when its UI is hidden, at most (MiB).
    pub(crate) gpu_cache_background_mib: f64,
    /// The ActivityManager reads its memory factor from PSI (`LowMemDetector`: Android 10+ on a
    /// kernel with PSI); otherwise from the number of cached processes.
    #[serde(default)]
    pub(crate) low_mem_detector: bool,
    /// The ActivityManager gives trim levels from the least recently used end of its process
    /// list (Android 12+'s `AppProfiler`); otherwise from the most recently used end.
    #[serde(default)]
    pub(crate) trim_oldest_first: bool,
    pub cpu: Vec<CpuCluster>,
    pub(crate) storage: Storage,
    /// The CPUs of Android's cpusets as the device's init writes them (kernel CPU numbers);
    /// absent: every process may use every core.
    #[serde(default)]
    pub(crate) cpusets: Option<Cpusets>,
}

/// Android's cpusets for app processes (`/dev/cpuset/<group>/cpus`), in the kernel's CPU
/// numbering: lists such as "0-3,6-7".
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Cpusets {
    pub(crate) top_app: String,
    pub(crate) foreground: String,
    pub(crate) background: String,
}

/// The cpusets as masks of the CPU model's cores (bit `c` = core `c`: the clusters' cores in the
/// profile's order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CpusetMasks {
    pub top_app: u64,
    pub foreground: u64,
    pub background: u64,
}

impl Hardware {
    /// The device's cpusets as core masks (`None` without `cpusets`); errors name the field.
    pub fn cpuset_masks(&self) -> Result<Option<CpusetMasks>, String> {
        let Some(c) = &self.cpusets else { return Ok(None) };
        // Kernel CPU number → model core index.
        let mut core_of = BTreeMap::new();
        let mut next = 0u32;
        for cl in &self.cpu {
            let at = format!("device.cpu (cluster {}).cpus", cl.cluster);
            let Some(list) = &cl.cpus else { return Err(format!("{at}: needed with device.cpusets (the kernel's CPU numbers of the cluster)")) };
            let ids = cpu_list(list).map_err(|e| format!("{at}: {e}"))?;
            if ids.len() != cl.cores as usize {
                return Err(format!("{at}: {} CPUs listed for {} cores", ids.len(), cl.cores));
            }
            for id in ids {
                if core_of.insert(id, next).is_some() {
                    return Err(format!("{at}: CPU {id} is in two clusters"));
                }
                next += 1;
            }
        }
        let mask = |field: &str, list: &str| -> Result<u64, String> {
            let at = format!("device.cpusets.{field}");
            let ids = cpu_list(list).map_err(|e| format!("{at}: {e}"))?;
            let mut m = 0u64;
            for id in ids {
                let c = core_of.get(&id).ok_or_else(|| format!("{at}: CPU {id} is in no cluster"))?;
                m |= 1 << c;
            }
            Ok(m)
        };
        Ok(Some(CpusetMasks {
            top_app: mask("top_app", &c.top_app)?,
            foreground: mask("foreground", &c.foreground)?,
            background: mask("background", &c.background)?,
        }))
    }
}

/// A kernel CPU list ("0-3,6-7", "0", "4-7"), ascending, as `cpuset.cpus` takes it.
fn cpu_list(s: &str) -> Result<Vec<u32>, String> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let parse = |x: &str| x.trim().parse::<u32>().map_err(|_| format!("{s:?} is not a CPU list such as \"0-3,6-7\""));
        let (a, b) = (parse(a)?, parse(b)?);
        if a > b || b >= 64 {
            return Err(format!("{s:?}: the range {part} must ascend and stay below CPU 64"));
        }
        out.extend(a..=b);
    }
    if out.windows(2).any(|w| w[0] >= w[1]) {
        return Err(format!("{s:?}: CPUs must ascend without repeats"));
    }
    Ok(out)
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DeviceProfile {
    pub(crate) name: String,
    pub(crate) source: String,
    pub device: Hardware,
    pub(crate) kernel: BTreeMap<String, toml::Value>,
    #[serde(default)]
    pub(crate) runtime: Option<toml::Value>,
}

impl DeviceProfile {
    /// The `[kernel]` table as `kernel.key=value` settings (sub-tables flattened).
    pub fn kernel_settings(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for (k, v) in &self.kernel {
            match v {
                toml::Value::Table(t) => {
                    for (kk, vv) in t {
                        out.push((format!("kernel.{k}.{kk}"), input::value_text(vv)));
                    }
                }
                _ => out.push((format!("kernel.{k}"), input::value_text(v))),
            }
        }
        out
    }

    /// The `[runtime]` table as runtime settings (its `source` notes left out).
    pub fn runtime_settings(&self) -> Vec<(String, String)> {
        let mut out = Vec::new();
        if let Some(toml::Value::Table(t)) = &self.runtime {
            for (k, v) in t {
                if k != "source" && !k.ends_with("_source") {
                    out.push((k.clone(), input::value_text(v)));
                }
            }
        }
        out
    }

    #[allow(clippy::neg_cmp_op_on_partial_ord)] // `!(x > 0.0)` also rejects NaN
    pub fn validate(&self, file: &str) -> Result<(), InputError> {
        let bad = |msg: String| InputError { file: file.into(), line: 0, col: 0, msg };
        if self.device.cpu.is_empty() || self.device.cpu.iter().any(|c| c.cores == 0 || !(c.speed > 0.0)) {
            return Err(bad("device.cpu: every cluster needs cores > 0 and speed > 0".into()));
        }
        let s = &self.device.storage;
        if !(s.random_read_us > 0.0 && s.seq_read_mb_s > 0.0 && s.write_mb_s > 0.0) {
            return Err(bad("device.storage: latencies and bandwidths must be positive".into()));
        }
        self.device.cpuset_masks().map_err(bad)?;
        Ok(())
    }
}

/// The device profile `name` of `data_dir` (`devices/NAME.toml`); an unknown name lists the known ones.
pub fn load_named(data_dir: &std::path::Path, name: &str) -> Result<DeviceProfile, InputError> {
    load(&input::named_file(&data_dir.join("devices"), "device", name, "")?)
}

pub fn load(path: &str) -> Result<DeviceProfile, InputError> {
    let text = input::read(path)?;
    let d: DeviceProfile = input::parse(path, &text)?;
    d.validate(path)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hardware(clusters: &str, cpusets: &str) -> Hardware {
        let text = format!(
            "max_cached_processes = 32\ndisplay_px = [1080, 2160]\ngpu_cache_background_mib = 50.0\n{clusters}\n[storage]\nkind = \"UFS\"\nrandom_read_us = 80\nseq_read_mb_s = 800\nwrite_mb_s = 200\n{cpusets}"
        );
        toml::from_str(&text).unwrap()
    }

    const TWO: &str = "[[cpu]]\ncluster = \"big\"\ncores = 2\nfreq_mhz = 2000\nspeed = 1.0\ncpus = \"6-7\"\n[[cpu]]\ncluster = \"little\"\ncores = 6\nfreq_mhz = 1800\nspeed = 0.5\ncpus = \"0-5\"\n";

    #[test]
    fn cpusets_map_kernel_cpu_numbers_to_the_models_cores() {
        // The big cluster (kernel cpu6-7) is the model's cores 0-1, the little one (cpu0-5) 2-7.
        let h = hardware(TWO, "[cpusets]\ntop_app = \"0-7\"\nforeground = \"0-5,7\"\nbackground = \"4-5\"\n");
        let m = h.cpuset_masks().unwrap().unwrap();
        assert_eq!((m.top_app, m.foreground, m.background), (0xff, 0b1111_1110, 0b1100_0000));
        assert_eq!(hardware(TWO, "").cpuset_masks().unwrap(), None);
    }

    #[test]
    fn bad_cpusets_name_their_field() {
        let bad = |clusters: &str, sets: &str| hardware(clusters, sets).cpuset_masks().unwrap_err();
        let sets = |bg: &str| format!("[cpusets]\ntop_app = \"0-7\"\nforeground = \"0-7\"\nbackground = \"{bg}\"\n");
        assert!(bad(TWO, &sets("8")).starts_with("device.cpusets.background: CPU 8 is in no cluster"), "{}", bad(TWO, &sets("8")));
        assert!(bad(TWO, &sets("3-1")).starts_with("device.cpusets.background: \"3-1\""));
        assert!(bad(TWO, &sets("a")).contains("is not a CPU list"));
        let no_cpus = TWO.replace("cpus = \"0-5\"\n", "");
        assert!(bad(&no_cpus, &sets("0")).starts_with("device.cpu (cluster little).cpus: needed with device.cpusets"));
        let short = TWO.replace("cpus = \"0-5\"", "cpus = \"0-4\"");
        assert!(bad(&short, &sets("0")).contains("5 CPUs listed for 6 cores"));
        let overlap = TWO.replace("cpus = \"0-5\"", "cpus = \"0-4,6\"");
        assert!(bad(&overlap, &sets("0")).contains("CPU 6 is in two clusters"));
    }
}
