//! The component contract: every mechanism a system name can switch — a collector, a runtime
//! policy, a kernel eviction or kswapd-sizing policy, a killer, a cpufreq governor, a session
//! service — is one [`Component`] in its kind's [`Registry`]: its name, its help, and the
//! kind's constructor that installs it. Adding one is a module plus one registry entry.
//!
//! A registry answers the two questions the rest of the code asks of a name: which names exist
//! (settings tables list them through [`Names`], so a `choice` setting and its registry cannot
//! disagree) and what a name is (one message for an unknown name, with the names known).
//!
//! Left out: the hook a component attaches to is the constructor's type, not a field, because
//! each layer's hooks differ (a governor returns a per-cluster object, a runtime policy writes
//! into the runtime's hooks).

/// One component: `build` is its kind's constructor (a function pointer, so registries are
/// plain `static` tables).
#[derive(Debug)]
pub struct Component<B: 'static> {
    pub name: &'static str,
    /// What it does, with its source (shown by `--help` and the listings).
    pub help: &'static str,
    pub build: B,
}

/// The components of one kind.
#[derive(Debug)]
pub struct Registry<B: 'static> {
    /// What a component of this kind is called in messages ("eviction policy").
    pub kind: &'static str,
    pub entries: &'static [Component<B>],
}

impl<B> Registry<B> {
    /// The component called `name`, or a message naming the kind and the known names.
    pub fn get(&self, name: &str) -> Result<&'static Component<B>, String> {
        self.entries.iter().find(|c| c.name == name).ok_or_else(|| format!("unknown {} {name:?}; known: {}", self.kind, self.list().join(", ")))
    }

    pub fn contains(&self, name: &str) -> bool {
        self.entries.iter().any(|c| c.name == name)
    }

    /// The names, in registry order.
    pub fn list(&self) -> Vec<&'static str> {
        self.entries.iter().map(|c| c.name).collect()
    }
}

/// A set of names a `choice` setting accepts (a registry, or a fixed list).
pub trait Names: Sync {
    fn names(&self) -> Vec<&'static str>;
}

impl std::fmt::Debug for dyn Names {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.names())
    }
}

impl PartialEq for dyn Names {
    fn eq(&self, other: &Self) -> bool {
        self.names() == other.names()
    }
}

impl<B: Sync> Names for Registry<B> {
    fn names(&self) -> Vec<&'static str> {
        self.list()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Build = fn(u32) -> u32;
    static TOY: Registry<Build> = Registry {
        kind: "toy policy",
        entries: &[Component { name: "double", help: "twice", build: |x| 2 * x }, Component { name: "same", help: "as is", build: |x| x }],
    };

    #[test]
    fn a_name_finds_its_constructor_and_an_unknown_one_lists_the_known() {
        assert_eq!((TOY.get("double").unwrap().build)(4), 8);
        assert_eq!(TOY.get("turbo").unwrap_err(), "unknown toy policy \"turbo\"; known: double, same");
        assert_eq!(Names::names(&TOY), vec!["double", "same"]);
        assert!(TOY.contains("same") && !TOY.contains("Same"));
    }
}
