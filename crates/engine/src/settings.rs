//! Settings tables: every `key=value` setting a layer accepts (kernel, runtime, app profile,
//! session), described once — key, type, unit, range, help and source — together with how it is
//! read and written. `Table::set` parses and range-checks a value from the description and
//! hands it to the entry's setter, so the accepted keys, their validation, the help texts and the
//! catalogue (`mobmem keys`, `mobmem catalog`) can never disagree. Defaults are not written here:
//! they are read from the layer's `Default` through the entry's getter.
//!
//! Left out: settings that depend on each other are checked by the layer after all are applied
//! (e.g. a heap's minimum free below its maximum).

use std::fmt::Write as _;

/// The largest per-operation cost any cost setting accepts: one second. No single operation of
/// the model costs that much; larger values only stretch simulated time until the host runs out
/// of memory for what it records along the way.
pub const MAX_COST_NS: u64 = 1_000_000_000;

/// The type of a setting's value, with its accepted range.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// A non-negative integer within `[min, max]`.
    Int { min: u64, max: u64 },
    /// A number within `[min, max]`.
    Float { min: f64, max: f64 },
    /// A size in bytes within `[min, max]`, written as bytes or with a k/m/g suffix (`512k`, `8m`).
    Size { min: u64, max: u64 },
    /// true/false (also 1/0, yes/no, on/off).
    Bool,
    /// One of these names (the setter may accept historical spellings too).
    Choice(&'static [&'static str]),
    /// The name of a component of this registry (see [`crate::component`]).
    Component(&'static dyn crate::component::Names),
    /// Text checked by the setter (a registry name, a list).
    Text,
}

impl Kind {
    /// The type's name in listings: int, float, size, bool, choice, text.
    pub fn type_name(&self) -> &'static str {
        match self {
            Kind::Int { .. } => "int",
            Kind::Float { .. } => "float",
            Kind::Size { .. } => "size",
            Kind::Bool => "bool",
            Kind::Choice(_) | Kind::Component(_) => "choice",
            Kind::Text => "text",
        }
    }

    /// The accepted range as text ("[0, 200]", "a, b, c"), empty when unbounded.
    pub fn range(&self) -> String {
        match *self {
            Kind::Int { min, max } if (min, max) != (0, u64::MAX) => format!("[{min}, {}]", bound(max)),
            Kind::Float { min, max } => format!("[{min}, {}]", fbound(max)),
            Kind::Size { min, max } if (min, max) != (0, u64::MAX) => {
                format!("[{}, {}]", size_text(min), if max == u64::MAX { "∞".into() } else { size_text(max) })
            }
            Kind::Choice(names) => names.join(", "),
            Kind::Component(r) => r.names().join(", "),
            _ => String::new(),
        }
    }
}

fn fbound(x: f64) -> String {
    if x < f64::MAX {
        x.to_string()
    } else {
        "∞".into()
    }
}

fn bound(x: u64) -> String {
    if x == u64::MAX {
        "∞".into()
    } else {
        x.to_string()
    }
}

/// Bytes in the shortest exact k/m/g form ("256k", "1g", "4096" stays "4k").
pub fn size_text(b: u64) -> String {
    for (suffix, shift) in [("g", 30), ("m", 20), ("k", 10)] {
        if b != 0 && b.is_multiple_of(1 << shift) {
            return format!("{}{suffix}", b >> shift);
        }
    }
    b.to_string()
}

/// A parsed value, as the setter receives it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Value<'a> {
    Int(u64),
    Float(f64),
    Bool(bool),
    Text(&'a str),
}

impl Value<'_> {
    /// The integer of an `Int` or `Size` setting (0 for other kinds; tables never mix them up).
    pub fn int(self) -> u64 {
        match self {
            Value::Int(x) => x,
            _ => 0,
        }
    }
    pub fn float(self) -> f64 {
        match self {
            Value::Float(x) => x,
            Value::Int(x) => x as f64,
            _ => 0.0,
        }
    }
    pub fn bool(self) -> bool {
        matches!(self, Value::Bool(true))
    }
    pub fn text(&self) -> &str {
        match self {
            Value::Text(s) => s,
            _ => "",
        }
    }
}

