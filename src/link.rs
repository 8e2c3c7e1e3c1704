//! Links (docs/LESSONS.md, "Links"): a run, a lesson's step or an exercise, written as the part of
//! an address after `#`, so the web page opens at it and `stagewise open 'LINK'` does natively.
//!
//! ```text
//! #bitrev/staged?fill=example&stage=2&lens=1     a run (RunSpec) and what is on screen (SessionView)
//! #bmmc/naive?n=16&fill=iota&preset=gray         options by their run-spec names
//! #lesson=bitrev&step=4                          a lesson at its 4th step (1-based)
//! #exercise=bitrev-naive                         an exercise of the workbench
//! ```
//!
//! A run's query keys: `n`, `fill`, `seed` (the generated input), `text` (numbers written out),
//! `dtype`, the view's `stage`, `tab` and `lens`, and any option of the algorithm by its name in a
//! run spec (the CLI's flag without `--`, `_` for `-`). Values are percent-encoded.

use crate::error::{Error, Result};
use crate::request::{InputSpec, RunSpec};
use crate::view::{SessionView, Tab};
use serde_json::{Map, Value};

/// Where a link opens the app.
#[derive(Clone, Debug)]
pub enum Link {
    Run {
        spec: Box<RunSpec>,
        view: SessionView,
    },
    /// `step` counts from 1, as the panel shows it.
    Lesson {
        id: String,
        step: usize,
    },
    Exercise {
        name: String,
    },
}

impl PartialEq for Link {
    /// Runs compare by their spec's JSON (a `RunSpec` has no `PartialEq` of its own).
    fn eq(&self, o: &Link) -> bool {
        match (self, o) {
            (Link::Run { spec: a, view: v }, Link::Run { spec: b, view: w }) => {
                v == w && serde_json::to_value(a).ok() == serde_json::to_value(b).ok()
            }
            (Link::Lesson { id: a, step: s }, Link::Lesson { id: b, step: t }) => a == b && s == t,
            (Link::Exercise { name: a }, Link::Exercise { name: b }) => a == b,
            _ => false,
        }
    }
}

fn bad(link: &str, why: impl std::fmt::Display) -> Error {
    Error::Input(format!("link '{link}': {why}"))
}

/// `%XX` and `+` decoded.
fn decode(s: &str) -> std::result::Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'%' => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("bad escape at '{}'", &s[i..]))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "not UTF-8 after decoding".to_string())
}

/// Everything but letters, digits and `-_.~,:` percent-encoded.
fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~,:".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query value as JSON: a whole number, a boolean, else a string.
fn value_of(v: &str) -> Value {
    if let Ok(n) = v.parse::<u64>() {
        return Value::from(n);
    }
    match v {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(v.to_string()),
    }
}

