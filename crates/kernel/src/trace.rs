//! The "mobmem page trace v1" text format: parsing and validation.
//!
//! ```text
//! # comment lines and blank lines are ignored
//! ram <MiB>                                 # optional header lines, before any event
//! swap zram <MiB> [ratio=<float>] | swap file <MiB> | swap none
//! proc <pid> <name> [adj=<int>]             # create a process
//! map <pid> <vma> anon <pages>              # private anonymous mapping
//! map <pid> <vma> file <file-name> <pages> [exec]   # shared file mapping
//! touch <pid> <vma> <first-page> [<count>] [r|w]    # access pages [first, first+count)
//! madvise <pid> <vma> <first-page> <count> dontneed|cold|pageout|willneed|hint:<name>
//! adj <pid> <int>                           # change oom_score_adj
//! tick <microseconds>                       # let simulated time pass (kswapd, lmkd run)
//! exit <pid>
//! ```
//! The parser checks everything that can be checked without running the model (unknown keyword,
//! non-numbers, negative or zero sizes, a pid used before `proc`, an unknown or duplicate vma, a
//! touch beyond its mapping, a header after events, inconsistent file sizes) and reports
//! `FILE:LINE: problem`. Names are resolved to dense indices so replay does no lookups.

use crate::madvise::Advice;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq)]
pub struct TraceError {
    pub(crate) file: String,
    pub(crate) line: usize,
    pub(crate) msg: String,
}

impl std::fmt::Display for TraceError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.msg)
    }
}
impl std::error::Error for TraceError {}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SwapSpec {
    None,
    Zram { mib: u64, ratio: Option<f64> },
    File { mib: u64 },
}