/// One setting of a layer whose state is `C`.
pub struct Setting<C: 'static> {
    pub key: &'static str,
    /// Other accepted spellings of the key (e.g. `footprint` for `live_heap`).
    pub aliases: &'static [&'static str],
    pub kind: Kind,
    /// Unit of the written value ("MiB", "ms", "bytes", "pages", ""), for listings.
    pub unit: &'static str,
    /// What the setting controls, one line.
    pub help: &'static str,
    /// Where its default comes from: a citation, or "estimate" with the reasoning.
    pub source: &'static str,
    /// The current value, written as the user would write it (the default column of listings).
    pub get: fn(&C) -> String,
    /// Store a value parsed and range-checked from `kind`; an error names the problem only.
    pub set: fn(&mut C, Value) -> Result<(), String>,
}

/// A key's description for listings and the catalogue.
#[derive(Clone, Debug, PartialEq)]
pub struct Info {
    pub key: String,
    pub aliases: Vec<&'static str>,
    pub kind: &'static str,
    pub default: String,
    pub unit: &'static str,
    pub range: String,
    pub help: &'static str,
    pub source: &'static str,
}

/// An error in one `key=value` setting.
#[derive(Debug, PartialEq, Eq, Clone)]
pub struct SettingError {
    pub(crate) key: String,
    pub msg: String,
}

impl std::fmt::Display for SettingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "setting {}: {}", self.key, self.msg)
    }
}

impl std::error::Error for SettingError {}

/// The settings of one layer: the key prefixes it strips (`kernel.`, `dalvik.vm.`) and its entries.
pub struct Table<C: 'static> {
    /// The layer's name in errors and listings ("kernel", "runtime", "app", "session").
    pub layer: &'static str,
    pub prefixes: &'static [&'static str],
    pub entries: &'static [Setting<C>],
}

impl<C> Table<C> {
    /// The entry for `key` (with or without one of the layer's prefixes), by key or alias.
    pub fn find(&self, key: &str) -> Option<&'static Setting<C>> {
        let mut k = key;
        for p in self.prefixes {
            k = k.strip_prefix(p).unwrap_or(k);
        }
        self.entries.iter().find(|s| s.key == k || s.aliases.contains(&k))
    }

    /// The keys, in table order.
    pub fn keys(&self) -> Vec<&'static str> {
        self.entries.iter().map(|s| s.key).collect()
    }

    /// Parse `value` as the entry of `key` describes it and apply it to `cfg`.
    pub fn set(&self, cfg: &mut C, key: &str, value: &str) -> Result<(), SettingError> {
        let bad = |msg: String| SettingError { key: key.into(), msg };
        let s = self.find(key).ok_or_else(|| bad(format!("unknown setting; known {} settings: {}", self.layer, self.keys().join(", "))))?;
        let v = parse(s.kind, value).map_err(bad)?;
        (s.set)(cfg, v).map_err(bad)
    }

    /// Every entry's description, defaults read from `defaults`.
    pub fn info(&self, defaults: &C) -> Vec<Info> {
        self.entries
            .iter()
            .map(|s| Info {
                key: s.key.into(),
                aliases: s.aliases.to_vec(),
                kind: s.kind.type_name(),
                default: (s.get)(defaults),
                unit: s.unit,
                range: s.kind.range(),
                help: s.help,
                source: s.source,
            })
            .collect()
    }

    /// A plain-text listing (key, type, default, unit, range, help) for `--help`-style output.
    pub fn listing(&self, defaults: &C) -> String {
        let mut out = String::new();
        for i in self.info(defaults) {
            let _ = writeln!(out, "{:<36} {:<6} {:>10} {:<6} {:<16} {}", i.key, i.kind, i.default, i.unit, i.range, i.help);
        }
        out
    }
}