impl Link {
    /// Parse a link: a whole address (the part after `#` is read) or that part, `#` optional.
    pub fn parse(text: &str) -> Result<Link> {
        let frag = text.split_once('#').map_or(text, |(_, f)| f).trim();
        if frag.is_empty() {
            return Err(bad(
                text,
                "empty: expected e.g. #bitrev/staged?stage=2 or #lesson=bitrev&step=1",
            ));
        }
        let (path, query) = frag.split_once('?').unwrap_or((frag, ""));
        let mut pairs = Vec::new();
        // A lesson or exercise link is all query: `lesson=…&step=…`.
        let query_only = path.contains('=');
        let q = if query_only { frag } else { query };
        for kv in q.split('&').filter(|s| !s.is_empty()) {
            let (k, v) = kv.split_once('=').unwrap_or((kv, ""));
            let k = decode(k).map_err(|e| bad(text, e))?;
            let v = decode(v).map_err(|e| bad(text, e))?;
            if pairs.iter().any(|(x, _): &(String, String)| *x == k) {
                return Err(bad(text, format!("'{k}' is given twice")));
            }
            pairs.push((k, v));
        }
        let take = |pairs: &mut Vec<(String, String)>, key: &str| {
            pairs
                .iter()
                .position(|(k, _)| k == key)
                .map(|i| pairs.remove(i).1)
        };
        if query_only {
            if let Some(id) = take(&mut pairs, "lesson") {
                let step = match take(&mut pairs, "step") {
                    None => 1,
                    Some(s) => s
                        .parse::<usize>()
                        .ok()
                        .filter(|&s| s >= 1)
                        .ok_or_else(|| bad(text, format!("step '{s}' must be 1 or more")))?,
                };
                if let Some((k, _)) = pairs.first() {
                    return Err(bad(text, format!("a lesson link has no '{k}'")));
                }
                return Ok(Link::Lesson { id, step });
            }
            if let Some(name) = take(&mut pairs, "exercise") {
                if let Some((k, _)) = pairs.first() {
                    return Err(bad(text, format!("an exercise link has no '{k}'")));
                }
                return Ok(Link::Exercise { name });
            }
            return Err(bad(
                text,
                "expected ALGORITHM[/VARIANT]?…, lesson=ID or exercise=NAME",
            ));
        }
        let mut parts = path.split('/');
        let algorithm = decode(parts.next().unwrap_or("")).map_err(|e| bad(text, e))?;
        let variant = parts
            .next()
            .map(decode)
            .transpose()
            .map_err(|e| bad(text, e))?;
        if parts.next().is_some() {
            return Err(bad(
                text,
                "a run link's path is ALGORITHM or ALGORITHM/VARIANT",
            ));
        }
        let mut view = SessionView::default();
        if let Some(s) = take(&mut pairs, "stage") {
            view.stage = Some(
                s.parse()
                    .map_err(|_| bad(text, format!("stage '{s}' is not a whole number")))?,
            );
        }
        if let Some(t) = take(&mut pairs, "tab") {
            view.tab = match t.as_str() {
                "stages" => Tab::Stages,
                "performance" => Tab::Performance,
                _ => return Err(bad(text, format!("tab '{t}': stages or performance"))),
            };
        }
        if let Some(l) = take(&mut pairs, "lens") {
            view.lens = match l.as_str() {
                "1" | "true" | "on" => true,
                "0" | "false" | "off" => false,
                _ => return Err(bad(text, format!("lens '{l}': 1 or 0"))),
            };
        }
        let mut input = Map::new();
        if let Some(t) = take(&mut pairs, "text") {
            input.insert("from".into(), "text".into());
            input.insert("text".into(), t.into());
        } else {
            input.insert("from".into(), "generate".into());
            for k in ["n", "fill", "seed"] {
                if let Some(v) = take(&mut pairs, k) {
                    input.insert(k.into(), value_of(&v));
                }
            }
        }
        for k in ["n", "fill", "seed"] {
            if take(&mut pairs, k).is_some() {
                return Err(bad(text, format!("'{k}' does not go with 'text'")));
            }
        }
        let mut obj = Map::new();
        obj.insert("algorithm".into(), algorithm.clone().into());
        if let Some(v) = variant.filter(|v| !v.is_empty()) {
            obj.insert("variant".into(), v.into());
        }
        if let Some(d) = take(&mut pairs, "dtype") {
            obj.insert("dtype".into(), d.into());
        }
        obj.insert("input".into(), Value::Object(input));
        for (k, v) in &pairs {
            if ["algorithm", "variant", "input", "mode"].contains(&k.as_str()) {
                return Err(bad(text, format!("'{k}' is not a query key")));
            }
            obj.insert(k.clone(), value_of(v));
        }
        let spec: RunSpec =
            serde_json::from_value(Value::Object(obj.clone())).map_err(|e| bad(text, e))?;
        // Options serde does not know are dropped silently: say so instead.
        if let Ok(Value::Object(back)) = serde_json::to_value(&spec) {
            for (k, _) in &pairs {
                if !back.contains_key(k) {
                    return Err(bad(text, format!("{algorithm} has no option '{k}'")));
                }
            }
        }
        spec.resolve().map_err(|e| bad(text, e))?;
        Ok(Link::Run {
            spec: Box::new(spec),
            view,
        })
    }