/// An operation with its names resolved: `proc_` indexes `procs`, `vma` indexes `vmas`.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Proc { proc_: u32 },
    Map { vma: u32 },
    Touch { vma: u32, first: u32, count: u32, write: bool },
    Madvise { vma: u32, first: u32, count: u32, advice: Advice },
    Hint { vma: u32, first: u32, count: u32, hint: u32 },
    Adj { proc_: u32, adj: i32 },
    Tick { us: u64 },
    Exit { proc_: u32 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct TraceProc {
    pub pid: u32,
    pub name: String,
    pub adj: i32,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TraceVma {
    pub proc_: u32,
    pub name: String,
    pub pages: u32,
    /// Some(file name) for file mappings.
    pub file: Option<String>,
    pub exec: bool,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Trace {
    pub(crate) file: String,
    pub ram_mib: Option<u64>,
    pub swap: Option<SwapSpec>,
    pub procs: Vec<TraceProc>,
    pub vmas: Vec<TraceVma>,
    pub hints: Vec<String>,
    pub ops: Vec<Op>,
    /// Source line of each op (for run-time errors).
    pub(crate) lines: Vec<u32>,
    /// Total pages touched.
    pub touches: u64,
}

struct Parser<'a> {
    file: &'a str,
    line: usize,
}

impl Parser<'_> {
    fn err<T>(&self, msg: impl Into<String>) -> Result<T, TraceError> {
        Err(TraceError { file: self.file.into(), line: self.line, msg: msg.into() })
    }
    fn uint<T: std::str::FromStr>(&self, what: &str, s: Option<&str>) -> Result<T, TraceError> {
        let Some(s) = s else { return self.err(format!("missing {what}")) };
        if s.starts_with('-') {
            return self.err(format!("{what} must not be negative, got {s:?}"));
        }
        s.parse::<T>().or_else(|_| self.err(format!("{what} must be a non-negative integer, got {s:?}")))
    }
    fn positive<T: std::str::FromStr + PartialEq + Default>(&self, what: &str, s: Option<&str>) -> Result<T, TraceError> {
        let v: T = self.uint(what, s)?;
        if v == T::default() {
            return self.err(format!("{what} must be positive"));
        }
        Ok(v)
    }
    fn int(&self, what: &str, s: &str) -> Result<i32, TraceError> {
        s.parse::<i32>().or_else(|_| self.err(format!("{what} must be an integer, got {s:?}")))
    }
}

/// Parse a trace from text. `file` names the source in error messages.
pub fn parse(file: &str, text: &str) -> Result<Trace, TraceError> {
    let mut t = Trace { file: file.into(), ..Default::default() };
    let mut pids: HashMap<u32, u32> = HashMap::new();
    // per process: the line of its `proc`, and of its `exit` (0: alive)
    let mut created: Vec<u32> = Vec::new();
    let mut exited: Vec<u32> = Vec::new();
    let mut vma_names: HashMap<(u32, String), u32> = HashMap::new();
    let mut vma_lines: Vec<u32> = Vec::new();
    let mut file_sizes: HashMap<String, u32> = HashMap::new();
    let mut hint_ids: HashMap<String, u32> = HashMap::new();
    let mut p = Parser { file, line: 0 };
    let mut seen_event = false;
    // Ticks add up on a nanosecond clock: the total must fit in it (584 years).
    let mut total_us: u64 = 0;
    for (ln, raw) in text.lines().enumerate() {
        p.line = ln + 1;
        let line = raw.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut w = line.split_ascii_whitespace();
        let kw = w.next().unwrap_or("");
        let lookup_proc = |p: &Parser, s: Option<&str>| -> Result<u32, TraceError> {
            let pid: u32 = p.uint("pid", s)?;
            match pids.get(&pid) {
                Some(&i) if exited[i as usize] == 0 => Ok(i),
                Some(&i) => p.err(format!("pid {pid} used after its exit (line {})", exited[i as usize])),
                None => p.err(format!("pid {pid} used before its `proc` line")),
            }
        };
        let op = match kw {
            "ram" | "swap" => {
                if seen_event {
                    return p.err(format!("header line `{kw}` after the first event; headers must come first"));
                }
                if kw == "ram" {
                    if t.ram_mib.is_some() {
                        return p.err("duplicate `ram` header");
                    }
                    t.ram_mib = Some(p.positive("ram size (MiB)", w.next())?);
                } else {
                    if t.swap.is_some() {
                        return p.err("duplicate `swap` header");
                    }
                    t.swap = Some(match w.next() {
                        Some("none") => SwapSpec::None,
                        Some("zram") => {
                            let mib = p.positive("swap size (MiB)", w.next())?;
                            let mut ratio = None;
                            if let Some(opt) = w.next() {
                                let Some(v) = opt.strip_prefix("ratio=") else { return p.err(format!("unknown swap option {opt:?}; expected ratio=<float>")) };
                                let r: f64 = v.parse().or_else(|_| p.err(format!("ratio must be a number, got {v:?}")))?;
                                if !(1.0..=64.0).contains(&r) {
                                    return p.err(format!("ratio must be within [1, 64], got {r}"));
                                }
                                ratio = Some(r);
                            }
                            SwapSpec::Zram { mib, ratio }
                        }
                        Some("file") => SwapSpec::File { mib: p.positive("swap size (MiB)", w.next())? },
                        other => return p.err(format!("expected `swap zram|file|none`, got {:?}", other.unwrap_or(""))),
                    });
                }
                if let Some(x) = w.next() {
                    return p.err(format!("unexpected {x:?} at end of line"));
                }
                continue;
            }
            "proc" => {
                let pid: u32 = p.positive("pid", w.next())?;
                if let Some(&i) = pids.get(&pid) {
                    return p.err(format!("pid {pid} already created (line {})", created[i as usize]));
                }
                let Some(name) = w.next() else { return p.err("missing process name") };
                let mut adj = 0;
                if let Some(opt) = w.next() {
                    let Some(v) = opt.strip_prefix("adj=") else { return p.err(format!("unknown proc option {opt:?}; expected adj=<int>")) };
                    adj = p.int("adj", v)?;
                    if !(-1000..=1000).contains(&adj) {
                        return p.err(format!("adj must be within [-1000, 1000], got {adj}"));
                    }
                }
                let i = t.procs.len() as u32;
                pids.insert(pid, i);
                created.push(p.line as u32);
                exited.push(0);
                t.procs.push(TraceProc { pid, name: name.into(), adj });
                Op::Proc { proc_: i }
            }
            "map" => {
                let pr = lookup_proc(&p, w.next())?;
                let Some(vname) = w.next() else { return p.err("missing vma name") };
                if let Some(&v) = vma_names.get(&(pr, vname.to_string())) {
                    return p.err(format!("vma {vname:?} already mapped by pid {} (line {})", t.procs[pr as usize].pid, vma_lines[v as usize]));
                }
                let (file_name, pages, exec) = match w.next() {
                    Some("anon") => (None, p.positive::<u32>("pages", w.next())?, false),
                    Some("file") => {
                        let Some(f) = w.next() else { return p.err("missing file name") };
                        let pages: u32 = p.positive("pages", w.next())?;
                        let exec = match w.next() {
                            None => false,
                            Some("exec") => true,
                            Some(x) => return p.err(format!("unexpected {x:?}; expected `exec` or end of line")),
                        };
                        if let Some(&old) = file_sizes.get(f) {
                            if old != pages {
                                return p.err(format!("file {f:?} was mapped with {old} pages, now {pages}"));
                            }
                        }
                        file_sizes.insert(f.into(), pages);
                        (Some(f.to_string()), pages, exec)
                    }
                    other => return p.err(format!("expected `anon` or `file`, got {:?}", other.unwrap_or(""))),
                };
                if pages as u64 > crate::kernel::MAX_MODEL_PAGES {
                    return p.err(format!("{pages} pages: at most {} (64 GiB) per mapping", crate::kernel::MAX_MODEL_PAGES));
                }
                let v = t.vmas.len() as u32;
                vma_names.insert((pr, vname.into()), v);
                vma_lines.push(p.line as u32);
                t.vmas.push(TraceVma { proc_: pr, name: vname.into(), pages, file: file_name, exec });
                Op::Map { vma: v }
            }
            "touch" | "madvise" => {
                let pr = lookup_proc(&p, w.next())?;
                let Some(vname) = w.next() else { return p.err("missing vma name") };
                let Some(&v) = vma_names.get(&(pr, vname.to_string())) else {
                    return p.err(format!("pid {} has no mapping named {vname:?} (no `map` line before)", t.procs[pr as usize].pid));
                };
                let first: u32 = p.uint("first page", w.next())?;
                let pages = t.vmas[v as usize].pages;
                if kw == "touch" {
                    let mut count = 1u32;
                    let mut write = false;
                    for tok in w.by_ref() {
                        match tok {
                            "r" => write = false,
                            "w" => write = true,
                            n if n.starts_with(|c: char| c.is_ascii_digit() || c == '-') => count = p.positive("count", Some(n))?,
                            x => return p.err(format!("unexpected {x:?}; expected a page count, r or w")),
                        }
                    }
                    if first as u64 + count as u64 > pages as u64 {
                        return p.err(format!("touch of pages [{first}, {}) beyond mapping {vname:?} of {pages} pages", first as u64 + count as u64));
                    }
                    t.touches += count as u64;
                    Op::Touch { vma: v, first, count, write }
                } else {
                    let count: u32 = p.positive("count", w.next())?;
                    if first as u64 + count as u64 > pages as u64 {
                        return p.err(format!("madvise of pages [{first}, {}) beyond mapping {vname:?} of {pages} pages", first as u64 + count as u64));
                    }
                    let Some(a) = w.next() else { return p.err("missing advice") };
                    if let Some(h) = a.strip_prefix("hint:") {
                        let n = hint_ids.len() as u32;
                        if n == MAX_HINTS && !hint_ids.contains_key(h) {
                            return p.err(format!("more than {MAX_HINTS} distinct hint names"));
                        }
                        let id = *hint_ids.entry(h.to_string()).or_insert_with(|| {
                            t.hints.push(h.to_string());
                            n
                        });
                        Op::Hint { vma: v, first, count, hint: id }
                    } else {
                        let Some(advice) = Advice::parse(a) else {
                            return p.err(format!("unknown advice {a:?}; expected dontneed, cold, pageout, willneed or hint:<name>"));
                        };
                        Op::Madvise { vma: v, first, count, advice }
                    }
                }
            }
            "adj" => {
                let pr = lookup_proc(&p, w.next())?;
                let Some(v) = w.next() else { return p.err("missing adj value") };
                let adj = p.int("adj", v)?;
                if !(-1000..=1000).contains(&adj) {
                    return p.err(format!("adj must be within [-1000, 1000], got {adj}"));
                }
                Op::Adj { proc_: pr, adj }
            }
            "tick" => {
                let us: u64 = p.uint("microseconds", w.next())?;
                total_us = match total_us.checked_add(us) {
                    Some(t) if t <= u64::MAX / 1000 => t,
                    _ => return p.err("tick: the trace's total time would pass the 584 years a nanosecond clock holds"),
                };
                Op::Tick { us }
            }
            "exit" => {
                let pr = lookup_proc(&p, w.next())?;
                exited[pr as usize] = p.line as u32;
                Op::Exit { proc_: pr }
            }
            other => return p.err(format!("unknown keyword {other:?}")),
        };
        if let Some(x) = w.next() {
            return p.err(format!("unexpected {x:?} at end of line"));
        }
        seen_event = true;
        t.ops.push(op);
        t.lines.push(p.line as u32);
    }
    Ok(t)
}

/// Distinct `hint:<name>` names a trace may use (a hint's code fits the columns' one-byte flag).
pub const MAX_HINTS: u32 = 256;

/// Op kinds, in the order of the codes of [`Columns::op`].
pub const OP_NAMES: &[&str] = &["proc", "map", "touch", "madvise", "adj", "tick", "exit", "hint"];

/// The ops as columns, one row per op — the layout the Python tools (the real-kernel replayer,
/// the validation) read as numpy arrays, so a trace is parsed once, here.
///
/// `op` is the index in [`OP_NAMES`]; `flag`: touch 1 = write; madvise the [`Advice::code`];
/// map bit 0 = file, bit 1 = exec; hint the index in [`Trace::hints`]. `proc_` indexes
/// [`Trace::procs`] (-1 for tick); `vma` indexes [`Trace::vmas`] (-1 where none); `a`: first
/// page (touch, madvise, hint), adj (proc, adj), microseconds (tick), pages (map); `b`: page
/// count (touch, madvise, hint), else 0; `line`: the 1-based source line.
#[derive(Debug, Default, PartialEq)]
pub struct Columns {
    pub op: Vec<u8>,
    pub flag: Vec<u8>,
    pub proc_: Vec<i32>,
    pub vma: Vec<i32>,
    pub a: Vec<i64>,
    pub b: Vec<i64>,
    pub line: Vec<i64>,
}

impl Trace {
    pub fn columns(&self) -> Columns {
        let n = self.ops.len();
        let mut c = Columns {
            op: Vec::with_capacity(n),
            flag: Vec::with_capacity(n),
            proc_: Vec::with_capacity(n),
            vma: Vec::with_capacity(n),
            a: Vec::with_capacity(n),
            b: Vec::with_capacity(n),
            line: Vec::with_capacity(n),
        };
        let proc_of = |v: u32| self.vmas[v as usize].proc_ as i32;
        for (op, &line) in self.ops.iter().zip(&self.lines) {
            let (code, flag, pr, vma, a, b) = match *op {
                Op::Proc { proc_ } => (0, 0, proc_ as i32, -1, self.procs[proc_ as usize].adj as i64, 0),
                Op::Map { vma } => {
                    let v = &self.vmas[vma as usize];
                    (1, v.file.is_some() as u8 | (v.exec as u8) << 1, proc_of(vma), vma as i32, v.pages as i64, 0)
                }
                Op::Touch { vma, first, count, write } => (2, write as u8, proc_of(vma), vma as i32, first as i64, count as i64),
                Op::Madvise { vma, first, count, advice } => (3, advice.code(), proc_of(vma), vma as i32, first as i64, count as i64),
                Op::Adj { proc_, adj } => (4, 0, proc_ as i32, -1, adj as i64, 0),
                Op::Tick { us } => (5, 0, -1, -1, us as i64, 0),
                Op::Exit { proc_ } => (6, 0, proc_ as i32, -1, 0, 0),
                Op::Hint { vma, first, count, hint } => (7, hint as u8, proc_of(vma), vma as i32, first as i64, count as i64),
            };
            c.op.push(code);
            c.flag.push(flag);
            c.proc_.push(pr);
            c.vma.push(vma);
            c.a.push(a);
            c.b.push(b);
            c.line.push(line as i64);
        }
        c
    }
}

/// Parse a trace file.
pub fn parse_file(path: &str) -> Result<Trace, TraceError> {
    let text = mobmem_engine::text::read_utf8(path).map_err(|e| TraceError { file: path.into(), line: e.line, msg: e.msg })?;
    parse(path, &text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn err(text: &str) -> String {
        parse("t.trace", text).unwrap_err().to_string()
    }

    /// Lines made of the trace's own words, numbers at the edges of their types and junk.
    fn line() -> impl Strategy<Value = String> {
        let word = prop::sample::select(vec![
            "ram",
            "swap",
            "zram",
            "file",
            "none",
            "proc",
            "map",
            "anon",
            "exec",
            "touch",
            "w",
            "madvise",
            "pageout",
            "cold",
            "willneed",
            "dontneed",
            "hint:hot",
            "adj",
            "tick",
            "exit",
            "fork",
            "#",
            "1",
            "0",
            "-1",
            "64",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "1e300",
            "nan",
            "ratio=3",
            "ratio=-1",
            "ratio=nan",
            "adj=900",
            "adj=x",
            "heap",
            "a.so",
            "\u{e9}",
            "",
        ]);
        prop::collection::vec(word, 0..7).prop_map(|w| w.join(" "))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]
        /// Any text parses or fails with an error naming a line of the text, never a panic.
        #[test]
        fn any_text_parses_or_names_its_line(lines in prop::collection::vec(line(), 0..12)) {
            let text = lines.join("\n");
            if let Err(e) = parse("t.trace", &text) {
                prop_assert!(e.line >= 1 && e.line <= lines.len().max(1), "{e}");
                prop_assert!(!e.msg.is_empty() && !e.msg.contains('\n'), "{e}");
            }
        }
    }

    #[test]
    fn mappings_the_host_cannot_hold_are_refused_at_their_line() {
        let e = err("proc 1 a\nmap 1 h anon 4294967295\n");
        assert!(e.starts_with("t.trace:2:") && e.contains("64 GiB"), "{e}");
    }

    #[test]
    fn ticks_that_would_wrap_the_clock_are_refused() {
        let e = err("proc 1 a\ntick 18446744073709551615\n");
        assert!(e.starts_with("t.trace:2:") && e.contains("584 years"), "{e}");
        let e = err("proc 1 a\ntick 18446744073709551\ntick 18446744073709551\n");
        assert!(e.starts_with("t.trace:3:"), "{e}");
        assert!(parse("t.trace", "proc 1 a\ntick 18446744073709551\n").is_ok());
    }

    #[test]
    fn a_file_that_is_not_utf8_names_the_line() {
        let p = std::env::temp_dir().join(format!("mobmem-trace-{}.trace", std::process::id()));
        std::fs::write(&p, b"ram 64\nproc 1 a\xff\n").unwrap();
        let e = parse_file(p.to_str().unwrap()).unwrap_err();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.msg.contains("not UTF-8"), "{e}");
    }

    #[test]
    fn parses_all_keywords() {
        let t = parse(
            "x",
            "# c\nram 64\nswap zram 32 ratio=3\nproc 1 app adj=900\nmap 1 heap anon 10\nmap 1 code file a.so 4 exec\n\ntouch 1 heap 0 10 w\ntouch 1 code 3\nmadvise 1 heap 0 2 pageout\nmadvise 1 heap 0 2 hint:hot\nadj 1 0\ntick 100\nexit 1\n",
        )
        .unwrap();
        assert_eq!(t.ram_mib, Some(64));
        assert_eq!(t.swap, Some(SwapSpec::Zram { mib: 32, ratio: Some(3.0) }));
        assert_eq!(t.ops.len(), 10);
        assert_eq!(t.touches, 11);
        assert_eq!(t.hints, vec!["hot".to_string()]);
        assert_eq!(t.lines[0], 4);
    }

    #[test]
    fn errors_name_file_line_and_problem() {
        assert_eq!(err("proc 1 a\nfrob 1\n"), "t.trace:2: unknown keyword \"frob\"");
        assert!(err("touch 1 heap 0\n").starts_with("t.trace:1: pid 1 used before its `proc` line"));
        assert!(err("proc 1 a\nmap 1 h anon 4\ntouch 1 h 2 3\n").starts_with("t.trace:3: touch of pages [2, 5) beyond mapping"));
        assert!(err("ram -5\n").contains("must not be negative"));
        assert!(err("ram lots\n").contains("must be a non-negative integer"));
        assert!(err("proc 1 a\nram 5\n").contains("after the first event"));
        assert!(err("proc 1 a\nmap 1 h anon 0\n").contains("pages must be positive"));
        assert!(err("proc 1 a\nexit 1\ntouch 1 h 0\n").contains("used after its exit (line 2)"));
        assert!(err("proc 1 a\nexit 1\nproc 1 b\n").contains("already created (line 1)"));
        assert!(err("proc 1 a\nmap 1 h anon 4\nmap 1 h anon 4\n").contains("already mapped by pid 1 (line 2)"));
        assert!(err("proc 1 a\nmap 1 h anon 4\ntouch 1 h 0 2 x\n").contains("unexpected \"x\"; expected a page count"));
        assert!(err("proc 1 a\nmap 1 h anon 4\nmadvise 1 h 0 1 sometimes\n").contains("unknown advice"));
        assert!(err("proc 1 a\nmap 1 f file x 4\nproc 2 b\nmap 2 f file x 5\n").contains("was mapped with 4 pages"));
        assert!(err("proc 0 a\n").contains("pid must be positive"));
    }

    #[test]
    fn columns_hold_every_op_with_its_codes() {
        let t = parse("x", "proc 3 a adj=5\nmap 3 h anon 8\nmap 3 c file lib 4 exec\ntouch 3 h 2 3 w\nmadvise 3 h 0 8 pageout\nmadvise 3 c 1 2 hint:hot\nadj 3 -7\ntick 9\nexit 3\n").unwrap();
        let c = t.columns();
        let names: Vec<&str> = c.op.iter().map(|&o| OP_NAMES[o as usize]).collect();
        assert_eq!(names, ["proc", "map", "map", "touch", "madvise", "hint", "adj", "tick", "exit"]);
        assert_eq!(c.flag, [0, 0, 3, 1, Advice::PageOut.code(), 0, 0, 0, 0]);
        assert_eq!(c.proc_, [0, 0, 0, 0, 0, 0, 0, -1, 0]);
        assert_eq!(c.vma, [-1, 0, 1, 0, 0, 1, -1, -1, -1]);
        assert_eq!(c.a, [5, 8, 4, 2, 0, 1, -7, 9, 0]);
        assert_eq!(c.b, [0, 0, 0, 3, 8, 2, 0, 0, 0]);
        assert_eq!(c.line, (1..=9).collect::<Vec<i64>>());
        for (i, n) in Advice::NAMES.iter().enumerate() {
            assert_eq!(Advice::parse(n).unwrap().code() as usize, i);
        }
    }
}