/// Parse and range-check a written value.
pub fn parse(kind: Kind, value: &str) -> Result<Value<'_>, String> {
    let v = value.trim();
    match kind {
        Kind::Int { min, max } => {
            let x: u64 = v.parse().map_err(|_| format!("expected a non-negative integer, got {value:?}"))?;
            if !(min..=max).contains(&x) {
                return Err(format!("must be within [{min}, {}], got {x}", bound(max)));
            }
            Ok(Value::Int(x))
        }
        Kind::Float { min, max } => {
            let x: f64 = v.parse().map_err(|_| format!("expected a number, got {value:?}"))?;
            if x.is_nan() || !(min..=max).contains(&x) {
                return Err(format!("must be within [{min}, {}], got {x}", fbound(max)));
            }
            Ok(Value::Float(x))
        }
        Kind::Size { min, max } => {
            let x = parse_size(v).ok_or_else(|| format!("expected a size like 512k, 8m or 1g (at most 1 PiB), got {value:?}"))?;
            if !(min..=max).contains(&x) {
                return Err(format!("must be within [{}, {}], got {value}", size_text(min), if max == u64::MAX { "∞".into() } else { size_text(max) }));
            }
            Ok(Value::Int(x))
        }
        Kind::Bool => match v {
            "true" | "1" | "yes" | "on" => Ok(Value::Bool(true)),
            "false" | "0" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("expected true or false, got {value:?}")),
        },
        Kind::Choice(_) | Kind::Component(_) | Kind::Text => Ok(Value::Text(v)),
    }
}

/// The largest size [`parse_size`] takes: 1 PiB, far beyond any phone's memory, so the model's
/// arithmetic on a size (rounding to pages, adding a few up) cannot overflow. A larger value used
/// to saturate at `u64::MAX` and wrap when rounded up to pages (a mapping of 0 pages).
pub const MAX_SIZE: u64 = 1 << 50;

/// A size: bytes, or with a k/m/g suffix (as dalvik.vm properties are written); a trailing `b`
/// is allowed (`512kb`). None if not a finite non-negative size up to [`MAX_SIZE`].
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').unwrap_or(&s);
    let (num, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    let bytes = v * mult as f64;
    // bytes is NaN only when v is; an infinite v makes it infinite, above the limit.
    if v.is_nan() || v < 0.0 || bytes > MAX_SIZE as f64 {
        return None;
    }
    Some(bytes as u64)
}

/// An unknown name among `names` (for Choice setters): "expected one of a, b, got "x"".
pub fn not_one_of(names: &[&str], value: &str) -> String {
    format!("expected one of {}, got {value:?}", names.join(", "))
}