    /// The link, from `#` on.
    pub fn to_text(&self) -> Result<String> {
        Ok(match self {
            Link::Lesson { id, step } => format!("#lesson={}&step={step}", encode(id)),
            Link::Exercise { name } => format!("#exercise={}", encode(name)),
            Link::Run { spec, view } => {
                let Value::Object(mut m) = serde_json::to_value(spec)
                    .map_err(|e| Error::Input(format!("cannot link this run: {e}")))?
                else {
                    return Err(Error::input("cannot link this run"));
                };
                let algo = m
                    .remove("algorithm")
                    .and_then(|v| v.as_str().map(String::from));
                let mut s = format!("#{}", encode(&algo.unwrap_or_default()));
                if let Some(Value::String(v)) = m.remove("variant") {
                    s.push('/');
                    s.push_str(&encode(&v));
                }
                m.remove("mode");
                let mut q: Vec<(String, String)> = Vec::new();
                match &spec.input {
                    InputSpec::Generate { n, fill, seed } => {
                        if let Some(n) = n {
                            q.push(("n".into(), n.to_string()));
                        }
                        if let Some(f) = fill {
                            q.push((
                                "fill".into(),
                                serde_json::to_value(f)
                                    .ok()
                                    .and_then(|v| v.as_str().map(String::from))
                                    .unwrap_or_default(),
                            ));
                        }
                        if *seed != 1 {
                            q.push(("seed".into(), seed.to_string()));
                        }
                    }
                    InputSpec::Text { text } => q.push(("text".into(), text.clone())),
                    InputSpec::File { path } => {
                        return Err(Error::Input(format!(
                            "a run on the file '{path}' cannot be linked: open it as text"
                        )));
                    }
                }
                m.remove("input");
                // Options at their defaults, and the default u32, are left out.
                let defaults = crate::algo::AlgoOptions::default_for(spec.algo.id())
                    .and_then(|d| serde_json::to_value(d).ok())
                    .unwrap_or(Value::Null);
                if m.get("dtype").and_then(Value::as_str) == Some("u32") {
                    m.remove("dtype");
                }
                for (k, v) in m {
                    if defaults.get(&k) == Some(&v) {
                        continue;
                    }
                    let v = match v {
                        Value::Null => continue,
                        Value::String(s) => s,
                        Value::Bool(b) => b.to_string(),
                        Value::Number(n) => n.to_string(),
                        _ => {
                            return Err(Error::Input(format!(
                                "the option '{k}' cannot be written in a link"
                            )));
                        }
                    };
                    q.push((k, v));
                }
                if let Some(st) = view.stage {
                    q.push(("stage".into(), st.to_string()));
                }
                if view.tab == Tab::Performance {
                    q.push(("tab".into(), "performance".into()));
                }
                if view.lens {
                    q.push(("lens".into(), "1".into()));
                }
                if !q.is_empty() {
                    s.push('?');
                    let parts: Vec<String> = q
                        .iter()
                        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
                        .collect();
                    s.push_str(&parts.join("&"));
                }
                s
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(link: &str) -> (RunSpec, SessionView) {
        match Link::parse(link).unwrap() {
            Link::Run { spec, view } => (*spec, view),
            l => panic!("{l:?}"),
        }
    }

    #[test]
    fn a_run_link_reads_its_spec_and_view() {
        let (spec, view) =
            run("https://x.org/stagewise/#bitrev/staged?n=16&fill=example&stage=2&lens=1");
        assert_eq!(spec.algo.name(), "bitrev");
        assert_eq!(spec.variant.as_deref(), Some("staged"));
        assert_eq!(
            spec.input,
            InputSpec::Generate {
                n: Some(16),
                fill: Some(crate::data::Fill::Example),
                seed: 1
            }
        );
        assert_eq!(
            view,
            SessionView {
                stage: Some(2),
                tab: Tab::Stages,
                lens: true
            }
        );
        // Options by their names, a text input, the performance tab.
        let (spec, view) =
            run("#bmmc/naive?n=16&fill=iota&preset=gray&complement=5&tab=performance");
        let j = serde_json::to_value(&spec).unwrap();
        assert_eq!(
            (j["preset"].as_str(), j["complement"].as_u64()),
            (Some("gray"), Some(5))
        );
        assert_eq!(view.tab, Tab::Performance);
        let (spec, _) = run("#oddeven?text=3%207%201");
        assert_eq!(
            spec.input,
            InputSpec::Text {
                text: "3 7 1".into()
            }
        );
        assert_eq!(spec.resolve().unwrap().input.bits, [3, 7, 1]);
    }

    #[test]
    fn links_print_and_parse_back() {
        for l in [
            "#bitrev/staged?fill=example&stage=2&lens=1",
            "#bmmc/naive?n=16&fill=iota&complement=5&preset=gray",
            "#oddeven/transposition?text=3%207%201&stage=3",
            "#scan/decoupled?n=1024&fill=iota&seed=7&per_thread=1&workgroup_size=32&tab=performance",
            "#lesson=bitrev&step=4",
            "#exercise=bitrev-naive",
        ] {
            let link = Link::parse(l).unwrap();
            let text = link.to_text().unwrap();
            assert_eq!(Link::parse(&text).unwrap(), link, "{l} -> {text}");
        }
        // Defaults are left out: the printed link is the short one.
        let l = "#bmmc/naive?n=16&fill=iota&preset=gray&stage=1&lens=1";
        assert_eq!(Link::parse(l).unwrap().to_text().unwrap(), l);
        assert_eq!(
            Link::parse("#lesson=fft").unwrap(),
            Link::Lesson {
                id: "fft".into(),
                step: 1
            }
        );
    }

    #[test]
    fn bad_links_say_why() {
        for (l, why) in [
            ("", "empty"),
            ("#nope", "nope"),
            ("#bitrev/sideways", "unknown variant"),
            ("#bitrev?n=12&fill=iota", "power of two"),
            ("#bitrev?colour=red", "no option 'colour'"),
            ("#bitrev?stage=two", "not a whole number"),
            ("#bitrev?lens=maybe", "lens 'maybe'"),
            ("#bitrev?n=16&n=32", "twice"),
            ("#bitrev?text=1&n=4", "does not go with"),
            ("#lesson=bitrev&step=0", "1 or more"),
            ("#lesson=bitrev&stage=2", "no 'stage'"),
            ("#bitrev?text=%zz", "bad escape"),
            ("#a/b/c", "ALGORITHM/VARIANT"),
        ] {
            let e = Link::parse(l).unwrap_err().to_string();
            assert!(e.contains(why), "{l}: {e}");
        }
    }
}