/// One [`Setting`] for a plain field of the layer's state, in one line:
///
/// ```
/// # use mobmem_engine::{setting, settings::{Setting, Table}};
/// # #[derive(Default)] struct Cfg { swappiness: u64, ratio: f64, on: bool }
/// static S: &[Setting<Cfg>] = &[
///     setting!(int "swappiness" => swappiness, [0, 200], "", "anon vs file balance", "Linux"),
///     setting!(float "ratio" => ratio, [0.0, 1.0], "", "a share", "estimate"),
///     setting!(bool "on" => on, "", "a switch", "estimate"),
/// ];
/// # let t = Table { layer: "x", prefixes: &[], entries: S };
/// # let mut c = Cfg::default();
/// # t.set(&mut c, "swappiness", "100").unwrap();
/// # assert_eq!(c.swappiness, 100);
/// ```
///
/// The field path may be nested (`heap.min_free`); integers and numbers are converted to the
/// field's type with `as`. `size` takes a size in bytes (`512k`); `int ... => field * 256` and
/// `float ... => field * 1e6` store the written value times a scale (MiB as pages, ms as ns). A key can carry aliases (`"live_heap" | "footprint" => ...`). Entries
/// whose getter or setter does more than read or write the field are written out in full.
#[macro_export]
macro_rules! setting {
    (@entry $key:literal, [$($alias:literal),*], $kind:expr, $unit:expr, $help:expr, $source:expr, $get:expr, $set:expr) => {
        $crate::settings::Setting {
            key: $key,
            aliases: &[$($alias),*],
            kind: $kind,
            unit: $unit,
            help: $help,
            source: $source,
            get: $get,
            set: $set,
        }
    };
    (int $key:literal $(| $alias:literal)* => $($f:ident).+, [$min:expr, $max:expr], $unit:expr, $help:expr, $source:expr $(,)?) => {
        $crate::setting!(@entry $key, [$($alias),*], $crate::settings::Kind::Int { min: $min, max: $max }, $unit, $help, $source,
            |c| c.$($f).+.to_string(),
            |c, v| {
                c.$($f).+ = v.int() as _;
                Ok(())
            })
    };
    (int $key:literal $(| $alias:literal)* => $($f:ident).+ * $scale:literal, [$min:expr, $max:expr], $unit:expr, $help:expr, $source:expr $(,)?) => {
        $crate::setting!(@entry $key, [$($alias),*], $crate::settings::Kind::Int { min: $min, max: $max }, $unit, $help, $source,
            |c| (c.$($f).+ / $scale).to_string(),
            |c, v| {
                c.$($f).+ = v.int() * $scale;
                Ok(())
            })
    };
    (float $key:literal $(| $alias:literal)* => $($f:ident).+ * $scale:literal, [$min:expr, $max:expr], $unit:expr, $help:expr, $source:expr $(,)?) => {
        $crate::setting!(@entry $key, [$($alias),*], $crate::settings::Kind::Float { min: $min, max: $max }, $unit, $help, $source,
            |c| (c.$($f).+ as f64 / $scale).to_string(),
            |c, v| {
                c.$($f).+ = (v.float() * $scale) as _;
                Ok(())
            })
    };
    (size $key:literal $(| $alias:literal)* => $($f:ident).+, [$min:expr, $max:expr], $unit:expr, $help:expr, $source:expr $(,)?) => {
        $crate::setting!(@entry $key, [$($alias),*], $crate::settings::Kind::Size { min: $min, max: $max }, $unit, $help, $source,
            |c| $crate::settings::size_text(c.$($f).+ as u64),
            |c, v| {
                c.$($f).+ = v.int() as _;
                Ok(())
            })
    };
    (float $key:literal $(| $alias:literal)* => $($f:ident).+, [$min:expr, $max:expr], $unit:expr, $help:expr, $source:expr $(,)?) => {
        $crate::setting!(@entry $key, [$($alias),*], $crate::settings::Kind::Float { min: $min, max: $max }, $unit, $help, $source,
            |c| c.$($f).+.to_string(),
            |c, v| {
                c.$($f).+ = v.float() as _;
                Ok(())
            })
    };
    (bool $key:literal $(| $alias:literal)* => $($f:ident).+, $unit:expr, $help:expr, $source:expr $(,)?) => {
        $crate::setting!(@entry $key, [$($alias),*], $crate::settings::Kind::Bool, $unit, $help, $source,
            |c| c.$($f).+.to_string(),
            |c, v| {
                c.$($f).+ = v.bool();
                Ok(())
            })
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Cfg {
        n: u32,
        x: f64,
        on: bool,
        size: u64,
        mode: &'static str,
    }

    static ENTRIES: &[Setting<Cfg>] = &[
        Setting {
            key: "n",
            aliases: &["count"],
            kind: Kind::Int { min: 1, max: 200 },
            unit: "",
            help: "a count",
            source: "test",
            get: |c| c.n.to_string(),
            set: |c, v| {
                c.n = v.int() as u32;
                Ok(())
            },
        },
        Setting {
            key: "x",
            aliases: &[],
            kind: Kind::Float { min: 0.0, max: 1.0 },
            unit: "",
            help: "a share",
            source: "test",
            get: |c| c.x.to_string(),
            set: |c, v| {
                c.x = v.float();
                Ok(())
            },
        },
        Setting {
            key: "on",
            aliases: &[],
            kind: Kind::Bool,
            unit: "",
            help: "a switch",
            source: "test",
            get: |c| c.on.to_string(),
            set: |c, v| {
                c.on = v.bool();
                Ok(())
            },
        },
        Setting {
            key: "size",
            aliases: &[],
            kind: Kind::Size { min: 4096, max: u64::MAX },
            unit: "bytes",
            help: "a size",
            source: "test",
            get: |c| size_text(c.size),
            set: |c, v| {
                c.size = v.int();
                Ok(())
            },
        },
        Setting {
            key: "mode",
            aliases: &[],
            kind: Kind::Choice(&["a", "b"]),
            unit: "",
            help: "a mode",
            source: "test",
            get: |c| c.mode.into(),
            set: |c, v| {
                c.mode = match v.text() {
                    "a" => "a",
                    "b" => "b",
                    t => return Err(not_one_of(&["a", "b"], t)),
                };
                Ok(())
            },
        },
    ];
    static TABLE: Table<Cfg> = Table { layer: "test", prefixes: &["test."], entries: ENTRIES };

    #[test]
    fn values_are_parsed_checked_and_applied() {
        let mut c = Cfg::default();
        TABLE.set(&mut c, "test.n", "7").unwrap();
        TABLE.set(&mut c, "count", "8").unwrap();
        TABLE.set(&mut c, "x", "0.5").unwrap();
        TABLE.set(&mut c, "on", "yes").unwrap();
        TABLE.set(&mut c, "size", "8m").unwrap();
        TABLE.set(&mut c, "mode", "b").unwrap();
        assert_eq!((c.n, c.x, c.on, c.size, c.mode), (8, 0.5, true, 8 << 20, "b"));
        for (k, v, why) in [
            ("n", "0", "within [1, 200]"),
            ("n", "-1", "non-negative integer"),
            ("x", "2", "within [0, 1]"),
            ("x", "NaN", "within"),
            ("on", "maybe", "true or false"),
            ("size", "1k", "within [4k"),
            ("size", "lots", "a size like"),
            ("mode", "c", "expected one of a, b"),
            ("nope", "1", "unknown setting; known test settings: n, x, on, size, mode"),
        ] {
            let e = TABLE.set(&mut c, k, v).unwrap_err();
            assert!(e.msg.contains(why), "{k}={v}: {e}");
            assert_eq!(e.key, k);
        }
    }

    #[test]
    fn listings_show_defaults_ranges_and_units() {
        let info = TABLE.info(&Cfg { n: 3, size: 1 << 20, ..Cfg::default() });
        assert_eq!(info[0].default, "3");
        assert_eq!(info[0].range, "[1, 200]");
        assert_eq!(info[3].default, "1m");
        assert_eq!((info[3].unit, info[3].range.as_str()), ("bytes", "[4k, ∞]"));
        assert_eq!(info[4].range, "a, b");
        assert!(TABLE.listing(&Cfg::default()).lines().count() == ENTRIES.len());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8m"), Some(8 << 20));
        assert_eq!(parse_size("512k"), Some(512 << 10));
        assert_eq!(parse_size("512KB"), Some(512 << 10));
        assert_eq!(parse_size("1G"), Some(1 << 30));
        assert_eq!(parse_size("4096"), Some(4096));
        assert_eq!(parse_size("-1m"), None);
        assert_eq!(parse_size("x"), None);
        // Beyond 1 PiB (where a size once saturated and wrapped when rounded up to pages).
        assert_eq!(parse_size("1048576g"), Some(MAX_SIZE));
        assert_eq!(parse_size("1048577g"), None);
        assert_eq!(parse_size("99999999999999999999999"), None);
        assert_eq!(parse_size("1e300"), None);
        assert_eq!(size_text(256 << 10), "256k");
        assert_eq!(size_text(1000), "1000");
    }
}
